//! The sandbox's PID 1, between `fork` and `exec`: mounts, limits, user
//! and capabilities, then the image's entrypoint.

use std::os::unix::process::CommandExt;
use std::path::Path;

use rustix::fs::{AtFlags, Mode};
use rustix::mount::{MountFlags, MountPropagationFlags, UnmountFlags};
use rustix::process::{Resource, Rlimit};
use rustix::thread::{CapabilitiesSecureBits, CapabilitySet, CapabilitySets};

use super::SandboxSpec;

/// Device nodes the sandbox's `/dev` gets from the host, as Docker's.
const DEVICES: [&str; 6] = ["null", "zero", "full", "random", "urandom", "tty"];

/// `PATH` when the image sets none, as Docker's.
pub const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Sets up the sandbox and execs the function; returns only the exit
/// status of a failure, after saying what failed on stderr.
pub fn run(spec: &SandboxSpec) -> i32 {
    let err = match setup(spec) {
        Ok(()) => exec(spec),
        Err(why) => why,
    };
    eprintln!("xfn sandbox: {err}");
    if err.starts_with("cannot run the entrypoint") {
        127
    } else {
        super::SETUP_FAILED
    }
}

/// Dies with the launcher (the sandbox dies with its PID 1).
fn die_with_launcher() -> Result<(), String> {
    step(
        "cannot set the parent-death signal",
        rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL)),
    )
}

fn step<T>(what: &str, result: rustix::io::Result<T>) -> Result<T, String> {
    result.map_err(|e| format!("{what}: {e}"))
}

fn setup(spec: &SandboxSpec) -> Result<(), String> {
    die_with_launcher()?;
    // SAFETY: this process is the single-threaded child of a
    // single-threaded launcher.
    #[allow(unsafe_code)]
    let unshared = unsafe { rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::NEWNS) };
    step("cannot create a mount namespace", unshared)?;
    step(
        "cannot make the mounts private",
        rustix::mount::mount_change(
            "/",
            MountPropagationFlags::REC | MountPropagationFlags::PRIVATE,
        ),
    )?;
    let root = &spec.root;
    step(
        &format!("cannot bind the root {root:?}"),
        rustix::mount::mount_bind(root, root),
    )?;
    step(
        &format!("cannot enter the root {root:?}"),
        rustix::process::chdir(root),
    )?;
    // Now that the root (under a cache only render's user may enter) is
    // bound, become the image's user: files made from here on must belong
    // to an id the sandbox maps. The capabilities stay until dropped below,
    // as the process was not root in this namespace before.
    become_user(spec)?;
    mount_special(spec)?;
    step(
        "cannot set the host name",
        rustix::system::sethostname(spec.hostname.as_bytes()),
    )?;
    step(
        "cannot pivot into the root",
        rustix::process::pivot_root(".", "."),
    )?;
    step(
        "cannot detach the host's root",
        rustix::mount::unmount(".", UnmountFlags::DETACH),
    )?;
    step("cannot enter the root", rustix::process::chdir("/"))?;
    read_only_root()?;
    limits(spec)?;
    drop_capabilities()?;
    // Changing the user cleared it: set it again, for the function.
    die_with_launcher()?;
    if !super::seccomp::install().map_err(|e| format!("cannot install the seccomp filter: {e}"))? {
        eprintln!(
            "xfn sandbox: no seccomp filter on {} (it knows x86_64, aarch64 and riscv64)",
            std::env::consts::ARCH
        );
    }
    let cwd = if spec.cwd.is_empty() { "/" } else { &spec.cwd };
    rustix::process::chdir(cwd).map_err(|e| {
        format!(
            "the image's working directory {cwd:?} does not exist in it or cannot be entered: {e}"
        )
    })?;
    stdio()?;
    Ok(())
}

/// `/proc`, `/dev`, `/tmp` and `/etc`'s files, relative to the root (the
/// working directory).
fn mount_special(spec: &SandboxSpec) -> Result<(), String> {
    let secure = MountFlags::NOSUID | MountFlags::NODEV;
    if let Err(e) = rustix::mount::mount("proc", "proc", "proc", secure | MountFlags::NOEXEC, None)
    {
        // A host whose /proc is partly hidden refuses a new one; most
        // functions never read /proc, so say so and go on.
        eprintln!("xfn sandbox: no /proc in the sandbox (the host refused a new one: {e})");
    }
    let tmp_size = std::ffi::CString::new(format!("size={},mode=1777", spec.limits.tmp_bytes))
        .map_err(|e| e.to_string())?;
    step(
        "cannot mount /tmp",
        rustix::mount::mount("tmpfs", "tmp", "tmpfs", secure, Some(tmp_size.as_c_str())),
    )?;
    step(
        "cannot mount /dev",
        rustix::mount::mount(
            "tmpfs",
            "dev",
            "tmpfs",
            MountFlags::NOSUID | MountFlags::NOEXEC,
            Some(c"size=65536,mode=755"),
        ),
    )?;
    for device in DEVICES {
        let target = format!("dev/{device}");
        let made = rustix::fs::openat(
            rustix::fs::CWD,
            target.as_str(),
            rustix::fs::OFlags::CREATE | rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::CLOEXEC,
            Mode::from_raw_mode(0o666),
        );
        drop(step(&format!("cannot create /{target}"), made)?);
        let host = format!("/dev/{device}");
        if let Err(e) = rustix::mount::mount_bind(host.as_str(), target.as_str()) {
            // No tty in a CI job, say: leave it out.
            let _ = rustix::fs::unlinkat(rustix::fs::CWD, target.as_str(), AtFlags::empty());
            if device != "tty" {
                return Err(format!("cannot give the sandbox /{target}: {e}"));
            }
        }
    }
    for (link, target) in [
        ("dev/fd", "/proc/self/fd"),
        ("dev/stdin", "/proc/self/fd/0"),
        ("dev/stdout", "/proc/self/fd/1"),
        ("dev/stderr", "/proc/self/fd/2"),
    ] {
        step(
            &format!("cannot create /{link}"),
            rustix::fs::symlinkat(target, rustix::fs::CWD, link),
        )?;
    }
    step(
        "cannot create /dev/shm",
        rustix::fs::mkdirat(rustix::fs::CWD, "dev/shm", Mode::from_raw_mode(0o1777)),
    )?;
    step(
        "cannot mount /dev/shm",
        rustix::mount::mount(
            "tmpfs",
            "dev/shm",
            "tmpfs",
            secure | MountFlags::NOEXEC,
            Some(tmp_size.as_c_str()),
        ),
    )?;
    for file in ["hosts", "resolv.conf", "hostname"] {
        let target = format!("etc/{file}");
        let is_file =
            rustix::fs::statat(rustix::fs::CWD, target.as_str(), AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|st| rustix::fs::FileType::from_raw_mode(st.st_mode).is_file());
        if !is_file {
            continue;
        }
        let source = spec.etc_dir.join(file);
        step(
            &format!("cannot give the sandbox /{target}"),
            rustix::mount::mount_bind(&source, target.as_str()),
        )?;
        step(
            &format!("cannot make /{target} read-only"),
            rustix::mount::mount_remount(
                target.as_str(),
                MountFlags::BIND | MountFlags::RDONLY | locked_flags(Path::new(&target)),
                "",
            ),
        )?;
    }
    Ok(())
}

/// The flags a bind mount inherits and a remount must keep (a user
/// namespace may not clear them).
fn locked_flags(path: &Path) -> MountFlags {
    let Ok(st) = rustix::fs::statvfs(path) else {
        return MountFlags::NOSUID | MountFlags::NODEV;
    };
    use rustix::fs::StatVfsMountFlags as S;
    let mut flags = MountFlags::NOSUID | MountFlags::NODEV;
    for (have, keep) in [
        (S::NOEXEC, MountFlags::NOEXEC),
        (S::NOATIME, MountFlags::NOATIME),
        (S::NODIRATIME, MountFlags::NODIRATIME),
        (S::RELATIME, MountFlags::RELATIME),
    ] {
        if st.f_flag.contains(have) {
            flags |= keep;
        }
    }
    flags
}

fn read_only_root() -> Result<(), String> {
    let flags = locked_flags(Path::new("/"));
    if flags.contains(MountFlags::NOEXEC) {
        return Err(
            "the cache's filesystem is mounted noexec, so nothing in an image can run from it; \
             point XFN_CACHE_DIR at a filesystem that allows executables"
                .to_owned(),
        );
    }
    step(
        "cannot make the root read-only",
        rustix::mount::mount_remount("/", MountFlags::BIND | MountFlags::RDONLY | flags, ""),
    )
}

fn limits(spec: &SandboxSpec) -> Result<(), String> {
    let set = |resource, value: u64, what: &str| {
        step(
            &format!("cannot limit {what}"),
            rustix::process::setrlimit(
                resource,
                Rlimit {
                    current: Some(value),
                    maximum: Some(value),
                },
            ),
        )
    };
    set(Resource::Data, spec.limits.memory_bytes, "memory")?;
    set(Resource::Nproc, spec.limits.processes, "processes")?;
    set(Resource::Nofile, spec.limits.open_files, "open files")?;
    set(Resource::Core, 0, "core dumps")?;
    Ok(())
}

fn become_user(spec: &SandboxSpec) -> Result<(), String> {
    let gid = rustix::fs::Gid::from_raw(spec.gid);
    let uid = rustix::fs::Uid::from_raw(spec.uid);
    step(
        &format!("cannot become group {}", spec.gid),
        rustix::thread::set_thread_res_gid(gid, gid, gid),
    )?;
    if spec.clear_groups {
        step(
            "cannot clear the supplementary groups",
            rustix::thread::set_thread_groups(&[]),
        )?;
    }
    step(
        &format!("cannot become user {}", spec.uid),
        rustix::thread::set_thread_res_uid(uid, uid, uid),
    )
}

fn drop_capabilities() -> Result<(), String> {
    for bit in 0..64 {
        // Capabilities the kernel doesn't know are refused with EINVAL.
        let _ = rustix::thread::remove_capability_from_bounding_set(
            CapabilitySet::from_bits_retain(1 << bit),
        );
    }
    step(
        "cannot lock out root's capabilities",
        rustix::thread::set_capabilities_secure_bits(
            CapabilitiesSecureBits::NO_ROOT | CapabilitiesSecureBits::NO_ROOT_LOCKED,
        ),
    )?;
    let _ = rustix::thread::clear_ambient_capability_set();
    step(
        "cannot set no_new_privs",
        rustix::thread::set_no_new_privs(true),
    )?;
    step(
        "cannot drop the capabilities",
        rustix::thread::set_capabilities(
            None,
            CapabilitySets {
                effective: CapabilitySet::empty(),
                permitted: CapabilitySet::empty(),
                inheritable: CapabilitySet::empty(),
            },
        ),
    )
}

/// stdin from `/dev/null`; stdout joins stderr, which render reads.
fn stdio() -> Result<(), String> {
    let null = step(
        "cannot open /dev/null",
        rustix::fs::open("/dev/null", rustix::fs::OFlags::RDONLY, Mode::empty()),
    )?;
    step("cannot replace stdin", rustix::stdio::dup2_stdin(&null))?;
    step(
        "cannot join stdout to stderr",
        rustix::stdio::dup2_stdout(rustix::stdio::stderr()),
    )?;
    Ok(())
}

fn exec(spec: &SandboxSpec) -> String {
    let Some(program) = spec.argv.first() else {
        return "cannot run the entrypoint: the image names no entrypoint".to_owned();
    };
    let path_var = spec
        .env
        .iter()
        .find_map(|e| e.strip_prefix("PATH="))
        .unwrap_or(DEFAULT_PATH);
    let resolved = if program.contains('/') {
        program.clone()
    } else {
        match path_var
            .split(':')
            .filter(|dir| !dir.is_empty())
            .map(|dir| format!("{dir}/{program}"))
            .find(|candidate| Path::new(candidate).is_file())
        {
            Some(found) => found,
            None => {
                return format!(
                    "cannot run the entrypoint {program:?}: not found in the image's PATH {path_var:?}"
                );
            }
        }
    };
    let mut command = std::process::Command::new(&resolved);
    command.arg0(program).args(&spec.argv[1..]).env_clear();
    for pair in &spec.env {
        if let Some((name, value)) = pair.split_once('=') {
            command.env(name, value);
        }
    }
    let error = command.exec();
    format!("cannot run the entrypoint {resolved:?}: {error}")
}
