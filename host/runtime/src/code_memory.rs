//! How compiled code is made executable, so that it can be used where it
//! lies instead of being copied into the heap first.
//!
//! wasmtime copies a compiled component handed to it as bytes into fresh
//! anonymous memory: every page of it written, resident and private to the
//! process (4.4 MiB for function-patch-and-transform, about a third of a
//! warm render's time). It maps a compile-cache file instead when given the
//! file, but the built-in functions precompiled into the executable lie in
//! the executable itself, at an offset: wasmtime can take such memory only
//! as "externally owned", and makes it executable only through a
//! [`CustomCodeMemory`]. [`CodeProtection`] is that hook, and
//! [`check_out`] lends a read-only mapping of a range of a file, for
//! `Component::deserialize_raw`.
//!
//! A mapping is never unmapped: wasmtime gives no sign when it is done with
//! externally owned memory other than unpublishing it, while its code is
//! being dropped. Unpublished, the mapping is free again, and the next load
//! of the same range takes it. Each component gets a mapping of its own,
//! because wasmtime keys its registry of running code by address: two
//! components loaded from one mapping at once (two engines, as in an `xfn
//! serve` reload) would collide. So a range has as many mappings as it
//! ever had components alive at once.

use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::MetadataExt as _;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use wasmtime::CustomCodeMemory;

/// Publishes code with `mprotect`, as wasmtime itself does; unpublishing
/// a lent mapping gives it back (see [`check_out`]).
#[derive(Debug, Default)]
pub(crate) struct CodeProtection {
    _private: (),
}

/// A range of a file: device, inode, start and end.
type RangeKey = (u64, u64, u64, u64);

fn range_key(file: &File, range: &Range<u64>) -> std::io::Result<RangeKey> {
    let meta = file.metadata()?;
    Ok((meta.dev(), meta.ino(), range.start, range.end))
}

/// One mapping [`check_out`] made.
struct Region {
    key: RangeKey,
    bytes: &'static [u8],
    /// Whether a component holds it (from its check-out until wasmtime
    /// unpublishes its code).
    in_use: bool,
}

impl Region {
    fn contains(&self, ptr: usize) -> bool {
        let start = self.bytes.as_ptr() as usize;
        start <= ptr && ptr < start + self.bytes.len()
    }
}

/// Every mapping [`check_out`] made.
fn regions() -> &'static Mutex<Vec<Region>> {
    static REGIONS: OnceLock<Mutex<Vec<Region>>> = OnceLock::new();
    REGIONS.get_or_init(Mutex::default)
}

/// Marks the region holding `ptr` free, after `before` (which runs only
/// if there is one); whether there was one.
fn give_back(ptr: usize, before: impl FnOnce() -> wasmtime::Result<()>) -> wasmtime::Result<bool> {
    let mut regions = regions().lock().unwrap_or_else(PoisonError::into_inner);
    let Some(region) = regions.iter_mut().find(|r| r.contains(ptr)) else {
        return Ok(false);
    };
    before()?;
    region.in_use = false;
    Ok(true)
}

/// The process's code protection, shared by every engine.
pub(crate) fn protection() -> Arc<dyn CustomCodeMemory> {
    static SHARED: OnceLock<Arc<CodeProtection>> = OnceLock::new();
    SHARED.get_or_init(Arc::default).clone()
}

/// The system's page size.
pub(crate) fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    #[allow(unsafe_code)]
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size)
        .ok()
        .filter(|s| *s > 0)
        .unwrap_or(4096)
}

fn protect(ptr: *const u8, len: usize, prot: libc::c_int) -> wasmtime::Result<()> {
    // SAFETY: wasmtime hands over a page-aligned range of code memory it
    // owns or that `check_out` lent it, and runs no code from it while it
    // is not executable.
    #[allow(unsafe_code)]
    let status = unsafe { libc::mprotect(ptr as *mut libc::c_void, len, prot) };
    if status == 0 {
        Ok(())
    } else {
        Err(wasmtime::Error::msg(format!(
            "cannot change the protection of compiled code: {}",
            std::io::Error::last_os_error()
        )))
    }
}

impl CustomCodeMemory for CodeProtection {
    fn required_alignment(&self) -> usize {
        page_size()
    }

    fn publish_executable(&self, ptr: *const u8, len: usize) -> wasmtime::Result<()> {
        // As wasmtime's own publishing does: code just written as data
        // (compiled, or copied) must reach the instruction caches before
        // it runs, and every core's pipeline must drop what it fetched.
        // Both are no-ops where the caches are coherent, as on x86-64.
        // SAFETY: `ptr..ptr + len` is code memory wasmtime hands over.
        #[allow(unsafe_code)]
        unsafe {
            wasmtime_internal_jit_icache_coherence::clear_cache(ptr.cast(), len)?;
        }
        protect(ptr, len, libc::PROT_READ | libc::PROT_EXEC)?;
        wasmtime_internal_jit_icache_coherence::pipeline_flush_mt()?;
        Ok(())
    }

    fn unpublish_executable(&self, ptr: *const u8, len: usize) -> wasmtime::Result<()> {
        // wasmtime unpublishes code as it drops it, after taking it out of
        // its registry: a lent mapping is then free for the next load.
        if give_back(ptr as usize, || protect(ptr, len, libc::PROT_READ))? {
            return Ok(());
        }
        protect(ptr, len, libc::PROT_READ | libc::PROT_WRITE)
    }
}

/// A read-only mapping of a range of a file, lent to one component.
///
/// Dropped, it is free again for the next load, unless it was handed over
/// to the component ([`Lease::hand_over`]), which gives it back when
/// wasmtime drops its code.
pub(crate) struct Lease {
    bytes: &'static [u8],
    handed_over: bool,
}

impl Lease {
    /// The mapped bytes.
    pub(crate) fn bytes(&self) -> &'static [u8] {
        self.bytes
    }

    /// Says that a component now holds the mapping.
    pub(crate) fn hand_over(mut self) {
        self.handed_over = true;
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if !self.handed_over {
            let _ = give_back(self.bytes.as_ptr() as usize, || Ok(()));
        }
    }
}

/// Lends a read-only mapping of `range` of `file`: one that an earlier
/// component gave back, or a new one. `range` must start on a page
/// boundary.
///
/// The file must not change while the process runs: the running executable
/// qualifies, since the kernel refuses writes to it (`ETXTBSY`).
pub(crate) fn check_out(file: &File, range: Range<u64>) -> Result<Lease, String> {
    let len = usize::try_from(range.end.saturating_sub(range.start))
        .map_err(|_| String::from("the region is too large to map"))?;
    if !range.start.is_multiple_of(page_size() as u64) {
        return Err(format!("the region at {} is not page-aligned", range.start));
    }
    if len == 0 {
        return Err(String::from("the region is empty"));
    }
    let key = range_key(file, &range).map_err(|e| format!("cannot read the file to map: {e}"))?;
    let mut regions = regions().lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(free) = regions.iter_mut().find(|r| r.key == key && !r.in_use) {
        free.in_use = true;
        return Ok(Lease {
            bytes: free.bytes,
            handed_over: false,
        });
    }
    // SAFETY: a read-only private mapping of a file that no one writes
    // while the process runs (see above).
    #[allow(unsafe_code)]
    let mapped = unsafe {
        memmap2::MmapOptions::new()
            .offset(range.start)
            .len(len)
            .map(file)
    }
    .map_err(|e| format!("cannot map compiled code: {e}"))?;
    let bytes: &'static [u8] = Box::leak(Box::new(mapped));
    regions.push(Region {
        key,
        bytes,
        in_use: true,
    });
    Ok(Lease {
        bytes,
        handed_over: false,
    })
}

/// How many mappings of `range` of `file` exist, and how many of them are
/// lent.
#[cfg(test)]
fn mappings_of(file: &File, range: Range<u64>) -> (usize, usize) {
    let key = range_key(file, &range).unwrap();
    let regions = regions().lock().unwrap();
    let of: Vec<_> = regions.iter().filter(|r| r.key == key).collect();
    (of.len(), of.iter().filter(|r| r.in_use).count())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write as _;
    use std::path::Path;

    use wasm_encoder::{
        CodeSection, FunctionSection, InstanceSection, Module, ModuleArg, ModuleSection,
        StartSection, TypeSection,
    };
    use wasmtime::component::{Component, Linker};

    use crate::{HostConfig, HostEngine};

    /// A component whose one core module has a start function: running it
    /// runs compiled code.
    pub(crate) fn with_code() -> Vec<u8> {
        let mut types = TypeSection::new();
        types.ty().function([], []);
        let mut functions = FunctionSection::new();
        functions.function(0);
        let mut code = CodeSection::new();
        let mut body = wasm_encoder::Function::new([]);
        body.instruction(&wasm_encoder::Instruction::End);
        code.function(&body);
        let mut module = Module::new();
        module
            .section(&types)
            .section(&functions)
            .section(&StartSection { function_index: 0 })
            .section(&code);
        component_of(&module)
    }

    /// A component that instantiates `module` once.
    pub(crate) fn component_of(module: &Module) -> Vec<u8> {
        let mut component = wasm_encoder::Component::new();
        component.section(&ModuleSection(module));
        let mut instances = InstanceSection::new();
        instances.instantiate(0, Vec::<(&str, ModuleArg)>::new());
        component.section(&instances);
        component.finish()
    }

    /// Whether `range` lies in mappings of the file at `path` (one per
    /// protection), by `/proc/self/maps`.
    pub(crate) fn mapped_from(path: &Path, range: std::ops::Range<*const u8>) -> bool {
        let path = path.canonicalize().unwrap();
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let mut of_file: Vec<(usize, usize)> = maps
            .lines()
            .filter_map(|line| {
                let mut fields = line.split_whitespace();
                let (from, to) = fields.next()?.split_once('-')?;
                let file = fields.nth(4)?;
                (Path::new(file) == path).then_some((
                    usize::from_str_radix(from, 16).ok()?,
                    usize::from_str_radix(to, 16).ok()?,
                ))
            })
            .collect();
        of_file.sort();
        let mut covered = range.start as usize;
        for (from, to) in of_file {
            if from <= covered && covered < to {
                covered = to;
            }
        }
        covered >= range.end as usize
    }

    /// Instantiates `component`, which runs its start function.
    pub(crate) fn run(engine: &HostEngine, component: &Component) {
        let mut store = wasmtime::Store::new(engine.engine(), ());
        store.set_epoch_deadline(1 << 40);
        let linker = Linker::<()>::new(engine.engine());
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(linker.instantiate_async(&mut store, component))
            .expect("instantiates, running its start function");
    }

    #[test]
    fn a_precompiled_component_runs_from_the_executable_s_pages() {
        let config = HostConfig {
            max_concurrent_calls: 2,
            ..HostConfig::default()
        };
        let wasm = with_code();
        // Compiled as `Compiler` does, without its check that this is a
        // function.
        let compiler = wasmtime::Engine::new(&crate::engine::wasm_config(&config, false)).unwrap();
        let artifact = crate::precompiled::Artifact {
            component: blake3::hash(&wasm),
            builtin: None,
            compiled: compiler.precompile_component(&wasm).unwrap(),
        };
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("xfn");
        let mut bytes = b"\x7fELF".to_vec();
        bytes.extend(crate::precompiled::section(&[artifact], bytes.len() as u64));
        std::fs::write(&exe, &bytes).unwrap();
        let precompiled = crate::precompiled::Precompiled::open(&exe)
            .unwrap()
            .unwrap();
        // Two engines load it from the one mapping; one dropping its copy
        // leaves the code runnable for the other.
        let engines = [(); 2].map(|()| HostEngine::new(config.clone()).unwrap());
        let components = engines.each_ref().map(|engine| {
            let artifact = precompiled.artifact(&blake3::hash(&wasm)).unwrap().unwrap();
            // SAFETY: the test's own artifact, lent to this component.
            #[allow(unsafe_code)]
            let component = unsafe {
                Component::deserialize_raw(
                    engine.engine(),
                    std::ptr::NonNull::from(artifact.bytes()),
                )
            }
            .unwrap();
            artifact.hand_over();
            assert!(
                mapped_from(&exe, component.image_range()),
                "not run where it lies"
            );
            component
        });
        let [first, second] = components;
        run(&engines[0], &first);
        run(&engines[1], &second);
        drop(first);
        run(&engines[1], &second);
    }

    #[test]
    fn a_mapping_is_lent_to_one_component_at_a_time() {
        let page = page_size();
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&vec![0xc3; 3 * page]).unwrap();
        let range = page as u64..3 * page as u64;
        let first = check_out(&file, range.clone()).unwrap();
        assert_eq!(first.bytes().len(), 2 * page);
        assert!(first.bytes().iter().all(|b| *b == 0xc3));
        let at = first.bytes().as_ptr();
        first.hand_over();
        // Held: the next load gets a mapping of its own.
        let second = check_out(&file, range.clone()).unwrap();
        assert_ne!(second.bytes().as_ptr(), at);
        assert_eq!(mappings_of(&file, range.clone()), (2, 2));
        // A lease dropped before a component took it is free again.
        drop(second);
        assert_eq!(mappings_of(&file, range.clone()), (2, 1));
        // Unpublished by wasmtime: free again, and not executable.
        let protection = CodeProtection::default();
        protection.publish_executable(at, page).unwrap();
        protection.unpublish_executable(at, page).unwrap();
        assert_eq!(mappings_of(&file, range.clone()), (2, 0));
        let again = check_out(&file, range.clone()).unwrap();
        assert_eq!(
            mappings_of(&file, range),
            (2, 1),
            "a free mapping is reused"
        );
        drop(again);
    }

    #[test]
    fn an_unaligned_region_is_refused() {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&[0; 8192]).unwrap();
        let err = check_out(&file, 1..100).err().unwrap();
        assert!(err.contains("not page-aligned"), "{err}");
    }
}
