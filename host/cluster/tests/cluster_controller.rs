//! The controller as it runs in a replica: reconciling only while it
//! leads, reacting to the objects it made and to a new root CA, and
//! handing the Lease over. Against the in-process fake API server.

mod cluster_support;

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use cluster_support::*;
use serde_json::{Value, json};
use tokio::sync::watch;
use xfn_cluster::{controller, lease};
use xfn_kube_fake::FakeApiServer;

fn endpoint(fake: &FakeApiServer, revision: &str) -> Option<String> {
    fake.get("pkg.crossplane.io/v1", "functionrevisions", None, revision)?["status"]["endpoint"]
        .as_str()
        .map(str::to_owned)
}

fn secret_ca(fake: &FakeApiServer, name: &str) -> Option<Value> {
    Some(fake.get("v1", "secrets", Some(NS), name)?["data"]["ca.crt"].clone())
}

/// Starts a controller loop with a leadership switch the test holds.
fn start(
    fake: &FakeApiServer,
    leading: bool,
) -> (watch::Sender<bool>, tokio::task::JoinHandle<()>) {
    let (tx, rx) = watch::channel(leading);
    let client = kube::Client::new(fake.service(), "default");
    let writer = Arc::new(writer(fake, "xfn-0"));
    // No shutdown comes (its sender is gone): the loop runs until its
    // leadership channel closes.
    let (_, stop) = watch::channel(false);
    let task = tokio::spawn(controller::run_while_leading(
        client,
        NS.into(),
        writer,
        rx,
        stop,
    ));
    (tx, task)
}

#[tokio::test]
async fn only_the_leader_reconciles() {
    let fake = FakeApiServer::new();
    fake.insert(root_ca()).unwrap();
    fake.insert(function("fn-a", "reg.example/fns/hello:v1"))
        .unwrap();
    fake.insert(revision(
        "fn-a-1",
        "fn-a",
        "reg.example/fns/hello:v1",
        "Active",
    ))
    .unwrap();
    let (leading, task) = start(&fake, false);

    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(endpoint(&fake, "fn-a-1"), None, "a follower must not write");
    assert!(fake.get("v1", "services", Some(NS), "fn-a").is_none());

    leading.send_replace(true);
    eventually("the leader to write fn-a-1's endpoint", || {
        endpoint(&fake, "fn-a-1").as_deref() == Some("dns:///fn-a.crossplane-system:9443")
    })
    .await;

    // A revision added while leading is picked up from the watch.
    fake.insert(function("fn-b", "reg.example/fns/hello:v1"))
        .unwrap();
    fake.insert(revision(
        "fn-b-1",
        "fn-b",
        "reg.example/fns/hello:v1",
        "Active",
    ))
    .unwrap();
    eventually("fn-b-1's endpoint", || endpoint(&fake, "fn-b-1").is_some()).await;

    // Leadership lost: nothing more is written.
    leading.send_replace(false);
    tokio::time::sleep(Duration::from_millis(300)).await;
    fake.insert(function("fn-c", "reg.example/fns/hello:v1"))
        .unwrap();
    fake.insert(revision(
        "fn-c-1",
        "fn-c",
        "reg.example/fns/hello:v1",
        "Active",
    ))
    .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        endpoint(&fake, "fn-c-1"),
        None,
        "a replica that lost the lease must not write"
    );

    // Leading again, it catches up.
    leading.send_replace(true);
    eventually("fn-c-1's endpoint", || endpoint(&fake, "fn-c-1").is_some()).await;

    // A deleted Service is made again (the controller watches what it made).
    fake.delete("v1", "services", Some(NS), "fn-a");
    eventually("fn-a's Service to come back", || {
        fake.get("v1", "services", Some(NS), "fn-a").is_some()
    })
    .await;

    drop(leading);
    tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .expect("the loop ends with its leadership channel")
        .unwrap();
}

#[tokio::test]
async fn a_new_root_ca_reissues_every_certificate() {
    let fake = FakeApiServer::new();
    fake.insert(root_ca()).unwrap();
    for name in ["fn-a", "fn-b"] {
        fake.insert(function(name, "reg.example/fns/hello:v1"))
            .unwrap();
        fake.insert(revision(
            &format!("{name}-1"),
            name,
            "reg.example/fns/hello:v1",
            "Active",
        ))
        .unwrap();
    }
    let (_leading, _task) = start(&fake, true);
    let old = json!(b64(CA_CERT));
    eventually("both certificates", || {
        secret_ca(&fake, "fn-a-tls-server") == Some(old.clone())
            && secret_ca(&fake, "fn-b-tls-server") == Some(old.clone())
    })
    .await;

    let other = xfn_grpc::tls::CertificateAuthority::generate("rotated-root").unwrap();
    fake.insert(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "crossplane-root-ca", "namespace": NS},
        "data": {"tls.crt": b64(other.cert_pem()), "tls.key": b64(&other.key_pem())},
    }))
    .unwrap();
    let new = json!(base64::engine::general_purpose::STANDARD.encode(other.cert_pem()));
    eventually("both certificates from the new CA", || {
        secret_ca(&fake, "fn-a-tls-server") == Some(new.clone())
            && secret_ca(&fake, "fn-b-tls-server") == Some(new.clone())
    })
    .await;
}

#[tokio::test]
async fn the_lease_goes_to_another_replica_when_the_leader_goes() {
    let fake = FakeApiServer::new();
    let client = || kube::Client::new(fake.service(), "default");
    let duration = Duration::from_secs(2);
    let a = lease::elect(client(), NS, "xfn-a", duration).await.unwrap();
    let b = lease::elect(client(), NS, "xfn-b", duration).await.unwrap();
    eventually("one leader", || *a.leading.borrow() ^ *b.leading.borrow()).await;
    let (leader, follower) = if *a.leading.borrow() { (a, b) } else { (b, a) };
    let lease = fake
        .get(
            "coordination.k8s.io/v1",
            "leases",
            Some(NS),
            lease::LEASE_NAME,
        )
        .expect("the Lease");
    assert!(
        lease["spec"]["holderIdentity"]
            .as_str()
            .is_some_and(|h| h.starts_with("xfn-"))
    );

    // The leader's pod dies: it stops renewing without releasing, and the
    // follower takes over once the Lease expires.
    leader.abandon();
    eventually("the follower to take over", || *follower.leading.borrow()).await;

    // A third replica joins; the new leader leaves cleanly (as on SIGTERM)
    // and hands over at once.
    let c = lease::elect(client(), NS, "xfn-c", duration).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!*c.leading.borrow(), "the Lease is held");
    tokio::time::timeout(Duration::from_secs(5), follower.leave())
        .await
        .expect("leaving is bounded");
    eventually("the third replica to lead", || *c.leading.borrow()).await;
    c.leave().await;
}

/// The controller's runtime in-process: it serves, leads, turns ready,
/// and on stop drains, stops reconciling and releases the Lease, so that
/// another replica leads at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_external_runtime_starts_leads_and_stops_in_order() {
    use xfn_cluster::runtime::{ExternalRuntime, RuntimeConfig};
    let fake = FakeApiServer::new();
    fake.insert(root_ca()).unwrap();
    let engine = xfn_runtime::HostEngine::new(xfn_runtime::HostConfig::default()).unwrap();
    let config = RuntimeConfig {
        client: kube::Client::new(fake.service(), "default"),
        namespace: NS.into(),
        identity: "xfn-a".into(),
        pod_labels: [("app.kubernetes.io/name".to_owned(), "xfn".to_owned())].into(),
        lease_duration: Duration::from_secs(15),
        server: xfn_grpc::ServerConfig {
            address: "127.0.0.1:0".parse().unwrap(),
            ..xfn_grpc::ServerConfig::default()
        },
        wasm: xfn_runtime::WasmRuntime::new(engine, None).unwrap(),
        registry: xfn_oci::RegistryOptions::default(),
    };
    let runtime = ExternalRuntime::start(config).await.expect("starts");
    assert_ne!(runtime.local_addr().port(), 0);
    let ready = runtime.ready();
    eventually("the replica to be ready", || *ready.borrow()).await;
    let holder = || {
        fake.get(
            "coordination.k8s.io/v1",
            "leases",
            Some(NS),
            lease::LEASE_NAME,
        )
        .and_then(|l| l["spec"]["holderIdentity"].as_str().map(str::to_owned))
    };
    eventually("xfn-a to lead", || holder().as_deref() == Some("xfn-a")).await;

    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(runtime.run_until(async {
        let _ = stopped.await;
    }));
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(20), running)
        .await
        .expect("stopping is bounded")
        .expect("no panic")
        .expect("stops cleanly");
    assert_ne!(holder().as_deref(), Some("xfn-a"), "the Lease is released");
    let next = lease::elect(
        kube::Client::new(fake.service(), "default"),
        NS,
        "xfn-b",
        Duration::from_secs(15),
    )
    .await
    .unwrap();
    eventually("xfn-b to lead at once", || *next.leading.borrow()).await;
    next.leave().await;
}
