//! The wasmtime engine shared by every function, and the epoch clock that
//! enforces call deadlines.

use std::sync::{Arc, Weak};
use std::thread;

use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use tokio::sync::{Semaphore, SemaphorePermit};

use crate::HostConfig;
use crate::sandbox::{MAX_INSTANCES, MAX_MEMORIES, MAX_TABLES};

/// A wasmtime engine configured for xfn, with its epoch ticker running.
///
/// Cloning is cheap; the ticker thread stops when the last clone is dropped.
#[derive(Clone)]
pub struct HostEngine {
    inner: Arc<Inner>,
}

struct Inner {
    engine: Engine,
    config: HostConfig,
    slots: Semaphore,
}

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
        let slots = Semaphore::new(config.max_concurrent_calls.max(1) as usize);
        let inner = Arc::new(Inner {
            engine,
            config,
            slots,
        });
        spawn_ticker(Arc::downgrade(&inner));
        Ok(HostEngine { inner })
    }

    /// The wasmtime engine.
    pub fn engine(&self) -> &Engine {
        &self.inner.engine
    }

    /// The host's configuration.
    pub fn config(&self) -> &HostConfig {
        &self.inner.config
    }

    /// Waits for one of `function`'s own slots (see
    /// [`HostConfig::calls_per_function`]), then for one of the
    /// `max_concurrent_calls` slots of the pool: at most as many calls hold
    /// an instance as the pool has slots, no function holds more than its
    /// share, and the rest wait their turn instead of failing.
    pub async fn call_slot<'a>(&'a self, function: &'a FunctionSlots) -> CallSlot<'a> {
        // The semaphores are never closed, so these always get permits.
        let own = function.0.acquire().await.ok();
        let pooled = self.inner.slots.acquire().await.ok();
        CallSlot {
            _own: own,
            _pooled: pooled,
            _in_use: crate::metrics::InstanceInUse::start(),
        }
    }

    /// The slots of a new function.
    pub fn function_slots(&self) -> FunctionSlots {
        FunctionSlots(Semaphore::new(
            self.inner.config.calls_per_function() as usize
        ))
    }
}

/// The call slots of one function: its share of the pool.
#[derive(Debug)]
pub struct FunctionSlots(Semaphore);

/// A held call slot: room for one instance, counted in the metrics as in
/// use until it is dropped.
pub struct CallSlot<'a> {
    _own: Option<SemaphorePermit<'a>>,
    _pooled: Option<SemaphorePermit<'a>>,
    _in_use: crate::metrics::InstanceInUse,
}

/// Bytes of each pooled table kept resident between calls.
const TABLE_KEEP_RESIDENT: usize = 2 << 20;

fn wasm_config(config: &HostConfig, pooling: bool) -> Config {
    let mut wasm = Config::new();
    wasm.epoch_interruption(true)
        .wasm_component_model(true)
        .memory_init_cow(true)
        .native_unwind_info(false);
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
            .total_core_instances(calls.saturating_mul(MAX_INSTANCES as u32))
            .total_memories(calls.saturating_mul(MAX_MEMORIES as u32))
            .total_tables(calls.saturating_mul(MAX_TABLES as u32))
            .total_stacks(calls)
            .max_memory_size(config.memory_limit)
            .max_unused_warm_slots(calls.min(16))
            // Reset reused slots in place instead of unmapping them, so the
            // next call doesn't fault its memory back in page by page.
            .linear_memory_keep_resident(config.keep_resident)
            .table_keep_resident(TABLE_KEEP_RESIDENT)
            .pagemap_scan(wasmtime::Enabled::Auto);
        wasm.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    }
    wasm
}

fn spawn_ticker(inner: Weak<Inner>) {
    let Some(tick) = inner.upgrade().map(|i| i.config.epoch_tick) else {
        return;
    };
    // If the thread cannot be spawned, deadlines are not enforced; that is
    // worth a loud warning but not a failure to start.
    let spawned = thread::Builder::new()
        .name("xfn-epoch".into())
        .spawn(move || {
            while let Some(inner) = inner.upgrade() {
                inner.engine.increment_epoch();
                drop(inner);
                thread::sleep(tick);
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot start the epoch thread, call deadlines are not enforced: {e}");
    }
}
