//! `xfn serve` (run in-process) called by real peers: the Python SDK's own
//! generated client stubs, tonic's health client, and xfn's client shim.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::grpc_support::*;
use serde_json::{Value, json};
use tonic::Code;
use xfn_catalog::functions_file::{Loader, read_functions_file};
use xfn_grpc::{ClientOptions, ClientTls, FunctionTable, GrpcFunction, ServerConfig};
use xfn_proto::v1;
use xfn_runtime::protocol::{RunFunctionRequest, RunFunctionResponse};
use xfn_runtime::{CallError, Function, HostConfig};

fn call(function: &str, version: &str, input: Value) -> Value {
    json!({"authority": authority(function), "version": version, "request": request("tag-1", input)})
}

fn ok(result: &Value) -> &Value {
    assert_eq!(result["ok"], true, "call failed: {result}");
    &result["response"]
}

fn error(result: &Value) -> (&str, &str) {
    assert_eq!(result["ok"], false, "call should fail: {result}");
    (
        result["code"].as_str().unwrap_or(""),
        result["details"].as_str().unwrap_or(""),
    )
}

/// function-a (scripted, counting) answered.
fn assert_scripted(result: &Value) {
    let rsp = ok(result);
    assert_eq!(rsp["meta"]["tag"], "tag-1", "{rsp}");
    assert_eq!(rsp["context"]["xfn.test/calls"], 1.0, "{rsp}");
}

/// function-b (hello) answered.
fn assert_hello(result: &Value) {
    let rsp = ok(result);
    assert_eq!(rsp["results"][0]["message"], "Hi, xr-1!", "{rsp}");
    assert_eq!(rsp["results"][0]["reason"], "Greeted", "{rsp}");
    assert_eq!(
        rsp["desired"]["composite"]["resource"]["status"]["greeting"], "Hi, xr-1!",
        "{rsp}"
    );
}

fn routed_calls() -> Vec<Value> {
    let count = json!({"count": true});
    let hi = json!({"greeting": "Hi"});
    let mut calls = vec![
        call("function-a", "v1", count.clone()),
        call("function-a", "v1beta1", count.clone()),
        call("function-b", "v1", hi.clone()),
        call("function-b", "v1beta1", hi.clone()),
    ];
    // Every form of the Service name routes.
    for authority in [
        "function-a:9443",
        "function-a.crossplane-system.svc:9443",
        "function-a.crossplane-system.svc.cluster.local:9443",
    ] {
        calls.push(json!({"authority": authority, "request": request("tag-1", count.clone())}));
    }
    calls.push(call("function-c", "v1", count.clone()));
    calls.push(call("function-c", "v1beta1", count));
    calls
}

fn assert_routed(results: &[Value]) {
    assert_scripted(&results[0]);
    assert_scripted(&results[1]);
    assert_hello(&results[2]);
    assert_hello(&results[3]);
    for r in &results[4..7] {
        assert_scripted(r);
    }
    for r in &results[7..9] {
        let (code, details) = error(r);
        assert_eq!(code, "NOT_FOUND", "{r}");
        assert!(
            details.contains("\"function-c.crossplane-system:9443\""),
            "names the authority: {details}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_stubs_reach_two_functions_by_authority_in_plaintext() {
    let config = ServerConfig {
        namespace: Some(NS.into()),
        ..ServerConfig::default()
    };
    let server = Serving::start(config, wasm_functions(HostConfig::default())).await;
    let results = py_client(&server.target(), None, &routed_calls()).await;
    assert_routed(&results);

    // Faults reach the Python stubs as gRPC errors, and the next call works.
    let mut timeout = call("function-a", "v1", json!({"fault": "loop"}));
    timeout["timeout"] = json!(0.5);
    let calls = [
        call("function-a", "v1", json!({"fault": "trap"})),
        timeout,
        call("function-a", "v1beta1", json!({"fault": "error"})),
        call("function-a", "v1", json!({"count": true})),
    ];
    let results = py_client(&server.target(), None, &calls).await;
    let (code, details) = error(&results[0]);
    assert_eq!(code, "INTERNAL");
    assert!(
        details.contains("function \"function-a\" trapped"),
        "{details}"
    );
    assert_eq!(error(&results[1]).0, "DEADLINE_EXCEEDED");
    assert_eq!(
        error(&results[2]),
        ("UNKNOWN", "function \"function-a\" failed: scripted error")
    );
    assert_scripted(&results[3]);
    server.stop().await.expect("stops cleanly");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_stubs_reach_two_functions_over_mtls_and_strangers_are_refused() {
    let certs = Certs::for_functions(&["function-a", "function-b", "function-c"]);
    let config = ServerConfig {
        tls: Some(xfn_grpc::tls::TlsFiles::read_dir(&certs.server).expect("server certs")),
        namespace: Some(NS.into()),
        ..ServerConfig::default()
    };
    let server = Serving::start(config, wasm_functions(HostConfig::default())).await;
    let results = py_client(&server.target(), Some(&certs.client), &routed_calls()).await;
    assert_routed(&results);

    // A client certificate from another CA, and no TLS at all, are refused.
    let one = [call("function-a", "v1", json!({"count": true}))];
    let stranger = py_client(&server.target(), Some(&certs.stranger), &one).await;
    assert_eq!(error(&stranger[0]).0, "UNAVAILABLE", "{}", stranger[0]);
    let plaintext = py_client(&server.target(), None, &one).await;
    assert_eq!(error(&plaintext[0]).0, "UNAVAILABLE", "{}", plaintext[0]);

    // xfn's own client shim gets in with the right certificate.
    let tls = ClientTls::from_dir(&certs.client).expect("client certs");
    let options = ClientOptions {
        tls: Some(tls),
        authority: Some(authority("function-b")),
        ..ClientOptions::default()
    };
    let shim = GrpcFunction::new("function-b", &server.target(), options).expect("client");
    let rsp = shim
        .call(
            &RunFunctionRequest {
                input: Some(r#"{"greeting":"Hey"}"#.into()),
                ..RunFunctionRequest::default()
            },
            Some(Duration::from_secs(10)),
        )
        .await
        .expect("the shim calls over mTLS");
    assert_eq!(rsp.results[0].message, "Hey, world!");
    server.stop().await.expect("stops cleanly");
}

fn scripted(input: Value) -> v1::RunFunctionRequest {
    v1::RunFunctionRequest {
        input: Some(xfn_grpc::convert::json_to_struct(&input.to_string()).expect("struct")),
        ..v1::RunFunctionRequest::default()
    }
}

async fn run_raw(
    client: &mut v1::function_runner_service_client::FunctionRunnerServiceClient<
        tonic::transport::Channel,
    >,
    input: Value,
    timeout: Option<Duration>,
) -> Result<v1::RunFunctionResponse, tonic::Status> {
    let mut request = tonic::Request::new(scripted(input));
    if let Some(t) = timeout {
        request.set_timeout(t);
    }
    client
        .run_function(request)
        .await
        .map(tonic::Response::into_inner)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guest_faults_and_timeouts_are_grpc_errors_while_healthy_calls_succeed() {
    let host = HostConfig {
        call_timeout: Duration::from_secs(2),
        memory_limit: 64 << 20,
        ..HostConfig::default()
    };
    let server = Serving::start(ServerConfig::default(), wasm_functions(host)).await;
    let addr = server.addr;

    // Healthy calls, concurrently with the faults below.
    let mut healthy = Vec::new();
    for _ in 0..4 {
        healthy.push(tokio::spawn(async move {
            let mut client = raw_client(addr, &authority("function-a")).await;
            let mut done = 0;
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(3) || done < 5 {
                let rsp = run_raw(&mut client, json!({"count": true}), None)
                    .await
                    .expect("a healthy call succeeds");
                let context = xfn_grpc::convert::struct_to_json(&rsp.context.expect("context"))
                    .expect("json");
                assert_eq!(context, r#"{"xfn.test/calls":1}"#);
                done += 1;
            }
            done
        }));
    }

    let faults = [
        // The client's deadline (grpc-timeout), less a margin for the reply, bounds the call...
        (
            json!({"fault": "loop"}),
            Some(Duration::from_secs(1)),
            Code::DeadlineExceeded,
            "timed out after 900ms",
        ),
        // ...else the host's default does.
        (
            json!({"fault": "loop"}),
            None,
            Code::DeadlineExceeded,
            "timed out after 2s",
        ),
        (
            json!({"fault": "alloc"}),
            None,
            Code::ResourceExhausted,
            "exceeded its memory limit of 67108864 bytes",
        ),
        (
            json!({"fault": "trap"}),
            None,
            Code::Internal,
            "function \"function-a\" trapped",
        ),
        (
            json!({"fault": "panic"}),
            None,
            Code::Internal,
            "scripted panic",
        ),
        (
            json!({"fault": "malformed"}),
            None,
            Code::Internal,
            "returned a malformed response",
        ),
        (
            json!({"fault": "error"}),
            None,
            Code::Unknown,
            "function \"function-a\" failed: scripted error",
        ),
    ];
    let mut client = raw_client(addr, &authority("function-a")).await;
    for (input, timeout, code, text) in faults {
        let started = Instant::now();
        let status = run_raw(&mut client, input.clone(), timeout)
            .await
            .expect_err("the fault is an error");
        assert_eq!(status.code(), code, "{input}: {status:?}");
        assert!(
            status.message().contains(text),
            "{input}: {}",
            status.message()
        );
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{input} took {:?}",
            started.elapsed()
        );
    }

    for task in healthy {
        let done = task.await.expect("healthy caller");
        assert!(done >= 5, "healthy calls kept succeeding: {done}");
    }
    // A request the guest can't be given (NaN has no JSON form) is refused.
    let nan = prost_types::Struct {
        fields: [(
            "n".to_owned(),
            prost_types::Value {
                kind: Some(prost_types::value::Kind::NumberValue(f64::NAN)),
            },
        )]
        .into(),
    };
    let request = v1::RunFunctionRequest {
        input: Some(nan),
        ..v1::RunFunctionRequest::default()
    };
    let status = client.run_function(request).await.expect_err("refused");
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(
        status
            .message()
            .contains("input: the number NaN has no JSON representation"),
        "{}",
        status.message()
    );

    // And the server is still fine.
    run_raw(&mut client, json!({"count": true}), None)
        .await
        .expect("healthy after the faults");
    server.stop().await.expect("stops cleanly");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_guest_error_reaches_python_cut_instead_of_overflowing_its_metadata() {
    let server = Serving::start(
        ServerConfig::default(),
        wasm_functions(HostConfig::default()),
    )
    .await;
    let calls = [
        call("function-a", "v1", json!({"errorBytes": 3 << 20})),
        // Non-ASCII text takes three times as much once percent-encoded.
        call(
            "function-a",
            "v1",
            json!({"errorText": "é".repeat(1 << 20)}),
        ),
        call("function-a", "v1", json!({"count": true})),
    ];
    let results = py_client(&server.target(), None, &calls).await;
    for result in &results[..2] {
        let (code, details) = error(result);
        assert_eq!(code, "UNKNOWN", "{}", &details[..details.len().min(300)]);
        assert!(
            details.starts_with("function \"function-a\" failed: "),
            "{}",
            &details[..details.len().min(300)]
        );
        assert!(details.ends_with(" bytes more)"), "{details}");
        assert!(details.len() <= 8 << 10, "{} bytes", details.len());
    }
    assert_scripted(&results[2]);
    server.stop().await.expect("stops cleanly");
}

/// On a current-thread runtime every task runs on the test's thread, so the
/// server's log lines reach the test's log capture.
#[tokio::test(flavor = "current_thread")]
async fn the_log_line_of_a_failed_call_is_one_line_whatever_the_guest_wrote() {
    let (logs, _guard) = xfn_tests::logs::Logs::capture(tracing::Level::WARN);
    let server = Serving::start(
        ServerConfig::default(),
        wasm_functions(HostConfig::default()),
    )
    .await;
    let mut client = raw_client(server.addr, &authority("function-a")).await;
    let forged = "no\n2026-01-01T00:00:00Z  INFO xfn: all is well\r\n";
    let status = run_raw(&mut client, json!({"errorText": forged}), None)
        .await
        .expect_err("the function fails");
    // Clients get the message as the guest wrote it.
    assert_eq!(
        status.message(),
        format!("function \"function-a\" failed: {forged}")
    );
    let huge = run_raw(&mut client, json!({"errorBytes": 3 << 20}), None)
        .await
        .expect_err("the function fails");
    assert_eq!(huge.code(), Code::Unknown);
    server.stop().await.expect("stops cleanly");
    let text = logs.text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "one line per failed call: {text:?}");
    assert!(
        lines[0].contains(r"failed: no\n2026-01-01T00:00:00Z  INFO xfn: all is well\r\n "),
        "{text:?}"
    );
    assert!(lines[1].len() < 8 << 10, "{} bytes", lines[1].len());
    assert!(lines[1].contains(" bytes more) "), "{}", &lines[1][..200]);
}

/// Reads `stream` until the server closes it, or panics after `limit`.
async fn wait_closed(stream: &mut (impl tokio::io::AsyncRead + Unpin), limit: Duration) {
    use tokio::io::AsyncReadExt as _;
    let mut buf = [0u8; 1024];
    let closed = tokio::time::timeout(limit, async {
        // The server may send its own SETTINGS first.
        while let Ok(n) = stream.read(&mut buf).await {
            if n == 0 {
                break;
            }
        }
    })
    .await;
    assert!(
        closed.is_ok(),
        "the server still holds the connection after {limit:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plaintext_client_that_never_starts_http2_is_cut_off() {
    use tokio::io::AsyncWriteExt as _;
    let server = Serving::start(
        ServerConfig::default(),
        wasm_functions(HostConfig::default()),
    )
    .await;
    let mut silent = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("connect");
    let mut partial = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("connect");
    partial
        .write_all(b"PRI * HTTP/2.0\r\n")
        .await
        .expect("half a preface");
    // The server allows 10 s; the bound here is generous.
    wait_closed(&mut silent, Duration::from_secs(60)).await;
    wait_closed(&mut partial, Duration::from_secs(60)).await;
    // Calls still work, and a connection that started HTTP/2 in time may
    // stay idle past the bound.
    let mut client = raw_client(server.addr, &authority("function-a")).await;
    run_raw(&mut client, json!({"count": true}), None)
        .await
        .expect("a healthy call");
    tokio::time::sleep(Duration::from_secs(11)).await;
    run_raw(&mut client, json!({"count": true}), None)
        .await
        .expect("a call on a connection idle past the bound");
    server.stop().await.expect("stops cleanly");
}

/// An HTTP/2 frame, as read off the wire.
struct Frame {
    kind: u8,
    stream: u32,
    payload: Vec<u8>,
}

/// Reads one frame from the server, within 10 s; its payload may not pass
/// HTTP/2's default largest frame (16 KiB).
async fn read_frame(tcp: &mut tokio::net::TcpStream) -> Frame {
    use tokio::io::AsyncReadExt as _;
    let read = async {
        let mut header = [0u8; 9];
        tcp.read_exact(&mut header).await.expect("a frame header");
        let len =
            usize::from(header[0]) << 16 | usize::from(header[1]) << 8 | usize::from(header[2]);
        assert!(len <= 16_384, "a frame of {len} bytes");
        let mut payload = vec![0u8; len];
        tcp.read_exact(&mut payload).await.expect("a frame payload");
        Frame {
            kind: header[3],
            // The top bit is reserved.
            stream: u32::from_be_bytes([header[5], header[6], header[7], header[8]]) & !(1 << 31),
            payload,
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .expect("the server sends its frames in time")
}

/// A connection may have at most `MAX_STREAMS_PER_CONNECTION` streams open:
/// the server says so in its first SETTINGS frame, so a client queues the
/// rest instead of opening streams without end. Its flow-control windows
/// are fixed at `FLOW_CONTROL_WINDOW`, for each stream (in SETTINGS) and for
/// the connection (in a WINDOW_UPDATE of stream 0), so a client may send
/// that much unread and no more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_bounds_the_streams_and_the_unread_bytes_of_a_connection() {
    use tokio::io::AsyncWriteExt as _;
    let server = Serving::start(
        ServerConfig::default(),
        wasm_functions(HostConfig::default()),
    )
    .await;
    let mut tcp = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("connect");
    // The client preface, then an empty SETTINGS frame.
    tcp.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0")
        .await
        .expect("preface");
    let settings = read_frame(&mut tcp).await;
    assert_eq!(settings.kind, 0x4, "the server's first frame is SETTINGS");
    // Each setting: a 16-bit id and a 32-bit value.
    let setting = |id: u16| {
        settings.payload.chunks_exact(6).find_map(|s| {
            (u16::from_be_bytes([s[0], s[1]]) == id)
                .then(|| u32::from_be_bytes([s[2], s[3], s[4], s[5]]))
        })
    };
    // 0x3 is MAX_CONCURRENT_STREAMS.
    assert_eq!(
        setting(0x3),
        Some(xfn_grpc::server::MAX_STREAMS_PER_CONNECTION)
    );
    let window = xfn_grpc::server::FLOW_CONTROL_WINDOW;
    // 0x4 is INITIAL_WINDOW_SIZE: each stream's window.
    assert_eq!(setting(0x4), Some(window));
    // The connection's window starts at HTTP/2's 65,535 bytes; the server
    // raises it with a WINDOW_UPDATE (type 0x8) of stream 0, among its
    // first few frames.
    let mut raised = None;
    for _ in 0..8 {
        let frame = read_frame(&mut tcp).await;
        if frame.kind == 0x8 && frame.stream == 0 {
            let increment: [u8; 4] = frame.payload.as_slice().try_into().expect("4 bytes");
            raised = Some(u32::from_be_bytes(increment));
            break;
        }
    }
    assert_eq!(raised, Some(window - 65_535), "the connection's window");
    // A graceful stop waits for open connections.
    drop(tcp);
    server.stop().await.expect("stops cleanly");
}

/// `serve --tls-certs-dir`: a client that finishes its TLS handshake (with
/// a good certificate) but never starts HTTP/2 is cut off too, as with
/// `--insecure`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mtls_client_that_never_starts_http2_is_cut_off() {
    let (server, certs) = tls_server().await;
    let mut silent = mtls_handshake(&server, &certs, Duration::from_secs(10)).await;
    // The server allows 10 s; the bound here is generous.
    wait_closed(&mut silent, Duration::from_secs(60)).await;
    server.stop().await.expect("stops cleanly");
}

/// The attack round's M1: idle TCP connections that never start TLS held
/// every one of the 256 handshake slots for 10 s each, so with 300 of them
/// new mTLS clients waited 7–8 s. A connection now takes a slot only once
/// it sends its ClientHello.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_do_not_hold_up_tls_handshakes() {
    // More than the 256 handshake slots.
    const IDLE: usize = 400;
    let (server, certs) = tls_server().await;
    let mut idle = Vec::new();
    for _ in 0..IDLE {
        idle.push(
            tokio::net::TcpStream::connect(server.addr)
                .await
                .expect("connect"),
        );
    }
    // Let the server accept them all.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let started = std::time::Instant::now();
    mtls_handshake(&server, &certs, Duration::from_secs(3)).await;
    eprintln!(
        "handshake beside {} idle connections: {:?}",
        idle.len(),
        started.elapsed()
    );
    drop(idle);
    server.stop().await.expect("stops cleanly");
}

/// `serve --tls-certs-dir` with certificates for `function-a`.
async fn tls_server() -> (Serving, Certs) {
    let certs = Certs::for_functions(&["function-a"]);
    let config = ServerConfig {
        tls: Some(xfn_grpc::tls::TlsFiles::read_dir(&certs.server).expect("server certs")),
        namespace: Some(NS.into()),
        ..ServerConfig::default()
    };
    (
        Serving::start(config, wasm_functions(HostConfig::default())).await,
        certs,
    )
}

/// A finished mTLS handshake with `server` as `function-a`, within `limit`.
async fn mtls_handshake(
    server: &Serving,
    certs: &Certs,
    limit: Duration,
) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
    use rustls_pki_types::ServerName;
    let tcp = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("connect");
    let name = ServerName::try_from(format!("function-a.{NS}")).expect("a name");
    tokio::time::timeout(limit, mtls_connector(certs).connect(name, tcp))
        .await
        .expect("the handshake finishes in time")
        .expect("the handshake succeeds")
}

/// A TLS client with the client certificate of `certs`, speaking h2.
fn mtls_connector(certs: &Certs) -> tokio_rustls::TlsConnector {
    use rustls_pki_types::pem::PemObject as _;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let client = xfn_grpc::tls::TlsFiles::read_dir(&certs.client).expect("client certs");
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&client.ca) {
        roots.add(cert.expect("CA")).expect("CA");
    }
    let chain = CertificateDer::pem_slice_iter(&client.cert)
        .collect::<Result<Vec<_>, _>>()
        .expect("client chain");
    let key = PrivateKeyDer::from_pem_slice(&client.key).expect("client key");
    let mut tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_root_certificates(roots)
    .with_client_auth_cert(chain, key)
    .expect("client auth");
    tls.alpn_protocols = vec![b"h2".to_vec()];
    tokio_rustls::TlsConnector::from(Arc::new(tls))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_is_reported_per_function_and_overall_and_reflection_lists_services() {
    use tonic_health::pb::HealthCheckRequest;
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::health_client::HealthClient;

    let server = Serving::start(
        ServerConfig::default(),
        wasm_functions(HostConfig::default()),
    )
    .await;
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{}", server.addr))
        .expect("endpoint")
        .connect()
        .await
        .expect("connect");
    let mut health = HealthClient::new(channel);
    let mut check = async |service: &str| {
        health
            .check(HealthCheckRequest {
                service: service.into(),
            })
            .await
            .map(|r| r.into_inner().status)
            .map_err(|s| s.code())
    };
    let serving = Ok(ServingStatus::Serving as i32);
    assert_eq!(check("").await, serving);
    assert_eq!(check("function-a").await, serving);
    assert_eq!(check("function-b").await, serving);
    assert_eq!(check(xfn_proto::V1_SERVICE_NAME).await, serving);
    assert_eq!(check(xfn_proto::V1BETA1_SERVICE_NAME).await, serving);
    assert_eq!(check("function-c").await, Err(Code::NotFound));

    // A reload that drops function-b forgets its health.
    let mut only_a = FunctionTable::new();
    let current = server.handle.functions();
    only_a.insert("function-a", current.get("function-a").expect("a").clone());
    server.handle.reload(only_a).await;
    assert_eq!(check("function-b").await, Err(Code::NotFound));
    assert_eq!(check("function-a").await, serving);

    let reflected = py_client(&server.target(), None, &[json!({"reflect": true})]).await;
    let services = reflected[0]["services"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for want in [
        xfn_proto::V1_SERVICE_NAME,
        xfn_proto::V1BETA1_SERVICE_NAME,
        "grpc.health.v1.Health",
        "grpc.reflection.v1alpha.ServerReflection",
    ] {
        assert!(
            services.iter().any(|s| s == want),
            "reflection lists {want}: {services:?}"
        );
    }
    server.stop().await.expect("stops cleanly");
}

/// A function that takes a while.
struct Slow {
    name: &'static str,
    delay: Duration,
}

#[async_trait::async_trait]
impl Function for Slow {
    fn name(&self) -> &str {
        self.name
    }

    async fn call(
        &self,
        request: &RunFunctionRequest,
        _: Option<Duration>,
    ) -> Result<RunFunctionResponse, CallError> {
        tokio::time::sleep(self.delay).await;
        Ok(RunFunctionResponse {
            meta: Some(xfn_runtime::protocol::ResponseMeta {
                tag: request
                    .meta
                    .as_ref()
                    .map(|m| m.tag.clone())
                    .unwrap_or_default(),
                ttl: None,
            }),
            ..RunFunctionResponse::default()
        })
    }
}

fn slow_table(delay: Duration) -> FunctionTable {
    let mut table = FunctionTable::new();
    table.insert(
        "function-slow",
        boxed(Slow {
            name: "function-slow",
            delay,
        }),
    );
    table
}

fn tagged(tag: &str) -> v1::RunFunctionRequest {
    v1::RunFunctionRequest {
        meta: Some(v1::RequestMeta {
            tag: tag.into(),
            capabilities: Vec::new(),
        }),
        ..v1::RunFunctionRequest::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_does_not_drop_calls_in_flight() {
    let server = Serving::start(
        ServerConfig::default(),
        slow_table(Duration::from_millis(800)),
    )
    .await;
    let mut client = raw_client(server.addr, &authority("function-slow")).await;
    let mut in_flight_client = client.clone();
    let in_flight =
        tokio::spawn(async move { in_flight_client.run_function(tagged("in-flight")).await });
    tokio::time::sleep(Duration::from_millis(200)).await;

    // Swap in a set without the slow function while it runs.
    let mut other = FunctionTable::new();
    other.insert(
        "function-other",
        boxed(Slow {
            name: "function-other",
            delay: Duration::ZERO,
        }),
    );
    server.handle.reload(other).await;

    let done = in_flight
        .await
        .expect("task")
        .expect("the call in flight finishes");
    assert_eq!(
        done.into_inner().meta.map(|m| m.tag).as_deref(),
        Some("in-flight")
    );
    let gone = client
        .run_function(tagged("after"))
        .await
        .expect_err("no longer served");
    assert_eq!(gone.code(), Code::NotFound);

    server.handle.reload(slow_table(Duration::ZERO)).await;
    client
        .run_function(tagged("back"))
        .await
        .expect("served again");
    server.stop().await.expect("stops cleanly");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_drains_calls_in_flight() {
    let server = Serving::start(
        ServerConfig::default(),
        slow_table(Duration::from_millis(800)),
    )
    .await;
    let addr = server.addr;
    let mut client = raw_client(addr, &authority("function-slow")).await;
    let in_flight = tokio::spawn(async move { client.run_function(tagged("draining")).await });
    tokio::time::sleep(Duration::from_millis(200)).await;

    let started = Instant::now();
    server.stop().await.expect("stops cleanly");
    let done = in_flight
        .await
        .expect("task")
        .expect("the call in flight finished");
    assert_eq!(
        done.into_inner().meta.map(|m| m.tag).as_deref(),
        Some("draining")
    );
    assert!(
        started.elapsed() >= Duration::from_millis(400),
        "waited for the call"
    );
    // Nothing listens any more.
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "the listener is closed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dedicated_port_serves_one_function_to_clients_that_cant_set_the_authority() {
    let config = ServerConfig {
        function_ports: vec![("function-b".into(), "127.0.0.1:0".parse().expect("addr"))],
        ..ServerConfig::default()
    };
    let server = Serving::start(config, wasm_functions(HostConfig::default())).await;
    let dedicated = server.ports[0].1.to_string();
    let plain = |version: &str| json!({"version": version, "request": request("tag-1", json!({"greeting": "Hi"}))});
    let results = py_client(&dedicated, None, &[plain("v1"), plain("v1beta1")]).await;
    assert_hello(&results[0]);
    assert_hello(&results[1]);
    // On the shared port, an address names no function when there are two.
    let shared = py_client(&server.target(), None, &[plain("v1")]).await;
    let (code, details) = error(&shared[0]);
    assert_eq!(code, "NOT_FOUND");
    assert!(
        details.contains(&format!("{:?}", server.target())),
        "{details}"
    );
    server.stop().await.expect("stops cleanly");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_over_the_receive_limit_are_refused() {
    assert_eq!(
        ServerConfig::default().max_recv_message_size,
        4 << 20,
        "gRPC's usual 4 MiB"
    );
    let config = ServerConfig {
        max_recv_message_size: 1 << 20,
        ..ServerConfig::default()
    };
    let server = Serving::start(config, slow_table(Duration::ZERO)).await;
    let mut client = raw_client(server.addr, &authority("function-slow")).await;
    let sized = |bytes: usize| {
        let mut r = tagged("big");
        r.input = Some(
            xfn_grpc::convert::json_to_struct(&json!({"blob": "x".repeat(bytes)}).to_string())
                .expect("struct"),
        );
        r
    };
    client
        .run_function(sized(900 << 10))
        .await
        .expect("under the limit");
    let status = client
        .run_function(sized(2 << 20))
        .await
        .expect_err("over the limit");
    assert_eq!(status.code(), Code::OutOfRange, "{status:?}");
    assert!(status.message().contains("limit"), "{}", status.message());
    server.stop().await.expect("stops cleanly");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn functions_come_from_a_functions_file_and_reload_when_it_changes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scripted = xfn_tests::scripted_wasm();
    let file = dir.path().join("functions.yaml");
    let function_a = format!(
        "apiVersion: pkg.crossplane.io/v1\nkind: Function\nmetadata:\n  name: function-a\n  annotations:\n    \
         render.crossplane.io/runtime-wasm-module: {}\nspec:\n  package: xpkg.example.org/function-a:v1\n",
        scripted.display()
    );
    let builtin = "---\napiVersion: pkg.crossplane.io/v1beta1\nkind: Function\nmetadata:\n  name: function-b\nspec:\n  \
                   package: xpkg.crossplane.io/xfn/function-hello:v0.1.0\n";
    std::fs::write(&file, format!("{function_a}{builtin}")).expect("write");

    let loader = Arc::new(Loader::new(
        xfn_tests::runtime(HostConfig::default()),
        xfn_tests::BuiltinPackages,
    ));
    let specs = read_functions_file(&file).expect("parses");
    let table = FunctionTable::from_iter(loader.load(&specs).expect("loads"));
    assert_eq!(
        table.names().collect::<Vec<_>>(),
        ["function-a", "function-b"]
    );
    let server = Serving::start(ServerConfig::default(), table).await;
    let calls = [
        call("function-a", "v1", json!({"count": true})),
        call("function-b", "v1", json!({"greeting": "Hi"})),
    ];
    let results = py_client(&server.target(), None, &calls).await;
    assert_scripted(&results[0]);
    assert_hello(&results[1]);

    // Drop function-b from the file and reload: function-a is reused as is.
    let before = server
        .handle
        .functions()
        .get("function-a")
        .cloned()
        .expect("a");
    std::fs::write(&file, function_a).expect("write");
    let table = loader
        .load(&read_functions_file(&file).expect("parses"))
        .expect("loads");
    server.handle.reload(FunctionTable::from_iter(table)).await;
    let after = server
        .handle
        .functions()
        .get("function-a")
        .cloned()
        .expect("a");
    assert!(
        Arc::ptr_eq(&before, &after),
        "an unchanged component is not recompiled"
    );
    let results = py_client(&server.target(), None, &calls).await;
    assert_scripted(&results[0]);
    assert_eq!(error(&results[1]).0, "NOT_FOUND");
    server.stop().await.expect("stops cleanly");
}

#[test]
fn a_function_that_cannot_start_is_refused_when_loaded() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("functions.yaml");
    let hello = xfn_tests::wasm_dir().join("hello.wasm");
    std::fs::write(
        &file,
        format!(
            "apiVersion: pkg.crossplane.io/v1\nkind: Function\nmetadata:\n  name: function-hello\n  annotations:\n    \
             render.crossplane.io/runtime-wasm-module: {}\n",
            hello.display()
        ),
    )
    .expect("write");
    let specs = read_functions_file(&file).expect("parses");

    // hello's initial memory is 2 MiB: it cannot start under a 1 MiB cap,
    // and that is found when it is loaded, not on its first call: by the
    // pool's own check, or without a pool by instantiating it once.
    let tight = |pooling| {
        let loader = Loader::new(
            xfn_tests::runtime(HostConfig {
                memory_limit: 1 << 20,
                pooling,
                ..HostConfig::default()
            }),
            xfn_tests::BuiltinPackages,
        );
        match loader.load(&specs) {
            Ok(_) => panic!("a function over the memory cap loads"),
            Err(e) => e.to_string(),
        }
    };
    let error = tight(true);
    assert!(
        error.contains("function-hello") && error.contains("2097152"),
        "{error}"
    );
    let error = tight(false);
    assert!(
        error.contains("cannot start") && error.contains("function-hello"),
        "{error}"
    );
    assert!(error.contains("memory limit"), "{error}");

    let roomy = Loader::new(
        xfn_tests::runtime(HostConfig::default()),
        xfn_tests::BuiltinPackages,
    );
    let table = roomy.load(&specs).expect("loads");
    assert_eq!(table.keys().collect::<Vec<_>>(), ["function-hello"]);
}
