//! A rough latency and throughput comparison, run by hand:
//!
//! ```sh
//! cargo test -p xfn-tests --test grpc_bench -- --ignored --nocapture
//! ```
//!
//! The same small request is sent sequentially to a wasm function behind
//! `xfn serve` (in-process) and to the Python SDK test function, first by
//! the Python SDK's client stubs, then by xfn's client shim.

mod grpc_support;

use std::time::{Duration, Instant};

use grpc_support::*;
use serde_json::json;
use xfn_grpc::{ClientOptions, GrpcFunction};
use xfn_runtime::protocol::RunFunctionRequest;
use xfn_runtime::{Function, HostConfig};

const CALLS: usize = 2000;

fn small_request() -> serde_json::Value {
    request("bench", json!({"count": true}))
}

async fn shim_stats(f: &GrpcFunction) -> (f64, f64, f64) {
    let request = RunFunctionRequest {
        input: Some(json!({"count": true}).to_string()),
        observed: None,
        ..RunFunctionRequest::default()
    };
    f.call(&request, None).await.expect("warm-up");
    let mut latencies = Vec::with_capacity(CALLS);
    let started = Instant::now();
    for _ in 0..CALLS {
        let t = Instant::now();
        f.call(&request, Some(Duration::from_secs(10)))
            .await
            .expect("call");
        latencies.push(t.elapsed());
    }
    let seconds = started.elapsed().as_secs_f64();
    latencies.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    (
        ms(latencies[CALLS / 2]),
        ms(latencies[CALLS * 99 / 100]),
        CALLS as f64 / seconds,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement, not a test: run with --ignored --nocapture"]
async fn wasm_behind_xfn_serve_vs_the_python_sdk() {
    let server = Serving::start(Default::default(), wasm_functions(HostConfig::default())).await;
    let python = PyFunction::start(&["--insecure"]);

    let bench =
        json!({"authority": authority("function-a"), "request": small_request(), "repeat": CALLS});
    let mut warm = bench.clone();
    warm["repeat"] = json!(50);
    for (what, target) in [
        ("xfn serve (wasm)", server.target()),
        ("Python SDK function", python.target()),
    ] {
        let results = py_client(&target, None, &[warm.clone(), bench.clone()]).await;
        let r = &results[1];
        assert_eq!(r["ok"], true, "{r}");
        println!(
            "python stubs -> {what:22}: median {:.3} ms, p99 {:.3} ms, {:.0} calls/s",
            r["median_ms"].as_f64().unwrap_or_default(),
            r["p99_ms"].as_f64().unwrap_or_default(),
            CALLS as f64 / r["seconds"].as_f64().unwrap_or(f64::NAN),
        );
    }

    let options = ClientOptions {
        authority: Some(authority("function-a")),
        ..ClientOptions::default()
    };
    let wasm = GrpcFunction::new("function-a", &server.target(), options).expect("client");
    let py = GrpcFunction::new(
        "function-python",
        &python.target(),
        ClientOptions::default(),
    )
    .expect("client");
    for (what, f) in [("xfn serve (wasm)", &wasm), ("Python SDK function", &py)] {
        let (median, p99, rate) = shim_stats(f).await;
        println!(
            "xfn client shim -> {what:22}: median {median:.3} ms, p99 {p99:.3} ms, {rate:.0} calls/s"
        );
    }
    server.stop().await.expect("stops");
}
