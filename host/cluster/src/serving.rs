//! What every replica does: serve the wasm functions the leader routed to
//! xfn's pods, with the certificates the leader issued.
//!
//! A replica watches the Services xfn made (those whose selector is xfn's
//! own pods), the FunctionRevisions that own them, the TLS Secrets xfn made
//! and `crossplane-root-ca`. It serves the component of each Active
//! revision under its Service's name, which is the first label of the
//! authority Crossplane dials, with the certificate for that name, and
//! requires client certificates from Crossplane's CA. A function that
//! fails to load is logged and reported as a Warning event on its
//! revision, and the others keep serving; a function whose new version
//! fails to load keeps serving its old one. Functions load a few at a
//! time, each within a deadline, while certificates keep following their
//! Secrets.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use futures_util::{FutureExt, StreamExt};
use k8s_openapi::api::core::v1::{Secret, Service};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Resource, ResourceExt};
use tokio::sync::watch;

use super::crd::FunctionRevision;
use super::objects::MANAGED_BY;
use super::plan::{self, Cluster, TlsServed, Wanted, secret_data};
use super::reconcile::ROOT_CA_SECRET;
use xfn_grpc::sni::DynamicTls;
use xfn_grpc::{FunctionTable, ServerHandle};
use xfn_runtime::{WasmFunction, WasmRuntime};

/// The annotation on a TLS Secret naming the server names it is for.
pub const TLS_NAMES_ANNOTATION: &str = xfn_catalog::annotations::TLS_NAMES;

/// How long to gather changes before acting on them.
const SETTLE: Duration = Duration::from_millis(100);

/// Most functions pulled and compiled at once.
const LOADS_AT_ONCE: usize = 4;

/// Longest one function may take to pull, compile and start.
const LOAD_DEADLINE: Duration = Duration::from_secs(300);

/// One replica's serving side.
pub struct Replica {
    /// The API.
    pub client: Client,
    /// This pod's name, which reports its events.
    pub identity: String,
    /// Crossplane's namespace.
    pub namespace: String,
    /// The labels of xfn's pods: a Service selecting exactly these is one
    /// xfn serves.
    pub pod_labels: BTreeMap<String, String>,
    /// Compiles components.
    pub runtime: WasmRuntime,
    /// How to pull packages (credentials come from each revision's pull
    /// secrets).
    pub registry: xfn_oci::RegistryOptions,
    /// The running gRPC server.
    pub server: ServerHandle,
    /// Its certificates.
    pub tls: Arc<DynamicTls>,
    /// Turned true once the functions present at start are loaded (or
    /// failed to): the readiness of the pod.
    pub ready: watch::Sender<bool>,
}

/// A loaded function and the revision it came from.
struct Loaded {
    image: String,
    revision: String,
    function: Arc<WasmFunction>,
}

impl Replica {
    /// Watches the cluster and serves, until the watches end (never, in
    /// practice: they retry with backoff).
    pub async fn run(self) {
        let ns = self.namespace.clone();
        let managed =
            watcher::Config::default().labels(&format!("{}={}", MANAGED_BY.0, MANAGED_BY.1));
        let (revisions, revisions_writer) = reflector::store::<FunctionRevision>();
        let (services, services_writer) = reflector::store::<Service>();
        let (secrets, secrets_writer) = reflector::store::<Secret>();
        let (root_ca, root_ca_writer) = reflector::store::<Secret>();
        let streams: Vec<futures_util::stream::BoxStream<'static, ()>> = vec![
            watcher(
                Api::<FunctionRevision>::all(self.client.clone()),
                watcher::Config::default(),
            )
            .default_backoff()
            .reflect(revisions_writer)
            .map(log_watch_error("FunctionRevisions"))
            .boxed(),
            watcher(
                Api::<Service>::namespaced(self.client.clone(), &ns),
                managed.clone(),
            )
            .default_backoff()
            .reflect(services_writer)
            .map(log_watch_error("Services"))
            .boxed(),
            watcher(Api::<Secret>::namespaced(self.client.clone(), &ns), managed)
                .default_backoff()
                .reflect(secrets_writer)
                .map(log_watch_error("Secrets"))
                .boxed(),
            watcher(
                Api::<Secret>::namespaced(self.client.clone(), &ns),
                watcher::Config::default().fields(&format!("metadata.name={ROOT_CA_SECRET}")),
            )
            .default_backoff()
            .reflect(root_ca_writer)
            .map(log_watch_error("the root CA Secret"))
            .boxed(),
        ];
        let mut changes = futures_util::stream::select_all(streams);
        let stores = async {
            let _ = revisions.wait_until_ready().await;
            let _ = services.wait_until_ready().await;
            let _ = secrets.wait_until_ready().await;
            let _ = root_ca.wait_until_ready().await;
        };
        // Drive the watches until every store has its first full list.
        tokio::pin!(stores);
        loop {
            tokio::select! {
                () = &mut stores => break,
                next = changes.next() => if next.is_none() { return },
            }
        }
        let view = View {
            revisions: &revisions,
            services: &services,
            secrets: &secrets,
            root_ca: &root_ca,
        };
        let mut tls = TlsServed::default();
        let mut functions = FunctionState {
            recorder: Recorder::new(
                self.client.clone(),
                Reporter {
                    controller: "xfn".into(),
                    instance: Some(self.identity.clone()),
                },
            ),
            loaded: HashMap::new(),
            failures: HashMap::new(),
        };
        let mut first = true;
        loop {
            self.sync_tls(&view, &mut tls);
            // Load while the watches go on, so that certificates keep
            // following their Secrets during a long pull.
            let mut changed = false;
            {
                let sync = self.sync_functions(&view, &mut functions);
                tokio::pin!(sync);
                loop {
                    tokio::select! {
                        () = &mut sync => break,
                        next = changes.next() => match next {
                            Some(()) => {
                                changed = true;
                                self.sync_tls(&view, &mut tls);
                            }
                            None => return,
                        },
                    }
                }
            }
            if first {
                self.ready.send_replace(true);
                tracing::info!("serving the functions present at start");
                first = false;
            }
            if !changed && changes.next().await.is_none() {
                return;
            }
            // Gather what else changed meanwhile, then act once.
            tokio::time::sleep(SETTLE).await;
            while let Some(Some(())) = changes.next().now_or_never() {}
        }
    }

    /// Sets the client CA and the certificate of every function, as the
    /// cluster's Secrets say ([`plan::cert_changes`]).
    fn sync_tls(&self, view: &View<'_>, state: &mut TlsServed) {
        let snapshot = view.snapshot();
        let changes = plan::cert_changes(snapshot.cluster(), state, &self.tls.names());
        if let Some(ca) = changes.client_ca {
            let usable = ca.as_deref().map(|pem| {
                super::root_ca_text("tls.crt", pem)
                    .and_then(|_| self.tls.set_client_ca(pem).map_err(|e| e.to_string()))
            });
            match usable {
                Some(Ok(())) => tracing::info!("client CA set from {ROOT_CA_SECRET}"),
                Some(Err(e)) => tracing::error!(
                    "cannot use {ROOT_CA_SECRET}: {}; keeping the previous client CA, if any",
                    super::for_log(&e)
                ),
                None => tracing::warn!("no {ROOT_CA_SECRET} yet: refusing connections"),
            }
            state.client_ca = ca;
        }
        for certificate in changes.set {
            match self.tls.set_certificate(
                &certificate.names(),
                &certificate.cert,
                &certificate.key,
            ) {
                Ok(()) => {
                    tracing::info!(names = %super::for_log(&certificate.listed), "serving a certificate");
                    state.certs.insert(certificate.listed.clone(), certificate);
                }
                Err(e) => tracing::error!(
                    "the Secret for {}: {}",
                    super::for_log(&certificate.listed),
                    super::for_log(&e.to_string())
                ),
            }
        }
        if !changes.remove.is_empty() {
            self.tls.remove(&changes.remove);
            let remaining = self.tls.names();
            state
                .certs
                .retain(|listed, _| listed.split(',').any(|n| remaining.contains(&n.to_owned())));
        }
    }

    /// Loads what changed, a few at a time, and serves the set.
    async fn sync_functions(&self, view: &View<'_>, state: &mut FunctionState) {
        let snapshot = view.snapshot();
        let wanted = plan::wanted(snapshot.cluster(), &self.pod_labels);
        let served: BTreeMap<String, plan::Served> = state
            .loaded
            .iter()
            .map(|(name, loaded)| {
                let served = plan::Served {
                    image: loaded.image.clone(),
                    revision: loaded.revision.clone(),
                };
                (name.clone(), served)
            })
            .collect();
        let changes = plan::function_changes(&wanted, &served);
        // Futures made up front: the stream then holds no closure that
        // borrows, which keeps the replica's future `Send`.
        let loads: Vec<_> = changes
            .load
            .iter()
            .map(|load| self.load_within_deadline(&load.name, &load.wanted, load.moved))
            .collect();
        let outcomes: Vec<_> = futures_util::stream::iter(loads)
            .buffer_unordered(LOADS_AT_ONCE)
            .collect()
            .await;
        let mut changed = false;
        for (name, want, outcome) in outcomes {
            match outcome {
                Ok(function) => {
                    tracing::info!(
                        function = %super::for_log(name),
                        image = %super::for_log(&want.image),
                        revision = %super::for_log(&want.revision),
                        "loaded"
                    );
                    state.failures.remove(name);
                    state.loaded.insert(
                        name.clone(),
                        Loaded {
                            image: want.image.clone(),
                            revision: want.revision.clone(),
                            function,
                        },
                    );
                    changed = true;
                }
                Err(e) => {
                    tracing::error!(
                        function = %super::for_log(name),
                        image = %super::for_log(&want.image),
                        revision = %super::for_log(&want.revision),
                        "cannot serve: {}",
                        super::for_log(&e)
                    );
                    let failure = (want.revision.clone(), e);
                    if state.failures.get(name) != Some(&failure) {
                        self.report_failure(view, &state.recorder, &failure.0, &failure.1)
                            .await;
                        state.failures.insert(name.clone(), failure);
                    }
                }
            }
        }
        for name in &changes.drop {
            changed |= state.loaded.remove(name).is_some();
        }
        state.failures.retain(|name, _| wanted.contains_key(name));
        if changed {
            let mut table = FunctionTable::new();
            for (name, loaded) in &state.loaded {
                table.insert(name.clone(), loaded.function.clone());
            }
            self.server.reload(table).await;
        }
    }

    /// [`Replica::load`] within [`LOAD_DEADLINE`], with what it loaded.
    async fn load_within_deadline<'w>(
        &self,
        name: &'w String,
        want: &'w Wanted,
        moved: bool,
    ) -> (&'w String, &'w Wanted, Result<Arc<WasmFunction>, String>) {
        let outcome = tokio::time::timeout(LOAD_DEADLINE, self.load(name, want, moved))
            .await
            .unwrap_or_else(|_| {
                Err(format!(
                    "pulling, compiling and starting took longer than {}s",
                    LOAD_DEADLINE.as_secs()
                ))
            });
        (name, want, outcome)
    }

    /// A Warning event on `revision`: this replica cannot serve it.
    async fn report_failure(
        &self,
        view: &View<'_>,
        recorder: &Recorder,
        revision: &str,
        error: &str,
    ) {
        let Some(found) = view.revisions.get(&reflector::ObjectRef::new(revision)) else {
            return;
        };
        let event = Event {
            type_: EventType::Warning,
            reason: "LoadFunction".into(),
            note: Some(super::bounded_message(&format!(
                "replica {} cannot serve this revision: {error}",
                self.identity
            ))),
            action: "Load".into(),
            secondary: None,
        };
        // An event is a courtesy: failing to record one is logged, not fatal.
        if let Err(e) = recorder.publish(&event, &found.object_ref(&())).await {
            tracing::warn!(
                "cannot record an event on {}: {}",
                super::for_log(revision),
                super::for_log(&e.to_string())
            );
        }
    }

    /// Pulls and compiles one function, and checks that it starts. A tag
    /// that has `moved` is pulled again even if the cache has it.
    async fn load(
        &self,
        name: &str,
        want: &Wanted,
        moved: bool,
    ) -> Result<Arc<WasmFunction>, String> {
        let mut registry = self.registry.clone();
        let secrets = Api::<Secret>::namespaced(self.client.clone(), &self.namespace);
        for secret in &want.pull_secrets {
            let found = secrets
                .get_opt(secret)
                .await
                .map_err(|e| format!("cannot get pull secret {secret}: {e}"))?
                .ok_or_else(|| format!("pull secret {secret} does not exist"))?;
            if let Some(config) = secret_data(&found, ".dockerconfigjson") {
                registry
                    .docker_configs
                    .push((format!("pull secret {}/{secret}", self.namespace), config));
            }
        }
        let policy = if moved {
            xfn_oci::PullPolicy::Always
        } else {
            xfn_oci::PullPolicy::IfNotPresent
        };
        let pulled = xfn_oci::resolve(&want.image, policy, &registry)
            .await
            .map_err(|e| e.to_string())?;
        let runtime = self.runtime.clone();
        let name = name.to_owned();
        tokio::task::spawn_blocking(move || {
            let function = runtime
                .load(&name, &pulled.wasm)
                .map_err(|e| e.to_string())?;
            function.probe().map_err(|e| e.to_string())?;
            Ok(Arc::new(function))
        })
        .await
        .map_err(|e| format!("loading failed: {e}"))?
    }
}

/// The stores a replica reads.
struct View<'a> {
    revisions: &'a Store<FunctionRevision>,
    services: &'a Store<Service>,
    secrets: &'a Store<Secret>,
    root_ca: &'a Store<Secret>,
}

impl View<'_> {
    /// What the stores hold now.
    fn snapshot(&self) -> Snapshot {
        Snapshot {
            revisions: self.revisions.state(),
            services: self.services.state(),
            secrets: self.secrets.state(),
            root_ca: self
                .root_ca
                .state()
                .into_iter()
                .find(|s| s.name_any() == ROOT_CA_SECRET)
                .and_then(|s| secret_data(&s, "tls.crt")),
        }
    }
}

/// The stores' objects at one moment, for the plans.
struct Snapshot {
    revisions: Vec<Arc<FunctionRevision>>,
    services: Vec<Arc<Service>>,
    secrets: Vec<Arc<Secret>>,
    root_ca: Option<Vec<u8>>,
}

impl Snapshot {
    fn cluster(&self) -> Cluster<'_> {
        Cluster {
            revisions: &self.revisions,
            services: &self.services,
            secrets: &self.secrets,
            root_ca: self.root_ca.as_deref(),
        }
    }
}

/// The functions a replica serves now, and those it could not load.
struct FunctionState {
    recorder: Recorder,
    loaded: HashMap<String, Loaded>,
    /// The last failure by function: revision and error, reported once.
    failures: HashMap<String, (String, String)>,
}

fn log_watch_error<K>(what: &'static str) -> impl FnMut(Result<watcher::Event<K>, watcher::Error>) {
    move |event| {
        if let Err(e) = event {
            tracing::warn!("watching {what}: {}", super::for_log(&e.to_string()));
        }
    }
}
