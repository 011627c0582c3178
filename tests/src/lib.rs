//! Shared helpers for xfn's end-to-end tests: where the test components
//! are, and how to load them into a host.

use std::path::PathBuf;
use std::sync::Arc;

use xfn_host::{HostConfig, HostEngine, WasmFunction, WasmRuntime};

/// The directory of the wasm components built by `make wasm`
/// (`$XFN_WASM_DIR`, else the workspace's default output directory).
pub fn wasm_dir() -> PathBuf {
    std::env::var_os("XFN_WASM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/wasm32-wasip2/wasm"))
}

/// The bytes of a built component, e.g. `xfn_test_scripted`.
///
/// Panics with a hint when the component isn't built: these tests need
/// `make wasm` (which `make test` runs) first.
pub fn component(name: &str) -> Vec<u8> {
    let path = wasm_dir().join(format!("{name}.wasm"));
    std::fs::read(&path).unwrap_or_else(|e| {
        panic!("cannot read {}: {e}; build the test components with `make wasm`", path.display())
    })
}

/// A runtime with the given config and no compile cache.
pub fn runtime(config: HostConfig) -> WasmRuntime {
    let engine = HostEngine::new(config).expect("engine");
    WasmRuntime::new(engine, None).expect("runtime")
}

/// Loads component `file` as function `name` on `runtime`.
pub fn load(runtime: &WasmRuntime, name: &str, file: &str) -> Arc<WasmFunction> {
    Arc::new(runtime.load(name, &component(file)).expect("load component"))
}
