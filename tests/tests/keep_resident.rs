//! A pooled memory keeps the pages its calls wrote, reset in place, so a
//! warm call faults in no page. That works only with the fix
//! `third_party/wasmtime-pagemap-present.patch` carries into wasmtime, so
//! this test fails without it. That the reset keeps calls apart (no call
//! sees an earlier call's memory, even from swap) is checked in
//! `sandbox_isolation.rs`.

use std::os::fd::AsRawFd;

use xfn_runtime::HostConfig;
use xfn_tests::patch_and_transform::docs_request;
use xfn_tests::{load, minor_faults_per_run, runtime};

/// Whether this kernel has `PAGEMAP_SCAN` (Linux 6.7), which wasmtime's
/// in-place reset needs to find the written pages; without it, wasmtime
/// rewrites the first pages of the memory whatever the call wrote.
fn kernel_scans_page_maps() -> bool {
    /// `struct pm_scan_arg` of `linux/fs.h`.
    #[repr(C)]
    #[derive(Default)]
    struct PmScanArg {
        size: u64,
        flags: u64,
        start: u64,
        end: u64,
        walk_end: u64,
        vec: u64,
        vec_len: u64,
        max_pages: u64,
        category_inverted: u64,
        category_mask: u64,
        category_anyof_mask: u64,
        return_mask: u64,
    }
    // _IOWR('f', 16, struct pm_scan_arg)
    const PAGEMAP_SCAN: libc::c_ulong =
        (3 << 30) | ((size_of::<PmScanArg>() as libc::c_ulong) << 16) | (0x66 << 8) | 16;
    let Ok(pagemap) = std::fs::File::open("/proc/self/pagemap") else {
        return false;
    };
    let mut arg = PmScanArg {
        size: size_of::<PmScanArg>() as u64,
        ..PmScanArg::default()
    };
    // SAFETY: an empty range, with no output vector to write.
    let rc = unsafe { libc::ioctl(pagemap.as_raw_fd(), PAGEMAP_SCAN, &mut arg) };
    rc >= 0
}

#[test]
fn a_warm_call_faults_in_no_page_of_its_memory() {
    if !kernel_scans_page_maps() {
        eprintln!(
            "skipped: this kernel has no PAGEMAP_SCAN, so wasmtime cannot keep only the written pages"
        );
        return;
    }
    let warm_faults_per_call = |config: HostConfig| {
        let rt = runtime(config);
        let f = load(
            &rt,
            "function-patch-and-transform",
            "function_patch_and_transform",
        );
        let request = xfn_tests::convert::request(docs_request());
        // One caller, so every call takes the same pool slot; the first
        // calls fill it.
        for _ in 0..20 {
            f.call_blocking(&request, None).expect("warm-up call");
        }
        minor_faults_per_run(200, || {
            f.call_blocking(&request, None).expect("call");
        })
    };

    let kept = warm_faults_per_call(HostConfig::default());
    let none_kept = warm_faults_per_call(HostConfig {
        keep_resident: 0,
        ..HostConfig::default()
    });
    // Giving every page back costs a warm P&T call about nine faults; the
    // host's own allocations may fault now and then.
    assert!(
        none_kept >= 3.0,
        "with nothing kept, a warm call faulted in only {none_kept:.2} pages: this test no longer tells the two apart"
    );
    assert!(
        kept < 1.0,
        "with the default {} KiB kept, a warm call still faulted in {kept:.2} pages (against {none_kept:.2} with none): \
         is wasmtime built without third_party/wasmtime-pagemap-present.patch?",
        HostConfig::default().keep_resident >> 10
    );
}
