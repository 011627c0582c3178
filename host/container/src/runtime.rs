//! Starting a container function: its root, its launcher, its readiness,
//! and a gRPC client that reaches it through the relay.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdout, Command};
use xfn_runtime::protocol::{RunFunctionRequest, RunFunctionResponse};
use xfn_runtime::{CallError, Function};

use crate::rootfs::{Layer, RootfsCache};
use crate::sandbox::{LAUNCHER_ARG, ResourceLimits, SandboxSpec, status};
use crate::unpack::Limits;

/// The port a function listens on, as `crossplane render` expects it.
pub const FUNCTION_PORT: u16 = 9443;

/// The id every file of a root, and the sandbox's user, maps to when
/// render runs as root: one no account uses, so the sandbox's process
/// limit counts only its own processes and it owns nothing outside.
/// Where this host maps fewer ids (root in a container), the highest it
/// maps instead ([`root_run_id`]).
pub const ROOT_RUN_ID: u32 = 0x7ff0_0000;

/// The id the sandbox's user maps to when render runs as root: [`ROOT_RUN_ID`]
/// if the process's user namespace maps it (`map` is the text of
/// `/proc/self/uid_map` or `gid_map`), else the highest id other than 0
/// it maps; `None` if it maps only 0.
pub fn root_run_id(map: &str) -> Option<u32> {
    let ranges: Vec<(u64, u64)> = map
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace().map(|f| f.parse::<u64>().ok());
            let (inside, _outside, count) = (fields.next()??, fields.next()??, fields.next()??);
            Some((inside, count))
        })
        .collect();
    let wanted = u64::from(ROOT_RUN_ID);
    if ranges.is_empty()
        || ranges
            .iter()
            .any(|(start, count)| (*start..start + count).contains(&wanted))
    {
        return Some(ROOT_RUN_ID);
    }
    ranges
        .iter()
        .map(|(start, count)| start + count.saturating_sub(1))
        .filter(|id| *id > 0 && *id < u64::from(u32::MAX))
        .max()
        .and_then(|id| u32::try_from(id).ok())
}

/// The uid and gid the sandbox maps to when render runs as root, if this
/// user namespace has ids to spare.
fn root_run_ids() -> Option<(u32, u32)> {
    let read = |file| std::fs::read_to_string(file).unwrap_or_default();
    Some((
        root_run_id(&read("/proc/self/uid_map"))?,
        root_run_id(&read("/proc/self/gid_map"))?,
    ))
}

/// The first lines of a function's stderr kept for an error.
const STDERR_FIRST_LINES: usize = 10;
/// The last lines of a function's stderr kept for an error.
const STDERR_LINES: usize = 30;
/// The longest stderr line kept.
const STDERR_LINE_BYTES: usize = 1024;

/// A container image, as pulled and verified.
#[derive(Debug, Clone)]
pub struct Image {
    /// The reference, for messages.
    pub reference: String,
    /// Its layers, in order.
    pub layers: Vec<Layer>,
    /// The config's `Entrypoint`.
    pub entrypoint: Vec<String>,
    /// The config's `Env`.
    pub env: Vec<String>,
    /// The config's `WorkingDir`.
    pub working_dir: String,
    /// The config's `User`.
    pub user: String,
}

/// How container functions run.
#[derive(Debug, Clone)]
pub struct ContainerOptions {
    /// The `xfn` binary, which is also the launcher.
    pub launcher: PathBuf,
    /// The cache whose `rootfs/` holds unpacked roots.
    pub cache_root: PathBuf,
    /// Bounds on unpacking.
    pub unpack_limits: Limits,
    /// Bounds on the running function.
    pub resources: ResourceLimits,
    /// How long a function may take to listen.
    pub start_timeout: Duration,
    /// Give every function the host's network (otherwise only those whose
    /// [`FunctionSettings::network`] asks for it).
    pub network: bool,
}

/// One function's own settings.
#[derive(Debug, Clone, Default)]
pub struct FunctionSettings {
    /// Share the host's network.
    pub network: bool,
    /// Environment added to the image's (`runtime-docker-env`).
    pub env: Vec<(String, String)>,
}

/// Why a container function could not start.
#[derive(Debug, thiserror::Error)]
pub enum ContainerError {
    /// The image's root could not be made.
    #[error("{0}")]
    Rootfs(#[from] crate::rootfs::RootfsError),
    /// The image can't be run as it is.
    #[error("{0}")]
    Image(String),
    /// The sandbox could not be set up, or the function did not come up.
    #[error("{0}")]
    Start(String),
}

/// How long each part of a start took.
#[derive(Debug, Clone, Copy, Default)]
pub struct StartTimes {
    /// Unpacking (or finding) the root.
    pub rootfs: Duration,
    /// From spawning the launcher to the function listening.
    pub listen: Duration,
    /// Whether the root came from the cache.
    pub rootfs_reused: bool,
}

/// A running container function. Dropping it kills the sandbox.
pub struct ContainerFunction {
    grpc: xfn_grpc::GrpcFunction,
    launcher: Child,
    stderr: Arc<Mutex<StderrTail>>,
    times: StartTimes,
    _dir: tempfile::TempDir,
}

impl std::fmt::Debug for ContainerFunction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContainerFunction")
            .field("grpc", &self.grpc)
            .field("times", &self.times)
            .finish_non_exhaustive()
    }
}

/// The first and last lines a function wrote to stderr: the first often
/// say why (Go's "fatal error: out of memory"), the last what it did.
#[derive(Debug, Default)]
struct StderrTail {
    first: Vec<String>,
    lines: VecDeque<String>,
    dropped: usize,
}

impl StderrTail {
    fn push(&mut self, line: &str) {
        let mut end = line.len().min(STDERR_LINE_BYTES);
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        let line = line[..end].to_owned();
        if self.first.len() < STDERR_FIRST_LINES {
            self.first.push(line);
            return;
        }
        if self.lines.len() == STDERR_LINES {
            self.lines.pop_front();
            self.dropped += 1;
        }
        self.lines.push_back(line);
    }

    fn text(&self) -> String {
        if self.first.is_empty() {
            return "it wrote nothing to stderr".to_owned();
        }
        let mut shown: Vec<&str> = self.first.iter().map(String::as_str).collect();
        let skipped = format!("({} lines left out)", self.dropped);
        if self.dropped > 0 {
            shown.push(&skipped);
        }
        shown.extend(self.lines.iter().map(String::as_str));
        format!("its stderr:\n    {}", shown.join("\n    "))
    }
}

impl ContainerFunction {
    /// Unpacks `image` (or reuses its root), starts it in a sandbox and
    /// waits until it listens.
    pub async fn start(
        name: &str,
        image: &Image,
        settings: &FunctionSettings,
        options: &ContainerOptions,
    ) -> Result<ContainerFunction, ContainerError> {
        if image.entrypoint.is_empty() {
            return Err(ContainerError::Image(format!(
                "the image {} has no entrypoint; `crossplane render` runs a function image's entrypoint with --insecure",
                image.reference
            )));
        }
        // Root maps the sandbox to an id of its own; anyone else (and root
        // in a namespace that maps no other id) to their own id.
        let owner = rustix::process::geteuid()
            .is_root()
            .then(root_run_ids)
            .flatten();
        let as_root = owner.is_some();
        let began = Instant::now();
        let rootfs = {
            let cache = RootfsCache::new(&options.cache_root, options.unpack_limits);
            let layers = image.layers.clone();
            tokio::task::spawn_blocking(move || cache.ensure(&layers, owner))
                .await
                .map_err(|e| ContainerError::Start(format!("unpacking stopped: {e}")))??
        };
        let rootfs_time = began.elapsed();
        tracing::debug!(
            function = name,
            reused = rootfs.reused,
            entries = rootfs.totals.entries,
            "root filesystem ready in {rootfs_time:?}"
        );
        let run_as = crate::user::resolve(&rootfs.root, &image.user)
            .map_err(|e| ContainerError::Image(format!("{}: {e}", image.reference)))?;
        let entrypoint = &image.entrypoint[0];
        if entrypoint.contains('/')
            && !crate::rootfs::is_executable_in_root(&rootfs.root, entrypoint)
        {
            return Err(ContainerError::Image(format!(
                "the image {}'s entrypoint {entrypoint:?} is not an executable file in the image",
                image.reference
            )));
        }

        let dir = tempfile::Builder::new()
            .prefix("xfn-container-")
            .tempdir()
            .map_err(|e| {
                ContainerError::Start(format!("cannot create a private directory: {e}"))
            })?;
        // The sandbox's user enters it to bind its /etc files (it lists
        // nothing); the socket inside stays render's alone.
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711)).map_err(
                |e| ContainerError::Start(format!("cannot create a private directory: {e}")),
            )?;
        }
        let hostname = hostname_for(name);
        write_etc(dir.path(), &hostname, settings.network || options.network).map_err(|e| {
            ContainerError::Start(format!("cannot write the sandbox's /etc files: {e}"))
        })?;
        let socket = dir.path().join("grpc.sock");
        let spec = SandboxSpec {
            parent_pid: std::process::id(),
            root: rootfs.root.clone(),
            argv: image
                .entrypoint
                .iter()
                .cloned()
                .chain(["--insecure".to_owned()])
                .collect(),
            env: environment(&image.env, &settings.env, &run_as.home, &hostname),
            cwd: image.working_dir.clone(),
            uid: run_as.uid,
            gid: run_as.gid,
            clear_groups: as_root,
            hostname,
            network: settings.network || options.network,
            port: FUNCTION_PORT,
            socket: socket.clone(),
            etc_dir: dir.path().to_owned(),
            limits: options.resources,
        };

        let started = Instant::now();
        let mut launcher = Command::new(&options.launcher)
            .arg(LAUNCHER_ARG)
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                ContainerError::Start(format!(
                    "cannot start the sandbox launcher {:?}: {e}",
                    options.launcher
                ))
            })?;
        let stderr = Arc::new(Mutex::new(StderrTail::default()));
        let reader = launcher.stderr.take().map(|pipe| {
            let (tail, function) = (Arc::clone(&stderr), name.to_owned());
            tokio::spawn(async move {
                // A line is read up to STDERR_LINE_BYTES at a time, so a
                // function that writes without newlines can't grow it.
                let mut reader = BufReader::new(pipe);
                let mut line = Vec::new();
                loop {
                    line.clear();
                    // `Take` of a buffered reader reads from its buffer: no
                    // byte past the line is lost.
                    let mut limited = (&mut reader).take(STDERR_LINE_BYTES as u64);
                    match limited.read_until(b'\n', &mut line).await {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {}
                    }
                    let text = String::from_utf8_lossy(&line);
                    let text = text.trim_end_matches('\n');
                    tracing::debug!(function, "{text}");
                    if let Ok(mut tail) = tail.lock() {
                        tail.push(text);
                    }
                }
            })
        });
        let outcome =
            tokio::time::timeout(options.start_timeout, bring_up(&mut launcher, &spec, owner))
                .await;
        let failure = match outcome {
            Ok(Ok(())) => None,
            Ok(Err(why)) => Some(why),
            Err(_) => Some(format!(
                "it did not listen on port {} within {:?}",
                FUNCTION_PORT, options.start_timeout
            )),
        };
        if let Some(why) = failure {
            let _ = launcher.start_kill();
            let _ = launcher.wait().await;
            if let Some(reader) = reader {
                let _ = tokio::time::timeout(Duration::from_secs(2), reader).await;
            }
            let tail = stderr.lock().map(|t| t.text()).unwrap_or_default();
            return Err(ContainerError::Start(format!(
                "the container function from {} did not start: {why}; {tail}",
                image.reference
            )));
        }
        let times = StartTimes {
            rootfs: rootfs_time,
            listen: started.elapsed(),
            rootfs_reused: rootfs.reused,
        };
        tracing::debug!(
            function = name,
            "container function listening after {:?}",
            times.listen
        );
        let grpc = xfn_grpc::GrpcFunction::over_unix_socket(
            name,
            &socket,
            xfn_grpc::ClientOptions::default(),
        )
        .map_err(|e| ContainerError::Start(e.to_string()))?;
        Ok(ContainerFunction {
            grpc,
            launcher,
            stderr,
            times,
            _dir: dir,
        })
    }

    /// How long starting it took.
    pub fn start_times(&self) -> StartTimes {
        self.times
    }

    /// The last lines the function wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        self.stderr.lock().map(|t| t.text()).unwrap_or_default()
    }

    /// The launcher's pid (the sandbox dies with it).
    pub fn launcher_pid(&self) -> Option<u32> {
        self.launcher.id()
    }
}

#[async_trait::async_trait]
impl Function for ContainerFunction {
    fn name(&self) -> &str {
        self.grpc.name()
    }

    async fn call(
        &self,
        request: &RunFunctionRequest,
        timeout: Option<Duration>,
    ) -> Result<RunFunctionResponse, CallError> {
        let result = self.grpc.call(request, timeout).await;
        result.map_err(|error| match error {
            CallError::Failed { function, message } => CallError::Failed {
                function,
                message: format!("{message}; {}", self.stderr_tail()),
            },
            other => other,
        })
    }
}

/// Sends the spec, maps the user namespace, and waits for `ready`.
async fn bring_up(
    launcher: &mut Child,
    spec: &SandboxSpec,
    owner: Option<(u32, u32)>,
) -> Result<(), String> {
    let mut stdin = launcher.stdin.take().ok_or("the launcher has no stdin")?;
    let stdout = launcher.stdout.take().ok_or("the launcher has no stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let mut line = serde_json::to_string(spec).map_err(|e| e.to_string())?;
    line.push('\n');
    stdin
        .write_all(line.as_bytes())
        .await
        .map_err(|e| format!("cannot send the sandbox spec: {e}"))?;
    expect(&mut lines, launcher, status::UNSHARED).await?;
    let pid = launcher.id().ok_or("the launcher exited")?;
    write_maps(pid, spec.uid, spec.gid, owner)?;
    stdin
        .write_all(format!("{}\n", status::MAPPED).as_bytes())
        .await
        .map_err(|e| format!("cannot resume the launcher: {e}"))?;
    expect(&mut lines, launcher, status::READY).await?;
    // The launcher keeps writing status lines (its exit); drain them so it
    // never blocks on a full pipe.
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            tracing::debug!("container launcher: {line}");
        }
        drop(stdin);
    });
    Ok(())
}

/// Reads status lines until `wanted`; anything else is the failure.
async fn expect(
    lines: &mut tokio::io::Lines<BufReader<ChildStdout>>,
    launcher: &mut Child,
    wanted: &str,
) -> Result<(), String> {
    match lines.next_line().await {
        Ok(Some(line)) if line == wanted => Ok(()),
        Ok(Some(line)) => {
            if let Some(how) = line.strip_prefix(status::EXITED) {
                Err(format!(
                    "it exited{how} before it listened on port {FUNCTION_PORT}"
                ))
            } else if let Some(why) = line.strip_prefix(status::FAILED) {
                Err(format!("the sandbox could not be set up:{why}"))
            } else {
                Err(format!("the launcher said {line:?}"))
            }
        }
        Ok(None) | Err(_) => {
            let how = match launcher.wait().await {
                Ok(status) => status.to_string(),
                Err(e) => e.to_string(),
            };
            Err(format!("the sandbox launcher exited ({how})"))
        }
    }
}

/// Maps the sandbox's user: to `owner` (render runs as root), otherwise
/// to the caller's own uid and gid, the only ones an unprivileged user may
/// map.
fn write_maps(pid: u32, uid: u32, gid: u32, owner: Option<(u32, u32)>) -> Result<(), String> {
    let proc = PathBuf::from(format!("/proc/{pid}"));
    let write = |file: &str, text: String| {
        std::fs::write(proc.join(file), text)
            .map_err(|e| format!("cannot write the sandbox's {file}: {e}"))
    };
    if let Some((outside_uid, outside_gid)) = owner {
        write("uid_map", format!("{uid} {outside_uid} 1\n"))?;
        write("gid_map", format!("{gid} {outside_gid} 1\n"))?;
    } else {
        let (euid, egid) = (
            rustix::process::geteuid().as_raw(),
            rustix::process::getegid().as_raw(),
        );
        write("setgroups", "deny\n".to_owned())?;
        write("uid_map", format!("{uid} {euid} 1\n"))?;
        write("gid_map", format!("{gid} {egid} 1\n"))?;
    }
    Ok(())
}

/// The environment Docker would give: the image's, then the Function's
/// `runtime-docker-env`, with `PATH`, `HOSTNAME` and `HOME` defaulted.
fn environment(
    image: &[String],
    extra: &[(String, String)],
    home: &str,
    hostname: &str,
) -> Vec<String> {
    fn set(env: &mut Vec<(String, String)>, name: &str, value: &str) {
        match env.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = value.to_owned(),
            None => env.push((name.to_owned(), value.to_owned())),
        }
    }
    let mut env: Vec<(String, String)> = Vec::new();
    set(&mut env, "PATH", crate::sandbox::DEFAULT_PATH);
    set(&mut env, "HOSTNAME", hostname);
    for pair in image {
        if let Some((name, value)) = pair.split_once('=') {
            set(&mut env, name, value);
        }
    }
    for (name, value) in extra {
        set(&mut env, name, value);
    }
    if !env.iter().any(|(n, _)| n == "HOME") {
        set(&mut env, "HOME", home);
    }
    env.into_iter().map(|(n, v)| format!("{n}={v}")).collect()
}

/// A host name from the Function's name (letters, digits and `-`).
fn hostname_for(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .take(63)
        .collect();
    if cleaned.is_empty() {
        "function".to_owned()
    } else {
        cleaned
    }
}

/// Writes the sandbox's `/etc/hosts`, `/etc/resolv.conf` and
/// `/etc/hostname`: the host's own with network, loopback alone without.
fn write_etc(dir: &Path, hostname: &str, network: bool) -> std::io::Result<()> {
    let host_file = |path: &str| {
        std::fs::read(path)
            .map(|mut b| {
                b.truncate(64 << 10);
                b
            })
            .unwrap_or_default()
    };
    let (hosts, resolv) = if network {
        (host_file("/etc/hosts"), host_file("/etc/resolv.conf"))
    } else {
        (
            format!("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\t{hostname}\n")
                .into_bytes(),
            Vec::new(),
        )
    };
    std::fs::write(dir.join("hosts"), hosts)?;
    std::fs::write(dir.join("resolv.conf"), resolv)?;
    std::fs::write(dir.join("hostname"), format!("{hostname}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_is_dockers() {
        let env = environment(
            &["PATH=/app/bin".into(), "A=1".into(), "broken".into()],
            &[("A".into(), "2".into()), ("B".into(), "x=y".into())],
            "/home/nonroot",
            "fn",
        );
        assert_eq!(
            env,
            [
                "PATH=/app/bin",
                "HOSTNAME=fn",
                "A=2",
                "B=x=y",
                "HOME=/home/nonroot"
            ]
        );
    }

    #[test]
    fn stderr_tail_keeps_the_first_and_last_lines() {
        let mut tail = StderrTail::default();
        assert_eq!(tail.text(), "it wrote nothing to stderr");
        for n in 0..100 {
            tail.push(&format!("line {n}"));
        }
        let text = tail.text();
        for kept in [
            "line 0\n",
            "line 9\n",
            "(60 lines left out)",
            "line 70\n",
            "line 99",
        ] {
            assert!(text.contains(kept), "{kept}: {text}");
        }
        assert!(
            !text.contains("line 10\n") && !text.contains("line 69\n"),
            "{text}"
        );
        tail.push(&"é".repeat(1000));
        assert!(
            tail.lines
                .back()
                .is_some_and(|l| l.len() <= STDERR_LINE_BYTES)
        );
    }

    #[test]
    fn root_runs_as_an_id_its_namespace_maps() {
        assert_eq!(
            root_run_id("         0          0 4294967295\n"),
            Some(ROOT_RUN_ID)
        );
        assert_eq!(root_run_id("0 100000 65536\n"), Some(65535));
        assert_eq!(root_run_id("0 0 1\n1000 5000 10\n"), Some(1009));
        assert_eq!(root_run_id("0 1000 1\n"), None);
        assert_eq!(root_run_id(""), Some(ROOT_RUN_ID));
    }

    #[test]
    fn hostnames_are_clean() {
        assert_eq!(
            hostname_for("function-patch-and-transform"),
            "function-patch-and-transform"
        );
        assert_eq!(hostname_for("a.b_c"), "a-b-c");
        assert_eq!(hostname_for(""), "function");
    }
}
