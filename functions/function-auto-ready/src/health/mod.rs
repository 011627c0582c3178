//! Built-in health checks for standard Kubernetes kinds (after Argo CD's).
//!
//! A check is looked up by the observed resource's exact group, version and
//! kind. When it passes, the resource is ready; when it fails, auto-ready
//! still falls back to the `Ready` condition. Kinds without a check (managed
//! resources, other custom resources, other versions of these kinds) use
//! only the `Ready` condition.

mod apps;
mod autoscaling;
mod batch;
mod core;
mod networking;

use xfn_sdk::Object;

use crate::unstructured::api_version_kind;

/// A health check: whether an observed object of its kind is healthy.
pub type Check = fn(&Object) -> bool;

/// The health check registered for a group, version and kind, if any.
pub fn lookup(group: &str, version: &str, kind: &str) -> Option<Check> {
    let check: Check = match (group, version, kind) {
        ("", "v1", "ConfigMap" | "Secret" | "ServiceAccount" | "Namespace") => always_ready,
        ("", "v1", "Service") => core::service,
        ("", "v1", "Pod") => core::pod,
        ("", "v1", "PersistentVolumeClaim") => core::persistent_volume_claim,
        ("apps", "v1", "Deployment") => apps::deployment,
        ("apps", "v1", "StatefulSet") => apps::stateful_set,
        ("apps", "v1", "DaemonSet") => apps::daemon_set,
        ("apps", "v1", "ReplicaSet") => apps::replica_set,
        ("batch", "v1", "Job") => batch::job,
        ("batch", "v1", "CronJob") => batch::cron_job,
        ("networking.k8s.io", "v1", "Ingress") => networking::ingress,
        ("autoscaling", "v2", "HorizontalPodAutoscaler") => autoscaling::horizontal_pod_autoscaler,
        _ => return None,
    };
    Some(check)
}

/// The health check for `object`'s `apiVersion` and `kind`, if any.
pub fn for_object(object: &Object) -> Option<Check> {
    let (api_version, kind) = api_version_kind(object);
    let (group, version) = split_api_version(api_version)?;
    lookup(group, version, kind)
}

/// Runs the health check for `object`: `None` if its kind has none.
pub fn check(object: &Object) -> Option<bool> {
    for_object(object).map(|check| check(object))
}

/// Splits an `apiVersion` into group and version as apimachinery's
/// `ParseGroupVersion` does: `v1` is the core group, `apps/v1` is `apps`,
/// and more than one `/` is an error (`None`).
pub fn split_api_version(api_version: &str) -> Option<(&str, &str)> {
    if api_version.is_empty() || api_version == "/" {
        return Some(("", ""));
    }
    match api_version.matches('/').count() {
        0 => Some(("", api_version)),
        1 => api_version.split_once('/'),
        _ => None,
    }
}

/// Kinds that are ready as soon as they exist.
fn always_ready(_: &Object) -> bool {
    true
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// The object in `value`; panics if it is not an object.
    pub(crate) fn object(value: Value) -> Object {
        match value {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn splits_api_versions_like_apimachinery() {
        assert_eq!(split_api_version("v1"), Some(("", "v1")));
        assert_eq!(split_api_version("apps/v1"), Some(("apps", "v1")));
        assert_eq!(split_api_version(""), Some(("", "")));
        assert_eq!(split_api_version("/"), Some(("", "")));
        assert_eq!(split_api_version("/v1"), Some(("", "v1")));
        assert_eq!(split_api_version("a/b/c"), None);
    }

    #[test]
    fn finds_checks_by_exact_group_version_kind() {
        let registered = [
            ("v1", "ConfigMap"),
            ("v1", "Secret"),
            ("v1", "ServiceAccount"),
            ("v1", "Namespace"),
            ("v1", "Service"),
            ("v1", "Pod"),
            ("v1", "PersistentVolumeClaim"),
            ("apps/v1", "Deployment"),
            ("apps/v1", "StatefulSet"),
            ("apps/v1", "DaemonSet"),
            ("apps/v1", "ReplicaSet"),
            ("batch/v1", "Job"),
            ("batch/v1", "CronJob"),
            ("networking.k8s.io/v1", "Ingress"),
            ("autoscaling/v2", "HorizontalPodAutoscaler"),
        ];
        for (api_version, kind) in registered {
            let o = object(json!({"apiVersion": api_version, "kind": kind}));
            assert!(for_object(&o).is_some(), "{api_version} {kind}");
        }
        let unregistered = [
            ("extensions/v1beta1", "Deployment"),
            ("apps/v1beta2", "Deployment"),
            ("autoscaling/v1", "HorizontalPodAutoscaler"),
            ("networking.k8s.io/v1beta1", "Ingress"),
            ("v1", "Endpoints"),
            ("v1", "configmap"),
            ("core/v1", "ConfigMap"),
            ("s3.aws.upbound.io/v1beta1", "Bucket"),
            ("a/b/v1", "ConfigMap"),
            ("", "ConfigMap"),
        ];
        for (api_version, kind) in unregistered {
            let o = object(json!({"apiVersion": api_version, "kind": kind}));
            assert!(for_object(&o).is_none(), "{api_version} {kind}");
        }
        assert!(for_object(&object(json!({"kind": "ConfigMap"}))).is_none());
        assert!(for_object(&object(json!({"apiVersion": ["v1"], "kind": "ConfigMap"}))).is_none());
    }

    #[test]
    fn always_ready_kinds_need_nothing() {
        for kind in ["ConfigMap", "Secret", "ServiceAccount", "Namespace"] {
            let o = object(json!({"apiVersion": "v1", "kind": kind}));
            assert_eq!(check(&o), Some(true), "{kind}");
            let o = object(json!({"apiVersion": "v1", "kind": kind, "status": "garbage"}));
            assert_eq!(check(&o), Some(true), "{kind}");
        }
        assert_eq!(
            check(&object(
                json!({"apiVersion": "example.org/v1", "kind": "Thing"})
            )),
            None
        );
    }
}
