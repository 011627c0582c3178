//! What xfn-oci reads from a registry before it downloads a layer: the
//! manifest or index ([`layout::parse_manifest`]), the layers and index
//! entry it picks, and the image config (metadata, xpkg labels).

use std::sync::OnceLock;

use oci_client::manifest::{OciImageIndex, OciImageManifest, OciManifest};
use xfn_oci::layout::{self, Layout, LayoutError, WASM_LAYER_MEDIA_TYPES};
use xfn_oci::{Digest, package, xpkg};

/// The repository name a function without metadata is named after.
const FALLBACK_NAME: &str = "function-fuzz";

/// Parses `data` as a manifest, then picks from it as a pull does.
pub fn oci_manifest(data: &[u8]) {
    match layout::parse_manifest(data) {
        Ok(OciManifest::Image(manifest)) => image(&manifest, None),
        Ok(OciManifest::ImageIndex(index)) => image_index(&index),
        Err(_) => {}
    }
}

/// Reads `data` as the config of an xpkg-style manifest whose layers the
/// config's labels may name.
pub fn oci_config(data: &[u8]) {
    image(xpkg_manifest(), Some(data));
}

fn image(manifest: &OciImageManifest, config: Option<&[u8]>) {
    let config_json: Option<serde_json::Value> =
        config.and_then(|c| serde_json::from_slice(c).ok());
    let is_wasm = |media_type: &str| WASM_LAYER_MEDIA_TYPES.contains(&media_type);
    match layout::select_layers(manifest, config_json.as_ref()) {
        Ok(selected) => {
            assert!(
                is_wasm(&selected.wasm.media_type),
                "picked a layer that is not wasm"
            );
            assert!(
                manifest
                    .layers
                    .iter()
                    .any(|l| l.digest == selected.wasm.digest),
                "picked a wasm layer the manifest does not list"
            );
            match &selected.base {
                Some(base) => {
                    assert_eq!(selected.layout, Layout::Xpkg);
                    assert!(manifest.layers.iter().any(|l| l.digest == base.digest));
                }
                None => assert_ne!(selected.layout, Layout::Xpkg),
            }
            // The pull refuses what it cannot name by digest before it
            // downloads anything; naming one never panics.
            let _ = selected.wasm.digest.parse::<Digest>();
        }
        Err(LayoutError::NoWasmLayer(found)) => {
            assert!(!manifest.layers.iter().any(|l| is_wasm(&l.media_type)));
            assert_eq!(found.len(), manifest.layers.len());
        }
        Err(_) => {}
    }
    let metadata = package::from_annotations(
        manifest.annotations.as_ref(),
        config_json.as_ref(),
        FALLBACK_NAME,
    );
    assert!(
        !metadata.name.is_empty(),
        "a function with no name: {metadata:?}"
    );
    assert!(
        !metadata.capabilities.is_empty() && metadata.capabilities.iter().all(|c| !c.is_empty()),
        "empty capabilities: {metadata:?}"
    );
    let check = xpkg::check(manifest, config.unwrap_or(b"{}"), None);
    assert!(!check.is_ok(), "an xpkg passed without its package layer");
}

fn image_index(index: &OciImageIndex) {
    match layout::select_index_entry(index) {
        Ok(entry) => {
            assert!(index.manifests.iter().any(|e| std::ptr::eq(e, entry)));
            let _ = entry.digest.parse::<Digest>();
        }
        Err(LayoutError::NoWasmPlatform(platforms)) => {
            assert_ne!(index.manifests.len(), 1, "the only entry was not taken");
            assert_eq!(platforms.len(), index.manifests.len());
        }
        Err(other) => panic!("an index refused for another reason: {other:?}"),
    }
    if let Some(entry) = xpkg::crossplane_index_entry(index)
        && let Some(platform) = &entry.platform
    {
        assert_eq!(
            (platform.os.to_string(), platform.architecture.to_string()),
            ("linux".to_owned(), "amd64".to_owned())
        );
    }
}

/// An xpkg-style manifest: a wasm layer annotated as such, and two tar
/// layers that only the config's `io.crossplane.xpkg:<digest>` labels can
/// mark as the base.
fn xpkg_manifest() -> &'static OciImageManifest {
    static MANIFEST: OnceLock<OciImageManifest> = OnceLock::new();
    MANIFEST.get_or_init(|| {
        let text = format!(
            r#"{{
  "schemaVersion": 2,
  "mediaType": "application/vnd.oci.image.manifest.v1+json",
  "config": {{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": "sha256:{c}", "size": 2}},
  "layers": [
    {{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": "sha256:{b}", "size": 10}},
    {{"mediaType": "application/wasm", "digest": "sha256:{w}", "size": 10,
      "annotations": {{"io.crossplane.xpkg": "wasm"}}}},
    {{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": "sha256:{o}", "size": 10}}
  ]
}}"#,
            c = "c".repeat(64),
            b = "b".repeat(64),
            w = "a".repeat(64),
            o = "0".repeat(64),
        );
        match layout::parse_manifest(text.as_bytes()) {
            Ok(OciManifest::Image(manifest)) => manifest,
            other => panic!("the fixed manifest does not parse as an image: {other:?}"),
        }
    })
}
