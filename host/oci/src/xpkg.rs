//! Crossplane packages (xpkg) that carry a wasm component: building one from
//! the author's `crossplane.yaml` and a component ([`build`]), and checking
//! an image against the rules Crossplane's package manager applies
//! ([`check`]).
//!
//! One image serves both worlds. Crossplane's package manager reads only the
//! layer annotated `io.crossplane.xpkg: base` (its `package.yaml`) and
//! ignores the others; xfn runs the component in the layer annotated
//! `io.crossplane.xpkg: wasm`.
//!
//! # What Crossplane requires
//!
//! Read in crossplane/crossplane at 2d040d2d, crossplane/crossplane-runtime
//! at 4e7ed235 (the package manager's fetcher and parser live there),
//! google/go-containerregistry at 3f4ff3ca (v0.21.9, which fetches the
//! image) and crossplane/cli at 3d72f931 (`crossplane xpkg build|push`):
//!
//! * **Index.** The fetcher calls go-containerregistry's `remote.Image`
//!   (crossplane-runtime `pkg/xpkg/fetch.go:142-147`). For an index it takes
//!   the first entry whose platform is `linux/amd64`, an entry without a
//!   platform counting as `linux/amd64`, and fails otherwise
//!   (go-containerregistry `pkg/v1/remote/descriptor.go:114-116`,
//!   `pkg/v1/remote/index.go:173-190`, `pkg/v1/remote/options.go:61-64`).
//!   The spec's "one entry is used whatever its platform" (crossplane
//!   `contributing/specifications/xpkg.md:53-56`) is not what the code does.
//!   [`crossplane_index_entry`] applies the code's rule.
//! * **Base layer.** Crossplane reads the manifest's layer annotations
//!   only, never the image config: it takes the first layer annotated
//!   `io.crossplane.xpkg: base` (crossplane-runtime `pkg/xpkg/client.go:427-442`,
//!   `pkg/xpkg/name.go:50-55`). The spec allows one such layer
//!   (`xpkg.md:71-76`) and says the config is not considered
//!   (`xpkg.md:115-116`). Without an annotated layer Crossplane reads the
//!   image's flattened filesystem (`client.go:444-446`), which untars every
//!   layer (go-containerregistry `pkg/v1/mutate/mutate.go:269-305`) and so
//!   fails on a wasm layer, which isn't a tar. An xpkg with a wasm layer
//!   therefore needs exactly one annotated base layer.
//! * **Labels.** Crossplane's builder records each layer's annotation as
//!   the config label `io.crossplane.xpkg:<layer digest>` (crossplane-runtime
//!   `pkg/xpkg/layers.go:67-78,99-102`), and `crossplane xpkg push` copies the
//!   labels back onto the layers as annotations (`layers.go:114-163`; cli
//!   `cmd/crossplane/xpkg/push.go:166`). The two must agree.
//! * **Compression.** The layer is decompressed by sniffing its first bytes
//!   (gzip, zstd or none), whatever its media type says (go-containerregistry
//!   `pkg/v1/partial/compressed.go:51-78`).
//! * **package.yaml.** The first tar entry whose base name is `package.yaml`
//!   (`client.go:450-462`; the spec wants it at the root, `xpkg.md:126-128`),
//!   read through a 200 MiB limit (`client.go:91-93,357`). The builder writes
//!   it with mode 0644 and a header holding only name, mode and size
//!   (`name.go:35-38`, `layers.go:46-50`).
//! * **Parsing.** Every non-empty document of the stream (`parser.go:125-127,156-167`)
//!   must decode with the meta scheme (`meta.pkg.crossplane.io`: `v1`
//!   Configuration, Provider, Function; `v1beta1` Function; `v1alpha1`
//!   Configuration, Provider) or, if its kind isn't registered there, with
//!   the object scheme (CRDs of `apiextensions.k8s.io` v1 and v1beta1,
//!   Crossplane's own kinds, admission webhooks); anything else fails the
//!   parse (crossplane-runtime `pkg/xpkg/parser/parser.go:103-151`,
//!   `pkg/xpkg/scheme.go:36-86`; crossplane `apis/pkg/meta/v1/register.go:67-71`,
//!   `apis/pkg/meta/v1beta1/register.go:51-53`).
//! * **Validation.** Before installing, exactly one meta object, a Function,
//!   whose `spec.crossplane.version` (if any) is a semver range
//!   (crossplane-runtime `pkg/xpkg/validate.go:44-49`, `pkg/xpkg/lint.go:87-124,152-168`;
//!   fatal at crossplane `internal/controller/pkg/revision/reconciler.go:536-545,560-569`).
//!   The Function linter also wants every other object to be a CRD
//!   (`lint.go:80-85,170-178`; the spec says so too, `xpkg.md:174-183`), but
//!   Crossplane only records a warning event for it (`reconciler.go:550-555`).
//! * **Capabilities.** Copied from `spec.capabilities` to the revision
//!   (`reconciler.go:606`). A Function without the field is a composition
//!   function; an empty list is no capability at all (crossplane
//!   `apis/pkg/meta/v1/interfaces.go:84-93`). Crossplane knows `composition`
//!   and `operation` for Functions and matches them ignoring case and
//!   non-alphanumerics (`apis/pkg/meta/v1/capabilities.go:27-57`). It allows
//!   other entries for other consumers; xfn refuses them, since nothing
//!   would use them and a misspelled capability is silently useless.
//! * **Config.** Crossplane's builder starts from the Function's runtime
//!   image, or from go-containerregistry's empty image whose config has no
//!   `architecture` or `os` (crossplane-runtime `build.go:128-131,225-230`;
//!   cli `cmd/crossplane/xpkg/build.go:119-145`; go-containerregistry
//!   `pkg/v1/empty/image.go:41-48`). `crossplane xpkg push` of several
//!   packages builds an index whose platforms are the configs' `os` and
//!   `architecture` (cli `push.go:214-228`). An xfn package has no container
//!   runtime, so its config says `wasm`/`wasip2`, the platform of the CNCF
//!   wasm artifact, and of the index entry xfn picks.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use oci_client::manifest::{
    ImageIndexEntry, OCI_IMAGE_MEDIA_TYPE, OciDescriptor, OciImageIndex, OciImageManifest,
};
use serde_yaml_ng::Value;

use crate::base_layer::BaseLayer;
use crate::digest::Digest;
use crate::error::{Error, Result};
use crate::layout::{WASM_LAYER, WASM_LAYER_MEDIA_TYPES, XPKG_ANNOTATION, XPKG_BASE, XPKG_WASM};
use crate::package::{CROSSPLANE_DESCRIPTION, FunctionMetadata, MetadataSource, PACKAGE_FILE};
use crate::push::Artifact;

/// The media type of an OCI image config.
pub const OCI_IMAGE_CONFIG: &str = "application/vnd.oci.image.config.v1+json";

/// The media type of the `package.yaml` layer.
pub const OCI_LAYER_TAR_GZIP: &str = "application/vnd.oci.image.layer.v1.tar+gzip";

/// The capabilities Crossplane gives meaning to for a Function.
pub const FUNCTION_CAPABILITIES: [&str; 2] = ["composition", "operation"];

pub use crate::base_layer::{CROSSPLANE_MAX_PACKAGE_YAML, MAX_PACKAGE_YAML};

/// An author's `crossplane.yaml`: at most [`MAX_PACKAGE_YAML`] bytes.
pub const PACKAGE_YAML_LIMIT: xfn_component::localfile::Limit =
    xfn_component::localfile::Limit::new("package metadata file", MAX_PACKAGE_YAML);

/// The API group of package metadata.
const META_GROUP: &str = "meta.pkg.crossplane.io";

/// The kinds Crossplane's meta scheme registers, by version.
const META_KINDS: &[(&str, &[&str])] = &[
    ("v1", &["Configuration", "Provider", "Function"]),
    ("v1beta1", &["Function"]),
    ("v1alpha1", &["Configuration", "Provider"]),
];

/// The author's package metadata file (`crossplane.yaml`), as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageFile {
    /// Where it came from, for messages (a path).
    pub source: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

impl PackageFile {
    /// Reads `path`, refusing anything but a regular file of at most
    /// [`MAX_PACKAGE_YAML`] bytes before reading it.
    pub fn read(path: &Path) -> Result<PackageFile> {
        let bytes = xfn_component::localfile::read(path, crate::xpkg::PACKAGE_YAML_LIMIT).map_err(
            |error| Error::ReadFile {
                path: path.to_owned(),
                error,
            },
        )?;
        let package = PackageFile {
            source: path.display().to_string(),
            bytes,
        };
        package.text()?;
        Ok(package)
    }

    /// The text, once it is checked to be UTF-8 and of a sensible size.
    fn text(&self) -> Result<&str> {
        let fail = |reason: String| Error::Metadata {
            reference: self.source.clone(),
            reason,
        };
        if self.bytes.len() as u64 > MAX_PACKAGE_YAML {
            return Err(fail(format!(
                "the file is over {MAX_PACKAGE_YAML} bytes; a Function's package metadata is far smaller"
            )));
        }
        let text = std::str::from_utf8(&self.bytes)
            .map_err(|e| fail(format!("the file is not UTF-8 text: {e}")))?;
        if text.trim().is_empty() {
            return Err(fail(format!(
                "the file is empty; it needs a {META_GROUP}/v1 Function"
            )));
        }
        Ok(text)
    }
}

/// A Function package's `package.yaml`, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageYaml {
    /// The Function's name, capabilities and description.
    pub metadata: FunctionMetadata,
    /// The Function's `apiVersion` (`meta.pkg.crossplane.io/v1` or `v1beta1`).
    pub api_version: String,
    /// How many CustomResourceDefinitions (input schemas) come with it.
    pub crds: usize,
}

/// Checks a `package.yaml` stream as Crossplane parses and validates a
/// Function package, and as xfn requires of one: exactly one
/// `meta.pkg.crossplane.io/v1` (or `v1beta1`) Function with a
/// `metadata.name` and known capabilities, and CRDs besides. Returns every
/// problem found.
pub fn parse_package_yaml(text: &str) -> Result<PackageYaml, Vec<String>> {
    let mut problems = Vec::new();
    let mut functions = Vec::new();
    let mut metas = Vec::new();
    let mut crds = 0;
    if let Err(refusal) = xfn_yaml::check(text) {
        return Err(vec![refusal.to_string()]);
    }
    for (i, document) in serde_yaml_ng::Deserializer::from_str(text).enumerate() {
        let n = i + 1;
        let mut value = match serde::Deserialize::deserialize(document) {
            Ok(value) => value,
            Err(e) => {
                problems.push(format!("document {n} is not valid YAML: {e}"));
                return Err(problems);
            }
        };
        if let Value::Null = value {
            // An empty document (only `---`, comments or blanks): Crossplane
            // skips it too.
            continue;
        }
        if let Err(e) = Value::apply_merge(&mut value) {
            problems.push(format!("document {n}: {e}"));
            continue;
        }
        let Value::Mapping(_) = value else {
            problems.push(format!(
                "document {n} is not an object with apiVersion and kind"
            ));
            continue;
        };
        let field = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or("");
        let (api_version, kind) = (field("apiVersion"), field("kind"));
        if api_version.is_empty() || kind.is_empty() {
            problems.push(format!(
                "document {n} has no apiVersion or kind; Crossplane's parser refuses it"
            ));
            continue;
        }
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        if group == META_GROUP {
            metas.push(format!("{api_version} {kind}"));
            let known = META_KINDS
                .iter()
                .any(|(v, kinds)| *v == version && kinds.contains(&kind));
            if kind == "Function" && known {
                functions.push((n, api_version.to_owned(), value));
            } else if known {
                problems.push(format!(
                    "document {n} is a {kind} package ({api_version}), not a Function"
                ));
            } else {
                problems.push(format!(
                    "document {n}: Crossplane knows no {api_version} {kind}; \
                     a Function is {META_GROUP}/v1 (or v1beta1) kind Function"
                ));
            }
        } else if group == "apiextensions.k8s.io"
            && (version == "v1" || version == "v1beta1")
            && kind == "CustomResourceDefinition"
        {
            crds += 1;
        } else {
            problems.push(format!(
                "document {n} ({api_version} {kind}) is neither the Function nor a \
                 CustomResourceDefinition, the only objects of a Function package (xpkg spec)"
            ));
        }
    }
    if metas.len() > 1 {
        problems.push(format!(
            "{} {META_GROUP} objects ({}); Crossplane installs a package with exactly one",
            metas.len(),
            metas.join(", ")
        ));
    }
    let Some((n, api_version, function)) = functions.into_iter().next() else {
        if metas.is_empty() {
            problems.push(format!(
                "no {META_GROUP}/v1 Function: a Function package describes itself with an \
                 object of apiVersion {META_GROUP}/v1 and kind Function"
            ));
        }
        return Err(problems);
    };
    let metadata = function_metadata(n, &function, &mut problems);
    match metadata {
        Some(metadata) if problems.is_empty() => Ok(PackageYaml {
            metadata,
            api_version,
            crds,
        }),
        _ => Err(problems),
    }
}

/// The name, capabilities and description of a Function object.
fn function_metadata(
    n: usize,
    function: &Value,
    problems: &mut Vec<String>,
) -> Option<FunctionMetadata> {
    let at = |path: &str| format!("the Function (document {n}): {path}");
    let metadata = function.get("metadata");
    if metadata.is_some_and(|m| !m.is_mapping() && !m.is_null()) {
        problems.push(format!("{} is not an object", at("metadata")));
    }
    let name = metadata.and_then(|m| m.get("name"));
    let name = match name.map(|v| (v, v.as_str())) {
        Some((_, Some(name))) if !name.is_empty() => Some(name.to_owned()),
        Some((v, None)) if !v.is_null() => {
            problems.push(format!("{} is not a string", at("metadata.name")));
            None
        }
        _ => {
            problems.push(format!("{} is missing", at("metadata.name")));
            None
        }
    };
    let mut description = None;
    match metadata.and_then(|m| m.get("annotations")) {
        None | Some(Value::Null) => {}
        Some(Value::Mapping(annotations)) => {
            for (key, value) in annotations {
                match (key.as_str(), value.as_str()) {
                    (Some(CROSSPLANE_DESCRIPTION), Some(text)) => {
                        description = Some(text.to_owned());
                    }
                    (Some(_), Some(_)) => {}
                    _ => problems.push(format!(
                        "{} maps strings to strings; `{}` does not",
                        at("metadata.annotations"),
                        serde_yaml_ng::to_string(key).unwrap_or_default().trim()
                    )),
                }
            }
        }
        Some(_) => problems.push(format!("{} is not an object", at("metadata.annotations"))),
    }
    let spec = function.get("spec");
    if spec.is_some_and(|s| !s.is_mapping() && !s.is_null()) {
        problems.push(format!("{} is not an object", at("spec")));
    }
    let capabilities = capabilities(spec.and_then(|s| s.get("capabilities")), &at, problems);
    match spec.and_then(|s| s.get("crossplane")) {
        None | Some(Value::Null) => {}
        Some(constraints) => {
            if constraints
                .get("version")
                .and_then(Value::as_str)
                .is_none_or(|v| v.trim().is_empty())
            {
                problems.push(format!(
                    "{} must be a semver range such as \">=v2.0.0\"",
                    at("spec.crossplane.version")
                ));
            }
        }
    }
    if let Some(depends) = spec.and_then(|s| s.get("dependsOn"))
        && !depends.is_sequence()
        && !depends.is_null()
    {
        problems.push(format!("{} is not a list", at("spec.dependsOn")));
    }
    Some(FunctionMetadata {
        name: name?,
        capabilities: capabilities?,
        description,
        source: MetadataSource::PackageYaml,
    })
}

/// `spec.capabilities`: absent means `composition`, as Crossplane reads it.
fn capabilities(
    value: Option<&Value>,
    at: &dyn Fn(&str) -> String,
    problems: &mut Vec<String>,
) -> Option<Vec<String>> {
    let list = match value {
        None | Some(Value::Null) => {
            return Some(vec![crate::package::DEFAULT_CAPABILITY.to_owned()]);
        }
        Some(Value::Sequence(list)) => list,
        Some(_) => {
            problems.push(format!(
                "{} is not a list (e.g. [composition])",
                at("spec.capabilities")
            ));
            return None;
        }
    };
    if list.is_empty() {
        problems.push(format!(
            "{} is empty, which Crossplane reads as no capability at all: the function \
             could be used neither in a Composition nor in an Operation; list them, or \
             leave the field out for [composition]",
            at("spec.capabilities")
        ));
        return None;
    }
    let before = problems.len();
    let mut out = Vec::new();
    for item in list {
        match item.as_str() {
            Some(c) if is_function_capability(c) => out.push(c.to_owned()),
            Some(c) => problems.push(format!(
                "{}: unknown capability `{c}`; a Function's capabilities are {} \
                 (matched ignoring case and non-alphanumerics)",
                at("spec.capabilities"),
                FUNCTION_CAPABILITIES.join(" and ")
            )),
            None => problems.push(format!(
                "{}: an entry is not a string",
                at("spec.capabilities")
            )),
        }
    }
    (problems.len() == before).then_some(out)
}

/// Whether `capability` is one Crossplane gives a Function, matched as
/// Crossplane matches them: ASCII letters and digits only, any case.
pub fn is_function_capability(capability: &str) -> bool {
    let key = fuzzy(capability);
    FUNCTION_CAPABILITIES.iter().any(|c| fuzzy(c) == key)
}

/// Whether `declared` (a package's `spec.capabilities`) includes `wanted`,
/// matched as Crossplane matches them.
pub fn has_capability(declared: &[String], wanted: &str) -> bool {
    let wanted = fuzzy(wanted);
    declared.iter().any(|c| fuzzy(c) == wanted)
}

fn fuzzy(text: &str) -> String {
    text.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Builds the xpkg for component `wasm` and the author's `crossplane.yaml`:
///
/// * layer 1: a gzipped tar holding `package.yaml` (the file as given, mode
///   0644, mtime 0, owner 0:0 without names), annotated
///   `io.crossplane.xpkg: base`;
/// * layer 2: the component, `application/wasm`, annotated
///   `io.crossplane.xpkg: wasm`;
/// * an OCI image config with platform `wasm`/`wasip2`, one diff ID per
///   layer, and the labels `io.crossplane.xpkg:<layer digest>` Crossplane's
///   builder writes;
/// * `created` (seconds since 1970, e.g. from `SOURCE_DATE_EPOCH`) in the
///   config if given, else no timestamp.
///
/// The same inputs give the same bytes. The component is checked as a push
/// checks it (imports within xfn's world, a `run-function` export);
/// `reference` names it in errors. `annotations` go on the manifest.
pub fn build(
    reference: &str,
    wasm: Vec<u8>,
    package: &PackageFile,
    annotations: &BTreeMap<String, String>,
    created: Option<i64>,
) -> Result<Artifact> {
    let text = package.text()?;
    let parsed = parse_package_yaml(text).map_err(|problems| Error::Metadata {
        reference: package.source.clone(),
        reason: problems.join("; "),
    })?;
    crate::push::check_component(reference, &wasm)?;
    let fail = |reason: String| Error::Metadata {
        reference: package.source.clone(),
        reason,
    };
    let (tar, layer) = package_layer(&package.bytes)
        .map_err(|e| fail(format!("cannot build the {PACKAGE_FILE} layer: {e}")))?;
    let created = created.map(creation_time).transpose().map_err(fail)?;

    let layer_digest = Digest::of(&layer);
    let wasm_digest = Digest::of(&wasm);
    let mut config = serde_json::json!({
        "architecture": "wasm",
        "os": "wasip2",
        "config": {
            "Labels": {
                label(&layer_digest): XPKG_BASE,
                label(&wasm_digest): XPKG_WASM,
            },
        },
        "rootfs": {
            "type": "layers",
            // A diff ID is the digest of the uncompressed layer.
            "diff_ids": [Digest::of(&tar).to_string(), wasm_digest.to_string()],
        },
    });
    if let Some(created) = &created {
        config["created"] = serde_json::Value::from(created.clone());
    }
    let config = serde_json::to_vec(&config)
        .map_err(|e| fail(format!("cannot serialize the image config: {e}")))?;

    let metadata = parsed.metadata;
    let mut manifest_annotations = annotations.clone();
    manifest_annotations.insert(
        "org.opencontainers.image.title".into(),
        metadata.name.clone(),
    );
    if let Some(description) = &metadata.description {
        manifest_annotations.insert(
            "org.opencontainers.image.description".into(),
            description.clone(),
        );
    }
    if let Some(created) = created {
        manifest_annotations.insert("org.opencontainers.image.created".into(), created);
    }
    let xpkg = |value: &str| {
        Some(BTreeMap::from([(
            XPKG_ANNOTATION.to_owned(),
            value.to_owned(),
        )]))
    };
    let manifest = OciImageManifest {
        schema_version: 2,
        media_type: Some(OCI_IMAGE_MEDIA_TYPE.to_owned()),
        config: OciDescriptor {
            media_type: OCI_IMAGE_CONFIG.to_owned(),
            digest: Digest::of(&config).to_string(),
            size: config.len() as i64,
            ..Default::default()
        },
        layers: vec![
            OciDescriptor {
                media_type: OCI_LAYER_TAR_GZIP.to_owned(),
                digest: layer_digest.to_string(),
                size: layer.len() as i64,
                annotations: xpkg(XPKG_BASE),
                ..Default::default()
            },
            OciDescriptor {
                media_type: WASM_LAYER.to_owned(),
                digest: wasm_digest.to_string(),
                size: wasm.len() as i64,
                annotations: xpkg(XPKG_WASM),
                ..Default::default()
            },
        ],
        annotations: Some(manifest_annotations),
        ..Default::default()
    };
    let manifest = serde_json::to_vec(&manifest)
        .map_err(|e| fail(format!("cannot serialize the manifest: {e}")))?;
    Ok(Artifact {
        config,
        layers: vec![layer, wasm],
        manifest,
        wasm_digest,
        package_layer_digest: Some(layer_digest),
        layout: crate::Layout::Xpkg,
        function: metadata,
    })
}

/// An image's creation time, `secs` seconds since 1970, as OCI configs
/// and annotations write it (RFC 3339, whole seconds, UTC).
pub(crate) fn creation_time(secs: i64) -> std::result::Result<String, String> {
    chrono::DateTime::from_timestamp(secs, 0)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .ok_or_else(|| format!("the creation time {secs} is out of range"))
}

/// The config label Crossplane's builder writes for a layer.
fn label(layer: &Digest) -> String {
    format!("{XPKG_ANNOTATION}:{layer}")
}

/// The tar holding `package.yaml`, and that tar gzipped. Both are the same
/// for the same text: the header has a fixed mtime, mode and owner, and
/// the gzip header has no time or name (the deflate stream depends only on
/// the input and the compression level).
fn package_layer(yaml: &[u8]) -> std::io::Result<(Vec<u8>, Vec<u8>)> {
    reproducible_layer(
        &[(PACKAGE_FILE, 0o644, yaml)],
        0,
        flate2::Compression::best(),
    )
}

/// A layer of regular files (path, mode, bytes), each owned by root with
/// modification time `mtime` and no owner names, and that tar gzipped at
/// `level` without a time or name in the gzip header: the same files give
/// the same bytes.
pub(crate) fn reproducible_layer(
    files: &[(&str, u32, &[u8])],
    mtime: u64,
    level: flate2::Compression,
) -> std::io::Result<(Vec<u8>, Vec<u8>)> {
    let mut builder = tar::Builder::new(Vec::new());
    for (path, mode, bytes) in files {
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(bytes.len() as u64);
        header.set_mode(*mode);
        header.set_mtime(mtime);
        header.set_uid(0);
        header.set_gid(0);
        builder.append_data(&mut header, path, *bytes)?;
    }
    let tar = builder.into_inner()?;
    let mut gz = flate2::GzBuilder::new().mtime(0).write(Vec::new(), level);
    gz.write_all(&tar)?;
    let layer = gz.finish()?;
    Ok((tar, layer))
}

/// What [`check`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Check {
    /// Why Crossplane would refuse or misread the package; empty if none.
    pub problems: Vec<String>,
    /// The package's Function, when `package.yaml` is valid.
    pub package: Option<PackageYaml>,
}

impl Check {
    /// Whether Crossplane's package manager would install the package.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty() && self.package.is_some()
    }

    /// The Function, or an error listing the problems.
    pub fn into_result(self, reference: &str) -> Result<PackageYaml> {
        match self.package {
            Some(package) if self.problems.is_empty() => Ok(package),
            _ => Err(Error::Layout {
                reference: reference.to_owned(),
                reason: format!(
                    "not a Function package Crossplane can install: {}",
                    self.problems.join("; ")
                ),
            }),
        }
    }
}

/// Checks an image against what Crossplane's package manager requires of
/// a Function package (see the module documentation): exactly one layer
/// annotated `io.crossplane.xpkg: base`; the config's
/// `io.crossplane.xpkg:<digest>` labels agree with the layer annotations;
/// one diff ID per layer; `package_layer` (the base layer's bytes, if
/// fetched) holds a `package.yaml` at its root that parses as one Function
/// with known capabilities.
pub fn check(manifest: &OciImageManifest, config: &[u8], package_layer: Option<&[u8]>) -> Check {
    let read = package_layer.map(|bytes| (bytes, BaseLayer::read(bytes)));
    check_read(
        manifest,
        config,
        read.as_ref().map(|(bytes, base)| (*bytes, base)),
    )
}

/// [`check`], with the package layer already read (a layer is read once,
/// however many times the manifest lists it).
pub(crate) fn check_read(
    manifest: &OciImageManifest,
    config: &[u8],
    package_layer: Option<(&[u8], &BaseLayer)>,
) -> Check {
    let mut problems = Vec::new();
    let annotation = |l: &OciDescriptor| {
        l.annotations
            .as_ref()
            .and_then(|a| a.get(XPKG_ANNOTATION))
            .cloned()
    };
    let bases: Vec<&OciDescriptor> = manifest
        .layers
        .iter()
        .filter(|l| annotation(l).as_deref() == Some(XPKG_BASE))
        .collect();
    match bases.len() {
        1 => {}
        0 => problems.push(format!(
            "no layer is annotated `{XPKG_ANNOTATION}: {XPKG_BASE}`; Crossplane then reads \
             every layer as a tar archive, which fails on a wasm layer"
        )),
        n => problems.push(format!(
            "{n} layers are annotated `{XPKG_ANNOTATION}: {XPKG_BASE}`; an xpkg has one \
             (Crossplane reads only the first)"
        )),
    }

    match serde_json::from_slice::<serde_json::Value>(config) {
        Err(e) => problems.push(format!("the image config is not JSON: {e}")),
        Ok(config) => {
            check_labels(manifest, &config, &annotation, &mut problems);
            check_diff_ids(
                manifest,
                &config,
                package_layer.map(|(_, base)| base),
                bases.first(),
                &mut problems,
            );
        }
    }

    let mut package = None;
    match package_layer {
        None => {}
        Some((bytes, read)) => {
            if let Some(base) = bases.first()
                && !base
                    .digest
                    .parse::<Digest>()
                    .is_ok_and(|d| d.matches(bytes))
            {
                problems.push(format!(
                    "the package layer checked is not the base layer {}",
                    base.digest
                ));
            }
            match &read.package_yaml {
                Err(problem) => problems.push(problem.clone()),
                Ok(text) => match parse_package_yaml(text) {
                    Ok(parsed) => package = Some(parsed),
                    Err(found) => {
                        problems.extend(found.into_iter().map(|p| format!("{PACKAGE_FILE}: {p}")))
                    }
                },
            }
        }
    }
    Check {
        problems: summarized(problems),
        package,
    }
}

/// The most problems a [`Check`] lists; the rest are counted.
pub const MAX_PROBLEMS: usize = 16;

/// The longest problem a [`Check`] quotes, in characters.
pub const MAX_PROBLEM_LEN: usize = 512;

/// Problems without repeats, each cut to [`MAX_PROBLEM_LEN`], at most
/// [`MAX_PROBLEMS`] of them and a count of the rest: an image can list
/// thousands of wrong layers, and each problem quotes what the image says.
fn summarized(problems: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let mut more = 0usize;
    for problem in problems {
        let problem = match problem.char_indices().nth(MAX_PROBLEM_LEN) {
            Some((cut, _)) => format!("{}…", &problem[..cut]),
            None => problem,
        };
        if !seen.insert(problem.clone()) {
            continue;
        }
        if out.len() < MAX_PROBLEMS {
            out.push(problem);
        } else {
            more += 1;
        }
    }
    if more > 0 {
        out.push(format!("and {more} more problems"));
    }
    out
}

/// The labels `io.crossplane.xpkg:<digest>` must name layers of the
/// manifest and agree with their annotations.
fn check_labels(
    manifest: &OciImageManifest,
    config: &serde_json::Value,
    annotation: &dyn Fn(&OciDescriptor) -> Option<String>,
    problems: &mut Vec<String>,
) {
    let Some(labels) = config
        .get("config")
        .and_then(|c| c.get("Labels"))
        .and_then(|l| l.as_object())
    else {
        return;
    };
    let prefix = format!("{XPKG_ANNOTATION}:");
    for (key, value) in labels {
        let Some(digest) = key.strip_prefix(&prefix) else {
            continue;
        };
        let value = value.as_str().unwrap_or_default();
        match manifest.layers.iter().find(|l| l.digest == digest) {
            None => problems.push(format!(
                "the config label `{key}: {value}` names no layer of the manifest"
            )),
            Some(layer) => match annotation(layer) {
                Some(annotated) if annotated == value => {}
                Some(annotated) => problems.push(format!(
                    "layer {digest} is annotated `{XPKG_ANNOTATION}: {annotated}` but \
                     labelled `{value}` in the config"
                )),
                None => problems.push(format!(
                    "layer {digest} is labelled `{value}` in the config but not annotated in \
                     the manifest; Crossplane reads only the annotation"
                )),
            },
        }
    }
}

/// One diff ID per layer; the base layer's and a wasm layer's must match
/// their uncompressed bytes.
fn check_diff_ids(
    manifest: &OciImageManifest,
    config: &serde_json::Value,
    package_layer: Option<&BaseLayer>,
    base: Option<&&OciDescriptor>,
    problems: &mut Vec<String>,
) {
    let rootfs = config.get("rootfs");
    if rootfs.and_then(|r| r.get("type")).and_then(|t| t.as_str()) != Some("layers") {
        problems.push(String::from(
            "the image config has no rootfs of type `layers`",
        ));
    }
    let Some(diff_ids) = rootfs
        .and_then(|r| r.get("diff_ids"))
        .and_then(|d| d.as_array())
    else {
        problems.push(String::from("the image config has no rootfs.diff_ids"));
        return;
    };
    if diff_ids.len() != manifest.layers.len() {
        problems.push(format!(
            "the image config has {} diff IDs for {} layers",
            diff_ids.len(),
            manifest.layers.len()
        ));
        return;
    }
    for (layer, diff_id) in manifest.layers.iter().zip(diff_ids) {
        let diff_id = diff_id.as_str().unwrap_or_default();
        let expected = if WASM_LAYER_MEDIA_TYPES.contains(&layer.media_type.as_str()) {
            Some(layer.digest.clone())
        } else if base.is_some_and(|b| b.digest == layer.digest) {
            package_layer
                .and_then(|read| read.diff_id.as_ref().ok())
                .map(Digest::to_string)
        } else {
            None
        };
        if let Some(expected) = expected
            && expected != diff_id
        {
            problems.push(format!(
                "the diff ID of layer {} is {diff_id}, but its uncompressed content is {expected}",
                layer.digest
            ));
        }
    }
}

/// `package.yaml` from a base layer, found as Crossplane finds it: the
/// first tar entry whose base name is `package.yaml`.
pub(crate) fn read_package_yaml(layer: &[u8]) -> Result<String, String> {
    BaseLayer::read(layer).package_yaml
}

/// The index entry Crossplane's package manager reads: the first whose
/// platform is `linux/amd64`, an entry without a platform counting as
/// `linux/amd64` (go-containerregistry `pkg/v1/remote/index.go:173-190`).
/// `None` means Crossplane can't fetch the package.
pub fn crossplane_index_entry(index: &OciImageIndex) -> Option<&ImageIndexEntry> {
    index.manifests.iter().find(|e| match &e.platform {
        None => true,
        Some(p) => p.os.to_string() == "linux" && p.architecture.to_string() == "amd64",
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Read;

    pub(crate) const FUNCTION: &str = "\
apiVersion: meta.pkg.crossplane.io/v1
kind: Function
metadata:
  name: function-hello
  annotations:
    meta.crossplane.io/description: Says hello
spec:
  capabilities: [composition, operation]
";

    const CRD: &str = "\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: inputs.hello.fn.xfn.dev
";

    /// A component exporting `export` as a function (a core function
    /// lifted with type `func()`), importing an empty instance per name.
    fn component(export: &str, imports: &[&str]) -> Vec<u8> {
        use wasm_encoder::{
            Alias, CanonicalFunctionSection, CodeSection, Component, ComponentAliasSection,
            ComponentExportKind, ComponentExportSection, ComponentImportSection, ComponentTypeRef,
            ComponentTypeSection, ExportKind, ExportSection, Function, FunctionSection,
            InstanceSection, InstanceType, Module, ModuleArg, ModuleSection, TypeSection,
        };
        let mut module = Module::new();
        let mut types = TypeSection::new();
        types.ty().function([], []);
        module.section(&types);
        let mut functions = FunctionSection::new();
        functions.function(0);
        module.section(&functions);
        let mut exports = ExportSection::new();
        exports.export("f", ExportKind::Func, 0);
        module.section(&exports);
        let mut code = CodeSection::new();
        let mut body = Function::new([]);
        body.instructions().end();
        code.function(&body);
        module.section(&code);

        let mut component = Component::new();
        let mut types = ComponentTypeSection::new();
        types.instance(&InstanceType::new());
        types
            .function()
            .params([] as [(&str, wasm_encoder::ComponentValType); 0])
            .result(None);
        component.section(&types);
        let mut section = ComponentImportSection::new();
        for name in imports {
            section.import(*name, ComponentTypeRef::Instance(0));
        }
        component.section(&section);
        component.section(&ModuleSection(&module));
        let mut instances = InstanceSection::new();
        instances.instantiate(0, [] as [(&str, ModuleArg); 0]);
        component.section(&instances);
        let mut aliases = ComponentAliasSection::new();
        aliases.alias(Alias::CoreInstanceExport {
            instance: 0,
            kind: ExportKind::Func,
            name: "f",
        });
        component.section(&aliases);
        let mut canon = CanonicalFunctionSection::new();
        canon.lift(0, 1, []);
        component.section(&canon);
        let mut exports = ComponentExportSection::new();
        exports.export(export, ComponentExportKind::Func, 0, None);
        component.section(&exports);
        component.finish()
    }

    /// A component xfn runs: it exports `run-function` and imports `log`.
    pub(crate) fn hello() -> Vec<u8> {
        component("run-function", &["xfn:function/log@0.1.0"])
    }

    pub(crate) fn package(text: &str) -> PackageFile {
        PackageFile {
            source: String::from("crossplane.yaml"),
            bytes: text.as_bytes().to_vec(),
        }
    }

    fn build_hello(text: &str, created: Option<i64>) -> Result<Artifact> {
        build(
            "reg.example/fn:v1",
            hello(),
            &package(text),
            &BTreeMap::new(),
            created,
        )
    }

    fn manifest_of(artifact: &Artifact) -> OciImageManifest {
        serde_json::from_slice(&artifact.manifest).unwrap()
    }

    fn rejects(text: &str) -> String {
        let problems = parse_package_yaml(text).expect_err(text);
        let joined = problems.join("; ");
        // The builder refuses it with the same message, naming the file.
        let err = build_hello(text, None).unwrap_err().to_string();
        assert!(
            err.starts_with("crossplane.yaml: invalid package metadata: ") && err.contains(&joined),
            "{err}"
        );
        joined
    }

    #[test]
    fn reads_a_function_with_crds() {
        let p = parse_package_yaml(&format!("---\n{FUNCTION}---\n{CRD}---\n")).unwrap();
        assert_eq!(p.metadata.name, "function-hello");
        assert_eq!(p.metadata.capabilities, ["composition", "operation"]);
        assert_eq!(p.metadata.description.as_deref(), Some("Says hello"));
        assert_eq!(p.api_version, "meta.pkg.crossplane.io/v1");
        assert_eq!(p.crds, 1);
        // The CRD may come first: Crossplane's parser doesn't mind the order.
        assert_eq!(
            parse_package_yaml(&format!("{CRD}---\n# a comment\n---\n{FUNCTION}"))
                .unwrap()
                .crds,
            1
        );
        let beta = FUNCTION.replace("/v1\n", "/v1beta1\n");
        assert_eq!(
            parse_package_yaml(&beta).unwrap().api_version,
            "meta.pkg.crossplane.io/v1beta1"
        );
    }

    #[test]
    fn capabilities_are_matched_as_crossplane_matches_them() {
        let none = "apiVersion: meta.pkg.crossplane.io/v1\nkind: Function\nmetadata:\n  name: f\n";
        assert_eq!(
            parse_package_yaml(none).unwrap().metadata.capabilities,
            ["composition"]
        );
        let fuzzy = FUNCTION.replace("[composition, operation]", "[Composition, OPER_ation]");
        assert_eq!(
            parse_package_yaml(&fuzzy).unwrap().metadata.capabilities,
            ["Composition", "OPER_ation"]
        );
        assert!(is_function_capability("compo-sition"));
        assert!(!is_function_capability("safe-start"));
        assert!(!is_function_capability(""));
    }

    #[test]
    fn refuses_bad_crossplane_yaml_with_clear_messages() {
        let cases: &[(String, &str)] = &[
            (
                FUNCTION.replace("meta.pkg.crossplane.io/v1", "pkg.crossplane.io/v1"),
                "document 1 (pkg.crossplane.io/v1 Function) is neither the Function nor a CustomResourceDefinition",
            ),
            (
                FUNCTION.replace(
                    "meta.pkg.crossplane.io/v1",
                    "meta.pkg.crossplane.io/v1alpha1",
                ),
                "Crossplane knows no meta.pkg.crossplane.io/v1alpha1 Function",
            ),
            (
                FUNCTION.replace("kind: Function", "kind: Provider"),
                "document 1 is a Provider package (meta.pkg.crossplane.io/v1), not a Function",
            ),
            (
                FUNCTION.replace("kind: Function", "kind: Composition"),
                "Crossplane knows no meta.pkg.crossplane.io/v1 Composition",
            ),
            (
                FUNCTION.replace("  name: function-hello\n", ""),
                "the Function (document 1): metadata.name is missing",
            ),
            (
                FUNCTION.replace("name: function-hello", "name: \"\""),
                "metadata.name is missing",
            ),
            (
                FUNCTION.replace("name: function-hello", "name: [a]"),
                "metadata.name is not a string",
            ),
            (
                FUNCTION.replace("[composition, operation]", "[composition, rendering]"),
                "spec.capabilities: unknown capability `rendering`; a Function's capabilities are composition and operation",
            ),
            (
                FUNCTION.replace("[composition, operation]", "[]"),
                "spec.capabilities is empty, which Crossplane reads as no capability at all",
            ),
            (
                FUNCTION.replace("[composition, operation]", "composition"),
                "spec.capabilities is not a list",
            ),
            (
                format!("{FUNCTION}---\n{FUNCTION}"),
                "2 meta.pkg.crossplane.io objects (meta.pkg.crossplane.io/v1 Function, meta.pkg.crossplane.io/v1 Function); Crossplane installs a package with exactly one",
            ),
            (
                format!(
                    "{FUNCTION}---\napiVersion: apiextensions.crossplane.io/v1\nkind: Composition\nmetadata:\n  name: c\n"
                ),
                "document 2 (apiextensions.crossplane.io/v1 Composition) is neither the Function nor a CustomResourceDefinition",
            ),
            (
                format!("{FUNCTION}---\nfoo: bar\n"),
                "document 2 has no apiVersion or kind",
            ),
            (
                format!("{FUNCTION}---\n- a\n"),
                "document 2 is not an object with apiVersion and kind",
            ),
            (CRD.to_owned(), "no meta.pkg.crossplane.io/v1 Function"),
            (
                String::from("apiVersion: [unclosed\n"),
                "document 1 is not valid YAML",
            ),
            (
                format!("{FUNCTION}  crossplane:\n    version: \"\"\n"),
                "spec.crossplane.version must be a semver range",
            ),
            (
                FUNCTION.replace("Says hello", "[not, text]"),
                "metadata.annotations maps strings to strings",
            ),
        ];
        for (text, expected) in cases {
            let message = rejects(text);
            assert!(
                message.contains(expected),
                "for\n{text}\nexpected `{expected}` in `{message}`"
            );
        }
    }

    #[test]
    fn refuses_empty_huge_and_binary_files() {
        for (bytes, expected) in [
            (b"  \n".to_vec(), "the file is empty"),
            (vec![0xff, 0xfe, b'a'], "not UTF-8"),
            (
                vec![b'#'; MAX_PACKAGE_YAML as usize + 1],
                "over 4194304 bytes",
            ),
        ] {
            let file = PackageFile {
                source: String::from("crossplane.yaml"),
                bytes,
            };
            let err = build("r", hello(), &file, &BTreeMap::new(), None)
                .unwrap_err()
                .to_string();
            assert!(err.contains(expected), "{err}");
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("crossplane.yaml");
        std::fs::write(&path, vec![b'#'; MAX_PACKAGE_YAML as usize + 10]).unwrap();
        let err = PackageFile::read(&path).unwrap_err().to_string();
        assert!(
            err.contains("is 4194314 bytes, over the limit of 4 MiB"),
            "{err}"
        );
        std::fs::write(&path, FUNCTION).unwrap();
        assert_eq!(PackageFile::read(&path).unwrap().bytes, FUNCTION.as_bytes());
    }

    #[test]
    fn refuses_a_component_that_is_not_a_function() {
        let build_with = |wasm: Vec<u8>| {
            build(
                "reg.example/fn:v1",
                wasm,
                &package(FUNCTION),
                &BTreeMap::new(),
                None,
            )
            .unwrap_err()
        };
        let err = build_with(b"not wasm".to_vec());
        assert!(
            matches!(&err, Error::InvalidComponent { reference, .. } if reference == "reg.example/fn:v1"),
            "{err}"
        );
        let err = build_with(component("something-else", &[]));
        assert!(
            err.to_string().contains("does not export `run-function`"),
            "{err}"
        );
        let err = build_with(component(
            "run-function",
            &["wasi:http/outgoing-handler@0.2.0"],
        ));
        assert!(
            matches!(&err, Error::ForbiddenImports { imports, .. } if imports == &["wasi:http/outgoing-handler@0.2.0"]),
            "{err}"
        );
    }

    #[test]
    fn builds_the_layout_crossplane_expects() {
        let artifact = build_hello(FUNCTION, None).unwrap();
        let manifest = manifest_of(&artifact);
        assert_eq!(manifest.media_type.as_deref(), Some(OCI_IMAGE_MEDIA_TYPE));
        assert_eq!(manifest.config.media_type, OCI_IMAGE_CONFIG);
        assert_eq!(
            manifest.config.digest,
            Digest::of(&artifact.config).to_string()
        );
        let [base, wasm] = manifest.layers.as_slice() else {
            panic!("two layers: {manifest:?}");
        };
        assert_eq!(base.media_type, OCI_LAYER_TAR_GZIP);
        assert_eq!(base.annotations.as_ref().unwrap()[XPKG_ANNOTATION], "base");
        assert_eq!(base.digest, Digest::of(&artifact.layers[0]).to_string());
        assert_eq!(wasm.media_type, "application/wasm");
        assert_eq!(wasm.annotations.as_ref().unwrap()[XPKG_ANNOTATION], "wasm");
        assert_eq!(wasm.digest, Digest::of(&hello()).to_string());
        assert_eq!(artifact.layers[1], hello());

        let config: serde_json::Value = serde_json::from_slice(&artifact.config).unwrap();
        assert_eq!(config["architecture"], "wasm");
        assert_eq!(config["os"], "wasip2");
        assert!(config.get("created").is_none());
        let labels = &config["config"]["Labels"];
        assert_eq!(
            labels[format!("io.crossplane.xpkg:{}", base.digest)],
            "base"
        );
        assert_eq!(
            labels[format!("io.crossplane.xpkg:{}", wasm.digest)],
            "wasm"
        );
        let mut tar = Vec::new();
        flate2::read::MultiGzDecoder::new(artifact.layers[0].as_slice())
            .read_to_end(&mut tar)
            .unwrap();
        assert_eq!(
            config["rootfs"]["diff_ids"],
            serde_json::json!([Digest::of(&tar).to_string(), wasm.digest])
        );

        // The tar: one entry, package.yaml as written, fixed header.
        let mut archive = tar::Archive::new(tar.as_slice());
        let mut entries = archive.entries().unwrap();
        let mut entry = entries.next().unwrap().unwrap();
        assert_eq!(entry.path().unwrap(), Path::new("package.yaml"));
        let header = entry.header().clone();
        assert_eq!(header.mode().unwrap(), 0o644);
        assert_eq!(header.mtime().unwrap(), 0);
        assert_eq!((header.uid().unwrap(), header.gid().unwrap()), (0, 0));
        assert_eq!(header.username().unwrap(), Some(""));
        assert_eq!(header.groupname().unwrap(), Some(""));
        let mut text = String::new();
        entry.read_to_string(&mut text).unwrap();
        assert_eq!(text, FUNCTION);
        assert!(entries.next().is_none());
        // The gzip header: no mtime (bytes 4..8).
        assert_eq!(&artifact.layers[0][4..8], &[0, 0, 0, 0]);

        // xfn's own readers agree.
        let selected = crate::layout::select_layers(&manifest, Some(&config)).unwrap();
        assert_eq!(selected.layout, crate::Layout::Xpkg);
        assert_eq!(selected.wasm.digest, wasm.digest);
        let read = crate::package::from_package_layer(&artifact.layers[0]).unwrap();
        assert_eq!(read, artifact.function);
        let check = check(&manifest, &artifact.config, Some(&artifact.layers[0]));
        assert!(check.is_ok(), "{:?}", check.problems);
        assert_eq!(check.package.unwrap().metadata.name, "function-hello");
    }

    #[test]
    fn the_same_inputs_give_the_same_bytes() {
        let a = build_hello(FUNCTION, None).unwrap();
        let b = build_hello(FUNCTION, None).unwrap();
        assert_eq!(a.manifest, b.manifest);
        assert_eq!(a.config, b.config);
        assert_eq!(a.layers, b.layers);

        // A creation time changes the config and manifest, not the layers.
        let dated = build_hello(FUNCTION, Some(1_700_000_000)).unwrap();
        assert_eq!(dated.layers, a.layers);
        let config: serde_json::Value = serde_json::from_slice(&dated.config).unwrap();
        assert_eq!(config["created"], "2023-11-14T22:13:20Z");
        assert_eq!(
            manifest_of(&dated).annotations.unwrap()["org.opencontainers.image.created"],
            "2023-11-14T22:13:20Z"
        );
        assert_eq!(
            build_hello(FUNCTION, Some(1_700_000_000)).unwrap().manifest,
            dated.manifest
        );
        assert_ne!(dated.manifest, a.manifest);

        // Other text, other package layer.
        let other = build_hello(&FUNCTION.replace("Says hello", "Greets"), None).unwrap();
        assert_ne!(other.layers[0], a.layers[0]);
        assert_eq!(other.layers[1], a.layers[1]);
    }

    /// A built image, then `edit` applied to its manifest and config.
    fn checked(
        edit: impl FnOnce(&mut OciImageManifest, &mut serde_json::Value),
        layer: Option<Vec<u8>>,
    ) -> Check {
        let artifact = build_hello(FUNCTION, None).unwrap();
        let mut manifest = manifest_of(&artifact);
        let mut config: serde_json::Value = serde_json::from_slice(&artifact.config).unwrap();
        edit(&mut manifest, &mut config);
        let layer = layer.unwrap_or_else(|| artifact.layers[0].clone());
        check(
            &manifest,
            &serde_json::to_vec(&config).unwrap(),
            Some(&layer),
        )
    }

    fn problems(check: Check) -> String {
        assert!(!check.is_ok());
        check.problems.join("; ")
    }

    fn set_annotation(layer: &mut OciDescriptor, value: &str) {
        layer
            .annotations
            .get_or_insert_with(BTreeMap::new)
            .insert(XPKG_ANNOTATION.into(), value.into());
    }

    /// The attack round's H2: a manifest listing the base layer thousands
    /// of times had it decompressed and hashed once per listing (1.2 s
    /// each), freezing the controller. It is now read once.
    #[test]
    fn a_base_layer_listed_many_times_is_read_once() {
        // A package.yaml and 16 MiB of zeros: ~16 KiB gzipped, slow to unpack.
        let mut builder = tar::Builder::new(Vec::new());
        for (name, bytes) in [
            (PACKAGE_FILE, FUNCTION.as_bytes().to_vec()),
            ("padding", vec![0u8; 16 << 20]),
        ] {
            let mut header = tar::Header::new_ustar();
            header.set_size(bytes.len() as u64);
            header.set_mode(0o644);
            builder
                .append_data(&mut header, name, bytes.as_slice())
                .unwrap();
        }
        let tar = builder.into_inner().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(&tar).unwrap();
        let layer = gz.finish().unwrap();
        let digest = Digest::of(&layer).to_string();
        let diff_id = Digest::of(&tar).to_string();
        let started = std::time::Instant::now();
        let found = checked(
            |m, config| {
                m.layers[0].digest = digest.clone();
                m.layers[0].size = layer.len() as i64;
                let base = m.layers[0].clone();
                let wasm = m.layers[1].clone();
                m.layers = std::iter::repeat_n(base, 2_000)
                    .chain([wasm.clone()])
                    .collect();
                config["rootfs"]["diff_ids"] = std::iter::repeat_n(diff_id.clone(), 2_000)
                    .chain([wasm.digest.clone()])
                    .collect();
                config["config"]["Labels"] = serde_json::json!({});
            },
            Some(layer.clone()),
        );
        let elapsed = started.elapsed();
        assert!(
            elapsed < std::time::Duration::from_secs(10),
            "checking took {elapsed:?}"
        );
        // Crossplane reads the first base layer only; the repeats are one
        // problem, said once.
        assert_eq!(
            found.problems,
            [
                "2000 layers are annotated `io.crossplane.xpkg: base`; an xpkg has one \
              (Crossplane reads only the first)"
            ]
        );
    }

    #[test]
    fn problems_are_deduplicated_and_bounded() {
        let many: Vec<String> = (0..40)
            .map(|i| format!("problem {}", i % 20))
            .chain(["x".repeat(10_000)])
            .collect();
        let summary = summarized(many);
        assert_eq!(summary.len(), MAX_PROBLEMS + 1);
        assert_eq!(summary[0], "problem 0");
        assert_eq!(summary[MAX_PROBLEMS], "and 5 more problems");
        let long = summarized(vec!["é".repeat(10_000)]);
        assert_eq!(long[0].chars().count(), MAX_PROBLEM_LEN + 1);
    }

    #[test]
    fn the_checker_finds_what_crossplane_refuses() {
        let two_bases = problems(checked(
            |m, _| set_annotation(&mut m.layers[1], "base"),
            None,
        ));
        assert!(
            two_bases.contains("2 layers are annotated `io.crossplane.xpkg: base`"),
            "{two_bases}"
        );
        // The label still says wasm: that disagreement is reported too.
        assert!(
            two_bases.contains("annotated `io.crossplane.xpkg: base` but labelled `wasm`"),
            "{two_bases}"
        );

        let unannotated = problems(checked(|m, _| m.layers[0].annotations = None, None));
        assert!(
            unannotated.contains("no layer is annotated"),
            "{unannotated}"
        );
        assert!(
            unannotated.contains("labelled `base` in the config but not annotated"),
            "{unannotated}"
        );

        let stray = problems(checked(
            |_, c| {
                c["config"]["Labels"]["io.crossplane.xpkg:sha256:0000"] = "base".into();
            },
            None,
        ));
        assert!(stray.contains("names no layer of the manifest"), "{stray}");

        let short = problems(checked(
            |_, c| {
                c["rootfs"]["diff_ids"].as_array_mut().unwrap().pop();
            },
            None,
        ));
        assert!(short.contains("1 diff IDs for 2 layers"), "{short}");

        let wrong = problems(checked(
            |_, c| c["rootfs"]["diff_ids"][0] = "sha256:00".into(),
            None,
        ));
        assert!(
            wrong.contains("but its uncompressed content is sha256:"),
            "{wrong}"
        );

        let no_rootfs = problems(checked(|_, c| c["rootfs"] = serde_json::Value::Null, None));
        assert!(no_rootfs.contains("no rootfs.diff_ids"), "{no_rootfs}");
    }

    #[test]
    fn the_checker_reads_package_yaml_as_crossplane_does() {
        let layer = |files: &[(&str, &str)]| {
            let mut builder = tar::Builder::new(Vec::new());
            for (path, text) in files {
                let mut header = tar::Header::new_gnu();
                header.set_size(text.len() as u64);
                header.set_mode(0o644);
                builder
                    .append_data(&mut header, path, text.as_bytes())
                    .unwrap();
            }
            builder.into_inner().unwrap()
        };
        // A plain (uncompressed) tar is fine: Crossplane sniffs the bytes.
        // The edits keep the manifest's digest and diff ID in step.
        let fix = |bytes: &[u8]| {
            let digest = Digest::of(bytes).to_string();
            move |m: &mut OciImageManifest, c: &mut serde_json::Value| {
                let old = std::mem::replace(&mut m.layers[0].digest, digest.clone());
                let labels = c["config"]["Labels"].as_object_mut().unwrap();
                labels.remove(&format!("io.crossplane.xpkg:{old}"));
                labels.insert(format!("io.crossplane.xpkg:{digest}"), "base".into());
                c["rootfs"]["diff_ids"][0] = digest.clone().into();
            }
        };
        let plain = layer(&[("README.md", "hi"), ("./package.yaml", FUNCTION)]);
        let ok = checked(fix(&plain), Some(plain.clone()));
        assert!(ok.is_ok(), "{:?}", ok.problems);

        let nested = layer(&[("pkg/package.yaml", FUNCTION)]);
        let message = problems(checked(fix(&nested), Some(nested.clone())));
        assert!(
            message.contains("is at \"pkg/package.yaml\", not at the root"),
            "{message}"
        );

        let missing = layer(&[("crossplane.yaml", FUNCTION)]);
        let message = problems(checked(fix(&missing), Some(missing.clone())));
        assert!(
            message.contains("the base layer has no package.yaml"),
            "{message}"
        );

        let provider = layer(&[(
            "package.yaml",
            &FUNCTION.replace("kind: Function", "kind: Provider"),
        )]);
        let message = problems(checked(fix(&provider), Some(provider.clone())));
        assert!(
            message.contains("package.yaml: document 1 is a Provider package"),
            "{message}"
        );

        // Bytes that are not the annotated layer's.
        let message = problems(checked(|_, _| {}, Some(plain)));
        assert!(message.contains("is not the base layer"), "{message}");
    }

    #[test]
    fn crossplane_reads_the_linux_amd64_entry_of_an_index() {
        let index = |platforms: &[Option<(&str, &str)>]| -> OciImageIndex {
            let manifests: Vec<serde_json::Value> = platforms
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let mut entry = serde_json::json!({
                        "mediaType": OCI_IMAGE_MEDIA_TYPE,
                        "digest": format!("sha256:{i}"),
                        "size": 1,
                    });
                    if let Some((os, arch)) = p {
                        entry["platform"] = serde_json::json!({"os": os, "architecture": arch});
                    }
                    entry
                })
                .collect();
            serde_json::from_value(serde_json::json!({"schemaVersion": 2, "manifests": manifests}))
                .unwrap()
        };
        let pick = |i: &OciImageIndex| crossplane_index_entry(i).map(|e| e.digest.clone());
        assert_eq!(
            pick(&index(&[
                Some(("wasip2", "wasm")),
                Some(("linux", "amd64"))
            ]))
            .as_deref(),
            Some("sha256:1")
        );
        assert_eq!(pick(&index(&[None])).as_deref(), Some("sha256:0"));
        // A single wasm entry: Crossplane's fetcher finds no linux/amd64.
        assert_eq!(pick(&index(&[Some(("wasip2", "wasm"))])), None);
        assert_eq!(pick(&index(&[Some(("linux", "arm64"))])), None);
    }
}
