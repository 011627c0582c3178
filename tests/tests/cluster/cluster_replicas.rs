//! Two `xfn controller` processes as two replicas of xfn's Deployment,
//! against the fake API server on loopback (no Kubernetes cluster can run
//! here) and a real registry: both become ready and serve the function;
//! when the leader is killed, the other takes the Lease and goes on
//! writing.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::oci_support::{Registry, free_port, hello_wasm, options};
use serde_json::{Value, json};
use xfn_grpc::{ClientOptions, ClientTls, GrpcFunction};
use xfn_kube_fake::FakeApiServer;
use xfn_runtime::Function as _;
use xfn_runtime::protocol::RunFunctionRequest;
use xfn_tests::xfn_bin;

const NS: &str = "crossplane-system";

const CROSSPLANE_YAML: &str = "\
apiVersion: meta.pkg.crossplane.io/v1
kind: Function
metadata:
  name: function-hello
spec:
  capabilities: [composition]
";

fn function_and_revision(fake: &FakeApiServer, name: &str, image: &str) {
    use xfn_kube_fake::crossplane::{function, function_revision};
    fake.insert(function(name, image)).unwrap();
    fake.insert(function_revision(
        &format!("{name}-1"),
        name,
        image,
        "Active",
    ))
    .unwrap();
}

/// One `xfn controller` process, killed when dropped.
struct Replica {
    identity: &'static str,
    child: Child,
    grpc: u16,
    probes: u16,
}

impl Replica {
    fn start(identity: &'static str, api: &str, work: &Path) -> Replica {
        let (grpc, probes) = (free_port(), free_port());
        let log = std::fs::File::create(work.join(format!("{identity}.log"))).unwrap();
        let child = Command::new("timeout")
            .arg("120")
            .arg(xfn_bin())
            .args(["controller", "--identity", identity, "--kube-api", api])
            .args(["--address", &format!("127.0.0.1:{grpc}")])
            .args(["--probe-address", &format!("127.0.0.1:{probes}")])
            .args(["--lease-duration", "2s", "--namespace", NS])
            .arg("--cache-dir")
            .arg(work.join(identity))
            .env("XFN_LOG", "info")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start xfn controller");
        Replica {
            identity,
            child,
            grpc,
            probes,
        }
    }

    async fn ready(&self) -> bool {
        xfn_tests::http_get(self.probes, "/readyz")
            .await
            .is_some_and(|(status, _)| status == 200)
    }

    /// Calls `function` on this replica as Crossplane does.
    async fn call(&self, function: &str, tls: &ClientTls) -> Result<(), String> {
        let options = ClientOptions {
            tls: Some(tls.clone()),
            authority: Some(format!("{function}.{NS}:9443")),
            ..ClientOptions::default()
        };
        let client = GrpcFunction::new(function, &format!("127.0.0.1:{}", self.grpc), options)
            .map_err(|e| e.to_string())?;
        client
            .call(
                &RunFunctionRequest::default(),
                Some(Duration::from_secs(10)),
            )
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// Kills the replica as a node failure would: SIGKILL to `xfn`
    /// itself (the child of `timeout`), so nothing is released.
    fn kill(&mut self) {
        xfn_tests::stop_under_timeout(&mut self.child);
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.kill();
    }
}

/// How long the replicas get to converge.
const CONVERGE: Duration = Duration::from_secs(60);

fn endpoint(fake: &FakeApiServer, revision: &str) -> Option<Value> {
    let revision = fake.get("pkg.crossplane.io/v1", "functionrevisions", None, revision)?;
    Some(revision["status"]["endpoint"].clone()).filter(|e| !e.is_null())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_serve_and_the_lease_moves_when_the_leader_dies() {
    let registry = Registry::start();
    let work = tempfile::tempdir().unwrap();
    let image = registry.reference("fns/function-hello:v1");
    let metadata = xfn_oci::PushMetadata {
        package: Some(xfn_oci::PackageFile {
            source: "crossplane.yaml".into(),
            bytes: CROSSPLANE_YAML.as_bytes().to_vec(),
        }),
        ..xfn_oci::PushMetadata::default()
    };
    xfn_oci::push(
        hello_wasm(),
        &image,
        &metadata,
        &options(&work.path().join("push")),
    )
    .await
    .expect("push");

    let (fake, ca) = crate::fake_with_root_ca(NS);
    let (api, _api_handle) = fake.serve("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let api = format!("http://{api}");
    function_and_revision(&fake, "function-hello", &image);
    let client_tls = ClientTls {
        files: ca.issue_client("crossplane").unwrap(),
        server_name: None,
    };

    let mut replicas = [
        Replica::start("xfn-a", &api, work.path()),
        Replica::start("xfn-b", &api, work.path()),
    ];
    for replica in &replicas {
        xfn_tests::eventually(
            &format!("{} to be ready", replica.identity),
            CONVERGE,
            async || replica.ready().await,
        )
        .await;
    }
    xfn_tests::eventually("the endpoint", CONVERGE, async || {
        endpoint(&fake, "function-hello-1").is_some()
    })
    .await;
    for replica in &replicas {
        xfn_tests::eventually(
            &format!("{} to serve function-hello", replica.identity),
            CONVERGE,
            async || replica.call("function-hello", &client_tls).await.is_ok(),
        )
        .await;
    }

    // Kill the leader: the other replica takes the Lease and writes.
    let lease = fake
        .get(
            "coordination.k8s.io/v1",
            "leases",
            Some(NS),
            "xfn-controller",
        )
        .expect("the Lease");
    let leader = lease["spec"]["holderIdentity"]
        .as_str()
        .expect("a holder")
        .to_owned();
    let (dead, alive): (Vec<_>, Vec<_>) = replicas.iter_mut().partition(|r| r.identity == leader);
    let (dead, alive) = (
        dead.into_iter().next().unwrap(),
        alive.into_iter().next().unwrap(),
    );
    dead.kill();
    function_and_revision(&fake, "function-bye", &image);
    xfn_tests::eventually(
        "the new leader to write function-bye's endpoint",
        CONVERGE,
        async || endpoint(&fake, "function-bye-1").is_some(),
    )
    .await;
    xfn_tests::eventually("the survivor to serve function-bye", CONVERGE, async || {
        alive.call("function-bye", &client_tls).await.is_ok()
    })
    .await;
    let lease = fake
        .get(
            "coordination.k8s.io/v1",
            "leases",
            Some(NS),
            "xfn-controller",
        )
        .unwrap();
    assert_eq!(lease["spec"]["holderIdentity"], json!(alive.identity));

    // The survivor's metrics count the calls it served, by function.
    let (status, metrics) = xfn_tests::http_get(alive.probes, "/metrics")
        .await
        .expect("the metrics endpoint answers");
    assert_eq!(status, 200, "{metrics}");
    let served = metrics
        .lines()
        .find(|l| l.starts_with(r#"xfn_function_calls_total{function="function-bye",result="ok"}"#))
        .and_then(|l| l.rsplit(' ').next()?.parse::<f64>().ok());
    assert!(served.is_some_and(|n| n >= 1.0), "{metrics}");
    // It pulled its packages from the registry, without a failure.
    assert!(
        metrics.contains(r#"xfn_package_pulls_total{result="ok"}"#),
        "{metrics}"
    );
    assert!(!metrics.contains(r#"result="error""#), "{metrics}");

    // Every request the replicas made is one deploy/rbac.yaml allows.
    let requests = fake.requests();
    assert!(requests.len() > 20, "the replicas made requests");
    xfn_tests::rbac::assert_deploy_rbac_allows(
        requests
            .iter()
            .map(|r| (r.method.as_str(), r.path.as_str(), r.query.as_str())),
    );
}
