//! Limits and knobs of the wasm host, with their defaults.

use std::time::Duration;

/// How the host runs wasm functions.
#[derive(Debug, Clone)]
pub struct HostConfig {
    /// Wall-clock limit of one call, unless the caller sets a tighter deadline.
    pub call_timeout: Duration,
    /// Most linear memory one call may use, in bytes, summed over its memories.
    pub memory_limit: usize,
    /// How often the epoch ticks; a timeout is noticed within one tick.
    pub epoch_tick: Duration,
    /// Most bytes of a guest's stderr kept for error messages (panics print there).
    pub stderr_capture: usize,
    /// Pre-reserve instance slots in a pooling allocator (faster calls); if
    /// the address space is short, the host falls back to on-demand allocation.
    pub pooling: bool,
    /// How many calls may hold an instance at once (the pool's size).
    pub max_concurrent_calls: u32,
    /// How many of those slots one function may hold at once, so that one
    /// slow or busy function cannot take them all; `None` is half the pool
    /// (at least one). Its further calls wait for one of its own slots.
    pub max_calls_per_function: Option<u32>,
    /// Bytes of a pooled memory that a call wrote and that stay mapped
    /// (reset in place) for the next call instead of being returned to the
    /// kernel and faulted back in page by page; each pool slot may then
    /// hold this much resident after a call, within `resident_budget`.
    ///
    /// Wasmtime finds the pages a call wrote with Linux's `PAGEMAP_SCAN`
    /// and resets only those, so a slot keeps what its calls wrote, up to
    /// this much, and resets it on every call. That needs the fix in
    /// `third_party/wasmtime-pagemap-present.patch`: without it, Linux 6.18
    /// reports a page table's untouched entries as written, and the reset
    /// rewrites all it may keep. With it, a warm patch-and-transform call
    /// faults in no page instead of nine, and costs about half as much
    /// ([`DEFAULT_KEEP_RESIDENT_KIB`]).
    pub keep_resident: usize,
    /// Most bytes the whole pool keeps resident between calls: each memory
    /// slot keeps at most this divided by the number of memory slots (see
    /// [`HostConfig::keep_resident_per_slot`]), so however many slots a
    /// burst used, at most this much is left behind (besides what waits
    /// in a decommit batch, [`HostConfig::max_waiting_regions`]).
    pub resident_budget: usize,
    /// How many pooled memories and tables of finished calls wait to be
    /// given back to the kernel together, in one system call. Giving
    /// memory back flushes the TLB of every core running the host's
    /// threads, an interrupt to each; a batch pays that once. Until its
    /// batch goes, a slot is not reused, and the memory its call wrote
    /// stays resident. Wasmtime keeps one batch per CPU (up to 16), so at
    /// most [`HostConfig::max_waiting_regions`] wait, each within
    /// `memory_limit`, and never more than `max_concurrent_calls` (the
    /// batch is cut to fit). 1 gives each back as its call ends.
    pub decommit_batch: u32,
    /// How a component is compiled when no optimized code for it is at
    /// hand (built into the executable or in the compile cache).
    pub tiering: Tiering,
}

/// How a component with no optimized code at hand is compiled.
///
/// Cranelift, wasmtime's optimizing compiler, takes about 1.5 s of both
/// cores for a component the size of function-patch-and-transform; Winch,
/// its baseline compiler, takes about an eighth of that, for code that
/// runs slower. Both are in wasmtime's first tier of support on x86-64,
/// and their code runs in the same sandbox, with the same limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tiering {
    /// Compile with Cranelift before the first call.
    Optimized,
    /// Compile with Winch (or take its code from the compile cache) and
    /// run that: for a process that makes a few calls and exits, such as
    /// `xfn render`.
    Baseline,
    /// Run Winch's code first, while Cranelift compiles the component in
    /// the background; calls that start after that run Cranelift's code,
    /// which is also cached for the next start. For servers: a function
    /// is ready in a fraction of the time, and fast soon after.
    BaselineFirst,
}

impl HostConfig {
    /// The slots one function may hold at once: `max_calls_per_function`,
    /// else half the pool, never more than the pool nor fewer than one.
    pub fn calls_per_function(&self) -> u32 {
        let pool = self.max_concurrent_calls.max(1);
        self.max_calls_per_function
            .unwrap_or(pool / 2)
            .clamp(1, pool)
    }

    /// Slots kept for functions that hold none: a function's second and
    /// later concurrent calls may use all but these, so that two busy
    /// functions, each within its share, cannot fill the pool between
    /// them. A quarter of the pool (none for pools under four), but never
    /// so many that one function could not fill its share.
    pub fn reserved_slots(&self) -> u32 {
        let pool = self.max_concurrent_calls.max(1);
        (pool / 4).min(pool - self.calls_per_function())
    }

    /// Bytes each pooled memory keeps resident between calls:
    /// `keep_resident`, but no more than the pool's `resident_budget`
    /// shared over all its memory slots (`max_concurrent_calls` times
    /// the most memories a call may have, 4). The pool spreads calls over
    /// per-thread shards, so a burst may leave any of its slots used.
    pub fn keep_resident_per_slot(&self) -> usize {
        let slots = (self.max_concurrent_calls.max(1) as usize)
            .saturating_mul(crate::sandbox::MAX_MEMORIES);
        self.keep_resident.min(self.resident_budget / slots)
    }

    /// Regions given back to the kernel per batch: `decommit_batch`, at
    /// least one, and small enough that what waits in all the batches
    /// together (see [`HostConfig::max_waiting_regions`]) is never more
    /// regions than the pool has call slots. Finished memory waiting to go
    /// back then never exceeds what the calls in flight could hold. A call
    /// that finds no free slot while others wait in a batch makes the pool
    /// give back the batch at once.
    pub fn decommit_batch_size(&self) -> usize {
        self.decommit_batch_size_over(decommit_queues())
    }

    /// The most memories and tables of finished calls that may wait to be
    /// given back at once on this machine: a batch less one in each of
    /// wasmtime's decommit queues, of which it keeps one per available CPU,
    /// up to 16 (its documented bound for `decommit_batch_size`).
    pub fn max_waiting_regions(&self) -> usize {
        let queues = decommit_queues();
        queues * (self.decommit_batch_size_over(queues) - 1)
    }

    /// [`HostConfig::decommit_batch_size`] with `queues` decommit queues.
    fn decommit_batch_size_over(&self, queues: usize) -> usize {
        let slots = self.max_concurrent_calls.max(1) as usize;
        let most = slots / queues.max(1) + 1;
        (self.decommit_batch as usize).clamp(1, most)
    }
}

/// How many decommit queues wasmtime keeps: one per available CPU, up to 16.
fn decommit_queues() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(16)
}

/// The default [`HostConfig::keep_resident`], in KiB. A warm
/// patch-and-transform call of the docs example writes under 128 KiB of its
/// memory, and keeping those pages makes it fault in none: in process it
/// took 24–25 µs against 40–63 µs with none kept, in alternating runs on a
/// 2-core VM. A slot keeps at most this much of what earlier calls wrote,
/// and resets it all on each call (64 pages at most), so a call after a
/// larger one pays a few µs more, not a copy of its memory.
pub const DEFAULT_KEEP_RESIDENT_KIB: usize = 256;

/// The default [`HostConfig::resident_budget`], in MiB.
pub const DEFAULT_RESIDENT_BUDGET_MIB: usize = 512;

/// The default [`HostConfig::decommit_batch`]. Each flush interrupts every
/// core running the host's threads, so a batch pays that once for all it
/// holds; but the call that fills a batch pays for unmapping all of it. A
/// patch-and-transform call leaves a memory and a table, so with 8 every
/// fourth call flushes four calls' memory. With 64, one call in 32 flushes
/// 32 calls' worth: in process, one caller's p99 was 146–214 µs against
/// 71–73 µs with 8 at the same mean, and under 64 streams on a 2-core VM
/// (`make bench`, item 4) server CPU per call was level with 8's in seven
/// alternating pairs (1.53× the Go peer's in both).
pub const DEFAULT_DECOMMIT_BATCH: u32 = 8;

/// The default [`HostConfig::call_timeout`]: 30 s, Crossplane's own
/// default for a function call.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// The default [`HostConfig::memory_limit`], in MiB.
pub const DEFAULT_MEMORY_LIMIT_MIB: usize = 256;

/// The default [`HostConfig::max_concurrent_calls`].
pub const DEFAULT_MAX_CONCURRENT_CALLS: u32 = 128;

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            call_timeout: DEFAULT_CALL_TIMEOUT,
            memory_limit: DEFAULT_MEMORY_LIMIT_MIB << 20,
            epoch_tick: Duration::from_millis(1),
            stderr_capture: 64 << 10,
            pooling: true,
            max_concurrent_calls: DEFAULT_MAX_CONCURRENT_CALLS,
            max_calls_per_function: None,
            keep_resident: DEFAULT_KEEP_RESIDENT_KIB << 10,
            resident_budget: DEFAULT_RESIDENT_BUDGET_MIB << 20,
            decommit_batch: DEFAULT_DECOMMIT_BATCH,
            tiering: Tiering::Optimized,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decommit_batch_is_at_least_one_and_waits_for_no_more_than_the_pool() {
        let config = |decommit_batch, max_concurrent_calls| HostConfig {
            decommit_batch,
            max_concurrent_calls,
            ..HostConfig::default()
        };
        assert_eq!(config(0, 128).decommit_batch_size_over(2), 1);
        assert_eq!(config(64, 128).decommit_batch_size_over(2), 64);
        assert_eq!(config(64, 128).decommit_batch_size_over(4), 33);
        // 16 queues of 128 slots: at most 8 regions wait in each.
        assert_eq!(config(32, 128).decommit_batch_size_over(16), 9);
        assert_eq!(config(8, 3).decommit_batch_size_over(1), 4);
        assert_eq!(config(8, 3).decommit_batch_size_over(2), 2);
        assert_eq!(config(8, 0).decommit_batch_size_over(4), 1);
        for queues in 1..=16 {
            for calls in [1, 3, 8, 128, 4096] {
                let waiting = queues * (config(4096, calls).decommit_batch_size_over(queues) - 1);
                assert!(waiting <= calls as usize, "{queues} queues, {calls} slots");
            }
        }
    }

    #[test]
    fn what_waits_to_be_given_back_is_a_batch_less_one_per_queue() {
        let queues = decommit_queues();
        let config = |decommit_batch| HostConfig {
            decommit_batch,
            ..HostConfig::default()
        };
        assert_eq!(config(1).max_waiting_regions(), 0);
        assert_eq!(config(8).max_waiting_regions(), 7 * queues);
        assert!(HostConfig::default().max_waiting_regions() <= 128);
    }
}
