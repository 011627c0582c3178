//! `xfn-kube-fake`: an in-process fake Kubernetes API server for tests.
//!
//! It speaks enough of the Kubernetes REST and watch protocol for kube-rs 5 `Client`, `Api`, `watcher`,
//! `Controller` and kube-lease-manager to work against it, in-process as a `tower::Service` or over HTTP on
//! a loopback address.
//!
//! ```no_run
//! # async fn demo() {
//! let fake = xfn_kube_fake::FakeApiServer::new();
//! // Inside a tokio runtime (kube wraps the service in a `Buffer`):
//! // let client = kube::Client::new(fake.service(), "default");
//! let (addr, handle) = fake.serve("127.0.0.1:0".parse().unwrap()).await.unwrap();
//! // kube::Client::try_from(kube::Config::new(format!("http://{addr}").parse().unwrap()))
//! handle.shutdown().await;
//! # }
//! ```

mod body;
pub mod crossplane;
mod delete;
mod discovery;
mod hooks;
mod json_patch;
mod meta;
mod ownership;
mod patch;
mod resources;
mod selector;
mod server;
mod service;
mod status;
mod store;
mod util;
mod watch;
mod write;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;

pub use body::FakeBody;
pub use hooks::{FailureRule, RequestRecord};
pub use resources::{Registry, ResourceInfo, ResourceKey};
pub use server::ServeHandle;
pub use service::FakeService;
pub use status::ApiError;

use hooks::Hooks;
use resources::split_group_version;
use store::Store;

/// Limits and timings of a fake API server.
#[derive(Debug, Clone)]
pub struct Config {
    /// Largest accepted request body (413 above it). Default 16 MiB.
    pub max_body_bytes: usize,
    /// Events kept for watch replay; older resource versions get 410 Expired. Default 10,000.
    pub event_log_capacity: usize,
    /// Events a watch may fall behind before it is ended. Default 4,096.
    pub broadcast_capacity: usize,
    /// Concurrent watches (429 above it). Default 1,000.
    pub max_watches: usize,
    /// Longest watch; also the cap on `timeoutSeconds`. Default 300 s.
    pub max_watch_duration: Duration,
    /// How often watches that allow bookmarks get one; `None` disables them. Default 60 s.
    pub bookmark_interval: Option<Duration>,
    /// Requests kept in the request log. Default 10,000.
    pub request_log_capacity: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            max_body_bytes: 16 * 1024 * 1024,
            event_log_capacity: 10_000,
            broadcast_capacity: 4_096,
            max_watches: 1_000,
            max_watch_duration: Duration::from_secs(300),
            bookmark_interval: Some(Duration::from_secs(60)),
            request_log_capacity: 10_000,
        }
    }
}

/// State shared by every handle on one fake server.
pub(crate) struct Shared {
    pub(crate) store: Mutex<Store>,
    pub(crate) config: Config,
    pub(crate) hooks: Hooks,
    pub(crate) active_watches: Arc<AtomicUsize>,
    pub(crate) close_watches: tokio::sync::watch::Sender<u64>,
    pub(crate) shutdown: tokio::sync::watch::Sender<bool>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Store> {
        lock(&self.store)
    }
}

/// An in-memory fake Kubernetes API server. Cheap to clone; clones share one store.
#[derive(Clone)]
pub struct FakeApiServer {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for FakeApiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeApiServer")
            .field("resource_version", &self.resource_version())
            .finish_non_exhaustive()
    }
}

impl Default for FakeApiServer {
    fn default() -> Self {
        Self::new()
    }
}

impl FakeApiServer {
    /// A server with the default resources ([`Registry::with_defaults`]) and limits.
    pub fn new() -> Self {
        Self::with_config(Registry::with_defaults(), Config::default())
    }

    /// A server with the given resources and limits.
    pub fn with_config(registry: Registry, config: Config) -> Self {
        let store = Store::new(
            registry,
            config.event_log_capacity,
            config.broadcast_capacity,
        );
        Self {
            shared: Arc::new(Shared {
                store: Mutex::new(store),
                hooks: Hooks::new(config.request_log_capacity),
                config,
                active_watches: Arc::new(AtomicUsize::new(0)),
                close_watches: tokio::sync::watch::Sender::new(0),
                shutdown: tokio::sync::watch::Sender::new(false),
            }),
        }
    }

    /// A `tower::Service` for `kube::Client::new(service, "default")`.
    pub fn service(&self) -> FakeService {
        FakeService {
            shared: self.shared.clone(),
        }
    }

    /// Serves the API over HTTP/1.1 at `addr` (use `127.0.0.1:0`). Returns the bound address and a handle
    /// that stops the listener when dropped or shut down. Must be called inside a tokio runtime.
    pub async fn serve(&self, addr: SocketAddr) -> std::io::Result<(SocketAddr, ServeHandle)> {
        server::serve(self.shared.clone(), addr).await
    }

    /// Registers (or replaces) a resource kind.
    pub fn register(&self, info: ResourceInfo) {
        self.shared.lock().registry.register(info);
    }

    /// Creates or fully replaces an object (status included), found by its `apiVersion` and `kind`.
    /// Namespaced objects without a namespace go to `default`. Emits ADDED or MODIFIED like an API write.
    pub fn insert(&self, object: Value) -> Result<Value, ApiError> {
        self.shared.lock().insert(object)
    }

    fn info(&self, group_version: &str, plural: &str) -> Option<ResourceInfo> {
        let (group, version) = split_group_version(group_version);
        self.shared.lock().resource(group, version, plural)
    }

    /// One stored object. `group_version` is `v1` or `group/version`; `namespace` is ignored for
    /// cluster-scoped kinds.
    pub fn get(
        &self,
        group_version: &str,
        plural: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Value> {
        let info = self.info(group_version, plural)?;
        let ns = if info.namespaced {
            namespace.unwrap_or("default")
        } else {
            ""
        };
        self.shared.lock().get(&info, ns, name).ok()
    }

    /// Stored objects of a kind, in one namespace or (with `None`) all of them.
    pub fn list(&self, group_version: &str, plural: &str, namespace: Option<&str>) -> Vec<Value> {
        let Some(info) = self.info(group_version, plural) else {
            return Vec::new();
        };
        let ns = namespace.filter(|_| info.namespaced);
        self.shared.lock().objects_of(&info, ns).cloned().collect()
    }

    /// Deletes an object like a background-propagation DELETE (finalizers and garbage collection
    /// included). Returns the object as it was deleted or marked for deletion.
    pub fn delete(
        &self,
        group_version: &str,
        plural: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Value> {
        let info = self.info(group_version, plural)?;
        let ns = if info.namespaced {
            namespace.unwrap_or("default")
        } else {
            ""
        };
        self.shared.lock().delete_direct(&info, ns, name)
    }

    /// The current global resource version.
    pub fn resource_version(&self) -> u64 {
        self.shared.lock().rv
    }

    /// Every request seen so far (bounded by [`Config::request_log_capacity`]).
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.shared.hooks.requests()
    }

    /// Empties the request log.
    pub fn clear_requests(&self) {
        self.shared.hooks.clear_requests();
    }

    /// Adds a fault rule (error and/or delay); rules are tried in the order added.
    pub fn inject_failure(&self, rule: FailureRule) {
        self.shared.hooks.add_rule(rule);
    }

    /// Forgets the watch history: watches from any earlier resource version get `410 Expired`.
    pub fn compact(&self) {
        self.shared.lock().compact();
    }

    /// Ends every open watch stream (clients re-watch from their last resource version).
    pub fn close_watches(&self) {
        self.shared.close_watches.send_modify(|epoch| *epoch += 1);
    }

    /// Open watch streams.
    pub fn active_watches(&self) -> usize {
        self.shared.active_watches.load(Ordering::SeqCst)
    }

    /// Shuts the server down: watches end, listeners stop and further requests get 503.
    pub fn shutdown(&self) {
        self.shared.shutdown.send_replace(true);
        self.close_watches();
    }
}
