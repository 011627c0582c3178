//! `batch/v1`: Job and CronJob, both decoded as their typed structs first.

use xfn_sdk::Object;

use crate::convert::{self, Decoded, get};

/// A Job is healthy when, scanning its conditions in order, the first one
/// that is `"True"` among `Failed`, `Suspended` and `Complete` is
/// `Complete`.
pub fn job(o: &Object) -> bool {
    job_decoded(o).unwrap_or(false)
}

fn job_decoded(o: &Object) -> Decoded<bool> {
    let parts = convert::parts(o)?;
    let conditions =
        convert::conditions(parts.status, &["lastProbeTime", "lastTransitionTime"], &[])?;
    for condition in conditions {
        if condition.status != "True" {
            continue;
        }
        match condition.kind {
            "Failed" | "Suspended" => return Ok(false),
            "Complete" => return Ok(true),
            _ => {}
        }
    }
    Ok(false)
}

/// A CronJob is healthy when it is suspended; otherwise it needs
/// `status.lastScheduleTime`, and then either an active job or a
/// `status.lastSuccessfulTime` no earlier than the last schedule.
pub fn cron_job(o: &Object) -> bool {
    cron_job_decoded(o).unwrap_or(false)
}

fn cron_job_decoded(o: &Object) -> Decoded<bool> {
    let parts = convert::parts(o)?;
    let suspend = convert::boolean(get(parts.spec, "suspend"))?;
    let last_schedule = convert::time(get(parts.status, "lastScheduleTime"))?;
    let last_success = convert::time(get(parts.status, "lastSuccessfulTime"))?;
    let active = convert::list(get(parts.status, "active"))?;
    for reference in active {
        object_reference(reference)?;
    }

    if suspend == Some(true) {
        return Ok(true);
    }
    let Some(last_schedule) = last_schedule else {
        return Ok(false);
    };
    if !active.is_empty() {
        return Ok(true);
    }
    Ok(last_success.is_some_and(|success| success >= last_schedule))
}

/// Checks one entry of `status.active` (a `corev1.ObjectReference`).
fn object_reference(value: &serde_json::Value) -> Decoded<()> {
    let reference = convert::object(Some(value))?;
    for key in [
        "kind",
        "namespace",
        "name",
        "uid",
        "apiVersion",
        "resourceVersion",
        "fieldPath",
    ] {
        convert::string(get(reference, key))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::tests::object;
    use serde_json::{Value, json};

    fn job_with(conditions: Value) -> Object {
        object(
            json!({"apiVersion": "batch/v1", "kind": "Job", "status": {"conditions": conditions}}),
        )
    }

    #[test]
    fn job_complete_is_ready() {
        assert!(job(&job_with(
            json!([{"type": "Complete", "status": "True"}])
        )));
        assert!(job(&job_with(json!([
            {"type": "Failed", "status": "False"},
            {"type": "SuccessCriteriaMet", "status": "True"},
            {"type": "Complete", "status": "True", "lastProbeTime": "2024-01-01T00:00:00Z"}
        ]))));
    }

    #[test]
    fn job_not_ready_otherwise() {
        for conditions in [
            json!([]),
            json!(null),
            json!([{"type": "Complete", "status": "False"}]),
            json!([{"type": "Failed", "status": "True"}]),
            json!([{"type": "Suspended", "status": "True"}]),
            json!([{"type": "Failed", "status": "True"}, {"type": "Complete", "status": "True"}]),
            json!([{"type": "Suspended", "status": "True"}, {"type": "Complete", "status": "True"}]),
            // Conversion errors.
            json!({"type": "Complete", "status": "True"}),
            json!([{"type": "Complete", "status": "True"}, {"type": "X", "lastProbeTime": 5}]),
            json!([{"type": "Complete", "status": "True", "message": ["x"]}]),
        ] {
            assert!(!job(&job_with(conditions.clone())), "{conditions}");
        }
        assert!(!job(&object(
            json!({"apiVersion": "batch/v1", "kind": "Job"})
        )));
    }

    #[test]
    fn job_complete_first_wins_over_later_failure() {
        assert!(job(&job_with(json!([
            {"type": "Complete", "status": "True"},
            {"type": "Failed", "status": "True"}
        ]))));
    }

    fn cron(spec: Value, status: Value) -> Object {
        object(json!({"apiVersion": "batch/v1", "kind": "CronJob", "spec": spec, "status": status}))
    }

    const SCHEDULE: &str = "2024-05-01T10:00:00Z";

    #[test]
    fn cron_job_ready_cases() {
        assert!(cron_job(&cron(json!({"suspend": true}), json!({}))));
        assert!(cron_job(&cron(
            json!({"schedule": "* * * * *"}),
            json!({"lastScheduleTime": SCHEDULE, "active": [{"kind": "Job", "name": "j-1"}]})
        )));
        assert!(cron_job(&cron(
            json!({}),
            json!({"lastScheduleTime": SCHEDULE, "lastSuccessfulTime": SCHEDULE})
        )));
        assert!(cron_job(&cron(
            json!({}),
            json!({"lastScheduleTime": SCHEDULE, "lastSuccessfulTime": "2024-05-01T10:00:30Z"})
        )));
        // The same instant written in another zone.
        assert!(cron_job(&cron(
            json!({}),
            json!({"lastScheduleTime": SCHEDULE, "lastSuccessfulTime": "2024-05-01T12:00:00+02:00"})
        )));
        // A null entry still counts as an active job.
        assert!(cron_job(&cron(
            json!({}),
            json!({"lastScheduleTime": SCHEDULE, "active": [null]})
        )));
    }

    #[test]
    fn cron_job_not_ready_cases() {
        let cases = [
            (json!({}), json!({})),
            (json!({"suspend": false}), json!({})),
            (
                json!({}),
                json!({"lastScheduleTime": null, "lastSuccessfulTime": SCHEDULE}),
            ),
            (json!({}), json!({"lastScheduleTime": SCHEDULE})),
            (
                json!({}),
                json!({"lastScheduleTime": SCHEDULE, "active": []}),
            ),
            (
                json!({}),
                json!({"lastScheduleTime": SCHEDULE, "lastSuccessfulTime": "2024-05-01T09:59:59.999Z"}),
            ),
            // Conversion errors, even when suspended.
            (json!({"suspend": "true"}), json!({})),
            (
                json!({"suspend": true}),
                json!({"lastScheduleTime": "yesterday"}),
            ),
            (json!({"suspend": true}), json!({"lastSuccessfulTime": ""})),
            (json!({"suspend": true}), json!({"active": {}})),
            (json!({"suspend": true}), json!({"active": [{"name": 1}]})),
            (json!({"suspend": true}), json!("status")),
        ];
        for (spec, status) in cases {
            assert!(
                !cron_job(&cron(spec.clone(), status.clone())),
                "{spec} {status}"
            );
        }
    }
}
