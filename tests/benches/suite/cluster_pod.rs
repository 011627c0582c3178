//! Item 7: one `xfn controller` pod serving 100 wasm functions, as
//! Crossplane's External runtime, beside 100 function Deployments as
//! Crossplane would run them (one Python SDK process each).
//!
//! The pod is a real `xfn controller` process. Its packages are in a real
//! OCI registry; Crossplane's objects are in the in-process fake API
//! server; every function is called once over mTLS, as Crossplane calls,
//! before the pod's resident memory is read.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use xfn_grpc::tls::CertificateAuthority;
use xfn_grpc::{ClientOptions, ClientTls, GrpcFunction};
use xfn_kube_fake::FakeApiServer;
use xfn_kube_fake::crossplane::{function, function_revision};
use xfn_runtime::Function;
use xfn_runtime::protocol::RunFunctionRequest;

use crate::oci_support::{Registry, options};

const NS: &str = "crossplane-system";

/// A process killed on drop.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The pod's resident memory in KiB once it serves `components` (each a
/// distinct function) and has answered one call of each.
pub async fn controller_rss_kib(bin: &Path, components: &[Vec<u8>]) -> Result<f64, String> {
    let registry = Registry::start();
    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    let fake = FakeApiServer::new();
    let ca = CertificateAuthority::generate("crossplane-root-ca").map_err(|e| e.to_string())?;
    fake.insert(xfn_kube_fake::crossplane::root_ca_secret(
        NS,
        ca.cert_pem(),
        &ca.key_pem(),
    ))
    .map_err(|e| e.to_string())?;
    let push_options = options(&work.path().join("push"));
    let mut names = Vec::new();
    for (i, component) in components.iter().enumerate() {
        let name = format!("function-{i}");
        let image = registry.reference(&format!("fns/{name}:v1"));
        xfn_oci::push(
            component.clone(),
            &image,
            &xfn_oci::PushMetadata::default(),
            &push_options,
        )
        .await
        .map_err(|e| format!("push {image}: {e}"))?;
        fake.insert(function(&name, &image))
            .map_err(|e| e.to_string())?;
        fake.insert(function_revision(
            &format!("{name}-1"),
            &name,
            &image,
            "Active",
        ))
        .map_err(|e| e.to_string())?;
        names.push(name);
    }
    let (api, _api) = fake
        .serve("127.0.0.1:0".parse().map_err(|_| "address")?)
        .await
        .map_err(|e| e.to_string())?;
    let grpc = xfn_tests::free_port();
    let pod = Killed(
        Command::new(bin)
            .args(["controller", "--identity", "xfn-bench", "--namespace", NS])
            .args(["--kube-api", &format!("http://{api}")])
            .args(["--address", &format!("127.0.0.1:{grpc}")])
            .args([
                "--probe-address",
                &format!("127.0.0.1:{}", xfn_tests::free_port()),
            ])
            .arg("--cache-dir")
            .arg(work.path().join("cache"))
            .env_remove("XFN_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("start xfn controller: {e}"))?,
    );
    let tls = ClientTls {
        files: ca.issue_client("crossplane").map_err(|e| e.to_string())?,
        server_name: None,
    };
    let deadline = Instant::now() + Duration::from_secs(600);
    for name in &names {
        let client = GrpcFunction::new(
            name,
            &format!("127.0.0.1:{grpc}"),
            ClientOptions {
                tls: Some(tls.clone()),
                authority: Some(format!("{name}.{NS}:9443")),
                ..ClientOptions::default()
            },
        )
        .map_err(|e| e.to_string())?;
        // Until the pod has loaded the function and holds its certificate.
        loop {
            let called = client
                .call(
                    &RunFunctionRequest::default(),
                    Some(Duration::from_secs(10)),
                )
                .await;
            match called {
                Ok(_) => break,
                Err(e) if Instant::now() > deadline => {
                    return Err(format!("{name} was never served: {e}"));
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
            }
        }
    }
    Ok(crate::rss_kib(pod.0.id()))
}
