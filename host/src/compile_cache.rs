//! An on-disk cache of compiled components, so a function is compiled by
//! Cranelift once per digest and engine, not once per process.
//!
//! Entries are keyed by the SHA-256 of the component and the engine's
//! compatibility hash, and carry the SHA-256 of their own bytes: a truncated
//! or corrupted entry is detected, deleted and rebuilt. Writes go to a
//! temporary file that is renamed into place, so a crash never leaves a
//! half-written entry.
//!
//! Loading a compiled artifact runs native code: the cache directory must
//! be writable only by the user running xfn (the default is under the
//! user's own cache directory).

use std::fs;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// The environment variable that overrides the cache directory.
pub const CACHE_DIR_ENV: &str = "XFN_CACHE_DIR";

/// A directory of compiled components.
#[derive(Debug, Clone)]
pub struct CompileCache {
    dir: PathBuf,
}

impl CompileCache {
    /// A cache in `dir` (created when first written).
    pub fn new(dir: impl Into<PathBuf>) -> CompileCache {
        CompileCache { dir: dir.into() }
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

    fn entry_path(&self, engine: &Engine, wasm: &[u8]) -> PathBuf {
        let mut hasher = DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        let key = format!("{}-{:016x}", sha256_hex(wasm), hasher.finish());
        self.dir.join("compiled").join(format!("{key}.cwasm"))
    }

    /// Loads the compiled form of `wasm`, compiling and storing it on a miss.
    ///
    /// A cache that can't be written is not an error: the component is
    /// compiled and used anyway, with a warning. An error says why the
    /// component could not be compiled; the caller names the function.
    pub fn load_or_compile(&self, engine: &Engine, wasm: &[u8]) -> Result<Component, String> {
        let path = self.entry_path(engine, wasm);
        let found = self.load(engine, &path);
        crate::metrics::record_compile_cache(found.is_some());
        if let Some(component) = found {
            return Ok(component);
        }
        let compiled = engine
            .precompile_component(wasm)
            .map_err(|e| format!("cannot compile component: {e:#}"))?;
        if let Err(e) = write_entry(&path, &compiled) {
            tracing::warn!("cannot write compile cache entry {}: {e}", path.display());
        }
        // SAFETY: `compiled` was produced by this engine just now.
        unsafe { Component::deserialize(engine, &compiled) }
            .map_err(|e| format!("cannot load compiled component: {e:#}"))
    }

    fn load(&self, engine: &Engine, path: &Path) -> Option<Component> {
        let bytes = fs::read(path).ok()?;
        let Some(body) = verified_body(&bytes) else {
            tracing::warn!(
                "compile cache entry {} is corrupt; rebuilding it",
                path.display()
            );
            let _ = fs::remove_file(path);
            return None;
        };
        // SAFETY: the entry was written by xfn into the user's own cache
        // directory and its checksum matches; wasmtime itself rejects
        // artifacts from another version or configuration.
        match unsafe { Component::deserialize(engine, body) } {
            Ok(component) => Some(component),
            Err(e) => {
                tracing::warn!(
                    "compile cache entry {} is stale ({e}); rebuilding it",
                    path.display()
                );
                let _ = fs::remove_file(path);
                None
            }
        }
    }
}

/// The lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

const CHECKSUM_LEN: usize = 32;

/// An entry is the artifact followed by its SHA-256.
fn verified_body(entry: &[u8]) -> Option<&[u8]> {
    let split = entry.len().checked_sub(CHECKSUM_LEN)?;
    let (body, checksum) = entry.split_at(split);
    (Sha256::digest(body).as_slice() == checksum).then_some(body)
}

fn write_entry(path: &Path, artifact: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(artifact)?;
    tmp.write_all(&Sha256::digest(artifact))?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verified_body_accepts_only_matching_checksums() {
        let mut entry = b"artifact".to_vec();
        entry.extend_from_slice(&Sha256::digest(b"artifact"));
        assert_eq!(verified_body(&entry), Some(&b"artifact"[..]));
        entry[0] ^= 1;
        assert_eq!(verified_body(&entry), None);
        assert_eq!(verified_body(b"short"), None);
    }
}
