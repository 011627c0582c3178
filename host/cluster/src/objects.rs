//! The objects the controller applies for a FunctionRevision, as pure
//! functions of the revision, its Function and its DeploymentRuntimeConfig.
//!
//! For a container function these are what Crossplane's own Deployment
//! runtime makes (`internal/controller/pkg/runtime/runtime.go`,
//! `runtime_function.go`, `runtime_override_options.go`,
//! `runtime_defaults.go`, v2.2.4): a ServiceAccount, a Deployment, a headless
//! Service and a TLS server Secret. A wasm function gets only the Service
//! (selecting xfn's own pods) and the Secret. Every object is owned by the
//! revision, so Kubernetes removes it with the revision.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::crd::{
    DeploymentRuntimeConfig, Function, FunctionRevision, LABEL_FUNCTION, LABEL_REVISION,
    TemplateMeta,
};
use xfn_grpc::tls::TlsFiles;

/// The port Crossplane dials functions on.
pub const GRPC_PORT: u16 = 9443;
/// The port Crossplane's runtime declares for a function's metrics.
pub const METRICS_PORT: u16 = 8080;
/// The label xfn puts on every object it manages.
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "xfn");
/// The container Crossplane's runtime runs a function in.
pub const RUNTIME_CONTAINER: &str = "package-runtime";
/// Where the TLS server Secret is mounted in a function's pod.
const TLS_DIR: &str = "/tls/server";
const TLS_VOLUME: &str = "tls-server-certs";
/// The user and group Crossplane runs function containers as.
const RUN_AS: i64 = 2000;

/// Where xfn's shared pods run, and how to select them.
#[derive(Debug, Clone)]
pub struct Placement {
    /// Crossplane's namespace, where every runtime object goes.
    pub namespace: String,
    /// Labels that select xfn's serving pods.
    pub pod_labels: BTreeMap<String, String>,
}

/// What one revision needs, resolved from the API.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    /// The revision.
    pub revision: &'a FunctionRevision,
    /// Its Function (its package label).
    pub function: &'a str,
    /// The Function object, if it exists.
    pub function_object: Option<&'a Function>,
    /// Its DeploymentRuntimeConfig, if any.
    pub runtime_config: Option<&'a DeploymentRuntimeConfig>,
}

impl Inputs<'_> {
    fn template_service(&self) -> Option<&TemplateMeta> {
        self.runtime_config?
            .spec
            .service_template
            .as_ref()?
            .metadata
            .as_ref()
    }

    fn template_service_account(&self) -> Option<&TemplateMeta> {
        self.runtime_config?
            .spec
            .service_account_template
            .as_ref()?
            .metadata
            .as_ref()
    }

    /// The Service's name: the runtime config's, else the function's.
    pub fn service_name(&self) -> String {
        self.template_service()
            .and_then(|m| m.name.clone())
            .unwrap_or_else(|| self.function.to_owned())
    }

    /// The revision's name.
    pub fn revision_name(&self) -> String {
        self.revision.metadata.name.clone().unwrap_or_default()
    }

    /// The pull secrets: the revision's, else its Function's.
    fn pull_secrets(&self) -> Vec<Value> {
        let secrets = self
            .revision
            .spec
            .package_pull_secrets
            .as_ref()
            .or_else(|| self.function_object?.spec.package_pull_secrets.as_ref());
        secrets
            .into_iter()
            .flatten()
            .map(|s| json!({"name": s.name}))
            .collect()
    }

    fn pull_policy(&self) -> Option<String> {
        self.revision
            .spec
            .package_pull_policy
            .clone()
            .or_else(|| self.function_object?.spec.package_pull_policy.clone())
    }
}

/// The endpoint Crossplane dials for a Service in `namespace`.
pub fn endpoint(service: &str, namespace: &str) -> String {
    format!("dns:///{service}.{namespace}:{GRPC_PORT}")
}

/// The name of a function's TLS server Secret: `<function>-tls-server`,
/// cut to the 253 characters of a Kubernetes name.
pub fn tls_secret_name(function: &str) -> String {
    let mut name = format!("{function}-tls-server");
    name.truncate(253);
    name
}

/// The owner reference that makes an object the revision's.
pub fn owner_reference(revision: &FunctionRevision) -> Value {
    json!({
        "apiVersion": "pkg.crossplane.io/v1",
        "kind": "FunctionRevision",
        "name": revision.metadata.name,
        "uid": revision.metadata.uid,
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

fn labels_with(extra: Option<&BTreeMap<String, String>>) -> Map<String, Value> {
    let mut labels = Map::new();
    for (k, v) in extra.into_iter().flatten() {
        labels.insert(k.clone(), json!(v));
    }
    labels.insert(MANAGED_BY.0.into(), json!(MANAGED_BY.1));
    labels
}

fn metadata(
    name: &str,
    placement: &Placement,
    inputs: &Inputs<'_>,
    template: Option<&TemplateMeta>,
) -> Value {
    let mut meta = json!({
        "name": name,
        "namespace": placement.namespace,
        "labels": labels_with(template.and_then(|t| t.labels.as_ref())),
        "ownerReferences": [owner_reference(inputs.revision)],
    });
    if let Some(annotations) = template.and_then(|t| t.annotations.as_ref()) {
        meta["annotations"] = json!(annotations);
    }
    meta
}

/// The headless Service Crossplane dials: for a wasm function it selects
/// xfn's pods; for a container function, that function's own pods.
pub fn service(inputs: &Inputs<'_>, placement: &Placement, wasm: bool) -> Value {
    let selector = if wasm {
        json!(placement.pod_labels)
    } else {
        json!({
            LABEL_REVISION: inputs.revision_name(),
            LABEL_FUNCTION: inputs.function,
        })
    };
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(&inputs.service_name(), placement, inputs, inputs.template_service()),
        "spec": {
            "clusterIP": "None",
            "selector": selector,
            "ports": [{
                "name": "grpc",
                "protocol": "TCP",
                "port": GRPC_PORT,
                "targetPort": "grpc",
                "appProtocol": "tls",
            }],
        },
    })
}

/// The TLS server Secret holding `files`.
pub fn tls_secret(inputs: &Inputs<'_>, placement: &Placement, files: &TlsFiles) -> Value {
    use base64::Engine as _;
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata(&tls_secret_name(inputs.function), placement, inputs, None),
        "type": "Opaque",
        "data": {
            "tls.crt": b64(&files.cert),
            "tls.key": b64(&files.key),
            "ca.crt": b64(&files.ca),
        },
    })
}

/// The DNS names a function's server certificate covers, as Crossplane's
/// `DNSNamesForService`: `svc`, `svc.ns`, `svc.ns.svc`.
pub fn service_dns_names(service: &str, namespace: &str) -> Vec<String> {
    vec![
        service.to_owned(),
        format!("{service}.{namespace}"),
        format!("{service}.{namespace}.svc"),
    ]
}

/// The ServiceAccount of a container function's pods.
pub fn service_account(inputs: &Inputs<'_>, placement: &Placement) -> Value {
    let template = inputs.template_service_account();
    let name = service_account_name(inputs);
    json!({
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": metadata(&name, placement, inputs, template),
        "imagePullSecrets": inputs.pull_secrets(),
    })
}

/// The ServiceAccount's name: the runtime config's, else the revision's.
pub fn service_account_name(inputs: &Inputs<'_>) -> String {
    inputs
        .template_service_account()
        .and_then(|m| m.name.clone())
        .unwrap_or_else(|| inputs.revision_name())
}

/// The Deployment of a container function, as Crossplane's runtime builds
/// it: the runtime config's template first, then Crossplane's overrides in
/// its order (defaults fill only what is unset; namespace, owner, selector
/// and pull secrets always win; ports, volumes and env are added).
pub fn deployment(inputs: &Inputs<'_>, placement: &Placement, image: &str) -> Value {
    let template = inputs
        .runtime_config
        .and_then(|c| c.spec.deployment_template.as_ref());
    let meta = template.and_then(|t| t.metadata.as_ref());
    let name = meta
        .and_then(|m| m.name.clone())
        .unwrap_or_else(|| inputs.revision_name());
    let mut spec = template
        .and_then(|t| t.spec.clone())
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}));

    let selector = json!({
        LABEL_REVISION: inputs.revision_name(),
        LABEL_FUNCTION: inputs.function,
    });
    set_default(&mut spec, "replicas", json!(1));
    spec["selector"] = json!({ "matchLabels": selector });
    let pod = object_at(&mut spec, "template");
    let pod_meta = object_at(pod, "metadata");
    let labels = object_at(pod_meta, "labels");
    for (k, v) in selector.as_object().into_iter().flatten() {
        labels[k] = v.clone();
    }
    let pod_spec = object_at(pod, "spec");
    set_default(
        pod_spec,
        "securityContext",
        json!({"runAsNonRoot": true, "runAsUser": RUN_AS, "runAsGroup": RUN_AS}),
    );
    set_default(
        pod_spec,
        "serviceAccountName",
        json!(service_account_name(inputs)),
    );
    pod_spec["imagePullSecrets"] = json!(inputs.pull_secrets());
    add_named(
        pod_spec,
        "volumes",
        json!({
            "name": TLS_VOLUME,
            "secret": {
                "secretName": tls_secret_name(inputs.function),
                "items": [
                    {"key": "tls.crt", "path": "tls.crt"},
                    {"key": "tls.key", "path": "tls.key"},
                    {"key": "ca.crt", "path": "ca.crt"},
                ],
            },
        }),
    );

    let container = runtime_container(pod_spec);
    set_default(container, "image", json!(image));
    match inputs.pull_policy() {
        Some(policy) => container["imagePullPolicy"] = json!(policy),
        None => set_default(container, "imagePullPolicy", json!("IfNotPresent")),
    }
    set_default(
        container,
        "securityContext",
        json!({
            "runAsUser": RUN_AS,
            "runAsGroup": RUN_AS,
            "allowPrivilegeEscalation": false,
            "privileged": false,
            "runAsNonRoot": true,
        }),
    );
    add_named(
        container,
        "ports",
        json!({"name": "metrics", "containerPort": METRICS_PORT}),
    );
    add_named(
        container,
        "ports",
        json!({"name": "grpc", "containerPort": GRPC_PORT}),
    );
    add_named(
        container,
        "volumeMounts",
        json!({"name": TLS_VOLUME, "mountPath": TLS_DIR, "readOnly": true}),
    );
    let env = array_at(container, "env");
    env.push(json!({"name": "TLS_SERVER_CERTS_DIR", "value": TLS_DIR}));
    env.push(json!({"name": "FUNCTION_NAME", "valueFrom": {"fieldRef": {
        "apiVersion": "v1", "fieldPath": format!("metadata.labels['{LABEL_FUNCTION}']")}}}));
    env.push(json!({"name": "REVISION_NAME", "valueFrom": {"fieldRef": {
        "apiVersion": "v1", "fieldPath": format!("metadata.labels['{LABEL_REVISION}']")}}}));
    env.push(json!({"name": "REVISION_UID", "value": inputs.revision.metadata.uid}));

    let mut deployment_meta = metadata(&name, placement, inputs, meta);
    deployment_meta["labels"][LABEL_REVISION] = json!(inputs.revision_name());
    deployment_meta["labels"][LABEL_FUNCTION] = json!(inputs.function);
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": deployment_meta,
        "spec": spec,
    })
}

/// The container named `package-runtime`, moved (or inserted empty) to the
/// front of the pod's containers.
fn runtime_container(pod_spec: &mut Value) -> &mut Value {
    let containers = array_at(pod_spec, "containers");
    let found = containers
        .iter()
        .position(|c| c["name"] == RUNTIME_CONTAINER);
    let container = match found {
        Some(i) => containers.remove(i),
        None => json!({"name": RUNTIME_CONTAINER}),
    };
    containers.insert(0, container);
    &mut containers[0]
}

/// The object under `key`, made one if it is missing or not an object.
fn object_at<'v>(value: &'v mut Value, key: &str) -> &'v mut Value {
    if !value[key].is_object() {
        value[key] = json!({});
    }
    &mut value[key]
}

/// The array under `key`, made one if it is missing or not an array.
fn array_at<'v>(value: &'v mut Value, key: &str) -> &'v mut Vec<Value> {
    if !value[key].is_array() {
        value[key] = json!([]);
    }
    match &mut value[key] {
        Value::Array(items) => items,
        _ => unreachable!("just made an array"),
    }
}

fn set_default(value: &mut Value, key: &str, default: Value) {
    if value.get(key).is_none_or(Value::is_null) {
        value[key] = default;
    }
}

/// Appends `item` to the list under `key` unless one of that name is there.
fn add_named(value: &mut Value, key: &str, item: Value) {
    let items = array_at(value, key);
    if !items.iter().any(|i| i["name"] == item["name"]) {
        items.push(item);
    }
}

/// The revision status xfn owns: its endpoint and `RuntimeHealthy`.
pub fn runtime_status(
    revision: &FunctionRevision,
    endpoint: Option<&str>,
    healthy: Result<(), &str>,
    now: &str,
) -> Value {
    let (status, reason, message) = match healthy {
        Ok(()) => ("True", "HealthyPackageRevision", None),
        Err(message) => ("False", "UnhealthyPackageRevision", Some(message)),
    };
    // Keep the transition time while the status stays the same, so a
    // repeated apply is a no-op.
    let previous = revision.condition(super::RUNTIME_HEALTHY);
    let since = previous
        .filter(|c| c.status == status)
        .and_then(|c| c.last_transition_time.clone())
        .unwrap_or_else(|| now.to_owned());
    let mut condition = json!({
        "type": super::RUNTIME_HEALTHY,
        "status": status,
        "reason": reason,
        "lastTransitionTime": since,
    });
    if let Some(message) = message {
        condition["message"] = json!(super::bounded_message(message));
    }
    if let Some(generation) = revision.metadata.generation {
        condition["observedGeneration"] = json!(generation);
    }
    let mut status = json!({ "conditions": [condition] });
    if let Some(endpoint) = endpoint {
        status["endpoint"] = json!(endpoint);
    }
    json!({
        "apiVersion": "pkg.crossplane.io/v1",
        "kind": "FunctionRevision",
        "status": status,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::{DeploymentRuntimeConfigSpec, FunctionRevisionSpec, FunctionSpec};
    use k8s_openapi::api::core::v1::LocalObjectReference;
    use kube::api::ObjectMeta;

    fn revision() -> FunctionRevision {
        let mut revision = FunctionRevision::new(
            "function-hello-abc123",
            FunctionRevisionSpec {
                desired_state: "Active".into(),
                image: Some("xpkg.example/fns/hello:v1".into()),
                package_pull_secrets: Some(vec![LocalObjectReference {
                    name: "regcred".into(),
                }]),
                ..FunctionRevisionSpec::default()
            },
        );
        revision.metadata.uid = Some("uid-1".into());
        revision.metadata.generation = Some(3);
        revision
    }

    fn placement() -> Placement {
        Placement {
            namespace: "crossplane-system".into(),
            pod_labels: BTreeMap::from([("app.kubernetes.io/name".into(), "xfn".into())]),
        }
    }

    fn inputs<'a>(
        revision: &'a FunctionRevision,
        config: Option<&'a DeploymentRuntimeConfig>,
    ) -> Inputs<'a> {
        Inputs {
            revision,
            function: "function-hello",
            function_object: None,
            runtime_config: config,
        }
    }

    #[test]
    fn a_wasm_functions_service_selects_xfns_pods() {
        let rev = revision();
        let svc = service(&inputs(&rev, None), &placement(), true);
        assert_eq!(svc["metadata"]["name"], "function-hello");
        assert_eq!(svc["metadata"]["namespace"], "crossplane-system");
        assert_eq!(svc["spec"]["clusterIP"], "None");
        assert_eq!(
            svc["spec"]["selector"],
            json!({"app.kubernetes.io/name": "xfn"})
        );
        assert_eq!(
            svc["spec"]["ports"],
            json!([{"name": "grpc", "protocol": "TCP", "port": 9443, "targetPort": "grpc", "appProtocol": "tls"}])
        );
        let owner = &svc["metadata"]["ownerReferences"][0];
        assert_eq!(owner["uid"], "uid-1");
        assert_eq!(owner["kind"], "FunctionRevision");
        assert_eq!(owner["controller"], true);
        assert_eq!(
            svc["metadata"]["labels"]["app.kubernetes.io/managed-by"],
            "xfn"
        );
    }

    #[test]
    fn a_container_functions_service_selects_its_own_pods() {
        let rev = revision();
        let svc = service(&inputs(&rev, None), &placement(), false);
        assert_eq!(
            svc["spec"]["selector"],
            json!({"pkg.crossplane.io/revision": "function-hello-abc123", "pkg.crossplane.io/function": "function-hello"})
        );
    }

    #[test]
    fn endpoint_and_secret_names_follow_crossplane() {
        assert_eq!(
            endpoint("function-hello", "crossplane-system"),
            "dns:///function-hello.crossplane-system:9443"
        );
        assert_eq!(tls_secret_name("fn"), "fn-tls-server");
        assert_eq!(tls_secret_name(&"a".repeat(300)).len(), 253);
        assert_eq!(service_dns_names("fn", "ns"), ["fn", "fn.ns", "fn.ns.svc"]);
    }

    #[test]
    fn a_deployment_gets_crossplanes_defaults() {
        let rev = revision();
        let d = deployment(&inputs(&rev, None), &placement(), "img:v1");
        assert_eq!(d["metadata"]["name"], "function-hello-abc123");
        let spec = &d["spec"];
        assert_eq!(spec["replicas"], 1);
        let selector = json!({"pkg.crossplane.io/revision": "function-hello-abc123", "pkg.crossplane.io/function": "function-hello"});
        assert_eq!(spec["selector"]["matchLabels"], selector);
        assert_eq!(spec["template"]["metadata"]["labels"], selector);
        let pod = &spec["template"]["spec"];
        assert_eq!(
            pod["securityContext"],
            json!({"runAsNonRoot": true, "runAsUser": 2000, "runAsGroup": 2000})
        );
        assert_eq!(pod["serviceAccountName"], "function-hello-abc123");
        assert_eq!(pod["imagePullSecrets"], json!([{"name": "regcred"}]));
        assert_eq!(
            pod["volumes"][0]["secret"]["secretName"],
            "function-hello-tls-server"
        );
        let c = &pod["containers"][0];
        assert_eq!(c["name"], "package-runtime");
        assert_eq!(c["image"], "img:v1");
        assert_eq!(c["imagePullPolicy"], "IfNotPresent");
        assert_eq!(c["securityContext"]["allowPrivilegeEscalation"], false);
        let ports: Vec<_> = c["ports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].clone())
            .collect();
        assert_eq!(ports, [json!("metrics"), json!("grpc")]);
        assert_eq!(c["volumeMounts"][0]["mountPath"], "/tls/server");
        let env: Vec<_> = c["env"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].clone())
            .collect();
        assert_eq!(
            env,
            [
                json!("TLS_SERVER_CERTS_DIR"),
                json!("FUNCTION_NAME"),
                json!("REVISION_NAME"),
                json!("REVISION_UID")
            ]
        );
        assert_eq!(c["env"][3]["value"], "uid-1");
    }

    #[test]
    fn a_runtime_config_is_the_base_and_crossplanes_overrides_win() {
        let rev = revision();
        let config = DeploymentRuntimeConfig {
            metadata: ObjectMeta::default(),
            spec: DeploymentRuntimeConfigSpec {
                deployment_template: Some(crate::crd::DeploymentTemplate {
                    metadata: Some(TemplateMeta {
                        name: Some("custom".into()),
                        labels: Some(BTreeMap::from([("team".into(), "a".into())])),
                        annotations: None,
                    }),
                    spec: Some(json!({
                        "replicas": 3,
                        "selector": {"matchLabels": {"hijack": "yes"}},
                        "template": {"spec": {
                            "serviceAccountName": "mine",
                            "containers": [
                                {"name": "sidecar", "image": "side:1"},
                                {"name": "package-runtime", "imagePullPolicy": "Always",
                                 "ports": [{"name": "grpc", "containerPort": 1234}]},
                            ],
                        }},
                    })),
                }),
                service_template: Some(crate::crd::ObjectTemplate {
                    metadata: Some(TemplateMeta {
                        name: Some("fn-svc".into()),
                        ..TemplateMeta::default()
                    }),
                }),
                service_account_template: None,
            },
        };
        let mut rev_policy = rev.clone();
        rev_policy.spec.package_pull_policy = Some("Never".into());
        let i = inputs(&rev_policy, Some(&config));
        let d = deployment(&i, &placement(), "img:v1");
        assert_eq!(d["metadata"]["name"], "custom");
        assert_eq!(d["metadata"]["labels"]["team"], "a");
        assert_eq!(d["spec"]["replicas"], 3);
        assert!(d["spec"]["selector"]["matchLabels"].get("hijack").is_none());
        let pod = &d["spec"]["template"]["spec"];
        assert_eq!(pod["serviceAccountName"], "mine");
        assert_eq!(pod["containers"][0]["name"], "package-runtime");
        assert_eq!(pod["containers"][1]["name"], "sidecar");
        // The revision's pull policy is forced over the template's.
        assert_eq!(pod["containers"][0]["imagePullPolicy"], "Never");
        // A port named grpc is kept as the template has it.
        let ports = pod["containers"][0]["ports"].as_array().unwrap();
        assert_eq!(ports.len(), 2);
        assert_eq!(ports[0]["containerPort"], 1234);
        assert_eq!(i.service_name(), "fn-svc");
    }

    #[test]
    fn the_functions_pull_secrets_apply_when_the_revision_has_none() {
        let mut rev = revision();
        rev.spec.package_pull_secrets = None;
        let function = Function::new(
            "function-hello",
            FunctionSpec {
                package_pull_secrets: Some(vec![LocalObjectReference {
                    name: "fromfn".into(),
                }]),
                ..FunctionSpec::default()
            },
        );
        let mut i = inputs(&rev, None);
        i.function_object = Some(&function);
        let sa = service_account(&i, &placement());
        assert_eq!(sa["imagePullSecrets"], json!([{"name": "fromfn"}]));
        assert_eq!(sa["metadata"]["name"], "function-hello-abc123");
    }

    #[test]
    fn runtime_status_keeps_its_transition_time_while_unchanged() {
        let mut rev = revision();
        let first = runtime_status(
            &rev,
            Some("dns:///f.ns:9443"),
            Ok(()),
            "2026-01-01T00:00:00Z",
        );
        assert_eq!(first["status"]["endpoint"], "dns:///f.ns:9443");
        let condition = &first["status"]["conditions"][0];
        assert_eq!(condition["type"], "RuntimeHealthy");
        assert_eq!(condition["status"], "True");
        assert_eq!(condition["observedGeneration"], 3);
        rev.status = Some(serde_json::from_value(first["status"].clone()).unwrap());
        let again = runtime_status(
            &rev,
            Some("dns:///f.ns:9443"),
            Ok(()),
            "2026-02-02T00:00:00Z",
        );
        assert_eq!(again, first);
        let failed = runtime_status(&rev, None, Err("no CA"), "2026-02-02T00:00:00Z");
        let condition = &failed["status"]["conditions"][0];
        assert_eq!(condition["status"], "False");
        assert_eq!(condition["reason"], "UnhealthyPackageRevision");
        assert_eq!(condition["message"], "no CA");
        assert_eq!(condition["lastTransitionTime"], "2026-02-02T00:00:00Z");
    }
}
