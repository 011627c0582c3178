//! Lower scheduling priority for threads whose work may wait.

/// Sets the calling thread's nice value to `nice` (Linux keeps nice values
/// per thread): the kernel gives a thread of nice 10 about a tenth of the
/// CPU a thread of nice 0 gets when both want it. If the kernel refuses,
/// the thread keeps its priority, with a warning naming `what` it is.
pub fn lower_thread_priority(nice: i32, what: &str) {
    // SAFETY: setpriority only reads its integer arguments; `who` 0 is the
    // calling thread.
    #[allow(unsafe_code)]
    let set = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) };
    if set != 0 {
        tracing::warn!(
            "cannot lower the priority of {what}: {}",
            std::io::Error::last_os_error()
        );
    }
}
