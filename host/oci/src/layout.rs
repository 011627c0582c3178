//! Finding the wasm component (and the Crossplane package metadata) in the
//! artifact layouts xfn accepts:
//!
//! * the CNCF wasm artifact: config `application/vnd.wasm.config.v0+json`,
//!   exactly one `application/wasm` layer;
//! * older wasm artifacts: one layer of another wasm media type
//!   (e.g. `application/vnd.wasm.content.layer.v1+wasm`);
//! * an xpkg-style image: a wasm layer beside the `io.crossplane.xpkg: base`
//!   layer that carries `package.yaml`;
//! * an image index: the entry for platform `wasm` (`wasip2`/`wasip1`), or
//!   the one wasm artifact entry.

use oci_client::manifest::{
    ImageIndexEntry, OciDescriptor, OciImageIndex, OciImageManifest, OciManifest,
};

/// Layer media types that carry a wasm component.
pub const WASM_LAYER_MEDIA_TYPES: &[&str] = &[
    "application/wasm",
    "application/vnd.wasm.content.layer.v1+wasm",
    "application/vnd.module.wasm.content.layer.v1+wasm",
    "application/vnd.bytecodealliance.wasm.component.layer.v0+wasm",
];

/// The config media type of the CNCF wasm artifact.
pub const WASM_CONFIG_V0: &str = "application/vnd.wasm.config.v0+json";

/// The older wasm config media type (oci-client, Kubewarden).
pub const WASM_CONFIG_V1: &str = "application/vnd.wasm.config.v1+json";

/// The layer media type xfn pushes.
pub const WASM_LAYER: &str = "application/wasm";

/// The annotation (and config label prefix) Crossplane uses to mark layers.
pub const XPKG_ANNOTATION: &str = "io.crossplane.xpkg";

/// The value of [`XPKG_ANNOTATION`] on the layer holding `package.yaml`.
pub const XPKG_BASE: &str = "base";

/// The value of [`XPKG_ANNOTATION`] xfn reads as "this layer is the wasm".
pub const XPKG_WASM: &str = "wasm";

/// Manifest media types xfn asks registries for.
pub const MANIFEST_MEDIA_TYPES: &[&str] = &[
    oci_client::manifest::OCI_IMAGE_MEDIA_TYPE,
    oci_client::manifest::OCI_IMAGE_INDEX_MEDIA_TYPE,
    oci_client::manifest::IMAGE_MANIFEST_MEDIA_TYPE,
    oci_client::manifest::IMAGE_MANIFEST_LIST_MEDIA_TYPE,
];

/// Which layout an artifact has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// The CNCF wasm artifact (config `…wasm.config.v0+json`).
    WasmArtifact,
    /// A single wasm layer of an older media type or config.
    LegacyWasm,
    /// An xpkg-style image with a `package.yaml` base layer beside the wasm.
    Xpkg,
}

impl std::fmt::Display for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Layout::WasmArtifact => "CNCF wasm artifact",
            Layout::LegacyWasm => "wasm artifact (older media types)",
            Layout::Xpkg => "xpkg with a wasm layer",
        })
    }
}

/// The layers of an image manifest xfn uses.
#[derive(Debug, Clone)]
pub struct Selected {
    /// The layout.
    pub layout: Layout,
    /// The wasm component layer.
    pub wasm: OciDescriptor,
    /// The `io.crossplane.xpkg: base` layer, if any.
    pub base: Option<OciDescriptor>,
}

/// Why a manifest or index has no usable wasm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayoutError {
    /// No layer has a wasm media type; the media types found.
    NoWasmLayer(Vec<String>),
    /// An image index with no wasm entry; the platforms it has.
    NoWasmPlatform(Vec<String>),
    /// Anything else, explained.
    Unsupported(String),
}

/// Parses the bytes a registry returned for a manifest: an image manifest
/// or an image index, told apart by their `mediaType` or their fields.
pub fn parse_manifest(bytes: &[u8]) -> Result<OciManifest, String> {
    serde_json::from_slice(bytes)
        .map_err(|e| format!("the manifest is neither an image manifest nor an index: {e}"))
}

/// Picks the wasm and metadata layers of an image manifest. `config` is the
/// parsed image config, if it is JSON (for the `io.crossplane.xpkg:<digest>`
/// label form of the base annotation).
pub fn select_layers(
    manifest: &OciImageManifest,
    config: Option<&serde_json::Value>,
) -> Result<Selected, LayoutError> {
    let cncf = manifest.config.media_type == WASM_CONFIG_V0;
    if cncf && manifest.layers.len() != 1 {
        return Err(LayoutError::Unsupported(format!(
            "a CNCF wasm artifact has exactly one layer, this one has {}",
            manifest.layers.len()
        )));
    }
    let wasm_layers: Vec<&OciDescriptor> = manifest
        .layers
        .iter()
        .filter(|l| WASM_LAYER_MEDIA_TYPES.contains(&l.media_type.as_str()))
        .collect();
    let wasm = match wasm_layers.as_slice() {
        [] => {
            return Err(LayoutError::NoWasmLayer(
                manifest
                    .layers
                    .iter()
                    .map(|l| l.media_type.clone())
                    .collect(),
            ));
        }
        [one] => *one,
        several => {
            let marked: Vec<_> = several
                .iter()
                .filter(|l| annotation(l) == Some(XPKG_WASM))
                .collect();
            match marked.as_slice() {
                [one] => **one,
                _ => {
                    return Err(LayoutError::Unsupported(format!(
                        "{} wasm layers and not exactly one annotated `{XPKG_ANNOTATION}: {XPKG_WASM}`",
                        several.len()
                    )));
                }
            }
        }
    };
    let base = find_base_layer(manifest, config);
    let layout = if base.is_some() {
        Layout::Xpkg
    } else if cncf {
        Layout::WasmArtifact
    } else {
        Layout::LegacyWasm
    };
    Ok(Selected {
        layout,
        wasm: wasm.clone(),
        base: base.cloned(),
    })
}

/// Picks the index entry to run: the platform-`wasm` entry (preferring
/// `wasip2`), else an entry whose artifact type is a wasm config, else the
/// only entry.
pub fn select_index_entry(index: &OciImageIndex) -> Result<&ImageIndexEntry, LayoutError> {
    let entries = &index.manifests;
    wasm_index_entry(index)
        .or(match entries.as_slice() {
            [only] => Some(only),
            _ => None,
        })
        .ok_or_else(|| {
            LayoutError::NoWasmPlatform(
                entries
                    .iter()
                    .map(|e| match &e.platform {
                        Some(p) => format!("{}/{}", p.os, p.architecture),
                        None => String::from("(no platform)"),
                    })
                    .collect(),
            )
        })
}

/// The index entry that is a wasm artifact, if one says so: the
/// platform-`wasm` entry (preferring `wasip2`), else an entry whose
/// artifact type is a wasm config.
pub fn wasm_index_entry(index: &OciImageIndex) -> Option<&ImageIndexEntry> {
    let wasm_platform = |e: &&ImageIndexEntry| {
        e.platform
            .as_ref()
            .is_some_and(|p| p.architecture.to_string() == "wasm")
    };
    let wasip2 = |e: &&ImageIndexEntry| {
        wasm_platform(e)
            && e.platform
                .as_ref()
                .is_some_and(|p| p.os.to_string() == "wasip2")
    };
    let wasm_artifact = |e: &&ImageIndexEntry| {
        e.artifact_type
            .as_deref()
            .is_some_and(|t| t == WASM_CONFIG_V0 || t == WASM_CONFIG_V1)
    };
    let entries = &index.manifests;
    entries
        .iter()
        .find(wasip2)
        .or_else(|| entries.iter().find(wasm_platform))
        .or_else(|| entries.iter().find(wasm_artifact))
}

/// Whether an image manifest is a wasm artifact, to be read by
/// [`select_layers`]: a wasm config media type, or a layer of a wasm media
/// type. Any other manifest is a container image (or nothing xfn runs).
pub fn is_wasm_manifest(manifest: &OciImageManifest) -> bool {
    let config = manifest.config.media_type.as_str();
    config == WASM_CONFIG_V0
        || config == WASM_CONFIG_V1
        || manifest
            .layers
            .iter()
            .any(|l| WASM_LAYER_MEDIA_TYPES.contains(&l.media_type.as_str()))
}

fn annotation(layer: &OciDescriptor) -> Option<&str> {
    layer
        .annotations
        .as_ref()
        .and_then(|a| a.get(XPKG_ANNOTATION))
        .map(String::as_str)
}

fn find_base_layer<'m>(
    manifest: &'m OciImageManifest,
    config: Option<&serde_json::Value>,
) -> Option<&'m OciDescriptor> {
    if let Some(layer) = manifest
        .layers
        .iter()
        .find(|l| annotation(l) == Some(XPKG_BASE))
    {
        return Some(layer);
    }
    // The label form: `io.crossplane.xpkg:<layer digest>: base` in the
    // image config's labels.
    let labels = config?.get("config")?.get("Labels")?.as_object()?;
    manifest.layers.iter().find(|l| {
        labels
            .get(&format!("{XPKG_ANNOTATION}:{}", l.digest))
            .and_then(|v| v.as_str())
            == Some(XPKG_BASE)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn layer(media_type: &str, digest: &str, annotation: Option<&str>) -> OciDescriptor {
        OciDescriptor {
            media_type: media_type.to_owned(),
            digest: digest.to_owned(),
            size: 1,
            annotations: annotation
                .map(|v| BTreeMap::from([(XPKG_ANNOTATION.to_owned(), v.to_owned())])),
            ..Default::default()
        }
    }

    fn manifest(config_type: &str, layers: Vec<OciDescriptor>) -> OciImageManifest {
        let mut m = OciImageManifest::default();
        m.config.media_type = config_type.to_owned();
        m.layers = layers;
        m
    }

    #[test]
    fn cncf_artifact() {
        let m = manifest(WASM_CONFIG_V0, vec![layer(WASM_LAYER, "sha256:a", None)]);
        let s = select_layers(&m, None).unwrap();
        assert_eq!(s.layout, Layout::WasmArtifact);
        assert_eq!(s.wasm.digest, "sha256:a");
        assert!(s.base.is_none());

        let two = manifest(
            WASM_CONFIG_V0,
            vec![
                layer(WASM_LAYER, "sha256:a", None),
                layer(WASM_LAYER, "sha256:b", None),
            ],
        );
        assert!(matches!(
            select_layers(&two, None),
            Err(LayoutError::Unsupported(_))
        ));
    }

    #[test]
    fn legacy_media_type() {
        let m = manifest(
            WASM_CONFIG_V1,
            vec![layer(
                "application/vnd.wasm.content.layer.v1+wasm",
                "sha256:a",
                None,
            )],
        );
        assert_eq!(select_layers(&m, None).unwrap().layout, Layout::LegacyWasm);
    }

    #[test]
    fn xpkg_by_annotation_and_by_label() {
        let tar = "application/vnd.oci.image.layer.v1.tar+gzip";
        let annotated = manifest(
            "application/vnd.oci.image.config.v1+json",
            vec![
                layer(tar, "sha256:runtime", None),
                layer(tar, "sha256:meta", Some(XPKG_BASE)),
                layer(WASM_LAYER, "sha256:wasm", Some(XPKG_WASM)),
            ],
        );
        let s = select_layers(&annotated, None).unwrap();
        assert_eq!(s.layout, Layout::Xpkg);
        assert_eq!(s.base.unwrap().digest, "sha256:meta");
        assert_eq!(s.wasm.digest, "sha256:wasm");

        let labelled = manifest(
            "application/vnd.oci.image.config.v1+json",
            vec![
                layer(tar, "sha256:meta", None),
                layer(WASM_LAYER, "sha256:wasm", None),
            ],
        );
        let config =
            serde_json::json!({"config": {"Labels": {"io.crossplane.xpkg:sha256:meta": "base"}}});
        let s = select_layers(&labelled, Some(&config)).unwrap();
        assert_eq!(s.base.unwrap().digest, "sha256:meta");
    }

    #[test]
    fn several_wasm_layers_need_the_wasm_annotation() {
        let ambiguous = manifest(
            "application/vnd.oci.image.config.v1+json",
            vec![
                layer(WASM_LAYER, "sha256:a", None),
                layer(WASM_LAYER, "sha256:b", None),
            ],
        );
        assert!(matches!(
            select_layers(&ambiguous, None),
            Err(LayoutError::Unsupported(_))
        ));
        let marked = manifest(
            "application/vnd.oci.image.config.v1+json",
            vec![
                layer(WASM_LAYER, "sha256:a", None),
                layer(WASM_LAYER, "sha256:b", Some(XPKG_WASM)),
            ],
        );
        assert_eq!(
            select_layers(&marked, None).unwrap().wasm.digest,
            "sha256:b"
        );
    }

    #[test]
    fn wasm_manifests_are_told_from_container_images() {
        let oci = "application/vnd.oci.image.config.v1+json";
        let tar = "application/vnd.oci.image.layer.v1.tar+gzip";
        let wasm = [
            manifest(WASM_CONFIG_V0, vec![layer(WASM_LAYER, "sha256:a", None)]),
            // Wasm by its config, though select_layers refuses it.
            manifest(WASM_CONFIG_V0, vec![layer(tar, "sha256:a", None)]),
            manifest(WASM_CONFIG_V1, vec![]),
            manifest(
                oci,
                vec![
                    layer(tar, "sha256:meta", Some(XPKG_BASE)),
                    layer(WASM_LAYER, "sha256:wasm", None),
                ],
            ),
        ];
        for m in &wasm {
            assert!(is_wasm_manifest(m), "{m:?}");
        }
        let images = [
            manifest(oci, vec![layer(tar, "sha256:a", None)]),
            // A container function's xpkg: package.yaml in the last layer.
            manifest(
                oci,
                vec![
                    layer(tar, "sha256:runtime", None),
                    layer(tar, "sha256:meta", Some(XPKG_BASE)),
                ],
            ),
            manifest(oci, vec![]),
        ];
        for m in &images {
            assert!(!is_wasm_manifest(m), "{m:?}");
            assert!(matches!(
                select_layers(m, None),
                Err(LayoutError::NoWasmLayer(_))
            ));
        }
    }

    #[test]
    fn container_image_has_no_wasm() {
        let m = manifest(
            "application/vnd.oci.image.config.v1+json",
            vec![layer(
                "application/vnd.oci.image.layer.v1.tar+gzip",
                "sha256:a",
                None,
            )],
        );
        assert_eq!(
            select_layers(&m, None).unwrap_err(),
            LayoutError::NoWasmLayer(vec!["application/vnd.oci.image.layer.v1.tar+gzip".into()])
        );
    }

    #[test]
    fn index_entries() {
        let index: OciImageIndex = serde_json::from_value(serde_json::json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": [
                {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": "sha256:amd", "size": 1,
                 "platform": {"architecture": "amd64", "os": "linux"}},
                {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": "sha256:wasm", "size": 1,
                 "platform": {"architecture": "wasm", "os": "wasip2"}}
            ]
        }))
        .unwrap();
        assert_eq!(select_index_entry(&index).unwrap().digest, "sha256:wasm");

        let mut no_wasm = index.clone();
        no_wasm.manifests.pop();
        // A single entry is used whatever its platform (as Crossplane does).
        assert_eq!(select_index_entry(&no_wasm).unwrap().digest, "sha256:amd");
        no_wasm.manifests.push(no_wasm.manifests[0].clone());
        let err = select_index_entry(&no_wasm).unwrap_err();
        assert!(
            matches!(&err, LayoutError::NoWasmPlatform(p) if p == &["linux/amd64", "linux/amd64"]),
            "{err:?}"
        );
    }
}
