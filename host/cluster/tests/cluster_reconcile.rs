//! The leader's reconcile of FunctionRevisions, against an in-process fake
//! API server that speaks the real REST protocol (no Kubernetes cluster is
//! available here), with object shapes as Crossplane writes them.

use base64::Engine as _;
use serde_json::{Value, json};
use xfn_cluster::crd::FunctionRevision;
use xfn_cluster::reconcile::{Outcome, PackageKind, Writer};
use xfn_kube_fake::FakeApiServer;

mod cluster_support;
use cluster_support::*;

struct Cluster {
    fake: FakeApiServer,
    writer: Writer,
}

impl Cluster {
    fn new() -> Cluster {
        let fake = FakeApiServer::new();
        let writer = writer(&fake, "xfn-0");
        Cluster { fake, writer }
    }

    fn add(&self, object: Value) {
        self.fake.insert(object).expect("insert");
    }

    fn revision(&self, name: &str) -> FunctionRevision {
        let value = self
            .fake
            .get("pkg.crossplane.io/v1", "functionrevisions", None, name)
            .expect("revision");
        serde_json::from_value(value).expect("a FunctionRevision")
    }

    async fn reconcile(&self, name: &str) -> Outcome {
        self.writer
            .reconcile(&self.revision(name))
            .await
            .expect("reconcile")
    }

    fn get(&self, gv: &str, plural: &str, name: &str) -> Option<Value> {
        self.fake.get(gv, plural, Some(NS), name)
    }

    fn runtime_healthy(&self, name: &str) -> Value {
        let revision = self
            .fake
            .get("pkg.crossplane.io/v1", "functionrevisions", None, name)
            .unwrap();
        revision["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == "RuntimeHealthy")
            .cloned()
            .unwrap_or(Value::Null)
    }

    fn events(&self) -> Vec<Value> {
        self.fake.list("events.k8s.io/v1", "events", None)
    }
}

#[tokio::test]
async fn a_wasm_function_gets_a_service_a_certificate_and_an_endpoint() {
    let c = Cluster::new();
    c.add(root_ca());
    c.add(function("function-hello", "reg.example/fns/hello:v1"));
    c.add(revision(
        "function-hello-abc",
        "function-hello",
        "reg.example/fns/hello:v1",
        "Active",
    ));

    let outcome = c.reconcile("function-hello-abc").await;
    assert_eq!(
        outcome,
        Outcome::Healthy {
            kind: PackageKind::Wasm,
            endpoint: "dns:///function-hello.crossplane-system:9443".into()
        }
    );

    let svc = c
        .get("v1", "services", "function-hello")
        .expect("a Service");
    assert_eq!(svc["spec"]["clusterIP"], "None");
    assert_eq!(
        svc["spec"]["selector"],
        json!({"app.kubernetes.io/name": "xfn"})
    );
    let revision_uid = c.revision("function-hello-abc").metadata.uid.unwrap();
    assert_eq!(
        svc["metadata"]["ownerReferences"][0]["uid"],
        json!(revision_uid)
    );

    let secret = c
        .get("v1", "secrets", "function-hello-tls-server")
        .expect("a TLS Secret");
    let data = |k: &str| {
        let text = secret["data"][k].as_str().unwrap();
        String::from_utf8(
            base64::engine::general_purpose::STANDARD
                .decode(text)
                .unwrap(),
        )
        .unwrap()
    };
    assert_eq!(data("ca.crt"), CA_CERT);
    assert!(data("tls.crt").starts_with("-----BEGIN CERTIFICATE-----"));
    assert!(data("tls.key").contains("PRIVATE KEY"));
    assert_eq!(
        secret["metadata"]["annotations"]["xfn.dev/tls-names"],
        "function-hello,function-hello.crossplane-system,function-hello.crossplane-system.svc"
    );

    let status = &c.revision("function-hello-abc").status.unwrap();
    assert_eq!(
        status.endpoint.as_deref(),
        Some("dns:///function-hello.crossplane-system:9443")
    );
    assert_eq!(c.runtime_healthy("function-hello-abc")["status"], "True");
    // Crossplane's own status fields are kept.
    assert_eq!(status.capabilities, ["composition"]);
    assert!(
        status
            .conditions
            .iter()
            .any(|c| c.type_ == "RevisionHealthy")
    );
    // No Deployment for a wasm function: xfn's pods serve it.
    assert!(c.fake.list("apps/v1", "deployments", Some(NS)).is_empty());
    assert!(
        c.events().iter().any(|e| e["reason"] == "SyncPackage"),
        "{:?}",
        c.events()
    );

    // Once settled, another reconcile writes nothing: no new certificate.
    let before = c.fake.resource_version();
    let again = c.reconcile("function-hello-abc").await;
    assert!(matches!(again, Outcome::Healthy { .. }));
    assert_eq!(
        c.fake.resource_version(),
        before,
        "a settled reconcile must be a no-op"
    );
}

#[tokio::test]
async fn a_container_function_gets_what_crossplanes_runtime_makes() {
    let c = Cluster::new();
    c.add(root_ca());
    c.add(function("function-go", "reg.example/fns/container:v1"));
    c.add(revision(
        "function-go-1",
        "function-go",
        "reg.example/fns/container:v1",
        "Active",
    ));

    let deployment = reconciled_as_container(&c, "function-go-1").await;
    assert!(c.get("v1", "serviceaccounts", "function-go-1").is_some());
    let svc = c.get("v1", "services", "function-go").unwrap();
    assert_eq!(
        svc["spec"]["selector"]["pkg.crossplane.io/revision"],
        "function-go-1"
    );
    // The endpoint is written before the Deployment is ready, as Crossplane does.
    assert_eq!(
        c.revision("function-go-1")
            .status
            .unwrap()
            .endpoint
            .as_deref(),
        Some("dns:///function-go.crossplane-system:9443")
    );
    assert_eq!(c.runtime_healthy("function-go-1")["status"], "False");

    // The Deployment becomes available: the runtime is healthy.
    let mut available = deployment.clone();
    available["status"] = json!({"conditions": [{"type": "Available", "status": "True"}]});
    c.add(available);
    let outcome = c.reconcile("function-go-1").await;
    assert!(
        matches!(
            outcome,
            Outcome::Healthy {
                kind: PackageKind::Container,
                ..
            }
        ),
        "{outcome:?}"
    );
    assert_eq!(c.runtime_healthy("function-go-1")["status"], "True");

    // Deactivated, it loses its Deployment; the Service and Secret stay.
    let mut inactive = c
        .fake
        .get(
            "pkg.crossplane.io/v1",
            "functionrevisions",
            None,
            "function-go-1",
        )
        .unwrap();
    inactive["spec"]["desiredState"] = json!("Inactive");
    c.add(inactive);
    assert_eq!(c.reconcile("function-go-1").await, Outcome::Deactivated);
    assert!(c.get("apps/v1", "deployments", "function-go-1").is_none());
    assert!(c.get("v1", "services", "function-go").is_some());

    // Deleting the revision takes everything it owns with it.
    c.fake.delete(
        "pkg.crossplane.io/v1",
        "functionrevisions",
        None,
        "function-go-1",
    );
    assert!(c.get("v1", "services", "function-go").is_none());
    assert!(c.get("v1", "secrets", "function-go-tls-server").is_none());
    assert!(c.get("v1", "serviceaccounts", "function-go-1").is_none());
}

/// Runs one revision whose set-up has a problem, and returns its message.
async fn problem(c: &Cluster, name: &str, function_name: &str, image: &str) -> String {
    c.add(function(function_name, image));
    c.add(revision(name, function_name, image, "Active"));
    let Outcome::Unhealthy { message } = c.reconcile(name).await else {
        panic!("{name} must not be healthy");
    };
    let condition = c.runtime_healthy(name);
    assert_eq!(condition["status"], "False");
    assert_eq!(condition["reason"], "UnhealthyPackageRevision");
    assert_eq!(condition["message"], json!(message));
    assert!(
        c.events()
            .iter()
            .any(|e| e["type"] == "Warning" && e["note"] == json!(message)),
        "no Warning event for {name}: {:?}",
        c.events()
    );
    message
}

#[tokio::test]
async fn problems_are_reported_on_the_revision_and_other_functions_carry_on() {
    let c = Cluster::new();
    // No root CA yet.
    let message = problem(&c, "fn-a-1", "fn-a", "reg.example/fns/hello:v1").await;
    assert_eq!(
        message,
        "waiting for Crossplane's CA: Secret crossplane-system/crossplane-root-ca does not exist yet"
    );
    c.add(root_ca());
    assert!(matches!(
        c.reconcile("fn-a-1").await,
        Outcome::Healthy { .. }
    ));

    // A package that isn't a usable component.
    let message = problem(&c, "fn-b-1", "fn-b", "reg.example/fns/broken:v1").await;
    assert_eq!(
        message,
        "cannot use package reg.example/fns/broken:v1: layer sha256:00 is not a wasm component"
    );

    // A pull secret that isn't there.
    let mut private = function("fn-c", "reg.example/fns/private:v1");
    private["spec"]["packagePullSecrets"] = json!([{"name": "regcred"}]);
    c.add(private);
    let mut rev = revision("fn-c-1", "fn-c", "reg.example/fns/private:v1", "Active");
    rev["spec"]["packagePullSecrets"] = json!([{"name": "regcred"}]);
    c.add(rev);
    let Outcome::Unhealthy { message } = c.reconcile("fn-c-1").await else {
        panic!("a missing pull secret must fail");
    };
    assert_eq!(
        message,
        "pull secret regcred does not exist in namespace crossplane-system"
    );
    c.add(json!({
        "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/dockerconfigjson",
        "metadata": {"name": "regcred", "namespace": NS},
        "data": {".dockerconfigjson": b64(r#"{"auths":{"reg.example":{"auth":"dTpw"}}}"#)},
    }));
    assert!(matches!(
        c.reconcile("fn-c-1").await,
        Outcome::Healthy { .. }
    ));

    // The function that was healthy stays so.
    assert_eq!(c.runtime_healthy("fn-a-1")["status"], "True");
}

#[tokio::test]
async fn a_revision_crossplane_has_not_vetted_gets_no_healthy_runtime_yet() {
    let c = Cluster::new();
    c.add(root_ca());
    c.add(function("fn", "reg.example/fns/hello:v1"));
    let mut rev = revision("fn-1", "fn", "reg.example/fns/hello:v1", "Active");
    rev["status"]["conditions"][0]["status"] = json!("False");
    c.add(rev);
    assert_eq!(
        c.reconcile("fn-1").await,
        Outcome::Unhealthy {
            message: "Package revision is not healthy yet".into()
        }
    );
    // The Service, certificate and endpoint are there already.
    assert!(c.get("v1", "services", "fn").is_some());
    assert!(c.get("v1", "secrets", "fn-tls-server").is_some());
    assert!(c.revision("fn-1").status.unwrap().endpoint.is_some());
}

#[tokio::test]
async fn a_rotated_root_ca_reissues_the_certificate() {
    let c = Cluster::new();
    c.add(root_ca());
    c.add(function("fn", "reg.example/fns/hello:v1"));
    c.add(revision("fn-1", "fn", "reg.example/fns/hello:v1", "Active"));
    c.reconcile("fn-1").await;
    let first = c.get("v1", "secrets", "fn-tls-server").unwrap();

    let other = xfn_grpc::tls::CertificateAuthority::generate("other-root").unwrap();
    c.add(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "crossplane-root-ca", "namespace": NS},
        "data": {"tls.crt": b64(other.cert_pem()), "tls.key": b64(&other.key_pem())},
    }));
    c.reconcile("fn-1").await;
    let second = c.get("v1", "secrets", "fn-tls-server").unwrap();
    assert_ne!(first["data"]["tls.crt"], second["data"]["tls.crt"]);
    assert_eq!(second["data"]["ca.crt"], json!(b64(other.cert_pem())));
}

fn runtime_config(name: &str) -> Value {
    json!({
        "apiVersion": "pkg.crossplane.io/v1beta1", "kind": "DeploymentRuntimeConfig",
        "metadata": {"name": name},
    })
}

#[tokio::test]
async fn every_shape_crossplanes_crds_allow_is_read() {
    let c = Cluster::new();
    c.add(root_ca());
    // `default` without a spec, which Crossplane's CRD allows.
    c.add(runtime_config("default"));
    c.add(function("fn-a", "reg.example/fns/hello:v1"));
    c.add(revision(
        "fn-a-1",
        "fn-a",
        "reg.example/fns/hello:v1",
        "Active",
    ));
    assert!(
        matches!(c.reconcile("fn-a-1").await, Outcome::Healthy { .. }),
        "{}",
        c.runtime_healthy("fn-a-1")
    );

    // A named config with an empty spec and fields xfn does not know; a
    // Function and a revision with fields of a later Crossplane.
    let mut config = runtime_config("tuned");
    config["spec"] = json!({"futureTemplate": {"x": 1}});
    config["status"] = json!({"whatever": true});
    c.add(config);
    let mut container = function("fn-b", "reg.example/fns/container:v1");
    container["spec"]["runtimeConfigRef"] = json!({"apiVersion": "pkg.crossplane.io/v1beta1",
        "kind": "DeploymentRuntimeConfig", "name": "tuned"});
    container["spec"]["newField"] = json!(["a", {"b": 2}]);
    c.add(container);
    let mut rev = revision("fn-b-1", "fn-b", "reg.example/fns/container:v1", "Active");
    rev["spec"]["commonLabels"] = json!({"team": "a"});
    rev["spec"]["tlsServerSecretName"] = json!("fn-b-tls-server");
    rev["status"]["foundDependencies"] = json!(3);
    rev["status"]["conditions"][0]["extra"] = json!("x");
    c.add(rev);
    reconciled_as_container(&c, "fn-b-1").await;
}

/// Reconciles revision `name` of the container function
/// `reg.example/fns/container:v1`: its Deployment is made and not yet
/// available. Returns the Deployment.
async fn reconciled_as_container(c: &Cluster, name: &str) -> Value {
    let outcome = c.reconcile(name).await;
    assert_eq!(
        outcome,
        Outcome::Unhealthy {
            message: "function package deployment has no condition of type \"Available\" yet"
                .into()
        }
    );
    let deployment = c.get("apps/v1", "deployments", name).expect("a Deployment");
    assert_eq!(
        deployment["spec"]["template"]["spec"]["containers"][0]["image"],
        "reg.example/fns/container:v1"
    );
    deployment
}

#[tokio::test]
async fn a_runtime_config_that_cannot_be_used_is_reported_on_the_revision() {
    let c = Cluster::new();
    c.add(root_ca());
    // Labels must be a map of strings: this one can't be decoded.
    let mut config = runtime_config("default");
    config["spec"] = json!({"serviceTemplate": {"metadata": {"labels": "team=a"}}});
    c.add(config);
    let message = problem(&c, "fn-a-1", "fn-a", "reg.example/fns/hello:v1").await;
    assert!(
        message.starts_with("cannot read DeploymentRuntimeConfig default: invalid type: string"),
        "{message}"
    );
    assert!(
        c.events()
            .iter()
            .any(|e| e["reason"] == "InvalidRuntimeConfig"),
        "{:?}",
        c.events()
    );
    // Nothing was made from it.
    assert!(c.get("v1", "services", "fn-a").is_none());

    // Fixed, it is used.
    let mut config = runtime_config("default");
    config["spec"] = json!({"serviceTemplate": {"metadata": {"name": "fn-a-svc"}}});
    c.add(config);
    assert_eq!(
        c.reconcile("fn-a-1").await,
        Outcome::Healthy {
            kind: PackageKind::Wasm,
            endpoint: "dns:///fn-a-svc.crossplane-system:9443".into()
        }
    );

    // A config a Function names that does not exist.
    let mut named = function("fn-b", "reg.example/fns/hello:v1");
    named["spec"]["runtimeConfigRef"] = json!({"name": "missing"});
    c.add(named);
    c.add(revision(
        "fn-b-1",
        "fn-b",
        "reg.example/fns/hello:v1",
        "Active",
    ));
    let Outcome::Unhealthy { message } = c.reconcile("fn-b-1").await else {
        panic!("a missing runtime config must fail");
    };
    assert_eq!(
        message,
        "Function fn-b names DeploymentRuntimeConfig missing, which does not exist"
    );
    assert_eq!(c.runtime_healthy("fn-b-1")["status"], "False");
    assert!(
        c.events()
            .iter()
            .any(|e| e["reason"] == "MissingRuntimeConfig" && e["note"] == json!(message))
    );
}

fn root_ca_with(cert: &[u8], key: &[u8]) -> Value {
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "crossplane-root-ca", "namespace": NS},
        "data": {"tls.crt": b64(cert), "tls.key": b64(key)},
    })
}

#[tokio::test]
async fn a_root_ca_that_is_not_pem_or_too_big_is_reported_as_such() {
    let c = Cluster::new();
    let prefix = "Secret crossplane-system/crossplane-root-ca";

    // Not UTF-8: not "missing".
    c.add(root_ca_with(&[0xff, 0xfe, 0x00, 0x9f], CA_KEY.as_bytes()));
    let message = problem(&c, "fn-a-1", "fn-a", "reg.example/fns/hello:v1").await;
    assert_eq!(
        message,
        format!("{prefix}: tls.crt is not PEM: it is not even UTF-8 text")
    );
    assert!(c.events().iter().any(|e| e["reason"] == "InvalidRootCA"));

    // Text, but no certificate in it.
    c.add(root_ca_with(b"garbage", CA_KEY.as_bytes()));
    let message = problem(&c, "fn-b-1", "fn-b", "reg.example/fns/hello:v1").await;
    assert_eq!(
        message,
        format!("{prefix}: tls.crt holds no PEM certificate")
    );

    // A key that is garbage.
    c.add(root_ca_with(CA_CERT.as_bytes(), &[0x80; 64]));
    let message = problem(&c, "fn-c-1", "fn-c", "reg.example/fns/hello:v1").await;
    assert_eq!(
        message,
        format!("{prefix}: tls.key is not PEM: it is not even UTF-8 text")
    );

    // 700 copies of the CA (910 KB, within a Secret's 1 MiB).
    c.add(root_ca_with(
        CA_CERT.repeat(700).as_bytes(),
        CA_KEY.as_bytes(),
    ));
    let message = problem(&c, "fn-d-1", "fn-d", "reg.example/fns/hello:v1").await;
    assert!(
        message.starts_with(&format!("{prefix}: tls.crt is ")),
        "{message}"
    );
    assert!(message.contains("over the limit of 65536"), "{message}");
    // Few enough bytes, too many certificates.
    let small = CA_CERT.lines().take(3).collect::<Vec<_>>().join("\n") + "\n";
    let small = format!("{small}-----END CERTIFICATE-----\n").repeat(20);
    c.add(root_ca_with(small.as_bytes(), CA_KEY.as_bytes()));
    let message = problem(&c, "fn-e-1", "fn-e", "reg.example/fns/hello:v1").await;
    assert_eq!(
        message,
        format!("{prefix}: tls.crt holds 20 certificates, more than the 8 accepted")
    );
    // No function got a Secret with the bundle in it.
    assert!(c.get("v1", "secrets", "fn-d-tls-server").is_none());

    // A missing key is still "missing", and named.
    c.add(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "crossplane-root-ca", "namespace": NS},
        "data": {"tls.crt": b64(CA_CERT)},
    }));
    let message = problem(&c, "fn-f-1", "fn-f", "reg.example/fns/hello:v1").await;
    assert_eq!(message, format!("{prefix} has no tls.key yet"));

    // The real CA works.
    c.add(root_ca());
    assert!(matches!(
        c.reconcile("fn-a-1").await,
        Outcome::Healthy { .. }
    ));
}
