//! `xfn controller` as a library type: one replica of xfn as Crossplane's
//! External function runtime, started from a [`RuntimeConfig`] and run
//! until told to stop.
//!
//! Every replica serves the wasm functions ([`Replica`]); the one holding
//! the Lease also reconciles FunctionRevisions ([`controller`]). Stopping
//! is ordered so that nothing is lost: the gRPC server stops taking calls
//! and drains those in flight while the leader stops reconciling (within
//! [`STOP_RECONCILING`]); only then is the Lease released, so that another
//! replica leads at once.
//!
//! [`controller`]: crate::controller

use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use kube::Client;
use tokio::sync::watch;
use xfn_grpc::sni::DynamicTls;
use xfn_grpc::{FunctionTable, ServeError, Server, ServerConfig};
use xfn_runtime::WasmRuntime;

use crate::controller::{self, STOP_RECONCILING};
use crate::lease::{self, LeaseError};
use crate::objects::Placement;
use crate::packages::OciProbe;
use crate::reconcile::Writer;
use crate::serving::Replica;

/// What a replica needs: the API, who it is, where it serves, and how it
/// loads functions.
pub struct RuntimeConfig {
    /// The Kubernetes API.
    pub client: Client,
    /// Crossplane's namespace, where the functions' Services and Secrets go.
    pub namespace: String,
    /// This replica's name in leader election (the pod's name).
    pub identity: String,
    /// The labels of xfn's pods: wasm functions' Services select them.
    pub pod_labels: BTreeMap<String, String>,
    /// How long a leader holds the Lease without renewing it.
    pub lease_duration: Duration,
    /// The gRPC server (its TLS is the replica's, by SNI, and its
    /// namespace is `namespace`).
    pub server: ServerConfig,
    /// Compiles components.
    pub wasm: WasmRuntime,
    /// How to pull packages.
    pub registry: xfn_oci::RegistryOptions,
}

/// Why a replica could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The gRPC server could not start, or failed.
    #[error(transparent)]
    Serve(#[from] ServeError),
    /// Leader election could not start.
    #[error("cannot take part in leader election: {0}")]
    Lease(#[from] LeaseError),
    /// The gRPC server's task ended abnormally.
    #[error("the gRPC server's task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
}

/// A running replica.
pub struct ExternalRuntime {
    server: Server,
    ready: watch::Receiver<bool>,
    leader: tokio::task::JoinHandle<()>,
    shutdown: watch::Sender<bool>,
    election: lease::Election,
    replica: tokio::task::JoinHandle<()>,
}

impl ExternalRuntime {
    /// Binds the gRPC server, joins the election and starts watching: the
    /// leader's reconciles and this replica's serving begin.
    pub async fn start(config: RuntimeConfig) -> Result<ExternalRuntime, RuntimeError> {
        let tls = Arc::new(DynamicTls::new());
        let server = Server::bind(
            ServerConfig {
                dynamic_tls: Some(tls.clone()),
                namespace: Some(config.namespace.clone()),
                ..config.server
            },
            FunctionTable::new(),
        )
        .await?;
        let election = lease::elect(
            config.client.clone(),
            &config.namespace,
            &config.identity,
            config.lease_duration,
        )
        .await?;
        let writer = Arc::new(Writer::new(
            config.client.clone(),
            Placement {
                namespace: config.namespace.clone(),
                pod_labels: config.pod_labels.clone(),
            },
            Arc::new(OciProbe::new(config.registry.clone())),
            &config.identity,
        ));
        let (shutdown, stopping) = watch::channel(false);
        let leader = tokio::spawn(controller::run_while_leading(
            config.client.clone(),
            config.namespace.clone(),
            writer,
            election.leading.clone(),
            stopping,
        ));
        let (ready_tx, ready) = watch::channel(false);
        let replica = tokio::spawn(
            Replica {
                client: config.client,
                identity: config.identity,
                namespace: config.namespace,
                pod_labels: config.pod_labels,
                runtime: config.wasm,
                registry: config.registry,
                server: server.handle(),
                tls,
                ready: ready_tx,
            }
            .run(),
        );
        Ok(ExternalRuntime {
            server,
            ready,
            leader,
            shutdown,
            election,
            replica,
        })
    }

    /// Where the gRPC server listens.
    pub fn local_addr(&self) -> SocketAddr {
        self.server.local_addr()
    }

    /// Turns true once the functions present at start are loaded (or
    /// failed to): the replica's readiness.
    pub fn ready(&self) -> watch::Receiver<bool> {
        self.ready.clone()
    }

    /// Serves until `stop` completes (or the server fails), then stops in
    /// order: calls in flight drain while the leader stops reconciling,
    /// and only then is the Lease released.
    pub async fn run_until(self, stop: impl Future<Output = ()>) -> Result<(), RuntimeError> {
        let ExternalRuntime {
            server,
            ready: _,
            mut leader,
            shutdown,
            election,
            replica,
        } = self;
        let handle = server.handle();
        let mut serving = tokio::spawn(server.serve());
        let served = tokio::select! {
            () = stop => None,
            served = &mut serving => Some(served),
        };
        // Calls in flight drain while the leader hands over.
        handle.shutdown().await;
        shutdown.send_replace(true);
        if tokio::time::timeout(STOP_RECONCILING, &mut leader)
            .await
            .is_err()
        {
            tracing::warn!(
                "reconciles still running after {}s: stopping them",
                STOP_RECONCILING.as_secs()
            );
            leader.abort();
            let _ = leader.await;
        }
        // Only now, with nothing left writing, hand the Lease over.
        election.leave().await;
        replica.abort();
        let served = match served {
            Some(served) => served,
            None => serving.await,
        };
        served??;
        Ok(())
    }
}
