//! What makes the compile cache safe to load native code from: a cache
//! directory only the current user can write, entries the user owns, and a
//! per-user secret key that authenticates every entry.
//!
//! A directory others may write is not used at all (xfn compiles instead,
//! with a warning), so a planted or swapped entry is never loaded. An entry
//! is accepted only with a valid HMAC-SHA256 under the key, so an entry
//! edited with a recomputed plain checksum is refused and rebuilt.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use ring::hmac;
use ring::rand::{SecureRandom, SystemRandom};

/// The file in the cache root that holds the key.
pub const KEY_FILE: &str = "compile-cache.key";

/// The length of the key, in bytes.
const KEY_LEN: usize = 32;

/// A temporary file older than this is left over by a killed compile.
pub const STALE_TEMP_AGE: Duration = Duration::from_secs(10 * 60);

/// Why the cache can't be trusted (it is then not used).
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// A directory or file can't be read, created or checked.
    #[error("{}: {error}", path.display())]
    Io {
        /// The directory or file.
        path: PathBuf,
        /// The cause (its text is part of the message).
        error: std::io::Error,
    },
    /// A directory or file that others could write, or that is not ours.
    #[error("{}: {reason}", path.display())]
    Unsafe {
        /// The directory or file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

/// The effective user id of this process.
#[allow(unsafe_code)]
fn current_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Checks that `meta` (of `path`) belongs to the current user and that no
/// one else may write it.
pub fn check_owned(path: &Path, meta: &fs::Metadata) -> Result<(), TrustError> {
    let unsafe_because = |reason: String| TrustError::Unsafe {
        path: path.to_owned(),
        reason,
    };
    let uid = current_uid();
    if meta.uid() != uid {
        return Err(unsafe_because(format!(
            "owned by uid {}, not by the current user (uid {uid})",
            meta.uid()
        )));
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(unsafe_because(format!(
            "mode {mode:04o} lets other users write it"
        )));
    }
    Ok(())
}

/// Creates `dir` (mode 0700) if needed and checks that it is a directory
/// of the current user that no one else may write.
fn check_dir(dir: &Path) -> Result<(), TrustError> {
    let io = |error| TrustError::Io {
        path: dir.to_owned(),
        error,
    };
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io)?;
    let meta = fs::metadata(dir).map_err(io)?;
    if !meta.is_dir() {
        return Err(TrustError::Unsafe {
            path: dir.to_owned(),
            reason: String::from("not a directory"),
        });
    }
    check_owned(dir, &meta)
}

/// Checks the cache root and its `compiled/` directory, reads (or creates)
/// the key, and removes temporary files left by killed compiles.
pub fn open(root: &Path, compiled: &Path) -> Result<hmac::Key, TrustError> {
    check_dir(root)?;
    check_dir(compiled)?;
    let key = read_or_create_key(&root.join(KEY_FILE))?;
    remove_stale_temps(compiled, STALE_TEMP_AGE);
    Ok(key)
}

/// Reads the key, creating it first if there is none: a new random key is
/// written to a private temporary file that is then linked into place
/// without replacing one another process created meanwhile.
fn read_or_create_key(path: &Path) -> Result<hmac::Key, TrustError> {
    match read_key(path) {
        Err(TrustError::Io { error, .. }) if error.kind() == std::io::ErrorKind::NotFound => {}
        other => return other,
    }
    let io = |error| TrustError::Io {
        path: path.to_owned(),
        error,
    };
    let mut bytes = [0u8; KEY_LEN];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| io(std::io::Error::other("no randomness for a new key")))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    // Temporary files are created with mode 0600.
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    tmp.write_all(&bytes).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    match tmp.persist_noclobber(path) {
        Ok(_) => Ok(hmac::Key::new(hmac::HMAC_SHA256, &bytes)),
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => read_key(path),
        Err(e) => Err(io(e.error)),
    }
}

/// Reads the key file, which must be a private regular file of the current
/// user holding exactly the key.
fn read_key(path: &Path) -> Result<hmac::Key, TrustError> {
    let io = |error| TrustError::Io {
        path: path.to_owned(),
        error,
    };
    let mut file = open_no_follow(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    check_private_file(path, &meta)?;
    let mut bytes = Vec::with_capacity(KEY_LEN);
    (&mut file)
        .take(KEY_LEN as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() != KEY_LEN {
        return Err(TrustError::Unsafe {
            path: path.to_owned(),
            reason: format!("holds {} bytes, not a {KEY_LEN}-byte key", bytes.len()),
        });
    }
    Ok(hmac::Key::new(hmac::HMAC_SHA256, &bytes))
}

fn check_private_file(path: &Path, meta: &fs::Metadata) -> Result<(), TrustError> {
    if !meta.is_file() {
        return Err(TrustError::Unsafe {
            path: path.to_owned(),
            reason: String::from("not a regular file"),
        });
    }
    check_owned(path, meta)?;
    let mode = meta.mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Err(TrustError::Unsafe {
            path: path.to_owned(),
            reason: format!("mode {mode:04o} lets other users read it (want 0600)"),
        });
    }
    Ok(())
}

/// Opens `path` for reading, refusing a symbolic link, and without
/// waiting for a writer if it is a FIFO (callers refuse what is not a
/// regular file).
pub fn open_no_follow(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

/// Removes the `.tmp*` files of `dir` older than `age`: left by a compile
/// that was killed before it could rename its file into place. Younger ones
/// may belong to a compile still running and are kept.
pub fn remove_stale_temps(dir: &Path, age: Duration) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with(".tmp") {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        let old = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_some_and(|elapsed| elapsed >= age);
        if meta.is_file() && old {
            match fs::remove_file(entry.path()) {
                Ok(()) => tracing::debug!("removed stale {}", entry.path().display()),
                Err(e) => tracing::warn!("cannot remove stale {}: {e}", entry.path().display()),
            }
        }
    }
}
