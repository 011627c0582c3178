//! `xfn serve` as a library type: a [`Server`] of a [`FunctionSet`] that
//! is loaded at start, reloaded on request (the binary's SIGHUP) and, when
//! watching, whenever what the set is read from changes; shut down on
//! request with calls in flight drained.
//!
//! ```no_run
//! # use std::sync::Arc;
//! # async fn demo(functions: Arc<dyn xfn_grpc::serve::FunctionSet>) -> Result<(), xfn_grpc::ServeError> {
//! use xfn_grpc::serve::{Serve, ServeConfig};
//!
//! let serve = Serve::start(ServeConfig::default(), functions).await?;
//! let reloader = serve.reloader(); // reload() on SIGHUP, shutdown() on SIGTERM
//! serve.run().await
//! # }
//! ```

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use xfn_runtime::Function;

use crate::{FunctionTable, ServeError, Server, ServerConfig, ServerHandle};

/// A function to serve.
pub struct ServedFunction {
    /// The name it is routed by.
    pub name: String,
    /// The function.
    pub function: Arc<dyn Function>,
    /// A port of its own, if it asks for one.
    pub port: Option<u16>,
}

/// Where a [`Serve`]'s functions come from: read and compiled again on
/// every reload.
pub trait FunctionSet: Send + Sync + 'static {
    /// The functions to serve now. Blocking: it may read files and
    /// compile components (a [`Serve`] calls it off the async threads).
    fn load(&self) -> Result<Vec<ServedFunction>, String>;

    /// A value that changes when what the set is read from changes (its
    /// files' sizes and times); watching reloads when it does.
    fn fingerprint(&self) -> u64;
}

/// How a [`Serve`] listens and reloads.
#[derive(Debug, Clone, Default)]
pub struct ServeConfig {
    /// The server; its `function_ports` are set from the functions' ports
    /// at start.
    pub server: ServerConfig,
    /// Reload when the set's [fingerprint](FunctionSet::fingerprint)
    /// changes, checked this often; `None` reloads only on request.
    pub watch: Option<Duration>,
    /// Told of every reload's outcome (default: the log).
    pub on_reload: Option<fn(&Result<Reloaded, String>)>,
    /// Called after every load (the binary hands freed memory back to the
    /// OS: compiling leaves much behind).
    pub after_load: Option<fn()>,
}

/// What a reload served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reloaded {
    /// The functions now served, by name.
    pub names: Vec<String>,
    /// The functions' dedicated ports differ from those at start; they
    /// take effect only on restart.
    pub ports_changed: bool,
}

/// A running server of a [`FunctionSet`].
pub struct Serve {
    server: Server,
    reloader: Reloader,
    watch: Option<Duration>,
    /// The set's fingerprint when it was loaded at start.
    fingerprint: Option<u64>,
}

impl Serve {
    /// Loads the functions and binds the server (and a listener for each
    /// function's own port), ready to [`run`](Serve::run).
    pub async fn start(
        config: ServeConfig,
        functions: Arc<dyn FunctionSet>,
    ) -> Result<Serve, ServeError> {
        let after_load = config.after_load.unwrap_or(|| {});
        // Taken before loading, so the watch also sees a change made while
        // the set loads, however long `run` takes to start.
        let fingerprint = fingerprint(&functions).await;
        let loaded = load(&functions, after_load)
            .await
            .map_err(ServeError::Functions)?;
        if loaded.is_empty() {
            return Err(ServeError::Functions("no functions to serve".into()));
        }
        let ports = ports(&loaded);
        let mut server_config = config.server;
        server_config.function_ports = ports
            .iter()
            .map(|(name, port)| {
                (
                    name.clone(),
                    SocketAddr::new(server_config.address.ip(), *port),
                )
            })
            .collect();
        let server = Server::bind(server_config, table(loaded)).await?;
        let reloader = Reloader {
            functions,
            handle: server.handle(),
            ports,
            report: config.on_reload.unwrap_or(log_reload),
            after_load,
        };
        Ok(Serve {
            server,
            reloader,
            watch: config.watch,
            fingerprint,
        })
    }

    /// Where it listens for every function.
    pub fn local_addr(&self) -> SocketAddr {
        self.server.local_addr()
    }

    /// Where function `name` is served alone, if it has a port of its own.
    pub fn function_addr(&self, name: &str) -> Option<SocketAddr> {
        self.server.function_addr(name)
    }

    /// The names of the functions served now.
    pub fn names(&self) -> Vec<String> {
        self.reloader.names()
    }

    /// What reloads and stops it while it runs.
    pub fn reloader(&self) -> Reloader {
        self.reloader.clone()
    }

    /// Serves until [`Reloader::shutdown`], watching the set if configured.
    pub async fn run(self) -> Result<(), ServeError> {
        let watching = self
            .watch
            .map(|every| tokio::spawn(self.reloader.clone().watch(every, self.fingerprint)));
        let served = self.server.serve().await;
        if let Some(watching) = watching {
            watching.abort();
        }
        served
    }
}

/// Reloads and stops a running [`Serve`].
#[derive(Clone)]
pub struct Reloader {
    functions: Arc<dyn FunctionSet>,
    handle: ServerHandle,
    /// The dedicated ports listened on since start.
    ports: Vec<(String, u16)>,
    report: fn(&Result<Reloaded, String>),
    after_load: fn(),
}

impl Reloader {
    /// Loads the set again and serves it, without dropping calls in flight.
    /// A function whose component didn't change keeps its compiled code
    /// (the set's loader decides). If the set can't be loaded, the
    /// functions served before stay served.
    pub async fn reload(&self) -> Result<Reloaded, String> {
        let outcome = async {
            let loaded = load(&self.functions, self.after_load).await?;
            if loaded.is_empty() {
                return Err("no functions to serve".to_owned());
            }
            let ports_changed = ports(&loaded) != self.ports;
            let table = table(loaded);
            let names = table.names().map(str::to_owned).collect();
            self.handle.reload(table).await;
            Ok(Reloaded {
                names,
                ports_changed,
            })
        }
        .await;
        (self.report)(&outcome);
        outcome
    }

    /// Stops taking calls, drains those in flight, and ends
    /// [`Serve::run`].
    pub async fn shutdown(&self) {
        self.handle.shutdown().await;
    }

    /// The names of the functions served now.
    pub fn names(&self) -> Vec<String> {
        self.handle.functions().names().map(str::to_owned).collect()
    }

    /// Reloads whenever the set's fingerprint changes from `last` (what
    /// was served at start), checked `every`.
    async fn watch(self, every: Duration, mut last: Option<u64>) {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let now = fingerprint(&self.functions).await;
            if now != last {
                last = now;
                let _ = self.reload().await;
            }
        }
    }
}

/// The set's fingerprint, read off the async threads.
async fn fingerprint(functions: &Arc<dyn FunctionSet>) -> Option<u64> {
    let functions = functions.clone();
    tokio::task::spawn_blocking(move || functions.fingerprint())
        .await
        .ok()
}

/// Loads the set off the async threads: compiling is CPU-bound.
async fn load(
    functions: &Arc<dyn FunctionSet>,
    after_load: fn(),
) -> Result<Vec<ServedFunction>, String> {
    let functions = functions.clone();
    tokio::task::spawn_blocking(move || {
        let loaded = functions.load();
        after_load();
        loaded
    })
    .await
    .map_err(|e| format!("loading functions failed: {e}"))?
}

fn table(loaded: Vec<ServedFunction>) -> FunctionTable {
    let mut table = FunctionTable::new();
    for served in loaded {
        table.insert(served.name, served.function);
    }
    table
}

fn ports(loaded: &[ServedFunction]) -> Vec<(String, u16)> {
    let mut ports: Vec<_> = loaded
        .iter()
        .filter_map(|f| Some((f.name.clone(), f.port?)))
        .collect();
    ports.sort();
    ports
}

/// Logs a reload's outcome.
fn log_reload(outcome: &Result<Reloaded, String>) {
    match outcome {
        Ok(reloaded) => {
            if reloaded.ports_changed {
                tracing::warn!("dedicated function ports changed; they take effect on restart");
            }
            tracing::info!("reloaded: {}", reloaded.names.join(", "));
        }
        Err(e) => tracing::error!("cannot reload, still serving the previous functions: {e}"),
    }
}
