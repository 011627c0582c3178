//! Running the [`Writer`] as a kube-rs controller, only while this replica
//! holds the leader Lease.
//!
//! Every replica serves; one writes. The leader reconciles each
//! FunctionRevision when it changes, when an object it made for it changes
//! (Services, Secrets and Deployments labelled as xfn's), and all of them
//! when `crossplane-root-ca` changes, so a rotated CA re-issues every
//! certificate. Losing the lease stops the controller at once; gaining it
//! again starts a fresh one.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Secret, Service};
use kube::runtime::controller::Action;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{Controller, WatchStreamExt, watcher};
use kube::{Api, Client, Resource, ResourceExt};
use tokio::sync::watch;
use tracing::Instrument as _;

use super::crd::FunctionRevision;
use super::objects::MANAGED_BY;
use super::reconcile::{Outcome, RETRY, ROOT_CA_SECRET, ReconcileError, Writer};

/// How often a healthy revision is looked at again, to catch drift.
const RESYNC: Duration = Duration::from_secs(600);
/// How long to wait after an API failure before trying a revision again.
const API_RETRY: Duration = Duration::from_secs(5);
/// Longest a shutdown waits for reconciles in flight before it stops them
/// and releases the Lease.
pub const STOP_RECONCILING: Duration = Duration::from_secs(10);

/// The longest a clean shutdown of `xfn controller` takes when a call may
/// run for `call_timeout`: calls in flight drain for `call_timeout` and
/// 5 s, while the leader stops reconciling and releases the Lease; the
/// pod's `terminationGracePeriodSeconds` must be longer.
pub fn shutdown_bound(call_timeout: Duration) -> Duration {
    let drain = call_timeout + Duration::from_secs(5);
    let hand_over = STOP_RECONCILING + super::lease::RELEASE_TIMEOUT + Duration::from_secs(1);
    drain.max(hand_over)
}

/// Revisions reconciled at once.
const CONCURRENCY: u16 = 8;

/// Runs the writer whenever `leading` is true, until `leading`'s sender is
/// dropped or `shutdown` turns true. On shutdown, reconciles in flight
/// finish first (the caller bounds how long it waits), then every receiver
/// of `leading` this holds is dropped.
pub async fn run_while_leading(
    client: Client,
    namespace: String,
    writer: Arc<Writer>,
    mut leading: watch::Receiver<bool>,
    shutdown: watch::Receiver<bool>,
) {
    loop {
        // The election is over (its sender is gone): so is the writer.
        if leading.has_changed().is_err() || *shutdown.borrow() {
            return;
        }
        // Wait to lead.
        while !*leading.borrow_and_update() {
            tokio::select! {
                changed = leading.changed() => if changed.is_err() { return },
                () = stopping(&shutdown) => return,
            }
        }
        tracing::info!("leading: reconciling FunctionRevisions");
        let mut lost = leading.clone();
        let stop = stopping(&shutdown);
        let lost = async move {
            let lost = async {
                while *lost.borrow_and_update() {
                    if lost.changed().await.is_err() {
                        return;
                    }
                }
            };
            tokio::select! {
                () = lost => {}
                () = stop => {}
            }
        };
        run(client.clone(), &namespace, writer.clone(), lost).await;
        tracing::info!("no longer leading: stopped reconciling");
    }
}

/// Completes once `shutdown` turns true (never, if its sender is dropped
/// first).
fn stopping(shutdown: &watch::Receiver<bool>) -> impl Future<Output = ()> + Send + Sync + 'static {
    let mut shutdown = shutdown.clone();
    async move {
        loop {
            if *shutdown.borrow_and_update() {
                return;
            }
            if shutdown.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
}

/// Runs the controller until `stop` completes.
async fn run(
    client: Client,
    namespace: &str,
    writer: Arc<Writer>,
    stop: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let managed = watcher::Config::default().labels(&format!("{}={}", MANAGED_BY.0, MANAGED_BY.1));
    let root_ca = watcher(
        Api::<Secret>::namespaced(client.clone(), namespace),
        watcher::Config::default().fields(&format!("metadata.name={ROOT_CA_SECRET}")),
    )
    .touched_objects()
    .filter_map(|s| std::future::ready(s.ok().map(|_| ())));
    Controller::new(
        Api::<FunctionRevision>::all(client.clone()),
        watcher::Config::default(),
    )
    .with_config(kube::runtime::controller::Config::default().concurrency(CONCURRENCY))
    .watches(
        Api::<Service>::namespaced(client.clone(), namespace),
        managed.clone(),
        owning_revision,
    )
    .watches(
        Api::<Secret>::namespaced(client.clone(), namespace),
        managed.clone(),
        owning_revision,
    )
    .watches(
        Api::<Deployment>::namespaced(client, namespace),
        managed,
        owning_revision,
    )
    .reconcile_all_on(root_ca)
    .graceful_shutdown_on(stop)
    .run(reconcile, error_policy, writer)
    .for_each(|result| {
        if let Err(e) = result {
            tracing::debug!("controller: {}", super::for_log(&e.to_string()));
        }
        std::future::ready(())
    })
    .await;
}

/// The revision that owns an object xfn made. The key has no namespace, as
/// FunctionRevisions are cluster-scoped, so one revision is one key.
fn owning_revision<K: Resource>(object: K) -> Option<ObjectRef<FunctionRevision>> {
    object
        .owner_references()
        .iter()
        .find(|o| o.kind == "FunctionRevision")
        .map(|o| ObjectRef::new(&o.name))
}

/// Reconciles one revision in a span of its own, counting the run, its
/// result and its duration (`xfn_reconciles_total`,
/// `xfn_reconcile_duration_seconds`).
async fn reconcile(
    revision: Arc<FunctionRevision>,
    writer: Arc<Writer>,
) -> Result<Action, ReconcileError> {
    let name = super::for_log(&revision.name_any());
    let span = tracing::info_span!("reconcile", revision = %name);
    let started = std::time::Instant::now();
    let outcome = writer.reconcile(&revision).instrument(span.clone()).await;
    let _entered = span.enter();
    let result = match &outcome {
        Ok(Outcome::Deactivated) => "deactivated",
        Ok(Outcome::Healthy { .. }) => "healthy",
        Ok(Outcome::Unhealthy { .. }) => "unhealthy",
        Err(error) => error.metric_label(),
    };
    xfn_runtime::metrics::record_reconcile(result, started.elapsed());
    let outcome = outcome?;
    tracing::debug!("{}", super::for_log(&format!("{outcome:?}")));
    Ok(match outcome {
        Outcome::Deactivated => Action::await_change(),
        Outcome::Healthy { .. } => Action::requeue(RESYNC),
        Outcome::Unhealthy { message } => {
            tracing::warn!("{name}: {}", super::for_log(&message));
            Action::requeue(RETRY)
        }
    })
}

fn error_policy(revision: Arc<FunctionRevision>, error: &ReconcileError, _: Arc<Writer>) -> Action {
    tracing::warn!(
        "{}: {}",
        super::for_log(&revision.name_any()),
        super::for_log(&error.to_string())
    );
    Action::requeue(API_RETRY)
}
