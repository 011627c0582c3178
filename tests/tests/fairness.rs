//! Many functions in one host: one function that is slow, or busy, cannot
//! take every call slot from the others.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use xfn_runtime::protocol::RunFunctionRequest;
use xfn_runtime::{CallError, HostConfig, WasmFunction};
use xfn_tests::{load, runtime};

fn request(input: serde_json::Value) -> RunFunctionRequest {
    RunFunctionRequest {
        input: Some(input.to_string()),
        ..RunFunctionRequest::default()
    }
}

/// Instances alive in this process, from the host's metrics.
fn instances_in_use() -> usize {
    xfn_runtime::metrics::render()
        .lines()
        .find_map(|l| l.strip_prefix("xfn_instances_in_use "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// Starts `n` looping calls of `f`, each stopped by the host's timeout.
fn hog(f: &Arc<WasmFunction>, n: usize) -> Vec<tokio::task::JoinHandle<Result<(), CallError>>> {
    (0..n)
        .map(|_| {
            let f = f.clone();
            tokio::spawn(async move {
                f.run(&request(json!({"fault": "loop"})), None)
                    .await
                    .map(drop)
            })
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_function_holding_its_share_of_slots_leaves_the_rest_to_others() {
    let host = HostConfig {
        max_concurrent_calls: 8,
        call_timeout: Duration::from_secs(4),
        ..HostConfig::default()
    };
    assert_eq!(host.calls_per_function(), 4);
    let host_share = host.calls_per_function() as usize;
    let rt = runtime(host);
    let busy = load(&rt, "busy", "xfn_test_scripted");
    let other = load(&rt, "other", "xfn_test_scripted");

    // As many looping calls as the whole pool has slots.
    let hogs = hog(&busy, 8);
    // Until they hold every slot they may have.
    let holding = host_share.min(8);
    let waiting = Instant::now();
    while instances_in_use() < holding {
        assert!(
            waiting.elapsed() < Duration::from_millis(1500),
            "the looping calls never held {holding} slots"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    // Without a share per function, this call would wait for a slot until
    // the loops time out (4 s).
    let started = Instant::now();
    let answered = tokio::time::timeout(
        Duration::from_millis(1500),
        other.run(&request(json!({"count": true})), None),
    )
    .await;
    let response = answered
        .unwrap_or_else(|_| panic!("the other function got no slot in {:?}", started.elapsed()))
        .expect("the other function's call succeeds");
    assert_eq!(response.context.as_deref(), Some(r#"{"xfn.test/calls":1}"#));

    // The busy function's calls all end, by timeout: none is lost.
    for call in hogs {
        let outcome = call.await.expect("the call task");
        assert!(
            matches!(outcome, Err(CallError::Timeout { .. })),
            "{outcome:?}"
        );
    }
}

#[test]
fn the_share_is_half_the_pool_unless_set() {
    let share = |pool, set| {
        HostConfig {
            max_concurrent_calls: pool,
            max_calls_per_function: set,
            ..HostConfig::default()
        }
        .calls_per_function()
    };
    assert_eq!(share(128, None), 64);
    assert_eq!(share(1, None), 1);
    assert_eq!(share(8, Some(8)), 8);
    assert_eq!(share(8, Some(100)), 8);
    assert_eq!(share(8, Some(0)), 1);
}

#[path = "grpc_support/mod.rs"]
mod grpc_support;

/// A call of the scripted function with `input`, as protobuf.
fn scripted_proto(input: serde_json::Value) -> xfn_proto::v1::RunFunctionRequest {
    xfn_proto::v1::RunFunctionRequest {
        input: Some(xfn_grpc::convert::json_to_struct(&input.to_string()).expect("a struct")),
        ..xfn_proto::v1::RunFunctionRequest::default()
    }
}

#[test]
fn looping_guests_do_not_hold_up_other_functions_calls() {
    use grpc_support::{Serving, authority, raw_client, wasm_functions};
    // As `xfn serve` runs: connections on one runtime, calls on another,
    // and calls that compute long on a third of lower priority. The looping
    // calls move there and must still end at their deadline.
    let calls = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("the call runtime");
    let long_calls = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .on_thread_start(xfn_grpc::call_threads::lower_thread_priority)
        .enable_all()
        .build()
        .expect("the long-call runtime");
    let io = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("the server runtime");
    let median = io.block_on(async {
        let config = xfn_grpc::ServerConfig {
            call_threads: Some(xfn_grpc::CallThreads {
                long_calls: Some(long_calls.handle().clone()),
                ..xfn_grpc::CallThreads::new(calls.handle().clone())
            }),
            ..xfn_grpc::ServerConfig::default()
        };
        let server = Serving::start(config, wasm_functions(HostConfig::default())).await;
        let addr = server.addr;
        // Two guests compute for 4 s, one per call thread.
        let loops: Vec<_> = (0..2)
            .map(|_| {
                tokio::spawn(async move {
                    let mut client = raw_client(addr, &authority("function-a")).await;
                    let mut request = tonic::Request::new(scripted_proto(json!({"fault": "loop"})));
                    request.set_timeout(Duration::from_secs(4));
                    client.run_function(request).await.map(drop)
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let mut client = raw_client(addr, &authority("function-b")).await;
        let mut latencies = Vec::new();
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(2) {
            let call = Instant::now();
            client
                .run_function(scripted_proto(json!({"greeting": "Hi"})))
                .await
                .expect("a healthy call succeeds");
            latencies.push(call.elapsed());
        }
        for looping in loops {
            let status = looping
                .await
                .expect("the looping caller")
                .expect_err("it times out");
            assert_eq!(status.code(), tonic::Code::DeadlineExceeded, "{status:?}");
        }
        server.stop().await.expect("stops cleanly");
        latencies.sort();
        latencies[latencies.len() / 2]
    });
    // On calls' shared threads, yielding every 10 ms, the median was about
    // 670 ms (release build, 2 cores); it is now about a millisecond. The
    // bound is generous: this is a regression test, not a benchmark.
    assert!(
        median < Duration::from_millis(150),
        "a healthy call's median beside two looping ones: {median:?}"
    );
}
