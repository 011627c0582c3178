//! A content-addressed cache of registry blobs on disk.
//!
//! Layout under the cache root (shared with the host's compile cache, which
//! uses `compiled/`):
//!
//! ```text
//! blobs/sha256/<hex>                              manifests, configs, layers
//! refs/<registry>/<repository>/_tags/<tag>        "sha256:<hex>\n" of the tag's manifest
//! tmp/                                            files being written
//! ```
//!
//! Every write goes to a temporary file in `tmp/` that is renamed into
//! place, so a crash never leaves a half-written entry. Every read re-hashes
//! the blob: a corrupt entry is deleted and reported as missing, so the
//! caller fetches it again.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::digest::Digest;
use crate::error::{Error, Result};
use crate::reference::ImageRef;
use xfn_component::localfile::{self, Limit};

/// A tag record holds one digest; anything larger is not one.
const TAG_RECORD: Limit = Limit::new("tag record", 4 << 10);

/// The environment variable that overrides the cache root.
pub const CACHE_DIR_ENV: &str = "XFN_CACHE_DIR";

/// The on-disk blob and tag cache.
#[derive(Debug, Clone)]
pub struct Cache {
    root: PathBuf,
}

impl Cache {
    /// A cache rooted at `root` (created on first write).
    pub fn new(root: impl Into<PathBuf>) -> Cache {
        Cache { root: root.into() }
    }

    /// The default root: `$XFN_CACHE_DIR`, else `<user cache dir>/xfn`
    /// (`~/.cache/xfn` on Linux), else `<temp dir>/xfn`.
    pub fn default_root() -> PathBuf {
        if let Some(dir) = std::env::var_os(CACHE_DIR_ENV).filter(|d| !d.is_empty()) {
            return PathBuf::from(dir);
        }
        dirs::cache_dir()
            .unwrap_or_else(std::env::temp_dir)
            .join("xfn")
    }

    /// The cache root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the blob `digest` lives (whether or not it is there).
    pub fn blob_path(&self, digest: &Digest) -> PathBuf {
        self.root.join("blobs").join("sha256").join(digest.hex())
    }

    /// Where the tag record of `reference` lives, if it has a tag.
    pub fn ref_path(&self, reference: &ImageRef) -> Option<PathBuf> {
        let tag = reference.tag()?;
        // `:` is not portable in file names; `_` can't appear in a host name.
        let mut path = self
            .root
            .join("refs")
            .join(reference.registry().replace(':', "_"));
        for segment in reference.repository().split('/') {
            path.push(segment);
        }
        // Repository segments start with [a-z0-9], so `_tags` can't collide.
        Some(path.join("_tags").join(tag))
    }

    /// Reads and verifies the blob `digest`, of at most `limit` bytes. A
    /// missing blob is `None`; a corrupt one is deleted, logged and also
    /// `None`; one that is over `limit` or not a regular file is an error.
    pub fn read_blob(&self, digest: &Digest, limit: u64) -> Result<Option<Vec<u8>>> {
        let path = self.blob_path(digest);
        let bytes = match localfile::read(&path, Limit::new("cache entry", limit)) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(Error::Cache { path, error }),
        };
        if digest.matches(&bytes) {
            return Ok(Some(bytes));
        }
        tracing::warn!(
            "cache entry {} is corrupt (its content does not hash to {digest}); removing it",
            path.display()
        );
        match fs::remove_file(&path) {
            Ok(()) => Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(Error::Cache { path, error }),
        }
    }

    /// Stores `bytes` as the blob `digest`, atomically. The caller has
    /// verified the digest; it is checked again so the cache never holds a
    /// blob under the wrong name.
    pub fn write_blob(&self, digest: &Digest, bytes: &[u8]) -> Result<PathBuf> {
        let path = self.blob_path(digest);
        if !digest.matches(bytes) {
            return Err(Error::Cache {
                path,
                error: std::io::Error::other(format!(
                    "refusing to store content that does not hash to {digest}"
                )),
            });
        }
        self.write_atomic(&path, bytes)?;
        Ok(path)
    }

    /// The manifest digest the tag of `reference` pointed to when last pulled.
    pub fn read_ref(&self, reference: &ImageRef) -> Result<Option<Digest>> {
        let Some(path) = self.ref_path(reference) else {
            return Ok(None);
        };
        let text = match localfile::read_to_string(&path, TAG_RECORD) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(Error::Cache { path, error }),
        };
        match text.trim().parse::<Digest>() {
            Ok(d) => Ok(Some(d)),
            Err(reason) => {
                tracing::warn!(
                    "tag record {} is corrupt ({reason}); ignoring it",
                    path.display()
                );
                Ok(None)
            }
        }
    }

    /// Records that the tag of `reference` points to `digest`.
    pub fn write_ref(&self, reference: &ImageRef, digest: &Digest) -> Result<()> {
        if let Some(path) = self.ref_path(reference) {
            self.write_atomic(&path, format!("{digest}\n").as_bytes())?;
        }
        Ok(())
    }

    fn write_atomic(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        let io = |path: &Path| {
            let path = path.to_owned();
            move |error| Error::Cache { path, error }
        };
        let tmp_dir = self.root.join("tmp");
        fs::create_dir_all(&tmp_dir).map_err(io(&tmp_dir))?;
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(io(parent))?;
        }
        let mut tmp = tempfile::Builder::new()
            .prefix(".partial-")
            .tempfile_in(&tmp_dir)
            .map_err(io(&tmp_dir))?;
        tmp.write_all(bytes).map_err(io(tmp.path()))?;
        tmp.as_file().sync_all().map_err(io(tmp.path()))?;
        tmp.persist(path).map_err(|e| Error::Cache {
            path: path.to_owned(),
            error: e.error,
        })?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_round_trip_and_corruption_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let d = Digest::of(b"hello");
        assert_eq!(cache.read_blob(&d, 1 << 20).unwrap(), None);

        let path = cache.write_blob(&d, b"hello").unwrap();
        assert_eq!(path, dir.path().join("blobs/sha256").join(d.hex()));
        assert_eq!(
            cache.read_blob(&d, 1 << 20).unwrap().as_deref(),
            Some(&b"hello"[..])
        );

        fs::write(&path, b"jello").unwrap();
        assert_eq!(cache.read_blob(&d, 1 << 20).unwrap(), None);
        assert!(!path.exists(), "a corrupt entry is removed");
        // No temporary file is left behind.
        assert_eq!(fs::read_dir(dir.path().join("tmp")).unwrap().count(), 0);
    }

    #[test]
    fn refuses_to_store_content_under_the_wrong_digest() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let d = Digest::of(b"hello");
        assert!(matches!(
            cache.write_blob(&d, b"other"),
            Err(Error::Cache { .. })
        ));
        assert!(!cache.blob_path(&d).exists());
    }

    #[test]
    fn tags_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let r = ImageRef::parse("127.0.0.1:5000/fns/hello:v1").unwrap();
        let d = Digest::of(b"manifest");
        assert_eq!(cache.read_ref(&r).unwrap(), None);
        cache.write_ref(&r, &d).unwrap();
        assert_eq!(cache.read_ref(&r).unwrap(), Some(d.clone()));
        assert_eq!(
            cache.ref_path(&r).unwrap(),
            dir.path().join("refs/127.0.0.1_5000/fns/hello/_tags/v1")
        );
        let pinned = r.with_digest(&d);
        assert_eq!(cache.ref_path(&pinned), None);
        cache.write_ref(&pinned, &d).unwrap();
    }
}
