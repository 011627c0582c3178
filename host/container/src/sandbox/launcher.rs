//! The launcher: a fresh, single-threaded `xfn` process that makes the
//! namespaces, forks the function's PID 1, relays its port and reports.

use std::io::{BufRead, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::os::unix::net::UnixListener;
use std::time::Duration;

use rustix::process::{Pid, WaitOptions, WaitStatus};
use rustix::thread::UnshareFlags;

use super::{SandboxSpec, status};

/// How often the launcher checks on the function and its parent.
const POLL: Duration = Duration::from_millis(10);

/// The launcher's `main`: reads the spec from stdin, reports on stdout,
/// and returns the function's exit status.
pub fn main() -> i32 {
    match run() {
        Ok(code) => code,
        Err(why) => {
            report(&format!("{} {why}", status::FAILED));
            super::SETUP_FAILED
        }
    }
}

fn report(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn run() -> Result<i32, String> {
    // Die with render, and make sure render is still the parent.
    rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
        .map_err(|e| format!("cannot set the parent-death signal: {e}"))?;
    let mut stdin = std::io::stdin().lock();
    let spec: SandboxSpec = {
        let mut line = String::new();
        (&mut stdin)
            .take(1 << 20)
            .read_line(&mut line)
            .map_err(|e| format!("cannot read the sandbox spec: {e}"))?;
        serde_json::from_str(&line).map_err(|e| format!("invalid sandbox spec: {e}"))?
    };
    let parent = rustix::process::getppid().map_or(0, |p| p.as_raw_nonzero().get() as u32);
    if parent != spec.parent_pid {
        return Err("render exited before the sandbox started".to_owned());
    }
    if std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .any(|l| l.starts_with("Threads:") && l.trim_end() != "Threads:\t1")
    }) {
        return Err("the launcher must be single-threaded".to_owned());
    }

    let listener = UnixListener::bind(&spec.socket)
        .map_err(|e| format!("cannot listen on {:?}: {e}", spec.socket))?;

    // SAFETY: this process is single-threaded (checked above), so no
    // other thread can observe the change of namespaces.
    #[allow(unsafe_code)]
    unsafe { rustix::thread::unshare_unsafe(UnshareFlags::NEWUSER) }.map_err(|e| {
        format!(
            "cannot create a user namespace ({e}): this host does not allow unprivileged user namespaces; \
             allow them (sysctl kernel.unprivileged_userns_clone=1, or user.max_user_namespaces > 0, \
             or on Ubuntu kernel.apparmor_restrict_unprivileged_userns=0), or run the function yourself \
             and use the `render.crossplane.io/runtime: Development` annotation"
        )
    })?;
    report(status::UNSHARED);
    let mut answer = String::new();
    (&mut stdin)
        .take(64)
        .read_line(&mut answer)
        .map_err(|e| format!("cannot read render's answer: {e}"))?;
    if answer.trim_end() != status::MAPPED {
        return Err("render did not map the sandbox's user".to_owned());
    }

    let mut flags = UnshareFlags::NEWPID | UnshareFlags::NEWIPC | UnshareFlags::NEWUTS;
    if !spec.network {
        flags |= UnshareFlags::NEWNET;
    }
    // SAFETY: single-threaded, as above.
    #[allow(unsafe_code)]
    unsafe { rustix::thread::unshare_unsafe(flags) }
        .map_err(|e| format!("cannot create the sandbox's namespaces: {e}"))?;

    let mut spec = spec;
    let port = if spec.network {
        let port = free_port()?;
        spec.argv.push(format!("--address=127.0.0.1:{port}"));
        port
    } else {
        super::loopback::up()
            .map_err(|e| format!("cannot bring up the loopback interface: {e}"))?;
        spec.port
    };

    let child = fork_child(&spec)?;
    let target = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    // No threads from here on: this process made a PID namespace.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| format!("cannot start the relay: {e}"))?;
    let parent = spec.parent_pid;
    runtime.block_on(async move {
        listener
            .set_nonblocking(true)
            .map_err(|e| format!("cannot start the relay: {e}"))?;
        let listener = tokio::net::UnixListener::from_std(listener)
            .map_err(|e| format!("cannot start the relay: {e}"))?;
        tokio::spawn(super::relay::serve(listener, target));
        Ok(watch(child, target, parent).await)
    })
}

/// Forks the sandbox's PID 1, which never returns here.
fn fork_child(spec: &SandboxSpec) -> Result<Pid, String> {
    // SAFETY: the process is single-threaded, so the child is a complete
    // copy of it and may do anything the parent could.
    #[allow(unsafe_code)]
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => Err(format!(
            "cannot start the function: {}",
            std::io::Error::last_os_error()
        )),
        0 => std::process::exit(super::child::run(spec)),
        pid => Pid::from_raw(pid).ok_or_else(|| "fork returned an invalid pid".to_owned()),
    }
}

/// Waits for the function: reports `ready` once its port accepts a
/// connection, and `exited …` when it is gone; kills it if render is.
async fn watch(child: Pid, target: SocketAddr, parent: u32) -> i32 {
    let mut ready = false;
    loop {
        match rustix::process::waitpid(Some(child), WaitOptions::NOHANG) {
            Ok(Some((_, status))) => {
                let (how, code) = describe(status);
                report(&format!("{} {how}", status::EXITED));
                return code;
            }
            Ok(None) => {}
            Err(e) => {
                report(&format!("{} {}", status::FAILED, e));
                return super::SETUP_FAILED;
            }
        }
        let parent_now = rustix::process::getppid().map_or(0, |p| p.as_raw_nonzero().get() as u32);
        if parent_now != parent {
            let _ = rustix::process::kill_process(child, rustix::process::Signal::KILL);
            return super::SETUP_FAILED;
        }
        if !ready
            && matches!(
                tokio::time::timeout(POLL, tokio::net::TcpStream::connect(target)).await,
                Ok(Ok(_))
            )
        {
            ready = true;
            report(status::READY);
        }
        tokio::time::sleep(POLL).await;
    }
}

/// How a process ended, in words and as a shell's exit status.
fn describe(status: WaitStatus) -> (String, i32) {
    if let Some(code) = status.exit_status() {
        (format!("with status {code}"), code)
    } else if let Some(signal) = status.terminating_signal() {
        let name = match signal {
            9 => " (SIGKILL)",
            11 => " (SIGSEGV)",
            6 => " (SIGABRT)",
            15 => " (SIGTERM)",
            _ => "",
        };
        (format!("killed by signal {signal}{name}"), 128 + signal)
    } else {
        ("for an unknown reason".to_owned(), 1)
    }
}

fn free_port() -> Result<u16, String> {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("cannot find a free loopback port: {e}"))
}

use std::io::Read as _;
