//! A runnable package (`xfn push --package crossplane.yaml --runnable`):
//! one reference that a stock Crossplane installs and runs as a container
//! function, and that xfn runs as wasm. Pushed to a real registry
//! (Debian's docker-registry) with the static xfn `make image-check`
//! builds, then:
//!
//! * read as Crossplane's package manager reads it (its index entry, the
//!   base layer, the labels);
//! * rendered three ways with the same output: the built-in
//!   function-patch-and-transform, the package's wasm entry (by tag, as
//!   xfn resolves it), and its linux image by digest, which render runs
//!   through the container runtime as `crossplane render` runs it with
//!   Docker (the image's entrypoint with `--insecure`);
//! * its entrypoint served over mTLS from `TLS_SERVER_CERTS_DIR`, as a
//!   function pod is, and called by crossplane-function-sdk-python's
//!   client stubs with a client certificate, under a Function name the
//!   image never heard of, with `--debug` on.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::grpc_support::{Certs, py_client};
use crate::oci_support::{Registry, skopeo_raw};

/// The author's package metadata.
const CROSSPLANE_YAML: &str = "\
apiVersion: meta.pkg.crossplane.io/v1
kind: Function
metadata:
  name: function-pat-anywhere
  annotations:
    meta.crossplane.io/description: Patch and transform, runnable anywhere
spec:
  capabilities: [composition]
";

/// The static xfn the image runs: `$XFN_STATIC_BIN`, else what
/// `make image-check` builds.
fn static_xfn() -> PathBuf {
    let path = std::env::var_os("XFN_STATIC_BIN").map_or_else(
        || {
            let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
            std::env::var_os("CARGO_TARGET_DIR")
                .map_or_else(|| workspace.join("target"), PathBuf::from)
                .join("x86_64-unknown-linux-musl/image-check/xfn.image")
        },
        PathBuf::from,
    );
    assert!(
        path.is_file(),
        "{path:?} is missing: run `make image-check` (make test does)"
    );
    path
}

fn patch_and_transform() -> PathBuf {
    xfn_tests::wasm_dir().join("function_patch_and_transform.wasm")
}

fn docs_example(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/docs")
        .join(file)
}

/// Renders the docs example with function-patch-and-transform's package
/// `package`; its standard output.
fn render(dir: &Path, cache: &Path, package: &str) -> String {
    let run = render_run(dir, cache, package);
    // Never a substitute: the package's own function ran.
    assert!(!run.stderr.contains("built-in"), "{}", run.stderr);
    run.stdout
}

/// [`render`]'s run.
fn render_run(dir: &Path, cache: &Path, package: &str) -> xfn_tests::Run {
    let functions = dir.join(format!("functions-{}.yaml", xfn_tests::free_port()));
    std::fs::write(
        &functions,
        format!(
            "apiVersion: pkg.crossplane.io/v1\nkind: Function\nmetadata:\n  \
             name: function-patch-and-transform\nspec:\n  package: {package}\n"
        ),
    )
    .expect("functions");
    let args: Vec<String> = [
        docs_example("xr.yaml"),
        docs_example("composition.yaml"),
        functions,
    ]
    .iter()
    .map(|p| p.display().to_string())
    .chain(["--cache-dir".to_owned(), cache.display().to_string()])
    .collect();
    let args: Vec<String> = std::iter::once("render".to_owned()).chain(args).collect();
    let run = xfn_tests::run_xfn_within(dir, &args, Duration::from_secs(300));
    assert_eq!(run.code, 0, "render of {package}: {}", run.stderr);
    run
}

/// Reads a blob the registry stores.
fn blob(registry: &Registry, digest: &str) -> Vec<u8> {
    std::fs::read(registry.blob_file(digest)).expect("a blob in the registry")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runnable_package_runs_in_any_crossplane_and_in_xfn_with_the_same_output() {
    let registry = Registry::start();
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("crossplane.yaml"), CROSSPLANE_YAML).expect("write");
    let reference = registry.reference("functions/pat-anywhere:v1");
    let push_args: Vec<String> = [
        "push",
        "--package",
        "crossplane.yaml",
        "--runnable",
        "--entrypoint-binary",
        &static_xfn().display().to_string(),
        &patch_and_transform().display().to_string(),
        &reference,
    ]
    .map(str::to_owned)
    .to_vec();
    let pushed = xfn_tests::run_xfn_within(dir.path(), &push_args, Duration::from_secs(300));
    assert_eq!(pushed.code, 0, "{}", pushed.stderr);
    assert!(
        pushed.stderr.contains("as a runnable package"),
        "{}",
        pushed.stderr
    );

    // As Crossplane's package manager reads it: the first linux/amd64
    // entry of the index, a package it installs.
    let index: oci_client::manifest::OciImageIndex =
        serde_json::from_slice(&skopeo_raw(&reference, false)).expect("an index");
    assert_eq!(
        format!(
            "sha256:{}",
            crate::oci_support::sha256_hex(&skopeo_raw(&reference, false))
        ),
        pushed.stdout.trim()
    );
    let entry = xfn_oci::xpkg::crossplane_index_entry(&index).expect("a linux/amd64 entry");
    let image_reference = registry.reference(&format!("functions/pat-anywhere@{}", entry.digest));
    let manifest: oci_client::manifest::OciImageManifest =
        serde_json::from_slice(&skopeo_raw(&image_reference, false)).expect("a manifest");
    let config = blob(&registry, &manifest.config.digest);
    let base = blob(&registry, &manifest.layers[0].digest);
    let check = xfn_oci::xpkg::check(&manifest, &config, Some(&base));
    assert!(check.is_ok(), "{:?}", check.problems);
    let config: Value = serde_json::from_slice(&config).expect("config");
    assert_eq!(config["config"]["Entrypoint"][1], "entrypoint", "{config}");

    let cache = tempfile::tempdir().expect("cache");
    let builtin = render_run(
        dir.path(),
        cache.path(),
        "xpkg.crossplane.io/crossplane-contrib/function-patch-and-transform:v0.8.2",
    )
    .stdout;
    assert!(
        builtin.contains("region: us-east-2"),
        "the docs example rendered: {builtin}"
    );
    let as_wasm = render(dir.path(), cache.path(), &reference);
    assert_eq!(as_wasm, builtin, "the package's wasm entry");
    let as_container = render(dir.path(), cache.path(), &image_reference);
    assert_eq!(as_container, builtin, "the package's image, as a container");

    // `xfn serve` (and so the External runtime, which resolves packages
    // the same way) runs the wasm entry.
    let functions = dir.path().join("serve.yaml");
    std::fs::write(
        &functions,
        format!(
            "apiVersion: pkg.crossplane.io/v1\nkind: Function\nmetadata:\n  \
             name: function-pat\nspec:\n  package: {reference}\n"
        ),
    )
    .expect("functions");
    let port = xfn_tests::free_port();
    let mut serve = tokio::process::Command::new(xfn_tests::xfn_bin());
    serve
        .args(["serve", "--insecure", "--functions"])
        .arg(&functions)
        .args(["--address", &format!("127.0.0.1:{port}"), "--cache-dir"])
        .arg(cache.path());
    let served = Listening::start(serve, port).await;
    let results = py_client(&served.target, None, &[pat_call("function-pat")]).await;
    assert_patched(&results[0]);
    let log = served.stop().await;
    assert!(log.contains("serving function-pat"), "{log}");
}

/// A process serving on `target`, killed when dropped.
struct Listening {
    child: tokio::process::Child,
    target: String,
}

impl Listening {
    /// Starts `command` (within 120 s, its standard error piped) and waits
    /// up to 60 s for it to listen on 127.0.0.1:`port`.
    async fn start(command: tokio::process::Command, port: u16) -> Listening {
        let program = command.as_std().get_program().to_owned();
        let args: Vec<_> = command.as_std().get_args().map(ToOwned::to_owned).collect();
        let mut bounded = tokio::process::Command::new("timeout");
        bounded.arg("120").arg(program).args(args);
        for (key, value) in command.as_std().get_envs() {
            match value {
                Some(value) => bounded.env(key, value),
                None => bounded.env_remove(key),
            };
        }
        let child = bounded
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start the server");
        let target = format!("127.0.0.1:{port}");
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while std::net::TcpStream::connect(&target).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "{target} never listened"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Listening { child, target }
    }

    /// Sends SIGTERM (which `timeout` passes on) and returns what the
    /// server wrote on standard error.
    async fn stop(mut self) -> String {
        if let Some(pid) = self.child.id() {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
        tokio::time::timeout(Duration::from_secs(60), async {
            let mut text = String::new();
            if let Some(mut stderr) = self.child.stderr.take() {
                let _ = tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut text).await;
            }
            let _ = self.child.wait().await;
            text
        })
        .await
        .expect("the server stops on SIGTERM")
    }
}

/// A call of function-patch-and-transform at `authority` (as Crossplane
/// dials a Function's Service): one patch from the XR.
fn pat_call(function: &str) -> Value {
    let input = json!({
        "apiVersion": "pt.fn.crossplane.io/v1beta1",
        "kind": "Resources",
        "resources": [{
            "name": "bucket",
            "base": {"apiVersion": "s3.aws.upbound.io/v1beta1", "kind": "Bucket"},
            "patches": [{
                "type": "FromCompositeFieldPath",
                "fromFieldPath": "spec.region",
                "toFieldPath": "spec.forProvider.region",
            }],
        }],
    });
    let xr = json!({
        "apiVersion": "example.org/v1", "kind": "XR",
        "metadata": {"name": "x"}, "spec": {"region": "eu-west-3"},
    });
    json!({
        "authority": format!("{function}.crossplane-system:9443"),
        "request": {
            "meta": {"tag": "t"},
            "observed": {"composite": {"resource": xr}},
            "input": input,
        },
    })
}

/// The result of [`pat_call`] has the patched bucket.
#[track_caller]
fn assert_patched(result: &Value) {
    let region = &result["response"]["desired"]["resources"]["bucket"]["resource"]["spec"]["forProvider"]
        ["region"];
    assert_eq!(region, "eu-west-3", "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_entrypoint_serves_mtls_as_a_function_pod_does() {
    let certs = Certs::for_functions(&["function-renamed"]);
    let cache = tempfile::tempdir().expect("cache");
    let port = xfn_tests::free_port();
    let mut entrypoint = tokio::process::Command::new(static_xfn());
    entrypoint
        .args(["entrypoint", "--name", "function-pat-anywhere"])
        .arg(patch_and_transform())
        .args(["--address", &format!("127.0.0.1:{port}"), "--debug"])
        .env("TLS_SERVER_CERTS_DIR", &certs.server)
        .env("XFN_CACHE_DIR", cache.path());
    let served = Listening::start(entrypoint, port).await;

    // Crossplane dials the Function's Service, named as the cluster names
    // the Function: the image serves it whatever the name.
    let call = pat_call("function-renamed");
    let results = py_client(
        &served.target,
        Some(&certs.client),
        std::slice::from_ref(&call),
    )
    .await;
    assert_patched(&results[0]);
    // A client without a certificate of Crossplane's CA is refused.
    let stranger = py_client(&served.target, Some(&certs.stranger), &[call]).await;
    assert_eq!(stranger[0]["code"], "UNAVAILABLE", "{}", stranger[0]);

    let log = served.stop().await;
    assert!(log.contains("mTLS"), "{log}");
    assert!(log.contains("DEBUG"), "--debug logs debug lines: {log}");
}
