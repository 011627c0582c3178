use std::future::Future;
use std::time::Duration;

use kube::CustomResource;
use serde::{Deserialize, Serialize};
use xfn_kube_fake::FakeApiServer;

/// Upper bound for any single awaited step of a test.
pub const STEP: Duration = Duration::from_secs(15);

/// Awaits `f`, failing the test if it takes longer than [`STEP`].
pub async fn within<F: Future>(what: &str, f: F) -> F::Output {
    match tokio::time::timeout(STEP, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out: {what}"),
    }
}

/// A kube client talking to the fake in-process.
pub fn client(fake: &FakeApiServer) -> kube::Client {
    kube::Client::new(fake.service(), "default")
}

/// Polls `cond` every 20 ms until it holds, failing after [`STEP`].
pub async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    within(what, async {
        while !cond() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
}

/// The part of Crossplane's FunctionRevision xfn reads.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, PartialEq)]
#[kube(
    group = "pkg.crossplane.io",
    version = "v1",
    kind = "FunctionRevision",
    schema = "disabled",
    status = "FunctionRevisionStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct FunctionRevisionSpec {
    pub desired_state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
}

/// Status fields the tests write.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FunctionRevisionStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<serde_json::Value>,
}

pub fn revision(name: &str) -> FunctionRevision {
    FunctionRevision::new(
        name,
        FunctionRevisionSpec {
            desired_state: "Active".into(),
            image: Some("xpkg.example/fn:v1".into()),
        },
    )
}
