use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::time::SystemTime;

use wasm_encoder::{
    ComponentImportSection, ComponentTypeRef, ComponentTypeSection, InstanceType, MemorySection,
    MemoryType, Module,
};

use super::trust::{KEY_FILE, STALE_TEMP_AGE};
use super::*;
use crate::{HostConfig, HostEngine};

/// A component that imports nothing and does nothing.
fn plain() -> Vec<u8> {
    wasm_encoder::Component::new().finish()
}

/// A different component, told apart by its one import.
fn intruder() -> Vec<u8> {
    let mut component = wasm_encoder::Component::new();
    let mut types = ComponentTypeSection::new();
    types.instance(&InstanceType::new());
    component.section(&types);
    let mut imports = ComponentImportSection::new();
    imports.import("evil:pkg/iface", ComponentTypeRef::Instance(0));
    component.section(&imports);
    component.finish()
}

/// A component with one core instance holding a one-page memory.
fn with_memory() -> Vec<u8> {
    let mut memories = MemorySection::new();
    memories.memory(MemoryType {
        minimum: 1,
        maximum: None,
        memory64: false,
        shared: false,
        page_size_log2: None,
    });
    let mut module = Module::new();
    module.section(&memories);
    crate::code_memory::tests::component_of(&module)
}

fn imports(engine: &Engine, component: &Component) -> usize {
    component.component_type().imports(engine).count()
}

/// The one `.cwasm` entry of the cache.
fn only_entry(cache: &CompileCache) -> PathBuf {
    let entries: Vec<PathBuf> = fs::read_dir(cache.compiled_dir())
        .expect("compiled/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "cwasm"))
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    entries[0].clone()
}

/// What the previous format (artifact + plain SHA-256) accepted: another
/// component's artifact with its checksum recomputed.
fn plant_with_checksum(engine: &Engine, path: &Path) {
    let mut forged = engine.precompile_component(&intruder()).expect("compiles");
    let checksum = <sha2::Sha256 as sha2::Digest>::digest(&forged);
    forged.extend_from_slice(&checksum);
    fs::write(path, forged).expect("plant");
}

#[test]
fn an_entry_is_reused_and_carries_a_mac() {
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = Engine::default();
    let cache = CompileCache::new(dir.path());
    cache.load_or_compile(&engine, &plain()).expect("compiles");
    let entry = only_entry(&cache);
    let before = fs::read(&entry).expect("entry");
    let again = cache.load_or_compile(&engine, &plain()).expect("loads");
    assert_eq!(imports(&engine, &again), 0);
    assert_eq!(fs::read(&entry).expect("entry"), before);
    let key = dir.path().join(KEY_FILE);
    let mode = fs::metadata(&key).expect("key").permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the key must be private");
}

#[test]
fn a_tampered_entry_with_a_recomputed_checksum_is_rebuilt() {
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = Engine::default();
    let cache = CompileCache::new(dir.path());
    cache.load_or_compile(&engine, &plain()).expect("compiles");
    let entry = only_entry(&cache);
    plant_with_checksum(&engine, &entry);
    let component = cache.load_or_compile(&engine, &plain()).expect("compiles");
    assert_eq!(imports(&engine, &component), 0, "the planted entry ran");
    // Rebuilt: the next process loads the genuine entry.
    let fresh = CompileCache::new(dir.path());
    let component = fresh.load_or_compile(&engine, &plain()).expect("loads");
    assert_eq!(imports(&engine, &component), 0);
}

#[test]
fn an_entry_moved_to_another_name_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = Engine::default();
    let cache = CompileCache::new(dir.path());
    cache
        .load_or_compile(&engine, &intruder())
        .expect("compiles");
    let intruder_entry = only_entry(&cache);
    let plain_entry = cache.entry_path(&engine, &plain());
    fs::rename(&intruder_entry, &plain_entry).expect("swap");
    let component = cache.load_or_compile(&engine, &plain()).expect("compiles");
    assert_eq!(imports(&engine, &component), 0, "the swapped entry ran");
}

#[test]
fn a_cache_other_users_may_write_is_not_used() {
    for (what, mode) in [("group", 0o770), ("world", 0o777)] {
        let dir = tempfile::tempdir().expect("tempdir");
        let engine = Engine::default();
        let compiled = dir.path().join("compiled");
        fs::create_dir(&compiled).expect("compiled/");
        fs::set_permissions(&compiled, fs::Permissions::from_mode(mode)).expect("chmod");
        let cache = CompileCache::new(dir.path());
        plant_with_checksum(&engine, &cache.entry_path(&engine, &plain()));
        let component = cache.load_or_compile(&engine, &plain()).expect("compiles");
        assert_eq!(
            imports(&engine, &component),
            0,
            "a {what}-writable cache was used"
        );
        assert!(
            !dir.path().join(KEY_FILE).exists(),
            "no key in a {what}-writable cache"
        );
    }
}

#[test]
#[allow(unsafe_code)]
fn an_entry_of_another_user_is_not_loaded() {
    // Only root can give a file away.
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = Engine::default();
    let cache = CompileCache::new(dir.path());
    cache.load_or_compile(&engine, &plain()).expect("compiles");
    // A genuine, authenticated entry, but under the plain component's
    // name and owned by someone else.
    let path = cache.entry_path(&engine, &plain());
    let artifact = engine.precompile_component(&intruder()).expect("compiles");
    let key = cache.key().expect("trusted");
    write_entry(key, &path, &artifact).expect("write");
    std::os::unix::fs::chown(&path, Some(4242), Some(4242)).expect("chown");
    let component = cache.load_or_compile(&engine, &plain()).expect("compiles");
    assert_eq!(imports(&engine, &component), 0, "another user's entry ran");
}

#[test]
fn stale_temporary_files_are_removed_when_the_cache_opens() {
    let dir = tempfile::tempdir().expect("tempdir");
    let compiled = dir.path().join("compiled");
    fs::create_dir(&compiled).expect("compiled/");
    let stale = compiled.join(".tmpKilled");
    let recent = compiled.join(".tmpRunning");
    fs::write(&stale, b"half an artifact").expect("stale");
    fs::write(&recent, b"a compile in progress").expect("recent");
    let long_ago = SystemTime::now() - STALE_TEMP_AGE - std::time::Duration::from_secs(60);
    fs::File::options()
        .write(true)
        .open(&stale)
        .and_then(|f| f.set_modified(long_ago))
        .expect("age the file");
    let cache = CompileCache::new(dir.path());
    cache
        .load_or_compile(&Engine::default(), &plain())
        .expect("compiles");
    assert!(!stale.exists(), "the stale temporary file is still there");
    assert!(recent.exists(), "a recent temporary file was removed");
}

#[test]
fn an_engine_that_cannot_load_an_entry_leaves_it_in_place() {
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = |memory_limit| {
        HostEngine::new(HostConfig {
            memory_limit,
            max_concurrent_calls: 2,
            ..HostConfig::default()
        })
        .expect("engine")
    };
    let roomy = engine(64 << 20);
    let cache = CompileCache::new(dir.path());
    cache
        .load_or_compile(roomy.engine(), &with_memory())
        .expect("compiles");
    let entry = only_entry(&cache);
    let before = fs::read(&entry).expect("entry");
    // No memory at all: this engine can't load the component, which says
    // nothing about the entry.
    let tight = engine(0);
    let inode = |path: &Path| fs::metadata(path).map(|m| m.ino()).ok();
    let before_inode = inode(&entry);
    let err = match cache.load_or_compile(tight.engine(), &with_memory()) {
        Ok(_) => panic!("a memory does not fit a zero memory limit"),
        Err(e) => e,
    };
    assert!(err.contains("exceeds the limit"), "{err}");
    // The same file, untouched: not deleted (nor deleted and rewritten).
    assert_eq!(inode(&entry), before_inode, "the entry was deleted");
    assert_eq!(fs::read(&entry).ok(), Some(before));
    cache
        .load_or_compile(roomy.engine(), &with_memory())
        .expect("loads");
}

#[test]
fn an_entry_is_run_from_its_file_not_a_copy() {
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = HostEngine::new(HostConfig {
        max_concurrent_calls: 2,
        ..HostConfig::default()
    })
    .expect("engine");
    let cache = CompileCache::new(dir.path());
    let wasm = crate::code_memory::tests::with_code();
    // Compiled, stored, and run from the stored file; then loaded from it.
    for _ in 0..2 {
        let component = cache
            .load_or_compile(engine.engine(), &wasm)
            .expect("compiles");
        assert!(
            crate::code_memory::tests::mapped_from(&only_entry(&cache), component.image_range()),
            "not run from the cache entry"
        );
        crate::code_memory::tests::run(&engine, &component);
    }
}
