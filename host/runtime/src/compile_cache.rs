//! An on-disk cache of compiled components, so a function is compiled by
//! Cranelift once per digest and engine, not once per process.
//!
//! Entries are keyed by the BLAKE3 hash of the component and the engine's
//! compatibility hash, and carry an HMAC-SHA256 of their name and the
//! BLAKE3 hash of their bytes under a per-user key (see [`trust`]): a
//! truncated, corrupted or tampered entry is detected and rebuilt. BLAKE3,
//! not SHA-256, hashes the megabytes: measured on a warm `xfn render`,
//! SHA-256 of the component and the artifact was a quarter of its CPU.
//! Writes go to a temporary file that is renamed into place, so a crash
//! never leaves a half-written entry, and temporary files left by a killed
//! compile are removed when the cache is first used.
//!
//! A loaded entry is mapped, not read: its code runs from the file's
//! pages. Entries are only ever replaced whole (renamed into place) or
//! removed, both of which leave a mapped file intact; never written in
//! place, which would change code under a running function.
//!
//! Loading a compiled artifact runs native code: a cache directory that
//! other users may write, or an entry not owned by the user, is never
//! loaded from; xfn then compiles without the cache and says why.

mod trust;

use std::fs;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use ring::hmac;
use wasmtime::Engine;
use wasmtime::component::Component;

pub use trust::TrustError;

/// The environment variable that overrides the cache directory.
pub const CACHE_DIR_ENV: &str = "XFN_CACHE_DIR";

/// A directory of compiled components.
#[derive(Debug, Clone)]
pub struct CompileCache {
    dir: PathBuf,
    /// The entry key once the directory was checked, or why it can't be used.
    state: Arc<OnceLock<Option<KeyHolder>>>,
}

/// The HMAC key (a newtype: `hmac::Key` has no `Debug` worth printing).
struct KeyHolder(hmac::Key);

impl std::fmt::Debug for KeyHolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeyHolder(..)")
    }
}

impl CompileCache {
    /// A cache in `dir` (created and checked when first used).
    pub fn new(dir: impl Into<PathBuf>) -> CompileCache {
        CompileCache {
            dir: dir.into(),
            state: Arc::new(OnceLock::new()),
        }
    }

    /// The default: `$XFN_CACHE_DIR`, else `<user cache dir>/xfn`
    /// (`~/.cache/xfn` on Linux).
    pub fn default_dir() -> Option<PathBuf> {
        if let Some(dir) = std::env::var_os(CACHE_DIR_ENV).filter(|d| !d.is_empty()) {
            return Some(PathBuf::from(dir));
        }
        dirs::cache_dir().map(|d| d.join("xfn"))
    }

    /// The cache's root directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn compiled_dir(&self) -> PathBuf {
        self.dir.join("compiled")
    }

    /// Checks the directory once (see [`trust`]): the key when the cache
    /// may be used, `None` (with a warning) when it may not.
    fn key(&self) -> Option<&hmac::Key> {
        self.state
            .get_or_init(|| match trust::open(&self.dir, &self.compiled_dir()) {
                Ok(key) => Some(KeyHolder(key)),
                Err(e) => {
                    tracing::warn!("not using the compile cache: {e}; compiling without it");
                    None
                }
            })
            .as_ref()
            .map(|k| &k.0)
    }

    #[cfg(test)]
    fn entry_path(&self, engine: &Engine, wasm: &[u8]) -> PathBuf {
        self.entry_path_of(engine, &blake3::hash(wasm))
    }

    /// The entry of the component whose BLAKE3 hash is `hash`.
    fn entry_path_of(&self, engine: &Engine, hash: &blake3::Hash) -> PathBuf {
        let mut hasher = DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        let key = format!("{}-{:016x}", hash.to_hex(), hasher.finish());
        self.compiled_dir().join(format!("{key}.cwasm"))
    }

    /// Loads the compiled form of `wasm`, compiling and storing it on a miss.
    ///
    /// A cache that can't be trusted or written is not an error: the
    /// component is compiled and used anyway, with a warning. An error says
    /// why the component could not be compiled; the caller names the
    /// function.
    pub fn load_or_compile(&self, engine: &Engine, wasm: &[u8]) -> Result<Component, String> {
        let hash = blake3::hash(wasm);
        match self.load_hashed(engine, &hash)? {
            Some(component) => Ok(component),
            None => self.compile_hashed(engine, wasm, &hash),
        }
    }

    /// The compiled form of the component whose BLAKE3 hash is `hash`, if
    /// the cache holds one for `engine`; never compiles. A corrupt or
    /// tampered entry is removed, and is not there.
    pub fn load_hashed(
        &self,
        engine: &Engine,
        hash: &blake3::Hash,
    ) -> Result<Option<Component>, String> {
        let Some(key) = self.key() else {
            return Ok(None);
        };
        load(engine, key, &self.entry_path_of(engine, hash))
    }

    /// Compiles `wasm`, whose BLAKE3 hash is `hash`, for `engine`, and
    /// stores it: for a caller that found no entry with
    /// [`CompileCache::load_hashed`]. Where it can't be stored, the
    /// component is used anyway, with a warning.
    pub fn compile_hashed(
        &self,
        engine: &Engine,
        wasm: &[u8],
        hash: &blake3::Hash,
    ) -> Result<Component, String> {
        let Some(key) = self.key() else {
            return compile_in_memory(engine, wasm);
        };
        let path = self.entry_path_of(engine, hash);
        let compiled = engine
            .precompile_component(wasm)
            .map_err(|e| format!("cannot compile component: {e:#}"))?;
        // Stored, then run from the stored file (mapped, not copied): the
        // kernel shares and evicts its pages. Where it can't be stored, run
        // from a copy in memory.
        if let Err(e) = write_entry(key, &path, &compiled) {
            tracing::warn!("cannot write compile cache entry {}: {e}", path.display());
        } else {
            return open_verified(engine, key, &path);
        }
        // SAFETY: `compiled` was produced by this engine just now.
        #[allow(unsafe_code)]
        unsafe { Component::deserialize(engine, &compiled) }
            .map_err(|e| format!("cannot load compiled component: {e:#}"))
    }
}

/// Compiles `wasm` for `engine`, keeping the code in memory only.
pub(crate) fn compile_in_memory(engine: &Engine, wasm: &[u8]) -> Result<Component, String> {
    Component::new(engine, wasm).map_err(|e| format!("cannot compile component: {e:#}"))
}

/// The component of a cache entry, if the entry is there, is the user's,
/// and carries a valid MAC. A corrupt or tampered entry is removed. An
/// entry that this engine can't load is an error, and is left in place:
/// the reason may have nothing to do with the entry (such as a memory
/// limit), and compiling again would give the same artifact.
///
/// The entry is mapped, not read: checking its MAC reads its pages from
/// the page cache, and wasmtime then maps the same file and runs the code
/// where it lies. (wasmtime ignores the MAC after the artifact: it reads
/// the artifact's ELF by its own offsets.)
fn load(engine: &Engine, key: &hmac::Key, path: &Path) -> Result<Option<Component>, String> {
    let verified = match verify_entry(key, path) {
        Ok(Some(verified)) => verified,
        Ok(None) => return Ok(None),
        Err(e) => {
            tracing::warn!("not using compile cache entry {e}; compiling afresh");
            return Ok(None);
        }
    };
    if !verified {
        tracing::warn!(
            "compile cache entry {} is corrupt or was tampered with; rebuilding it",
            path.display()
        );
        let _ = fs::remove_file(path);
        return Ok(None);
    }
    open_verified(engine, key, path).map(Some)
}

/// The component of the entry at `path`, whose MAC was checked (or which
/// xfn just wrote): mapped from the file, or, where the file can't be
/// mapped, loaded from a copy checked again.
fn open_verified(engine: &Engine, key: &hmac::Key, path: &Path) -> Result<Component, String> {
    // SAFETY: the entry carries a MAC under the user's own key, in a
    // directory only the user can write, so xfn wrote it, and entries are
    // only ever replaced whole (renamed into place), never written in
    // place; wasmtime itself rejects artifacts from another version or
    // configuration.
    #[allow(unsafe_code)]
    let mapped = unsafe { Component::deserialize_file(engine, path) };
    let error = match mapped {
        Ok(component) => return Ok(component),
        Err(error) => error,
    };
    // A file system that can't map files: load a copy, checked again.
    if let Ok(bytes) = fs::read(path)
        && let Some(body) = verified_body(key, &entry_name(path), &bytes)
    {
        // SAFETY: as above.
        #[allow(unsafe_code)]
        if let Ok(component) = unsafe { Component::deserialize(engine, body) } {
            return Ok(component);
        }
    }
    Err(format!("cannot load compiled component: {error:#}"))
}

/// Whether the entry at `path` carries a valid MAC, `None` if there is no
/// entry. An entry that is not a regular file of the current user is an
/// error.
fn verify_entry(key: &hmac::Key, path: &Path) -> Result<Option<bool>, TrustError> {
    let io = |error| TrustError::Io {
        path: path.to_owned(),
        error,
    };
    let file = match trust::open_no_follow(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(TrustError::Unsafe {
            path: path.to_owned(),
            reason: String::from("not a regular file"),
        });
    }
    trust::check_owned(path, &meta)?;
    if meta.len() == 0 {
        return Ok(Some(false));
    }
    // SAFETY: a read-only mapping of the user's own entry, which xfn never
    // writes in place (see `load`), dropped before this returns.
    #[allow(unsafe_code)]
    let mapped = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
    Ok(Some(
        verified_body(key, &entry_name(path), &mapped).is_some(),
    ))
}

const MAC_LEN: usize = 32;

fn entry_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// What the MAC covers: the entry's name (so entries can't be swapped) and
/// the BLAKE3 hash of its artifact.
fn mac_input(name: &str, artifact: &[u8]) -> Vec<u8> {
    let mut input = name.as_bytes().to_vec();
    input.push(0);
    input.extend_from_slice(blake3::hash(artifact).as_bytes());
    input
}

/// An entry is the artifact followed by its MAC.
fn verified_body<'a>(key: &hmac::Key, name: &str, entry: &'a [u8]) -> Option<&'a [u8]> {
    let split = entry.len().checked_sub(MAC_LEN)?;
    let (body, mac) = entry.split_at(split);
    hmac::verify(key, &mac_input(name, body), mac)
        .ok()
        .map(|()| body)
}

fn write_entry(key: &hmac::Key, path: &Path, artifact: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(artifact)?;
    tmp.write_all(hmac::sign(key, &mac_input(&entry_name(path), artifact)).as_ref())?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests;
