//! KCL packages, as kpm (`kcl mod push`) publishes them: an OCI image
//! manifest whose one layer is the package directory as a tar archive,
//! `application/vnd.oci.image.layer.v1.tar` (kpm before April 2026) or
//! `application/vnd.oci.image.layer.v1.tar+gzip` (since), titled
//! `<name>-<version>.tar`/`.tgz`, with an empty config and the
//! `org.kcllang.package.*` annotations. function-kcl's programs from
//! `oci://` and its `kcl.mod` dependencies are such packages.
//!
//! [`resolve_kcl_package`] pulls one the way functions are pulled (the same
//! auth, pull policy, digest checks and cache), and gives the layer's
//! bytes; [`unpack`] reads its `.k` and `kcl.mod` files within bounds.

use std::collections::BTreeMap;
use std::io::Read as _;

use oci_client::RegistryOperation;
use oci_client::manifest::OciDescriptor;

use crate::cache::Cache;
use crate::digest::Digest;
use crate::error::{Error, Result};
use crate::options::{PullPolicy, RegistryOptions};
use crate::pull::{
    Picked, Want, by_policy, cached, cached_manifest, fetch_blob, from_registry_in_time,
    off_runtime, parse_digest, record_pull, registry_manifest,
};
use crate::reference::ImageRef;
use crate::transport::Session;

/// The layer media types of a KCL package: a tar, or a gzipped tar.
pub const KCL_LAYER_MEDIA_TYPES: &[&str] = &[
    "application/vnd.oci.image.layer.v1.tar",
    "application/vnd.oci.image.layer.v1.tar+gzip",
];

/// A KCL package's layer, verified against its digest.
#[derive(Debug, Clone)]
pub struct PulledKclPackage {
    /// The reference as given.
    pub reference: String,
    /// The digest of its manifest.
    pub digest: Digest,
    /// The layer's bytes (a tar, gzipped if `gzip`).
    pub layer: Vec<u8>,
    /// Whether the layer is gzipped.
    pub gzip: bool,
    /// Whether it all came from the cache.
    pub from_cache: bool,
}

/// Resolves `reference` (`registry/repo:tag`, no `oci://`) to a KCL
/// package's layer per `policy`, as [`crate::resolve`] resolves a function:
/// from the cache, or from the registry into the cache once verified.
pub async fn resolve_kcl_package(
    reference: &str,
    policy: PullPolicy,
    options: &RegistryOptions,
) -> Result<PulledKclPackage> {
    let reference = ImageRef::parse(reference)?;
    let cache = Cache::new(&options.cache_dir);
    let cached_package = {
        let (owned, cache, options) = (reference.clone(), cache.clone(), options.clone());
        off_runtime(&reference, move || from_cache(&owned, &cache, &options))
    };
    by_policy(
        &reference,
        &cache,
        policy,
        cached_package,
        from_registry_in_time(
            &reference,
            options,
            from_registry(&reference, &cache, options),
        ),
    )
    .await
}

/// Whether `reference` is in the cache (its manifest and layer).
pub fn is_cached(reference: &str, options: &RegistryOptions) -> bool {
    let Ok(reference) = ImageRef::parse(reference) else {
        return false;
    };
    let cache = Cache::new(&options.cache_dir);
    matches!(from_cache(&reference, &cache, options), Ok(Some(_)))
}

/// The package's layer descriptor: the manifest's one KCL layer.
fn kcl_layer<'m>(reference: &ImageRef, picked: &'m Picked) -> Result<&'m OciDescriptor> {
    let layers: Vec<&OciDescriptor> = picked
        .manifest
        .layers
        .iter()
        .filter(|l| KCL_LAYER_MEDIA_TYPES.contains(&l.media_type.as_str()))
        .collect();
    match layers.as_slice() {
        [one] => Ok(one),
        _ => Err(Error::Layout {
            reference: reference.text().to_owned(),
            reason: format!(
                "not a KCL package: kpm's artifact has exactly one layer of media type {} \
                 (this one has {} of {} layers)",
                KCL_LAYER_MEDIA_TYPES.join(" or "),
                layers.len(),
                picked.manifest.layers.len()
            ),
        }),
    }
}

fn from_cache(
    reference: &ImageRef,
    cache: &Cache,
    options: &RegistryOptions,
) -> Result<Option<PulledKclPackage>> {
    let Some(picked) = cached_manifest(reference, cache, &Want::Wasm)? else {
        return Ok(None);
    };
    let layer = kcl_layer(reference, &picked)?;
    let digest = parse_digest(reference, &layer.digest)?;
    let Some(bytes) = cached(cache.read_blob(&digest, options.max_layer_size)) else {
        return Ok(None);
    };
    Ok(Some(PulledKclPackage {
        reference: reference.text().to_owned(),
        digest: picked.digest.clone(),
        gzip: layer.media_type.ends_with("+gzip"),
        layer: bytes,
        from_cache: true,
    }))
}

async fn from_registry(
    reference: &ImageRef,
    cache: &Cache,
    options: &RegistryOptions,
) -> Result<PulledKclPackage> {
    let session = Session::open(reference, RegistryOperation::Pull, options).await?;
    let picked = registry_manifest(&session, reference, &Want::Wasm).await?;
    let layer = kcl_layer(reference, &picked)?.clone();
    let bytes = fetch_blob(
        &session,
        cache,
        &layer,
        options.max_layer_size,
        "KCL package layer",
    )
    .await?;
    let digest = parse_digest(reference, &layer.digest)?;
    let mut blobs = picked.manifests.clone();
    blobs.push((digest, bytes.clone()));
    record_pull(reference, cache, &blobs, &picked.top);
    Ok(PulledKclPackage {
        reference: reference.text().to_owned(),
        digest: picked.digest,
        gzip: layer.media_type.ends_with("+gzip"),
        layer: bytes,
        from_cache: false,
    })
}

/// Bounds on unpacking a KCL package.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnpackLimits {
    /// Files kept (`.k` and `kcl.mod`).
    pub files: usize,
    /// Entries read, of any kind.
    pub entries: usize,
    /// Bytes of the files kept, in all.
    pub bytes: u64,
    /// Bytes of the tar itself, once unzipped.
    pub tar_bytes: u64,
    /// Levels of directories in a path.
    pub depth: usize,
}

impl Default for UnpackLimits {
    fn default() -> UnpackLimits {
        UnpackLimits {
            files: 10_000,
            entries: 50_000,
            bytes: 64 << 20,
            tar_bytes: 256 << 20,
            depth: 32,
        }
    }
}

/// Why a package could not be unpacked.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum UnpackError {
    /// The tar (or its gzip) is damaged.
    #[error("the package's tar cannot be read: {0}")]
    Corrupt(String),
    /// A path leaves the package (`..`, absolute) or is not UTF-8.
    #[error("the package's tar has an unsafe path {0:?} (outside the package)")]
    UnsafePath(String),
    /// Past one of [`UnpackLimits`].
    #[error("the package is too large: {0}")]
    TooLarge(String),
    /// A kept file is not UTF-8 text.
    #[error("the package's file {0} is not UTF-8 text")]
    NotText(String),
}

/// The `.k` and `kcl.mod` files of a package's layer (a tar, gzipped if
/// `gzip`), by path relative to the package root (`/`-separated, a leading
/// `./` removed). Every entry's path is checked, whatever its kind: one
/// with a `..` segment, an absolute one, or one that is not UTF-8 refuses
/// the whole package. Links and other kinds are skipped; so are files
/// other than `.k` and `kcl.mod` (`kcl.mod.lock`, READMEs).
pub fn unpack(
    layer: &[u8],
    gzip: bool,
    limits: UnpackLimits,
) -> std::result::Result<BTreeMap<String, String>, UnpackError> {
    let reader: Box<dyn std::io::Read + '_> = if gzip {
        Box::new(flate2::read::GzDecoder::new(layer))
    } else {
        Box::new(layer)
    };
    // Bound what the gzip may expand to.
    let reader = reader.take(limits.tar_bytes.saturating_add(1));
    let mut archive = tar::Archive::new(reader);
    let mut files = BTreeMap::new();
    let mut total = 0u64;
    let entries = archive
        .entries()
        .map_err(|e| UnpackError::Corrupt(e.to_string()))?;
    for (n, entry) in entries.enumerate() {
        if n >= limits.entries {
            return Err(UnpackError::TooLarge(format!(
                "more than {} tar entries",
                limits.entries
            )));
        }
        let mut entry = entry.map_err(|e| UnpackError::Corrupt(e.to_string()))?;
        let raw = entry.path_bytes().into_owned();
        let path = String::from_utf8(raw.clone())
            .map_err(|_| UnpackError::UnsafePath(String::from_utf8_lossy(&raw).into_owned()))?;
        let clean = clean_path(&path).ok_or_else(|| UnpackError::UnsafePath(path.clone()))?;
        if clean.split('/').count() > limits.depth {
            return Err(UnpackError::TooLarge(format!(
                "{path} nests deeper than {} directories",
                limits.depth
            )));
        }
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let name = clean.rsplit('/').next().unwrap_or_default();
        if !(name.ends_with(".k") || clean == "kcl.mod") {
            continue;
        }
        if files.len() >= limits.files {
            return Err(UnpackError::TooLarge(format!(
                "more than {} .k files",
                limits.files
            )));
        }
        let size = entry.header().size().unwrap_or(u64::MAX);
        total = total.saturating_add(size);
        if total > limits.bytes {
            return Err(UnpackError::TooLarge(format!(
                "more than {} bytes of .k files",
                limits.bytes
            )));
        }
        let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        (&mut entry)
            .take(size)
            .read_to_end(&mut bytes)
            .map_err(|e| UnpackError::Corrupt(e.to_string()))?;
        let text = String::from_utf8(bytes).map_err(|_| UnpackError::NotText(clean.clone()))?;
        files.insert(clean, text);
    }
    Ok(files)
}

/// A tar path made relative and clean (`./a/b.k` is `a/b.k`), or `None`
/// when it is absolute, has a `..` segment, or is empty.
fn clean_path(path: &str) -> Option<String> {
    if path.starts_with('/') || path.contains('\\') || path.contains('\0') {
        return None;
    }
    let mut parts = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => continue,
            ".." => return None,
            s => parts.push(s),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// The message for a package that could not be had: when nothing was
/// cached, it says so beside the registry's error.
pub fn not_available(reference: &str, options: &RegistryOptions, error: &Error) -> String {
    if matches!(error, Error::NotCached { .. }) || is_cached(reference, options) {
        format!("KCL package {reference}: {error}")
    } else {
        format!(
            "KCL package {reference} is not cached (in {}) and could not be pulled: {error}; \
             render once where its registry can be reached (that caches it for offline use), \
             or put the program in the Composition (`spec.source`)",
            options.cache_dir.display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tar_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for (path, data) in entries {
            let mut h = tar::Header::new_ustar();
            // set_path refuses `..`; write the raw name as a hostile tar would.
            let name = path.as_bytes();
            h.as_old_mut().name[..name.len()].copy_from_slice(name);
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            h.set_entry_type(tar::EntryType::Regular);
            h.set_cksum();
            b.append(&h, *data).expect("append");
        }
        b.into_inner().expect("tar")
    }

    #[test]
    fn keeps_k_files_and_kcl_mod() {
        let t = tar_of(&[
            ("kcl.mod", b"[package]\n"),
            ("./main.k", b"a = 1\n"),
            ("sub/m.k", b"b = 2\n"),
            ("kcl.mod.lock", b"x"),
            ("README.md", b"x"),
        ]);
        let files = unpack(&t, false, UnpackLimits::default()).expect("unpack");
        assert_eq!(
            files.keys().collect::<Vec<_>>(),
            ["kcl.mod", "main.k", "sub/m.k"]
        );
    }

    #[test]
    fn refuses_paths_out_of_the_package() {
        for bad in ["../evil.k", "a/../../evil.k", "/etc/evil.k"] {
            let t = tar_of(&[("main.k", b"a = 1\n"), (bad, b"x")]);
            assert_eq!(
                unpack(&t, false, UnpackLimits::default()),
                Err(UnpackError::UnsafePath(bad.to_string())),
                "{bad}"
            );
        }
    }

    #[test]
    fn refuses_too_many_files_and_bytes() {
        let names: Vec<String> = (0..5).map(|i| format!("f{i}.k")).collect();
        let entries: Vec<(&str, &[u8])> = names
            .iter()
            .map(|n| (n.as_str(), &b"a = 1\n"[..]))
            .collect();
        let t = tar_of(&entries);
        let limits = UnpackLimits {
            files: 4,
            ..UnpackLimits::default()
        };
        assert!(matches!(
            unpack(&t, false, limits),
            Err(UnpackError::TooLarge(_))
        ));
        let limits = UnpackLimits {
            bytes: 10,
            ..UnpackLimits::default()
        };
        assert!(matches!(
            unpack(&t, false, limits),
            Err(UnpackError::TooLarge(_))
        ));
    }

    #[test]
    fn reads_gzipped_layers() {
        let t = tar_of(&[("main.k", b"a = 1\n")]);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &t).expect("gzip");
        let files =
            unpack(&gz.finish().expect("gzip"), true, UnpackLimits::default()).expect("unpack");
        assert_eq!(files["main.k"], "a = 1\n");
    }
}
