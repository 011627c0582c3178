//! The standard gRPC health service (`grpc.health.v1.Health`): the server
//! as a whole (service `""`), the function runner services, and each
//! function by name.

use tonic_health::ServingStatus;
use tonic_health::pb::health_server::HealthServer;
use tonic_health::server::{HealthReporter, HealthService};

use super::router::FunctionTable;

/// The health statuses a server reports.
#[derive(Debug, Clone)]
pub(crate) struct Health {
    reporter: HealthReporter,
}

/// Services that are up whenever the server is: the server itself and the
/// function runner services.
const SERVER_SERVICES: [&str; 3] = [
    "",
    xfn_proto::V1_SERVICE_NAME,
    xfn_proto::V1BETA1_SERVICE_NAME,
];

impl Health {
    /// Reports the server and every function in `functions` as serving.
    pub async fn new(functions: &FunctionTable) -> Health {
        let health = Health {
            reporter: HealthReporter::new(),
        };
        for service in SERVER_SERVICES.into_iter().chain(functions.names()) {
            health
                .reporter
                .set_service_status(service, ServingStatus::Serving)
                .await;
        }
        health
    }

    /// A health service to add to a router.
    pub fn service(&self) -> HealthServer<HealthService> {
        HealthServer::new(HealthService::from_health_reporter(self.reporter.clone()))
    }

    /// Reports the functions of `new` as serving, and forgets those of `old`
    /// that are gone (a check of them then answers `NOT_FOUND`).
    pub async fn replace(&self, old: &FunctionTable, new: &FunctionTable) {
        let mut reporter = self.reporter.clone();
        for gone in old.names().filter(|n| new.get(n).is_none()) {
            reporter.clear_service_status(gone).await;
        }
        for name in new.names() {
            reporter
                .set_service_status(name, ServingStatus::Serving)
                .await;
        }
    }

    /// Reports everything as not serving, before the server drains.
    pub async fn shutting_down(&self, functions: &FunctionTable) {
        for service in SERVER_SERVICES.into_iter().chain(functions.names()) {
            self.reporter
                .set_service_status(service, ServingStatus::NotServing)
                .await;
        }
    }
}
