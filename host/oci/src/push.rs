//! Publishing a function component as a CNCF wasm artifact: config
//! `application/vnd.wasm.config.v0+json` (with the component's imports and
//! exports, its WIT world and xfn's function metadata) and one
//! `application/wasm` layer.

use std::collections::BTreeMap;

use oci_client::RegistryOperation;
use oci_client::manifest::{OCI_IMAGE_MEDIA_TYPE, OciDescriptor, OciImageManifest};

use crate::component::{ComponentInfo, FUNCTION_WORLD, RUN_FUNCTION_EXPORT};
use crate::digest::Digest;
use crate::error::{Error, Result};
use crate::layout::{WASM_CONFIG_V0, WASM_LAYER};
use crate::options::RegistryOptions;
use crate::package::{
    ANNOTATION_CAPABILITIES, ANNOTATION_NAME, ANNOTATION_WORLD, DEFAULT_CAPABILITY,
};
use crate::reference::ImageRef;
use crate::transport::Session;

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
}

/// An artifact ready to upload: its blobs and manifest, all serialized.
#[derive(Debug, Clone)]
pub struct Artifact {
    /// The config JSON.
    pub config: Vec<u8>,
    /// The component.
    pub wasm: Vec<u8>,
    /// The manifest JSON.
    pub manifest: Vec<u8>,
}

/// Builds the CNCF artifact for `wasm`, refusing a component that isn't an
/// xfn function (no `run-function` export, or imports outside the world).
pub fn build_artifact(
    reference: &ImageRef,
    wasm: Vec<u8>,
    metadata: &PushMetadata,
) -> Result<Artifact> {
    let text = reference.text().to_owned();
    let info = ComponentInfo::read(&wasm).map_err(|reason| Error::InvalidComponent {
        reference: text.clone(),
        reason,
    })?;
    info.check_runnable(&text)?;
    if !info.exports_run_function() {
        return Err(Error::InvalidComponent {
            reference: text,
            reason: format!(
                "it does not export `{RUN_FUNCTION_EXPORT}` (the world {FUNCTION_WORLD})"
            ),
        });
    }
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
        wasm,
        manifest,
    })
}

/// Pushes the component `wasm` to `reference` (a tag) as a CNCF wasm
/// artifact. Blobs the registry already has are not uploaded again.
pub async fn push(
    wasm: Vec<u8>,
    reference: &str,
    metadata: &PushMetadata,
    options: &RegistryOptions,
) -> Result<Pushed> {
    let reference = ImageRef::parse(reference)?;
    if reference.digest().is_some() {
        return Err(Error::InvalidReference {
            reference: reference.text().to_owned(),
            reason: String::from("push to a tag, not a digest"),
        });
    }
    let artifact = build_artifact(&reference, wasm, metadata)?;
    let session = Session::open(&reference, RegistryOperation::Push, options).await?;
    let wasm_digest = Digest::of(&artifact.wasm);
    let config_digest = Digest::of(&artifact.config);
    for (digest, bytes) in [
        (&wasm_digest, &artifact.wasm),
        (&config_digest, &artifact.config),
    ] {
        let exists = session
            .client
            .blob_exists(reference.oci(), &digest.to_string())
            .await
            .map_err(|e| session.error(e))?;
        if exists {
            tracing::debug!("{reference}: blob {digest} is already in the registry");
            continue;
        }
        session
            .client
            .push_blob(reference.oci(), bytes.clone(), &digest.to_string())
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
    tracing::info!("pushed {reference} as {digest}");
    Ok(Pushed {
        reference: reference.text().to_owned(),
        digest,
        wasm_digest,
        config_digest,
    })
}
