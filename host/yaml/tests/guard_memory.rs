//! The guard refuses a text of millions of tiny nodes without loading it:
//! the attack round's `package.yaml` bomb (64 MiB of one-letter flow-list
//! items) cost 1.6 GB before any limit applied.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting the bytes live and their peak.
struct Counting;

// A global allocator is an unsafe trait: this one only forwards to the
// system's and counts.

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        // SAFETY: the caller's contract for `alloc` is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` was allocated by `System` with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn a_flow_list_bomb_is_refused_in_bounded_memory() {
    let mut text = String::with_capacity(64 << 20);
    text.push_str("items: [");
    while text.len() < (64 << 20) - 4 {
        text.push_str("a,");
    }
    text.push_str("a]\n");
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let started = std::time::Instant::now();
    let refusal = xfn_yaml::check(&text).expect_err("32 million nodes are refused");
    let elapsed = started.elapsed();
    let extra = PEAK.load(Ordering::Relaxed) - before;
    assert_eq!(
        refusal,
        xfn_yaml::Refusal::TooManyNodes {
            limit: xfn_yaml::guard::MAX_EVENTS
        }
    );
    // The count streams: only the parser's buffers are live, whatever the
    // text's length.
    assert!(
        extra < 1 << 20,
        "the guard held {extra} bytes while refusing a 64 MiB text"
    );
    assert!(
        elapsed < std::time::Duration::from_secs(20),
        "refusing took {elapsed:?}"
    );
}

#[test]
fn a_text_within_the_bounds_loads() {
    // 2 MiB of a realistic shape: well within the node bound.
    let mut text = String::from("items:\n");
    while text.len() < (2 << 20) {
        text.push_str("- name: an-item\n  labels: {app: x, tier: web}\n  size: 12\n");
    }
    xfn_yaml::check(&text).expect("a large ordinary document passes");
}
