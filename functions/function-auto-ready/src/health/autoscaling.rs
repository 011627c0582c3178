//! `autoscaling/v2`: HorizontalPodAutoscaler, decoded as its typed struct.

use xfn_sdk::Object;

use crate::convert::{self, Decoded};

/// An HPA is healthy when, scanning its conditions in order, a
/// `ScalingActive` or `ScalingLimited` condition that is `"True"` comes
/// before any `FailedGetScale`, `FailedUpdateScale`,
/// `FailedGetResourceMetric` or `InvalidSelector` condition that is `"True"`.
pub fn horizontal_pod_autoscaler(o: &Object) -> bool {
    decoded(o).unwrap_or(false)
}

fn decoded(o: &Object) -> Decoded<bool> {
    let parts = convert::parts(o)?;
    let conditions = convert::conditions(parts.status, &["lastTransitionTime"], &[])?;
    for condition in conditions {
        if condition.status != "True" {
            continue;
        }
        match condition.kind {
            "FailedGetScale"
            | "FailedUpdateScale"
            | "FailedGetResourceMetric"
            | "InvalidSelector" => {
                return Ok(false);
            }
            "ScalingActive" | "ScalingLimited" => return Ok(true),
            _ => {}
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::tests::object;
    use serde_json::{Value, json};

    fn hpa(conditions: Value) -> Object {
        object(
            json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "status": {"currentReplicas": 2, "desiredReplicas": 2, "conditions": conditions}}),
        )
    }

    #[test]
    fn hpa_ready_when_scaling_active_or_limited() {
        assert!(horizontal_pod_autoscaler(&hpa(json!([
            {"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale"},
            {"type": "ScalingActive", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"}
        ]))));
        assert!(horizontal_pod_autoscaler(&hpa(
            json!([{"type": "ScalingLimited", "status": "True"}])
        )));
        assert!(horizontal_pod_autoscaler(&hpa(json!([
            {"type": "FailedGetScale", "status": "False"},
            {"type": "ScalingActive", "status": "True"}
        ]))));
        // The first decisive condition wins.
        assert!(horizontal_pod_autoscaler(&hpa(json!([
            {"type": "ScalingActive", "status": "True"},
            {"type": "FailedGetResourceMetric", "status": "True"}
        ]))));
    }

    #[test]
    fn hpa_not_ready_otherwise() {
        for conditions in [
            json!([]),
            json!(null),
            json!([{"type": "AbleToScale", "status": "True"}]),
            json!([{"type": "ScalingActive", "status": "False"}]),
            json!([{"type": "FailedGetScale", "status": "True"}, {"type": "ScalingActive", "status": "True"}]),
            json!([{"type": "FailedUpdateScale", "status": "True"}]),
            json!([{"type": "FailedGetResourceMetric", "status": "True"}, {"type": "ScalingLimited", "status": "True"}]),
            json!([{"type": "InvalidSelector", "status": "True"}, {"type": "ScalingActive", "status": "True"}]),
            // Conversion errors.
            json!([{"type": "ScalingActive", "status": "True"}, 42]),
            json!([{"type": "ScalingActive", "status": "True", "lastTransitionTime": "2024-01-01"}]),
        ] {
            assert!(
                !horizontal_pod_autoscaler(&hpa(conditions.clone())),
                "{conditions}"
            );
        }
        assert!(!horizontal_pod_autoscaler(&object(
            json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler"})
        )));
    }
}
