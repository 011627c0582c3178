//! No call can read what an earlier call left in its memory, even when the
//! kernel swapped that memory out while the call was running.
//!
//! The pooling allocator resets a slot's memory in place for the next call,
//! finding the pages to reset with the kernel's `PAGEMAP_SCAN`. A dirty page
//! in swap is not "present"; wasmtime 48 skipped such pages, so the next
//! instance in the slot read the previous call's data (issue 12, item 2).
//!
//! The test enables swap if the machine has none (it needs root for that),
//! has a guest write a seeded pattern, pushes every writable page of this
//! process to swap while the guest is still running (from the guest's log
//! call), then has a second call in the same pool slot look for the pattern
//! in all of its memory.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};
use xfn_runtime::HostConfig;
use xfn_runtime::protocol::RunFunctionRequest;
use xfn_tests::{load, runtime};

/// What the guest logs when its secret is written.
const PAGE_OUT: &str = "xfn.test/page-out";

/// Bytes of this process in swap after the last page-out.
static SWAPPED: AtomicU64 = AtomicU64::new(0);

/// Pages out every private writable mapping of this process when the
/// guest logs [`PAGE_OUT`].
struct PageOutOnLog;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for PageOutOnLog {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        struct Message(bool);
        impl Visit for Message {
            fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
                if field.name() == "message" && format!("{value:?}") == PAGE_OUT {
                    self.0 = true;
                }
            }
        }
        let mut message = Message(false);
        event.record(&mut message);
        if message.0 {
            page_out_process();
            SWAPPED.store(swapped_bytes(), Ordering::SeqCst);
        }
    }
}

/// Asks the kernel to reclaim (swap out) every private writable mapping.
fn page_out_process() {
    let maps = std::fs::read_to_string("/proc/self/maps").expect("read /proc/self/maps");
    for line in maps.lines() {
        let mut fields = line.split_whitespace();
        let (Some(range), Some(perms)) = (fields.next(), fields.next()) else {
            continue;
        };
        if !perms.starts_with("rw") || !perms.ends_with('p') {
            continue;
        }
        let Some((start, end)) = range.split_once('-') else {
            continue;
        };
        let (Ok(start), Ok(end)) = (
            usize::from_str_radix(start, 16),
            usize::from_str_radix(end, 16),
        ) else {
            continue;
        };
        // SAFETY: MADV_PAGEOUT is advisory: it never changes what the
        // memory holds, only where it lives; errors are ignored.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_PAGEOUT);
        }
    }
}

fn swapped_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmSwap:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024)
}

/// Swap this test turned on, turned off again when dropped.
struct SwapFile(Option<PathBuf>);

impl SwapFile {
    /// Makes sure the machine has swap, turning on a swap file if needed.
    fn ensure() -> Result<SwapFile, String> {
        let swaps = std::fs::read_to_string("/proc/swaps").map_err(|e| e.to_string())?;
        if swaps.lines().count() > 1 {
            return Ok(SwapFile(None));
        }
        let path = std::env::temp_dir().join(format!("xfn-test-swap-{}", std::process::id()));
        let run = |cmd: &mut Command| -> Result<(), String> {
            let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
            if out.status.success() {
                Ok(())
            } else {
                Err(format!(
                    "{cmd:?}: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ))
            }
        };
        let made = run(Command::new("dd")
            .args(["if=/dev/zero", "bs=1M", "count=512", "status=none"])
            .arg(format!("of={}", path.display())))
        .and_then(|()| run(Command::new("chmod").arg("600").arg(&path)))
        .and_then(|()| run(Command::new("mkswap").arg(&path)))
        .and_then(|()| run(Command::new("swapon").arg(&path)));
        match made {
            Ok(()) => Ok(SwapFile(Some(path))),
            Err(e) => {
                let _ = std::fs::remove_file(&path);
                Err(e)
            }
        }
    }
}

impl Drop for SwapFile {
    fn drop(&mut self) {
        if let Some(path) = &self.0 {
            let _ = Command::new("swapoff").arg(path).status();
            let _ = std::fs::remove_file(path);
        }
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn call(f: &xfn_runtime::WasmFunction, input: Value) -> u64 {
    let request = RunFunctionRequest {
        input: Some(input.to_string()),
        ..RunFunctionRequest::default()
    };
    let response = f.call_blocking(&request, None).expect("call");
    let context: Value =
        serde_json::from_str(response.context.as_deref().expect("context")).expect("json");
    context["xfn.test/found"].as_u64().expect("found count")
}

#[test]
fn a_call_never_reads_an_earlier_calls_memory_even_from_swap() {
    let swap = match SwapFile::ensure() {
        Ok(swap) => swap,
        Err(e) if !is_root() => {
            eprintln!("skipped: this test needs swap, and only root can turn it on ({e})");
            return;
        }
        Err(e) => panic!("cannot turn on swap for the test: {e}"),
    };
    let subscriber = tracing_subscriber::registry().with(PageOutOnLog);
    let _guard = tracing::subscriber::set_default(subscriber);

    // One slot: every call reuses the same pooled memory, reset in place
    // (kept resident) rather than returned to the kernel, which is the
    // path that must handle pages in swap.
    let rt = runtime(HostConfig {
        max_concurrent_calls: 1,
        keep_resident: 16 << 20,
        ..HostConfig::default()
    });
    let f = load(&rt, "scripted", "xfn_test_scripted");
    let seed = 0x5eed_0fca_11ed_u64;
    for round in 0..3 {
        let written = call(&f, json!({"secretMib": 4, "seed": seed}));
        // 4 MiB is 1024 pattern pages; the guest sees them all.
        assert!(written >= 1024, "round {round}: wrote only {written} pages");
        let swapped = SWAPPED.load(Ordering::SeqCst);
        assert!(
            swapped >= 4 << 20,
            "round {round}: the page-out moved only {swapped} bytes to swap"
        );
        let leaked = call(&f, json!({"scanMib": 8, "seed": seed}));
        assert_eq!(
            leaked, 0,
            "round {round}: a call read {leaked} pages of the previous call's memory"
        );
    }
    drop(swap);
}
