//! `xfn render` with a container function pulled from a real registry
//! (Debian's docker-registry), beside built-in wasm functions: the same
//! output as the same binary run as a `Development` process; all the
//! Functions that can't run named at once; killed with render; and run
//! by an unprivileged user.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::oci_support::{Layout, Registry, layer};
use crate::support::*;

const XR: &str = "\
apiVersion: example.org/v1alpha1
kind: XR
metadata:
  name: mixed
spec:
  region: us-east-2
";

const COMPOSITION: &str = "\
apiVersion: apiextensions.crossplane.io/v1
kind: Composition
metadata:
  name: mixed
spec:
  compositeTypeRef:
    apiVersion: example.org/v1alpha1
    kind: XR
  mode: Pipeline
  pipeline:
  - step: patch-and-transform
    functionRef:
      name: function-patch-and-transform
    input:
      apiVersion: pt.fn.crossplane.io/v1beta1
      kind: Resources
      resources:
      - name: bucket
        base:
          apiVersion: s3.aws.upbound.io/v1beta1
          kind: Bucket
          spec:
            forProvider:
              region: us-east-1
        patches:
        - type: FromCompositeFieldPath
          fromFieldPath: spec.region
          toFieldPath: spec.forProvider.region
  - step: container
    functionRef:
      name: container-fn
    input:
      apiVersion: example.org/v1
      kind: Input
      message: from the composition
  - step: auto-ready
    functionRef:
      name: function-auto-ready
";

/// The Functions file: the two built-ins, and the container function
/// with `annotations` (YAML lines under `annotations:`) and `package`.
fn functions(package: &str, annotations: &str) -> String {
    format!(
        "\
apiVersion: pkg.crossplane.io/v1beta1
kind: Function
metadata:
  name: function-patch-and-transform
spec:
  package: xpkg.crossplane.io/crossplane-contrib/function-patch-and-transform:v0.8.2
---
apiVersion: pkg.crossplane.io/v1beta1
kind: Function
metadata:
  name: function-auto-ready
spec:
  package: xpkg.crossplane.io/crossplane-contrib/function-auto-ready:v0.5.0
---
apiVersion: pkg.crossplane.io/v1beta1
kind: Function
metadata:
  name: container-fn
  annotations:
    xfn.test/placeholder: \"\"
{annotations}
spec:
  package: {package}
"
    )
}

/// Pushes the function's image to `registry` as `repo:tag`, behind an
/// index with an entry for this machine and one for another platform.
fn push_function(registry: &Registry, repo_tag: &str, env: &[&str]) {
    push_function_for(registry, repo_tag, env, &["s390x", host_architecture()]);
}

/// Pushes the function's image to `registry` as `repo:tag`, behind an
/// index with an entry (the same image) for each Linux architecture.
fn push_function_for(registry: &Registry, repo_tag: &str, env: &[&str], architectures: &[&str]) {
    let layers = function_layers();
    let config = function_config(env, &layers);
    let oci = Layout::new();
    let config_blob = oci.json(&config);
    let layer_descriptors: Vec<_> = layers
        .iter()
        .map(|l| {
            layer(
                "application/vnd.oci.image.layer.v1.tar+gzip",
                &oci.blob(&l.gz),
                &[],
            )
        })
        .collect();
    let manifest = oci.manifest(
        "application/vnd.oci.image.config.v1+json",
        &config_blob,
        serde_json::Value::Array(layer_descriptors),
    );
    let entries: Vec<_> = architectures
        .iter()
        .map(|architecture| {
            serde_json::json!({
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": manifest.digest,
                "size": manifest.size,
                "platform": {"os": "linux", "architecture": architecture},
            })
        })
        .collect();
    let index = oci.json(&serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": entries,
    }));
    oci.copy_to(
        registry,
        &index,
        "application/vnd.oci.image.index.v1+json",
        repo_tag,
    );
}

/// A directory with the XR, the Composition and `functions`, readable by
/// any user.
fn inputs(functions: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("xr.yaml"), XR).expect("xr");
    std::fs::write(dir.path().join("composition.yaml"), COMPOSITION).expect("composition");
    std::fs::write(dir.path().join("functions.yaml"), functions).expect("functions");
    open_to_all(dir.path());
    dir
}

fn open_to_all(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    for entry in std::fs::read_dir(path).expect("dir").flatten() {
        let _ = std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(0o666));
    }
}

fn render_args(cache: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "render",
        "xr.yaml",
        "composition.yaml",
        "functions.yaml",
        "--cache-dir",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    args.push(cache.display().to_string());
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args
}

/// The Go function run directly, as someone runs a Development function.
struct Direct {
    child: std::process::Child,
    target: String,
}

impl Direct {
    fn start() -> Direct {
        let port = xfn_tests::free_port();
        let target = format!("127.0.0.1:{port}");
        let child = Command::new("timeout")
            .args([
                "120",
                &function_binary().display().to_string(),
                "--insecure",
                "--address",
            ])
            .arg(&target)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the function");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(&target).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "the function never listened"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Direct { child, target }
    }
}

impl Drop for Direct {
    fn drop(&mut self) {
        // SIGTERM, which `timeout` passes on to the function (SIGKILL
        // would stop `timeout` alone).
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
    }
}

#[test]
fn a_container_function_renders_as_its_binary_does_as_a_development_process() {
    let registry = Registry::start();
    push_function(&registry, "functions/container-fn:v1", &[]);
    let package = registry.reference("functions/container-fn:v1");
    let cache = tempfile::tempdir().expect("cache");

    let dir = inputs(&functions(&package, ""));
    let sandboxed = xfn_tests::run_xfn(dir.path(), &render_args(cache.path(), &[]));
    assert_eq!(sandboxed.code, 0, "{}", sandboxed.stderr);
    for wanted in [
        "kind: Bucket",
        "region: us-east-2",
        "greeting: hello from a container",
        "xr-name: mixed",
    ] {
        assert!(
            sandboxed.stdout.contains(wanted),
            "{wanted}: {}",
            sandboxed.stdout
        );
    }

    let direct = Direct::start();
    let development = format!(
        "    render.crossplane.io/runtime: Development\n    render.crossplane.io/runtime-development-target: {}",
        direct.target
    );
    let dir = inputs(&functions("unused", &development));
    let developed = xfn_tests::run_xfn(dir.path(), &render_args(cache.path(), &[]));
    assert_eq!(developed.code, 0, "{}", developed.stderr);
    assert_eq!(
        sandboxed.stdout, developed.stdout,
        "the same output either way"
    );

    // Offline now: the image and its unpacked root come from the cache.
    drop(registry);
    let dir = inputs(&functions(&package, ""));
    let again = xfn_tests::run_xfn(dir.path(), &render_args(cache.path(), &[]));
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(again.stdout, sandboxed.stdout);
}

#[test]
fn every_function_that_cannot_run_is_named_in_one_error() {
    let registry = Registry::start();
    // An image for another platform only.
    push_function_for(&registry, "other/arch:v1", &[], &["s390x"]);

    let functions = format!(
        "{}---
apiVersion: pkg.crossplane.io/v1beta1
kind: Function
metadata:
  name: unreachable
spec:
  package: 127.0.0.1:1/nowhere/fn:v1
",
        functions(&registry.reference("other/arch:v1"), "")
    );
    let dir = inputs(&functions);
    let cache = tempfile::tempdir().expect("cache");
    let run = xfn_tests::run_xfn(dir.path(), &render_args(cache.path(), &[]));
    assert_eq!(run.code, 1, "{}", run.stdout);
    for wanted in [
        "cannot get runtimes for 2 Functions:",
        "Function \"container-fn\":",
        "no entry for linux/",
        "s390x",
        "Function \"unreachable\":",
        "xfn pull 127.0.0.1:1/nowhere/fn:v1",
        "render.crossplane.io/runtime-wasm-module",
    ] {
        assert!(run.stderr.contains(wanted), "{wanted:?} in {}", run.stderr);
    }
}

#[test]
fn the_sandbox_dies_with_render_even_when_render_is_killed() {
    let registry = Registry::start();
    push_function(
        &registry,
        "functions/silent:v1",
        &["XFN_TEST_MODE=never-listen"],
    );
    let cache = tempfile::tempdir().expect("cache");
    let dir = inputs(&functions(&registry.reference("functions/silent:v1"), ""));
    let mut render = Command::new(xfn_tests::xfn_bin())
        .current_dir(dir.path())
        .args(render_args(
            cache.path(),
            &["--container-start-timeout", "60s"],
        ))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start render");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while processes_running_from(cache.path()).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the function never started"
        );
        assert!(
            render.try_wait().expect("wait").is_none(),
            "render ended early"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    render.kill().expect("kill -9 render");
    render.wait().expect("reap render");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !processes_running_from(cache.path()).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the sandbox outlived render: {:?}",
            processes_running_from(cache.path())
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn an_unprivileged_user_renders_a_container_function() {
    let root = std::fs::read_to_string("/proc/self/status")
        .is_ok_and(|s| s.lines().any(|l| l.starts_with("Uid:\t0\t")));
    if !root {
        // Every other test here already runs as this unprivileged user.
        eprintln!("running as an unprivileged user already: covered by the other tests");
        return;
    }
    let registry = Registry::start();
    push_function(
        &registry,
        "functions/container-fn:v1",
        &["XFN_TEST_MODE=probe"],
    );
    let cache = tempfile::tempdir().expect("cache");
    open_to_all(cache.path());
    let dir = inputs(&functions(
        &registry.reference("functions/container-fn:v1"),
        "",
    ));
    let output = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(xfn_tests::xfn_bin())
        .args(render_args(cache.path(), &[]))
        .current_dir(dir.path())
        .env("HOME", "/nonexistent")
        .output()
        .expect("setpriv");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    for wanted in [
        "uid: \"65532\"",
        "pid: \"1\"",
        "cap-eff: \"0000000000000000\"",
        "write-root: ",
    ] {
        assert!(stdout.contains(wanted), "{wanted}: {stdout}");
    }
    assert!(stdout.contains("read-only file system"), "{stdout}");
    // The cache belongs to the user who rendered.
    let owner = std::fs::metadata(cache.path().join("rootfs")).expect("rootfs dir");
    assert_eq!(std::os::unix::fs::MetadataExt::uid(&owner), 65534);
}

#[test]
fn where_user_namespaces_are_not_allowed_the_error_says_what_to_do() {
    let registry = Registry::start();
    push_function(&registry, "functions/container-fn:v1", &[]);
    let cache = tempfile::tempdir().expect("cache");
    let dir = inputs(&functions(
        &registry.reference("functions/container-fn:v1"),
        "",
    ));
    // A user namespace of its own, in which no further one may be made:
    // a host that forbids them, as far as xfn can tell.
    let script = format!(
        "echo 0 > /proc/sys/user/max_user_namespaces && exec {} \"$@\"",
        xfn_tests::xfn_bin().display()
    );
    let output = Command::new("unshare")
        .args([
            "--user",
            "--map-root-user",
            "--",
            "sh",
            "-c",
            &script,
            "xfn",
        ])
        .args(render_args(cache.path(), &[]))
        .current_dir(dir.path())
        .output()
        .expect("unshare");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    for wanted in [
        "cannot create a user namespace",
        "user.max_user_namespaces",
        "kernel.unprivileged_userns_clone",
        "render.crossplane.io/runtime: Development",
    ] {
        assert!(stderr.contains(wanted), "{wanted:?} in {stderr}");
    }
}

#[test]
fn pull_and_inspect_know_a_container_image() {
    let registry = Registry::start();
    push_function(&registry, "functions/container-fn:v1", &[]);
    let reference = registry.reference("functions/container-fn:v1");
    let cache = tempfile::tempdir().expect("cache");
    let dir = tempfile::tempdir().expect("dir");
    let cache_flag = ["--cache-dir".to_owned(), cache.path().display().to_string()];

    let pull = xfn_tests::run_xfn(
        dir.path(),
        &[
            ["pull".to_owned(), reference.clone()].as_slice(),
            &cache_flag,
        ]
        .concat(),
    );
    assert_eq!(pull.code, 0, "{}", pull.stderr);
    assert!(pull.stdout.trim().starts_with("sha256:"), "{}", pull.stdout);
    let platform = format!(
        "container image for linux/{}, 3 layers",
        host_architecture()
    );
    assert!(pull.stderr.contains(&platform), "{}", pull.stderr);

    // Offline from here: inspect reads the cache.
    drop(registry);
    let inspect = xfn_tests::run_xfn(
        dir.path(),
        &[
            [
                "inspect".to_owned(),
                reference,
                "--pull-policy".to_owned(),
                "Never".to_owned(),
                "--json".to_owned(),
            ]
            .as_slice(),
            &cache_flag,
        ]
        .concat(),
    );
    assert_eq!(inspect.code, 0, "{}", inspect.stderr);
    let report: serde_json::Value = serde_json::from_str(&inspect.stdout).expect("JSON");
    assert_eq!(report["layout"], "container image");
    assert_eq!(
        report["container"]["platforms"],
        serde_json::json!(["linux/s390x", format!("linux/{}", host_architecture())])
    );
    assert_eq!(report["container"]["layers"], 3);
    assert_eq!(report["container"]["user"], "65532:65532");
}
