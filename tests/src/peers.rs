//! Conventional function servers that tests and benchmarks run beside
//! xfn: building the Go peer, and reading the port a peer announces.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Builds the Go peer with `tests/go-peer/build.sh --no-install` (which
/// installs nothing; `make go-peer` installs its Debian packages) and
/// returns the binary's path, or the build's error output.
pub fn build_go_peer() -> Result<PathBuf, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("go-peer/build.sh");
    let out = Command::new(&script)
        .arg("--no-install")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!(
            "build.sh failed (`make go-peer` installs what it needs): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// Waits up to `wait` for the first line `child` prints on its piped
/// stdout, `LISTENING <port>`. Returns the port, if the line was that, and
/// the line read (empty if none came in time).
pub fn announced_port(child: &mut Child, wait: Duration) -> (Option<u16>, String) {
    let Some(stdout) = child.stdout.take() else {
        return (None, String::new());
    };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(wait).unwrap_or_default();
    (listening_port(&line), line)
}

/// The port in a peer's `LISTENING <port>` line, if `line` is one.
pub fn listening_port(line: &str) -> Option<u16> {
    line.trim().strip_prefix("LISTENING ")?.parse().ok()
}

/// A peer server started with `--address 127.0.0.1:0 --max-seconds
/// SECONDS`, which announces its port with `LISTENING <port>` on stdout;
/// killed on drop.
pub struct ListeningPeer {
    child: Child,
    /// `127.0.0.1:<port>`.
    pub target: String,
}

impl ListeningPeer {
    /// Starts `program`, which lives at most `seconds`, and waits up to 30
    /// s for its announcement.
    ///
    /// # Panics
    ///
    /// If it can't start or announces no port in time: a test can't go on.
    pub fn start(program: &Path, seconds: u32) -> ListeningPeer {
        let seconds = seconds.to_string();
        let mut child = Command::new(program)
            .args(["--address", "127.0.0.1:0", "--max-seconds", &seconds])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", program.display()));
        let (port, line) = announced_port(&mut child, Duration::from_secs(30));
        let Some(port) = port else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{} did not start (stdout {line:?})", program.display());
        };
        ListeningPeer {
            child,
            target: format!("127.0.0.1:{port}"),
        }
    }
}

impl Drop for ListeningPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
