//! The core group (`v1`): Service, Pod and PersistentVolumeClaim.

use serde_json::Value;
use xfn_sdk::Object;

use crate::convert::{self, Decoded, get};
use crate::unstructured::{slice, string};

/// A Service is healthy unless it is a `LoadBalancer` (`spec.type` defaults
/// to `ClusterIP`), which needs at least one `status.loadBalancer.ingress`.
pub fn service(o: &Object) -> bool {
    if string(o, &["spec", "type"]).unwrap_or("ClusterIP") != "LoadBalancer" {
        return true;
    }
    slice(o, &["status", "loadBalancer", "ingress"]).is_some_and(|entries| !entries.is_empty())
}

/// A Pod (decoded as the typed struct) is healthy when its phase is
/// `Succeeded`, or when it is `Running` with restart policy `Always` and a
/// `Ready` condition that is `"True"`.
pub fn pod(o: &Object) -> bool {
    pod_decoded(o).unwrap_or(false)
}

fn pod_decoded(o: &Object) -> Decoded<bool> {
    let parts = convert::parts(o)?;
    let restart_policy = convert::string(get(parts.spec, "restartPolicy"))?;
    let phase = convert::string(get(parts.status, "phase"))?;
    let conditions = convert::conditions(
        parts.status,
        &["lastProbeTime", "lastTransitionTime"],
        &["observedGeneration"],
    )?;
    for container in convert::list(get(parts.status, "containerStatuses"))? {
        container_status(container)?;
    }

    Ok(match phase {
        "Succeeded" => true,
        // A running pod with another restart policy is still progressing,
        // and one whose containers are waiting or terminated is not ready.
        "Running" => {
            restart_policy == "Always"
                && conditions
                    .iter()
                    .any(|c| c.kind == "Ready" && c.status == "True")
        }
        _ => false,
    })
}

/// Checks the parts of a `status.containerStatuses` entry that the check
/// could look at: `state` and its `waiting`, `running` and `terminated`.
fn container_status(value: &Value) -> Decoded<()> {
    let status = convert::object(Some(value))?;
    let state = convert::object(get(status, "state"))?;
    let waiting = convert::object(get(state, "waiting"))?;
    convert::string(get(waiting, "reason"))?;
    convert::object(get(state, "running"))?;
    convert::object(get(state, "terminated"))?;
    Ok(())
}

/// A PersistentVolumeClaim (decoded as the typed struct) is healthy when
/// `status.phase` is `Bound`.
pub fn persistent_volume_claim(o: &Object) -> bool {
    pvc_decoded(o).unwrap_or(false)
}

fn pvc_decoded(o: &Object) -> Decoded<bool> {
    let parts = convert::parts(o)?;
    Ok(convert::string(get(parts.status, "phase"))? == "Bound")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::tests::object;
    use serde_json::json;

    fn svc(spec: Value, status: Value) -> Object {
        object(json!({"apiVersion": "v1", "kind": "Service", "spec": spec, "status": status}))
    }

    #[test]
    fn service_health() {
        let none = json!({});
        assert!(service(&svc(json!({"type": "ClusterIP"}), none.clone())));
        assert!(service(&svc(json!({"type": "NodePort"}), none.clone())));
        assert!(service(&svc(json!({"type": "ExternalName"}), none.clone())));
        assert!(service(&svc(json!({}), none.clone())));
        assert!(service(&svc(json!({"type": ""}), none.clone())));
        assert!(service(&svc(json!({"type": 5}), none.clone())));
        assert!(service(&svc(json!("junk"), none.clone())));
        let assigned = json!({"loadBalancer": {"ingress": [{"ip": "203.0.113.7"}]}});
        assert!(service(&svc(json!({"type": "LoadBalancer"}), assigned)));

        for status in [
            none,
            json!({"loadBalancer": {}}),
            json!({"loadBalancer": {"ingress": []}}),
            json!({"loadBalancer": {"ingress": null}}),
            json!({"loadBalancer": "pending"}),
        ] {
            assert!(
                !service(&svc(json!({"type": "LoadBalancer"}), status.clone())),
                "{status}"
            );
        }
        // Case matters.
        assert!(service(&svc(json!({"type": "loadbalancer"}), json!({}))));
    }

    fn pod_with(spec: Value, status: Value) -> Object {
        object(json!({"apiVersion": "v1", "kind": "Pod", "spec": spec, "status": status}))
    }

    fn ready_condition() -> Value {
        json!([{"type": "Initialized", "status": "True"}, {"type": "Ready", "status": "True",
            "lastProbeTime": null, "lastTransitionTime": "2024-01-01T00:00:00Z"}])
    }

    #[test]
    fn pod_ready_cases() {
        let always = json!({"restartPolicy": "Always"});
        assert!(pod(&pod_with(
            always.clone(),
            json!({"phase": "Running", "conditions": ready_condition()})
        )));
        assert!(pod(&pod_with(
            json!({"restartPolicy": "Never"}),
            json!({"phase": "Succeeded"})
        )));
        assert!(pod(&pod_with(json!({}), json!({"phase": "Succeeded"}))));
        // Ready wins even if a container restarted.
        let status = json!({"phase": "Running", "conditions": ready_condition(),
            "containerStatuses": [{"name": "app", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]});
        assert!(pod(&pod_with(always, status)));
    }

    #[test]
    fn pod_not_ready_cases() {
        let always = json!({"restartPolicy": "Always"});
        let cases = [
            (always.clone(), json!({"phase": "Pending"})),
            (always.clone(), json!({"phase": "Failed"})),
            (always.clone(), json!({"phase": "Unknown"})),
            (always.clone(), json!({})),
            (always.clone(), json!({"phase": "Running"})),
            (
                always.clone(),
                json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}]}),
            ),
            (
                always.clone(),
                json!({"phase": "Running", "containerStatuses": [
                {"name": "app", "state": {"waiting": {"reason": "ImagePullBackOff"}}}]}),
            ),
            (
                always.clone(),
                json!({"phase": "Running", "containerStatuses": [
                {"name": "app", "state": {"terminated": {"exitCode": 1}}}]}),
            ),
            (
                json!({"restartPolicy": "OnFailure"}),
                json!({"phase": "Running", "conditions": ready_condition()}),
            ),
            (
                json!({"restartPolicy": "Never"}),
                json!({"phase": "Running", "conditions": ready_condition()}),
            ),
            (
                json!({}),
                json!({"phase": "Running", "conditions": ready_condition()}),
            ),
            // Conversion errors.
            (json!({"restartPolicy": "Never"}), json!({"phase": 1})),
            (
                json!({"restartPolicy": true}),
                json!({"phase": "Succeeded"}),
            ),
            (
                always.clone(),
                json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True",
                "observedGeneration": 1.5}]}),
            ),
            (
                always.clone(),
                json!({"phase": "Succeeded", "containerStatuses": ["app"]}),
            ),
            (
                always.clone(),
                json!({"phase": "Succeeded", "containerStatuses": [{"state": {"waiting": {"reason": 1}}}]}),
            ),
        ];
        for (spec, status) in cases {
            assert!(
                !pod(&pod_with(spec.clone(), status.clone())),
                "{spec} {status}"
            );
        }
    }

    fn pvc(status: Value) -> Object {
        object(
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "spec": {}, "status": status}),
        )
    }

    #[test]
    fn pvc_health() {
        assert!(persistent_volume_claim(&pvc(
            json!({"phase": "Bound", "capacity": {"storage": "1Gi"}})
        )));
        for status in [
            json!({"phase": "Pending"}),
            json!({"phase": "Lost"}),
            json!({"phase": "bound"}),
            json!({}),
            json!(null),
            json!({"phase": ["Bound"]}),
            json!("Bound"),
        ] {
            assert!(!persistent_volume_claim(&pvc(status.clone())), "{status}");
        }
    }
}
