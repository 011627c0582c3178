//! Compiled components that ship inside the `xfn` binary.
//!
//! Compiling a component takes seconds (function-patch-and-transform:
//! about 1.7 s), so a render with an empty compile cache, as in every
//! fresh CI job, would cost that much more than a warm one. `xfn
//! precompile-builtins` compiles the built-in functions with the engine
//! xfn runs them on and appends the results to the executable, in a
//! section after the ELF file's own bytes (which the loader never reads):
//!
//! ```text
//! [artifact]… [index: JSON] [index length: u64 LE] [section length: u64 LE] [MAGIC]
//! ```
//!
//! The index maps each component's BLAKE3 hash to its artifact's offset
//! (from the section's start) and length. [`Precompiled::open`] reads only
//! the trailer and the index; an artifact is read when its component is
//! loaded. wasmtime checks an artifact against the engine that loads it
//! (its version, its settings, the CPU's features), and an artifact it
//! refuses, such as one compiled for a newer CPU, is compiled afresh.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt as _;
use std::path::Path;

/// The last bytes of an executable that carries precompiled components.
pub const MAGIC: &[u8; 16] = b"xfn-precompiled1";

/// The trailer: index length, section length, magic.
const TRAILER: u64 = 8 + 8 + MAGIC.len() as u64;

/// The largest index [`Precompiled::open`] reads: 1 MiB (an entry is
/// about 120 bytes).
const MAX_INDEX: u64 = 1 << 20;

/// The largest artifact [`Precompiled::artifact`] reads: 1 GiB.
const MAX_ARTIFACT: u64 = 1 << 30;

/// One artifact's place in the section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Entry {
    offset: u64,
    len: u64,
}

/// The index, as stored.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Index {
    /// Artifacts by the hex BLAKE3 hash of their component.
    entries: std::collections::BTreeMap<String, Entry>,
}

/// The precompiled components of an executable.
#[derive(Debug)]
pub struct Precompiled {
    file: File,
    /// Where the section starts in the file.
    start: u64,
    entries: HashMap<blake3::Hash, Entry>,
}

impl Precompiled {
    /// The precompiled components appended to the executable at `path`:
    /// `Ok(None)` if it carries none, an error if its section is damaged.
    pub fn open(path: &Path) -> Result<Option<Precompiled>, String> {
        let file = File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        let size = file
            .metadata()
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?
            .len();
        let Some(section) = section_bounds(&file, size)? else {
            return Ok(None);
        };
        let (start, index_len) = section;
        let index_at = size - TRAILER - index_len;
        let mut index = vec![0; index_len as usize];
        file.read_exact_at(&mut index, index_at)
            .map_err(|e| format!("cannot read the precompiled index: {e}"))?;
        let index: Index = serde_json::from_slice(&index)
            .map_err(|e| format!("the precompiled index is damaged: {e}"))?;
        let mut entries = HashMap::new();
        for (hex, entry) in index.entries {
            let hash = blake3::Hash::from_hex(&hex)
                .map_err(|e| format!("the precompiled index is damaged: {hex:?}: {e}"))?;
            let end = entry.offset.checked_add(entry.len);
            if end.is_none_or(|end| start + end > index_at) || entry.len > MAX_ARTIFACT {
                return Err(format!(
                    "the precompiled index is damaged: artifact {hex} lies outside its section"
                ));
            }
            entries.insert(hash, entry);
        }
        Ok(Some(Precompiled {
            file,
            start,
            entries,
        }))
    }

    /// How many components it holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The compiled form of the component whose BLAKE3 hash is `hash`, if
    /// it holds one: the executable's pages mapped read-only, not copied
    /// (the loader copies what it needs once, from the page cache).
    pub fn artifact(&self, hash: &blake3::Hash) -> Option<Result<impl AsRef<[u8]>, String>> {
        let entry = self.entries.get(hash)?;
        // SAFETY: a read-only private mapping of the running executable,
        // which no one may write while it runs (the kernel refuses a write
        // to a running executable with ETXTBSY); the mapping is dropped
        // once the artifact is loaded.
        #[allow(unsafe_code)]
        let mapped = unsafe {
            memmap2::MmapOptions::new()
                .offset(self.start + entry.offset)
                .len(entry.len as usize)
                .map(&self.file)
        };
        Some(mapped.map_err(|e| format!("cannot map a precompiled component: {e}")))
    }
}

/// This executable's precompiled components, read once; `None` if it has
/// none, or (with a warning) if they can't be read.
pub fn of_this_executable() -> Option<std::sync::Arc<Precompiled>> {
    static OPENED: std::sync::OnceLock<Option<std::sync::Arc<Precompiled>>> =
        std::sync::OnceLock::new();
    OPENED
        .get_or_init(|| {
            let exe = std::env::current_exe().ok()?;
            match Precompiled::open(&exe) {
                Ok(found) => found.map(std::sync::Arc::new),
                Err(e) => {
                    tracing::warn!("{e}: compiling built-in functions as they are needed");
                    None
                }
            }
        })
        .clone()
}

/// Where an executable's section starts and how long its index is, if it
/// has a section.
fn section_bounds(file: &File, size: u64) -> Result<Option<(u64, u64)>, String> {
    if size < TRAILER {
        return Ok(None);
    }
    let mut trailer = [0u8; TRAILER as usize];
    file.read_exact_at(&mut trailer, size - TRAILER)
        .map_err(|e| format!("cannot read the executable's trailer: {e}"))?;
    if &trailer[16..] != MAGIC {
        return Ok(None);
    }
    let number = |at: usize| {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&trailer[at..at + 8]);
        u64::from_le_bytes(bytes)
    };
    let (index_len, section_len) = (number(0), number(8));
    if index_len > MAX_INDEX
        || section_len > size
        || index_len
            .checked_add(TRAILER)
            .is_none_or(|n| n > section_len)
    {
        return Err(String::from("the precompiled section's trailer is damaged"));
    }
    Ok(Some((size - section_len, index_len)))
}

/// The length of `executable` without a precompiled section (all of it if
/// it has none).
pub fn without_section(executable: &[u8]) -> usize {
    let size = executable.len() as u64;
    if size < TRAILER || &executable[executable.len() - MAGIC.len()..] != MAGIC {
        return executable.len();
    }
    let at = executable.len() - TRAILER as usize + 8;
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&executable[at..at + 8]);
    let section_len = u64::from_le_bytes(bytes);
    if section_len > size {
        return executable.len();
    }
    (size - section_len) as usize
}

/// A component compiled for the section.
#[derive(Debug, Clone)]
pub struct Artifact {
    /// The BLAKE3 hash of the component's bytes.
    pub component: blake3::Hash,
    /// Its compiled form.
    pub compiled: Vec<u8>,
}

/// Compiles components for an engine of a [`crate::HostConfig`], for this
/// architecture's baseline CPU rather than this machine's: an artifact
/// then loads on any CPU of the architecture (an engine that detects more
/// features accepts code that uses fewer), and the same inputs give the
/// same bytes, so an image that ships them stays reproducible.
#[derive(Clone)]
pub struct Compiler {
    engine: wasmtime::Engine,
}

impl Compiler {
    /// A compiler for engines of `config`.
    pub fn new(config: &crate::HostConfig) -> Result<Compiler, crate::Error> {
        let mut settings = crate::engine::wasm_config(config, false);
        settings
            .target(&target_lexicon::Triple::host().to_string())
            .map_err(|e| crate::Error::Engine(format!("cannot target this architecture: {e:#}")))?;
        let engine = wasmtime::Engine::new(&settings)
            .map_err(|e| crate::Error::Engine(format!("cannot build an engine: {e:#}")))?;
        Ok(Compiler { engine })
    }

    /// Compiles the component `wasm`.
    pub fn compile(&self, wasm: &[u8]) -> Result<Artifact, crate::Error> {
        let compiled = self
            .engine
            .precompile_component(wasm)
            .map_err(|e| crate::Error::Engine(format!("cannot compile component: {e:#}")))?;
        Ok(Artifact {
            component: blake3::hash(wasm),
            compiled,
        })
    }
}

/// The section holding `artifacts`, to append to an executable that has
/// none.
pub fn section(artifacts: &[Artifact]) -> Vec<u8> {
    let mut section = Vec::new();
    let mut index = Index::default();
    for Artifact {
        component: hash,
        compiled: artifact,
    } in artifacts
    {
        index.entries.insert(
            hash.to_hex().to_string(),
            Entry {
                offset: section.len() as u64,
                len: artifact.len() as u64,
            },
        );
        section.extend_from_slice(artifact);
    }
    let index = serde_json::to_vec(&index).unwrap_or_default();
    section.extend_from_slice(&index);
    let section_len = section.len() as u64 + TRAILER;
    section.extend_from_slice(&(index.len() as u64).to_le_bytes());
    section.extend_from_slice(&section_len.to_le_bytes());
    section.extend_from_slice(MAGIC);
    section
}

#[cfg(test)]
mod tests {
    use super::*;

    fn executable_with(artifacts: &[(blake3::Hash, Vec<u8>)]) -> (tempfile::TempDir, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        let mut bytes = b"\x7fELF the program".to_vec();
        bytes.extend(section(&artifacts_of(artifacts)));
        std::fs::write(dir.path().join("xfn"), &bytes).unwrap();
        (dir, bytes)
    }

    fn artifacts_of(pairs: &[(blake3::Hash, Vec<u8>)]) -> Vec<Artifact> {
        pairs
            .iter()
            .map(|(component, compiled)| Artifact {
                component: *component,
                compiled: compiled.clone(),
            })
            .collect()
    }

    #[test]
    fn artifacts_round_trip_by_their_component_hash() {
        let (a, b) = (blake3::hash(b"a"), blake3::hash(b"b"));
        let (dir, bytes) = executable_with(&[(a, vec![1; 10]), (b, vec![2; 3])]);
        let found = Precompiled::open(&dir.path().join("xfn")).unwrap().unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(found.artifact(&a).unwrap().unwrap().as_ref(), [1; 10]);
        assert_eq!(found.artifact(&b).unwrap().unwrap().as_ref(), [2; 3]);
        assert!(found.artifact(&blake3::hash(b"c")).is_none());
        assert_eq!(&bytes[..without_section(&bytes)], b"\x7fELF the program");
    }

    #[test]
    fn an_executable_without_a_section_has_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("xfn");
        std::fs::write(&path, b"\x7fELF").unwrap();
        assert!(Precompiled::open(&path).unwrap().is_none());
        assert_eq!(without_section(b"\x7fELF"), 4);
    }

    #[test]
    fn a_damaged_section_is_an_error_not_a_wrong_read() {
        let a = blake3::hash(b"a");
        let (dir, mut bytes) = executable_with(&[(a, vec![1; 10])]);
        let path = dir.path().join("xfn");
        // A section longer than the file.
        let at = bytes.len() - MAGIC.len() - 8;
        bytes[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let err = Precompiled::open(&path).unwrap_err();
        assert!(err.contains("trailer is damaged"), "{err}");
        // An entry pointing past its section.
        let mut section = section(&artifacts_of(&[(a, vec![1; 10])]));
        let at = section
            .windows(9)
            .position(|w| w == b"\"len\":10}")
            .expect("the entry's length");
        section[at..at + 9].copy_from_slice(b"\"len\":99}");
        let mut bytes = b"\x7fELF".to_vec();
        bytes.extend(section);
        std::fs::write(&path, &bytes).unwrap();
        let err = Precompiled::open(&path).unwrap_err();
        assert!(err.contains("outside its section"), "{err}");
    }
}
