//! Pulling a container image ([`crate::resolve_package`]'s other half):
//! its config read and checked, its layers streamed into the cache (never
//! held in memory) and verified against their digests.

use std::path::PathBuf;

use futures_util::{Stream, StreamExt};

use crate::cache::{Cache, Finished};
use crate::digest::Digest;
use crate::error::{Error, Result};
use crate::image::{
    self, Compression, IMAGE_CONFIG_MEDIA_TYPES, ImageConfig, ImageLayer, Platform, PulledImage,
};
use crate::options::{MAX_METADATA_SIZE, RegistryOptions};
use crate::pull::{
    Picked, cached, fetch_blob, no_platform_entry, off_runtime, parse_digest, record_pull,
    stream_error,
};
use crate::reference::ImageRef;
use crate::transport::Session;

/// How many received chunks of a layer may wait for the disk.
const CHUNKS_IN_FLIGHT: usize = 16;

/// A container image's config and layers, checked before any layer is
/// fetched.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ImagePlan {
    /// What the config says to run.
    pub config: ImageConfig,
    /// `os/architecture`.
    pub platform: String,
    /// The layers to fetch, in order.
    pub layers: Vec<PlannedLayer>,
}

/// A layer of an [`ImagePlan`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlannedLayer {
    pub digest: Digest,
    pub media_type: String,
    pub size: u64,
    pub compression: Compression,
}

impl PlannedLayer {
    fn stored(self, path: PathBuf) -> ImageLayer {
        ImageLayer {
            digest: self.digest,
            media_type: self.media_type,
            size: self.size,
            compression: self.compression,
            path,
        }
    }
}

/// Checks what can be checked before a layer is fetched: that the image
/// runs on `host` (per the index entry followed and per its config), its
/// config, every layer's media type and size within
/// `options.max_image_layer_size`, and their sum within
/// `options.max_image_size`.
pub(crate) fn plan(
    reference: &ImageRef,
    picked: &Picked,
    config: &[u8],
    options: &RegistryOptions,
    host: &Platform,
) -> Result<ImagePlan> {
    let text = || reference.text().to_owned();
    // An index's only entry is followed whatever its platform, in case it
    // is wasm; as an image it must be this host's.
    if let (Some(index), Some(entry)) = (&picked.index, &picked.entry_platform)
        && !host.runs(&entry.os, &entry.architecture)
    {
        return Err(no_platform_entry(reference, index, host));
    }
    let manifest = &picked.manifest;
    let config_digest = manifest.config.digest.clone();
    let config_error = |reason: String| Error::ImageConfig {
        reference: text(),
        digest: config_digest.clone(),
        reason,
    };
    let config_type = manifest.config.media_type.as_str();
    if !IMAGE_CONFIG_MEDIA_TYPES.contains(&config_type) {
        return Err(config_error(format!(
            "its media type `{config_type}` is not an image config's (expected one of: {}); \
             the artifact is neither a wasm function nor a container image",
            IMAGE_CONFIG_MEDIA_TYPES.join(", ")
        )));
    }
    let parsed = ImageConfig::parse(config).map_err(config_error)?;
    // An image config must state its platform; if one does not, the index
    // entry that named it may.
    let (os, architecture) = match (&picked.entry_platform, parsed.os.is_empty()) {
        (Some(entry), true) if parsed.architecture.is_empty() => {
            (entry.os.clone(), entry.architecture.clone())
        }
        _ => (parsed.os.clone(), parsed.architecture.clone()),
    };
    if os.is_empty() || architecture.is_empty() {
        return Err(config_error(String::from(
            "it states no `os` or no `architecture`, so the platform the image is built for \
             is unknown",
        )));
    }
    let platform = format!("{os}/{architecture}");
    if !host.runs(&os, &architecture) {
        return Err(Error::WrongPlatform {
            reference: text(),
            wanted: host.to_string(),
            found: platform,
        });
    }

    if manifest.layers.is_empty() {
        return Err(Error::Layout {
            reference: text(),
            reason: String::from("the image has no layers, so there is nothing to run"),
        });
    }
    let mut layers = Vec::with_capacity(manifest.layers.len());
    let mut total = 0u64;
    for layer in &manifest.layers {
        let digest = parse_digest(reference, &layer.digest)?;
        let compression = image::layer_compression(&layer.media_type).map_err(|reason| {
            Error::LayerMediaType {
                reference: text(),
                digest: layer.digest.clone(),
                media_type: layer.media_type.clone(),
                reason,
            }
        })?;
        let size = u64::try_from(layer.size).map_err(|_| Error::Layout {
            reference: text(),
            reason: format!("layer {} declares a negative size", layer.digest),
        })?;
        if size > options.max_image_layer_size {
            return Err(Error::ImageLayerTooLarge {
                reference: text(),
                digest: layer.digest.clone(),
                size,
                limit: options.max_image_layer_size,
            });
        }
        total = total.saturating_add(size);
        layers.push(PlannedLayer {
            digest,
            media_type: layer.media_type.clone(),
            size,
            compression,
        });
    }
    if total > options.max_image_size {
        return Err(Error::ImageTooLarge {
            reference: text(),
            layers: layers.len(),
            size: total,
            limit: options.max_image_size,
        });
    }
    Ok(ImagePlan {
        config: parsed,
        platform,
        layers,
    })
}

/// The image `picked` from the cache alone (each layer's file checked
/// against its size and digest), or `None` if a part is missing (or was
/// corrupt, and has been removed). Blocking: run it off the runtime.
pub(crate) fn from_cache(
    reference: &ImageRef,
    cache: &Cache,
    options: &RegistryOptions,
    picked: Picked,
    host: &Platform,
) -> Result<Option<PulledImage>> {
    let Some(config) = cached(cache.read_blob(
        &parse_digest(reference, &picked.manifest.config.digest)?,
        MAX_METADATA_SIZE,
    )) else {
        return Ok(None);
    };
    let plan = plan(reference, &picked, &config, options, host)?;
    let mut layers = Vec::with_capacity(plan.layers.len());
    for layer in plan.layers {
        match cached(cache.verify_blob_file(&layer.digest, layer.size)) {
            Some(path) => layers.push(layer.stored(path)),
            None => return Ok(None),
        }
    }
    tracing::debug!("{reference}: using the cached image {}", picked.digest);
    Ok(Some(PulledImage {
        reference: reference.text().to_owned(),
        digest: picked.digest,
        index_digest: picked.index_digest,
        platform: plan.platform,
        config: plan.config,
        layers,
        from_cache: true,
    }))
}

/// Pulls the config and layers of the image `picked` (layers already in
/// the cache are checked, not downloaded again), then records the
/// manifests, the config and the tag.
pub(crate) async fn from_registry(
    session: &Session,
    reference: &ImageRef,
    cache: &Cache,
    options: &RegistryOptions,
    picked: Picked,
    host: &Platform,
) -> Result<PulledImage> {
    let config = fetch_blob(
        session,
        cache,
        &picked.manifest.config,
        MAX_METADATA_SIZE,
        "config",
    )
    .await?;
    let (plan, picked, config) = {
        let (owned, options, host) = (reference.clone(), options.clone(), host.clone());
        off_runtime(reference, move || {
            let plan = plan(&owned, &picked, &config, &options, &host)?;
            Ok((plan, picked, config))
        })
        .await?
    };
    let mut layers = Vec::with_capacity(plan.layers.len());
    for layer in plan.layers {
        let path = layer_file(session, reference, cache, &layer).await?;
        layers.push(layer.stored(path));
    }
    let pulled = PulledImage {
        reference: reference.text().to_owned(),
        digest: picked.digest.clone(),
        index_digest: picked.index_digest.clone(),
        platform: plan.platform,
        config: plan.config,
        layers,
        from_cache: false,
    };
    // Everything is verified: store the config and the manifests, then the
    // tag record.
    let (owned, cache) = (reference.clone(), cache.clone());
    off_runtime(reference, move || {
        let mut blobs = vec![(Digest::of(&config), config)];
        blobs.extend(picked.manifests);
        record_pull(&owned, &cache, &blobs, &picked.top);
        Ok(())
    })
    .await?;
    Ok(pulled)
}

/// The verified file of `layer` in the cache: the one there if it is
/// intact, else downloaded into it.
async fn layer_file(
    session: &Session,
    reference: &ImageRef,
    cache: &Cache,
    layer: &PlannedLayer,
) -> Result<PathBuf> {
    let found = {
        let (cache, digest, size) = (cache.clone(), layer.digest.clone(), layer.size);
        off_runtime(reference, move || {
            Ok(cached(cache.verify_blob_file(&digest, size)))
        })
        .await?
    };
    if let Some(path) = found {
        tracing::debug!("{reference}: layer {} is cached", layer.digest);
        return Ok(path);
    }
    let response = session
        .get(&format!("blobs/{}", layer.digest), None)
        .await?;
    if let Some(length) = response.content_length()
        && length != layer.size
    {
        return Err(size_mismatch(reference, &layer.digest, layer.size, length));
    }
    let body = futures_util::stream::unfold(response, |mut response| async move {
        match response.chunk().await {
            Ok(Some(chunk)) => Some((Ok(chunk), response)),
            Ok(None) => None,
            Err(e) => Some((Err(e), response)),
        }
    })
    .map(|chunk| chunk.map_err(|e| stream_error(reference, "image layer", &layer.digest, &e)));
    tracing::info!(
        "{reference}: downloading layer {} ({} bytes)",
        layer.digest,
        layer.size
    );
    stream_into_cache(reference, cache, &layer.digest, layer.size, body).await
}

/// Streams `body` into the cache as the blob `expected` of `declared`
/// bytes: written to a temporary file and hashed on a blocking thread as it
/// arrives, refused as soon as it passes `declared` bytes, and named
/// `blobs/sha256/<hex>` only if it hashes to `expected`. Whatever fails,
/// no temporary file is left behind (if this future is dropped, as by the
/// pull's deadline, the writer deletes it as soon as it sees the body end).
pub(crate) async fn stream_into_cache<B>(
    reference: &ImageRef,
    cache: &Cache,
    expected: &Digest,
    declared: u64,
    body: impl Stream<Item = Result<B>>,
) -> Result<PathBuf>
where
    B: AsRef<[u8]> + Send + 'static,
{
    let (sender, mut receiver) = tokio::sync::mpsc::channel::<B>(CHUNKS_IN_FLIGHT);
    let writer_cache = cache.clone();
    let writing = tokio::task::spawn_blocking(move || {
        let mut writer = writer_cache.blob_writer()?;
        while let Some(chunk) = receiver.blocking_recv() {
            writer.write(chunk.as_ref())?;
        }
        Ok::<_, Error>(writer)
    });
    let received: Result<u64> = async {
        let mut body = std::pin::pin!(body);
        let mut received = 0u64;
        while let Some(chunk) = body.next().await {
            let chunk = chunk?;
            received = received.saturating_add(chunk.as_ref().len() as u64);
            if received > declared {
                return Err(Error::DigestMismatch {
                    reference: reference.text().to_owned(),
                    what: format!("image layer {expected}"),
                    expected: format!("{declared} bytes"),
                    actual: format!("more than {declared} bytes"),
                });
            }
            if sender.send(chunk).await.is_err() {
                // The writer stopped: its error is the one to report.
                break;
            }
        }
        Ok(received)
    }
    .await;
    drop(sender);
    // Wait for the writer even when the body failed, so that its temporary
    // file is gone before this returns.
    let written = writing.await.unwrap_or_else(|e| {
        Err(Error::Layout {
            reference: reference.text().to_owned(),
            reason: format!("writing layer {expected} failed: {e}"),
        })
    });
    let received = received?;
    let writer = written.map_err(|e| cache_error(reference, expected, e))?;
    if writer.written() != declared || received != declared {
        return Err(size_mismatch(reference, expected, declared, received));
    }
    let finished = {
        let (expected, reference_owned) = (expected.clone(), reference.clone());
        off_runtime(reference, move || {
            writer
                .finish(&expected)
                .map_err(|e| cache_error(&reference_owned, &expected, e))
        })
        .await?
    };
    match finished {
        Finished::Stored(path) => Ok(path),
        Finished::Mismatch(actual) => Err(Error::DigestMismatch {
            reference: reference.text().to_owned(),
            what: format!("image layer {expected}"),
            expected: expected.to_string(),
            actual: actual.to_string(),
        }),
    }
}

/// A layer that is not the size its manifest declares.
fn size_mismatch(reference: &ImageRef, digest: &Digest, declared: u64, actual: u64) -> Error {
    Error::DigestMismatch {
        reference: reference.text().to_owned(),
        what: format!("image layer {digest}"),
        expected: format!("{declared} bytes"),
        actual: format!("{actual} bytes"),
    }
}

/// A cache failure while storing layer `digest`, which an image can't do
/// without.
fn cache_error(reference: &ImageRef, digest: &Digest, err: Error) -> Error {
    match err {
        Error::Cache { path, error } => Error::LayerCache {
            reference: reference.text().to_owned(),
            digest: digest.to_string(),
            path,
            error,
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oci_client::manifest::{OciDescriptor, OciImageIndex, OciImageManifest};

    const OCI_CONFIG: &str = "application/vnd.oci.image.config.v1+json";
    const GZIP: &str = "application/vnd.oci.image.layer.v1.tar+gzip";

    fn reference() -> ImageRef {
        ImageRef::parse("reg.example/fn:v1").unwrap()
    }

    fn descriptor(media_type: &str, content: &[u8]) -> OciDescriptor {
        OciDescriptor {
            media_type: media_type.to_owned(),
            digest: Digest::of(content).to_string(),
            size: content.len() as i64,
            ..Default::default()
        }
    }

    fn picked(layers: Vec<OciDescriptor>) -> Picked {
        let manifest = OciImageManifest {
            config: descriptor(OCI_CONFIG, b"{}"),
            layers,
            ..Default::default()
        };
        Picked {
            top: Digest::of(b"manifest"),
            digest: Digest::of(b"manifest"),
            index_digest: None,
            index: None,
            entry_platform: None,
            manifest,
            manifests: Vec::new(),
        }
    }

    fn config(os: &str, arch: &str) -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({
            "os": os, "architecture": arch,
            "config": {"Entrypoint": ["/function"], "User": "65532"}
        }))
        .unwrap()
    }

    fn amd64() -> Platform {
        Platform::linux("amd64")
    }

    fn plan_of(picked: &Picked, config: &[u8], options: &RegistryOptions) -> Result<ImagePlan> {
        plan(&reference(), picked, config, options, &amd64())
    }

    #[test]
    fn a_plan_lists_every_layer_in_order() {
        let p = picked(vec![
            descriptor(GZIP, b"base"),
            descriptor("application/vnd.docker.image.rootfs.diff.tar", b"app"),
            descriptor("application/vnd.oci.image.layer.v1.tar+zstd", b"more"),
        ]);
        let plan = plan_of(&p, &config("linux", "amd64"), &RegistryOptions::default()).unwrap();
        assert_eq!(plan.platform, "linux/amd64");
        assert_eq!(plan.config.entrypoint, ["/function"]);
        assert_eq!(plan.config.user, "65532");
        let summary: Vec<_> = plan
            .layers
            .iter()
            .map(|l| (l.digest.clone(), l.size, l.compression))
            .collect();
        assert_eq!(
            summary,
            [
                (Digest::of(b"base"), 4, Compression::Gzip),
                (Digest::of(b"app"), 3, Compression::None),
                (Digest::of(b"more"), 4, Compression::Zstd),
            ]
        );
    }

    #[test]
    fn layer_and_image_sizes_are_bounded_before_downloading() {
        let p = picked(vec![
            descriptor(GZIP, &[1; 600]),
            descriptor(GZIP, &[2; 500]),
        ]);
        let config = config("linux", "amd64");
        let limits = |layer: u64, image: u64| RegistryOptions {
            max_image_layer_size: layer,
            max_image_size: image,
            ..RegistryOptions::default()
        };
        assert!(plan_of(&p, &config, &limits(600, 1100)).is_ok());

        let err = plan_of(&p, &config, &limits(599, 1 << 20)).unwrap_err();
        assert!(
            matches!(&err, Error::ImageLayerTooLarge { size: 600, limit: 599, digest, .. }
                if *digest == Digest::of(&[1; 600]).to_string()),
            "{err:?}"
        );
        assert!(err.to_string().contains("--max-image-layer-size"), "{err}");

        let err = plan_of(&p, &config, &limits(600, 1099)).unwrap_err();
        assert!(
            matches!(
                &err,
                Error::ImageTooLarge {
                    layers: 2,
                    size: 1100,
                    limit: 1099,
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(
            err.to_string().starts_with("reg.example/fn:v1: ")
                && err.to_string().contains("--max-image-size"),
            "{err}"
        );

        let mut negative = p;
        negative.manifest.layers[1].size = -1;
        let err = plan_of(&negative, &config, &limits(600, 1100)).unwrap_err();
        assert!(err.to_string().contains("negative size"), "{err}");
    }

    #[test]
    fn layers_xfn_cannot_unpack_are_refused_by_media_type() {
        let config = config("linux", "amd64");
        for media_type in [
            "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip",
            "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
            "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
        ] {
            let p = picked(vec![
                descriptor(GZIP, b"base"),
                descriptor(media_type, b"odd"),
            ]);
            let err = plan_of(&p, &config, &RegistryOptions::default()).unwrap_err();
            let text = err.to_string();
            assert!(
                matches!(&err, Error::LayerMediaType { media_type: m, .. } if m == media_type)
                    && text.starts_with("reg.example/fn:v1: layer ")
                    && text.contains(media_type),
                "{text}"
            );
        }
        let err = plan_of(&picked(vec![]), &config, &RegistryOptions::default()).unwrap_err();
        assert!(
            err.to_string().contains(
                "reg.example/fn:v1: unsupported artifact layout: the image has no layers"
            ),
            "{err}"
        );
    }

    #[test]
    fn the_config_must_be_an_image_config_for_this_platform() {
        let p = picked(vec![descriptor(GZIP, b"base")]);
        let options = RegistryOptions::default();
        let err = plan_of(&p, &config("linux", "arm64"), &options).unwrap_err();
        assert_eq!(
            err.to_string(),
            "reg.example/fn:v1: the image is built for linux/arm64, not linux/amd64 \
             (this host's platform); push the function built for linux/amd64, or an image \
             index with a linux/amd64 entry"
        );
        let err = plan_of(&p, &config("windows", "amd64"), &options).unwrap_err();
        assert!(matches!(err, Error::WrongPlatform { .. }), "{err}");

        let err = plan_of(&p, b"{\"config\": {\"Cmd\": \"run\"}}", &options).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with(&format!(
                "reg.example/fn:v1: invalid image config {}: the image config is not valid: \
                 invalid type",
                Digest::of(b"{}")
            )),
            "{text}"
        );
        let err = plan_of(&p, b"{}", &options).unwrap_err();
        assert!(err.to_string().contains("states no `os`"), "{err}");

        let mut helm = picked(vec![descriptor(GZIP, b"base")]);
        helm.manifest.config.media_type = "application/vnd.cncf.helm.config.v1+json".into();
        let err = plan_of(&helm, &config("linux", "amd64"), &options).unwrap_err();
        assert!(
            matches!(err, Error::ImageConfig { ref reason, .. }
                if reason.contains("application/vnd.cncf.helm.config.v1+json")),
            "{err}"
        );
    }

    #[test]
    fn an_index_entry_names_the_platform_the_config_leaves_out() {
        let mut p = picked(vec![descriptor(GZIP, b"base")]);
        p.index = Some(OciImageIndex {
            schema_version: 2,
            media_type: None,
            manifests: Vec::new(),
            artifact_type: None,
            annotations: None,
        });
        p.entry_platform = Some(amd64());
        let plan = plan_of(&p, b"{}", &RegistryOptions::default()).unwrap();
        assert_eq!(plan.platform, "linux/amd64");

        // An index's only entry, followed whatever its platform in case it
        // was wasm, must still be this host's.
        p.entry_platform = Some(Platform::linux("s390x"));
        let err = plan_of(&p, &config("linux", "amd64"), &RegistryOptions::default()).unwrap_err();
        assert!(matches!(err, Error::NoPlatformEntry { .. }), "{err}");
    }

    /// A body of `chunks`, failing after them if `fail` is set.
    fn body(chunks: &[&[u8]], fail: bool) -> impl Stream<Item = Result<Vec<u8>>> + use<> {
        let mut items: Vec<Result<Vec<u8>>> = chunks.iter().map(|c| Ok(c.to_vec())).collect();
        if fail {
            items.push(Err(Error::Unavailable {
                reference: String::from("reg.example/fn:v1"),
                registry: String::from("reg.example"),
                detail: String::from("connection reset"),
            }));
        }
        futures_util::stream::iter(items)
    }

    fn leftovers(cache: &Cache) -> usize {
        std::fs::read_dir(cache.root().join("tmp")).map_or(0, |d| d.count())
    }

    #[tokio::test]
    async fn layers_stream_into_the_cache_once_verified() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let content: Vec<u8> = (0..300_000u32).map(|i| i as u8).collect();
        let d = Digest::of(&content);
        let chunks: Vec<&[u8]> = content.chunks(16 << 10).collect();
        let path = stream_into_cache(
            &reference(),
            &cache,
            &d,
            content.len() as u64,
            body(&chunks, false),
        )
        .await
        .unwrap();
        assert_eq!(path, cache.blob_path(&d));
        assert_eq!(std::fs::read(&path).unwrap(), content);
        assert_eq!(leftovers(&cache), 0);
    }

    #[tokio::test]
    async fn a_layer_that_fails_verification_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let d = Digest::of(b"expected content");
        let reference = reference();
        let cases: [(&[&[u8]], bool, &str); 4] = [
            // The declared size, other bytes.
            (
                &[b"unexpected", b" stuff"],
                false,
                "digest mismatch for image layer",
            ),
            // Longer than declared: refused once past it.
            (&[b"expected content", b"!"], false, "more than 16 bytes"),
            // Shorter.
            (&[b"expected"], false, "expected 16 bytes, got 8 bytes"),
            // The connection breaks.
            (&[b"expected"], true, "connection reset"),
        ];
        for (chunks, fail, message) in cases {
            let err = stream_into_cache(&reference, &cache, &d, 16, body(chunks, fail))
                .await
                .unwrap_err();
            let text = err.to_string();
            assert!(
                text.starts_with("reg.example/fn:v1: ") && text.contains(message),
                "{text}"
            );
            assert!(!cache.blob_path(&d).exists());
            assert_eq!(leftovers(&cache), 0, "after: {text}");
        }
    }

    #[tokio::test]
    async fn a_cache_that_cannot_be_written_is_an_error_naming_the_layer() {
        let dir = tempfile::tempdir().unwrap();
        // The cache root is a file: nothing can be created under it.
        let root = dir.path().join("file");
        std::fs::write(&root, b"").unwrap();
        let cache = Cache::new(&root);
        let d = Digest::of(b"layer");
        let err = stream_into_cache(&reference(), &cache, &d, 5, body(&[b"layer"], false))
            .await
            .unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(err, Error::LayerCache { .. })
                && text.starts_with(&format!("reg.example/fn:v1: cannot store layer {d}"))
                && text.contains("--cache-dir"),
            "{text}"
        );
    }
}
