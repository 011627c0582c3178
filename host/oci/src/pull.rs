//! Resolving a reference to a verified wasm component: from the cache, or
//! from the registry into the cache, per the pull policy.

use std::path::PathBuf;

use oci_client::RegistryOperation;
use oci_client::manifest::{
    ImageIndexEntry, OciDescriptor, OciImageIndex, OciImageManifest, OciManifest,
};

use crate::base_layer::BaseLayer;
use crate::body::BodyError;
use crate::cache::Cache;
use crate::digest::Digest;
use crate::error::{Error, Result};
use crate::image::{self, Platform, PulledImage};
use crate::layout::{self, Layout, LayoutError, MANIFEST_MEDIA_TYPES};
use crate::options::{MAX_METADATA_SIZE, PullPolicy, RegistryOptions};
use crate::package::{self, FunctionMetadata};
use crate::pull_image;
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
    by_policy(
        &reference,
        &cache,
        policy,
        from_cache_off_runtime(&reference, &cache, options, from_cache),
        from_registry_in_time(
            &reference,
            options,
            from_registry(&reference, &cache, options),
        ),
    )
    .await
}

/// A function package resolved by [`resolve_package`].
#[derive(Debug, Clone)]
pub enum Resolved {
    /// A wasm component, exactly as [`resolve`] returns it.
    Wasm(PulledFunction),
    /// A container image, for the container runtime.
    Image(PulledImage),
}

/// Resolves `reference` to a function package of either kind, following
/// `policy` as [`resolve`] does, from one fetch of its manifest:
///
/// * a wasm artifact (a wasm config or layer; see [`crate::layout`]) is
///   [`Resolved::Wasm`], checked as [`resolve`] checks it;
/// * an image whose layers are all container layers
///   ([`crate::image::LAYER_MEDIA_TYPES`]), a Crossplane xpkg of a container
///   function included, is [`Resolved::Image`];
/// * of an image index, the wasm entry if there is one, else the entry for
///   this host's platform ([`crate::image::host_platform`]), else its only
///   entry; an index without either, or an image for another platform, is
///   refused, naming the platforms it offers.
///
/// An image's layers are streamed into the cache (never held in memory),
/// each within `options.max_image_layer_size` and all of them within
/// `options.max_image_size`, and verified against their digests; a cached
/// layer is re-hashed from its file (once per process). A tag record is
/// written only once everything is verified. The layers are only stored:
/// unpacking them is the caller's.
pub async fn resolve_package(
    reference: &str,
    policy: PullPolicy,
    options: &RegistryOptions,
) -> Result<Resolved> {
    resolve_package_for(reference, policy, options, &image::host_platform()).await
}

/// [`resolve_package`] for a host of platform `host`.
async fn resolve_package_for(
    reference: &str,
    policy: PullPolicy,
    options: &RegistryOptions,
    host: &Platform,
) -> Result<Resolved> {
    let reference = ImageRef::parse(reference)?;
    let cache = Cache::new(&options.cache_dir);
    let cached = {
        let (owned, cache, options, host) = (
            reference.clone(),
            cache.clone(),
            options.clone(),
            host.clone(),
        );
        off_runtime(&reference, move || {
            package_from_cache(&owned, &cache, &options, &host)
        })
    };
    by_policy(
        &reference,
        &cache,
        policy,
        cached,
        from_registry_in_time(
            &reference,
            options,
            package_from_registry(&reference, &cache, options, host),
        ),
    )
    .await
}

/// Follows `policy`: `cached` (the cache's answer, `None` if it lacks the
/// package) and `pull` (from the registry) are run only if it says so.
pub(crate) async fn by_policy<T>(
    reference: &ImageRef,
    cache: &Cache,
    policy: PullPolicy,
    cached: impl Future<Output = Result<Option<T>>>,
    pull: impl Future<Output = Result<T>>,
) -> Result<T> {
    match policy {
        PullPolicy::Never => cached.await?.ok_or_else(|| Error::NotCached {
            reference: reference.text().to_owned(),
            cache: cache.root().to_owned(),
        }),
        PullPolicy::IfNotPresent => match cached.await? {
            Some(found) => Ok(found),
            None => pull.await,
        },
        PullPolicy::Always => pull.await,
    }
}

/// Runs `work` (reading and checking blobs: file reads, hashing,
/// decompressing, parsing) on a blocking thread, so that a large or
/// hostile package never stalls the async runtime that serves calls,
/// probes and leases.
pub(crate) async fn off_runtime<T: Send + 'static>(
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

/// A lookup in the cache (`lookup`) on a blocking thread.
async fn from_cache_off_runtime<T: Send + 'static>(
    reference: &ImageRef,
    cache: &Cache,
    options: &RegistryOptions,
    lookup: fn(&ImageRef, &Cache, &RegistryOptions) -> Result<Option<T>>,
) -> Result<Option<T>> {
    let (owned, cache, options) = (reference.clone(), cache.clone(), options.clone());
    off_runtime(reference, move || lookup(&owned, &cache, &options)).await
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

/// A pull from the registry within `options.pull_timeout`, however
/// steadily (or slowly) the registry sends, counted in [`registry_pulls`].
/// Nothing is cached unless it all finished.
pub(crate) async fn from_registry_in_time<T>(
    reference: &ImageRef,
    options: &RegistryOptions,
    pull: impl Future<Output = Result<T>>,
) -> Result<T> {
    let pulled = tokio::time::timeout(options.pull_timeout, pull)
        .await
        .unwrap_or_else(|_| {
            Err(Error::Deadline {
                reference: reference.text().to_owned(),
                registry: reference.registry().to_owned(),
                deadline: options.pull_timeout,
            })
        });
    PULLS[usize::from(pulled.is_err())].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    pulled
}

/// A cache lookup; a cache that cannot be read is a miss, with a warning,
/// as the compile cache treats one.
pub(crate) fn cached<T>(lookup: Result<Option<T>>) -> Option<T> {
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

/// Which entry of an image index a pull follows.
#[derive(Debug, Clone)]
pub(crate) enum Want {
    /// The wasm entry ([`layout::select_index_entry`]).
    Wasm,
    /// The wasm entry, else the entry for this platform, else the only one.
    Package(Platform),
}

/// The image manifest a reference resolves to.
pub(crate) struct Picked {
    /// The digest of the manifest the reference names (an index's, if it
    /// names one): what its tag record holds.
    pub top: Digest,
    /// The digest of the image manifest.
    pub digest: Digest,
    /// The digest of the index, if the reference names one.
    pub index_digest: Option<Digest>,
    /// The index, if the reference names one.
    pub index: Option<OciImageIndex>,
    /// The platform of the index entry followed, if it states one.
    pub entry_platform: Option<Platform>,
    /// The image manifest.
    pub manifest: OciImageManifest,
    /// The manifests fetched from the registry, to store once everything
    /// is verified (empty from the cache).
    pub manifests: Vec<(Digest, Vec<u8>)>,
}

/// What the manifest a reference names is: an image manifest, or an index
/// and the entry to follow.
enum Top {
    Image(OciImageManifest),
    Index {
        index: OciImageIndex,
        child: Digest,
        platform: Option<Platform>,
    },
}

/// Parses the manifest a reference names and, of an index, picks the entry
/// `want` says.
fn read_top(reference: &ImageRef, bytes: &[u8], want: &Want) -> Result<Top> {
    match parse_manifest(reference, bytes)? {
        OciManifest::Image(m) => Ok(Top::Image(m)),
        OciManifest::ImageIndex(index) => {
            let entry = match want {
                Want::Wasm => {
                    layout::select_index_entry(&index).map_err(|e| layout_error(reference, e))?
                }
                Want::Package(host) => package_entry(reference, &index, host)?,
            };
            let child = parse_digest(reference, &entry.digest)?;
            let platform = image::entry_platform(entry);
            Ok(Top::Index {
                index,
                child,
                platform,
            })
        }
    }
}

/// The index entry of a package: the wasm entry, else the one for `host`,
/// else the only entry (as [`layout::select_index_entry`] takes it; an
/// image of another platform is refused once its manifest shows it is not
/// wasm).
fn package_entry<'i>(
    reference: &ImageRef,
    index: &'i OciImageIndex,
    host: &Platform,
) -> Result<&'i ImageIndexEntry> {
    layout::wasm_index_entry(index)
        .or_else(|| image::select_platform_entry(index, host))
        .or(match index.manifests.as_slice() {
            [only] => Some(only),
            _ => None,
        })
        .ok_or_else(|| no_platform_entry(reference, index, host))
}

/// The error for an index without an entry for `host`.
pub(crate) fn no_platform_entry(
    reference: &ImageRef,
    index: &OciImageIndex,
    host: &Platform,
) -> Error {
    Error::NoPlatformEntry {
        reference: reference.text().to_owned(),
        wanted: host.to_string(),
        offered: image::offered_platforms(index),
    }
}

/// The image manifest an index entry names.
fn child_manifest(reference: &ImageRef, bytes: &[u8]) -> Result<OciImageManifest> {
    match parse_manifest(reference, bytes)? {
        OciManifest::Image(m) => Ok(m),
        OciManifest::ImageIndex(_) => Err(nested_index(reference)),
    }
}

/// The manifest `reference` resolves to, from the cache alone, or `None`
/// if a part is missing (or was corrupt, and has been removed).
pub(crate) fn cached_manifest(
    reference: &ImageRef,
    cache: &Cache,
    want: &Want,
) -> Result<Option<Picked>> {
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
    let picked = match read_top(reference, &bytes, want)? {
        Top::Image(manifest) => Picked {
            digest: top.clone(),
            top,
            index_digest: None,
            index: None,
            entry_platform: None,
            manifest,
            manifests: Vec::new(),
        },
        Top::Index {
            index,
            child,
            platform,
        } => {
            let Some(bytes) = cached(cache.read_blob(&child, MAX_METADATA_SIZE)) else {
                return Ok(None);
            };
            Picked {
                manifest: child_manifest(reference, &bytes)?,
                digest: child,
                index_digest: Some(top.clone()),
                top,
                index: Some(index),
                entry_platform: platform,
                manifests: Vec::new(),
            }
        }
    };
    Ok(Some(picked))
}

/// The manifest `reference` resolves to, from the registry (each checked
/// against its digest, nothing stored yet).
pub(crate) async fn registry_manifest(
    session: &Session,
    reference: &ImageRef,
    want: &Want,
) -> Result<Picked> {
    let (top_bytes, top) = pull_manifest(session, reference).await?;
    if reference.digest().is_none() {
        tracing::info!("resolved {reference} to {top}");
    }
    let read = read_top(reference, &top_bytes, want)?;
    let mut manifests = vec![(top.clone(), top_bytes)];
    Ok(match read {
        Top::Image(manifest) => Picked {
            digest: top.clone(),
            top,
            index_digest: None,
            index: None,
            entry_platform: None,
            manifest,
            manifests,
        },
        Top::Index {
            index,
            child,
            platform,
        } => {
            let (bytes, child) = pull_manifest(session, &reference.with_digest(&child)).await?;
            tracing::info!("{reference}: using index entry {child}");
            let manifest = child_manifest(reference, &bytes)?;
            manifests.push((child.clone(), bytes));
            Picked {
                digest: child,
                index_digest: Some(top.clone()),
                top,
                index: Some(index),
                entry_platform: platform,
                manifest,
                manifests,
            }
        }
    })
}

/// Stores what a pull fetched once everything is verified: `blobs` (the
/// manifests, and what else the caller names), then the tag record.
pub(crate) fn record_pull(
    reference: &ImageRef,
    cache: &Cache,
    blobs: &[(Digest, Vec<u8>)],
    top: &Digest,
) {
    for (digest, bytes) in blobs {
        store(cache.write_blob(digest, bytes));
    }
    if reference.digest().is_none() {
        store(cache.write_ref(reference, top));
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
    match cached_manifest(reference, cache, &Want::Wasm)? {
        Some(picked) => wasm_from_cache(reference, cache, options, picked),
        None => Ok(None),
    }
}

/// A package from the cache alone, or `None` if any part is missing (or
/// was corrupt, and has been removed).
fn package_from_cache(
    reference: &ImageRef,
    cache: &Cache,
    options: &RegistryOptions,
    host: &Platform,
) -> Result<Option<Resolved>> {
    let Some(picked) = cached_manifest(reference, cache, &Want::Package(host.clone()))? else {
        return Ok(None);
    };
    if layout::is_wasm_manifest(&picked.manifest) {
        Ok(wasm_from_cache(reference, cache, options, picked)?.map(Resolved::Wasm))
    } else {
        Ok(pull_image::from_cache(reference, cache, options, picked, host)?.map(Resolved::Image))
    }
}

/// The wasm artifact of `picked` from the cache alone, or `None` if any
/// part is missing.
fn wasm_from_cache(
    reference: &ImageRef,
    cache: &Cache,
    options: &RegistryOptions,
    picked: Picked,
) -> Result<Option<PulledFunction>> {
    let Picked {
        digest,
        index_digest,
        index,
        manifest,
        ..
    } = picked;
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
    let picked = registry_manifest(&session, reference, &Want::Wasm).await?;
    wasm_from_registry(&session, reference, cache, options, picked).await
}

/// Pulls a package of either kind from the registry, verifies and checks
/// it, and only then records it in the cache.
async fn package_from_registry(
    reference: &ImageRef,
    cache: &Cache,
    options: &RegistryOptions,
    host: &Platform,
) -> Result<Resolved> {
    let session = Session::open(reference, RegistryOperation::Pull, options).await?;
    let picked = registry_manifest(&session, reference, &Want::Package(host.clone())).await?;
    if layout::is_wasm_manifest(&picked.manifest) {
        wasm_from_registry(&session, reference, cache, options, picked)
            .await
            .map(Resolved::Wasm)
    } else {
        pull_image::from_registry(&session, reference, cache, options, picked, host)
            .await
            .map(Resolved::Image)
    }
}

/// Pulls the blobs of the wasm artifact `picked`, verifies and checks
/// them, and only then stores them in the cache.
async fn wasm_from_registry(
    session: &Session,
    reference: &ImageRef,
    cache: &Cache,
    options: &RegistryOptions,
    picked: Picked,
) -> Result<PulledFunction> {
    let Picked {
        top,
        digest,
        index_digest,
        index,
        manifest,
        manifests,
        ..
    } = picked;
    let config = fetch_blob(
        session,
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
        session,
        cache,
        &selected.wasm,
        options.max_layer_size,
        "wasm layer",
    )
    .await?;
    let base = match &selected.base {
        Some(layer) => Some(
            fetch_blob(
                session,
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
    let (owned, cache) = (reference.clone(), cache.clone());
    off_runtime(reference, move || {
        let pulled = finish(&owned, &cache, fetched, false)?;
        // Everything is verified: store the manifests, then the tag record.
        record_pull(&owned, &cache, &manifests, &top);
        Ok(pulled)
    })
    .await
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
pub(crate) async fn fetch_blob(
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
pub(crate) fn stream_error(
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

pub(crate) fn parse_digest(reference: &ImageRef, text: &str) -> Result<Digest> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::Compression;
    use crate::push::{PushMetadata, build_artifact};

    const REF: &str = "reg.example/fns/fn:v1";

    /// A cache in a temporary directory, and options that use it and no
    /// credentials of this machine.
    fn setup() -> (tempfile::TempDir, Cache, RegistryOptions) {
        let dir = tempfile::tempdir().unwrap();
        let docker_config = dir.path().join("docker-config.json");
        std::fs::write(&docker_config, "{}").unwrap();
        let options = RegistryOptions {
            cache_dir: dir.path().join("cache"),
            docker_config: Some(docker_config),
            ..RegistryOptions::default()
        };
        (dir, Cache::new(options.cache_dir.clone()), options)
    }

    fn put(cache: &Cache, bytes: &[u8]) -> Digest {
        let digest = Digest::of(bytes);
        cache.write_blob(&digest, bytes).unwrap();
        digest
    }

    fn descriptor(media_type: &str, digest: &Digest, size: usize) -> serde_json::Value {
        serde_json::json!({"mediaType": media_type, "digest": digest.to_string(), "size": size})
    }

    /// Puts a container image for `arch` in the cache (config, two layers,
    /// manifest); returns the manifest's digest and the layers' digests.
    fn put_image(cache: &Cache, arch: &str) -> (Digest, Vec<Digest>, usize) {
        let config = serde_json::to_vec(&serde_json::json!({
            "os": "linux", "architecture": arch,
            "config": {"Entrypoint": ["/function"], "Env": ["A=1"], "WorkingDir": "/"}
        }))
        .unwrap();
        let layers: [&[u8]; 2] = [b"base layer bytes", b"the package.yaml layer"];
        let digests: Vec<Digest> = layers.iter().map(|l| put(cache, l)).collect();
        let manifest = serde_json::to_vec(&serde_json::json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": descriptor("application/vnd.oci.image.config.v1+json", &put(cache, &config), config.len()),
            "layers": [
                descriptor("application/vnd.oci.image.layer.v1.tar+gzip", &digests[0], layers[0].len()),
                // A container function's xpkg: package.yaml in the last layer.
                {
                    "mediaType": "application/vnd.docker.image.rootfs.diff.tar.gzip",
                    "digest": digests[1].to_string(), "size": layers[1].len(),
                    "annotations": {"io.crossplane.xpkg": "base"}
                },
            ],
        }))
        .unwrap();
        let size = manifest.len();
        (put(cache, &manifest), digests, size)
    }

    /// Puts a CNCF wasm artifact of a runnable component in the cache;
    /// returns its manifest's digest and size.
    fn put_wasm(cache: &Cache) -> (Digest, usize) {
        let artifact = build_artifact(
            &ImageRef::parse(REF).unwrap(),
            crate::xpkg::tests::hello(),
            &PushMetadata::default(),
        )
        .unwrap();
        put(cache, &artifact.config);
        for layer in &artifact.layers {
            put(cache, layer);
        }
        (put(cache, &artifact.manifest), artifact.manifest.len())
    }

    /// Puts an index of `entries` (digest, size, os, architecture) in the
    /// cache.
    fn put_index(cache: &Cache, entries: &[(&Digest, usize, &str, &str)]) -> Digest {
        let manifests: Vec<serde_json::Value> = entries
            .iter()
            .map(|(digest, size, os, arch)| {
                let mut entry =
                    descriptor("application/vnd.oci.image.manifest.v1+json", digest, *size);
                entry["platform"] = serde_json::json!({"os": os, "architecture": arch});
                entry
            })
            .collect();
        put(
            cache,
            &serde_json::to_vec(&serde_json::json!({
                "schemaVersion": 2,
                "mediaType": "application/vnd.oci.image.index.v1+json",
                "manifests": manifests,
            }))
            .unwrap(),
        )
    }

    fn tag(cache: &Cache, digest: &Digest) {
        cache
            .write_ref(&ImageRef::parse(REF).unwrap(), digest)
            .unwrap();
    }

    async fn package(
        policy: PullPolicy,
        options: &RegistryOptions,
        host: &str,
    ) -> Result<Resolved> {
        resolve_package_for(REF, policy, options, &Platform::linux(host)).await
    }

    fn image(resolved: Result<Resolved>) -> PulledImage {
        match resolved {
            Ok(Resolved::Image(image)) => image,
            other => panic!("not an image: {other:?}"),
        }
    }

    #[tokio::test]
    async fn an_image_round_trips_through_the_cache() {
        let (_dir, cache, options) = setup();
        let (manifest, layers, _) = put_image(&cache, "amd64");
        tag(&cache, &manifest);
        for policy in [PullPolicy::Never, PullPolicy::IfNotPresent] {
            let image = image(package(policy, &options, "amd64").await);
            assert!(image.from_cache);
            assert_eq!(image.reference, REF);
            assert_eq!(image.digest, manifest);
            assert_eq!(image.index_digest, None);
            assert_eq!(image.platform, "linux/amd64");
            assert_eq!(image.config.entrypoint, ["/function"]);
            assert_eq!(image.config.env, ["A=1"]);
            assert_eq!(image.config.working_dir, "/");
            let summary: Vec<_> = image
                .layers
                .iter()
                .map(|l| (l.digest.clone(), l.size, l.compression, l.path.clone()))
                .collect();
            assert_eq!(
                summary,
                [
                    (
                        layers[0].clone(),
                        16,
                        Compression::Gzip,
                        cache.blob_path(&layers[0])
                    ),
                    (
                        layers[1].clone(),
                        22,
                        Compression::Gzip,
                        cache.blob_path(&layers[1])
                    ),
                ]
            );
            assert_eq!(
                image.layers[1].media_type,
                "application/vnd.docker.image.rootfs.diff.tar.gzip"
            );
        }
        // The wasm-only resolve says it is not wasm, as it did before.
        let err = resolve(REF, PullPolicy::Never, &options).await.unwrap_err();
        assert!(err.is_not_wasm(), "{err}");
    }

    #[tokio::test]
    async fn a_corrupt_cached_layer_is_removed_and_pulled_again() {
        let (_dir, cache, options) = setup();
        let (manifest, layers, _) = put_image(&cache, "amd64");
        tag(&cache, &manifest);
        let path = cache.blob_path(&layers[1]);
        std::fs::write(&path, b"the package.yaml layeR").unwrap();

        let err = package(PullPolicy::Never, &options, "amd64")
            .await
            .unwrap_err();
        assert!(matches!(err, Error::NotCached { .. }), "{err}");
        assert!(!path.exists(), "the corrupt layer is removed");

        // IfNotPresent goes to the registry for it (here: nothing listens).
        std::fs::write(&path, b"the package.yaml layeR").unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap()
            .port();
        let reference = format!("127.0.0.1:{port}/fns/fn:v1");
        cache
            .write_ref(&ImageRef::parse(&reference).unwrap(), &manifest)
            .unwrap();
        let local = RegistryOptions {
            insecure_registries: vec![format!("127.0.0.1:{port}")],
            ..options
        };
        let err = resolve_package_for(
            &reference,
            PullPolicy::IfNotPresent,
            &local,
            &Platform::linux("amd64"),
        )
        .await
        .unwrap_err();
        assert!(
            err.is_unreachable() && err.to_string().starts_with(&reference),
            "{err}"
        );
        assert!(!path.exists());
    }

    #[tokio::test]
    async fn an_index_resolves_to_the_host_platform() {
        let (_dir, cache, options) = setup();
        let (amd64, _, amd64_size) = put_image(&cache, "amd64");
        let (arm64, _, arm64_size) = put_image(&cache, "arm64");
        let index = put_index(
            &cache,
            &[
                (&arm64, arm64_size, "linux", "arm64"),
                (&amd64, amd64_size, "linux", "amd64"),
            ],
        );
        tag(&cache, &index);
        for (host, digest) in [("amd64", &amd64), ("arm64", &arm64)] {
            let image = image(package(PullPolicy::Never, &options, host).await);
            assert_eq!(&image.digest, digest);
            assert_eq!(image.index_digest.as_ref(), Some(&index));
            assert_eq!(image.platform, format!("linux/{host}"));
        }
        let err = package(PullPolicy::Never, &options, "s390x")
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "reg.example/fns/fn:v1: the image index has no entry for linux/s390x; \
             it offers linux/arm64, linux/amd64 (push the function built for linux/s390x, \
             or run it on a host of a platform it offers)"
        );
    }

    #[tokio::test]
    async fn an_index_of_other_platforms_is_refused_naming_them() {
        let (_dir, cache, options) = setup();
        let (arm64, _, arm64_size) = put_image(&cache, "arm64");
        let (s390x, _, s390x_size) = put_image(&cache, "s390x");
        let two = put_index(
            &cache,
            &[
                (&arm64, arm64_size, "linux", "arm64"),
                (&s390x, s390x_size, "linux", "s390x"),
            ],
        );
        tag(&cache, &two);
        let err = package(PullPolicy::Never, &options, "amd64")
            .await
            .unwrap_err();
        assert!(
            err.to_string().starts_with(
                "reg.example/fns/fn:v1: the image index has no entry for linux/amd64; \
                 it offers linux/arm64, linux/s390x ("
            ),
            "{err}"
        );

        // One entry, of another platform: looked at (it might be wasm), then
        // refused the same way.
        let one = put_index(&cache, &[(&arm64, arm64_size, "linux", "arm64")]);
        tag(&cache, &one);
        let err = package(PullPolicy::Never, &options, "amd64")
            .await
            .unwrap_err();
        assert!(
            err.to_string().starts_with(
                "reg.example/fns/fn:v1: the image index has no entry for linux/amd64; \
                 it offers linux/arm64 ("
            ),
            "{err}"
        );

        // A single image of another platform.
        tag(&cache, &arm64);
        let err = package(PullPolicy::Never, &options, "amd64")
            .await
            .unwrap_err();
        assert!(
            matches!(&err, Error::WrongPlatform { found, wanted, .. }
                if found == "linux/arm64" && wanted == "linux/amd64"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_wasm_entry_wins_over_the_host_platform() {
        let (_dir, cache, options) = setup();
        let (amd64, _, amd64_size) = put_image(&cache, "amd64");
        let (wasm, wasm_size) = put_wasm(&cache);
        let index = put_index(
            &cache,
            &[
                (&amd64, amd64_size, "linux", "amd64"),
                (&wasm, wasm_size, "wasip2", "wasm"),
            ],
        );
        tag(&cache, &index);
        let Ok(Resolved::Wasm(function)) = package(PullPolicy::Never, &options, "amd64").await
        else {
            panic!("not wasm");
        };
        // Exactly what resolve returns.
        let resolved = resolve(REF, PullPolicy::Never, &options).await.unwrap();
        assert_eq!(function.digest, wasm);
        assert_eq!(function.index_digest, Some(index));
        assert!(function.from_cache);
        assert_eq!(
            (
                &function.digest,
                &function.index_digest,
                &function.wasm_digest,
                &function.wasm_path,
                function.layout,
                &function.package_problems,
                &function.wasm,
            ),
            (
                &resolved.digest,
                &resolved.index_digest,
                &resolved.wasm_digest,
                &resolved.wasm_path,
                resolved.layout,
                &resolved.package_problems,
                &resolved.wasm,
            )
        );
        assert_eq!(function.metadata.name, resolved.metadata.name);
    }

    #[tokio::test]
    async fn a_wasm_artifact_resolves_as_wasm() {
        let (_dir, cache, options) = setup();
        let (wasm, _) = put_wasm(&cache);
        tag(&cache, &wasm);
        let Ok(Resolved::Wasm(function)) = package(PullPolicy::Never, &options, "amd64").await
        else {
            panic!("not wasm");
        };
        assert_eq!(function.digest, wasm);
        assert_eq!(function.layout, Layout::WasmArtifact);
        assert_eq!(function.reference, REF);
    }

    /// Servers resolve packages in spawned tasks: the futures must be Send.
    #[test]
    fn resolving_can_be_spawned() {
        fn spawnable<F: Future + Send + 'static>(_: impl FnOnce() -> F) {}
        spawnable(|| async { resolve(REF, PullPolicy::Never, &RegistryOptions::default()).await });
        spawnable(|| async {
            resolve_package(REF, PullPolicy::Never, &RegistryOptions::default()).await
        });
    }

    #[tokio::test]
    async fn never_without_the_package_is_not_cached() {
        let (_dir, _cache, options) = setup();
        let err = package(PullPolicy::Never, &options, "amd64")
            .await
            .unwrap_err();
        assert!(matches!(err, Error::NotCached { .. }), "{err}");
        assert!(err.to_string().starts_with(REF), "{err}");
    }
}
