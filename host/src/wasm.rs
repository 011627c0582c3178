//! Wasm functions: compiled once, pre-instantiated once, and run in a fresh
//! sandbox for every call.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Store, Trap, UpdateDeadline};

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
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)
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
    /// Runs one call in a fresh sandbox.
    ///
    /// The guest runs on the calling task, on a wasmtime fiber that yields
    /// to the executor at every epoch tick, so a long call neither blocks a
    /// worker thread nor needs one of its own. It is interrupted after
    /// `timeout` (or the host default), and its memory is capped by the
    /// host's limit.
    pub async fn run(
        &self,
        request: &RunFunctionRequest,
        timeout: Option<Duration>,
    ) -> Result<RunFunctionResponse, CallError> {
        let _slot = self.engine.call_slot().await;
        let config = self.engine.config();
        let limit = timeout.map_or(config.call_timeout, |t| t.min(config.call_timeout));
        let mut store = self.store(limit);
        let call = async {
            let instance = self.pre.instantiate_async(&mut store).await?;
            instance.call_run_function(&mut store, request).await
        };
        // The epoch deadline stops a guest that computes; this also stops
        // one that waits in a host call.
        let Ok(outcome) = tokio::time::timeout(limit, call).await else {
            return Err(CallError::Timeout {
                function: self.name.to_string(),
                limit,
            });
        };
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

    /// [`WasmFunction::run`] for callers outside async code: tests,
    /// benchmarks and tools. Don't call it from an async task.
    pub fn call_blocking(
        &self,
        request: &RunFunctionRequest,
        timeout: Option<Duration>,
    ) -> Result<RunFunctionResponse, CallError> {
        block_on(self.run(request, timeout))
    }

    /// Instantiates the function in a fresh sandbox and tears it down
    /// without calling it. This proves it links and starts, and warms its
    /// slot in the instance pool; `xfn serve` probes each function it
    /// loads, so one that cannot start is reported then, not on a call.
    /// Like [`WasmFunction::call_blocking`], it blocks the thread.
    pub fn probe(&self) -> Result<(), CallError> {
        block_on(async {
            let _slot = self.engine.call_slot().await;
            let limit = self.engine.config().call_timeout;
            let mut store = self.store(limit);
            match self.pre.instantiate_async(&mut store).await {
                Ok(_) => Ok(()),
                Err(error) => Err(self.classify(error, &store, limit)),
            }
        })
    }

    /// A store with a fresh sandbox, its memory capped, that yields at
    /// every epoch tick and traps once `limit` has passed.
    fn store(&self, limit: Duration) -> Store<Sandbox> {
        let config = self.engine.config();
        let sandbox = Sandbox::new(
            self.name.clone(),
            config.memory_limit,
            config.stderr_capture,
        );
        let mut store = Store::new(self.engine.engine(), sandbox);
        store.limiter(|s| &mut s.limits);
        let deadline = Instant::now() + limit;
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(move |_| {
            Ok(if Instant::now() >= deadline {
                UpdateDeadline::Interrupt
            } else {
                UpdateDeadline::Yield(1)
            })
        });
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

/// Runs `future` to completion on this thread: on the current tokio
/// runtime if there is one (from a blocking thread), else on a
/// current-thread runtime kept for the thread.
fn block_on<F: Future>(future: F) -> F::Output {
    thread_local! {
        static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a current-thread tokio runtime with only a timer can be built");
    }
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(|| handle.block_on(future))
        }
        Ok(handle) => handle.block_on(future),
        Err(_) => RUNTIME.with(|runtime| runtime.block_on(future)),
    }
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
        self.run(request, timeout).await
    }
}
