//! Shared helpers for xfn's end-to-end tests: where the test components
//! are, and how to load them into a host.

pub mod convert;
pub mod fuzz;
pub mod golden;
pub mod logs;
pub mod patch_and_transform;
pub mod peers;
pub mod rbac;

use std::path::PathBuf;
use std::sync::Arc;

use xfn_runtime::{HostConfig, HostEngine, WasmFunction, WasmRuntime};

/// The directory of the wasm components built by `make wasm`
/// (`$XFN_WASM_DIR`, else the workspace's default output directory).
pub fn wasm_dir() -> PathBuf {
    std::env::var_os("XFN_WASM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/wasm32-wasip2/wasm")
        })
}

/// The first-party functions as the `xfn` binary ships them, read from
/// [`wasm_dir`] (built by `make wasm`), for tests that load packages
/// through the library.
pub fn builtins() -> xfn_catalog::Builtins {
    static TABLE: std::sync::OnceLock<&'static [xfn_catalog::Builtin]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let table: Vec<xfn_catalog::Builtin> = [
            (
                "function-patch-and-transform",
                "function_patch_and_transform",
            ),
            ("function-auto-ready", "function_auto_ready"),
            ("function-hello", "hello"),
        ]
        .into_iter()
        .map(|(name, file)| xfn_catalog::Builtin {
            name,
            component: Some(component(file).leak()),
            capabilities: &["composition"],
        })
        .collect();
        table.leak()
    });
    xfn_catalog::Builtins::new(table)
}

/// Resolves a package only to a function of [`builtins`], without a
/// registry: a loader's packages in tests.
#[derive(Debug, Clone, Copy, Default)]
pub struct BuiltinPackages;

impl xfn_catalog::functions_file::PackageResolver for BuiltinPackages {
    fn component(
        &self,
        _function: &str,
        package: &str,
        _policy: xfn_oci::PullPolicy,
    ) -> Result<std::borrow::Cow<'static, [u8]>, String> {
        builtins()
            .for_package(package)
            .and_then(|builtin| builtin.component)
            .map(std::borrow::Cow::Borrowed)
            .ok_or_else(|| format!("package {package:?} is not a built-in function"))
    }
}

/// Waits up to `limit` for `check` to hold, polling it every 50 ms, and
/// panics naming `what` if it never does.
pub async fn eventually(
    what: &str,
    limit: std::time::Duration,
    mut check: impl AsyncFnMut() -> bool,
) {
    let deadline = tokio::time::Instant::now() + limit;
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after {limit:?} waiting for {what}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Where this crate's build script put the test guests (`tests/guests/*`),
/// such as `xfn_test_scripted.wasm`.
pub fn test_guests_dir() -> PathBuf {
    PathBuf::from(env!("XFN_TEST_GUESTS_DIR"))
}

/// The scripted test function's component file.
pub fn scripted_wasm() -> PathBuf {
    test_guests_dir().join("xfn_test_scripted.wasm")
}

/// The file of a built component: a test guest (built by this crate's
/// build script) or else a first-party function (in [`wasm_dir`]).
pub fn component_path(name: &str) -> PathBuf {
    let guest = test_guests_dir().join(format!("{name}.wasm"));
    if guest.is_file() {
        guest
    } else {
        wasm_dir().join(format!("{name}.wasm"))
    }
}

/// The bytes of a built component: a test guest (e.g. `xfn_test_scripted`,
/// built by this crate's build script) or a first-party function (e.g.
/// `hello`, in [`wasm_dir`]).
///
/// Panics with a hint when the component isn't built: the functions need
/// `make wasm` (which `make test` runs) first.
pub fn component(name: &str) -> Vec<u8> {
    let path = component_path(name);
    std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}; build the test components with `make wasm`",
            path.display()
        )
    })
}

/// The compiled components (`.cwasm` entries) the compile cache in
/// `cache` holds.
pub fn compiled_entries(cache: &std::path::Path) -> usize {
    std::fs::read_dir(cache.join("compiled")).map_or(0, |dir| {
        dir.filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "cwasm"))
            .count()
    })
}

/// A runtime with the given config and no compile cache.
pub fn runtime(config: HostConfig) -> WasmRuntime {
    let engine = HostEngine::new(config).expect("engine");
    WasmRuntime::new(engine, None).expect("runtime")
}

/// Loads component `file` as function `name` on `runtime`.
pub fn load(runtime: &WasmRuntime, name: &str, file: &str) -> Arc<WasmFunction> {
    Arc::new(
        runtime
            .load(name, &component(file))
            .expect("load component"),
    )
}

/// Minor page faults of the calling thread per run of `f`, over `runs`
/// runs: the pages the kernel mapped in for it.
pub fn minor_faults_per_run(runs: u32, mut f: impl FnMut()) -> f64 {
    let faults = || {
        // SAFETY: a zeroed rusage is a valid value of the plain C struct.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: getrusage writes only into the struct it is given.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
        assert_eq!(rc, 0, "getrusage: {}", std::io::Error::last_os_error());
        usage.ru_minflt
    };
    let before = faults();
    for _ in 0..runs {
        f();
    }
    (faults() - before) as f64 / f64::from(runs)
}

/// The `xfn` binary under test: `$XFN_BIN`, else built once with cargo
/// into the workspace's target directory.
pub fn xfn_bin() -> PathBuf {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(bin) = std::env::var_os("XFN_BIN") {
            return PathBuf::from(bin);
        }
        let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = std::process::Command::new(cargo)
            .current_dir(&workspace)
            .args(["build", "--quiet", "-p", "xfn", "--bin", "xfn"])
            .status()
            .expect("run cargo build for the xfn binary");
        assert!(status.success(), "cannot build the xfn binary");
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map_or_else(|| workspace.join("target"), PathBuf::from);
        target.join("debug").join("xfn")
    })
    .clone()
}

/// What a run of `xfn` printed.
#[derive(Debug)]
pub struct Run {
    /// Exit code (-1 if killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// Asserts that the run failed (exit code 1) and that its standard
    /// error says `text`.
    #[track_caller]
    pub fn assert_failed_with(&self, text: &str) {
        assert_eq!(self.code, 1, "{}", self.stdout);
        assert!(self.stderr.contains(text), "{}", self.stderr);
    }
}

/// `xfn` with `args` in `dir`, with a private compile cache.
fn xfn_command(dir: &std::path::Path, args: &[String]) -> std::process::Command {
    let cache = std::env::temp_dir().join(format!("xfn-test-cache-{}", std::process::id()));
    let mut command = std::process::Command::new(xfn_bin());
    command
        .current_dir(dir)
        .args(args)
        .env("XFN_CACHE_DIR", cache)
        .env_remove("XFN_LOG");
    command
}

/// Runs `xfn` with `args` in `dir`, with a private compile cache.
pub fn run_xfn(dir: &std::path::Path, args: &[String]) -> Run {
    let output = xfn_command(dir, args).output().expect("run xfn");
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Runs `xfn` as [`run_xfn`] does, but kills it and panics if it has not
/// finished within `limit`: for runs that used to hang.
pub fn run_xfn_within(dir: &std::path::Path, args: &[String], limit: std::time::Duration) -> Run {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = xfn_command(dir, args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run xfn");
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut text);
            }
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for xfn") {
            break status;
        }
        if std::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("xfn {args:?} did not finish within {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    Run {
        code: status.code().unwrap_or(-1),
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

/// Every `*.json` fixture under `dir` (recursively), sorted.
pub fn fixtures(dir: &std::path::Path) -> Vec<PathBuf> {
    fn walk(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
        let entries =
            std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
        for path in entries.filter_map(|entry| entry.ok().map(|e| e.path())) {
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|ext| ext == "json") {
                out.push(path);
            }
        }
    }
    let mut paths = Vec::new();
    walk(dir, &mut paths);
    paths.sort();
    paths
}

/// Runs every fixture's request through the function natively and through
/// its wasm component, and returns a message for each where the two
/// responses differ. The fixtures' own expectations are checked by the
/// function's native fixture tests; equal responses carry them over.
pub fn differential(
    dir: &std::path::Path,
    component: &WasmFunction,
    native: impl Fn(&xfn_sdk::Request) -> xfn_sdk::Response,
) -> (usize, Vec<String>) {
    let files = fixtures(dir);
    let mut failures = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let fixture: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let request: xfn_sdk::Request = serde_json::from_value(fixture["request"].clone())
            .unwrap_or_else(|e| panic!("{}: bad request: {e}", file.display()));
        let want = native(&request);
        match component.call_blocking(&convert::request(request), None) {
            Ok(got) => {
                let got = convert::response(got);
                if got != want {
                    failures.push(format!(
                        "{}:\n  native: {want:?}\n  wasm:   {got:?}",
                        file.display()
                    ));
                }
            }
            Err(e) => failures.push(format!("{}: the component failed: {e}", file.display())),
        }
    }
    (files.len(), failures)
}

/// Stops a process started as `timeout SECS PROGRAM ...` and waits for
/// it: the program first, then `timeout`. Killing `timeout` alone would
/// leave the program running with no time limit.
pub fn stop_under_timeout(child: &mut std::process::Child) {
    let id = child.id();
    let children =
        std::fs::read_to_string(format!("/proc/{id}/task/{id}/children")).unwrap_or_default();
    for pid in children.split_whitespace() {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", pid])
            .status();
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// A port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local address").port()
}

/// `GET path` over HTTP/1.1 from 127.0.0.1:`port`: the status code and the
/// body, or `None` if nothing answers within 5 s.
pub async fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .ok()?;
        let request = format!("GET {path} HTTP/1.1\r\nHost: xfn\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.ok()?;
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.ok()?;
        let status = answer.split(' ').nth(1)?.parse().ok()?;
        let body = answer.split_once("\r\n\r\n")?.1.to_owned();
        Some((status, body))
    };
    tokio::time::timeout(std::time::Duration::from_secs(5), exchange)
        .await
        .ok()
        .flatten()
}
