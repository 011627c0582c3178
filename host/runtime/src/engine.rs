//! The wasmtime engine shared by every function, and the epoch clock that
//! enforces call deadlines.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc::{SyncSender, sync_channel};
use std::sync::{Arc, Weak};
use std::thread::{self, Thread};
use std::time::Duration;

use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Strategy};

use tokio::sync::{Semaphore, SemaphorePermit};

use crate::sandbox::{MAX_INSTANCES, MAX_MEMORIES, MAX_TABLES};
use crate::{HostConfig, Tiering};

/// A wasmtime engine configured for xfn, with its epoch ticker.
///
/// The ticker ticks only while calls hold slots (and for about 100 ms
/// after the last), so an idle host does not wake every tick. Cloning is
/// cheap; the ticker thread stops when the last clone is dropped.
#[derive(Clone)]
pub struct HostEngine {
    inner: Arc<Inner>,
}

struct Inner {
    engine: Engine,
    /// The engine of Winch's code, if [`HostConfig::tiering`] asks for it
    /// and this machine has it (see [`HostEngine::baseline`]).
    baseline: Option<Engine>,
    config: HostConfig,
    /// The pool: one permit per instance slot.
    slots: Semaphore,
    /// The slots a function's second and later concurrent calls may use:
    /// the pool less [`HostConfig::reserved_slots`].
    beyond_first: Semaphore,
    /// The ticker's thread, woken by every call that takes a slot; `None`
    /// if it could not be started.
    ticker: Option<Thread>,
    /// Ticks so far.
    ticks: AtomicU64,
}

/// How often an idle ticker checks whether its engine is gone.
const IDLE_CHECK: Duration = Duration::from_secs(1);

/// Ticks with no call in flight before the ticker parks: about 100 ms, so
/// a server between two calls of a steady load doesn't park and wake the
/// ticker (a futex wake) on every call.
const TICKS_BEFORE_PARKING: u32 = 100;

impl HostEngine {
    /// Builds an engine for `config` and starts its epoch ticker.
    ///
    /// With `config.pooling`, instance slots are reserved up front; where
    /// that fails (little virtual address space), the engine falls back to
    /// allocating each instance on demand, with a warning.
    pub fn new(config: HostConfig) -> Result<HostEngine, crate::Error> {
        let engine = if config.pooling {
            match Engine::new(&wasm_config(&config, true)) {
                Ok(engine) => engine,
                Err(e) => {
                    tracing::warn!(
                        "cannot reserve a pool of instances ({e}); allocating on demand"
                    );
                    Engine::new(&wasm_config(&config, false))
                        .map_err(|e| crate::Error::Engine(e.to_string()))?
                }
            }
        } else {
            Engine::new(&wasm_config(&config, false))
                .map_err(|e| crate::Error::Engine(e.to_string()))?
        };
        let baseline = baseline_engine(&config);
        let pool = config.max_concurrent_calls.max(1);
        let slots = Semaphore::new(pool as usize);
        let beyond_first = Semaphore::new((pool - config.reserved_slots()) as usize);
        let (ticker, start_ticker) = spawn_ticker(config.epoch_tick);
        let inner = Arc::new(Inner {
            engine,
            baseline,
            config,
            slots,
            beyond_first,
            ticker,
            ticks: AtomicU64::new(0),
        });
        // If the ticker thread is gone, so is the receiver: nothing to do.
        let _ = start_ticker.send(Arc::downgrade(&inner));
        Ok(HostEngine { inner })
    }

    /// The wasmtime engine.
    pub fn engine(&self) -> &Engine {
        &self.inner.engine
    }

    /// The engine that runs code of Winch, wasmtime's baseline compiler:
    /// `None` unless [`HostConfig::tiering`] asks for it, or where Winch
    /// does not support this machine.
    ///
    /// Its instances are allocated on demand, not from the pool: they run
    /// only until Cranelift's code is ready, or in a process that makes a
    /// few calls. They take call slots like any other, so the pool's
    /// bounds on calls in flight hold for both engines together.
    pub fn baseline(&self) -> Option<&Engine> {
        self.inner.baseline.as_ref()
    }

    /// The host's configuration.
    pub fn config(&self) -> &HostConfig {
        &self.inner.config
    }

    /// Waits for one of `function`'s own slots (see
    /// [`HostConfig::calls_per_function`]); unless it is the function's
    /// only call in flight, for a slot outside the reserve (see
    /// [`HostConfig::reserved_slots`]); then for one of the
    /// `max_concurrent_calls` slots of the pool. So at most as many calls
    /// hold an instance as the pool has slots, no function holds more than
    /// its share, a function with no call in flight finds a slot even when
    /// busy functions have taken all they may, and the rest wait their turn
    /// instead of failing.
    pub async fn call_slot<'a>(&'a self, function: &'a FunctionSlots) -> CallSlot<'a> {
        // The semaphores are never closed, so these always get permits.
        let own = function.share.acquire().await.ok();
        let active = ActiveCall::start(&function.active);
        let beyond_first = if active.is_first {
            None
        } else {
            self.inner.beyond_first.acquire().await.ok()
        };
        let pooled = self.inner.slots.acquire().await.ok();
        // The ticker may be parked. Woken after the slot is taken, it either
        // is not parked yet (and then won't park, the wake-up being kept) or
        // sees the slot taken when it looks next; when it is not parked,
        // this costs an atomic swap.
        if let Some(ticker) = &self.inner.ticker {
            ticker.unpark();
        }
        CallSlot {
            _own: own,
            _active: active,
            _beyond_first: beyond_first,
            _pooled: pooled,
            _in_use: crate::metrics::InstanceInUse::start(),
        }
    }

    /// The slots of a new function.
    pub fn function_slots(&self) -> FunctionSlots {
        FunctionSlots {
            share: Semaphore::new(self.inner.config.calls_per_function() as usize),
            active: AtomicU32::new(0),
        }
    }
}

/// The call slots of one function: its share of the pool, and how many of
/// its calls hold one.
#[derive(Debug)]
pub struct FunctionSlots {
    share: Semaphore,
    active: AtomicU32,
}

/// One of a function's calls that holds one of its slots.
struct ActiveCall<'a> {
    active: &'a AtomicU32,
    /// Whether no other call of the function held a slot when it started.
    is_first: bool,
}

impl<'a> ActiveCall<'a> {
    fn start(active: &'a AtomicU32) -> ActiveCall<'a> {
        let before = active.fetch_add(1, Ordering::AcqRel);
        ActiveCall {
            active,
            is_first: before == 0,
        }
    }
}

impl Drop for ActiveCall<'_> {
    fn drop(&mut self) {
        self.active.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A held call slot: room for one instance, counted in the metrics as in
/// use until it is dropped.
pub struct CallSlot<'a> {
    _own: Option<SemaphorePermit<'a>>,
    _active: ActiveCall<'a>,
    _beyond_first: Option<SemaphorePermit<'a>>,
    _pooled: Option<SemaphorePermit<'a>>,
    _in_use: crate::metrics::InstanceInUse,
}

impl Inner {
    /// Whether any call holds a slot of the pool.
    fn calls_in_flight(&self) -> bool {
        self.slots.available_permits() < self.config.max_concurrent_calls.max(1) as usize
    }
}

/// Bytes of each pooled table kept resident between calls.
const TABLE_KEEP_RESIDENT: usize = 2 << 20;

pub(crate) fn wasm_config(config: &HostConfig, pooling: bool) -> Config {
    let mut wasm = Config::new();
    wasm.epoch_interruption(true)
        .wasm_component_model(true)
        .memory_init_cow(true)
        .native_unwind_info(false)
        // Compiled code runs where it lies: mapped from the compile cache
        // or from the executable, not copied (see `code_memory`).
        .with_custom_code_memory(Some(crate::code_memory::protection()));
    if pooling {
        // A Rust component holds a few core instances (the program and the
        // WASI adapter) with one memory and a table or two each. A component
        // may have up to the sandbox's per-call maxima, and the pool holds
        // that much for every call slot, so one hostile component cannot
        // starve the calls of others.
        let calls = config.max_concurrent_calls.max(1);
        let mut pool = PoolingAllocationConfig::default();
        pool.total_component_instances(calls)
            .max_core_instances_per_component(MAX_INSTANCES as u32)
            .max_memories_per_component(MAX_MEMORIES as u32)
            .max_tables_per_component(MAX_TABLES as u32)
            // A module may hold every memory or table a call may have
            // (wasmtime's default of one each would refuse at instantiation
            // what `push` and `pull` accept).
            .max_memories_per_module(MAX_MEMORIES as u32)
            .max_tables_per_module(MAX_TABLES as u32)
            .total_core_instances(calls.saturating_mul(MAX_INSTANCES as u32))
            .total_memories(calls.saturating_mul(MAX_MEMORIES as u32))
            .total_tables(calls.saturating_mul(MAX_TABLES as u32))
            .total_stacks(calls)
            .max_memory_size(config.memory_limit)
            .max_unused_warm_slots(calls.min(16))
            // Reset reused slots in place instead of unmapping them, so the
            // next call doesn't fault its memory back in page by page.
            .linear_memory_keep_resident(config.keep_resident_per_slot())
            .table_keep_resident(TABLE_KEEP_RESIDENT)
            .pagemap_scan(wasmtime::Enabled::Auto)
            .decommit_batch_size(config.decommit_batch_size());
        wasm.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    }
    wasm
}

/// The engine of Winch's code for `config`, if its tiering uses one. Where
/// Winch can't make one (it supports x86-64 only), every component is
/// compiled by Cranelift, with a note in the log.
fn baseline_engine(config: &HostConfig) -> Option<Engine> {
    if config.tiering == Tiering::Optimized {
        return None;
    }
    let mut wasm = wasm_config(config, false);
    wasm.strategy(Strategy::Winch);
    match Engine::new(&wasm) {
        Ok(engine) => Some(engine),
        Err(e) => {
            tracing::info!(
                "no baseline compiler on this machine ({e:#}); compiling with Cranelift"
            );
            None
        }
    }
}

/// Starts the ticker thread, which ticks every `tick` once it is sent its
/// engine. The thread's handle exists before the engine, so every call that
/// takes a slot can wake it.
fn spawn_ticker(tick: Duration) -> (Option<Thread>, SyncSender<Weak<Inner>>) {
    let (start, engine) = sync_channel::<Weak<Inner>>(1);
    let spawned = thread::Builder::new()
        .name("xfn-epoch".into())
        .spawn(move || {
            if let Ok(engine) = engine.recv() {
                run_ticker(&engine, tick);
            }
        });
    match spawned {
        Ok(handle) => (Some(handle.thread().clone()), start),
        Err(e) => {
            // Deadlines are then not enforced; that is worth a loud warning
            // but not a failure to start.
            tracing::warn!("cannot start the epoch thread, call deadlines are not enforced: {e}");
            (None, start)
        }
    }
}

/// Ticks while calls hold slots, parks once none has for
/// [`TICKS_BEFORE_PARKING`] ticks, and ends with the engine.
fn run_ticker(engine: &Weak<Inner>, tick: Duration) {
    // Parked from the start: an engine with no calls has no use for ticks.
    let mut idle_ticks = TICKS_BEFORE_PARKING;
    while let Some(inner) = engine.upgrade() {
        if inner.calls_in_flight() {
            idle_ticks = 0;
        } else {
            idle_ticks = idle_ticks.saturating_add(1);
        }
        drop(inner);
        if idle_ticks >= TICKS_BEFORE_PARKING {
            thread::park_timeout(IDLE_CHECK);
            continue;
        }
        // A tick after the wait, so a call that woke the ticker gets a
        // whole tick before its first deadline check.
        thread::sleep(tick);
        let Some(inner) = engine.upgrade() else { break };
        inner.engine.increment_epoch();
        if let Some(baseline) = &inner.baseline {
            baseline.increment_epoch();
        }
        inner.ticks.fetch_add(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use futures_util::FutureExt;

    use super::*;

    /// An engine without a pool, whose call slots are counted as a pool of
    /// `calls`.
    fn engine(calls: u32) -> HostEngine {
        HostEngine::new(HostConfig {
            pooling: false,
            max_concurrent_calls: calls,
            ..HostConfig::default()
        })
        .unwrap()
    }

    fn ticks(engine: &HostEngine) -> u64 {
        engine.inner.ticks.load(Ordering::Relaxed)
    }

    #[test]
    fn the_epoch_ticks_only_while_calls_hold_slots() {
        let engine = engine(4);
        let function = engine.function_slots();
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(ticks(&engine), 0, "an idle engine does not tick");

        let slot = engine.call_slot(&function).now_or_never();
        assert!(slot.is_some());
        let started = std::time::Instant::now();
        while ticks(&engine) < 3 {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the ticker did not wake for a call"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        drop(slot);
        // The ticker goes on for TICKS_BEFORE_PARKING ticks; then it stops.
        let started = std::time::Instant::now();
        let stopped = loop {
            let before = ticks(&engine);
            std::thread::sleep(Duration::from_millis(200));
            if ticks(&engine) == before {
                break before;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the ticker did not stop after the last call"
            );
        };

        // And starts again with the next.
        let _slot = engine.call_slot(&function).now_or_never();
        let started = std::time::Instant::now();
        while ticks(&engine) == stopped {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the ticker did not wake again"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Takes every slot `function` can get without waiting.
    fn take_all<'a>(engine: &'a HostEngine, function: &'a FunctionSlots) -> Vec<CallSlot<'a>> {
        std::iter::from_fn(|| engine.call_slot(function).now_or_never()).collect()
    }

    #[test]
    fn two_busy_functions_leave_slots_for_a_third() {
        // A pool of 16: each function's share is 8, and 4 are kept for
        // functions with no call in flight.
        let engine = engine(16);
        let (a, b, c) = (
            engine.function_slots(),
            engine.function_slots(),
            engine.function_slots(),
        );
        let held_a = take_all(&engine, &a);
        let held_b = take_all(&engine, &b);
        assert_eq!(held_a.len(), 8, "a function gets its whole share");
        // b's first call comes from the reserve; its others share what a
        // left of the 12 unreserved slots.
        assert_eq!(held_b.len(), 6);
        let first_c = engine.call_slot(&c).now_or_never();
        assert!(first_c.is_some(), "a third function waits for no one");
        // But its second call is beyond its first, and must wait.
        assert!(engine.call_slot(&c).now_or_never().is_none());
        drop(held_a);
        assert!(engine.call_slot(&c).now_or_never().is_some());
    }

    #[test]
    fn a_lone_function_still_gets_its_whole_share() {
        let four = engine(4);
        let function = four.function_slots();
        assert_eq!(take_all(&four, &function).len(), 2);
        let small = engine(1);
        let function = small.function_slots();
        assert_eq!(take_all(&small, &function).len(), 1);
        // A share of the whole pool, as a one-function server may set,
        // is not cut by the reserve.
        let whole = HostEngine::new(HostConfig {
            pooling: false,
            max_concurrent_calls: 16,
            max_calls_per_function: Some(16),
            ..HostConfig::default()
        })
        .unwrap();
        let function = whole.function_slots();
        assert_eq!(take_all(&whole, &function).len(), 16);
    }

    #[test]
    fn the_pool_keeps_at_most_its_budget_resident() {
        let config = |calls| HostConfig {
            max_concurrent_calls: calls,
            keep_resident: 16 << 20,
            ..HostConfig::default()
        };
        // 512 MiB over 128 calls' 4 memories each is 1 MiB a memory; with
        // 8 calls, each may keep 16 MiB.
        assert_eq!(config(128).keep_resident_per_slot(), 1 << 20);
        assert_eq!(config(8).keep_resident_per_slot(), 16 << 20);
        assert_eq!(HostConfig::default().keep_resident_per_slot(), 256 << 10);
        assert_eq!(config(128).reserved_slots(), 32);
        let wide_share = HostConfig {
            max_calls_per_function: Some(120),
            ..config(128)
        };
        assert_eq!(wide_share.reserved_slots(), 8);
        assert_eq!(config(3).reserved_slots(), 0);
    }
}
