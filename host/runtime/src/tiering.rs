//! A component's code in two tiers: Winch's, compiled in a fraction of the
//! time, runs first; Cranelift's, compiled in the background, takes its
//! place for the calls that start after it is ready (see
//! [`crate::Tiering`]).
//!
//! Every call instantiates the code that is current when it starts, and
//! keeps it to its end, so a swap never changes the code under a call.

use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, PoisonError, RwLock, Weak};
use std::thread;
use std::time::Instant;

use wasmtime::Engine;
use wasmtime::component::{Component, ComponentExportIndex, InstancePre, Linker};

use crate::compile_cache::CompileCache;
use crate::protocol::FunctionPre;
use crate::sandbox::{MAX_MEMORIES, MAX_TABLES, Sandbox};

/// The name of the function world's export.
pub(crate) const RUN_FUNCTION: &str = "run-function";

/// Which compiler made the code a function runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// Winch, wasmtime's baseline compiler: fast to compile, slower to run.
    Baseline,
    /// Cranelift, wasmtime's optimizing compiler.
    Optimized,
}

/// A compiled component, pre-instantiated with xfn's imports.
pub(crate) struct Linked {
    pub(crate) pre: InstancePre<Sandbox>,
    /// The `run-function` export, whose type [`FunctionPre::new`] checked.
    pub(crate) run_function: ComponentExportIndex,
    /// The engine that compiled it, which its stores must be made on.
    pub(crate) engine: Engine,
    pub(crate) tier: Tier,
}

/// The code every function of one component runs: shared by them, and
/// replaced in place when optimized code is ready.
pub(crate) struct Tiered {
    current: RwLock<Arc<Linked>>,
}

impl Tiered {
    pub(crate) fn new(linked: Linked) -> Arc<Tiered> {
        Arc::new(Tiered {
            current: RwLock::new(Arc::new(linked)),
        })
    }

    /// The code a call that starts now runs.
    pub(crate) fn current(&self) -> Arc<Linked> {
        self.current
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn replace(&self, linked: Linked) {
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(linked);
    }
}

/// Links `component`, compiled by `linker`'s engine into code of `tier`,
/// with xfn's imports, and checks its export.
pub(crate) fn link(
    linker: &Linker<Sandbox>,
    component: &Component,
    tier: Tier,
) -> Result<Linked, String> {
    check_resources(component)?;
    let instance_pre = linker
        .instantiate_pre(component)
        .map_err(|e| format!("cannot link component: {e:#}"))?;
    // This checks the export's type once; calls then skip the check.
    let pre = FunctionPre::new(instance_pre)
        .map_err(|e| format!("component does not export xfn's function world: {e:#}"))?;
    let run_function = component
        .get_export_index(None, RUN_FUNCTION)
        .ok_or_else(|| format!("component does not export `{RUN_FUNCTION}`"))?;
    Ok(Linked {
        pre: pre.instance_pre().clone(),
        run_function,
        engine: component.engine().clone(),
        tier,
    })
}

/// Refuses a component that would create more memories or tables than one
/// call may have, before it takes a pool slot: the memory limit is shared by
/// all of a call's memories, and their number is capped too.
fn check_resources(component: &Component) -> Result<(), String> {
    let Some(required) = component.resources_required() else {
        return Err("the component imports core modules, which xfn does not provide".into());
    };
    let memories = required.num_memories as usize;
    if memories > MAX_MEMORIES {
        return Err(format!(
            "it creates {memories} linear memories when instantiated; a function may have at most {MAX_MEMORIES}"
        ));
    }
    let tables = required.num_tables as usize;
    if tables > MAX_TABLES {
        return Err(format!(
            "it creates {tables} tables when instantiated; a function may have at most {MAX_TABLES}"
        ));
    }
    Ok(())
}

/// Compiles `wasm`, whose BLAKE3 hash is `hash`, for `engine`, and stores
/// it in `cache` if there is one.
pub(crate) fn compile(
    engine: &Engine,
    cache: Option<&CompileCache>,
    wasm: &[u8],
    hash: &blake3::Hash,
) -> Result<Component, String> {
    match cache {
        Some(cache) => cache.compile_hashed(engine, wasm, hash),
        None => crate::compile_cache::compile_in_memory(engine, wasm),
    }
}

/// The background compiler: one thread that compiles components with
/// Cranelift, one at a time, and puts their code in place of Winch's.
///
/// wasmtime compiles a component's functions in parallel, on rayon. The
/// background compiles on a rayon pool of its own, at nice
/// [`BACKGROUND_NICE`]: loads that wait for Winch, and calls, go first,
/// and a load's compile is never queued behind the background's.
///
/// Its queue holds at most one job per distinct component loaded at
/// Winch's tier, and a job whose functions are all gone is skipped. The
/// thread ends when the last handle to its queue is dropped, after the
/// job in hand.
#[derive(Clone)]
pub(crate) struct Optimizer {
    jobs: Sender<Job>,
}

/// The nice value of the background compiler's threads.
const BACKGROUND_NICE: i32 = 10;

/// A component to compile with Cranelift, and where its code goes.
struct Job {
    /// The first function that loaded it, for the log.
    function: Arc<str>,
    wasm: Arc<[u8]>,
    hash: blake3::Hash,
    target: Weak<Tiered>,
}

impl Optimizer {
    /// Starts the thread, which compiles for `linker`'s engine through
    /// `cache`; `None` (with a warning) if it can't be started.
    pub(crate) fn start(
        linker: Arc<Linker<Sandbox>>,
        cache: Option<CompileCache>,
    ) -> Option<Optimizer> {
        let (jobs, queue) = channel();
        let threads = thread::available_parallelism().map_or(1, |n| n.get());
        let spawned = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("xfn-optimize-{i}"))
            .start_handler(|_| lower_priority())
            .build()
            .map_err(|e| e.to_string())
            .and_then(|pool| {
                thread::Builder::new()
                    .name("xfn-optimize".into())
                    .spawn(move || {
                        lower_priority();
                        run(&queue, &pool, &linker, cache.as_ref());
                    })
                    .map_err(|e| e.to_string())
            });
        match spawned {
            Ok(_) => Some(Optimizer { jobs }),
            Err(e) => {
                tracing::warn!(
                    "cannot start the background compiler, functions keep their baseline code: {e}"
                );
                None
            }
        }
    }

    /// Asks for `wasm`'s optimized code, to replace the code in `target`.
    pub(crate) fn optimize(
        &self,
        function: &str,
        wasm: &[u8],
        hash: blake3::Hash,
        target: &Arc<Tiered>,
    ) {
        let job = Job {
            function: Arc::from(function),
            wasm: Arc::from(wasm),
            hash,
            target: Arc::downgrade(target),
        };
        if self.jobs.send(job).is_err() {
            tracing::warn!("the background compiler is gone; {function} keeps its baseline code");
        }
    }
}

fn lower_priority() {
    crate::priority::lower_thread_priority(BACKGROUND_NICE, "a background compiler thread");
}

/// The background compiler's loop: compiles on `pool`.
fn run(
    queue: &Receiver<Job>,
    pool: &rayon::ThreadPool,
    linker: &Linker<Sandbox>,
    cache: Option<&CompileCache>,
) {
    for job in queue {
        if job.target.strong_count() == 0 {
            continue;
        }
        let started = Instant::now();
        let linked = pool
            .install(|| compile(linker.engine(), cache, &job.wasm, &job.hash))
            .and_then(|component| link(linker, &component, Tier::Optimized));
        match (linked, job.target.upgrade()) {
            (Ok(linked), Some(target)) => {
                target.replace(linked);
                tracing::info!(
                    "function {} runs optimized code now (compiled in {:.1?})",
                    job.function,
                    started.elapsed()
                );
            }
            (Ok(_), None) => {}
            (Err(e), _) => tracing::warn!(
                "cannot optimize function {}, it keeps its baseline code: {e}",
                job.function
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The nice values of this process's threads named `name`.
    fn nice_of_threads(name: &str) -> Vec<i64> {
        let tasks = std::fs::read_dir("/proc/self/task").expect("/proc/self/task");
        tasks
            .filter_map(Result::ok)
            .filter(|task| {
                std::fs::read_to_string(task.path().join("comm"))
                    .is_ok_and(|comm| comm.trim_end() == name)
            })
            .map(|task| {
                let stat = std::fs::read_to_string(task.path().join("stat")).expect("stat");
                // Fields after the command's closing parenthesis; nice is
                // the 19th field of the line, the 17th after it.
                let (_, rest) = stat.rsplit_once(") ").expect("stat's command");
                rest.split(' ')
                    .nth(16)
                    .expect("nice")
                    .parse()
                    .expect("a number")
            })
            .collect()
    }

    #[test]
    fn the_background_compiler_runs_at_low_priority() {
        let linker = Arc::new(Linker::new(&Engine::default()));
        let _optimizer = Optimizer::start(linker, None).expect("started");
        let started = Instant::now();
        let nice = loop {
            let nice = nice_of_threads("xfn-optimize-0");
            if !nice.is_empty() || started.elapsed() > std::time::Duration::from_secs(10) {
                break nice;
            }
            thread::sleep(std::time::Duration::from_millis(5));
        };
        assert_eq!(nice, [i64::from(BACKGROUND_NICE)]);
    }
}
