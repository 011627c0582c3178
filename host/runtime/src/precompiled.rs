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
//! (from the section's start) and length. Each artifact starts at a file
//! offset that is a multiple of [`ALIGN`], so it can be mapped where it
//! lies and run from there (see [`crate::code_memory`]): its pages are the
//! executable's own, shared with every other xfn process and never copied.
//! [`Precompiled::open`] reads only the trailer and the index; an artifact
//! is mapped when its component is loaded. wasmtime checks an artifact
//! against the engine that loads it (its version, its settings, the CPU's
//! features), and an artifact it refuses, such as one compiled for a newer
//! CPU, is compiled afresh.

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

/// The largest artifact [`Precompiled::artifact`] maps: 1 GiB.
const MAX_ARTIFACT: u64 = 1 << 30;

/// Where artifacts start in the file: on a multiple of 64 KiB, the largest
/// page size of the architectures xfn runs on.
pub const ALIGN: u64 = 64 << 10;

/// One artifact's place in the section.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Entry {
    offset: u64,
    len: u64,
    /// The built-in function it is the compiled form of, if it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    builtin: Option<String>,
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
    /// The built-in components this executable embeds, by address, with
    /// the hash the section gives them (see [`Precompiled::builtin_hash`]).
    builtins: HashMap<(usize, usize), blake3::Hash>,
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
            builtins: HashMap::new(),
        }))
    }

    /// The same, knowing the built-in components the executable embeds
    /// (name and bytes): a built-in whose artifact the section holds is
    /// then known by address (see [`Precompiled::builtin_hash`]).
    pub fn with_builtins(
        mut self,
        builtins: impl IntoIterator<Item = (&'static str, &'static [u8])>,
    ) -> Precompiled {
        let by_name: HashMap<&str, blake3::Hash> = self
            .entries
            .iter()
            .filter_map(|(hash, entry)| Some((entry.builtin.as_deref()?, *hash)))
            .collect();
        let known: Vec<_> = builtins
            .into_iter()
            .filter_map(|(name, bytes)| {
                Some(((bytes.as_ptr() as usize, bytes.len()), *by_name.get(name)?))
            })
            .collect();
        self.builtins.extend(known);
        self
    }

    /// The BLAKE3 hash of `bytes` if they are a built-in component this
    /// executable embeds and the section holds its artifact, without
    /// hashing them (a quarter of a millisecond for
    /// function-patch-and-transform, on every render): `xfn
    /// precompile-builtins` hashed the same bytes of the same executable,
    /// and checked that the sandbox runs them.
    pub fn builtin_hash(&self, bytes: &[u8]) -> Option<blake3::Hash> {
        self.builtins
            .get(&(bytes.as_ptr() as usize, bytes.len()))
            .copied()
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
    /// it holds one: the executable's pages, mapped read-only and lent to
    /// the one component that will run from them (see
    /// [`crate::code_memory`]), so that wasmtime runs the code where it
    /// lies.
    pub(crate) fn artifact(
        &self,
        hash: &blake3::Hash,
    ) -> Option<Result<crate::code_memory::Lease, String>> {
        let entry = self.entries.get(hash)?;
        let at = self.start + entry.offset;
        Some(
            crate::code_memory::check_out(&self.file, at..at + entry.len)
                .map_err(|e| format!("cannot map a precompiled component: {e}")),
        )
    }
}

/// The built-in components this executable embeds, by name, as
/// [`embedded_builtins`] said.
static EMBEDDED: std::sync::OnceLock<Vec<(&'static str, &'static [u8])>> =
    std::sync::OnceLock::new();

/// Says which built-in components this executable embeds, before
/// [`of_this_executable`] is first called (the `xfn` binary does so first
/// thing): a built-in it carries precompiled is then known by address (see
/// [`Precompiled::with_builtins`]). Only the first call counts.
pub fn embedded_builtins(builtins: impl IntoIterator<Item = (&'static str, &'static [u8])>) {
    let _ = EMBEDDED.set(builtins.into_iter().collect());
}

/// This executable's precompiled components, read once, knowing the
/// built-ins it embeds (see [`embedded_builtins`]); `None` if it has none,
/// or (with a warning) if they can't be read.
pub fn of_this_executable() -> Option<std::sync::Arc<Precompiled>> {
    static OPENED: std::sync::OnceLock<Option<std::sync::Arc<Precompiled>>> =
        std::sync::OnceLock::new();
    OPENED
        .get_or_init(|| {
            let exe = std::env::current_exe().ok()?;
            let builtins = EMBEDDED.get().into_iter().flatten().copied();
            match Precompiled::open(&exe) {
                Ok(found) => found.map(|p| std::sync::Arc::new(p.with_builtins(builtins))),
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
    /// The built-in function it is, if it is one.
    pub builtin: Option<String>,
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

    /// Compiles the component `wasm`, the built-in function `builtin` if
    /// it is one. A component the sandbox would not run is refused here,
    /// as loading it would be.
    pub fn compile(&self, wasm: &[u8], builtin: Option<&str>) -> Result<Artifact, crate::Error> {
        crate::local_module::check_component(wasm).map_err(crate::Error::Engine)?;
        let compiled = self
            .engine
            .precompile_component(wasm)
            .map_err(|e| crate::Error::Engine(format!("cannot compile component: {e:#}")))?;
        Ok(Artifact {
            component: blake3::hash(wasm),
            builtin: builtin.map(str::to_owned),
            compiled,
        })
    }
}

/// The section holding `artifacts`, to append to an executable of
/// `executable_len` bytes that has none. Each artifact is padded to start
/// at a file offset that is a multiple of [`ALIGN`].
pub fn section(artifacts: &[Artifact], executable_len: u64) -> Vec<u8> {
    let mut section = Vec::new();
    let mut index = Index::default();
    for Artifact {
        component: hash,
        builtin,
        compiled: artifact,
    } in artifacts
    {
        let at = executable_len + section.len() as u64;
        section.resize(
            section.len() + (at.next_multiple_of(ALIGN) - at) as usize,
            0,
        );
        index.entries.insert(
            hash.to_hex().to_string(),
            Entry {
                offset: section.len() as u64,
                len: artifact.len() as u64,
                builtin: builtin.clone(),
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
        bytes.extend(section(&artifacts_of(artifacts), bytes.len() as u64));
        std::fs::write(dir.path().join("xfn"), &bytes).unwrap();
        (dir, bytes)
    }

    fn artifacts_of(pairs: &[(blake3::Hash, Vec<u8>)]) -> Vec<Artifact> {
        pairs
            .iter()
            .map(|(component, compiled)| Artifact {
                component: *component,
                builtin: None,
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
        assert_eq!(found.artifact(&a).unwrap().unwrap().bytes(), [1; 10]);
        assert_eq!(found.artifact(&b).unwrap().unwrap().bytes(), [2; 3]);
        // Each where the file has it, on an aligned offset.
        for (hash, artifact) in [(a, &[1u8; 10][..]), (b, &[2; 3])] {
            let at = found.start + found.entries[&hash].offset;
            assert!(at.is_multiple_of(ALIGN));
            assert_eq!(&bytes[at as usize..][..artifact.len()], artifact);
        }
        assert!(found.artifact(&blake3::hash(b"c")).is_none());
        assert_eq!(&bytes[..without_section(&bytes)], b"\x7fELF the program");
    }

    #[test]
    fn a_builtin_is_known_by_its_address_not_its_bytes() {
        static PT: &[u8] = b"the built-in component";
        let hash = blake3::hash(PT);
        let dir = tempfile::tempdir().unwrap();
        let mut bytes = b"\x7fELF".to_vec();
        let artifact = Artifact {
            component: hash,
            builtin: Some("function-pt".into()),
            compiled: vec![7; 5],
        };
        bytes.extend(section(&[artifact], bytes.len() as u64));
        std::fs::write(dir.path().join("xfn"), &bytes).unwrap();
        let open = || Precompiled::open(&dir.path().join("xfn")).unwrap().unwrap();
        let known = open().with_builtins([("function-pt", PT), ("function-other", &b"x"[..])]);
        assert_eq!(known.builtin_hash(PT), Some(hash));
        // The same bytes elsewhere are hashed as any component is.
        let copy = PT.to_vec();
        assert_eq!(known.builtin_hash(copy.as_slice()), None);
        assert_eq!(known.builtin_hash(b"x"), None, "no artifact for it");
        // A built-in of another name is not this one.
        let other = open().with_builtins([("function-other", PT)]);
        assert_eq!(other.builtin_hash(PT), None);
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
        let mut section = section(&artifacts_of(&[(a, vec![1; 10])]), 4);
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
