use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use k8s_openapi::api::core::v1::Service;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};
use serde_json::json;
use xfn_kube_fake::FakeApiServer;

use crate::common::{FunctionRevision, client, eventually, revision, within};

const NS: &str = "crossplane-system";

struct Ctx {
    client: kube::Client,
    reconciles: AtomicUsize,
}

#[derive(Debug, thiserror::Error)]
#[error(transparent)]
struct ReconcileError(#[from] kube::Error);

async fn reconcile(rev: Arc<FunctionRevision>, ctx: Arc<Ctx>) -> Result<Action, ReconcileError> {
    ctx.reconciles.fetch_add(1, Ordering::SeqCst);
    let name = rev.name_any();
    let owner = rev.controller_owner_ref(&()).expect("revisions have uids");
    let pp = PatchParams::apply("xfn").force();
    let svc = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "namespace": NS, "labels": {"app.kubernetes.io/managed-by": "xfn"},
                     "ownerReferences": [owner]},
        "spec": {"clusterIP": "None", "ports": [{"name": "grpc", "port": 9443, "targetPort": "grpc"}]}
    });
    Api::<Service>::namespaced(ctx.client.clone(), NS)
        .patch(&name, &pp, &Patch::Apply(&svc))
        .await?;
    let status = json!({
        "apiVersion": "pkg.crossplane.io/v1", "kind": "FunctionRevision",
        "status": {
            "endpoint": format!("dns:///{name}.{NS}:9443"),
            "conditions": [{"type": "RuntimeHealthy", "status": "True", "reason": "HealthyPackageRevision",
                            "lastTransitionTime": "2026-01-01T00:00:00Z"}]
        }
    });
    Api::<FunctionRevision>::all(ctx.client.clone())
        .patch_status(&name, &pp, &Patch::Apply(&status))
        .await?;
    Ok(Action::await_change())
}

fn error_policy(_rev: Arc<FunctionRevision>, _err: &ReconcileError, _ctx: Arc<Ctx>) -> Action {
    Action::requeue(Duration::from_millis(200))
}

#[tokio::test]
async fn controller_reconciles_new_revision_and_settles() {
    let fake = FakeApiServer::new();
    let client = client(&fake);
    let revisions: Api<FunctionRevision> = Api::all(client.clone());
    let services: Api<Service> = Api::namespaced(client.clone(), NS);
    let ctx = Arc::new(Ctx {
        client: client.clone(),
        reconciles: AtomicUsize::new(0),
    });
    let managed = watcher::Config::default().labels("app.kubernetes.io/managed-by=xfn");
    let controller = Controller::new(revisions.clone(), watcher::Config::default())
        .watches(services.clone(), managed, |svc: Service| {
            svc.owner_references()
                .iter()
                .filter(|r| r.kind == "FunctionRevision")
                .map(|r| ObjectRef::new(&r.name))
                .collect::<Vec<_>>()
        })
        .run(reconcile, error_policy, ctx.clone())
        .for_each(|_| async {});
    let task = tokio::spawn(controller);

    // Wait until both watches are open, then create the revision.
    eventually("controller watching", || fake.active_watches() == 2).await;
    within(
        "create",
        revisions.create(&PostParams::default(), &revision("function-hello-abc")),
    )
    .await
    .expect("create");

    eventually("status written", || {
        fake.get(
            "pkg.crossplane.io/v1",
            "functionrevisions",
            None,
            "function-hello-abc",
        )
        .is_some_and(|r| {
            r["status"]["endpoint"] == "dns:///function-hello-abc.crossplane-system:9443"
        })
    })
    .await;
    assert!(
        fake.get("v1", "services", Some(NS), "function-hello-abc")
            .is_some()
    );

    // Settle: no reconcile or write should follow on its own.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let settled = ctx.reconciles.load(Ordering::SeqCst);
    let rv = fake.resource_version();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        ctx.reconciles.load(Ordering::SeqCst),
        settled,
        "reconciles keep coming: hot loop"
    );
    assert_eq!(fake.resource_version(), rv, "writes keep coming: hot loop");
    assert!((1..=4).contains(&settled), "reconciled {settled} times");

    // A spec change triggers exactly one more round.
    let p = json!({"spec": {"image": "xpkg.example/fn:v2"}});
    within(
        "patch",
        revisions.patch(
            "function-hello-abc",
            &PatchParams::default(),
            &Patch::Merge(&p),
        ),
    )
    .await
    .expect("patch");
    eventually("reconciled again", || {
        ctx.reconciles.load(Ordering::SeqCst) > settled
    })
    .await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let after = ctx.reconciles.load(Ordering::SeqCst);
    assert!(
        after <= settled + 2,
        "{after} reconciles after one change (settled at {settled})"
    );

    // Deleting the revision garbage-collects its Service.
    within(
        "delete",
        revisions.delete("function-hello-abc", &DeleteParams::default()),
    )
    .await
    .expect("delete");
    assert!(
        fake.get("v1", "services", Some(NS), "function-hello-abc")
            .is_none()
    );
    task.abort();
}
