//! What the cluster tests share: Crossplane's objects as its package
//! manager writes them, a CA like `crossplane-root-ca`, and packages whose
//! kind a test decides.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};
use xfn_cluster::objects::Placement;
use xfn_cluster::reconcile::{PackageKind, PackageProbe, Writer};
use xfn_kube_fake::FakeApiServer;

pub const NS: &str = "crossplane-system";
pub const CA_CERT: &str = include_str!("../../../grpc/src/testdata/crossplane-root-ca.crt");
pub const CA_KEY: &str = include_str!("../../../grpc/src/testdata/crossplane-root-ca.key");

/// Packages by image: what a registry would say about each.
pub struct Packages(BTreeMap<&'static str, Result<PackageKind, &'static str>>);

#[async_trait::async_trait]
impl PackageProbe for Packages {
    async fn probe(
        &self,
        image: &str,
        docker_configs: &[(String, Vec<u8>)],
    ) -> Result<PackageKind, String> {
        if image.contains("private") && docker_configs.is_empty() {
            return Err("unauthorized".into());
        }
        match self.0.get(image) {
            Some(Ok(kind)) => Ok(*kind),
            Some(Err(reason)) => Err((*reason).to_owned()),
            None => Err("not found in the registry".into()),
        }
    }
}

pub fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

pub fn root_ca() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "crossplane-root-ca", "namespace": NS},
        "data": {"tls.crt": b64(CA_CERT), "tls.key": b64(CA_KEY)},
    })
}

pub use xfn_kube_fake::crossplane::{function, function_revision as revision};

/// A writer in [`NS`] for xfn pods labelled `app.kubernetes.io/name: xfn`,
/// with the test's packages.
pub fn writer(fake: &FakeApiServer, instance: &str) -> Writer {
    let client = kube::Client::new(fake.service(), "default");
    let packages = Packages(BTreeMap::from([
        ("reg.example/fns/hello:v1", Ok(PackageKind::Wasm)),
        ("reg.example/fns/private:v1", Ok(PackageKind::Wasm)),
        ("reg.example/fns/container:v1", Ok(PackageKind::Container)),
        (
            "reg.example/fns/broken:v1",
            Err("layer sha256:00 is not a wasm component"),
        ),
    ]));
    let placement = Placement {
        namespace: NS.into(),
        pod_labels: BTreeMap::from([("app.kubernetes.io/name".into(), "xfn".into())]),
    };
    Writer::new(client, placement, Arc::new(packages), instance)
}

/// Waits up to 10 s for `check` to hold, polling.
pub async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !check() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
