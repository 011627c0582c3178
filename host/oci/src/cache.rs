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
//! caller fetches it again. Container image layers, too large to hold in
//! memory, are streamed into `tmp/` while hashed and re-hashed from the file
//! ([`Cache::verify_blob_file`]), at most once per process while the file
//! is unchanged.

use std::collections::BTreeSet;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest as _, Sha256};

use crate::digest::Digest;
use crate::error::{Error, Result};
use crate::reference::ImageRef;
use xfn_component::localfile::{self, Limit};

/// A tag record holds one digest; anything larger is not one.
const TAG_RECORD: Limit = Limit::new("tag record", 4 << 10);

/// How much of a blob file is hashed at a time.
const HASH_BUFFER: usize = 256 << 10;

/// The blob files this process has hashed and found intact, by their
/// identity: a file replaced or written since (another inode, size, or
/// modification or change time) is hashed again.
static VERIFIED: Mutex<BTreeSet<FileIdentity>> = Mutex::new(BTreeSet::new());

/// What tells one state of a file from another, short of its content.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct FileIdentity {
    path: PathBuf,
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl FileIdentity {
    fn of(path: &Path, metadata: &fs::Metadata) -> FileIdentity {
        FileIdentity {
            path: path.to_owned(),
            dev: metadata.dev(),
            ino: metadata.ino(),
            len: metadata.len(),
            mtime: (metadata.mtime(), metadata.mtime_nsec()),
            ctime: (metadata.ctime(), metadata.ctime_nsec()),
        }
    }

    fn verified(&self) -> bool {
        VERIFIED
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .contains(self)
    }

    fn remember(self) {
        VERIFIED
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(self);
    }
}

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

    /// Checks the blob file `digest`, which must be `size` bytes, without
    /// reading it into memory: its size, then its content, hashed as it is
    /// read (once per process while the file is unchanged). Returns its
    /// path if it is intact; a missing blob is `None`; a corrupt one (of
    /// another size or content) is deleted, logged and also `None`; one
    /// that is not a regular file, or can't be read, is an error.
    pub fn verify_blob_file(&self, digest: &Digest, size: u64) -> Result<Option<PathBuf>> {
        let path = self.blob_path(digest);
        let fail = |path: &Path| {
            let path = path.to_owned();
            move |error| Error::Cache { path, error }
        };
        let file = match fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(&path)
        {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(Error::Cache { path, error }),
        };
        let metadata = file.metadata().map_err(fail(&path))?;
        if !metadata.is_file() {
            return Err(Error::Cache {
                error: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!(
                        "it is {}, not a regular file",
                        localfile::type_name(&metadata)
                    ),
                ),
                path,
            });
        }
        if metadata.len() != size {
            return self.corrupt(
                path,
                &format!("it is {} bytes, not the {size} of {digest}", metadata.len()),
            );
        }
        let identity = FileIdentity::of(&path, &metadata);
        if identity.verified() {
            return Ok(Some(path));
        }
        let mut hasher = Sha256::new();
        let mut reader = file.take(size.saturating_add(1));
        let mut buffer = vec![0; HASH_BUFFER];
        let mut read = 0u64;
        loop {
            let n = match reader.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(Error::Cache { path, error }),
            };
            hasher.update(&buffer[..n]);
            read += n as u64;
        }
        if read != size {
            return self.corrupt(
                path,
                &format!("it changed size while being read ({read} bytes)"),
            );
        }
        if Digest::from_sha256(hasher) != *digest {
            return self.corrupt(path, &format!("its content does not hash to {digest}"));
        }
        identity.remember();
        Ok(Some(path))
    }

    /// Removes the corrupt blob at `path`, saying why: it is missing now.
    fn corrupt(&self, path: PathBuf, why: &str) -> Result<Option<PathBuf>> {
        tracing::warn!(
            "cache entry {} is corrupt ({why}); removing it",
            path.display()
        );
        match fs::remove_file(&path) {
            Ok(()) => Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(Error::Cache { path, error }),
        }
    }

    /// A [`BlobWriter`]: a new temporary file in `tmp/`.
    pub(crate) fn blob_writer(&self) -> Result<BlobWriter> {
        Ok(BlobWriter {
            cache: self.clone(),
            file: self.temp_file()?,
            hasher: Sha256::new(),
            written: 0,
        })
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
        let mut tmp = self.temp_file()?;
        tmp.write_all(bytes).map_err(io(tmp.path()))?;
        persist(tmp, path)
    }

    /// A new temporary file in `tmp/` (deleted when dropped).
    fn temp_file(&self) -> Result<tempfile::NamedTempFile> {
        let tmp_dir = self.root.join("tmp");
        fs::create_dir_all(&tmp_dir).map_err(io(&tmp_dir))?;
        tempfile::Builder::new()
            .prefix(".partial-")
            .tempfile_in(&tmp_dir)
            .map_err(io(&tmp_dir))
    }
}

/// The error for an I/O failure on `path`.
fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + use<> {
    let path = path.to_owned();
    move |error| Error::Cache { path, error }
}

/// Syncs `tmp` and renames it to `path`.
fn persist(tmp: tempfile::NamedTempFile, path: &Path) -> Result<()> {
    tmp.as_file().sync_all().map_err(io(tmp.path()))?;
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(io(parent))?;
    }
    tmp.persist(path).map_err(|e| Error::Cache {
        path: path.to_owned(),
        error: e.error,
    })?;
    Ok(())
}

/// A blob being streamed into the cache: written to a temporary file in
/// `tmp/` and hashed as it comes, and named `blobs/sha256/<hex>` only once
/// its digest is checked ([`BlobWriter::finish`]). Dropped unfinished, the
/// temporary file is deleted.
pub(crate) struct BlobWriter {
    cache: Cache,
    file: tempfile::NamedTempFile,
    hasher: Sha256,
    written: u64,
}

/// How [`BlobWriter::finish`] ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Finished {
    /// The content hashed to the digest expected: it is in the cache here.
    Stored(PathBuf),
    /// The content hashed to this digest instead; nothing was stored.
    Mismatch(Digest),
}

impl BlobWriter {
    /// Appends `bytes`.
    pub(crate) fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.file.write_all(bytes).map_err(io(self.file.path()))?;
        self.hasher.update(bytes);
        self.written += bytes.len() as u64;
        Ok(())
    }

    /// How many bytes were written so far.
    pub(crate) fn written(&self) -> u64 {
        self.written
    }

    /// Stores the blob as `expected` if its content hashes to it; else
    /// deletes it and says what it hashed to.
    pub(crate) fn finish(self, expected: &Digest) -> Result<Finished> {
        let actual = Digest::from_sha256(self.hasher);
        if actual != *expected {
            return Ok(Finished::Mismatch(actual));
        }
        let path = self.cache.blob_path(expected);
        persist(self.file, &path)?;
        // Freshly hashed: the next check of this file needn't read it again.
        if let Ok(metadata) = fs::metadata(&path) {
            FileIdentity::of(&path, &metadata).remember();
        }
        Ok(Finished::Stored(path))
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

    /// The files in the cache's `tmp/` (none once a write has ended).
    fn leftovers(cache: &Cache) -> Vec<PathBuf> {
        match fs::read_dir(cache.root().join("tmp")) {
            Ok(entries) => entries.map(|e| e.unwrap().path()).collect(),
            Err(_) => Vec::new(),
        }
    }

    #[test]
    fn blob_files_are_verified_by_size_and_content() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let content = b"a layer".repeat(100_000);
        let d = Digest::of(&content);
        let size = content.len() as u64;
        assert_eq!(cache.verify_blob_file(&d, size).unwrap(), None);

        let path = cache.write_blob(&d, &content).unwrap();
        assert_eq!(
            cache.verify_blob_file(&d, size).unwrap(),
            Some(path.clone())
        );

        // Another size than the manifest's: corrupt, removed.
        assert_eq!(cache.verify_blob_file(&d, size + 1).unwrap(), None);
        assert!(!path.exists());

        // The right size, other content (never verified in this state).
        let mut other = content.clone();
        other[size as usize / 2] ^= 1;
        cache.write_blob(&Digest::of(&other), &other).unwrap();
        fs::rename(cache.blob_path(&Digest::of(&other)), &path).unwrap();
        assert_eq!(cache.verify_blob_file(&d, size).unwrap(), None);
        assert!(!path.exists(), "a corrupt blob is removed");
    }

    #[test]
    fn a_blob_changed_after_it_was_verified_is_hashed_again() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let content = vec![7u8; 4096];
        let d = Digest::of(&content);
        let path = cache.write_blob(&d, &content).unwrap();
        assert!(cache.verify_blob_file(&d, 4096).unwrap().is_some());
        assert!(cache.verify_blob_file(&d, 4096).unwrap().is_some());

        // Same size, other bytes, written in place, even with the old
        // modification time put back.
        let modified = fs::metadata(&path).unwrap().modified().unwrap();
        let file = fs::OpenOptions::new().write(true).open(&path).unwrap();
        (&file).write_all(&[8u8; 4096]).unwrap();
        file.set_modified(modified).unwrap();
        drop(file);
        assert_eq!(cache.verify_blob_file(&d, 4096).unwrap(), None);
        assert!(!path.exists());
    }

    #[test]
    fn a_blob_that_is_not_a_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let d = Digest::of(b"x");
        fs::create_dir_all(cache.blob_path(&d)).unwrap();
        let err = cache.verify_blob_file(&d, 1).unwrap_err();
        assert!(
            err.to_string().contains("a directory, not a regular file"),
            "{err}"
        );
        assert!(cache.blob_path(&d).is_dir(), "not removed");
    }

    #[test]
    fn blob_writer_stores_only_what_hashes_to_its_digest() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let d = Digest::of(b"hello world");

        let mut writer = cache.blob_writer().unwrap();
        writer.write(b"hello ").unwrap();
        writer.write(b"world").unwrap();
        assert_eq!(writer.written(), 11);
        assert_eq!(leftovers(&cache).len(), 1, "written to tmp/ first");
        assert!(!cache.blob_path(&d).exists());
        let path = cache.blob_path(&d);
        assert_eq!(writer.finish(&d).unwrap(), Finished::Stored(path.clone()));
        assert_eq!(fs::read(&path).unwrap(), b"hello world");
        assert_eq!(cache.verify_blob_file(&d, 11).unwrap(), Some(path));
        assert!(leftovers(&cache).is_empty());

        let other = Digest::of(b"other");
        let mut writer = cache.blob_writer().unwrap();
        writer.write(b"not other").unwrap();
        assert_eq!(
            writer.finish(&other).unwrap(),
            Finished::Mismatch(Digest::of(b"not other"))
        );
        assert!(!cache.blob_path(&other).exists());
        assert!(leftovers(&cache).is_empty());

        // Dropped unfinished: nothing is left.
        let mut writer = cache.blob_writer().unwrap();
        writer.write(b"partial").unwrap();
        drop(writer);
        assert!(leftovers(&cache).is_empty());
    }
}
