//! Bytes the host allocates per call on `xfn serve`'s path, counted by a
//! counting global allocator (issue 15, item 2): the protobuf request
//! decoded, converted to the host's types, a call of `hello` in a fresh
//! instance, its response converted back and encoded. That is what the
//! server's handler does between tonic's decode buffer and its encode
//! buffer (the HTTP/2 transport's own buffers are not counted); the guest's
//! linear memory is not the host allocator's and is not counted either.
//!
//! A second test counts the whole server instead: an in-process `xfn
//! serve`, with its HTTP/2 transport, tonic's buffers, routing and the
//! thread hand-off of each call, called over loopback by a client whose
//! own threads are not counted.
//!
//! The request is a composite resource of many small fields, as Kubernetes
//! objects are, at 1 KiB and 1 MiB. The tests print bytes per call, the
//! ratio to the request's size, and the bytes allocated per byte the
//! request grows by; they fail if any grows past its bound (below): issue
//! 15's target of 3 × for the whole server at 1 MiB and per request byte,
//! half of it for the handler, and a margin over what was measured
//! elsewhere (each bound gives its own). Both count calls in the steady
//! state: the warm-up calls leave the server's pool of JSON text buffers
//! holding what the next request needs, as a busy server's would.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use prost::Message as _;
use serde_json::{Map, Value, json};
use xfn_grpc::call_threads::CallThreads;
use xfn_grpc::convert::{
    recycle_request, request_from_proto_in, request_to_proto, response_to_proto,
};
use xfn_grpc::{ClientOptions, FunctionTable, GrpcFunction, Server, ServerConfig};
use xfn_proto::json::{TextPool, v1 as pb};
use xfn_runtime::HostConfig;
use xfn_runtime::protocol::{ResourceObject, RunFunctionRequest, State};

/// The system allocator, counting the bytes asked of it (a reallocation
/// counts its new size: it may move the block) by every thread but the
/// client's.
struct Counting;

static ALLOCATED: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Set on the threads of the whole-server test's client.
    static CLIENT_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// Adds `bytes` unless the calling thread is the client's.
fn count(bytes: usize) {
    if !CLIENT_THREAD.try_with(Cell::get).unwrap_or(false) {
        ALLOCATED.fetch_add(bytes as u64, Ordering::Relaxed);
    }
}

/// The tests count one process-wide total, so they take turns.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

// SAFETY: every method forwards to `System` with the caller's arguments.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: forwarded as given.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: forwarded as given.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as given.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        // SAFETY: forwarded as given.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The request of one call: hello's input, and an observed composite
/// resource whose spec holds ~`size` bytes of 32-byte string fields.
fn request(size: usize) -> pb::RunFunctionRequest {
    request_to_proto(wit_request(size)).expect("a protobuf request")
}

/// [`request`] as the host's type.
fn wit_request(size: usize) -> RunFunctionRequest {
    let mut spec = Map::new();
    for i in 0..size / 40 {
        spec.insert(format!("field-{i:07}"), json!("v".repeat(20)));
    }
    let xr = json!({
        "apiVersion": "example.crossplane.io/v1", "kind": "XGreeting",
        "metadata": {"name": "example-hello"},
        "spec": Value::Object(spec),
    });
    RunFunctionRequest {
        observed: Some(State {
            composite: Some(ResourceObject::from_json(&xr)),
            resources: Vec::new(),
        }),
        input: Some(
            json!({"apiVersion": "hello.fn.xfn.dev/v1alpha1", "kind": "Input", "greeting": "Hello"})
                .to_string(),
        ),
        ..RunFunctionRequest::default()
    }
}

/// Bytes allocated by one call on the serve path, from the request's bytes
/// to the response's; the fewest of a few calls (background threads
/// allocate now and then).
fn bytes_per_call(f: &xfn_runtime::WasmFunction, wire: &[u8], pool: &TextPool) -> u64 {
    let mut fewest = u64::MAX;
    for _ in 0..5 {
        let before = ALLOCATED.load(Ordering::Relaxed);
        // As the server's codec does: the body into one buffer, decoded
        // after a depth check.
        let body = prost::bytes::Bytes::copy_from_slice(wire);
        let decoded =
            xfn_proto::codec::decode_checked::<pb::RunFunctionRequest>(body).expect("decodes");
        let request = request_from_proto_in(decoded, Some(pool)).expect("converts");
        let response = f.call_blocking(&request, None).expect("hello answers");
        // As the server does: the request's JSON buffers kept for the next.
        recycle_request(request, pool);
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
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let runtime = xfn_tests::runtime(HostConfig::default());
    let hello = xfn_tests::load(&runtime, "function-hello", "hello");
    // (label, size, bound on bytes allocated / request bytes)
    let cases = [
        ("1 KiB", 1 << 10, BOUND_1KIB),
        ("1 MiB", 1 << 20, BOUND_1MIB),
    ];
    let mut failures = Vec::new();
    let mut measured = Vec::new();
    for (label, size, bound) in cases {
        let wire = request(size).encode_to_vec();
        let pool = TextPool::default();
        bytes_per_call(&hello, &wire, &pool); // warm: first-call allocations
        let bytes = bytes_per_call(&hello, &wire, &pool);
        let ratio = bytes as f64 / wire.len() as f64;
        println!(
            "serve path, {label} request ({} bytes): {bytes} bytes allocated per call, \
             {ratio:.2} × the request (bound {bound} ×, issue 15's target 3 ×)",
            wire.len()
        );
        if ratio > bound {
            failures.push(format!("{label}: {ratio:.2} × > {bound} ×"));
        }
        measured.push((wire.len(), bytes));
    }
    failures.extend(per_request_byte("serve path", &measured, MARGINAL_BOUND));
    assert!(
        failures.is_empty(),
        "allocations per call grew: {failures:?}"
    );
}

/// 1.5 × the ratio measured when this bound was set: 20 682 bytes for a
/// 1 236-byte request, 16.7 × (mostly per-call fixed costs: the instance,
/// the call's bookkeeping). Before the request's JSON buffers were reused:
/// 23 382 bytes, 18.9 ×; before Structs were carried as JSON from the
/// wire: 25 942 bytes, 21.0 ×.
const BOUND_1KIB: f64 = 25.1;
/// Half of issue 15's target of 3 × the request: measured at 1 094 629
/// bytes for a 1 074 991-byte request, 1.02 ×, nearly all of it the
/// codec's copy of the body, as the JSON text is written into a buffer
/// the pool kept and the sort index is the thread's. Fails without the
/// text's reuse: 2 303 965 bytes, 2.14 ×; and before either reuse, with
/// a sort index of 32 bytes per entry: 3 143 155 bytes, 2.92 ×.
const BOUND_1MIB: f64 = 1.5;

/// Bytes allocated per byte the request grows by, between the smallest and
/// the largest of `measured` (request bytes, bytes allocated per call):
/// what a call allocates for its request, without what it allocates
/// whatever the request (the fresh instance, HTTP/2's stream). Issue 15's
/// "≤ 3× the request" read per byte of request. Printed, and a failure if
/// over `bound` (or if `measured` has no larger request to compare).
fn per_request_byte(what: &str, measured: &[(usize, u64)], bound: f64) -> Option<String> {
    let (Some(&(small_wire, small)), Some(&(large_wire, large))) =
        (measured.first(), measured.last())
    else {
        return Some(format!("{what}: nothing measured"));
    };
    if large_wire <= small_wire {
        return Some(format!(
            "{what}: no larger request to compare: {measured:?}"
        ));
    }
    let per_byte = large.saturating_sub(small) as f64 / (large_wire - small_wire) as f64;
    let fixed = small as f64 - per_byte * small_wire as f64;
    println!(
        "{what}: {per_byte:.2} bytes allocated per request byte (bound {bound}), \
         {fixed:.0} bytes per call whatever the request"
    );
    (per_byte > bound).then(|| format!("{what}: {per_byte:.2} bytes per request byte > {bound}"))
}

/// The handler's bytes per request byte: 1.00 when this bound was set (the
/// codec's copy of the body, see [`BOUND_1MIB`]); half of issue 15's 3.
const MARGINAL_BOUND: f64 = 1.5;

/// Bytes the whole in-process server allocates per call, over `calls`
/// calls from a client on the calling thread (not counted); the fewest of
/// three batches.
fn server_bytes_per_call(
    client_rt: &tokio::runtime::Runtime,
    client: &GrpcFunction,
    request: &RunFunctionRequest,
    calls: u64,
) -> u64 {
    let call = || {
        client_rt
            .block_on(xfn_runtime::Function::call(
                client,
                request,
                Some(Duration::from_secs(60)),
            ))
            .expect("hello answers over gRPC")
    };
    CLIENT_THREAD.set(true);
    for _ in 0..3 {
        call(); // warm: the connection, first-call allocations
    }
    let mut fewest = u64::MAX;
    for _ in 0..3 {
        let before = ALLOCATED.load(Ordering::Relaxed);
        for _ in 0..calls {
            call();
        }
        let after = ALLOCATED.load(Ordering::Relaxed);
        fewest = fewest.min((after - before) / calls);
    }
    CLIENT_THREAD.set(false);
    fewest
}

#[test]
fn the_whole_server_allocates_per_call_within_bounds() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let runtime = xfn_tests::runtime(HostConfig::default());
    let mut table = FunctionTable::new();
    table.insert(
        "function-hello",
        xfn_tests::load(&runtime, "function-hello", "hello"),
    );
    let threads = |name: &str| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name(name)
            .enable_all()
            .build()
            .expect("a runtime")
    };
    // As `xfn serve` runs: connections on one runtime, calls on another's.
    let calls = threads("calls");
    let server_rt = threads("server");
    let address = server_rt.block_on(async {
        let config = ServerConfig {
            address: ([127, 0, 0, 1], 0).into(),
            max_recv_message_size: 8 << 20,
            shutdown_grace: Duration::from_secs(1),
            call_threads: Some(CallThreads::new(calls.handle().clone())),
            ..ServerConfig::default()
        };
        let server = Server::bind(config, table).await.expect("bind");
        let address = server.local_addr();
        tokio::spawn(server.serve());
        address
    });
    let client_rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .on_thread_start(|| CLIENT_THREAD.set(true))
        .build()
        .expect("the client's runtime");
    let client = {
        let _entered = client_rt.enter();
        let options = ClientOptions {
            max_recv_message_size: 8 << 20,
            ..ClientOptions::default()
        };
        GrpcFunction::new("function-hello", &format!("http://{address}"), options)
            .expect("a client")
    };
    // (label, size, calls per batch, bound on bytes allocated / request bytes)
    let cases = [
        ("1 KiB", 1 << 10, 50, SERVER_BOUND_1KIB),
        ("1 MiB", 1 << 20, 10, SERVER_BOUND_1MIB),
    ];
    let mut failures = Vec::new();
    let mut measured = Vec::new();
    for (label, size, batch, bound) in cases {
        let wire = request(size).encoded_len();
        let bytes = server_bytes_per_call(&client_rt, &client, &wit_request(size), batch);
        let ratio = bytes as f64 / wire as f64;
        println!(
            "whole server, {label} request ({wire} bytes): {bytes} bytes allocated per call, \
             {ratio:.2} × the request (bound {bound} ×)"
        );
        if ratio > bound {
            failures.push(format!("{label}: {ratio:.2} × > {bound} ×"));
        }
        measured.push((wire, bytes));
    }
    failures.extend(per_request_byte(
        "whole server",
        &measured,
        SERVER_MARGINAL_BOUND,
    ));
    drop(client);
    drop(client_rt);
    server_rt.shutdown_timeout(Duration::from_secs(5));
    calls.shutdown_timeout(Duration::from_secs(5));
    assert!(
        failures.is_empty(),
        "the server's allocations per call grew: {failures:?}"
    );
}

/// 1.15 × the ratio measured when this bound was set (runs differ by
/// under 0.3 %): 38 322 bytes for a 1 236-byte request, 31.0 ×: the call's
/// (above) plus HTTP/2's streams and headers, tonic's buffers and futures,
/// and the hand-off to a call thread. Tight enough to fail with tonic's
/// default 8 KiB codec buffers: 52 620 bytes, 42.6 ×.
const SERVER_BOUND_1KIB: f64 = 35.7;
/// Issue 15's target, 3 × the request: measured at 2.57 × (about 2.77 MB
/// for a 1 074 991-byte request) in every run when this bound was set.
/// Beyond the handler's 1.02 ×, the HTTP/2 reader's frame buffers take
/// about 1.5 × (h2's own). Fails without the reuse of the JSON text's
/// buffers: 3.70 ×; before either reuse: 4.33–4.48 ×. With text buffers
/// kept per thread instead of in one pool, calls that end on another
/// thread than they started on missed them: up to 3.01 ×.
const SERVER_BOUND_1MIB: f64 = 3.0;

/// Issue 15's target, 3 × the request, per byte of request: 2.54 when this
/// bound was set. At 1 KiB the whole server's allocations are almost all
/// fixed costs of a call (34 KB: the fresh instance's, HTTP/2's, tonic's),
/// which this leaves out.
const SERVER_MARGINAL_BOUND: f64 = 3.0;
