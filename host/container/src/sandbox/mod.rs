//! The sandbox a container function runs in, and the small protocol
//! between render and the launcher that sets it up.
//!
//! Three processes, so that nothing delicate happens after a `fork` of a
//! multi-threaded program:
//!
//! 1. **render** (any thread count) writes a [`SandboxSpec`] to a fresh
//!    `xfn __sandbox` process, the *launcher*;
//! 2. the **launcher** (single-threaded) binds the relay's Unix socket,
//!    makes a user namespace and waits while render writes its uid and
//!    gid maps, then makes PID, IPC, UTS and (unless the function has
//!    network) network namespaces and forks;
//! 3. the **child**, PID 1 of the new PID namespace, makes a mount
//!    namespace, mounts the read-only root with private `/tmp`, `/dev` and
//!    `/proc`, pivots into it, sets the limits, becomes the image's user,
//!    drops every capability, installs a seccomp filter and execs the
//!    image's entrypoint.
//!
//! The launcher then relays render's gRPC connections from the Unix socket
//! to the function's port inside the network namespace, tells render when
//! the function listens, and exits with it. Each dies with its parent
//! (`PR_SET_PDEATHSIG`), and the PID namespace dies with its PID 1, so
//! nothing outlives render, even when render is killed.

mod child;
pub use child::DEFAULT_PATH;
mod launcher;
mod loopback;
mod relay;
mod seccomp;

use std::path::PathBuf;

pub use launcher::main as launcher_main;

/// The hidden first argument that makes the `xfn` binary the launcher.
pub const LAUNCHER_ARG: &str = "__xfn-container-sandbox";

/// Everything the launcher needs, sent by render as one JSON line.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SandboxSpec {
    /// Render's pid: the launcher exits if its parent is another.
    pub parent_pid: u32,
    /// The unpacked root filesystem (mounted read-only).
    pub root: PathBuf,
    /// The command: entrypoint, then arguments.
    pub argv: Vec<String>,
    /// The environment, `NAME=value`.
    pub env: Vec<String>,
    /// The working directory inside the root.
    pub cwd: String,
    /// The uid inside the sandbox.
    pub uid: u32,
    /// The gid inside the sandbox.
    pub gid: u32,
    /// Whether the uid maps to one that owns no other process (render runs
    /// as root), so supplementary groups can be cleared.
    pub clear_groups: bool,
    /// The sandbox's host name.
    pub hostname: String,
    /// Share the host's network (the function is told to listen on a free
    /// loopback port with `--address`) instead of a network namespace of
    /// its own with only loopback.
    pub network: bool,
    /// The port the function listens on in its own network namespace.
    pub port: u16,
    /// The Unix socket render dials; the launcher relays it to the port.
    pub socket: PathBuf,
    /// A private directory of render's with the `hosts`, `resolv.conf`
    /// and `hostname` files the sandbox sees in `/etc`.
    pub etc_dir: PathBuf,
    /// Resource limits.
    pub limits: ResourceLimits,
}

/// Limits on what a sandboxed function may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ResourceLimits {
    /// Writable memory of each process (`RLIMIT_DATA`), bytes.
    pub memory_bytes: u64,
    /// Processes and threads in the sandbox (`RLIMIT_NPROC`, counted in
    /// its own user namespace).
    pub processes: u64,
    /// Open files of each process (`RLIMIT_NOFILE`).
    pub open_files: u64,
    /// The size of the private `/tmp` (a tmpfs), bytes.
    pub tmp_bytes: u64,
}

impl Default for ResourceLimits {
    fn default() -> ResourceLimits {
        ResourceLimits {
            memory_bytes: 2 << 30,
            processes: 256,
            open_files: 4096,
            tmp_bytes: 64 << 20,
        }
    }
}

/// Status lines the launcher writes on its stdout.
pub mod status {
    /// The user namespace exists: write the maps, then [`MAPPED`].
    pub const UNSHARED: &str = "unshared";
    /// Render's answer: the maps are written.
    pub const MAPPED: &str = "mapped";
    /// The function accepts connections.
    pub const READY: &str = "ready";
    /// `exited <how>`: the function (PID 1) is gone.
    pub const EXITED: &str = "exited";
    /// `failed <why>`: the launcher could not set up the sandbox.
    pub const FAILED: &str = "failed";
}

/// The exit status of a child that could not set up the sandbox, as
/// Docker's 125.
pub const SETUP_FAILED: i32 = 125;
