//! The sandbox's seccomp filter: the system calls Docker's default profile
//! denies that could matter to a process without capabilities, denied
//! with `EPERM`; `clone3` answers `ENOSYS` (its flags can't be inspected),
//! so C libraries and Go fall back to `clone`, whose namespace flags are
//! denied.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// System calls denied outright.
const DENIED: &[i64] = &[
    libc::SYS_acct,
    libc::SYS_add_key,
    libc::SYS_bpf,
    libc::SYS_clock_adjtime,
    libc::SYS_clock_settime,
    libc::SYS_delete_module,
    libc::SYS_finit_module,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fsopen,
    libc::SYS_fspick,
    libc::SYS_init_module,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_io_uring_setup,
    libc::SYS_kexec_file_load,
    libc::SYS_kexec_load,
    libc::SYS_keyctl,
    libc::SYS_mount,
    libc::SYS_move_mount,
    libc::SYS_name_to_handle_at,
    libc::SYS_open_by_handle_at,
    libc::SYS_open_tree,
    libc::SYS_perf_event_open,
    libc::SYS_pivot_root,
    libc::SYS_quotactl,
    libc::SYS_reboot,
    libc::SYS_request_key,
    libc::SYS_setns,
    libc::SYS_swapoff,
    libc::SYS_swapon,
    libc::SYS_umount2,
    libc::SYS_unshare,
    libc::SYS_userfaultfd,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_adjtimex,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_settimeofday,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_chroot,
];

/// `clone` flags that make namespaces.
const NAMESPACE_FLAGS: [i32; 7] = [
    libc::CLONE_NEWNS,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWCGROUP,
];

fn target() -> Option<TargetArch> {
    TargetArch::try_from(std::env::consts::ARCH).ok()
}

fn program(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    errno: i32,
    arch: TargetArch,
) -> Result<BpfProgram, String> {
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno as u32),
        arch,
    )
    .map_err(|e| e.to_string())?;
    BpfProgram::try_from(filter).map_err(|e| e.to_string())
}

/// Installs the filter on the calling (single) thread; `no_new_privs`
/// must be set. `Ok(false)` on an architecture the filter doesn't know.
pub fn install() -> Result<bool, String> {
    let Some(arch) = target() else {
        return Ok(false);
    };
    let mut denied: BTreeMap<i64, Vec<SeccompRule>> =
        DENIED.iter().map(|call| (*call, Vec::new())).collect();
    let namespaces = NAMESPACE_FLAGS
        .iter()
        .map(|flag| {
            let flag = *flag as u64;
            // The flags are clone's first argument on every architecture
            // the filter knows.
            SeccompCondition::new(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(flag),
                flag,
            )
            .and_then(|condition| SeccompRule::new(vec![condition]))
            .map_err(|e| e.to_string())
        })
        .collect::<Result<Vec<_>, _>>()?;
    denied.insert(libc::SYS_clone, namespaces);
    let deny = program(denied, libc::EPERM, arch)?;
    let no_clone3 = program(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        libc::ENOSYS,
        arch,
    )?;
    seccompiler::apply_filter(&deny).map_err(|e| e.to_string())?;
    seccompiler::apply_filter(&no_clone3).map_err(|e| e.to_string())?;
    Ok(true)
}
