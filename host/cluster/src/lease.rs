//! Leader election with a `coordination.k8s.io` Lease: one replica writes
//! objects and status, every replica serves.
//!
//! kube-lease-manager renews and takes the Lease; a follower it runs only
//! looks at the Lease again when the holder's term would end, so a Lease
//! released on shutdown would sit free for up to its whole duration. xfn
//! also watches the Lease: when a follower sees it released, it starts its
//! manager again at once, which takes the free Lease, so a rollout hands
//! leadership over in about a second.

use std::time::Duration;

use futures_util::StreamExt;
use k8s_openapi::api::coordination::v1::Lease;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client};
use kube_lease_manager::{LeaseManager, LeaseManagerBuilder};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// The Lease xfn's replicas compete for.
pub const LEASE_NAME: &str = "xfn-controller";

/// How long a leader holds the Lease without renewing it.
pub const LEASE_DURATION: Duration = Duration::from_secs(15);

/// Longest [`Election::leave`] waits for the Lease to be released: past
/// it, the Lease is left to expire.
pub const RELEASE_TIMEOUT: Duration = Duration::from_secs(5);

/// How long to wait before starting a failed lease manager again.
const RESTART_PAUSE: Duration = Duration::from_secs(1);

/// Why leader election could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot take part in leader election (Lease {namespace}/{LEASE_NAME}): {reason}")]
pub struct LeaseError {
    namespace: String,
    reason: String,
}

/// What the election's task is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Command {
    /// Take part.
    Run,
    /// Release the Lease if held, and stop.
    Leave,
    /// Stop renewing without releasing, as a replica that dies does.
    Abandon,
}

/// This replica's part in the election.
pub struct Election {
    /// Whether this replica leads.
    pub leading: watch::Receiver<bool>,
    command: watch::Sender<Command>,
    task: JoinHandle<()>,
}

impl Election {
    /// Stops renewing the Lease at once, without releasing it, as a
    /// replica that dies does: another takes over once the Lease expires.
    pub fn abandon(&self) {
        self.command.send_replace(Command::Abandon);
    }

    /// Leaves the election, releasing the Lease if this replica holds it,
    /// within [`RELEASE_TIMEOUT`] (past it the Lease is left to expire).
    ///
    /// Every clone of [`Election::leading`] may still be held: `leading`
    /// turns false once this replica no longer leads.
    pub async fn leave(self) {
        self.command.send_replace(Command::Leave);
        // The task bounds the release itself; this bound is a backstop.
        let mut task = self.task;
        match tokio::time::timeout(RELEASE_TIMEOUT + Duration::from_secs(1), &mut task).await {
            Ok(_) => {}
            Err(_) => {
                task.abort();
                tracing::warn!("leaving leader election took too long; the Lease will expire");
            }
        }
    }
}

/// What the election's task needs to start a lease manager.
#[derive(Clone)]
struct Params {
    client: Client,
    namespace: String,
    identity: String,
    seconds: u64,
}

impl Params {
    async fn manager(&self) -> Result<LeaseManager, LeaseError> {
        LeaseManagerBuilder::new(self.client.clone(), LEASE_NAME)
            .with_namespace(&self.namespace)
            .with_identity(&self.identity)
            .with_duration(self.seconds)
            .with_grace((self.seconds / 3).max(1))
            // One field manager per replica: a replica can only take the
            // Lease from another through the Lease's own expiry rules.
            .with_field_manager(format!("xfn-lease-{}", self.identity))
            .build()
            .await
            .map_err(|e| LeaseError {
                namespace: self.namespace.clone(),
                reason: e.to_string(),
            })
    }
}

/// Joins the election for the Lease in `namespace` as `identity` (the pod's
/// name), holding the Lease for `duration` between renewals.
pub async fn elect(
    client: Client,
    namespace: &str,
    identity: &str,
    duration: Duration,
) -> Result<Election, LeaseError> {
    let params = Params {
        client,
        namespace: namespace.to_owned(),
        identity: identity.to_owned(),
        seconds: duration.as_secs().max(2),
    };
    let manager = params.manager().await?;
    let (leading_tx, leading) = watch::channel(false);
    let (command, commands) = watch::channel(Command::Run);
    let task = tokio::spawn(take_part(params, manager, leading_tx, commands));
    Ok(Election {
        leading,
        command,
        task,
    })
}

/// Whether a Lease has no holder: released, or never taken.
fn is_free(lease: &Lease) -> bool {
    lease
        .spec
        .as_ref()
        .and_then(|s| s.holder_identity.as_deref())
        .is_none_or(str::is_empty)
}

/// Runs lease managers one after the other, passing on whether this
/// replica leads, until told to leave or abandon.
async fn take_part(
    params: Params,
    first: LeaseManager,
    leading: watch::Sender<bool>,
    mut commands: watch::Receiver<Command>,
) {
    // The Lease's changes: a follower seeing it released takes it at once.
    let mut released = watcher(
        Api::<Lease>::namespaced(params.client.clone(), &params.namespace),
        watcher::Config::default().fields(&format!("metadata.name={LEASE_NAME}")),
    )
    .default_backoff()
    .applied_objects()
    .filter_map(|lease| std::future::ready(lease.ok().filter(is_free).map(|_| ())))
    .boxed();
    let mut next = Some(first);
    loop {
        let manager = match next.take() {
            Some(manager) => manager,
            None => match params.manager().await {
                Ok(manager) => manager,
                Err(e) => {
                    tracing::warn!("{e}; trying again");
                    tokio::select! {
                        () = tokio::time::sleep(RESTART_PAUSE) => continue,
                        _ = commands.changed() => {}
                    }
                    // Told to stop while holding nothing.
                    leading.send_replace(false);
                    return;
                }
            },
        };
        let (mut state, mut task) = manager.watch().await;
        loop {
            tokio::select! {
                biased;
                changed = commands.changed() => {
                    let command = if changed.is_ok() { *commands.borrow_and_update() } else { Command::Leave };
                    match command {
                        Command::Run => continue,
                        Command::Abandon => {
                            task.abort();
                        }
                        Command::Leave => {
                            // The manager releases the Lease once every
                            // receiver of its state is gone.
                            drop(state);
                            match tokio::time::timeout(RELEASE_TIMEOUT, &mut task).await {
                                Ok(Ok(Ok(_))) => tracing::info!("left leader election"),
                                Ok(Ok(Err(e))) => {
                                    tracing::warn!("leaving leader election: {e}");
                                }
                                Ok(Err(_)) => {}
                                Err(_) => {
                                    task.abort();
                                    tracing::warn!(
                                        "could not release the Lease within {}s; it will expire",
                                        RELEASE_TIMEOUT.as_secs()
                                    );
                                }
                            }
                        }
                    }
                    leading.send_replace(false);
                    return;
                }
                changed = state.changed() => {
                    if changed.is_err() {
                        // The manager stopped on its own: start another.
                        leading.send_replace(false);
                        tokio::time::sleep(RESTART_PAUSE).await;
                        break;
                    }
                    let now = *state.borrow_and_update();
                    leading.send_if_modified(|was| std::mem::replace(was, now) != now);
                }
                Some(()) = released.next() => {
                    if !*state.borrow() {
                        // A follower's manager sleeps until the holder's term
                        // ends: a new one looks at the free Lease now.
                        tracing::debug!("the Lease was released: trying to take it");
                        task.abort();
                        break;
                    }
                }
            }
        }
    }
}
