//! Shared by the `grpc_*` tests: real peers that xfn's authors did not write
//! (a function and a client built on crossplane-function-sdk-python),
//! certificates, and `xfn serve` run in-process.
//!
//! Every server listens on 127.0.0.1 on a port the OS picks, every child
//! process is killed when its handle drops, and every wait is bounded.

#![allow(dead_code)] // each test file uses part of this

use std::io::Read as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tempfile::TempDir;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use xfn_grpc::tls::{CertificateAuthority, service_names};
use xfn_grpc::{FunctionTable, ServeError, Server, ServerConfig, ServerHandle};
use xfn_proto::v1::function_runner_service_client::FunctionRunnerServiceClient;
use xfn_runtime::HostConfig;

/// The namespace the tests' authorities name.
pub const NS: &str = "crossplane-system";

/// How long any one child process may live.
const CHILD_SECONDS: u64 = 120;

/// The Python that has crossplane-function-sdk-python: `$XFN_PYTHON`, else
/// the workspace's `.venv`. Panics with a hint when it is missing.
pub fn python() -> PathBuf {
    let python = std::env::var_os("XFN_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join(".venv/bin/python"));
    let works = Command::new(&python)
        .args(["-c", "import crossplane.function, grpc, grpc_reflection"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        works,
        "{} cannot import crossplane-function-sdk-python: run `make venv` (or `make test`, \
         which sets XFN_PYTHON), or point XFN_PYTHON at a python that has it",
        python.display()
    );
    python
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A script in `tests/python`.
pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("python")
        .join(name)
}

/// The Python SDK test function (`tests/python/function.py`), running.
pub struct PyFunction {
    child: Child,
    /// The port it listens on, on 127.0.0.1.
    pub port: u16,
    _stderr: tempfile::NamedTempFile,
}

impl PyFunction {
    /// Starts it with `args` (e.g. `--insecure`) and waits until it listens.
    pub fn start(args: &[&str]) -> PyFunction {
        let stderr = tempfile::NamedTempFile::new().expect("temp file");
        let mut child = Command::new(python())
            .arg(script("function.py"))
            .args([
                "--address",
                "127.0.0.1:0",
                "--max-seconds",
                &CHILD_SECONDS.to_string(),
            ])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr.reopen().expect("stderr file"))
            .spawn()
            .expect("start the Python function");
        let (port, line) = xfn_tests::peers::announced_port(&mut child, Duration::from_secs(60));
        let mut function = PyFunction {
            child,
            port: 0,
            _stderr: stderr,
        };
        match port {
            Some(port) => function.port = port,
            None => {
                function.stop();
                let mut err = String::new();
                let _ = function
                    ._stderr
                    .reopen()
                    .and_then(|mut f| f.read_to_string(&mut err));
                panic!("the Python function did not start (stdout {line:?}):\n{err}");
            }
        }
        function
    }

    /// Its address, `127.0.0.1:PORT`.
    pub fn target(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for PyFunction {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Runs `calls` through the Python SDK's client stubs
/// (`tests/python/client.py`) against `target`, over mTLS if `tls_dir` is
/// given, and returns one result per call.
pub async fn py_client(target: &str, tls_dir: Option<&Path>, calls: &[Value]) -> Vec<Value> {
    let mut command = tokio::process::Command::new(python());
    command
        .arg(script("client.py"))
        .args([
            "--target",
            target,
            "--max-seconds",
            &CHILD_SECONDS.to_string(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(dir) = tls_dir {
        command.arg("--tls-certs-dir").arg(dir);
    }
    let mut child = command.spawn().expect("start the Python client");
    let mut input = String::new();
    for call in calls {
        input.push_str(&call.to_string());
        input.push('\n');
    }
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let run = async {
        stdin
            .write_all(input.as_bytes())
            .await
            .expect("write calls");
        drop(stdin);
        let mut out = String::new();
        let mut err = String::new();
        let (read_out, read_err) = tokio::join!(
            stdout.read_to_string(&mut out),
            stderr.read_to_string(&mut err)
        );
        read_out.expect("read results");
        read_err.expect("read stderr");
        let status = child.wait().await.expect("wait");
        (status, out, err)
    };
    let (status, out, err) = tokio::time::timeout(Duration::from_secs(CHILD_SECONDS), run)
        .await
        .expect("the Python client finished in time");
    assert!(
        status.success(),
        "the Python client failed ({status}):\n{err}"
    );
    let results: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad result {l:?}: {e}")))
        .collect();
    assert_eq!(
        results.len(),
        calls.len(),
        "one result per call; stderr:\n{err}"
    );
    results
}

/// A CA's server certificate for some functions' service names, a client
/// certificate from the same CA, and one from another CA.
pub struct Certs {
    _dir: TempDir,
    /// `tls.crt`, `tls.key`, `ca.crt` of the server.
    pub server: PathBuf,
    /// A client trusted by the server.
    pub client: PathBuf,
    /// A client whose certificate comes from another CA (it trusts the
    /// server's CA, so only the server can refuse it).
    pub stranger: PathBuf,
}

impl Certs {
    /// Certificates for `functions` in namespace [`NS`].
    pub fn for_functions(functions: &[&str]) -> Certs {
        let dir = tempfile::tempdir().expect("temp dir");
        let ca = CertificateAuthority::generate("test-root-ca").expect("CA");
        let names: Vec<String> = functions
            .iter()
            .flat_map(|f| service_names(f, NS))
            .collect();
        let server = dir.path().join("server");
        ca.issue_server(&names)
            .expect("server cert")
            .write_dir(&server)
            .expect("write");
        let client = dir.path().join("client");
        ca.issue_client("crossplane")
            .expect("client cert")
            .write_dir(&client)
            .expect("write");
        let other = CertificateAuthority::generate("another-ca").expect("CA");
        let mut stranger_files = other.issue_client("crossplane").expect("client cert");
        stranger_files.ca = ca.cert_pem().as_bytes().to_vec();
        let stranger = dir.path().join("stranger");
        stranger_files.write_dir(&stranger).expect("write");
        Certs {
            _dir: dir,
            server,
            client,
            stranger,
        }
    }
}

/// `xfn serve`, in-process.
pub struct Serving {
    /// Where every function is served.
    pub addr: SocketAddr,
    /// Its control handle.
    pub handle: ServerHandle,
    /// Dedicated ports, by function.
    pub ports: Vec<(String, SocketAddr)>,
    task: tokio::task::JoinHandle<Result<(), ServeError>>,
}

impl Serving {
    /// Binds `config` on 127.0.0.1 (port 0, and port 0 for each dedicated
    /// port) and starts serving `functions`.
    pub async fn start(mut config: ServerConfig, functions: FunctionTable) -> Serving {
        config.address = SocketAddr::from(([127, 0, 0, 1], 0));
        for (_, addr) in &mut config.function_ports {
            *addr = SocketAddr::from(([127, 0, 0, 1], 0));
        }
        let names: Vec<String> = config
            .function_ports
            .iter()
            .map(|(n, _)| n.clone())
            .collect();
        let server = Server::bind(config, functions).await.expect("bind");
        let addr = server.local_addr();
        let ports = names
            .iter()
            .map(|n| (n.clone(), server.function_addr(n).expect("dedicated port")))
            .collect();
        let handle = server.handle();
        let task = tokio::spawn(server.serve());
        Serving {
            addr,
            handle,
            ports,
            task,
        }
    }

    /// `127.0.0.1:PORT`.
    pub fn target(&self) -> String {
        self.addr.to_string()
    }

    /// Shuts down gracefully and returns how serving ended.
    pub async fn stop(self) -> Result<(), ServeError> {
        self.handle.shutdown().await;
        tokio::time::timeout(Duration::from_secs(30), self.task)
            .await
            .expect("the server stopped in time")
            .expect("the server task did not panic")
    }
}

/// `function-a` is the scripted test component, `function-b` is hello.
pub fn wasm_functions(config: HostConfig) -> FunctionTable {
    let runtime = xfn_tests::runtime(config);
    let mut table = FunctionTable::new();
    table.insert(
        "function-a",
        xfn_tests::load(&runtime, "function-a", "xfn_test_scripted"),
    );
    table.insert(
        "function-b",
        xfn_tests::load(&runtime, "function-b", "hello"),
    );
    table
}

/// The authority Crossplane dials for `function`.
pub fn authority(function: &str) -> String {
    format!("{function}.{NS}:9443")
}

/// A raw tonic v1 client to `addr` that sends `authority`.
pub async fn raw_client(
    addr: SocketAddr,
    authority: &str,
) -> FunctionRunnerServiceClient<tonic::transport::Channel> {
    let origin: tonic::transport::Uri = format!("http://{authority}").parse().expect("authority");
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .expect("endpoint")
        .origin(origin)
        .connect_timeout(Duration::from_secs(5))
        .connect()
        .await
        .expect("connect");
    FunctionRunnerServiceClient::new(channel)
}

/// A protojson request for the Python client: tag `tag`, XR `xr-1`, and `input`.
pub fn request(tag: &str, input: Value) -> Value {
    serde_json::json!({
        "meta": {"tag": tag},
        "observed": {"composite": {"resource": {
            "apiVersion": "example.org/v1", "kind": "XR", "metadata": {"name": "xr-1"},
            "spec": {"replicas": 9001, "ratio": 0.25},
        }}},
        "input": input,
    })
}

/// Makes `Arc<dyn Function>` from anything that is one.
pub fn boxed<F: xfn_runtime::Function + 'static>(f: F) -> Arc<dyn xfn_runtime::Function> {
    Arc::new(f)
}
