//! Publishing a function component, in one of two layouts:
//!
//! * the CNCF wasm artifact: config `application/vnd.wasm.config.v0+json`
//!   (with the component's imports and exports, its WIT world and xfn's
//!   function metadata) and one `application/wasm` layer;
//! * with the author's `crossplane.yaml`, an xpkg: an OCI image whose
//!   `package.yaml` layer Crossplane's package manager installs, beside the
//!   component layer xfn runs (see [`crate::xpkg`]).
//!
//! Both are uploaded the same way ([`push`]).

use std::collections::BTreeMap;

use oci_client::RegistryOperation;
use oci_client::manifest::{
    OCI_IMAGE_INDEX_MEDIA_TYPE, OCI_IMAGE_MEDIA_TYPE, OciDescriptor, OciImageManifest,
};

use crate::digest::Digest;
use crate::error::{Error, Result};
use crate::layout::{Layout, WASM_CONFIG_V0, WASM_LAYER};
use crate::options::RegistryOptions;
use crate::package::{
    ANNOTATION_CAPABILITIES, ANNOTATION_NAME, ANNOTATION_WORLD, DEFAULT_CAPABILITY,
    FunctionMetadata, MetadataSource,
};
use crate::reference::ImageRef;
use crate::runnable::EntrypointBinary;
use crate::transport::Session;
use crate::xpkg::PackageFile;
use xfn_component::{ComponentInfo, FUNCTION_WORLD, RUN_FUNCTION_EXPORT};

/// The environment variable that fixes an xpkg's creation time (seconds
/// since 1970), for reproducible builds.
pub const SOURCE_DATE_EPOCH: &str = "SOURCE_DATE_EPOCH";

/// What to say about the function being pushed.
#[derive(Debug, Clone, Default)]
pub struct PushMetadata {
    /// The function's name; defaults to the repository's last segment.
    pub name: Option<String>,
    /// Its capabilities; defaults to `composition`.
    pub capabilities: Vec<String>,
    /// A description (`org.opencontainers.image.description`).
    pub description: Option<String>,
    /// Extra manifest annotations.
    pub annotations: BTreeMap<String, String>,
    /// The author's `crossplane.yaml`: push an xpkg instead of a CNCF
    /// artifact. The name, capabilities and description then come from it,
    /// and the fields above must be unset.
    pub package: Option<PackageFile>,
}

/// What was pushed.
#[derive(Debug, Clone)]
pub struct Pushed {
    /// The reference pushed to.
    pub reference: String,
    /// The manifest digest: pull `<repository>@<digest>` to pin it.
    pub digest: Digest,
    /// The component layer's digest.
    pub wasm_digest: Digest,
    /// The config's digest.
    pub config_digest: Digest,
    /// The digest of the `package.yaml` layer (xpkg only).
    pub package_layer_digest: Option<Digest>,
    /// The layout pushed: a CNCF wasm artifact or an xpkg.
    pub layout: Layout,
    /// The function's metadata as pushed.
    pub function: FunctionMetadata,
}

/// An artifact ready to upload: its blobs and manifest, all serialized.
#[derive(Debug, Clone)]
pub struct Artifact {
    /// The config JSON.
    pub config: Vec<u8>,
    /// The layers, in the manifest's order.
    pub layers: Vec<Vec<u8>>,
    /// The manifest JSON.
    pub manifest: Vec<u8>,
    /// The component layer's digest.
    pub wasm_digest: Digest,
    /// The `package.yaml` layer's digest (xpkg only).
    pub package_layer_digest: Option<Digest>,
    /// The layout.
    pub layout: Layout,
    /// The function's metadata.
    pub function: FunctionMetadata,
}

/// Builds the artifact for `wasm`: an xpkg when `metadata.package` is set,
/// else a CNCF wasm artifact. Refuses a component that isn't an xfn function
/// (no `run-function` export, or imports outside the world). An xpkg's
/// creation time comes from `SOURCE_DATE_EPOCH`; without it, it has none.
pub fn build_artifact(
    reference: &ImageRef,
    wasm: Vec<u8>,
    metadata: &PushMetadata,
) -> Result<Artifact> {
    if metadata.package.is_none() {
        return build_wasm_artifact(reference, wasm, metadata);
    }
    let package = package_only(metadata)?;
    let created = source_date_epoch(std::env::var(SOURCE_DATE_EPOCH).ok().as_deref())?;
    crate::xpkg::build(
        reference.text(),
        wasm,
        package,
        &metadata.annotations,
        created,
    )
}

/// The author's `crossplane.yaml` of `metadata`, which brings the name,
/// capabilities and description: refuses them set separately too.
fn package_only(metadata: &PushMetadata) -> Result<&PackageFile> {
    let Some(package) = &metadata.package else {
        return Err(Error::Metadata {
            reference: String::from("--package"),
            reason: String::from("a Crossplane package needs its crossplane.yaml"),
        });
    };
    if metadata.name.is_some()
        || !metadata.capabilities.is_empty()
        || metadata.description.is_some()
    {
        return Err(Error::Metadata {
            reference: package.source.clone(),
            reason: String::from(
                "the package's name, capabilities and description come from this file; \
                 don't set them separately",
            ),
        });
    }
    Ok(package)
}

/// `SOURCE_DATE_EPOCH`, if set: whole seconds since 1970.
fn source_date_epoch(value: Option<&str>) -> Result<Option<i64>> {
    match value.map(str::trim) {
        None | Some("") => Ok(None),
        Some(text) => text.parse().map(Some).map_err(|_| Error::Metadata {
            reference: SOURCE_DATE_EPOCH.to_owned(),
            reason: format!("`{text}` is not a number of seconds since 1970"),
        }),
    }
}

/// Reads `wasm` and refuses it unless xfn can run it as a function.
pub(crate) fn check_component(reference: &str, wasm: &[u8]) -> Result<ComponentInfo> {
    let info = ComponentInfo::read(wasm).map_err(|reason| Error::InvalidComponent {
        reference: reference.to_owned(),
        reason,
    })?;
    crate::check_runnable(&info, reference)?;
    if !info.exports_run_function() {
        return Err(Error::InvalidComponent {
            reference: reference.to_owned(),
            reason: format!(
                "it does not export `{RUN_FUNCTION_EXPORT}` (the world {FUNCTION_WORLD})"
            ),
        });
    }
    Ok(info)
}

/// The CNCF wasm artifact for `wasm`.
fn build_wasm_artifact(
    reference: &ImageRef,
    wasm: Vec<u8>,
    metadata: &PushMetadata,
) -> Result<Artifact> {
    let info = check_component(reference.text(), &wasm)?;
    let name = metadata
        .name
        .clone()
        .unwrap_or_else(|| reference.short_name().to_owned());
    let capabilities = if metadata.capabilities.is_empty() {
        vec![DEFAULT_CAPABILITY.to_owned()]
    } else {
        metadata.capabilities.clone()
    };
    let wasm_digest = Digest::of(&wasm);
    let created = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let imports: Vec<&str> = info.requirements().map(|i| i.name.as_str()).collect();
    let exports: Vec<&str> = info.exports.iter().map(|i| i.name.as_str()).collect();
    let config = serde_json::json!({
        "created": created,
        "architecture": "wasm",
        "os": "wasip2",
        "layerDigests": [wasm_digest.to_string()],
        "component": {
            "imports": imports,
            "exports": exports,
            "target": FUNCTION_WORLD,
        },
        "xfn": {
            "name": name,
            "capabilities": capabilities,
            "world": FUNCTION_WORLD,
        },
    });
    let config = serde_json::to_vec(&config).map_err(|e| Error::Registry {
        reference: reference.text().to_owned(),
        detail: format!("cannot serialize the config: {e}"),
    })?;

    let mut annotations = metadata.annotations.clone();
    annotations.insert("org.opencontainers.image.title".into(), name.clone());
    annotations.insert("org.opencontainers.image.created".into(), created);
    if let Some(description) = &metadata.description {
        annotations.insert(
            "org.opencontainers.image.description".into(),
            description.clone(),
        );
    }
    annotations.insert(ANNOTATION_NAME.into(), name.clone());
    annotations.insert(ANNOTATION_CAPABILITIES.into(), capabilities.join(","));
    annotations.insert(ANNOTATION_WORLD.into(), FUNCTION_WORLD.into());

    let manifest = OciImageManifest {
        schema_version: 2,
        media_type: Some(OCI_IMAGE_MEDIA_TYPE.to_owned()),
        config: OciDescriptor {
            media_type: WASM_CONFIG_V0.to_owned(),
            digest: Digest::of(&config).to_string(),
            size: config.len() as i64,
            ..Default::default()
        },
        layers: vec![OciDescriptor {
            media_type: WASM_LAYER.to_owned(),
            digest: wasm_digest.to_string(),
            size: wasm.len() as i64,
            annotations: Some(BTreeMap::from([(
                "org.opencontainers.image.title".to_owned(),
                format!("{name}.wasm"),
            )])),
            ..Default::default()
        }],
        annotations: Some(annotations),
        ..Default::default()
    };
    let manifest = serde_json::to_vec(&manifest).map_err(|e| Error::Registry {
        reference: reference.text().to_owned(),
        detail: format!("cannot serialize the manifest: {e}"),
    })?;
    Ok(Artifact {
        config,
        layers: vec![wasm],
        manifest,
        wasm_digest,
        package_layer_digest: None,
        layout: Layout::WasmArtifact,
        function: FunctionMetadata {
            name,
            capabilities,
            description: metadata.description.clone(),
            source: MetadataSource::Annotations,
        },
    })
}

/// Pushes the component `wasm` to `reference` (a tag): as a CNCF wasm
/// artifact, or as an xpkg when `metadata.package` is set. Blobs the
/// registry already has are not uploaded again.
pub async fn push(
    wasm: Vec<u8>,
    reference: &str,
    metadata: &PushMetadata,
    options: &RegistryOptions,
) -> Result<Pushed> {
    let reference = tag_reference(reference)?;
    let artifact = build_artifact(&reference, wasm, metadata)?;
    let session = Session::open(&reference, RegistryOperation::Push, options).await?;
    upload(&session, &reference, artifact).await
}

/// What [`push_runnable`] pushed.
#[derive(Debug, Clone)]
pub struct PushedRunnable {
    /// The reference pushed to.
    pub reference: String,
    /// The index's digest: pull `<repository>@<digest>` to pin it.
    pub digest: Digest,
    /// The `linux/<arch>` image Crossplane runs as a pod (pushed by digest).
    pub image: Pushed,
    /// The wasm xpkg xfn runs (pushed by digest).
    pub wasm: Pushed,
}

/// Pushes a runnable package of the component `wasm` to `reference` (a
/// tag): an index of a container image that runs it with `binary` and of
/// the wasm xpkg (see [`crate::runnable`]). `metadata.package` is required.
pub async fn push_runnable(
    wasm: Vec<u8>,
    reference: &str,
    metadata: &PushMetadata,
    binary: &EntrypointBinary,
    options: &RegistryOptions,
) -> Result<PushedRunnable> {
    let reference = tag_reference(reference)?;
    let package = package_only(metadata)?;
    let created = source_date_epoch(std::env::var(SOURCE_DATE_EPOCH).ok().as_deref())?;
    let built = crate::runnable::build(
        reference.text(),
        wasm,
        package,
        binary,
        &metadata.annotations,
        created,
    )?;
    let session = Session::open(&reference, RegistryOperation::Push, options).await?;
    let image_reference = reference.with_digest(&Digest::of(&built.image.manifest));
    let image = upload(&session, &image_reference, built.image).await?;
    let wasm_reference = reference.with_digest(&Digest::of(&built.wasm.manifest));
    let wasm = upload(&session, &wasm_reference, built.wasm).await?;
    let digest = Digest::of(&built.index);
    session
        .client
        .push_manifest_raw(
            reference.oci(),
            built.index,
            http::HeaderValue::from_static(OCI_IMAGE_INDEX_MEDIA_TYPE),
        )
        .await
        .map_err(|e| session.error(e))?;
    tracing::info!("pushed {reference} as {digest} (runnable package)");
    Ok(PushedRunnable {
        reference: reference.text().to_owned(),
        digest,
        image,
        wasm,
    })
}

/// `text` as a reference to push to: a tag, not a digest.
fn tag_reference(text: &str) -> Result<ImageRef> {
    let reference = ImageRef::parse(text)?;
    if reference.digest().is_some() {
        return Err(Error::InvalidReference {
            reference: reference.text().to_owned(),
            reason: String::from("push to a tag, not a digest"),
        });
    }
    Ok(reference)
}

/// Uploads an artifact's layers and config, then its manifest to
/// `reference` (a tag, or the manifest's digest).
async fn upload(session: &Session, reference: &ImageRef, artifact: Artifact) -> Result<Pushed> {
    let config_digest = Digest::of(&artifact.config);
    for bytes in artifact.layers.iter().chain([&artifact.config]) {
        let digest = Digest::of(bytes).to_string();
        let exists = session
            .client
            .blob_exists(reference.oci(), &digest)
            .await
            .map_err(|e| session.error(e))?;
        if exists {
            tracing::debug!("{reference}: blob {digest} is already in the registry");
            continue;
        }
        session
            .client
            .push_blob(reference.oci(), bytes.clone(), &digest)
            .await
            .map_err(|e| session.error(e))?;
    }
    let digest = Digest::of(&artifact.manifest);
    session
        .client
        .push_manifest_raw(
            reference.oci(),
            artifact.manifest,
            http::HeaderValue::from_static(OCI_IMAGE_MEDIA_TYPE),
        )
        .await
        .map_err(|e| session.error(e))?;
    tracing::info!("pushed {reference} as {digest} ({})", artifact.layout);
    Ok(Pushed {
        reference: reference.text().to_owned(),
        digest,
        wasm_digest: artifact.wasm_digest,
        config_digest,
        package_layer_digest: artifact.package_layer_digest,
        layout: artifact.layout,
        function: artifact.function,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_date_epoch_is_seconds_or_nothing() {
        assert_eq!(source_date_epoch(None).unwrap(), None);
        assert_eq!(source_date_epoch(Some(" ")).unwrap(), None);
        assert_eq!(
            source_date_epoch(Some("1700000000")).unwrap(),
            Some(1_700_000_000)
        );
        let err = source_date_epoch(Some("yesterday"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("SOURCE_DATE_EPOCH") && err.contains("`yesterday` is not a number"),
            "{err}"
        );
    }

    #[test]
    fn a_package_brings_its_own_name_and_capabilities() {
        let reference = ImageRef::parse("reg.example/fn:v1").unwrap();
        let metadata = PushMetadata {
            name: Some(String::from("other")),
            package: Some(PackageFile {
                source: String::from("crossplane.yaml"),
                bytes: b"apiVersion: meta.pkg.crossplane.io/v1\nkind: Function\n".to_vec(),
            }),
            ..PushMetadata::default()
        };
        let err = build_artifact(&reference, Vec::new(), &metadata)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("crossplane.yaml: invalid package metadata: the package's name"),
            "{err}"
        );
    }
}
