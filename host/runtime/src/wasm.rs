//! Wasm functions: compiled once, pre-instantiated once, and run in a fresh
//! sandbox for every call.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use wasmtime::component::{Component, HasSelf, Linker, TypedFunc};
use wasmtime::{Engine, Store, Trap, UpdateDeadline};

use crate::compile_cache::CompileCache;
use crate::engine::{FunctionSlots, HostEngine};
use crate::function::Function;
use crate::precompiled::Precompiled;
use crate::protocol::{RunFunctionRequest, RunFunctionResponse};
use crate::response_check::check_response;
use crate::sandbox::Sandbox;
use crate::text::{self, MAX_GUEST_TEXT};
use crate::tiering::{self, Optimizer, RUN_FUNCTION, Tier, Tiered};
use crate::{CallError, Error, Tiering};

/// The signature of `run-function`.
type RunFunction<'a> = TypedFunc<(&'a RunFunctionRequest,), (Result<RunFunctionResponse, String>,)>;

/// Loads wasm components into callable functions. One per process: it holds
/// the engine, the linker with xfn's imports, and the compile cache.
#[derive(Clone)]
pub struct WasmRuntime {
    engine: HostEngine,
    linker: Arc<Linker<Sandbox>>,
    /// The linker of the baseline engine, if the host has one (see
    /// [`HostEngine::baseline`]).
    baseline_linker: Option<Arc<Linker<Sandbox>>>,
    /// What compiles optimized code in the background, with
    /// [`Tiering::BaselineFirst`].
    optimizer: Option<Optimizer>,
    cache: Option<CompileCache>,
    /// Compiled components that came with the binary, tried before the
    /// cache (see [`crate::precompiled`]).
    precompiled: Option<Arc<Precompiled>>,
    /// The components loaded and still in use, by the BLAKE3 hash of their
    /// bytes: functions with the same component share one compiled copy.
    loaded: Arc<Mutex<HashMap<blake3::Hash, LoadedEntry>>>,
}

/// One component's entry in [`WasmRuntime`]'s table: what its functions
/// share, while any is alive. Its lock is held while it loads.
type LoadedEntry = Arc<Mutex<Weak<Tiered>>>;

impl WasmRuntime {
    /// A runtime on `engine`, caching compiled components in `cache` if given.
    pub fn new(engine: HostEngine, cache: Option<CompileCache>) -> Result<WasmRuntime, Error> {
        let linker = Arc::new(linker_of(engine.engine())?);
        let baseline_linker = match engine.baseline() {
            Some(baseline) => Some(Arc::new(linker_of(baseline)?)),
            None => None,
        };
        let optimizer = match (&baseline_linker, engine.config().tiering) {
            (Some(_), Tiering::BaselineFirst) => Optimizer::start(linker.clone(), cache.clone()),
            _ => None,
        };
        Ok(WasmRuntime {
            engine,
            linker,
            baseline_linker,
            optimizer,
            cache,
            precompiled: None,
            loaded: Arc::default(),
        })
    }

    /// The same runtime, loading a component from `precompiled` when it
    /// holds the component's compiled form and this engine accepts it,
    /// before the compile cache. `precompiled` must be this executable's
    /// own (see [`crate::precompiled`]): its artifacts are trusted.
    pub fn with_precompiled(mut self, precompiled: Option<Arc<Precompiled>>) -> WasmRuntime {
        self.precompiled = precompiled;
        self
    }

    /// The precompiled form of the component whose hash is `hash`, if the
    /// binary carries one this engine accepts.
    fn precompiled_component(&self, hash: &blake3::Hash) -> Option<Component> {
        let artifact = match self.precompiled.as_ref()?.artifact(hash)? {
            Ok(artifact) => artifact,
            Err(e) => {
                tracing::warn!("{e}; compiling the component instead");
                return None;
            }
        };
        // SAFETY: the artifact is this executable's own section, which
        // `xfn precompile-builtins` wrote with wasmtime's
        // `precompile_component`, mapped for the rest of the process and
        // never written; wasmtime itself refuses an artifact of another
        // version, configuration or CPU.
        #[allow(unsafe_code)]
        let deserialized = unsafe {
            Component::deserialize_raw(
                self.engine.engine(),
                std::ptr::NonNull::from(artifact.bytes()),
            )
        };
        match deserialized {
            Ok(component) => {
                // The component holds the mapping until wasmtime drops its
                // code.
                artifact.hand_over();
                tracing::debug!("loaded the precompiled component {hash}");
                Some(component)
            }
            Err(e) => {
                tracing::debug!(
                    "the precompiled component {hash} does not suit this engine ({e:#}); compiling it"
                );
                None
            }
        }
    }

    /// The engine this runtime compiles for.
    pub fn engine(&self) -> &HostEngine {
        &self.engine
    }

    /// Compiles (or loads from the cache) the component in `bytes` and
    /// pre-instantiates it as function `name`. A component already loaded
    /// for another function that is still in use is shared, not compiled
    /// or loaded again: a host serving one component under many names
    /// holds one copy of its code.
    pub fn load(&self, name: &str, bytes: &[u8]) -> Result<WasmFunction, Error> {
        let load_error = |reason: String| Error::Load {
            function: name.to_owned(),
            reason,
        };
        // A built-in of this executable that it carries precompiled is
        // known by address, and was checked when it was precompiled.
        let builtin = self
            .precompiled
            .as_ref()
            .and_then(|p| p.builtin_hash(bytes));
        let hash = match builtin {
            Some(hash) => hash,
            None => {
                // Reading the component's outline is cheap, and refuses what
                // the sandbox would not run before any compiling, with a
                // clear reason.
                crate::local_module::check_component(bytes).map_err(load_error)?;
                blake3::hash(bytes)
            }
        };
        let entry = self.loaded_entry(hash);
        // Loads of the same component wait for one another here; loads of
        // different ones go on in parallel.
        let mut shared = entry.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(linked) = shared.upgrade() {
            return Ok(self.function(name, linked));
        }
        let (component, linker, tier) = match self.precompiled_component(&hash) {
            Some(component) => (component, &self.linker, Tier::Optimized),
            None => self.compile(bytes, &hash).map_err(load_error)?,
        };
        let linked = tiering::link(linker, &component, tier).map_err(load_error)?;
        let tiered = Tiered::new(linked);
        if let (Tier::Baseline, Some(optimizer)) = (tier, &self.optimizer) {
            optimizer.optimize(name, bytes, hash, &tiered);
        }
        *shared = Arc::downgrade(&tiered);
        Ok(self.function(name, tiered))
    }

    /// The code of `bytes`, whose hash is `hash`, as [`HostConfig::tiering`]
    /// says: Cranelift's if the cache has it, else Winch's if the cache has
    /// it (where the host has a baseline engine); else compiled by Winch,
    /// or by Cranelift where there is no baseline engine or Winch refuses
    /// the component. Returns the code, the linker of its engine and its
    /// tier. A load counts one compile-cache lookup in the metrics.
    ///
    /// [`HostConfig::tiering`]: crate::HostConfig::tiering
    fn compile(
        &self,
        bytes: &[u8],
        hash: &blake3::Hash,
    ) -> Result<(Component, &Arc<Linker<Sandbox>>, Tier), String> {
        // The tiers this host has, best code first.
        let optimized = (self.engine.engine(), &self.linker, Tier::Optimized);
        let baseline = self.engine.baseline().zip(self.baseline_linker.as_ref());
        let tiers: Vec<_> = std::iter::once(optimized)
            .chain(baseline.map(|(engine, linker)| (engine, linker, Tier::Baseline)))
            .collect();
        if let Some(cache) = &self.cache {
            for &(engine, linker, tier) in &tiers {
                if let Some(component) = cache.load_hashed(engine, hash)? {
                    crate::metrics::record_compile_cache(true);
                    return Ok((component, linker, tier));
                }
            }
            crate::metrics::record_compile_cache(false);
        }
        // Compiling: the quickest compiler first.
        let mut refused = String::new();
        for &(engine, linker, tier) in tiers.iter().rev() {
            match tiering::compile(engine, self.cache.as_ref(), bytes, hash) {
                Ok(component) => return Ok((component, linker, tier)),
                Err(e) => {
                    tracing::debug!("the {tier:?} compiler refused the component: {e}");
                    refused = e;
                }
            }
        }
        Err(refused)
    }

    /// The entry of `hash` in the table of loaded components, made if it
    /// is not there. Entries no function uses any more are dropped.
    fn loaded_entry(&self, hash: blake3::Hash) -> LoadedEntry {
        let mut loaded = self.loaded.lock().unwrap_or_else(PoisonError::into_inner);
        // An entry is in use while a load holds it (it has another owner)
        // or a function holds its component. Never blocks: a locked entry
        // is one a load holds.
        loaded.retain(|_, entry| {
            Arc::strong_count(entry) > 1
                || entry
                    .try_lock()
                    .map_or(true, |shared| shared.strong_count() > 0)
        });
        loaded.entry(hash).or_default().clone()
    }

    /// How many distinct components the functions loaded by
    /// [`WasmRuntime::load`] and still alive hold.
    pub fn loaded_components(&self) -> usize {
        let loaded = self.loaded.lock().unwrap_or_else(PoisonError::into_inner);
        loaded
            .values()
            .filter(|entry| entry.lock().is_ok_and(|shared| shared.strong_count() > 0))
            .count()
    }

    /// Pre-instantiates an already compiled component as function `name`.
    /// Pre-instantiates an already compiled component, of this runtime's
    /// engine ([`HostEngine::engine`]), as function `name`.
    pub fn load_component(&self, name: &str, component: &Component) -> Result<WasmFunction, Error> {
        let linked = tiering::link(&self.linker, component, Tier::Optimized).map_err(|reason| {
            Error::Load {
                function: name.to_owned(),
                reason,
            }
        })?;
        Ok(self.function(name, Tiered::new(linked)))
    }

    /// Function `name` of `linked`, with call slots of its own.
    fn function(&self, name: &str, linked: Arc<Tiered>) -> WasmFunction {
        WasmFunction {
            name: Arc::from(name),
            engine: self.engine.clone(),
            slots: self.engine.function_slots(),
            linked,
            env: Arc::from([]),
        }
    }
}

/// A wasm function ready to be called. Cheap to share: calls don't block
/// each other, and each gets its own instance.
pub struct WasmFunction {
    name: Arc<str>,
    engine: HostEngine,
    slots: FunctionSlots,
    /// Its component's code, shared with every function of the same
    /// component.
    linked: Arc<Tiered>,
    /// The environment its guest sees (none unless the user set one).
    env: Arc<[(String, String)]>,
}

impl WasmFunction {
    /// The function with `env` as its guest's environment, as a container
    /// function gets the environment its Function sets
    /// (`render.crossplane.io/runtime-docker-env`). The host's own
    /// environment is never passed.
    pub fn with_env(mut self, env: Vec<(String, String)>) -> WasmFunction {
        self.env = Arc::from(env);
        self
    }

    /// Which compiler made the code a call that starts now runs.
    pub fn tier(&self) -> Tier {
        self.linked.current().tier
    }

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
        let _slot = self.engine.call_slot(&self.slots).await;
        let config = self.engine.config();
        let limit = timeout.map_or(config.call_timeout, |t| t.min(config.call_timeout));
        let linked = self.linked.current();
        let mut store = self.store(&linked.engine, limit);
        let call = async {
            let instance = linked.pre.instantiate_async(&mut store).await?;
            let func = instance
                .get_func(&mut store, linked.run_function)
                .ok_or_else(|| wasmtime::format_err!("no `{RUN_FUNCTION}` export"))?;
            // SAFETY: `load_component` type-checked this export against
            // this signature, with `FunctionPre::new`, when it loaded the
            // component; every instance of the component has the same type.
            // Checking again would repeat that work on every call.
            #[allow(unsafe_code)]
            let run = unsafe { RunFunction::new_unchecked(func) };
            let (result,) = run.call_async(&mut store, (request,)).await?;
            Ok(result)
        };
        // The epoch deadline stops a guest that computes; this also stops
        // one that waits in a host call.
        let outcome = tokio::time::timeout(limit, call).await;
        let result = self.outcome(outcome, &store, limit);
        store.data_mut().finish_log();
        result
    }

    /// What a call's outcome means for its caller.
    fn outcome(
        &self,
        outcome: Result<
            wasmtime::Result<Result<RunFunctionResponse, String>>,
            tokio::time::error::Elapsed,
        >,
        store: &Store<Sandbox>,
        limit: Duration,
    ) -> Result<RunFunctionResponse, CallError> {
        let Ok(outcome) = outcome else {
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
                message: text::bounded(&message, MAX_GUEST_TEXT).into_owned(),
            }),
            Err(error) => Err(self.classify(error, store, limit)),
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
            let _slot = self.engine.call_slot(&self.slots).await;
            let limit = self.engine.config().call_timeout;
            let linked = self.linked.current();
            let mut store = self.store(&linked.engine, limit);
            match linked.pre.instantiate_async(&mut store).await {
                Ok(_) => Ok(()),
                Err(error) => Err(self.classify(error, &store, limit)),
            }
        })
    }

    /// A store on `engine` with a fresh sandbox, its memory capped, that
    /// yields at every epoch tick and traps once `limit` has passed.
    fn store(&self, engine: &Engine, limit: Duration) -> Store<Sandbox> {
        let config = self.engine.config();
        let sandbox = Sandbox::new(
            self.name.clone(),
            config.memory_limit,
            config.stderr_capture,
            &self.env,
        );
        let mut store = Store::new(engine, sandbox);
        store.limiter(|s| &mut s.limits);
        let started = Instant::now();
        let deadline = started + limit;
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(move |_| Ok(at_tick(started, deadline, Instant::now())));
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
        let stderr = without_backtrace_note(&stderr);
        let cause = describe(&error);
        let message = if stderr.is_empty() {
            cause
        } else {
            format!("{cause}; the function printed: {stderr}")
        };
        CallError::Trap { function, message }
    }
}

/// A linker on `engine` with xfn's imports, and WASI's: linked so that
/// ordinary Rust components instantiate, though the sandbox grants
/// nothing through it (see `sandbox`).
fn linker_of(engine: &Engine) -> Result<Linker<Sandbox>, Error> {
    let mut linker = Linker::<Sandbox>::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)
        .map_err(|e| Error::Engine(format!("cannot link WASI: {e}")))?;
    crate::protocol::Function::add_to_linker::<_, HasSelf<Sandbox>>(&mut linker, |s| s)
        .map_err(|e| Error::Engine(format!("cannot link xfn's imports: {e}")))?;
    Ok(linker)
}

/// How long a call's guest runs (since its sandbox was made) before it
/// yields at an epoch tick.
///
/// A yield lets the task's thread serve others, and moves a served call
/// off the thread that received it (see `grpc::call_threads`). A call
/// shorter than this never yields, so it isn't handed to another thread
/// just because a tick fell while it ran; one that runs longer yields at
/// every tick from then on.
const YIELD_AFTER: Duration = Duration::from_millis(1);

/// What a guest that started at `started` does at an epoch tick at `now`:
/// stop at its deadline, else go on, yielding first once it has run for
/// [`YIELD_AFTER`].
fn at_tick(started: Instant, deadline: Instant, now: Instant) -> UpdateDeadline {
    if now >= deadline {
        UpdateDeadline::Interrupt
    } else if now.saturating_duration_since(started) < YIELD_AFTER {
        UpdateDeadline::Continue(1)
    } else {
        UpdateDeadline::Yield(1)
    }
}

/// What stopped a guest, in one line: the trap, an `exit`, or a host
/// error, without the wasm backtrace wasmtime attaches.
fn describe(error: &wasmtime::Error) -> String {
    if let Some(exit) = error.downcast_ref::<wasmtime_wasi::I32Exit>() {
        // WASI 0.2's `exit` carries only success or failure (wasmtime
        // reports failure as 1), so there is no exit code to report.
        return if exit.0 == 0 {
            "the function exited (with a success status) instead of returning a response".into()
        } else {
            "the function exited with an error status instead of returning a response".into()
        };
    }
    if let Some(trap) = error.downcast_ref::<Trap>() {
        return match trap {
            Trap::StackOverflow => STACK_OVERFLOW.into(),
            Trap::MemoryOutOfBounds if below_address_zero(error) || deep_in_recursion(error) => {
                STACK_OVERFLOW.into()
            }
            trap => trap.to_string(),
        };
    }
    // wasmtime adds the backtrace as the outermost context.
    error
        .chain()
        .map(ToString::to_string)
        .filter(|cause| !cause.starts_with("error while executing at wasm backtrace"))
        .collect::<Vec<_>>()
        .join(": ")
}

/// The note Rust's panic handler prints when `RUST_BACKTRACE` is unset.
const BACKTRACE_NOTE: &str =
    "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace";

/// What to do instead, as a guest sees no environment variables.
pub const BACKTRACE_HINT: &str = "note: a function in xfn's sandbox sees no environment variables, so RUST_BACKTRACE cannot reach it; \
     for a backtrace, call the function natively, e.g. in a unit test (`cargo test`) run with RUST_BACKTRACE=1";

/// `stderr` with Rust's backtrace note, which can't be followed in the
/// sandbox, replaced by [`BACKTRACE_HINT`].
fn without_backtrace_note(stderr: &str) -> std::borrow::Cow<'_, str> {
    if stderr.contains(BACKTRACE_NOTE) {
        stderr.replace(BACKTRACE_NOTE, BACKTRACE_HINT).into()
    } else {
        stderr.into()
    }
}

const STACK_OVERFLOW: &str = "the function ran out of stack (endless or too deep recursion?)";

/// Whether a memory fault hit the top of 32-bit address space, or just
/// past it: where a guest whose stack sits at the bottom of its memory (as
/// Rust's and C's do) lands when the stack pointer drops below zero (a
/// store at an offset into a large frame lands above 4 GiB).
fn below_address_zero(error: &wasmtime::Error) -> bool {
    const PREFIX: &str = "memory fault at wasm address 0x";
    error.chain().any(|cause| {
        let text = cause.to_string();
        text.strip_prefix(PREFIX)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|hex| u64::from_str_radix(hex, 16).ok())
            .is_some_and(|address| (0xFFF0_0000..0x1_0010_0000).contains(&address))
    })
}

/// How many frames of one function at the top of the stack make an out
/// of bounds access a stack overflow.
const RECURSION_FRAMES: usize = 4;

/// Whether the trap's backtrace starts with [`RECURSION_FRAMES`] frames of
/// the same function: a guest with large stack frames overflows its stack
/// (in its linear memory) through a bulk memory operation, whose checked
/// access reports no address for [`below_address_zero`] to read.
fn deep_in_recursion(error: &wasmtime::Error) -> bool {
    let Some(backtrace) = error.downcast_ref::<wasmtime::WasmBacktrace>() else {
        return false;
    };
    let frames = backtrace.frames();
    frames.len() >= RECURSION_FRAMES
        && frames[..RECURSION_FRAMES]
            .windows(2)
            .all(|pair| pair[0].func_index() == pair[1].func_index())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HostConfig;
    use crate::sandbox::{MAX_MEMORIES, MAX_TABLES};
    use wasm_encoder::{
        InstanceSection, MemorySection, MemoryType, Module, ModuleArg, ModuleSection,
    };

    /// A component that instantiates one core module per entry of `pages`,
    /// each defining a memory of that many 64 KiB pages.
    fn component_with_memories(pages: &[u64]) -> Vec<u8> {
        let modules = pages.iter().map(|&minimum| {
            let mut memories = MemorySection::new();
            memories.memory(memory(minimum));
            let mut module = Module::new();
            module.section(&memories);
            module
        });
        component_instantiating(modules.collect())
    }

    /// A 32-bit memory of `minimum` 64 KiB pages.
    fn memory(minimum: u64) -> MemoryType {
        MemoryType {
            minimum,
            maximum: None,
            memory64: false,
            shared: false,
            page_size_log2: None,
        }
    }

    /// A component that embeds `modules` and instantiates each once.
    fn component_instantiating(modules: Vec<Module>) -> Vec<u8> {
        let mut component = wasm_encoder::Component::new();
        for module in &modules {
            component.section(&ModuleSection(module));
        }
        let mut instances = InstanceSection::new();
        for i in 0..modules.len() {
            instances.instantiate(i as u32, Vec::<(&str, ModuleArg)>::new());
        }
        component.section(&instances);
        component.finish()
    }

    fn runtime(pooling: bool) -> WasmRuntime {
        let config = HostConfig {
            memory_limit: 64 << 20,
            max_concurrent_calls: 4,
            pooling,
            ..HostConfig::default()
        };
        WasmRuntime::new(HostEngine::new(config).unwrap(), None).unwrap()
    }

    /// Instantiates `bytes` in a sandbox like a call's, and returns the
    /// total size the limiter refused, if it refused one.
    fn instantiate(runtime: &WasmRuntime, bytes: &[u8]) -> Option<usize> {
        let component = Component::new(runtime.engine.engine(), bytes).unwrap();
        let config = runtime.engine.config();
        let sandbox = Sandbox::new(
            "hog".into(),
            config.memory_limit,
            config.stderr_capture,
            &[],
        );
        let mut store = Store::new(runtime.engine.engine(), sandbox);
        store.limiter(|s| &mut s.limits);
        let outcome = block_on(runtime.linker.instantiate_async(&mut store, &component));
        let exceeded = store.data().limits.exceeded();
        assert_eq!(outcome.is_err(), exceeded.is_some(), "{:?}", outcome.err());
        exceeded
    }

    /// The attack round's low finding: a module with 2 tables passed
    /// `push` and `inspect` but the pool refused it (wasmtime's default is
    /// one table and one memory per module). Now a module may hold every
    /// table and memory a call may have.
    #[test]
    fn a_module_with_several_tables_and_memories_instantiates_in_the_pool() {
        use wasm_encoder::{RefType, TableSection, TableType};
        let mut tables = TableSection::new();
        for _ in 0..MAX_TABLES {
            tables.table(TableType {
                element_type: RefType::FUNCREF,
                table64: false,
                minimum: 1,
                maximum: None,
                shared: false,
            });
        }
        let mut memories = MemorySection::new();
        for _ in 0..MAX_MEMORIES {
            memories.memory(memory(1));
        }
        let mut module = Module::new();
        module.section(&tables);
        module.section(&memories);
        let bytes = component_instantiating(vec![module]);
        let info = xfn_component::ComponentInfo::read(&bytes).unwrap();
        assert_eq!((info.tables, info.memories), (16, 4));
        assert_eq!(info.sandbox_problem(), None);
        assert_eq!(instantiate(&runtime(true), &bytes), None);
    }

    #[test]
    fn a_guest_yields_at_a_tick_only_once_it_has_run_a_while() {
        let started = Instant::now();
        let deadline = started + Duration::from_secs(1);
        let at = |after: Duration| at_tick(started, deadline, started + after);
        assert!(matches!(at(Duration::ZERO), UpdateDeadline::Continue(1)));
        assert!(matches!(
            at(YIELD_AFTER - Duration::from_micros(1)),
            UpdateDeadline::Continue(1)
        ));
        assert!(matches!(at(YIELD_AFTER), UpdateDeadline::Yield(1)));
        assert!(matches!(
            at(Duration::from_millis(999)),
            UpdateDeadline::Yield(1)
        ));
        assert!(matches!(
            at(Duration::from_secs(1)),
            UpdateDeadline::Interrupt
        ));
        // A deadline shorter than YIELD_AFTER still stops the guest.
        let short = started + YIELD_AFTER / 2;
        assert!(matches!(
            at_tick(started, short, short),
            UpdateDeadline::Interrupt
        ));
    }

    /// 48 MiB in pages.
    const PAGES_48_MIB: u64 = 48 * 16;

    #[test]
    fn the_memory_limit_is_shared_by_all_of_a_calls_memories() {
        for pooling in [true, false] {
            let rt = runtime(pooling);
            // One 48 MiB memory fits the 64 MiB limit; two do not, although
            // each would on its own.
            assert_eq!(
                instantiate(&rt, &component_with_memories(&[PAGES_48_MIB])),
                None
            );
            assert_eq!(
                instantiate(&rt, &component_with_memories(&[PAGES_48_MIB, PAGES_48_MIB])),
                Some(96 << 20),
                "pooling: {pooling}"
            );
            // Small memories that add up to the limit are fine.
            assert_eq!(
                instantiate(&rt, &component_with_memories(&[256, 256, 256, 256])),
                None
            );
        }
    }

    #[test]
    fn a_component_with_too_many_memories_is_refused_when_loaded() {
        let rt = runtime(true);
        let Err(error) = rt.load("hog", &component_with_memories(&[1; 8])) else {
            panic!("a component with 8 memories must be refused");
        };
        let message = error.to_string();
        assert!(
            message.contains("hog") && message.contains("creates 8 linear memories"),
            "{message}"
        );
        // At the cap, the memory check passes (the component then lacks
        // xfn's export, which is reported instead).
        let Err(error) = rt.load("few", &component_with_memories(&[1; MAX_MEMORIES])) else {
            panic!("a component without xfn's export must be refused");
        };
        assert!(!error.to_string().contains("linear memories"), "{error}");
    }
}
