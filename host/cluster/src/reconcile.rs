//! The leader's work for one FunctionRevision: apply what its function
//! needs to run, and say in the revision's status where Crossplane reaches
//! it and whether it is healthy.
//!
//! It follows Crossplane's runtime reconciler
//! (`internal/controller/pkg/runtime/reconciler.go`, v2.2.4): an Inactive
//! revision loses its Deployment (the Service and Secret stay until the
//! revision goes); an Active one gets its Service, TLS Secret and endpoint
//! first, then waits for `RevisionHealthy`, then (for a container function)
//! its ServiceAccount and Deployment, whose `Available` condition is the
//! runtime's health. A problem the user must fix (a missing pull secret, a
//! package that can't be read, no root CA yet) becomes `RuntimeHealthy=False`
//! with the reason, and a Warning event on the revision.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Secret, Service, ServiceAccount};
use kube::api::{ApiResource, DeleteParams, DynamicObject, Patch, PatchParams};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::{Api, Client, Resource, ResourceExt};
use serde_json::Value;

use super::RUNTIME_HEALTHY;
use super::crd::{DeploymentRuntimeConfig, Function as FunctionObject, FunctionRevision};
use super::objects::{self, Inputs, Placement};
use xfn_grpc::tls::{CertificateAuthority, TlsFiles};

/// The field manager of everything the controller applies.
pub const FIELD_MANAGER: &str = "xfn";
/// The Secret holding Crossplane's CA (`tls.crt`, `tls.key`).
pub const ROOT_CA_SECRET: &str = "crossplane-root-ca";
use xfn_catalog::annotations::TLS_NAMES as TLS_NAMES_ANNOTATION;
/// The DeploymentRuntimeConfig of a Function that names none.
const DEFAULT_RUNTIME_CONFIG: &str = "default";
/// The data key of a `kubernetes.io/dockerconfigjson` Secret.
const DOCKER_CONFIG_KEY: &str = ".dockerconfigjson";

/// How long to wait before looking again at a revision with a problem.
pub const RETRY: Duration = Duration::from_secs(30);

/// What a revision's package holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PackageKind {
    /// A wasm component xfn serves itself.
    Wasm,
    /// A container image, run as Crossplane would run it.
    Container,
}

/// Reads a package to tell its kind; a wasm package is also checked to be
/// one xfn can run.
#[async_trait::async_trait]
pub trait PackageProbe: Send + Sync {
    /// The kind of package `image`, pulled with `docker_configs` (the
    /// `.dockerconfigjson` documents of its pull secrets, each with a name
    /// for errors), or why it can't be used.
    async fn probe(
        &self,
        image: &str,
        docker_configs: &[(String, Vec<u8>)],
    ) -> Result<PackageKind, String>;
}

/// A failure to talk to the API server: retried with backoff.
#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    /// A request to the API server failed.
    #[error("{action}: {error}")]
    Api {
        /// What was being done.
        action: String,
        /// The cause (its text is part of the message).
        error: kube::Error,
    },
}

impl ReconcileError {
    /// The error's kind as a metric label.
    pub fn metric_label(&self) -> &'static str {
        match self {
            ReconcileError::Api { .. } => "api_error",
        }
    }
}

fn api_error(action: impl Into<String>) -> impl FnOnce(kube::Error) -> ReconcileError {
    let action = action.into();
    move |error| ReconcileError::Api { action, error }
}

/// Something the user must fix, reported on the revision.
#[derive(Debug)]
struct Problem {
    reason: &'static str,
    message: String,
}

impl Problem {
    fn new(reason: &'static str, message: impl Into<String>) -> Problem {
        Problem {
            reason,
            message: message.into(),
        }
    }
}

/// What a reconcile decided, for the controller and for tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The revision is Inactive: its Deployment, if any, is gone.
    Deactivated,
    /// The function runs: Crossplane may call it at `endpoint`.
    Healthy {
        /// The package's kind.
        kind: PackageKind,
        /// The endpoint written to the revision.
        endpoint: String,
    },
    /// Not (yet) healthy, for the reason given; looked at again later.
    Unhealthy {
        /// Why.
        message: String,
    },
}

/// The leader's writer: applies runtime objects and revision status.
pub struct Writer {
    client: Client,
    placement: Placement,
    packages: Arc<dyn PackageProbe>,
    recorder: Recorder,
}

impl Writer {
    /// A writer in `placement.namespace`, reporting events as `instance`.
    pub fn new(
        client: Client,
        placement: Placement,
        packages: Arc<dyn PackageProbe>,
        instance: &str,
    ) -> Writer {
        let reporter = Reporter {
            controller: "xfn".into(),
            instance: Some(instance.to_owned()),
        };
        Writer {
            recorder: Recorder::new(client.clone(), reporter),
            client,
            placement,
            packages,
        }
    }

    fn namespaced<K>(&self) -> Api<K>
    where
        K: Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        K::DynamicType: Default,
    {
        Api::namespaced(self.client.clone(), &self.placement.namespace)
    }

    /// Brings `revision`'s runtime to what it should be and records the
    /// result in its status.
    pub async fn reconcile(&self, revision: &FunctionRevision) -> Result<Outcome, ReconcileError> {
        if !revision.is_active() {
            self.deactivate(revision).await?;
            return Ok(Outcome::Deactivated);
        }
        let outcome = match self.configure(revision).await? {
            Ok((kind, endpoint, health)) => {
                self.write_status(
                    revision,
                    Some(&endpoint),
                    health.as_ref().err().map(String::as_str),
                )
                .await?;
                match health {
                    Ok(()) => {
                        if revision
                            .condition(RUNTIME_HEALTHY)
                            .is_none_or(|c| c.status != "True")
                        {
                            self.event(
                                revision,
                                EventType::Normal,
                                "SyncPackage",
                                "Successfully configured package revision",
                            )
                            .await;
                        }
                        Outcome::Healthy { kind, endpoint }
                    }
                    Err(message) => Outcome::Unhealthy { message },
                }
            }
            Err(problem) => {
                let endpoint = revision.status.as_ref().and_then(|s| s.endpoint.clone());
                self.write_status(revision, endpoint.as_deref(), Some(&problem.message))
                    .await?;
                self.event(
                    revision,
                    EventType::Warning,
                    problem.reason,
                    &problem.message,
                )
                .await;
                Outcome::Unhealthy {
                    message: problem.message,
                }
            }
        };
        Ok(outcome)
    }

    /// Applies the Service and Secret (and, for a container function, the
    /// ServiceAccount and Deployment); returns the kind, the endpoint and
    /// the runtime's health.
    async fn configure(
        &self,
        revision: &FunctionRevision,
    ) -> Result<Result<(PackageKind, String, Result<(), String>), Problem>, ReconcileError> {
        let Some(function) = revision.function_name() else {
            return Ok(Err(Problem::new(
                "InvalidRevision",
                format!(
                    "the revision has no {} label naming its Function",
                    super::crd::LABEL_PACKAGE
                ),
            )));
        };
        let Some(image) = revision.image() else {
            return Ok(Err(Problem::new(
                "InvalidRevision",
                "the revision has no spec.image",
            )));
        };
        let function_object = match self.get_decoded::<FunctionObject>(function).await? {
            None => None,
            Some(Ok(found)) => Some(found),
            Some(Err(e)) => {
                return Ok(Err(Problem::new(
                    "InvalidFunction",
                    format!("cannot read Function {function}: {e}"),
                )));
            }
        };
        let named = function_object
            .as_ref()
            .and_then(|f| f.spec.runtime_config_ref.as_ref())
            .map(|r| r.name.as_str())
            .filter(|name| !name.is_empty());
        let config_name = named.unwrap_or(DEFAULT_RUNTIME_CONFIG).to_owned();
        let runtime_config = match self
            .get_decoded::<DeploymentRuntimeConfig>(&config_name)
            .await?
        {
            Some(Ok(found)) => Some(found),
            Some(Err(e)) => {
                return Ok(Err(Problem::new(
                    "InvalidRuntimeConfig",
                    format!("cannot read DeploymentRuntimeConfig {config_name}: {e}"),
                )));
            }
            // Crossplane makes `default` itself; without it, Crossplane's
            // own defaults apply.
            None if named.is_none() => None,
            None => {
                return Ok(Err(Problem::new(
                    "MissingRuntimeConfig",
                    format!(
                        "Function {function} names DeploymentRuntimeConfig {config_name}, which does not exist"
                    ),
                )));
            }
        };
        let inputs = Inputs {
            revision,
            function,
            function_object: function_object.as_ref(),
            runtime_config: runtime_config.as_ref(),
        };

        let docker_configs = match self
            .docker_configs(revision, function_object.as_ref())
            .await?
        {
            Ok(configs) => configs,
            Err(problem) => return Ok(Err(problem)),
        };
        let kind = match self.packages.probe(image, &docker_configs).await {
            Ok(kind) => kind,
            Err(reason) => {
                return Ok(Err(Problem::new(
                    "UnusablePackage",
                    format!("cannot use package {image}: {reason}"),
                )));
            }
        };
        let ca = match self.certificate_authority().await? {
            Ok(ca) => ca,
            Err(problem) => return Ok(Err(problem)),
        };

        let wasm = kind == PackageKind::Wasm;
        let service_name = inputs.service_name();
        self.apply::<Service>(
            &service_name,
            &objects::service(&inputs, &self.placement, wasm),
        )
        .await?;
        if let Err(problem) = self.ensure_tls_secret(&inputs, &ca).await? {
            return Ok(Err(problem));
        }
        let endpoint = objects::endpoint(&service_name, &self.placement.namespace);

        if revision
            .condition("RevisionHealthy")
            .is_none_or(|c| c.status != "True")
        {
            return Ok(Ok((
                kind,
                endpoint,
                Err("Package revision is not healthy yet".to_owned()),
            )));
        }
        let health = match kind {
            PackageKind::Wasm => Ok(()),
            PackageKind::Container => {
                let account = objects::service_account(&inputs, &self.placement);
                self.apply::<ServiceAccount>(&objects::service_account_name(&inputs), &account)
                    .await?;
                let deployment = objects::deployment(&inputs, &self.placement, image);
                let name = deployment["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                let applied: Deployment = self.apply(&name, &deployment).await?;
                deployment_health(&applied)
            }
        };
        Ok(Ok((kind, endpoint, health)))
    }

    /// The cluster-scoped object `name` of kind `K`, if it exists, read as
    /// JSON and then decoded: an object that can't be decoded is the
    /// user's to fix (reported on the revision), not an API failure to
    /// retry in silence.
    async fn get_decoded<K>(&self, name: &str) -> Result<Option<Result<K, String>>, ReconcileError>
    where
        K: Resource<DynamicType = (), Scope = kube::core::ClusterResourceScope>
            + serde::de::DeserializeOwned,
    {
        let resource = ApiResource::erase::<K>(&());
        let found = Api::<DynamicObject>::all_with(self.client.clone(), &resource)
            .get_opt(name)
            .await
            .map_err(api_error(format!("cannot get {} {name}", resource.kind)))?;
        Ok(found.map(|object| {
            serde_json::to_value(object)
                .and_then(serde_json::from_value)
                .map_err(|e| e.to_string())
        }))
    }

    /// The `.dockerconfigjson` of each pull secret the revision names.
    async fn docker_configs(
        &self,
        revision: &FunctionRevision,
        function: Option<&FunctionObject>,
    ) -> Result<Result<Vec<(String, Vec<u8>)>, Problem>, ReconcileError> {
        let names = revision
            .spec
            .package_pull_secrets
            .as_ref()
            .or_else(|| function?.spec.package_pull_secrets.as_ref());
        let secrets = self.namespaced::<Secret>();
        let mut configs = Vec::new();
        for name in names.into_iter().flatten().map(|s| s.name.as_str()) {
            let found = secrets
                .get_opt(name)
                .await
                .map_err(api_error(format!("cannot get pull secret {name}")))?;
            let config = found
                .as_ref()
                .and_then(|s| s.data.as_ref())
                .and_then(|d| d.get(DOCKER_CONFIG_KEY));
            match (found.is_some(), config) {
                (_, Some(config)) => configs.push((
                    format!("pull secret {}/{name}", self.placement.namespace),
                    config.0.clone(),
                )),
                (false, None) => {
                    return Ok(Err(Problem::new(
                        "MissingPullSecret",
                        format!(
                            "pull secret {name} does not exist in namespace {}",
                            self.placement.namespace
                        ),
                    )));
                }
                (true, None) => {
                    return Ok(Err(Problem::new(
                        "InvalidPullSecret",
                        format!("pull secret {name} has no {DOCKER_CONFIG_KEY} key"),
                    )));
                }
            }
        }
        Ok(Ok(configs))
    }

    /// Crossplane's CA, from the `crossplane-root-ca` Secret.
    async fn certificate_authority(
        &self,
    ) -> Result<Result<CertificateAuthority, Problem>, ReconcileError> {
        let namespace = &self.placement.namespace;
        let secret = self
            .namespaced::<Secret>()
            .get_opt(ROOT_CA_SECRET)
            .await
            .map_err(api_error(format!("cannot get Secret {ROOT_CA_SECRET}")))?;
        let Some(secret) = secret else {
            return Ok(Err(Problem::new(
                "MissingRootCA",
                format!(
                    "waiting for Crossplane's CA: Secret {namespace}/{ROOT_CA_SECRET} does not exist yet"
                ),
            )));
        };
        let field = |key: &str| {
            secret
                .data
                .as_ref()
                .and_then(|d| d.get(key))
                .map(|v| v.0.as_slice())
                .filter(|v| !v.is_empty())
        };
        let missing: Vec<&str> = ["tls.crt", "tls.key"]
            .into_iter()
            .filter(|key| field(key).is_none())
            .collect();
        if !missing.is_empty() {
            return Ok(Err(Problem::new(
                "MissingRootCA",
                format!(
                    "Secret {namespace}/{ROOT_CA_SECRET} has no {} yet",
                    missing.join(" and ")
                ),
            )));
        }
        let invalid = |reason: String| {
            Problem::new(
                "InvalidRootCA",
                format!("Secret {namespace}/{ROOT_CA_SECRET}: {reason}"),
            )
        };
        let text = |key: &str| super::root_ca_text(key, field(key).unwrap_or_default());
        let (cert, key) = match (text("tls.crt"), text("tls.key")) {
            (Ok(cert), Ok(key)) => (cert, key),
            (Err(reason), _) | (_, Err(reason)) => return Ok(Err(invalid(reason))),
        };
        Ok(CertificateAuthority::from_pem(cert, key).map_err(|e| invalid(e.to_string())))
    }

    /// Issues the function's server certificate, unless its Secret already
    /// holds one from the current CA for the current names.
    async fn ensure_tls_secret(
        &self,
        inputs: &Inputs<'_>,
        ca: &CertificateAuthority,
    ) -> Result<Result<(), Problem>, ReconcileError> {
        let name = objects::tls_secret_name(inputs.function);
        let names = objects::service_dns_names(&inputs.service_name(), &self.placement.namespace);
        let names_text = names.join(",");
        let existing = self
            .namespaced::<Secret>()
            .get_opt(&name)
            .await
            .map_err(api_error(format!("cannot get Secret {name}")))?;
        let current = existing.as_ref().is_some_and(|s| {
            let data = s.data.as_ref();
            let has = |k: &str| data.is_some_and(|d| d.get(k).is_some_and(|v| !v.0.is_empty()));
            has("tls.crt")
                && has("tls.key")
                && data.and_then(|d| d.get("ca.crt")).map(|v| v.0.as_slice())
                    == Some(ca.cert_pem().as_bytes())
                && s.annotations().get(TLS_NAMES_ANNOTATION) == Some(&names_text)
        });
        if current {
            return Ok(Ok(()));
        }
        let files: TlsFiles = match ca.issue_server(&names) {
            Ok(files) => files,
            Err(e) => return Ok(Err(Problem::new("CertificateFailed", e.to_string()))),
        };
        let mut secret = objects::tls_secret(inputs, &self.placement, &files);
        secret["metadata"]["annotations"] = serde_json::json!({ TLS_NAMES_ANNOTATION: names_text });
        self.apply::<Secret>(&name, &secret).await?;
        Ok(Ok(()))
    }

    /// Deletes an Inactive revision's Deployment, if it has one.
    async fn deactivate(&self, revision: &FunctionRevision) -> Result<(), ReconcileError> {
        let deployments = self.namespaced::<Deployment>();
        let uid = revision.uid();
        let owned = |d: &Deployment| {
            d.owner_references()
                .iter()
                .any(|o| Some(&o.uid) == uid.as_ref())
        };
        let selector = format!("{}={}", super::crd::LABEL_REVISION, revision.name_any());
        let list = deployments
            .list(&kube::api::ListParams::default().labels(&selector))
            .await
            .map_err(api_error("cannot list Deployments"))?;
        for deployment in list.items.iter().filter(|d| owned(d)) {
            let name = deployment.name_any();
            match deployments.delete(&name, &DeleteParams::background()).await {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(e) => return Err(api_error(format!("cannot delete Deployment {name}"))(e)),
            }
        }
        Ok(())
    }

    /// Server-side applies `object` as `name`.
    async fn apply<K>(&self, name: &str, object: &Value) -> Result<K, ReconcileError>
    where
        K: Resource<Scope = k8s_openapi::NamespaceResourceScope>
            + Clone
            + serde::de::DeserializeOwned
            + std::fmt::Debug,
        K::DynamicType: Default,
    {
        let params = PatchParams::apply(FIELD_MANAGER).force();
        self.namespaced::<K>()
            .patch(name, &params, &Patch::Apply(object))
            .await
            .map_err(api_error(format!(
                "cannot apply {} {name}",
                K::kind(&K::DynamicType::default())
            )))
    }

    async fn write_status(
        &self,
        revision: &FunctionRevision,
        endpoint: Option<&str>,
        problem: Option<&str>,
    ) -> Result<(), ReconcileError> {
        let now = k8s_openapi::jiff::Timestamp::now().to_string();
        let status = objects::runtime_status(revision, endpoint, problem.map_or(Ok(()), Err), &now);
        let params = PatchParams::apply(FIELD_MANAGER).force();
        Api::<FunctionRevision>::all(self.client.clone())
            .patch_status(&revision.name_any(), &params, &Patch::Apply(&status))
            .await
            .map_err(api_error(format!(
                "cannot write the status of FunctionRevision {}",
                revision.name_any()
            )))?;
        Ok(())
    }

    async fn event(&self, revision: &FunctionRevision, type_: EventType, reason: &str, note: &str) {
        let event = Event {
            type_,
            reason: reason.to_owned(),
            note: Some(super::bounded_message(note)),
            action: "Reconcile".into(),
            secondary: None,
        };
        // An event is a courtesy: failing to record one is logged, not fatal.
        if let Err(e) = self
            .recorder
            .publish(&event, &revision.object_ref(&()))
            .await
        {
            tracing::warn!(
                "cannot record an event on {}: {}",
                super::for_log(&revision.name_any()),
                super::for_log(&e.to_string())
            );
        }
    }
}

/// A container function's health, as Crossplane reads it from its
/// Deployment (`runtime_function.go`: the `Available` condition).
fn deployment_health(deployment: &Deployment) -> Result<(), String> {
    let available = deployment
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "Available"));
    match available {
        None => {
            Err("function package deployment has no condition of type \"Available\" yet".into())
        }
        Some(c) if c.status == "True" => Ok(()),
        Some(c) => Err(format!(
            "function package deployment is unavailable with message: {}",
            c.message.as_deref().unwrap_or_default()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_api_error_says_its_cause_once() {
        // kube's own errors repeat their causes; this one has none.
        let error = api_error("cannot list FunctionRevisions")(
            kube::Error::LinesCodecMaxLineLengthExceeded,
        );
        let mut text = error.to_string();
        let mut cause = std::error::Error::source(&error);
        while let Some(c) = cause {
            text.push_str(&format!(": {c}"));
            cause = c.source();
        }
        assert_eq!(text.matches("Error finding newline").count(), 1, "{text}");
        assert!(
            text.starts_with("cannot list FunctionRevisions: "),
            "{text}"
        );
    }
}
