//! `xfn serve`'s lifecycle: the library's [`Serve`] started in-process
//! (reload on request, reload when watched files change, a reload that
//! fails keeps what is served, shutdown), and the binary's SIGHUP and
//! `--watch`.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use xfn_catalog::functions_file::{Loader, ServedFiles};
use xfn_grpc::serve::{Serve, ServeConfig};
use xfn_grpc::{ClientOptions, GrpcFunction, ServerConfig};
use xfn_runtime::protocol::RunFunctionRequest;
use xfn_runtime::{Function as _, HostConfig};

/// A functions file entry for `name`, from the local component `wasm`.
fn local(name: &str, wasm: &Path) -> String {
    format!(
        "---\napiVersion: pkg.crossplane.io/v1\nkind: Function\nmetadata:\n  name: {name}\n  annotations:\n    \
         render.crossplane.io/runtime-wasm-module: {}\n",
        wasm.display()
    )
}

/// A functions file entry for the built-in hello function.
fn builtin_hello(name: &str) -> String {
    format!(
        "---\napiVersion: pkg.crossplane.io/v1\nkind: Function\nmetadata:\n  name: {name}\nspec:\n  \
         package: xpkg.xfn.dev/xfn/function-hello:v0.1.0\n"
    )
}

/// Calls `function` through the server at `target` with the hello input.
async fn greet(target: &str, function: &str) -> Result<String, String> {
    let options = ClientOptions {
        authority: Some(format!("{function}.crossplane-system:9443")),
        ..ClientOptions::default()
    };
    let client = GrpcFunction::new(function, target, options).map_err(|e| e.to_string())?;
    let response = client
        .call(
            &RunFunctionRequest {
                input: Some(r#"{"greeting":"Hi"}"#.into()),
                ..RunFunctionRequest::default()
            },
            Some(Duration::from_secs(10)),
        )
        .await
        .map_err(|e| e.to_string())?;
    Ok(response
        .results
        .first()
        .map(|r| r.message.clone())
        .unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_reloads_on_request_and_when_its_files_change() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("functions.yaml");
    let hello = xfn_tests::wasm_dir().join("hello.wasm");
    std::fs::write(&file, local("function-a", &hello)).expect("write");
    let functions = Arc::new(ServedFiles {
        functions_file: Some(file.clone()),
        functions: Vec::new(),
        ports: Vec::new(),
        loader: Loader::new(
            xfn_tests::runtime(HostConfig::default()),
            xfn_tests::BuiltinPackages,
        ),
    });
    let config = ServeConfig {
        server: ServerConfig {
            address: "127.0.0.1:0".parse().expect("address"),
            ..ServerConfig::default()
        },
        watch: Some(Duration::from_millis(100)),
        ..ServeConfig::default()
    };
    let serve = Serve::start(config, functions).await.expect("starts");
    let target = format!("http://{}", serve.local_addr());
    let reloader = serve.reloader();
    assert_eq!(reloader.names(), ["function-a"]);

    // Watched: a function added to the file is served without a request,
    // even when the file changes between start and run (the watch compares
    // with what start loaded, not with what it first sees).
    std::fs::write(
        &file,
        local("function-a", &hello) + &builtin_hello("function-b"),
    )
    .expect("write");
    let running = tokio::spawn(serve.run());
    assert_eq!(
        greet(&target, "function-a").await.as_deref(),
        Ok("Hi, world!")
    );
    xfn_tests::eventually(
        "the watch to serve function-b",
        Duration::from_secs(20),
        async || reloader.names() == ["function-a", "function-b"],
    )
    .await;
    assert_eq!(
        greet(&target, "function-b").await.as_deref(),
        Ok("Hi, world!")
    );

    // A file that no longer parses: the reload fails, nothing is dropped.
    std::fs::write(&file, "kind: [").expect("write");
    let failed = reloader.reload().await.expect_err("a broken file");
    assert!(failed.contains("functions.yaml"), "{failed}");
    assert_eq!(reloader.names(), ["function-a", "function-b"]);

    // On request: a function dropped from the file is no longer served.
    std::fs::write(&file, builtin_hello("function-b")).expect("write");
    let reloaded = reloader.reload().await.expect("reloads");
    assert_eq!(reloaded.names, ["function-b"]);
    assert!(!reloaded.ports_changed);
    let gone = greet(&target, "function-a").await.expect_err("not served");
    assert!(gone.contains("no function is served"), "{gone}");

    reloader.shutdown().await;
    tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("run ends after shutdown")
        .expect("no panic")
        .expect("stops cleanly");
}

/// A set with nothing in it is refused at start, before anything listens.
#[tokio::test]
async fn serve_refuses_an_empty_set() {
    let functions = Arc::new(ServedFiles {
        functions_file: None,
        functions: Vec::new(),
        ports: Vec::new(),
        loader: Loader::new(
            xfn_tests::runtime(HostConfig::default()),
            xfn_tests::BuiltinPackages,
        ),
    });
    let refused = Serve::start(ServeConfig::default(), functions)
        .await
        .err()
        .map(|e| e.to_string());
    assert_eq!(refused.as_deref(), Some("no functions to serve"));
}

/// The binary: SIGHUP reloads the functions file; `--watch` notices a
/// changed file by itself; SIGTERM drains and exits 0.
#[test]
fn the_binary_reloads_on_sighup_and_with_watch() {
    for watch in [false, true] {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("functions.yaml");
        let hello = xfn_tests::wasm_dir().join("hello.wasm");
        std::fs::write(&file, local("function-a", &hello)).expect("write");
        let port = xfn_tests::free_port();
        let mut args = vec![
            "serve".to_owned(),
            "--insecure".to_owned(),
            "--address".to_owned(),
            format!("127.0.0.1:{port}"),
            "--functions".to_owned(),
            file.display().to_string(),
        ];
        if watch {
            args.push("--watch".to_owned());
        }
        let stderr_path = dir.path().join("stderr");
        let stderr = std::fs::File::create(&stderr_path).expect("stderr file");
        let mut child = std::process::Command::new(xfn_tests::xfn_bin())
            .args(&args)
            .stderr(stderr)
            .spawn()
            .expect("start xfn serve");
        let pid = child.id().to_string();
        let log = || std::fs::read_to_string(&stderr_path).unwrap_or_default();
        let wait_for = |what: &str| {
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            while !log().contains(what) {
                if std::time::Instant::now() > deadline {
                    let _ = child_kill(&pid);
                    panic!("no {what:?} on stderr:\n{}", log());
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        };
        wait_for("xfn serve: serving function-a on");

        std::fs::write(
            &file,
            local("function-a", &hello) + &builtin_hello("function-b"),
        )
        .expect("write");
        if !watch {
            signal(&pid, "-HUP");
        }
        wait_for("xfn serve: reloaded: function-a, function-b");

        signal(&pid, "-TERM");
        let status = wait_with_limit(&mut child, Duration::from_secs(30));
        assert_eq!(status.code(), Some(0), "{}", log());
        assert!(log().contains("xfn serve: stopped"), "{}", log());
    }
}

/// The instance pool reserves terabytes of address space up front; under
/// an 8 GiB cap it cannot, and `xfn serve` says so, allocates per call,
/// and serves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_little_address_space_serve_allocates_on_demand() {
    let mut command = std::process::Command::new("sh");
    command
        .arg("-c")
        .arg("ulimit -v 8388608 && exec \"$0\" \"$@\"")
        .arg(xfn_tests::xfn_bin());
    let log = serve_hello_once(command, &[], None).await;
    assert!(
        log.contains("cannot reserve a pool of instances") && log.contains("on demand"),
        "{log}"
    );
}

/// From an empty compile cache, `xfn serve` serves Winch's code at once and
/// swaps in Cranelift's when the background has compiled it, caching both;
/// with `--compile optimized`, only Cranelift's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_compiles_in_two_tiers_unless_told_to_optimize() {
    let swapped = "function hello runs optimized code now";
    for (tiers, entries) in [(None, 2), (Some("optimized"), 1)] {
        let cache = tempfile::tempdir().expect("cache");
        let cache_dir = cache.path().display().to_string();
        let mut args = vec!["-v", "--cache-dir", cache_dir.as_str()];
        args.extend(tiers.iter().flat_map(|tiers| ["--compile", tiers]));
        let command = std::process::Command::new(xfn_tests::xfn_bin());
        let log = serve_hello_once(command, &args, tiers.is_none().then_some(swapped)).await;
        let compiled = std::fs::read_dir(cache.path().join("compiled")).map_or(0, |d| d.count());
        assert_eq!(compiled, entries, "{args:?}: {log}");
        assert_eq!(log.contains(swapped), tiers.is_none(), "{args:?}: {log}");
    }
}

/// Starts `xfn serve --insecure` serving the hello component (`command`
/// runs the binary, given `args` after `serve`'s), calls it once, waits
/// (at most two minutes) until its log says `wait_for` if given, stops it
/// with SIGTERM and returns its standard error.
async fn serve_hello_once(
    mut command: std::process::Command,
    args: &[&str],
    wait_for: Option<&str>,
) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let hello = xfn_tests::wasm_dir().join("hello.wasm");
    let port = xfn_tests::free_port();
    let stderr_path = dir.path().join("stderr");
    let stderr = std::fs::File::create(&stderr_path).expect("stderr file");
    let mut child = command
        .args(["serve", "--insecure", "--address"])
        .arg(format!("127.0.0.1:{port}"))
        .args(args)
        .arg("--function")
        .arg(format!("hello={}", hello.display()))
        .env_remove("XFN_LOG")
        .stderr(stderr)
        .spawn()
        .expect("start xfn serve");
    let pid = child.id().to_string();
    let log = || std::fs::read_to_string(&stderr_path).unwrap_or_default();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !log().contains("xfn serve: serving hello on") {
        if std::time::Instant::now() > deadline || child.try_wait().ok().flatten().is_some() {
            let _ = child_kill(&pid);
            panic!("xfn serve did not start:\n{}", log());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let greeting = greet(&format!("http://127.0.0.1:{port}"), "hello").await;
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while wait_for.is_some_and(|line| !log().contains(line)) && std::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    signal(&pid, "-TERM");
    let status = wait_with_limit(&mut child, Duration::from_secs(30));
    assert_eq!(greeting.as_deref(), Ok("Hi, world!"), "{}", log());
    assert_eq!(status.code(), Some(0), "{}", log());
    log()
}

fn signal(pid: &str, signal: &str) {
    let sent = std::process::Command::new("kill")
        .args([signal, pid])
        .status()
        .expect("kill");
    assert!(sent.success(), "kill {signal} {pid}");
}

fn child_kill(pid: &str) -> std::io::Result<std::process::ExitStatus> {
    std::process::Command::new("kill")
        .args(["-KILL", pid])
        .status()
}

fn wait_with_limit(child: &mut std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("xfn serve did not stop within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
