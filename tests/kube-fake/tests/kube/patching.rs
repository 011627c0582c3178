use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;
use xfn_kube_fake::FakeApiServer;

use crate::common::{FunctionRevision, client, revision, within};

fn deployment() -> Deployment {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "fn", "labels": {"app": "fn"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "fn"}},
            "template": {
                "metadata": {"labels": {"app": "fn"}},
                "spec": {"containers": [
                    {"name": "package-runtime", "image": "fn:v1", "env": [{"name": "A", "value": "1"}]},
                    {"name": "sidecar", "image": "side:v1"}
                ]}
            }
        },
        "status": {"replicas": 7}
    }))
    .expect("deployment")
}

fn api_err(e: kube::Error) -> (u16, String) {
    match e {
        kube::Error::Api(s) => (s.code, s.reason),
        other => panic!("not an API error: {other:?}"),
    }
}

#[tokio::test]
async fn strategic_merge_by_name_and_merge_patch_replaces_lists() {
    let fake = FakeApiServer::new();
    let api: Api<Deployment> = Api::namespaced(client(&fake), "default");
    within("create", api.create(&PostParams::default(), &deployment()))
        .await
        .expect("create");
    let patch = json!({"spec": {"template": {"spec": {"containers": [
        {"name": "package-runtime", "image": "fn:v2", "env": [{"name": "B", "value": "2"}]}
    ]}}}});
    let d = within(
        "strategic",
        api.patch("fn", &PatchParams::default(), &Patch::Strategic(&patch)),
    )
    .await
    .expect("strategic");
    let containers = d
        .spec
        .expect("spec")
        .template
        .spec
        .expect("pod spec")
        .containers;
    assert_eq!(containers.len(), 2, "the sidecar is kept");
    assert_eq!(containers[0].image.as_deref(), Some("fn:v2"));
    let env: Vec<_> = containers[0]
        .env
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|e| e.name)
        .collect();
    assert_eq!(env, ["A", "B"], "env merges by name");
    assert_eq!(containers[1].name, "sidecar");

    let d = within(
        "merge",
        api.patch("fn", &PatchParams::default(), &Patch::Merge(&patch)),
    )
    .await
    .expect("merge");
    let containers = d
        .spec
        .expect("spec")
        .template
        .spec
        .expect("pod spec")
        .containers;
    assert_eq!(containers.len(), 1, "a JSON merge patch replaces lists");
}

#[tokio::test]
async fn status_conditions_merge_by_type() {
    let fake = FakeApiServer::new();
    let api: Api<FunctionRevision> = Api::all(client(&fake));
    within("create", api.create(&PostParams::default(), &revision("r")))
        .await
        .expect("create");
    let first = json!({"status": {"conditions": [
        {"type": "RevisionHealthy", "status": "True", "reason": "HealthyPackageRevision"},
        {"type": "RuntimeHealthy", "status": "False", "reason": "UnhealthyPackageRevision"}
    ]}});
    within(
        "first",
        api.patch_status("r", &PatchParams::default(), &Patch::Merge(&first)),
    )
    .await
    .expect("first");
    let second = json!({"status": {"conditions": [
        {"type": "RuntimeHealthy", "status": "True", "reason": "HealthyPackageRevision"}
    ]}});
    let r = within(
        "second",
        api.patch_status("r", &PatchParams::default(), &Patch::Strategic(&second)),
    )
    .await
    .expect("second");
    let conds = r.status.expect("status").conditions;
    assert_eq!(conds.len(), 2);
    assert_eq!(conds[0]["type"], "RevisionHealthy");
    assert_eq!(conds[1]["status"], "True");
}

#[tokio::test]
async fn server_side_apply_creates_updates_and_skips_no_ops() {
    let fake = FakeApiServer::new();
    let api: Api<FunctionRevision> = Api::all(client(&fake));
    let pp = PatchParams::apply("xfn").force();
    let body = json!({
        "apiVersion": "pkg.crossplane.io/v1", "kind": "FunctionRevision",
        "metadata": {"name": "r", "labels": {"a": "1"}},
        "spec": {"desiredState": "Active", "image": "fn:v1"}
    });
    let created = within("apply create", api.patch("r", &pp, &Patch::Apply(&body)))
        .await
        .expect("apply");
    assert!(created.uid().is_some());
    let rv1 = created.resource_version();

    let again = within("no-op apply", api.patch("r", &pp, &Patch::Apply(&body)))
        .await
        .expect("apply");
    assert_eq!(
        again.resource_version(),
        rv1,
        "a no-op apply keeps the resourceVersion"
    );

    let mut changed = body.clone();
    changed["spec"]["image"] = json!("fn:v2");
    let updated = within("apply update", api.patch("r", &pp, &Patch::Apply(&changed)))
        .await
        .expect("apply");
    assert_ne!(updated.resource_version(), rv1);
    assert_eq!(updated.spec.image.as_deref(), Some("fn:v2"));
    assert_eq!(updated.metadata.generation, Some(2));
    assert_eq!(updated.labels()["a"], "1");

    // Status via SSA on the status subresource; repeating it is a no-op.
    let status = json!({
        "apiVersion": "pkg.crossplane.io/v1", "kind": "FunctionRevision",
        "status": {"endpoint": "dns:///fn.crossplane-system:9443",
                   "conditions": [{"type": "RuntimeHealthy", "status": "True"}]}
    });
    let s1 = within(
        "status apply",
        api.patch_status("r", &pp, &Patch::Apply(&status)),
    )
    .await
    .expect("status");
    let s2 = within(
        "status apply again",
        api.patch_status("r", &pp, &Patch::Apply(&status)),
    )
    .await
    .expect("status");
    assert_eq!(s1.resource_version(), s2.resource_version());
    assert_eq!(
        s2.metadata.generation,
        Some(2),
        "status writes do not bump generation"
    );
    assert!(fake.requests().iter().any(|r| r.method == "PATCH"
        && r.path.ends_with("/functionrevisions/r/status")
        && r.content_type.as_deref() == Some("application/apply-patch+yaml")
        && r.query_has("fieldManager=xfn")));
}

#[tokio::test]
async fn status_subresource_isolation_and_generation() {
    let fake = FakeApiServer::new();
    let api: Api<Deployment> = Api::namespaced(client(&fake), "default");
    let created = within("create", api.create(&PostParams::default(), &deployment()))
        .await
        .expect("create");
    assert!(
        created.status.is_none(),
        "create ignores status for kinds with a status subresource"
    );
    assert_eq!(created.metadata.generation, Some(1));

    let st = json!({"status": {"replicas": 3}, "spec": {"replicas": 9}});
    let d = within(
        "status patch",
        api.patch_status("fn", &PatchParams::default(), &Patch::Merge(&st)),
    )
    .await
    .expect("status");
    assert_eq!(d.status.as_ref().and_then(|s| s.replicas), Some(3));
    assert_eq!(
        d.spec.as_ref().and_then(|s| s.replicas),
        Some(1),
        "/status ignores spec"
    );
    assert_eq!(d.metadata.generation, Some(1));

    let main = json!({"status": {"replicas": 5}, "metadata": {"labels": {"x": "y"}}});
    let d = within(
        "main patch",
        api.patch("fn", &PatchParams::default(), &Patch::Merge(&main)),
    )
    .await
    .expect("main");
    assert_eq!(
        d.status.as_ref().and_then(|s| s.replicas),
        Some(3),
        "main writes ignore status"
    );
    assert_eq!(
        d.metadata.generation,
        Some(1),
        "metadata changes do not bump generation"
    );
    assert_eq!(d.labels()["x"], "y");

    let spec = json!({"spec": {"replicas": 2}});
    let d = within(
        "spec patch",
        api.patch("fn", &PatchParams::default(), &Patch::Merge(&spec)),
    )
    .await
    .expect("spec");
    assert_eq!(d.metadata.generation, Some(2));

    // replace_status with the full object changes only status.
    let mut full = d.clone();
    full.spec.as_mut().expect("spec").replicas = Some(100);
    full.status.as_mut().expect("status").replicas = Some(4);
    let d = within(
        "replace status",
        api.replace_status("fn", &PostParams::default(), &full),
    )
    .await
    .expect("replace status");
    assert_eq!(d.spec.as_ref().and_then(|s| s.replicas), Some(2));
    assert_eq!(d.status.as_ref().and_then(|s| s.replicas), Some(4));
}

#[tokio::test]
async fn json_patch_test_failure_is_422() {
    let fake = FakeApiServer::new();
    let api: Api<Deployment> = Api::namespaced(client(&fake), "default");
    within("create", api.create(&PostParams::default(), &deployment()))
        .await
        .expect("create");
    let patch = Patch::<()>::Json(
        serde_json::from_value(json!([
            {"op": "test", "path": "/spec/replicas", "value": 5},
            {"op": "replace", "path": "/spec/replicas", "value": 6}
        ]))
        .expect("patch"),
    );
    let err = within(
        "json patch",
        api.patch("fn", &PatchParams::default(), &patch),
    )
    .await
    .expect_err("test op fails");
    assert_eq!(api_err(err), (422, "Invalid".to_string()));
}

#[tokio::test]
async fn non_forced_apply_conflicts_with_another_manager() {
    let fake = FakeApiServer::new();
    let api: Api<Lease> = Api::namespaced(client(&fake), "default");
    let lease = |holder: &str| {
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
               "metadata": {"name": "l"}, "spec": {"holderIdentity": holder, "leaseDurationSeconds": 2}})
    };
    let a = PatchParams {
        field_manager: Some("mgr-a".into()),
        ..Default::default()
    };
    let b = PatchParams {
        field_manager: Some("mgr-b".into()),
        ..Default::default()
    };
    within("a applies", api.patch("l", &a, &Patch::Apply(lease("a"))))
        .await
        .expect("a");
    let err = within("b applies", api.patch("l", &b, &Patch::Apply(lease("b"))))
        .await
        .expect_err("conflict");
    assert_eq!(api_err(err), (409, "Conflict".to_string()));
    // Same values from another manager do not conflict.
    within("b agrees", api.patch("l", &b, &Patch::Apply(lease("a"))))
        .await
        .expect("same value");
    // Forcing takes over.
    let forced = PatchParams::apply("mgr-b").force();
    let l = within(
        "b forces",
        api.patch("l", &forced, &Patch::Apply(lease("b"))),
    )
    .await
    .expect("force");
    assert_eq!(l.spec.and_then(|s| s.holder_identity).as_deref(), Some("b"));
    // Now a is the one in conflict.
    let err = within("a again", api.patch("l", &a, &Patch::Apply(lease("a"))))
        .await
        .expect_err("conflict");
    assert_eq!(api_err(err).0, 409);
}
