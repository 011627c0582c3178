//! Shared helpers of the OCI registry tests: a real `docker-registry` on
//! loopback (plain, htpasswd or TLS), OCI layouts written by hand and
//! copied into it with skopeo, and the CLI module of `xfn push|pull|inspect`.
//!
//! Every registry listens on 127.0.0.1 only, on a free port, with its
//! storage in a temporary directory. It runs under `timeout`, so it stops by
//! itself even if the test process dies, and is stopped when dropped.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use sha2::Digest as _;
use tempfile::TempDir;

/// The CLI module of `xfn push|pull|inspect`, compiled into the tests.
#[path = "../../../host/src/cli/oci.rs"]
pub mod cli;

/// The CLI's flag groups, which `cli` uses (its unit tests, compiled
/// into the benchmark too, are not this crate's to run).
#[allow(unused_imports)]
#[path = "../../../host/src/cli/flags.rs"]
pub mod flags;

pub mod hostile;

/// How long a test registry may live before `timeout` stops it.
const REGISTRY_LIFETIME_SECS: u32 = 300;

/// Where the install script is, for error messages.
const INSTALL_HINT: &str =
    "run tests/registry/install.sh (it installs docker-registry, skopeo and apache2-utils)";

/// The path of a required tool, or a panic telling how to install it.
pub fn require(tool: &str) -> PathBuf {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(tool))
            .find(|candidate| candidate.is_file())
    });
    found.unwrap_or_else(|| panic!("`{tool}` is not installed: {INSTALL_HINT}"))
}

/// A test registry's access control.
#[derive(Debug, Clone, Default)]
pub struct RegistryConfig {
    /// Basic auth through htpasswd with this user and password.
    pub htpasswd: Option<(String, String)>,
    /// Serve TLS with a certificate from a test CA.
    pub tls: bool,
}

/// A running `docker-registry`, stopped on drop.
pub struct Registry {
    /// `127.0.0.1:<port>`.
    pub addr: String,
    /// The registry's storage root.
    pub storage: PathBuf,
    /// The PEM of the CA that signed the registry's certificate (TLS only).
    pub ca_pem: Option<PathBuf>,
    child: Option<Child>,
    dir: TempDir,
}

impl Registry {
    /// A plain-HTTP registry without auth.
    pub fn start() -> Registry {
        Registry::start_with(RegistryConfig::default())
    }

    /// A registry with the given access control.
    pub fn start_with(config: RegistryConfig) -> Registry {
        let binary = require("docker-registry");
        require("timeout");
        // A free port can be taken again before the registry binds it (by
        // another test's registry, even): then this registry exits at once,
        // and another port is tried.
        for attempt in 1..=5 {
            let dir = tempfile::tempdir().expect("temp dir");
            let storage = dir.path().join("storage");
            std::fs::create_dir_all(&storage).unwrap();
            let port = free_port();
            let addr = format!("127.0.0.1:{port}");

            let mut yaml = format!(
                "version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: true\n\
                 storage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\n\
                 http:\n  addr: {addr}\n  secret: xfn-test-secret\n",
                storage.display()
            );
            let mut ca_pem = None;
            if config.tls {
                let (ca, cert, key) = write_test_certificates(dir.path());
                yaml.push_str(&format!(
                    "  tls:\n    certificate: {}\n    key: {}\n",
                    cert.display(),
                    key.display()
                ));
                ca_pem = Some(ca);
            }
            if let Some((user, password)) = &config.htpasswd {
                let htpasswd = dir.path().join("htpasswd");
                let output = Command::new(require("htpasswd"))
                    .args(["-Bbn", user, password])
                    .output()
                    .expect("run htpasswd");
                assert!(output.status.success(), "htpasswd failed");
                std::fs::write(&htpasswd, &output.stdout).unwrap();
                yaml.push_str(&format!(
                    "auth:\n  htpasswd:\n    realm: xfn-test\n    path: {}\n",
                    htpasswd.display()
                ));
            }
            let config_path = dir.path().join("config.yml");
            std::fs::write(&config_path, yaml).unwrap();
            let log = std::fs::File::create(dir.path().join("registry.log")).unwrap();
            let child = Command::new("timeout")
                .arg(REGISTRY_LIFETIME_SECS.to_string())
                .arg(&binary)
                .arg("serve")
                .arg(&config_path)
                .stdin(Stdio::null())
                .stdout(log.try_clone().unwrap())
                .stderr(log)
                .spawn()
                .expect("start docker-registry");
            let mut registry = Registry {
                addr,
                storage,
                ca_pem,
                child: Some(child),
                dir,
            };
            if registry.wait_until_listening() {
                return registry;
            }
            eprintln!(
                "docker-registry could not use {} (attempt {attempt}); trying another port",
                registry.addr
            );
        }
        panic!("docker-registry could not start on a free port");
    }

    /// Waits for this registry to listen: `false` if it exited (its port
    /// was taken), a panic if it neither listens nor exits in time.
    fn wait_until_listening(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                let log = self.log();
                if log.contains("address already in use") {
                    return false;
                }
                panic!("docker-registry exited ({status}):\n{log}");
            }
            if TcpStream::connect(&self.addr).is_ok() {
                // Something listens; make sure it is this registry, not
                // one that took the port first and made this one exit.
                std::thread::sleep(Duration::from_millis(200));
                match self.child.as_mut().map(Child::try_wait) {
                    Some(Ok(None)) => return true,
                    _ => continue,
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "docker-registry did not listen on {} in time:\n{}",
            self.addr,
            self.log()
        );
    }

    /// The registry's log.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("registry.log")).unwrap_or_default()
    }

    /// `<addr>/<path>`, e.g. `ref("functions/hello:v1")`.
    pub fn reference(&self, path: &str) -> String {
        format!("{}/{path}", self.addr)
    }

    /// Where the registry stores the blob `sha256:<hex>`.
    pub fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = digest.strip_prefix("sha256:").expect("sha256 digest");
        self.storage
            .join("docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }

    /// Stops the registry (it is also stopped on drop).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SIGTERM to `timeout` is forwarded to the registry.
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A port nobody listens on right now.
pub use xfn_tests::free_port;

/// Writes a CA and a server certificate for 127.0.0.1 and localhost signed
/// by it; returns the paths of the CA PEM, the certificate and the key.
fn write_test_certificates(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    use rcgen::{
        BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair,
        KeyUsagePurpose,
    };
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "xfn test CA");
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();

    let mut params =
        CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()]).unwrap();
    params
        .distinguished_name
        .push(DnType::CommonName, "xfn test registry");
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &ca).unwrap();

    let ca_path = dir.join("ca.pem");
    let cert_path = dir.join("registry.crt");
    let key_path = dir.join("registry.key");
    std::fs::write(&ca_path, ca.pem()).unwrap();
    std::fs::write(&cert_path, cert.pem()).unwrap();
    std::fs::write(&key_path, key.serialize_pem()).unwrap();
    (ca_path, cert_path, key_path)
}

/// The bytes of a built test component (`hello`), building it if missing.
pub fn hello_wasm() -> Vec<u8> {
    let path = xfn_tests::wasm_dir().join("hello.wasm");
    if !path.is_file() {
        let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo)
            .current_dir(&workspace)
            .args([
                "build",
                "--quiet",
                "--profile",
                "wasm",
                "--target",
                "wasm32-wasip2",
                "-p",
                "hello",
            ])
            .status()
            .expect("run cargo build for hello.wasm");
        assert!(status.success(), "cannot build hello.wasm");
    }
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Where `hello.wasm` is (after [`hello_wasm`]).
pub fn hello_wasm_path() -> PathBuf {
    hello_wasm();
    xfn_tests::wasm_dir().join("hello.wasm")
}

/// A component that imports an empty instance under each name.
pub fn component_importing(imports: &[&str]) -> Vec<u8> {
    use wasm_encoder::{
        Component, ComponentImportSection, ComponentTypeRef, ComponentTypeSection, InstanceType,
    };
    let mut component = Component::new();
    let mut types = ComponentTypeSection::new();
    types.instance(&InstanceType::new());
    component.section(&types);
    let mut section = ComponentImportSection::new();
    for name in imports {
        section.import(*name, ComponentTypeRef::Instance(0));
    }
    component.section(&section);
    component.finish()
}

/// Registry options for a test: a private cache, and an empty Docker config
/// beside it (so the machine user's credentials never leak in).
pub fn options(cache: &Path) -> xfn_oci::RegistryOptions {
    let docker_config = cache.with_extension("docker-config.json");
    if !docker_config.exists() {
        std::fs::write(&docker_config, "{}").unwrap();
    }
    xfn_oci::RegistryOptions {
        cache_dir: cache.to_owned(),
        docker_config: Some(docker_config),
        ..xfn_oci::RegistryOptions::default()
    }
}

/// [`options`] with the cache at `<dir>/cache`.
pub fn anonymous_options(dir: &Path) -> xfn_oci::RegistryOptions {
    options(&dir.join("cache"))
}

/// Every file under `dir` (relative paths), sorted.
pub fn files_under(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.push(path.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// A blob of an OCI layout being built.
pub struct Blob {
    pub digest: String,
    pub size: usize,
}

/// An OCI image layout on disk, built blob by blob, then copied into a
/// registry with skopeo (so the artifact is not written by xfn).
pub struct Layout {
    dir: TempDir,
}

impl Default for Layout {
    fn default() -> Self {
        Layout::new()
    }
}

impl Layout {
    /// An empty layout.
    pub fn new() -> Layout {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("blobs/sha256")).unwrap();
        std::fs::write(
            dir.path().join("oci-layout"),
            r#"{"imageLayoutVersion":"1.0.0"}"#,
        )
        .unwrap();
        Layout { dir }
    }

    /// Adds a blob.
    pub fn blob(&self, bytes: &[u8]) -> Blob {
        let hex = sha256_hex(bytes);
        std::fs::write(self.dir.path().join("blobs/sha256").join(&hex), bytes).unwrap();
        Blob {
            digest: format!("sha256:{hex}"),
            size: bytes.len(),
        }
    }

    /// Adds a JSON blob.
    pub fn json(&self, value: &serde_json::Value) -> Blob {
        self.blob(&serde_json::to_vec(value).unwrap())
    }

    /// Adds an image manifest with the given config and layers.
    pub fn manifest(&self, config_type: &str, config: &Blob, layers: serde_json::Value) -> Blob {
        self.json(&serde_json::json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": config_type, "digest": config.digest, "size": config.size},
            "layers": layers,
        }))
    }

    /// Tags `top` (a manifest or an index of `media_type`) and copies the
    /// layout into `registry` as `repo:tag` with skopeo, keeping digests.
    pub fn copy_to(&self, registry: &Registry, top: &Blob, media_type: &str, repo_tag: &str) {
        let (_, tag) = repo_tag.rsplit_once(':').expect("repo:tag");
        let index = serde_json::json!({
            "schemaVersion": 2,
            "manifests": [{
                "mediaType": media_type,
                "digest": top.digest,
                "size": top.size,
                "annotations": {"org.opencontainers.image.ref.name": tag},
            }],
        });
        std::fs::write(self.dir.path().join("index.json"), index.to_string()).unwrap();
        let output = Command::new(require("skopeo"))
            .args([
                "copy",
                "--all",
                "--insecure-policy",
                "--preserve-digests",
                "--dest-tls-verify=false",
            ])
            .arg(format!("oci:{}:{tag}", self.dir.path().display()))
            .arg(format!("docker://{}", registry.reference(repo_tag)))
            .output()
            .expect("run skopeo");
        assert!(
            output.status.success(),
            "skopeo copy failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// A layer descriptor.
pub fn layer(media_type: &str, blob: &Blob, annotations: &[(&str, &str)]) -> serde_json::Value {
    let mut value =
        serde_json::json!({"mediaType": media_type, "digest": blob.digest, "size": blob.size});
    if !annotations.is_empty() {
        let map: BTreeMap<_, _> = annotations.iter().cloned().collect();
        value["annotations"] = serde_json::json!(map);
    }
    value
}

/// A tar archive of `files`, gzipped.
pub fn tar_gz(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (path, bytes) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder.append_data(&mut header, path, *bytes).unwrap();
    }
    let tar = builder.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &tar).unwrap();
    gz.finish().unwrap()
}

/// The SHA-256 of `bytes`, in hex (computed independently of xfn-oci).
pub fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", sha2::Sha256::digest(bytes))
}

/// The subcommands under test, parsed by clap as `xfn` parses them.
#[derive(Debug, clap::Parser)]
struct TestCli {
    #[command(subcommand)]
    command: TestCommand,
}

#[derive(Debug, clap::Subcommand)]
enum TestCommand {
    Push(cli::PushArgs),
    Pull(cli::PullArgs),
    Inspect(cli::InspectArgs),
}

/// Runs `xfn <args>` (push, pull or inspect) in-process.
pub async fn xfn(args: &[&str]) -> anyhow::Result<()> {
    use clap::Parser as _;
    let parsed = TestCli::try_parse_from(std::iter::once("xfn").chain(args.iter().copied()))?;
    match parsed.command {
        TestCommand::Push(a) => cli::push(a).await,
        TestCommand::Pull(a) => cli::pull(a).await,
        TestCommand::Inspect(a) => cli::inspect(a).await,
    }
}

/// Runs `xfn inspect <args>` in-process and returns its report (what it
/// prints: `to_json()` with `--json`, else `to_text()`).
pub async fn xfn_inspect(args: &[&str]) -> anyhow::Result<cli::Report> {
    use clap::Parser as _;
    let argv = ["xfn", "inspect"].into_iter().chain(args.iter().copied());
    let TestCommand::Inspect(a) = TestCli::try_parse_from(argv)?.command else {
        anyhow::bail!("not an inspect command");
    };
    cli::inspect_report(a).await
}

/// Reads `docker://<reference>` with skopeo (`inspect --raw`, or the
/// config with `config = true`): the bytes as the registry serves them.
pub fn skopeo_raw(reference: &str, config: bool) -> Vec<u8> {
    let mut command = Command::new(require("skopeo"));
    command.args(["inspect", "--raw", "--tls-verify=false"]);
    if config {
        command.arg("--config");
    }
    let output = command
        .arg(format!("docker://{reference}"))
        .output()
        .expect("run skopeo");
    assert!(
        output.status.success(),
        "skopeo inspect failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}
