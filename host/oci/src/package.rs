//! A function's metadata (name, capabilities): from the `package.yaml` of an
//! xpkg base layer, else from the annotations and config xfn pushes, else
//! from the repository name.

use std::collections::BTreeMap;

use serde::Deserialize;

/// Annotation with the function's name.
pub const ANNOTATION_NAME: &str = "dev.xfn.function.name";
/// Annotation with the function's capabilities, comma-separated.
pub const ANNOTATION_CAPABILITIES: &str = "dev.xfn.function.capabilities";
/// Annotation with the WIT world the component targets.
pub const ANNOTATION_WORLD: &str = "dev.xfn.wit.world";
/// Crossplane's description annotation on package metadata.
pub(crate) const CROSSPLANE_DESCRIPTION: &str = "meta.crossplane.io/description";

/// The capability a function has when its package declares none.
pub const DEFAULT_CAPABILITY: &str = "composition";

/// The file of an xpkg base layer that holds the package metadata.
pub const PACKAGE_FILE: &str = "package.yaml";

/// Most decompressed bytes read from a base layer (against gzip bombs).
pub(crate) const MAX_UNPACKED: u64 = xfn_component::MAX_COMPONENT_BYTES;

/// Where a function's metadata came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetadataSource {
    /// The `package.yaml` of the xpkg base layer.
    PackageYaml,
    /// The manifest annotations or the config xfn writes.
    Annotations,
    /// Nothing declared: the name is the repository's last segment.
    Default,
}

impl std::fmt::Display for MetadataSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            MetadataSource::PackageYaml => "package.yaml",
            MetadataSource::Annotations => "manifest annotations",
            MetadataSource::Default => "repository name",
        })
    }
}

/// What a function package says about the function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionMetadata {
    /// The function's name (`metadata.name` of the package's Function).
    pub name: String,
    /// Its capabilities, e.g. `composition`, `operation`.
    pub capabilities: Vec<String>,
    /// A description, if the package has one.
    pub description: Option<String>,
    /// Where this came from.
    pub source: MetadataSource,
}

#[derive(Deserialize)]
struct Object {
    #[serde(default, rename = "apiVersion")]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    metadata: ObjectMeta,
    #[serde(default)]
    spec: Option<FunctionSpec>,
}

#[derive(Deserialize, Default)]
struct ObjectMeta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    annotations: BTreeMap<String, String>,
}

#[derive(Deserialize, Default)]
struct FunctionSpec {
    #[serde(default)]
    capabilities: Option<Vec<String>>,
}

/// Reads `package.yaml` from an xpkg base layer (a tar archive, gzipped or
/// not), found as Crossplane finds it.
pub fn from_package_layer(layer: &[u8]) -> Result<FunctionMetadata, String> {
    from_package_yaml(&crate::xpkg::read_package_yaml(layer)?)
}

/// Reads the Function object of a `package.yaml` stream.
pub fn from_package_yaml(text: &str) -> Result<FunctionMetadata, String> {
    xfn_yaml::check(text).map_err(|refusal| format!("{PACKAGE_FILE}: {refusal}"))?;
    let mut other_kinds = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(text) {
        let object = match Object::deserialize(document) {
            Ok(object) => object,
            Err(e) => return Err(format!("{PACKAGE_FILE} is not valid YAML: {e}")),
        };
        if !object.api_version.starts_with("meta.pkg.crossplane.io/") {
            continue;
        }
        if object.kind != "Function" {
            other_kinds.push(object.kind);
            continue;
        }
        let name = object
            .metadata
            .name
            .filter(|n| !n.is_empty())
            .ok_or_else(|| format!("the Function in {PACKAGE_FILE} has no metadata.name"))?;
        let capabilities = object
            .spec
            .and_then(|s| s.capabilities)
            .filter(|c| !c.is_empty())
            .unwrap_or_else(|| vec![DEFAULT_CAPABILITY.to_owned()]);
        return Ok(FunctionMetadata {
            name,
            capabilities,
            description: object
                .metadata
                .annotations
                .get(CROSSPLANE_DESCRIPTION)
                .cloned(),
            source: MetadataSource::PackageYaml,
        });
    }
    match other_kinds.first() {
        Some(kind) => Err(format!("the package is a {kind}, not a Function")),
        None => Err(format!(
            "{PACKAGE_FILE} has no meta.pkg.crossplane.io Function object"
        )),
    }
}

/// Reads the metadata xfn records at push time from the manifest
/// annotations and the config's `xfn` object; `fallback_name` when neither
/// names the function.
pub fn from_annotations(
    annotations: Option<&BTreeMap<String, String>>,
    config: Option<&serde_json::Value>,
    fallback_name: &str,
) -> FunctionMetadata {
    let annotation = |key: &str| {
        annotations
            .and_then(|a| a.get(key))
            .filter(|v| !v.is_empty())
    };
    let xfn = config.and_then(|c| c.get("xfn"));
    let name = annotation(ANNOTATION_NAME).cloned().or_else(|| {
        xfn?.get("name")?
            .as_str()
            .filter(|n| !n.is_empty())
            .map(str::to_owned)
    });
    let capabilities: Option<Vec<String>> = annotation(ANNOTATION_CAPABILITIES)
        .map(|c| {
            c.split(',')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .or_else(|| {
            let list = xfn?.get("capabilities")?.as_array()?;
            Some(
                list.iter()
                    .filter_map(|c| c.as_str().map(str::trim))
                    .filter(|c| !c.is_empty())
                    .map(str::to_owned)
                    .collect(),
            )
        })
        .filter(|c: &Vec<String>| !c.is_empty());
    let description = annotation("org.opencontainers.image.description").cloned();
    let source = if name.is_some() || capabilities.is_some() {
        MetadataSource::Annotations
    } else {
        MetadataSource::Default
    };
    FunctionMetadata {
        name: name.unwrap_or_else(|| fallback_name.to_owned()),
        capabilities: capabilities.unwrap_or_else(|| vec![DEFAULT_CAPABILITY.to_owned()]),
        description,
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PACKAGE: &str = r#"---
apiVersion: meta.pkg.crossplane.io/v1
kind: Function
metadata:
  name: function-hello
  annotations:
    meta.crossplane.io/description: Says hello
spec:
  capabilities: [composition, operation]
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: inputs.hello.fn.crossplane.io
"#;

    fn tar_with(files: &[(&str, &str)], gzip: bool) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (path, text) in files {
            let mut header = tar::Header::new_gnu();
            header.set_size(text.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            builder
                .append_data(&mut header, path, text.as_bytes())
                .unwrap();
        }
        let tar = builder.into_inner().unwrap();
        if !gzip {
            return tar;
        }
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, &tar).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn reads_a_function_package() {
        let m = from_package_yaml(PACKAGE).unwrap();
        assert_eq!(m.name, "function-hello");
        assert_eq!(m.capabilities, ["composition", "operation"]);
        assert_eq!(m.description.as_deref(), Some("Says hello"));
        assert_eq!(m.source, MetadataSource::PackageYaml);
    }

    #[test]
    fn capabilities_default_to_composition() {
        let m = from_package_yaml(
            "apiVersion: meta.pkg.crossplane.io/v1beta1\nkind: Function\nmetadata:\n  name: f\n",
        )
        .unwrap();
        assert_eq!(m.capabilities, ["composition"]);
    }

    #[test]
    fn refuses_other_packages() {
        let provider =
            "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: p\n";
        assert!(
            from_package_yaml(provider)
                .unwrap_err()
                .contains("Provider")
        );
        assert!(
            from_package_yaml("a: b\n")
                .unwrap_err()
                .contains("no meta.pkg")
        );
        assert!(from_package_yaml("kind: [unclosed").is_err());
    }

    #[test]
    fn reads_package_yaml_from_tar_layers() {
        for gzip in [false, true] {
            let layer = tar_with(&[("README", "hi"), ("./package.yaml", PACKAGE)], gzip);
            assert_eq!(from_package_layer(&layer).unwrap().name, "function-hello");
        }
        let empty = tar_with(&[("other.yaml", "a: b")], true);
        assert!(
            from_package_layer(&empty)
                .unwrap_err()
                .contains("no package.yaml")
        );
    }

    #[test]
    fn annotations_then_config_then_fallback() {
        let annotations = BTreeMap::from([
            (ANNOTATION_NAME.to_owned(), "from-annotation".to_owned()),
            (
                ANNOTATION_CAPABILITIES.to_owned(),
                "composition, operation".to_owned(),
            ),
        ]);
        let m = from_annotations(Some(&annotations), None, "repo");
        assert_eq!(m.name, "from-annotation");
        assert_eq!(m.capabilities, ["composition", "operation"]);
        assert_eq!(m.source, MetadataSource::Annotations);

        let config =
            serde_json::json!({"xfn": {"name": "from-config", "capabilities": ["operation"]}});
        let m = from_annotations(None, Some(&config), "repo");
        assert_eq!(
            (m.name.as_str(), m.capabilities.as_slice()),
            ("from-config", &["operation".to_owned()][..])
        );

        let m = from_annotations(None, None, "repo");
        assert_eq!(m.name, "repo");
        assert_eq!(m.capabilities, ["composition"]);
        assert_eq!(m.source, MetadataSource::Default);
    }

    /// Found by the oci_config fuzz property on a hand-made seed: a config naming the
    /// function `""` gave it no name, and `""` became a capability.
    #[test]
    fn empty_names_and_capabilities_in_the_config_count_as_unset() {
        let config = serde_json::json!({"xfn": {"name": "", "capabilities": ["", " ", 5]}});
        let m = from_annotations(None, Some(&config), "repo");
        assert_eq!(m.name, "repo");
        assert_eq!(m.capabilities, ["composition"]);
        assert_eq!(m.source, MetadataSource::Default);
    }
}
