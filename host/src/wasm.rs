//! Wasm functions: compiled once, pre-instantiated once, and run in a fresh
//! sandbox for every call.

use std::sync::Arc;
use std::time::Duration;

use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Store, Trap};

use crate::compile_cache::CompileCache;
use crate::engine::HostEngine;
use crate::function::Function;
use crate::protocol::{FunctionPre, RunFunctionRequest, RunFunctionResponse};
use crate::sandbox::Sandbox;
use crate::validate::check_response;
use crate::{CallError, Error};

/// Loads wasm components into callable functions. One per process: it holds
/// the engine, the linker with xfn's imports, and the compile cache.
#[derive(Clone)]
pub struct WasmRuntime {
    engine: HostEngine,
    linker: Arc<Linker<Sandbox>>,
    cache: Option<CompileCache>,
}

impl WasmRuntime {
    /// A runtime on `engine`, caching compiled components in `cache` if given.
    pub fn new(engine: HostEngine, cache: Option<CompileCache>) -> Result<WasmRuntime, Error> {
        let mut linker = Linker::<Sandbox>::new(engine.engine());
        // WASI is linked so that ordinary Rust components instantiate, but the
        // sandbox grants nothing through it (see `sandbox`).
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)
            .map_err(|e| Error::Engine(format!("cannot link WASI: {e}")))?;
        crate::protocol::Function::add_to_linker::<_, HasSelf<Sandbox>>(&mut linker, |s| s)
            .map_err(|e| Error::Engine(format!("cannot link xfn's imports: {e}")))?;
        Ok(WasmRuntime {
            engine,
            linker: Arc::new(linker),
            cache,
        })
    }

    /// The engine this runtime compiles for.
    pub fn engine(&self) -> &HostEngine {
        &self.engine
    }

    /// Compiles (or loads from the cache) the component in `bytes` and
    /// pre-instantiates it as function `name`.
    pub fn load(&self, name: &str, bytes: &[u8]) -> Result<WasmFunction, Error> {
        let load_error = |reason: String| Error::Load {
            function: name.to_owned(),
            reason,
        };
        let component = match &self.cache {
            Some(cache) => cache
                .load_or_compile(self.engine.engine(), bytes)
                .map_err(load_error)?,
            None => Component::new(self.engine.engine(), bytes)
                .map_err(|e| load_error(format!("cannot compile component: {e:#}")))?,
        };
        self.load_component(name, &component)
    }

    /// Pre-instantiates an already compiled component as function `name`.
    pub fn load_component(&self, name: &str, component: &Component) -> Result<WasmFunction, Error> {
        let load_error = |reason: String| Error::Load {
            function: name.to_owned(),
            reason,
        };
        let instance_pre = self
            .linker
            .instantiate_pre(component)
            .map_err(|e| load_error(format!("cannot link component: {e:#}")))?;
        let pre = FunctionPre::new(instance_pre).map_err(|e| {
            load_error(format!(
                "component does not export xfn's function world: {e:#}"
            ))
        })?;
        Ok(WasmFunction {
            name: Arc::from(name),
            engine: self.engine.clone(),
            pre,
        })
    }
}

/// A wasm function ready to be called. Cheap to share: calls don't block
/// each other, and each gets its own instance.
pub struct WasmFunction {
    name: Arc<str>,
    engine: HostEngine,
    pre: FunctionPre<Sandbox>,
}

impl WasmFunction {
    /// Runs one call in a fresh sandbox, on the current thread.
    ///
    /// The call is interrupted after `timeout` (or the host default), and
    /// its memory is capped by the host's limit.
    pub fn call_blocking(
        &self,
        request: &RunFunctionRequest,
        timeout: Option<Duration>,
    ) -> Result<RunFunctionResponse, CallError> {
        let _slot = self.engine.call_slot();
        let config = self.engine.config();
        let limit = timeout.map_or(config.call_timeout, |t| t.min(config.call_timeout));
        let mut store = self.store(limit);
        let outcome = self
            .pre
            .instantiate(&mut store)
            .and_then(|instance| instance.call_run_function(&mut store, request));
        match outcome {
            Ok(Ok(response)) => {
                check_response(&response).map_err(|reason| CallError::Malformed {
                    function: self.name.to_string(),
                    reason,
                })?;
                Ok(response)
            }
            Ok(Err(message)) => Err(CallError::Failed {
                function: self.name.to_string(),
                message,
            }),
            Err(error) => Err(self.classify(error, &store, limit)),
        }
    }

    /// Instantiates the function in a fresh sandbox and tears it down
    /// without calling it. This proves it links and starts, and warms its
    /// slot in the instance pool; `xfn serve` probes each function it
    /// loads, so one that cannot start is reported then, not on a call.
    pub fn probe(&self) -> Result<(), CallError> {
        let _slot = self.engine.call_slot();
        let limit = self.engine.config().call_timeout;
        let mut store = self.store(limit);
        match self.pre.instantiate(&mut store) {
            Ok(_) => Ok(()),
            Err(error) => Err(self.classify(error, &store, limit)),
        }
    }

    /// A store with a fresh sandbox, its memory capped and its deadline
    /// `limit` from now.
    fn store(&self, limit: Duration) -> Store<Sandbox> {
        let config = self.engine.config();
        let sandbox = Sandbox::new(
            self.name.clone(),
            config.memory_limit,
            config.stderr_capture,
        );
        let mut store = Store::new(self.engine.engine(), sandbox);
        store.limiter(|s| &mut s.limits);
        store.set_epoch_deadline(ticks(limit, config.epoch_tick));
        store.epoch_deadline_trap();
        store
    }

    fn classify(
        &self,
        error: wasmtime::Error,
        store: &Store<Sandbox>,
        limit: Duration,
    ) -> CallError {
        let function = self.name.to_string();
        if let Some(requested) = store.data().limits.exceeded() {
            return CallError::MemoryLimit {
                function,
                limit: store.data().limits.limit(),
                requested,
            };
        }
        if error.downcast_ref::<Trap>() == Some(&Trap::Interrupt) {
            return CallError::Timeout { function, limit };
        }
        let stderr = store.data().stderr();
        let trap = error
            .downcast_ref::<Trap>()
            .map_or_else(|| format!("{error:#}"), |t| t.to_string());
        let message = if stderr.is_empty() {
            trap
        } else {
            format!("{trap}; the function printed: {stderr}")
        };
        CallError::Trap { function, message }
    }
}

fn ticks(limit: Duration, tick: Duration) -> u64 {
    let tick = tick.as_nanos().max(1);
    u64::try_from(limit.as_nanos().div_ceil(tick))
        .unwrap_or(u64::MAX)
        .max(1)
}

#[async_trait::async_trait]
impl Function for WasmFunction {
    fn name(&self) -> &str {
        &self.name
    }

    async fn call(
        &self,
        request: &RunFunctionRequest,
        timeout: Option<Duration>,
    ) -> Result<RunFunctionResponse, CallError> {
        // Wasm runs synchronously. On a multi-threaded runtime, tell tokio so
        // it moves other tasks off this worker while the guest runs.
        let multi_thread = tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
        if multi_thread {
            tokio::task::block_in_place(|| self.call_blocking(request, timeout))
        } else {
            self.call_blocking(request, timeout)
        }
    }
}
