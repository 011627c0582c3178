//! Resolving a reference to a verified wasm component: from the cache, or
//! from the registry into the cache, per the pull policy.

use std::path::PathBuf;

use oci_client::RegistryOperation;
use oci_client::manifest::{OciDescriptor, OciImageIndex, OciImageManifest, OciManifest};

use crate::base_layer::BaseLayer;
use crate::body::BodyError;
use crate::cache::Cache;
use crate::digest::Digest;
use crate::error::{Error, Result};
use crate::layout::{self, Layout, LayoutError, MANIFEST_MEDIA_TYPES};
use crate::options::{MAX_METADATA_SIZE, PullPolicy, RegistryOptions};
use crate::package::{self, FunctionMetadata};
use crate::reference::ImageRef;
use crate::transport::Session;
use crate::xpkg;
use xfn_component::ComponentInfo;

/// A function component resolved from a registry or the cache, verified
/// and checked against the host's WIT world, ready to compile.
#[derive(Debug, Clone)]
pub struct PulledFunction {
    /// The reference as given.
    pub reference: String,
    /// The digest of the image manifest that was resolved (for an index,
    /// the manifest of its wasm entry). Pin with `<repository>@<digest>`.
    pub digest: Digest,
    /// The digest of the index the reference pointed to, if it was one.
    pub index_digest: Option<Digest>,
    /// The component's bytes.
    pub wasm: Vec<u8>,
    /// The component's digest.
    pub wasm_digest: Digest,
    /// Where the component lives in the cache.
    pub wasm_path: PathBuf,
    /// The artifact's layout.
    pub layout: Layout,
    /// The function's name and capabilities.
    pub metadata: FunctionMetadata,
    /// The digest of the xpkg layer `package.yaml` was read from, if any.
    pub package_layer: Option<Digest>,
    /// For an xpkg, why Crossplane's package manager would refuse or
    /// misread it (see [`crate::xpkg::check`]); empty if it would install
    /// it. xfn itself runs the component either way.
    pub package_problems: Vec<String>,
    /// What the component imports and exports.
    pub component: ComponentInfo,
    /// Whether everything came from the cache, without the network.
    pub from_cache: bool,
}

/// Resolves `reference` to a verified function component, following
/// `policy`:
///
/// * `IfNotPresent`: the cache when it holds the artifact (a tag as last
///   pulled), else the registry;
/// * `Always`: the registry resolves the tag (cached blobs are reused);
/// * `Never`: the cache alone.
///
/// Every blob is checked against its digest, every layer against
/// `options.max_layer_size`, and the component's imports against
/// [`crate::ALLOWED_IMPORTS`], before anything is returned. A tag's
/// resolved digest is logged. What the registry returned is cached only
/// once all of it is verified.
pub async fn resolve(
    reference: &str,
    policy: PullPolicy,
    options: &RegistryOptions,
) -> Result<PulledFunction> {
    let reference = ImageRef::parse(reference)?;
    let cache = Cache::new(&options.cache_dir);
    match policy {
        PullPolicy::Never => from_cache_off_runtime(&reference, &cache, options)
            .await?
            .ok_or_else(|| Error::NotCached {
                reference: reference.text().to_owned(),
                cache: cache.root().to_owned(),
            }),
        PullPolicy::IfNotPresent => {
            match from_cache_off_runtime(&reference, &cache, options).await? {
                Some(found) => Ok(found),
                None => from_registry_in_time(&reference, &cache, options).await,
            }
        }
        PullPolicy::Always => from_registry_in_time(&reference, &cache, options).await,
    }
}

/// Runs `work` (reading and checking blobs: file reads, hashing,
/// decompressing, parsing) on a blocking thread, so that a large or
/// hostile package never stalls the async runtime that serves calls,
/// probes and leases.
async fn off_runtime<T: Send + 'static>(
    reference: &ImageRef,
    work: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        Err(Error::Layout {
            reference: reference.text().to_owned(),
            reason: format!("checking the package failed: {e}"),
        })
    })
}

/// [`from_cache`] on a blocking thread.
async fn from_cache_off_runtime(
    reference: &ImageRef,
    cache: &Cache,
    options: &RegistryOptions,
) -> Result<Option<PulledFunction>> {
    let (owned, cache, options) = (reference.clone(), cache.clone(), options.clone());
    off_runtime(reference, move || from_cache(&owned, &cache, &options)).await
}

/// Pulls from registries that succeeded and that failed, in this process.
static PULLS: [std::sync::atomic::AtomicU64; 2] = [
    std::sync::atomic::AtomicU64::new(0),
    std::sync::atomic::AtomicU64::new(0),
];

/// How many pulls from a registry (not from the cache) this process has
/// made so far: `(succeeded, failed)`. Metrics read it.
pub fn registry_pulls() -> (u64, u64) {
    use std::sync::atomic::Ordering::Relaxed;
    (PULLS[0].load(Relaxed), PULLS[1].load(Relaxed))
}

/// [`from_registry`] within `options.pull_timeout`, however steadily (or
/// slowly) the registry sends. Nothing is cached unless it all finished.
async fn from_registry_in_time(
    reference: &ImageRef,
    cache: &Cache,
    options: &RegistryOptions,
) -> Result<PulledFunction> {
    let pulled = pull_in_time(reference, cache, options).await;
    PULLS[usize::from(pulled.is_err())].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    pulled
}

async fn pull_in_time(
    reference: &ImageRef,
    cache: &Cache,
    options: &RegistryOptions,
) -> Result<PulledFunction> {
    tokio::time::timeout(
        options.pull_timeout,
        from_registry(reference, cache, options),
    )
    .await
    .unwrap_or_else(|_| {
        Err(Error::Deadline {
            reference: reference.text().to_owned(),
            registry: reference.registry().to_owned(),
            deadline: options.pull_timeout,
        })
    })
}

/// A cache lookup; a cache that cannot be read is a miss, with a warning,
/// as the compile cache treats one.
fn cached<T>(lookup: Result<Option<T>>) -> Option<T> {
    lookup.unwrap_or_else(|e| {
        tracing::warn!("{e}; not using the cache");
        None
    })
}

/// Stores in the cache; a cache that cannot be written is warned about
/// and the pull goes on, as a local render does with the compile cache.
fn store<T>(write: Result<T>) {
    if let Err(e) = write {
        tracing::warn!("{e}; continuing without caching it");
    }
}

/// The blobs of one artifact, verified, before the checks that turn them
/// into a [`PulledFunction`].
struct Fetched {
    digest: Digest,
    index_digest: Option<Digest>,
    index: Option<OciImageIndex>,
    manifest: OciImageManifest,
    config: Vec<u8>,
    wasm: Vec<u8>,
    base: Option<Vec<u8>>,
    layout: Layout,
}

/// The artifact from the cache alone, or `None` if any part is missing
/// (or was corrupt, and has been removed).
fn from_cache(
    reference: &ImageRef,
    cache: &Cache,
    options: &RegistryOptions,
) -> Result<Option<PulledFunction>> {
    let top = match reference.digest() {
        Some(d) => d,
        None => match cached(cache.read_ref(reference)) {
            Some(d) => d,
            None => return Ok(None),
        },
    };
    let Some(bytes) = cached(cache.read_blob(&top, MAX_METADATA_SIZE)) else {
        return Ok(None);
    };
    let (digest, index_digest, index, manifest) = match parse_manifest(reference, &bytes)? {
        OciManifest::Image(m) => (top, None, None, m),
        OciManifest::ImageIndex(index) => {
            let entry =
                layout::select_index_entry(&index).map_err(|e| layout_error(reference, e))?;
            let child = parse_digest(reference, &entry.digest)?;
            let Some(bytes) = cached(cache.read_blob(&child, MAX_METADATA_SIZE)) else {
                return Ok(None);
            };
            match parse_manifest(reference, &bytes)? {
                OciManifest::Image(m) => (child, Some(top), Some(index), m),
                OciManifest::ImageIndex(_) => return Err(nested_index(reference)),
            }
        }
    };
    let Some(config) = cached(cache.read_blob(
        &parse_digest(reference, &manifest.config.digest)?,
        MAX_METADATA_SIZE,
    )) else {
        return Ok(None);
    };
    let selected = layout::select_layers(&manifest, json(&config).as_ref())
        .map_err(|e| layout_error(reference, e))?;
    check_size(reference, &selected.wasm, options.max_layer_size)?;
    let Some(wasm) = cached(cache.read_blob(
        &parse_digest(reference, &selected.wasm.digest)?,
        options.max_layer_size,
    )) else {
        return Ok(None);
    };
    let base = match &selected.base {
        Some(layer) => match cached(cache.read_blob(
            &parse_digest(reference, &layer.digest)?,
            options.max_layer_size,
        )) {
            Some(bytes) => Some(bytes),
            None => return Ok(None),
        },
        None => None,
    };
    let fetched = Fetched {
        digest,
        index_digest,
        index,
        manifest,
        config,
        wasm,
        base,
        layout: selected.layout,
    };
    tracing::debug!("{reference}: using the cached {}", fetched.digest);
    finish(reference, cache, fetched, true).map(Some)
}

/// Pulls the artifact from the registry, verifies and checks it, and only
/// then stores it in the cache.
async fn from_registry(
    reference: &ImageRef,
    cache: &Cache,
    options: &RegistryOptions,
) -> Result<PulledFunction> {
    let session = Session::open(reference, RegistryOperation::Pull, options).await?;
    let (top_bytes, top) = pull_manifest(&session, reference).await?;
    if reference.digest().is_none() {
        tracing::info!("resolved {reference} to {top}");
    }
    let mut manifests = vec![(top.clone(), top_bytes.clone())];
    let (digest, index_digest, index, manifest) = match parse_manifest(reference, &top_bytes)? {
        OciManifest::Image(m) => (top.clone(), None, None, m),
        OciManifest::ImageIndex(index) => {
            let entry =
                layout::select_index_entry(&index).map_err(|e| layout_error(reference, e))?;
            let child = parse_digest(reference, &entry.digest)?;
            let (bytes, child) = pull_manifest(&session, &reference.with_digest(&child)).await?;
            tracing::info!("{reference}: using index entry {child}");
            let parsed = parse_manifest(reference, &bytes)?;
            manifests.push((child.clone(), bytes));
            match parsed {
                OciManifest::Image(m) => (child, Some(top.clone()), Some(index), m),
                OciManifest::ImageIndex(_) => return Err(nested_index(reference)),
            }
        }
    };

    let config = fetch_blob(
        &session,
        cache,
        &manifest.config,
        MAX_METADATA_SIZE,
        "config",
    )
    .await?;
    let config_json = json(&config);
    precheck_declared_imports(reference, config_json.as_ref())?;
    let selected = layout::select_layers(&manifest, config_json.as_ref())
        .map_err(|e| layout_error(reference, e))?;
    let wasm = fetch_blob(
        &session,
        cache,
        &selected.wasm,
        options.max_layer_size,
        "wasm layer",
    )
    .await?;
    let base = match &selected.base {
        Some(layer) => Some(
            fetch_blob(
                &session,
                cache,
                layer,
                options.max_layer_size,
                "package layer",
            )
            .await?,
        ),
        None => None,
    };
    let fetched = Fetched {
        digest,
        index_digest,
        index,
        manifest,
        config,
        wasm,
        base,
        layout: selected.layout,
    };
    let pulled = {
        let (owned, cache) = (reference.clone(), cache.clone());
        off_runtime(reference, move || finish(&owned, &cache, fetched, false)).await?
    };

    // Everything is verified: store the manifests, then the tag record.
    for (digest, bytes) in &manifests {
        store(cache.write_blob(digest, bytes));
    }
    if reference.digest().is_none() {
        store(cache.write_ref(reference, &top));
    }
    Ok(pulled)
}

/// Checks the component and reads its metadata; stores the config and
/// layers of a fresh pull.
fn finish(
    reference: &ImageRef,
    cache: &Cache,
    fetched: Fetched,
    from_cache: bool,
) -> Result<PulledFunction> {
    let text = reference.text().to_owned();
    let component =
        ComponentInfo::read(&fetched.wasm).map_err(|reason| Error::InvalidComponent {
            reference: text.clone(),
            reason,
        })?;
    crate::check_runnable(&component, &text)?;
    let config_json = json(&fetched.config);
    // Read once, however many times the manifest lists it.
    let base = fetched.base.as_deref().map(BaseLayer::read);
    let metadata = match &base {
        Some(read) => read
            .package_yaml
            .clone()
            .and_then(|text| package::from_package_yaml(&text))
            .map_err(|reason| Error::Metadata {
                reference: text.clone(),
                reason,
            })?,
        None => package::from_annotations(
            fetched.manifest.annotations.as_ref(),
            config_json.as_ref(),
            reference.short_name(),
        ),
    };
    let package_layer = fetched.base.as_deref().map(Digest::of);
    let package_problems = match (&fetched.base, &base) {
        (Some(layer), Some(read)) if fetched.layout == Layout::Xpkg => {
            crossplane_problems(&fetched, layer, read)
        }
        _ => Vec::new(),
    };
    if !package_problems.is_empty() {
        let message = format!(
            "{reference}: Crossplane's package manager would not install this xpkg \
             (xfn runs it regardless): {}",
            package_problems.join("; ")
        );
        if from_cache {
            tracing::debug!("{message}");
        } else {
            tracing::warn!("{message}");
        }
    }
    let wasm_digest = Digest::of(&fetched.wasm);
    let wasm_path = cache.blob_path(&wasm_digest);
    if !from_cache {
        store(cache.write_blob(&wasm_digest, &fetched.wasm));
        store(cache.write_blob(&Digest::of(&fetched.config), &fetched.config));
        if let Some(base) = &fetched.base {
            store(cache.write_blob(&Digest::of(base), base));
        }
    }
    Ok(PulledFunction {
        reference: text,
        digest: fetched.digest,
        index_digest: fetched.index_digest,
        wasm: fetched.wasm,
        wasm_digest,
        wasm_path,
        layout: fetched.layout,
        metadata,
        package_layer,
        package_problems,
        component,
        from_cache,
    })
}

/// What Crossplane would refuse in an xpkg: the image's problems, and an
/// index it couldn't pick an entry from.
fn crossplane_problems(fetched: &Fetched, layer: &[u8], read: &BaseLayer) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some(index) = &fetched.index
        && xpkg::crossplane_index_entry(index).is_none()
    {
        problems.push(String::from(
            "the image index has no linux/amd64 entry (nor one without a platform), \
             the one Crossplane's package manager reads",
        ));
    }
    problems
        .extend(xpkg::check_read(&fetched.manifest, &fetched.config, Some((layer, read))).problems);
    problems
}

/// Fetches a manifest (at most [`MAX_METADATA_SIZE`] bytes, refused while
/// streaming) and checks it against the digest that names it (the
/// reference's, else the registry's `Docker-Content-Digest`, else its own).
async fn pull_manifest(session: &Session, reference: &ImageRef) -> Result<(Vec<u8>, Digest)> {
    let oci = reference.oci();
    let name = oci
        .digest()
        .or_else(|| oci.tag())
        .unwrap_or("latest")
        .to_owned();
    let response = session
        .get(
            &format!("manifests/{name}"),
            Some(&MANIFEST_MEDIA_TYPES.join(", ")),
        )
        .await?;
    let claimed = response
        .headers()
        .get("Docker-Content-Digest")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let bytes = read_body(session, response, MAX_METADATA_SIZE, "manifest").await?;
    let actual = Digest::of(&bytes);
    let expected = match (reference.digest(), claimed) {
        (Some(d), _) => d,
        (None, Some(claimed)) => parse_digest(reference, &claimed)?,
        (None, None) => actual.clone(),
    };
    if actual != expected {
        return Err(Error::DigestMismatch {
            reference: session.reference.text().to_owned(),
            what: String::from("manifest"),
            expected: expected.to_string(),
            actual: actual.to_string(),
        });
    }
    Ok((bytes, actual))
}

/// Reads a body of at most `limit` bytes, refusing it while streaming.
async fn read_body(
    session: &Session,
    response: reqwest::Response,
    limit: u64,
    what: &str,
) -> Result<Vec<u8>> {
    let reference = &session.reference;
    crate::body::read_limited(response, limit)
        .await
        .map_err(|e| match e {
            BodyError::TooLarge { limit } => Error::BodyTooLarge {
                reference: reference.text().to_owned(),
                registry: reference.registry().to_owned(),
                what: what.to_owned(),
                limit,
            },
            BodyError::Transport(e) => Error::Unavailable {
                reference: reference.text().to_owned(),
                registry: reference.registry().to_owned(),
                detail: format!("reading the {what}: {}", crate::error::chain(&e)),
            },
        })
}

/// A verified blob: from the cache if it is there, else downloaded (at most
/// `limit` bytes) and checked against its digest. Nothing is written here.
async fn fetch_blob(
    session: &Session,
    cache: &Cache,
    layer: &OciDescriptor,
    limit: u64,
    what: &str,
) -> Result<Vec<u8>> {
    let reference = &session.reference;
    let expected = parse_digest(reference, &layer.digest)?;
    check_size(reference, layer, limit)?;
    if let Some(bytes) = cached(cache.read_blob(&expected, limit)) {
        return Ok(bytes);
    }
    let mut response = session.get(&format!("blobs/{expected}"), None).await?;
    let declared = u64::try_from(layer.size).unwrap_or(0);
    let mut bytes = Vec::with_capacity(usize::try_from(declared.min(limit)).unwrap_or(0));
    loop {
        let chunk = match response.chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            Err(e) => return Err(stream_error(reference, what, &expected, &e)),
        };
        bytes.extend_from_slice(&chunk);
        let len = bytes.len() as u64;
        if len > limit {
            return Err(too_large(reference, layer, len, limit));
        }
        if len > declared {
            return Err(Error::DigestMismatch {
                reference: reference.text().to_owned(),
                what: format!("{what} {expected}"),
                expected: format!("{declared} bytes"),
                actual: format!("more than {declared} bytes"),
            });
        }
    }
    let actual = Digest::of(&bytes);
    if actual != expected {
        return Err(Error::DigestMismatch {
            reference: reference.text().to_owned(),
            what: what.to_owned(),
            expected: expected.to_string(),
            actual: actual.to_string(),
        });
    }
    Ok(bytes)
}

/// An error while streaming a blob.
fn stream_error(
    reference: &ImageRef,
    what: &str,
    expected: &Digest,
    err: &reqwest::Error,
) -> Error {
    Error::Unavailable {
        reference: reference.text().to_owned(),
        registry: reference.registry().to_owned(),
        detail: format!("reading {what} {expected}: {}", crate::error::chain(err)),
    }
}

/// A CNCF config lists the component's imports: refuse before downloading
/// the layer when they already show it can't run. Only qualified interface
/// names (`ns:pkg/iface@ver`) are judged here; the component itself is
/// checked in full once downloaded.
fn precheck_declared_imports(
    reference: &ImageRef,
    config: Option<&serde_json::Value>,
) -> Result<()> {
    let Some(imports) = config
        .and_then(|c| c.get("component"))
        .and_then(|c| c.get("imports"))
        .and_then(|i| i.as_array())
    else {
        return Ok(());
    };
    let forbidden: Vec<String> = imports
        .iter()
        .filter_map(|i| i.as_str())
        .filter(|i| i.contains(':') && !xfn_component::is_allowed_import(i))
        .map(str::to_owned)
        .collect();
    if forbidden.is_empty() {
        Ok(())
    } else {
        Err(Error::ForbiddenImports {
            reference: reference.text().to_owned(),
            imports: forbidden,
        })
    }
}

fn check_size(reference: &ImageRef, layer: &OciDescriptor, limit: u64) -> Result<()> {
    let size = u64::try_from(layer.size).unwrap_or(u64::MAX);
    if size > limit {
        return Err(too_large(reference, layer, size, limit));
    }
    Ok(())
}

fn too_large(reference: &ImageRef, layer: &OciDescriptor, size: u64, limit: u64) -> Error {
    Error::LayerTooLarge {
        reference: reference.text().to_owned(),
        digest: layer.digest.clone(),
        size,
        limit,
    }
}

fn parse_manifest(reference: &ImageRef, bytes: &[u8]) -> Result<OciManifest> {
    layout::parse_manifest(bytes).map_err(|reason| Error::Layout {
        reference: reference.text().to_owned(),
        reason,
    })
}

fn parse_digest(reference: &ImageRef, text: &str) -> Result<Digest> {
    text.parse().map_err(|reason| Error::Layout {
        reference: reference.text().to_owned(),
        reason,
    })
}

fn json(bytes: &[u8]) -> Option<serde_json::Value> {
    serde_json::from_slice(bytes).ok()
}

fn nested_index(reference: &ImageRef) -> Error {
    Error::Layout {
        reference: reference.text().to_owned(),
        reason: String::from("an image index whose wasm entry is another index"),
    }
}

fn layout_error(reference: &ImageRef, err: LayoutError) -> Error {
    match err {
        LayoutError::NoWasmLayer(found) => Error::WrongMediaType {
            reference: reference.text().to_owned(),
            found,
        },
        LayoutError::NoWasmPlatform(platforms) => Error::NoWasmPlatform {
            reference: reference.text().to_owned(),
            platforms,
        },
        LayoutError::Unsupported(reason) => Error::Layout {
            reference: reference.text().to_owned(),
            reason,
        },
    }
}
