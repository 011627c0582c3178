//! xfn as Crossplane's External function runtime, end to end on one
//! machine: a real OCI registry holds the packages; an in-process fake API
//! server (no Kubernetes cluster can run here) holds Crossplane's objects
//! as its package manager writes them; the test plays Crossplane.
//!
//! The controller's writer and a replica's serving side run against them
//! with a real gRPC server. `xfn render` then calls the wasm function the
//! way Crossplane does (mTLS with a client certificate from
//! `crossplane-root-ca`, the Service's name as authority and server name,
//! resolved to 127.0.0.1) and must print what the built-in function prints.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::oci_support::{Layout, Registry, layer, options, tar_gz};
use serde_json::{Value, json};
use tokio::sync::watch;
use xfn_cluster::controller;
use xfn_cluster::objects::Placement;
use xfn_cluster::packages::OciProbe;
use xfn_cluster::reconcile::Writer;
use xfn_cluster::serving::Replica;
use xfn_grpc::sni::DynamicTls;
use xfn_grpc::tls::{CertificateAuthority, TlsFiles};
use xfn_grpc::{FunctionTable, Server, ServerConfig};
use xfn_kube_fake::FakeApiServer;
use xfn_kube_fake::crossplane::{function, function_revision as revision};
use xfn_runtime::{HostConfig, HostEngine, WasmRuntime};
use xfn_tests::{run_xfn, wasm_dir};

const NS: &str = "crossplane-system";
const PAT: &str = "function-patch-and-transform";

const CROSSPLANE_YAML: &str = "\
apiVersion: meta.pkg.crossplane.io/v1
kind: Function
metadata:
  name: function-patch-and-transform
spec:
  capabilities: [composition]
";

fn secret(name: &str, data: &[(&str, &[u8])]) -> Value {
    xfn_kube_fake::crossplane::secret(name, NS, data)
}

fn get(
    fake: &FakeApiServer,
    gv: &str,
    plural: &str,
    namespace: Option<&str>,
    name: &str,
) -> Option<Value> {
    fake.get(gv, plural, namespace, name)
}

/// How long the controller gets to converge.
const CONVERGE: Duration = Duration::from_secs(30);

/// Waits for `check` to hold, up to [`CONVERGE`].
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    xfn_tests::eventually(what, CONVERGE, async || check()).await;
}

/// Renders the docs example with its function reached as a Development
/// runtime at `target` over mTLS with the client files in `client_dir`.
fn render_through(target: SocketAddr, client_dir: &Path, server_name: &str) -> xfn_tests::Run {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/docs");
    let dir = tempfile::tempdir().unwrap();
    for file in ["xr.yaml", "composition.yaml"] {
        std::fs::copy(docs.join(file), dir.path().join(file)).unwrap();
    }
    std::fs::write(
        dir.path().join("functions.yaml"),
        format!(
            "apiVersion: pkg.crossplane.io/v1\nkind: Function\nmetadata:\n  name: {PAT}\n  annotations:\n\
             \x20   render.crossplane.io/runtime: Development\n\
             \x20   render.crossplane.io/runtime-development-target: {target}\n\
             \x20   render.crossplane.io/runtime-development-tls-certs-dir: {}\n\
             \x20   render.crossplane.io/runtime-development-tls-server-name: {server_name}\n",
            client_dir.display()
        ),
    )
    .unwrap();
    let args = ["render", "xr.yaml", "composition.yaml", "functions.yaml"].map(String::from);
    run_xfn(dir.path(), &args)
}

/// One replica of the controller that leads: its writer and its serving
/// side, on a real gRPC server at 127.0.0.1.
struct Runtime {
    address: SocketAddr,
    handle: xfn_grpc::ServerHandle,
    tls: Arc<DynamicTls>,
    /// It leads while this is kept.
    leading: watch::Sender<bool>,
}

impl Runtime {
    /// Starts replica `identity` against `fake` and waits until it serves
    /// the functions present at start.
    async fn start(
        fake: &FakeApiServer,
        registry_options: &xfn_oci::RegistryOptions,
        identity: &str,
    ) -> Runtime {
        let client = kube::Client::new(fake.service(), "default");
        let pod_labels = BTreeMap::from([("app.kubernetes.io/name".to_owned(), "xfn".to_owned())]);
        let placement = Placement {
            namespace: NS.into(),
            pod_labels: pod_labels.clone(),
        };
        let writer = Arc::new(Writer::new(
            client.clone(),
            placement,
            Arc::new(OciProbe::new(registry_options.clone())),
            identity,
        ));
        let (leading, leads) = watch::channel(true);
        tokio::spawn(controller::run_while_leading(
            client.clone(),
            NS.into(),
            writer,
            leads,
            // No shutdown: the cluster ends with the test.
            watch::channel(false).1,
        ));

        let tls = Arc::new(DynamicTls::new());
        let server = Server::bind(
            ServerConfig {
                address: "127.0.0.1:0".parse().unwrap(),
                dynamic_tls: Some(tls.clone()),
                namespace: Some(NS.into()),
                ..ServerConfig::default()
            },
            FunctionTable::new(),
        )
        .await
        .unwrap();
        let address = server.local_addr();
        let handle = server.handle();
        tokio::spawn(server.serve());
        let engine = HostEngine::new(HostConfig {
            max_concurrent_calls: 8,
            ..HostConfig::default()
        })
        .unwrap();
        let (ready_tx, mut ready) = watch::channel(false);
        let replica = Replica {
            client,
            identity: identity.into(),
            namespace: NS.into(),
            pod_labels,
            runtime: WasmRuntime::new(engine, None).unwrap(),
            registry: registry_options.clone(),
            server: handle.clone(),
            tls: tls.clone(),
            ready: ready_tx,
        };
        tokio::spawn(replica.run());
        tokio::time::timeout(Duration::from_secs(30), ready.wait_for(|r| *r))
            .await
            .expect("the replica gets ready")
            .unwrap();
        Runtime {
            address,
            handle,
            tls,
            leading,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crossplane_calls_a_wasm_function_that_the_controller_serves() {
    // The packages: function-patch-and-transform as an xpkg with its wasm
    // component, and a conventional function as a container image.
    let registry = Registry::start();
    let work = tempfile::tempdir().unwrap();
    let registry_options = options(&work.path().join("cache"));
    let pat_image = registry.reference("fns/function-patch-and-transform:v1");
    let wasm = std::fs::read(wasm_dir().join("function_patch_and_transform.wasm")).unwrap();
    let package = xfn_oci::PackageFile {
        source: "crossplane.yaml".into(),
        bytes: CROSSPLANE_YAML.as_bytes().to_vec(),
    };
    let metadata = xfn_oci::PushMetadata {
        package: Some(package),
        ..xfn_oci::PushMetadata::default()
    };
    xfn_oci::push(wasm, &pat_image, &metadata, &registry_options)
        .await
        .expect("push the xpkg");
    let container_image = registry.reference("fns/function-go:v1");
    let layout = Layout::new();
    let base = layout.blob(&tar_gz(&[(
        "package.yaml",
        b"apiVersion: meta.pkg.crossplane.io/v1\nkind: Function\nmetadata:\n  name: function-go\n",
    )]));
    let binary = layout.blob(&tar_gz(&[("function", b"\x7fELF")]));
    let config = layout.json(&json!({"architecture": "amd64", "os": "linux", "rootfs": {"type": "layers", "diff_ids": []}}));
    let manifest = layout.manifest(
        "application/vnd.oci.image.config.v1+json",
        &config,
        json!([
            layer("application/vnd.oci.image.layer.v1.tar+gzip", &binary, &[]),
            layer(
                "application/vnd.oci.image.layer.v1.tar+gzip",
                &base,
                &[("io.crossplane.xpkg", "base")]
            ),
        ]),
    );
    layout.copy_to(
        &registry,
        &manifest,
        "application/vnd.oci.image.manifest.v1+json",
        "fns/function-go:v1",
    );

    // Crossplane's objects.
    let (fake, ca) = crate::fake_with_root_ca(NS);
    let client_files = ca.issue_client("crossplane").unwrap();
    fake.insert(secret(
        "crossplane-tls-client",
        &[
            ("tls.crt", &client_files.cert),
            ("tls.key", &client_files.key),
            ("ca.crt", &client_files.ca),
        ],
    ))
    .unwrap();
    fake.insert(function(PAT, &pat_image)).unwrap();
    fake.insert(revision(
        "function-patch-and-transform-1",
        PAT,
        &pat_image,
        "Active",
    ))
    .unwrap();
    fake.insert(function("function-go", &container_image))
        .unwrap();
    fake.insert(revision(
        "function-go-1",
        "function-go",
        &container_image,
        "Active",
    ))
    .unwrap();

    // The controller's writer (this replica leads) and its serving side.
    let Runtime {
        address,
        handle,
        tls,
        leading: _leading,
    } = Runtime::start(&fake, &registry_options, "xfn-0").await;

    // The writer made the Service, certificate and endpoint of the wasm function.
    eventually("the endpoint of function-patch-and-transform", || {
        get(
            &fake,
            "pkg.crossplane.io/v1",
            "functionrevisions",
            None,
            "function-patch-and-transform-1",
        )
        .is_some_and(|r| {
            r["status"]["endpoint"] == "dns:///function-patch-and-transform.crossplane-system:9443"
        })
    })
    .await;
    let service = get(&fake, "v1", "services", Some(NS), PAT).expect("its Service");
    assert_eq!(
        service["spec"]["selector"],
        json!({"app.kubernetes.io/name": "xfn"})
    );
    assert!(
        get(
            &fake,
            "v1",
            "secrets",
            Some(NS),
            "function-patch-and-transform-tls-server"
        )
        .is_some()
    );
    // And the Deployment of the container function, as Crossplane's runtime would.
    eventually("the Deployment of function-go", || {
        get(&fake, "apps/v1", "deployments", Some(NS), "function-go-1").is_some()
    })
    .await;
    assert!(
        get(
            &fake,
            "apps/v1",
            "deployments",
            Some(NS),
            "function-patch-and-transform-1"
        )
        .is_none()
    );

    // The replica serves it once its certificate and component are in.
    eventually("the replica to serve the function", || {
        handle.functions().get(PAT).is_some()
    })
    .await;
    eventually("the function's certificate", || {
        tls.names()
            .iter()
            .any(|n| n == "function-patch-and-transform.crossplane-system")
    })
    .await;

    // Crossplane's call: the crossplane-tls-client certificate, the
    // endpoint's authority resolved to 127.0.0.1.
    let client_dir = work.path().join("crossplane-tls-client");
    client_files.write_dir(&client_dir).unwrap();
    let served = tokio::task::spawn_blocking({
        let client_dir = client_dir.clone();
        move || {
            render_through(
                address,
                &client_dir,
                "function-patch-and-transform.crossplane-system",
            )
        }
    })
    .await
    .unwrap();
    assert_eq!(
        served.code, 0,
        "render through the controller's xfn failed: {}",
        served.stderr
    );
    let expected = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/docs/expected-output.yaml"),
    )
    .expect("the docs example's expected output");
    assert_eq!(served.stdout, expected, "the same bytes as classic render");

    // A client certificate from another CA is refused.
    let other = CertificateAuthority::generate("not-crossplane").unwrap();
    let stranger = other.issue_client("crossplane").unwrap();
    let stranger_dir = work.path().join("stranger");
    TlsFiles {
        ca: client_files.ca.clone(),
        ..stranger
    }
    .write_dir(&stranger_dir)
    .unwrap();
    let refused = tokio::task::spawn_blocking(move || {
        render_through(
            address,
            &stranger_dir,
            "function-patch-and-transform.crossplane-system",
        )
    })
    .await
    .unwrap();
    assert_ne!(
        refused.code, 0,
        "a client from another CA must be refused: {}",
        refused.stdout
    );
    // Refused by the transport (with TLS 1.3 the client may see the
    // rejection as a reset or a transport error), never routed.
    assert!(
        refused.stderr.contains("gRPC target 127.0.0.1")
            && !refused.stderr.contains("NotFound")
            && !refused.stderr.contains("no function"),
        "{}",
        refused.stderr
    );

    // An upgrade: Crossplane makes revision 2 Active and revision 1
    // Inactive. The replica switches to revision 2's component while calls
    // keep coming, and none of them fails. Revision 2 is a runnable
    // package (`xfn push --runnable`): an index whose linux image a stock
    // Crossplane would run as a pod, and whose wasm entry the controller
    // serves. (The image's binary is never run here: a placeholder.)
    let v2_image = registry.reference("fns/function-patch-and-transform:v2");
    let v2_wasm = std::fs::read(wasm_dir().join("function_patch_and_transform.wasm")).unwrap();
    let placeholder = xfn_oci::EntrypointBinary {
        bytes: b"\x7fELF placeholder".to_vec(),
        architecture: "amd64",
    };
    xfn_oci::push_runnable(
        v2_wasm,
        &v2_image,
        &metadata,
        &placeholder,
        &registry_options,
    )
    .await
    .expect("push v2");
    let before = handle.functions().get(PAT).cloned().expect("v1 served");
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let made = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let calls_made = || made.load(std::sync::atomic::Ordering::SeqCst);
    let caller = tokio::spawn({
        let stop = stop.clone();
        let made = made.clone();
        let client_tls = xfn_grpc::ClientTls {
            files: client_files.clone(),
            server_name: None,
        };
        async move {
            let options = xfn_grpc::ClientOptions {
                tls: Some(client_tls),
                authority: Some(format!("{PAT}.{NS}:9443")),
                ..xfn_grpc::ClientOptions::default()
            };
            let function = xfn_grpc::GrpcFunction::new(PAT, &address.to_string(), options).unwrap();
            let (mut calls, mut failures) = (0, Vec::new());
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let request = xfn_runtime::protocol::RunFunctionRequest::default();
                if let Err(e) = xfn_runtime::Function::call(&function, &request, None).await {
                    failures.push(e.to_string());
                }
                calls += 1;
                made.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            (calls, failures)
        }
    });
    eventually("calls before the upgrade", || calls_made() >= 3).await;
    fake.insert(revision(
        "function-patch-and-transform-2",
        PAT,
        &v2_image,
        "Active",
    ))
    .unwrap();
    let mut v1 = get(
        &fake,
        "pkg.crossplane.io/v1",
        "functionrevisions",
        None,
        "function-patch-and-transform-1",
    )
    .unwrap();
    v1["spec"]["desiredState"] = json!("Inactive");
    fake.insert(v1).unwrap();
    eventually("revision 2's endpoint", || {
        get(
            &fake,
            "pkg.crossplane.io/v1",
            "functionrevisions",
            None,
            "function-patch-and-transform-2",
        )
        .is_some_and(|r| r["status"]["endpoint"].is_string())
    })
    .await;
    eventually("the replica to serve revision 2", || {
        handle
            .functions()
            .get(PAT)
            .is_some_and(|now| !Arc::ptr_eq(now, &before))
    })
    .await;
    let at_switch = calls_made();
    eventually("calls after the upgrade", || calls_made() >= at_switch + 3).await;
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let (calls, failures) = caller.await.unwrap();
    assert!(
        failures.is_empty(),
        "{} of {calls} calls failed: {failures:?}",
        failures.len()
    );

    // Deleting the revisions removes the routing: their Service goes (owner
    // references) and the replica stops serving the function.
    for name in [
        "function-patch-and-transform-2",
        "function-patch-and-transform-1",
    ] {
        fake.delete("pkg.crossplane.io/v1", "functionrevisions", None, name);
    }
    eventually("the function to be unrouted", || {
        handle.functions().get(PAT).is_none()
    })
    .await;
    eventually("its certificate to go", || {
        !tls.names().iter().any(|n| n.starts_with(PAT))
    })
    .await;
    assert!(get(&fake, "v1", "services", Some(NS), PAT).is_none());
}

/// A wasm artifact at `repo_tag` whose only layer is `wasm`, as it is,
/// pushed without xfn's checks.
fn push_raw_wasm(registry: &Registry, wasm: &[u8], repo_tag: &str) {
    let layout = Layout::new();
    let blob = layout.blob(wasm);
    let config = layout
        .json(&json!({"architecture": "wasm", "os": "wasip2", "layerDigests": [blob.digest]}));
    let manifest = layout.manifest(
        "application/vnd.wasm.config.v0+json",
        &config,
        json!([layer("application/wasm", &blob, &[])]),
    );
    layout.copy_to(
        registry,
        &manifest,
        "application/vnd.oci.image.manifest.v1+json",
        repo_tag,
    );
}

/// The Warning events on revision `name`.
fn warnings(fake: &FakeApiServer, name: &str) -> Vec<Value> {
    fake.list("events.k8s.io/v1", "events", None)
        .into_iter()
        .filter(|e| e["type"] == "Warning" && e["regarding"]["name"] == name)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_packages_are_reported_on_their_revisions_and_the_others_keep_serving() {
    let registry = Registry::start();
    let work = tempfile::tempdir().unwrap();
    let registry_options = options(&work.path().join("cache"));
    // A core module (a wasm32-wasip1 build) where a component belongs.
    push_raw_wasm(
        &registry,
        &wasm_encoder::Module::new().finish(),
        "fns/core-module:v1",
    );
    // A component xfn can pull but not run: it exports nothing.
    push_raw_wasm(
        &registry,
        &crate::oci_support::component_importing(&[]),
        "fns/no-export:v1",
    );
    let hello = registry.reference("fns/hello:v1");
    xfn_oci::push(
        crate::oci_support::hello_wasm(),
        &hello,
        &xfn_oci::PushMetadata::default(),
        &registry_options,
    )
    .await
    .expect("push hello");

    let (fake, _ca) = crate::fake_with_root_ca(NS);
    for (name, image) in [
        ("function-module", registry.reference("fns/core-module:v1")),
        ("function-no-export", registry.reference("fns/no-export:v1")),
        ("function-hello", hello.clone()),
    ] {
        fake.insert(function(name, &image)).unwrap();
        fake.insert(revision(&format!("{name}-1"), name, &image, "Active"))
            .unwrap();
    }
    let Runtime {
        handle,
        leading: _leading,
        ..
    } = Runtime::start(&fake, &registry_options, "xfn-0").await;

    // The leader can't use the core module: the revision says why.
    let healthy = |name: &str| {
        get(
            &fake,
            "pkg.crossplane.io/v1",
            "functionrevisions",
            None,
            name,
        )
        .and_then(|r| {
            r["status"]["conditions"]
                .as_array()?
                .iter()
                .find(|c| c["type"] == "RuntimeHealthy")
                .cloned()
        })
        .unwrap_or(Value::Null)
    };
    eventually("function-module-1 to be unhealthy", || {
        healthy("function-module-1")["status"] == "False"
    })
    .await;
    let condition = healthy("function-module-1");
    let message = condition["message"].as_str().unwrap_or_default();
    assert!(message.contains("core wasm module"), "{condition}");
    eventually("a Warning event with that message", || {
        warnings(&fake, "function-module-1")
            .iter()
            .any(|e| e["note"] == json!(message))
    })
    .await;

    // The component without an export passes the leader's checks, but no
    // replica can load it: each says so on the revision, once.
    eventually("a LoadFunction event on function-no-export-1", || {
        warnings(&fake, "function-no-export-1")
            .iter()
            .any(|e| e["reason"] == "LoadFunction")
    })
    .await;
    let events = warnings(&fake, "function-no-export-1");
    let note = events[0]["note"].as_str().unwrap_or_default();
    assert!(
        note.starts_with("replica xfn-0 cannot serve this revision: "),
        "{note}"
    );
    assert!(note.contains("run-function"), "{note}");

    // The healthy function is served all along.
    eventually("function-hello to be served", || {
        handle.functions().get("function-hello").is_some()
    })
    .await;
    assert_eq!(healthy("function-hello-1")["status"], "True");
    assert!(handle.functions().get("function-no-export").is_none());
    assert!(handle.functions().get("function-module").is_none());

    // Another change makes the replica sync again; the failure isn't
    // reported twice.
    fake.insert(function("function-bye", &hello)).unwrap();
    fake.insert(revision("function-bye-1", "function-bye", &hello, "Active"))
        .unwrap();
    eventually("function-bye to be served", || {
        handle.functions().get("function-bye").is_some()
    })
    .await;
    let load_events = warnings(&fake, "function-no-export-1")
        .into_iter()
        .filter(|e| e["reason"] == "LoadFunction")
        .count();
    assert_eq!(load_events, 1);
}
