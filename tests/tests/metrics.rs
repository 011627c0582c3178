//! `xfn serve --metrics-address`: Prometheus metrics of a real server
//! process, read over HTTP after real gRPC calls.

mod grpc_support;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use grpc_support::{authority, raw_client};
use serde_json::json;
use xfn_proto::v1;
use xfn_tests::{free_port, http_get, wasm_dir, xfn_bin};

/// An `xfn serve` process under `timeout`, killed when dropped.
struct Serve(Child);

impl Drop for Serve {
    fn drop(&mut self) {
        xfn_tests::stop_under_timeout(&mut self.0);
    }
}

/// The value of the sample whose line starts with `series` and a space.
fn sample(metrics: &str, series: &str) -> Option<f64> {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.parse().ok())
}

async fn call(
    addr: std::net::SocketAddr,
    function: &str,
    input: serde_json::Value,
) -> Result<v1::RunFunctionResponse, tonic::Status> {
    let mut client = raw_client(addr, &authority(function)).await;
    let request = v1::RunFunctionRequest {
        input: Some(xfn_grpc::convert::json_to_struct(&input.to_string()).expect("a struct")),
        ..v1::RunFunctionRequest::default()
    };
    client
        .run_function(request)
        .await
        .map(tonic::Response::into_inner)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_counts_calls_by_function_and_result_with_latency_and_instances() {
    let work = tempfile::tempdir().expect("a temp dir");
    let (grpc, metrics_port) = (free_port(), free_port());
    let wasm = wasm_dir();
    let _serve = Serve(
        Command::new("timeout")
            .arg("120")
            .arg(xfn_bin())
            .args([
                "serve",
                "--insecure",
                "--address",
                &format!("127.0.0.1:{grpc}"),
            ])
            .args(["--metrics-address", &format!("127.0.0.1:{metrics_port}")])
            .arg("--function")
            .arg(format!(
                "function-a={}",
                xfn_tests::scripted_wasm().display()
            ))
            .arg("--function")
            .arg(format!("function-b={}", wasm.join("hello.wasm").display()))
            .arg("--cache-dir")
            .arg(work.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start xfn serve"),
    );
    let started = Instant::now();
    while http_get(metrics_port, "/healthz").await.is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the metrics endpoint never answered"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], grpc));

    for _ in 0..3 {
        call(addr, "function-a", json!({"count": true}))
            .await
            .expect("a healthy call");
    }
    call(addr, "function-b", json!({"greeting": "Hi"}))
        .await
        .expect("a healthy call");
    let failed = call(addr, "function-a", json!({"fault": "error"})).await;
    assert_eq!(
        failed.map(|_| ()).map_err(|s| s.code()),
        Err(tonic::Code::Unknown)
    );
    let trapped = call(addr, "function-a", json!({"fault": "trap"})).await;
    assert_eq!(
        trapped.map(|_| ()).map_err(|s| s.code()),
        Err(tonic::Code::Internal)
    );
    let unrouted = call(addr, "function-z", json!({})).await;
    assert_eq!(
        unrouted.map(|_| ()).map_err(|s| s.code()),
        Err(tonic::Code::NotFound)
    );

    let (status, metrics) = http_get(metrics_port, "/metrics")
        .await
        .expect("the metrics endpoint answers");
    assert_eq!(status, 200, "{metrics}");
    let calls = |function: &str, result: &str| {
        sample(
            &metrics,
            &format!(r#"xfn_function_calls_total{{function="{function}",result="{result}"}}"#),
        )
    };
    assert_eq!(calls("function-a", "ok"), Some(3.0), "{metrics}");
    assert_eq!(calls("function-b", "ok"), Some(1.0), "{metrics}");
    assert_eq!(calls("function-a", "unknown"), Some(1.0), "{metrics}");
    assert_eq!(calls("function-a", "internal"), Some(1.0), "{metrics}");
    assert_eq!(
        sample(&metrics, "xfn_unrouted_calls_total"),
        Some(1.0),
        "{metrics}"
    );
    // Unrouted calls are not labelled with the name the client made up.
    assert!(!metrics.contains("function-z"), "{metrics}");
    let latency_count = sample(
        &metrics,
        r#"xfn_function_call_duration_seconds_count{function="function-a",result="ok"}"#,
    );
    assert_eq!(latency_count, Some(3.0), "{metrics}");
    // No call is in progress, so no instance is alive.
    assert_eq!(
        sample(&metrics, "xfn_instances_in_use"),
        Some(0.0),
        "{metrics}"
    );
    // Both components were compiled on a cold cache: two misses, no hits.
    assert_eq!(
        sample(
            &metrics,
            r#"xfn_compile_cache_lookups_total{result="miss"}"#
        ),
        Some(2.0),
        "{metrics}"
    );
    assert_eq!(
        sample(&metrics, r#"xfn_compile_cache_lookups_total{result="hit"}"#),
        None,
        "{metrics}"
    );

    assert_eq!(
        http_get(metrics_port, "/readyz").await.map(|r| r.0),
        Some(200)
    );
    assert_eq!(
        http_get(metrics_port, "/nope").await.map(|r| r.0),
        Some(404)
    );
}
