//! Leader election with a `coordination.k8s.io` Lease: one replica writes
//! objects and status, every replica serves.

use std::time::Duration;

use kube::Client;
use kube_lease_manager::LeaseManagerBuilder;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// The Lease xfn's replicas compete for.
pub const LEASE_NAME: &str = "xfn-controller";

/// How long a leader holds the Lease without renewing it.
pub const LEASE_DURATION: Duration = Duration::from_secs(15);

/// Why leader election could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot take part in leader election (Lease {namespace}/{LEASE_NAME}): {reason}")]
pub struct LeaseError {
    namespace: String,
    reason: String,
}

/// This replica's part in the election.
pub struct Election {
    /// Whether this replica leads.
    pub leading: watch::Receiver<bool>,
    task:
        JoinHandle<Result<kube_lease_manager::LeaseManager, kube_lease_manager::LeaseManagerError>>,
}

impl Election {
    /// Stops renewing the Lease at once, without releasing it, as a
    /// replica that dies does: another takes over once the Lease expires.
    pub fn abandon(&self) {
        self.task.abort();
    }

    /// Leaves the election, releasing the Lease if this replica holds it.
    pub async fn leave(self) {
        drop(self.leading);
        match self.task.await {
            Ok(Ok(_)) => tracing::info!("left leader election"),
            Ok(Err(e)) => tracing::warn!("leader election ended with an error: {e}"),
            Err(_) => {}
        }
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
    let seconds = duration.as_secs().max(2);
    let manager = LeaseManagerBuilder::new(client, LEASE_NAME)
        .with_namespace(namespace)
        .with_identity(identity)
        .with_duration(seconds)
        .with_grace((seconds / 3).max(1))
        // One field manager per replica: a replica can only take the Lease
        // from another through the Lease's own expiry rules.
        .with_field_manager(format!("xfn-lease-{identity}"))
        .build()
        .await
        .map_err(|e| LeaseError {
            namespace: namespace.to_owned(),
            reason: e.to_string(),
        })?;
    let (leading, task) = manager.watch().await;
    Ok(Election { leading, task })
}
