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
    /// (zeroed in place) for the next call instead of being returned to the
    /// kernel and faulted back in page by page. Bigger makes large requests
    /// cost in proportion to their size; each pool slot may then hold this
    /// much resident after a large call.
    pub keep_resident: usize,
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
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            call_timeout: Duration::from_secs(30),
            memory_limit: 256 << 20,
            epoch_tick: Duration::from_millis(1),
            stderr_capture: 64 << 10,
            pooling: true,
            max_concurrent_calls: 128,
            max_calls_per_function: None,
            keep_resident: 16 << 20,
        }
    }
}
