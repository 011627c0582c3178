//! Micro benchmarks of the wasm host: a warm call of a function, and
//! compiling a component.
//!
//! The components come from `$XFN_WASM_DIR` (default
//! `target/wasm32-wasip2/wasm`); `make bench` builds them first.

use std::path::PathBuf;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use xfn_runtime::protocol::{ResourceObject, RunFunctionRequest, State};
use xfn_runtime::{HostConfig, HostEngine, WasmRuntime};

fn component(name: &str) -> Vec<u8> {
    let dir = std::env::var_os("XFN_WASM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/wasm32-wasip2/wasm")
        });
    let path = dir.join(format!("{name}.wasm"));
    std::fs::read(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}; run `make wasm`", path.display()))
}

fn hello_request() -> RunFunctionRequest {
    let xr = r#"{"apiVersion":"example.crossplane.io/v1","kind":"XGreeting","metadata":{"name":"example-hello"},"spec":{"audience":"world"}}"#;
    RunFunctionRequest {
        observed: Some(State {
            composite: Some(ResourceObject {
                resource: Some(xr.into()),
                connection_details: Vec::new(),
                ready: xfn_runtime::protocol::Ready::Unspecified,
            }),
            resources: Vec::new(),
        }),
        desired: Some(State::default()),
        input: Some(
            r#"{"apiVersion":"hello.fn.xfn.dev/v1alpha1","kind":"Input","greeting":"Hello"}"#
                .into(),
        ),
        context: Some("{}".into()),
        ..RunFunctionRequest::default()
    }
}

fn runtime() -> WasmRuntime {
    let engine = HostEngine::new(HostConfig::default()).expect("engine");
    WasmRuntime::new(engine, None).expect("runtime")
}

fn warm_call(c: &mut Criterion) {
    let rt = runtime();
    let hello = rt
        .load("function-hello", &component("hello"))
        .expect("load hello");
    let request = hello_request();
    c.bench_function("hello/warm-call", |b| {
        b.iter(|| hello.call_blocking(&request, None).expect("call"));
    });
}

fn compile(c: &mut Criterion) {
    let rt = runtime();
    let bytes = component("hello");
    let mut group = c.benchmark_group("hello");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("compile", |b| {
        b.iter(|| {
            wasmtime::component::Component::new(rt.engine().engine(), &bytes).expect("compile")
        });
    });
    group.finish();
}

criterion_group!(benches, warm_call, compile);
criterion_main!(benches);
