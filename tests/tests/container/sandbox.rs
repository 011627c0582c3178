//! A real container function (the Go function of tests/container-function)
//! started from a three-layer image in xfn's sandbox: what it can see and
//! do, and how each way of misbehaving is contained or reported.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};
use xfn_container::{ContainerFunction, FunctionSettings};
use xfn_runtime::Function as _;
use xfn_runtime::protocol::*;

use crate::support::*;

fn request() -> RunFunctionRequest {
    RunFunctionRequest {
        observed: Some(State {
            composite: Some(ResourceObject::from_json(&json!({
                "apiVersion": "example.org/v1", "kind": "XR", "metadata": {"name": "xr-1"}
            }))),
            resources: Vec::new(),
        }),
        input: Some(json!({"message": "hi"}).to_string()),
        ..RunFunctionRequest::default()
    }
}

/// The composed ConfigMap's data.
fn configmap_data(response: &RunFunctionResponse) -> BTreeMap<String, String> {
    let desired = response.desired.as_ref().expect("desired");
    let (_, object) = desired
        .resources
        .iter()
        .find(|(name, _)| name == "from-container")
        .expect("the composed resource from-container");
    let value: Value =
        serde_json::from_str(object.resource.as_deref().expect("resource")).expect("JSON");
    serde_json::from_value(value["data"].clone()).expect("string data")
}

async fn start(
    cache: &std::path::Path,
    env: &[&str],
    settings: FunctionSettings,
) -> Result<ContainerFunction, String> {
    let blobs = tempfile::tempdir().expect("tempdir");
    let image = local_image(blobs.path(), env);
    ContainerFunction::start("fn-under-test", &image, &settings, &options(cache))
        .await
        .map_err(|e| e.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_container_function_answers_and_its_root_is_reused() {
    let cache = tempfile::tempdir().expect("cache");
    let function = start(cache.path(), &[], FunctionSettings::default())
        .await
        .expect("start");
    assert!(!function.start_times().rootfs_reused);
    let response = function
        .call(&request(), Some(Duration::from_secs(10)))
        .await
        .expect("call");
    let data = configmap_data(&response);
    assert_eq!(data["greeting"], "hello from a container");
    assert_eq!(data["xr-name"], "xr-1");
    assert_eq!(response.results[0].message, "container function ran");
    drop(function);

    let again = start(cache.path(), &[], FunctionSettings::default())
        .await
        .expect("second start");
    assert!(
        again.start_times().rootfs_reused,
        "the second start reuses the root"
    );
    again
        .call(&request(), Some(Duration::from_secs(10)))
        .await
        .expect("call");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_is_read_only_private_unprivileged_and_offline() {
    let cache = tempfile::tempdir().expect("cache");
    // Something on the host's loopback, and a host file, that the
    // function must not reach.
    let host_listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listener");
    let dial = format!(
        "XFN_TEST_DIAL={}",
        host_listener.local_addr().expect("addr")
    );
    let host_file = cache.path().join("host-secret");
    std::fs::write(&host_file, "host secret").expect("host file");
    let host_file_env = format!("XFN_TEST_HOST_FILE={}", host_file.display());
    let settings = FunctionSettings {
        network: false,
        env: vec![("XFN_FROM_ANNOTATION".into(), "a=b".into())],
    };
    let function = start(
        cache.path(),
        &["XFN_TEST_MODE=probe", &dial, &host_file_env],
        settings,
    )
    .await
    .expect("start");
    let response = function
        .call(&request(), Some(Duration::from_secs(10)))
        .await
        .expect("call");
    let data = configmap_data(&response);
    let limits = xfn_container::ResourceLimits::default();
    let expected = [
        ("uid", "65532".to_owned()),
        ("gid", "65532".to_owned()),
        ("pid", "1".to_owned()),
        ("hostname", "fn-under-test".to_owned()),
        ("cwd", "/home/nonroot".to_owned()),
        ("cap-eff", "0000000000000000".to_owned()),
        ("no-new-privs", "1".to_owned()),
        ("seccomp", "2".to_owned()),
        ("keyctl", "operation not permitted".to_owned()),
        ("write-tmp", "ok".to_owned()),
        ("files", "new".to_owned()),
        ("env-XFN_IMAGE_ENV", "from-the-image".to_owned()),
        ("env-XFN_FROM_ANNOTATION", "a=b".to_owned()),
        ("env-HOME", "/home/nonroot".to_owned()),
        ("nofile", limits.open_files.to_string()),
        ("nproc", limits.processes.to_string()),
        ("data", limits.memory_bytes.to_string()),
    ];
    for (key, want) in expected {
        assert_eq!(data.get(key), Some(&want), "{key}: {data:#?}");
    }
    for key in ["write-root", "write-usr"] {
        assert!(
            data[key].contains("read-only file system"),
            "{key}: {}",
            data[key]
        );
    }
    assert!(
        data["net-dial"].contains("connection refused"),
        "the host's loopback is not the sandbox's: {}",
        data["net-dial"]
    );
    assert!(
        data["host-file"].contains("no such file"),
        "host files are not in the sandbox: {}",
        data["host-file"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_function_given_network_reaches_the_host() {
    let cache = tempfile::tempdir().expect("cache");
    let host_listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listener");
    let dial = format!(
        "XFN_TEST_DIAL={}",
        host_listener.local_addr().expect("addr")
    );
    let settings = FunctionSettings {
        network: true,
        env: Vec::new(),
    };
    let function = start(cache.path(), &["XFN_TEST_MODE=probe", &dial], settings)
        .await
        .expect("start");
    let response = function
        .call(&request(), Some(Duration::from_secs(10)))
        .await
        .expect("call");
    assert_eq!(configmap_data(&response)["net-dial"], "ok");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn functions_that_fail_to_start_are_reported_with_their_stderr() {
    let cache = tempfile::tempdir().expect("cache");
    let err = start(
        cache.path(),
        &["XFN_TEST_MODE=exit"],
        FunctionSettings::default(),
    )
    .await
    .expect_err("exit");
    for wanted in [
        "exited with status 3 before it listened on port 9443",
        "line one",
        "exiting with status 3",
    ] {
        assert!(err.contains(wanted), "{wanted:?} in {err}");
    }

    let mut options = options(cache.path());
    options.start_timeout = Duration::from_secs(2);
    let blobs = tempfile::tempdir().expect("tempdir");
    let image = local_image(blobs.path(), &["XFN_TEST_MODE=never-listen"]);
    let began = std::time::Instant::now();
    let err = ContainerFunction::start("quiet", &image, &FunctionSettings::default(), &options)
        .await
        .expect_err("never listens")
        .to_string();
    assert!(
        err.contains("did not listen on port 9443 within 2s") && err.contains("not listening"),
        "{err}"
    );
    assert!(began.elapsed() < Duration::from_secs(10));
    xfn_tests::eventually(
        "the silent function is killed",
        Duration::from_secs(5),
        async || processes_running_from(cache.path()).is_empty(),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_function_that_allocates_without_end_is_stopped_by_its_memory_limit() {
    let cache = tempfile::tempdir().expect("cache");
    let mut options = options(cache.path());
    options.resources.memory_bytes = 256 << 20;
    let blobs = tempfile::tempdir().expect("tempdir");
    let image = local_image(blobs.path(), &["XFN_TEST_MODE=alloc"]);
    let err = ContainerFunction::start("hungry", &image, &FunctionSettings::default(), &options)
        .await
        .expect_err("alloc")
        .to_string();
    assert!(err.contains("before it listened"), "{err}");
    assert!(err.contains("out of memory"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_bomb_is_bounded_and_dies_with_its_function() {
    let cache = tempfile::tempdir().expect("cache");
    let mut options = options(cache.path());
    options.resources.processes = 64;
    let blobs = tempfile::tempdir().expect("tempdir");
    let image = local_image(blobs.path(), &["XFN_TEST_MODE=forkbomb"]);
    let function = ContainerFunction::start("bomb", &image, &FunctionSettings::default(), &options)
        .await
        .expect("the bomb's parent still serves");
    function
        .call(&request(), Some(Duration::from_secs(10)))
        .await
        .expect("call");
    let running = processes_running_from(cache.path()).len();
    assert!(
        running > 1 && running <= 64,
        "{running} processes of the bomb (limit 64 processes and threads)"
    );
    drop(function);
    xfn_tests::eventually("the bomb is gone", Duration::from_secs(10), async || {
        processes_running_from(cache.path()).is_empty()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_whose_entrypoint_is_missing_is_refused() {
    let cache = tempfile::tempdir().expect("cache");
    let blobs = tempfile::tempdir().expect("tempdir");
    let mut image = local_image(blobs.path(), &[]);
    image.entrypoint = vec!["/usr/local/bin/absent".into()];
    let err = ContainerFunction::start(
        "x",
        &image,
        &FunctionSettings::default(),
        &options(cache.path()),
    )
    .await
    .expect_err("missing entrypoint")
    .to_string();
    assert!(
        err.contains("entrypoint \"/usr/local/bin/absent\" is not an executable file in the image"),
        "{err}"
    );
    image.entrypoint = vec!["absent-on-path".into()];
    let err = ContainerFunction::start(
        "x",
        &image,
        &FunctionSettings::default(),
        &options(cache.path()),
    )
    .await
    .expect_err("missing on PATH")
    .to_string();
    assert!(
        err.contains("cannot run the entrypoint \"absent-on-path\": not found in the image's PATH")
            && err.contains("exited with status 127"),
        "{err}"
    );
}
