//! The function's input, `krm.kcl.dev/v1alpha1` `KCLInput`.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

/// The targets of `spec.target`.
pub const TARGETS: &[&str] = &[
    "Default",
    "PatchDesired",
    "PatchResources",
    "Resources",
    "XR",
];

/// `KCLInput`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct KclInput {
    /// `metadata` (only `name` is read).
    pub metadata: Meta,
    /// `spec`.
    pub spec: RunSpec,
    /// The KCL files `xfn render` fetched for this step (an `oci://`
    /// program, dependencies, an embedded function's directory), or why
    /// it could not; absent where no host pass ran (`xfn serve`).
    #[serde(rename = "xfn.dev/kcl")]
    pub host_files: Option<HostFiles>,
}

/// The files the host hands the function (`xfn.dev/kcl`).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct HostFiles {
    /// The program's own package (an `oci://` source or an embedded
    /// function's directory): path to text.
    pub main: Option<BTreeMap<String, String>>,
    /// Packages by name (dependencies): path to text.
    pub packages: BTreeMap<String, BTreeMap<String, String>>,
    /// Why the host could not fetch them.
    pub error: Option<String>,
}

/// `metadata`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Meta {
    /// `metadata.name`.
    pub name: String,
}

/// `spec`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct RunSpec {
    /// The program (inline) or where to get it.
    pub source: String,
    /// KCL run settings.
    pub config: ConfigSpec,
    /// Registry credentials (unused offline).
    pub credentials: Value,
    /// Package dependencies (`kcl.mod` text).
    pub dependencies: String,
    /// Extra `option("params")` entries.
    pub params: BTreeMap<String, Value>,
    /// Resources for the `PatchResources` target.
    pub resources: Vec<InputResource>,
    /// What the program's output becomes.
    pub target: String,
}

/// `spec.config`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ConfigSpec {
    /// `-D` arguments.
    pub arguments: Vec<String>,
    /// Settings files.
    pub settings: Vec<String>,
    /// `-O` overrides.
    pub overrides: Vec<String>,
    /// `-S` path selectors.
    pub path_selectors: Vec<String>,
    /// Run through a vendored package.
    pub vendor: bool,
    /// Sort output keys (no effect on a response: objects are unordered).
    pub sort_keys: bool,
    /// Output private (`_`) attributes.
    pub show_hidden: bool,
    /// Leave None values out of the output.
    pub disable_none: bool,
    /// Debug mode (no effect).
    pub debug: bool,
    /// Strict range checks of numbers.
    pub strict_range_check: bool,
}

/// An entry of `spec.resources`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct InputResource {
    /// The composition resource name.
    pub name: String,
    /// The base object.
    pub base: Option<serde_json::Map<String, Value>>,
}

impl KclInput {
    /// function-kcl's `Validate`, with its messages; an unknown target
    /// becomes `Default`.
    pub fn validate(&mut self) -> Result<(), String> {
        if self.spec.source.is_empty() {
            return Err("spec.source: Required value: kcl source cannot be empty".into());
        }
        if self.spec.target.is_empty() || !TARGETS.contains(&self.spec.target.as_str()) {
            self.spec.target = "Default".into();
        }
        if self.spec.target == "PatchResources" {
            if self.spec.resources.is_empty() {
                return Err("spec.Resources: Required value: PatchResources target requires at least one resource".into());
            }
            for (i, r) in self.spec.resources.iter().enumerate() {
                if r.name.is_empty() {
                    return Err(format!(
                        "spec.Resources[{i}].name: Required value: name cannot be empty"
                    ));
                }
                if r.base.is_none() {
                    return Err(format!(
                        "spec.Resources[{i}].base: Required value: base cannot be empty"
                    ));
                }
            }
        }
        Ok(())
    }

    /// Refuses what this function cannot do offline in a sandbox, naming it.
    /// Declared `spec.dependencies` are not refused here: a program that
    /// imports a package fails with the interpreter's unsupported import,
    /// one that does not runs as it would with them.
    pub fn check_supported(&self) -> Result<(), String> {
        if let Some(e) = self.host_files.as_ref().and_then(|h| h.error.as_ref()) {
            return Err(format!(
                "cannot fetch the KCL program or its dependencies: {e}"
            ));
        }
        let src = self.spec.source.trim_start();
        let fetched = self.host_files.as_ref().is_some_and(|h| h.main.is_some());
        for (prefix, what) in [
            ("oci://", "a program from an OCI registry"),
            ("http://", "a program from a URL"),
            ("https://", "a program from a URL"),
            ("git://", "a program from a Git repository"),
            ("git@", "a program from a Git repository"),
            ("github.com/", "a program from a Git repository"),
        ] {
            if src.starts_with(prefix) && !src.contains('\n') && !(fetched && prefix == "oci://") {
                return Err(format!(
                    "unsupported: {what} ({}); xfn's function-kcl runs inline programs here, \
                     and OCI programs only where `xfn render` fetches them",
                    src.trim()
                ));
            }
        }
        let c = &self.spec.config;
        let refused = [
            (!c.settings.is_empty(), "spec.config.settings"),
            (!c.overrides.is_empty(), "spec.config.overrides"),
            (!c.path_selectors.is_empty(), "spec.config.pathSelectors"),
            (!c.arguments.is_empty(), "spec.config.arguments"),
            (c.vendor, "spec.config.vendor"),
            (c.show_hidden, "spec.config.showHidden"),
            (c.strict_range_check, "spec.config.strictRangeCheck"),
        ];
        for (set, what) in refused {
            if set {
                return Err(format!("unsupported: {what} in xfn's function-kcl"));
            }
        }
        Ok(())
    }
}
