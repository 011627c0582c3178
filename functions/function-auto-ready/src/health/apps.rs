//! `apps/v1`: Deployment, StatefulSet, DaemonSet and ReplicaSet.

use serde_json::Value;
use xfn_sdk::Object;

use crate::convert::{self, Decoded, get};
use crate::unstructured::{int64, slice, string};

/// A Deployment is healthy when `spec.replicas` (default 1) equals both
/// `status.updatedReplicas` and `status.availableReplicas` (which must be
/// set) and some condition has type `Available` and status `"True"`.
pub fn deployment(o: &Object) -> bool {
    let replicas = int64(o, &["spec", "replicas"]).unwrap_or(1);
    let (Some(updated), Some(available)) = (
        int64(o, &["status", "updatedReplicas"]),
        int64(o, &["status", "availableReplicas"]),
    ) else {
        return false;
    };
    if replicas != updated || replicas != available {
        return false;
    }
    let Some(conditions) = slice(o, &["status", "conditions"]) else {
        return false;
    };
    conditions.iter().filter_map(Value::as_object).any(|c| {
        string(c, &["type"]) == Some("Available") && string(c, &["status"]) == Some("True")
    })
}

/// A StatefulSet is healthy when `spec.replicas` (default 1) equals both
/// `status.readyReplicas` and `status.currentReplicas` (which must be set),
/// and `status.currentRevision` equals `status.updateRevision` (both set).
pub fn stateful_set(o: &Object) -> bool {
    let replicas = int64(o, &["spec", "replicas"]).unwrap_or(1);
    let (Some(ready), Some(current)) = (
        int64(o, &["status", "readyReplicas"]),
        int64(o, &["status", "currentReplicas"]),
    ) else {
        return false;
    };
    if replicas != ready || replicas != current {
        return false;
    }
    match (
        string(o, &["status", "currentRevision"]),
        string(o, &["status", "updateRevision"]),
    ) {
        (Some(current), Some(update)) => current == update,
        _ => false,
    }
}

/// A DaemonSet is healthy when `status.desiredNumberScheduled`,
/// `numberReady`, `updatedNumberScheduled` and `numberAvailable` are all set
/// and all equal.
pub fn daemon_set(o: &Object) -> bool {
    let field = |name| int64(o, &["status", name]);
    let (Some(desired), Some(ready), Some(updated), Some(available)) = (
        field("desiredNumberScheduled"),
        field("numberReady"),
        field("updatedNumberScheduled"),
        field("numberAvailable"),
    ) else {
        return false;
    };
    desired == ready && updated == desired && available == desired
}

/// A ReplicaSet (decoded as the typed struct) is healthy when
/// `status.observedGeneration` has caught up with `metadata.generation`, no
/// `ReplicaFailure` condition is `"True"`, and `status.availableReplicas` is
/// at least `spec.replicas` (default 1).
pub fn replica_set(o: &Object) -> bool {
    replica_set_decoded(o).unwrap_or(false)
}

fn replica_set_decoded(o: &Object) -> Decoded<bool> {
    let parts = convert::parts(o)?;
    let generation = convert::integer(get(parts.metadata, "generation"))?.unwrap_or(0);
    let replicas = convert::integer(get(parts.spec, "replicas"))?.unwrap_or(1);
    let observed = convert::integer(get(parts.status, "observedGeneration"))?.unwrap_or(0);
    let available = convert::integer(get(parts.status, "availableReplicas"))?.unwrap_or(0);
    let conditions = convert::conditions(parts.status, &["lastTransitionTime"], &[])?;

    if observed < generation {
        return Ok(false);
    }
    if conditions
        .iter()
        .any(|c| c.kind == "ReplicaFailure" && c.status == "True")
    {
        return Ok(false);
    }
    Ok(available >= replicas)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::tests::object;
    use serde_json::json;

    fn deploy(spec: Value, status: Value) -> Object {
        object(
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": spec, "status": status}),
        )
    }

    fn available() -> Value {
        json!([{"type": "Progressing", "status": "True"}, {"type": "Available", "status": "True"}])
    }

    #[test]
    fn deployment_ready_when_rolled_out_and_available() {
        let status =
            json!({"updatedReplicas": 3, "availableReplicas": 3, "conditions": available()});
        assert!(deployment(&deploy(json!({"replicas": 3}), status)));
        // Numbers arrive as doubles from the protocol.
        let status =
            json!({"updatedReplicas": 3.0, "availableReplicas": 3.0, "conditions": available()});
        assert!(deployment(&deploy(json!({"replicas": 3.0}), status)));
        // Replicas default to 1.
        let status =
            json!({"updatedReplicas": 1, "availableReplicas": 1, "conditions": available()});
        assert!(deployment(&deploy(json!({}), status.clone())));
        assert!(deployment(&deploy(
            json!({"replicas": "3"}),
            status.clone()
        )));
        assert!(deployment(&deploy(json!(null), status.clone())));
        // Any Available=True condition counts, not just the first.
        let conditions = json!([{"type": "Available", "status": "False"}, "junk", {"type": 1}, {"type": "Available", "status": "True"}]);
        let status =
            json!({"updatedReplicas": 1, "availableReplicas": 1, "conditions": conditions});
        assert!(deployment(&deploy(json!({}), status)));
        // Zero replicas.
        let status =
            json!({"updatedReplicas": 0, "availableReplicas": 0, "conditions": available()});
        assert!(deployment(&deploy(json!({"replicas": 0}), status)));
    }

    #[test]
    fn deployment_not_ready_otherwise() {
        let cases = [
            (
                json!({"replicas": 3}),
                json!({"updatedReplicas": 2, "availableReplicas": 3, "conditions": available()}),
            ),
            (
                json!({"replicas": 3}),
                json!({"updatedReplicas": 3, "availableReplicas": 2, "conditions": available()}),
            ),
            (
                json!({"replicas": 3}),
                json!({"availableReplicas": 3, "conditions": available()}),
            ),
            (
                json!({"replicas": 3}),
                json!({"updatedReplicas": 3, "conditions": available()}),
            ),
            (
                json!({"replicas": 3}),
                json!({"updatedReplicas": 3, "availableReplicas": null, "conditions": available()}),
            ),
            (
                json!({"replicas": 3}),
                json!({"updatedReplicas": 3, "availableReplicas": 3}),
            ),
            (
                json!({"replicas": 3}),
                json!({"updatedReplicas": 3, "availableReplicas": 3, "conditions": null}),
            ),
            (
                json!({"replicas": 3}),
                json!({"updatedReplicas": 3, "availableReplicas": 3, "conditions": []}),
            ),
            (
                json!({"replicas": 3}),
                json!({"updatedReplicas": 3, "availableReplicas": 3,
                "conditions": [{"type": "Available", "status": "False"}]}),
            ),
            (
                json!({"replicas": 3}),
                json!({"updatedReplicas": 3, "availableReplicas": 3,
                "conditions": [{"type": "Available", "status": true}]}),
            ),
            (
                json!({}),
                json!({"updatedReplicas": 3, "availableReplicas": 3, "conditions": available()}),
            ),
        ];
        for (spec, status) in cases {
            assert!(
                !deployment(&deploy(spec.clone(), status.clone())),
                "{spec} {status}"
            );
        }
        assert!(!deployment(&object(
            json!({"apiVersion": "apps/v1", "kind": "Deployment"})
        )));
        assert!(!deployment(&object(
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "status": "x"})
        )));
    }

    #[test]
    fn deployment_truncates_fractional_counts_like_go() {
        let status =
            json!({"updatedReplicas": 2.9, "availableReplicas": 2, "conditions": available()});
        assert!(deployment(&deploy(json!({"replicas": 2.5}), status)));
    }

    fn sts(spec: Value, status: Value) -> Object {
        object(
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "spec": spec, "status": status}),
        )
    }

    #[test]
    fn stateful_set_health() {
        let good = json!({"readyReplicas": 3, "currentReplicas": 3, "currentRevision": "web-1", "updateRevision": "web-1"});
        assert!(stateful_set(&sts(json!({"replicas": 3}), good.clone())));
        assert!(!stateful_set(&sts(json!({}), good)));
        let one = json!({"readyReplicas": 1, "currentReplicas": 1, "currentRevision": "", "updateRevision": ""});
        assert!(stateful_set(&sts(json!({}), one)));

        for status in [
            json!({"readyReplicas": 2, "currentReplicas": 3, "currentRevision": "a", "updateRevision": "a"}),
            json!({"readyReplicas": 3, "currentReplicas": 2, "currentRevision": "a", "updateRevision": "a"}),
            json!({"readyReplicas": 3, "currentReplicas": 3, "currentRevision": "a", "updateRevision": "b"}),
            json!({"readyReplicas": 3, "currentReplicas": 3, "updateRevision": "a"}),
            json!({"readyReplicas": 3, "currentReplicas": 3, "currentRevision": "a"}),
            json!({"readyReplicas": 3, "currentReplicas": 3, "currentRevision": null, "updateRevision": null}),
            json!({"currentReplicas": 3, "currentRevision": "a", "updateRevision": "a"}),
            json!({"readyReplicas": 3, "currentRevision": "a", "updateRevision": "a"}),
            json!({}),
        ] {
            assert!(
                !stateful_set(&sts(json!({"replicas": 3}), status.clone())),
                "{status}"
            );
        }
    }

    fn ds(status: Value) -> Object {
        object(json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "status": status}))
    }

    #[test]
    fn daemon_set_health() {
        let all = |d, r, u, a| json!({"desiredNumberScheduled": d, "numberReady": r, "updatedNumberScheduled": u, "numberAvailable": a});
        assert!(daemon_set(&ds(all(3, 3, 3, 3))));
        assert!(daemon_set(&ds(all(0, 0, 0, 0))));
        assert!(!daemon_set(&ds(all(3, 2, 3, 3))));
        assert!(!daemon_set(&ds(all(3, 3, 2, 3))));
        assert!(!daemon_set(&ds(all(3, 3, 3, 2))));
        assert!(!daemon_set(&ds(
            json!({"desiredNumberScheduled": 3, "numberReady": 3, "updatedNumberScheduled": 3})
        )));
        assert!(!daemon_set(&ds(
            json!({"numberReady": 0, "updatedNumberScheduled": 0, "numberAvailable": 0})
        )));
        assert!(!daemon_set(&ds(json!({}))));
        assert!(!daemon_set(&object(
            json!({"apiVersion": "apps/v1", "kind": "DaemonSet"})
        )));
    }

    fn rs(generation: Value, spec: Value, status: Value) -> Object {
        object(json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "web", "generation": generation}, "spec": spec, "status": status}))
    }

    #[test]
    fn replica_set_ready_when_caught_up_and_available() {
        assert!(replica_set(&rs(
            json!(2),
            json!({"replicas": 3}),
            json!({"observedGeneration": 2, "availableReplicas": 3})
        )));
        assert!(replica_set(&rs(
            json!(2),
            json!({"replicas": 3}),
            json!({"observedGeneration": 3, "availableReplicas": 4})
        )));
        assert!(replica_set(&rs(
            json!(1.0),
            json!({}),
            json!({"observedGeneration": 1.0, "availableReplicas": 1.0})
        )));
        assert!(replica_set(&rs(
            json!(1),
            json!({"replicas": 0}),
            json!({"observedGeneration": 1})
        )));
        // A condition that isn't ReplicaFailure=True doesn't matter.
        let conditions = json!([{"type": "ReplicaFailure", "status": "False"}, {"type": "Other", "status": "True"}]);
        assert!(replica_set(&rs(
            json!(1),
            json!({}),
            json!({"observedGeneration": 1, "availableReplicas": 1, "conditions": conditions})
        )));
        // Without a generation, zero is caught up with.
        let o = object(
            json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "status": {"availableReplicas": 1}}),
        );
        assert!(replica_set(&o));
    }

    #[test]
    fn replica_set_not_ready_otherwise() {
        let failure =
            json!([{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate"}]);
        let cases = [
            (
                json!(3),
                json!({"replicas": 1}),
                json!({"observedGeneration": 2, "availableReplicas": 1}),
            ),
            (
                json!(1),
                json!({"replicas": 3}),
                json!({"observedGeneration": 1, "availableReplicas": 2}),
            ),
            (json!(1), json!({}), json!({"observedGeneration": 1})),
            (
                json!(1),
                json!({}),
                json!({"observedGeneration": 1, "availableReplicas": 1, "conditions": failure}),
            ),
            // Conversion errors.
            (
                json!(1),
                json!({"replicas": 1.5}),
                json!({"observedGeneration": 1, "availableReplicas": 2}),
            ),
            (
                json!("1"),
                json!({}),
                json!({"observedGeneration": 1, "availableReplicas": 1}),
            ),
            (
                json!(1),
                json!({}),
                json!({"observedGeneration": 1, "availableReplicas": 1, "conditions": {}}),
            ),
            (
                json!(1),
                json!({}),
                json!({"observedGeneration": 1, "availableReplicas": 1,
                "conditions": [{"type": "X", "lastTransitionTime": "now"}]}),
            ),
            (
                json!(1),
                json!("web"),
                json!({"observedGeneration": 1, "availableReplicas": 1}),
            ),
        ];
        for (generation, spec, status) in cases {
            let o = rs(generation.clone(), spec.clone(), status.clone());
            assert!(!replica_set(&o), "{generation} {spec} {status}");
        }
    }
}
