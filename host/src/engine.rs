//! The wasmtime engine shared by every function, and the epoch clock that
//! enforces call deadlines.

use std::sync::{Arc, Weak};
use std::thread;

use wasmtime::{Config, Engine};

use crate::HostConfig;

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
}

impl HostEngine {
    /// Builds an engine for `config` and starts its epoch ticker.
    pub fn new(config: HostConfig) -> Result<HostEngine, crate::Error> {
        let mut wasm = Config::new();
        wasm.epoch_interruption(true)
            .wasm_component_model(true)
            .memory_init_cow(true)
            .native_unwind_info(false);
        let engine = Engine::new(&wasm).map_err(|e| crate::Error::Engine(e.to_string()))?;
        let inner = Arc::new(Inner { engine, config });
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
