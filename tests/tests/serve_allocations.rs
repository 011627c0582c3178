//! Bytes the host allocates per call on `xfn serve`'s path, counted by a
//! counting global allocator (issue 15, item 2): the protobuf request
//! decoded, converted to the host's types, a call of `hello` in a fresh
//! instance, its response converted back and encoded. That is what the
//! server's handler does between tonic's decode buffer and its encode
//! buffer (the HTTP/2 transport's own buffers are not counted); the guest's
//! linear memory is not the host allocator's and is not counted either.
//!
//! The request is a composite resource of many small fields, as Kubernetes
//! objects are, at 1 KiB and 1 MiB. The test prints bytes per call and the
//! ratio to the request's size, and fails if either grows past its bound
//! (below): issue 15's target of 3 × at 1 MiB, and 1.5 × what was measured
//! at 1 KiB, where the per-call fixed costs dominate.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use prost::Message as _;
use serde_json::{Map, Value, json};
use xfn_host::HostConfig;
use xfn_host::grpc::convert::{request_from_proto, request_to_proto, response_to_proto};
use xfn_host::protocol::{ResourceObject, RunFunctionRequest, State};
use xfn_proto::json::v1 as pb;

/// The system allocator, counting the bytes asked of it (a reallocation
/// counts its new size: it may move the block).
struct Counting;

static ALLOCATED: AtomicU64 = AtomicU64::new(0);

// SAFETY: every method forwards to `System` with the caller's arguments.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATED.fetch_add(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: forwarded as given.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATED.fetch_add(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: forwarded as given.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as given.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATED.fetch_add(new_size as u64, Ordering::Relaxed);
        // SAFETY: forwarded as given.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The request of one call: hello's input, and an observed composite
/// resource whose spec holds ~`size` bytes of 32-byte string fields.
fn request(size: usize) -> pb::RunFunctionRequest {
    let mut spec = Map::new();
    for i in 0..size / 40 {
        spec.insert(format!("field-{i:07}"), json!("v".repeat(20)));
    }
    let xr = json!({
        "apiVersion": "example.crossplane.io/v1", "kind": "XGreeting",
        "metadata": {"name": "example-hello"},
        "spec": Value::Object(spec),
    });
    let request = RunFunctionRequest {
        observed: Some(State {
            composite: Some(ResourceObject::from_json(&xr)),
            resources: Vec::new(),
        }),
        input: Some(
            json!({"apiVersion": "hello.fn.xfn.dev/v1alpha1", "kind": "Input", "greeting": "Hello"})
                .to_string(),
        ),
        ..RunFunctionRequest::default()
    };
    request_to_proto(request).expect("a protobuf request")
}

/// Bytes allocated by one call on the serve path, from the request's bytes
/// to the response's; the fewest of a few calls (background threads
/// allocate now and then).
fn bytes_per_call(f: &xfn_host::WasmFunction, wire: &[u8]) -> u64 {
    let mut fewest = u64::MAX;
    for _ in 0..5 {
        let before = ALLOCATED.load(Ordering::Relaxed);
        // As the server's codec does: the body into one buffer, decoded
        // after a depth check.
        let body = prost::bytes::Bytes::copy_from_slice(wire);
        let decoded =
            xfn_proto::codec::decode_checked::<pb::RunFunctionRequest>(body).expect("decodes");
        let request = request_from_proto(decoded).expect("converts");
        let response = f.call_blocking(&request, None).expect("hello answers");
        drop(request);
        let encoded = response_to_proto(response)
            .expect("converts back")
            .encode_to_vec();
        let after = ALLOCATED.load(Ordering::Relaxed);
        assert!(!encoded.is_empty());
        fewest = fewest.min(after - before);
    }
    fewest
}

#[test]
fn serve_path_allocations_per_call_stay_bounded() {
    let runtime = xfn_tests::runtime(HostConfig::default());
    let hello = xfn_tests::load(&runtime, "function-hello", "hello");
    // (label, size, bound on bytes allocated / request bytes)
    let cases = [
        ("1 KiB", 1 << 10, BOUND_1KIB),
        ("1 MiB", 1 << 20, BOUND_1MIB),
    ];
    let mut failures = Vec::new();
    for (label, size, bound) in cases {
        let wire = request(size).encode_to_vec();
        bytes_per_call(&hello, &wire); // warm: first-call allocations
        let bytes = bytes_per_call(&hello, &wire);
        let ratio = bytes as f64 / wire.len() as f64;
        println!(
            "serve path, {label} request ({} bytes): {bytes} bytes allocated per call, \
             {ratio:.2} × the request (bound {bound} ×, issue 15's target 3 ×)",
            wire.len()
        );
        if ratio > bound {
            failures.push(format!("{label}: {ratio:.2} × > {bound} ×"));
        }
    }
    assert!(
        failures.is_empty(),
        "allocations per call grew: {failures:?}"
    );
}

/// 1.5 × the ratio measured when this bound was set: 23 382 bytes for a
/// 1 236-byte request, 18.9 × (mostly per-call fixed costs: the instance,
/// the call's bookkeeping). Before Structs were carried as JSON from the
/// wire: 25 942 bytes, 21.0 ×.
const BOUND_1KIB: f64 = 28.4;
/// Issue 15's target, 3 × the request: measured at 3 143 155 bytes for a
/// 1 074 991-byte request, 2.92 ×, counting the codec's copy of the body.
/// Before Structs were carried as JSON from the wire (a prost `Struct`
/// tree, and the JSON written from it): 4 781 691 bytes, 4.45 ×, without
/// that copy.
const BOUND_1MIB: f64 = 3.0;
