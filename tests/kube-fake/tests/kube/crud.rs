use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Secret, Service};
use kube::api::{Api, DeleteParams, ListParams, ObjectMeta, PostParams};
use kube::{Resource, ResourceExt};
use serde_json::json;
use xfn_kube_fake::FakeApiServer;

use crate::common::{FunctionRevision, client, revision, within};

fn cm(name: &str, labels: &[(&str, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect::<BTreeMap<_, _>>(),
            ),
            ..Default::default()
        },
        data: Some([("k".to_string(), "v".to_string())].into()),
        ..Default::default()
    }
}

fn names(list: &kube::api::ObjectList<ConfigMap>) -> Vec<String> {
    list.items.iter().map(|o| o.name_any()).collect()
}

#[tokio::test]
async fn create_get_and_list_with_selectors_and_paging() {
    let fake = FakeApiServer::new();
    let client = client(&fake);
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "ns1");
    let pp = PostParams::default();
    within("creates", async {
        let a = api
            .create(&pp, &cm("a", &[("app", "web"), ("tier", "front")]))
            .await
            .expect("create a");
        assert!(a.uid().is_some(), "uid assigned");
        assert_eq!(a.metadata.generation, Some(1));
        assert!(a.metadata.creation_timestamp.is_some());
        let rv_a: u64 = a
            .resource_version()
            .expect("rv")
            .parse()
            .expect("numeric rv");
        let b = api
            .create(&pp, &cm("b", &[("app", "db")]))
            .await
            .expect("create b");
        let rv_b: u64 = b
            .resource_version()
            .expect("rv")
            .parse()
            .expect("numeric rv");
        assert!(rv_b > rv_a, "resource versions increase");
        assert_ne!(a.uid(), b.uid());
        api.create(&pp, &cm("c", &[])).await.expect("create c");
        Api::<ConfigMap>::namespaced(client.clone(), "ns2")
            .create(&pp, &cm("d", &[("app", "web")]))
            .await
            .expect("create d");
    })
    .await;

    let got = within("get", api.get("a")).await.expect("get a");
    assert_eq!(got.data.expect("data")["k"], "v");
    assert_eq!(got.metadata.namespace.as_deref(), Some("ns1"));

    let list = |sel: &str| {
        let api = api.clone();
        let lp = ListParams::default().labels(sel);
        async move { names(&api.list(&lp).await.expect("list")) }
    };
    within("selectors", async {
        assert_eq!(list("app=web").await, ["a"]);
        assert_eq!(list("app==db").await, ["b"]);
        assert_eq!(list("app!=web").await, ["b", "c"]);
        assert_eq!(list("app").await, ["a", "b"]);
        assert_eq!(list("!app").await, ["c"]);
        assert_eq!(list("app in (web,db)").await, ["a", "b"]);
        assert_eq!(list("app notin (web)").await, ["b", "c"]);
        assert_eq!(list("app=web,tier=front").await, ["a"]);
        let by_name = api
            .list(&ListParams::default().fields("metadata.name=b"))
            .await
            .expect("fields");
        assert_eq!(names(&by_name), ["b"]);
    })
    .await;

    // All namespaces, and the list's resourceVersion is the global one.
    let all: Api<ConfigMap> = Api::all(client.clone());
    let everything = within("list all", all.list(&ListParams::default()))
        .await
        .expect("list all");
    assert_eq!(names(&everything), ["a", "b", "c", "d"]);
    assert_eq!(
        everything.metadata.resource_version,
        Some(fake.resource_version().to_string())
    );
    let web = within(
        "list all web",
        all.list(&ListParams::default().labels("app=web")),
    )
    .await
    .expect("list");
    assert_eq!(names(&web), ["a", "d"]);

    // Paging.
    let page1 = within("page 1", api.list(&ListParams::default().limit(2)))
        .await
        .expect("page 1");
    assert_eq!(names(&page1), ["a", "b"]);
    let token = page1.metadata.continue_.clone().expect("continue token");
    let page2 = within(
        "page 2",
        api.list(&ListParams::default().limit(2).continue_token(&token)),
    )
    .await
    .expect("page 2");
    assert_eq!(names(&page2), ["c"]);
    assert!(page2.metadata.continue_.as_deref().unwrap_or("").is_empty());

    // Direct store access sees the same objects.
    assert_eq!(fake.list("v1", "configmaps", Some("ns1")).len(), 3);
    assert_eq!(fake.list("v1", "configmaps", None).len(), 4);
    assert!(fake.get("v1", "configmaps", Some("ns2"), "d").is_some());
}

#[tokio::test]
async fn create_twice_is_already_exists_and_generate_name_works() {
    let fake = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(client(&fake), "default");
    within("create", api.create(&PostParams::default(), &cm("x", &[])))
        .await
        .expect("create");
    let err = within(
        "create again",
        api.create(&PostParams::default(), &cm("x", &[])),
    )
    .await
    .expect_err("must conflict");
    match err {
        kube::Error::Api(s) => assert_eq!((s.code, s.reason.as_str()), (409, "AlreadyExists")),
        other => panic!("unexpected {other:?}"),
    }
    let mut generated = cm("", &[]);
    generated.metadata.name = None;
    generated.metadata.generate_name = Some("gen-".into());
    let made = within(
        "generateName",
        api.create(&PostParams::default(), &generated),
    )
    .await
    .expect("create");
    let name = made.name_any();
    assert!(name.starts_with("gen-") && name.len() == 9, "{name}");
}

#[tokio::test]
async fn replace_with_stale_resource_version_conflicts() {
    let fake = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(client(&fake), "default");
    let created = within("create", api.create(&PostParams::default(), &cm("x", &[])))
        .await
        .expect("create");
    let mut fresh = created.clone();
    fresh.data = Some([("k".to_string(), "v2".to_string())].into());
    let replaced = within("replace", api.replace("x", &PostParams::default(), &fresh))
        .await
        .expect("replace");
    assert_ne!(replaced.resource_version(), created.resource_version());
    assert_eq!(replaced.uid(), created.uid(), "uid is kept");

    let mut stale = created.clone();
    stale.data = Some([("k".to_string(), "v3".to_string())].into());
    let err = within(
        "stale replace",
        api.replace("x", &PostParams::default(), &stale),
    )
    .await
    .expect_err("stale");
    match err {
        kube::Error::Api(s) => assert_eq!((s.code, s.reason.as_str()), (409, "Conflict")),
        other => panic!("unexpected {other:?}"),
    }
    let mut missing = cm("nope", &[]);
    missing.metadata.resource_version = None;
    let err = within(
        "replace missing",
        api.replace("nope", &PostParams::default(), &missing),
    )
    .await
    .expect_err("missing");
    assert!(matches!(err, kube::Error::Api(s) if s.code == 404 && s.reason == "NotFound"));
    // A replace without a resourceVersion is unconditional; an identical one is a no-op.
    let mut same = replaced.clone();
    same.metadata.resource_version = None;
    let again = within(
        "no-op replace",
        api.replace("x", &PostParams::default(), &same),
    )
    .await
    .expect("replace");
    assert_eq!(again.resource_version(), replaced.resource_version());
}

#[tokio::test]
async fn delete_garbage_collects_dependents_recursively() {
    let fake = FakeApiServer::new();
    let client = client(&fake);
    let revisions: Api<FunctionRevision> = Api::all(client.clone());
    let services: Api<Service> = Api::namespaced(client.clone(), "crossplane-system");
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "crossplane-system");
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), "crossplane-system");
    let pp = PostParams::default();

    let rev = within("rev", revisions.create(&pp, &revision("fn-abc")))
        .await
        .expect("rev");
    let other = within("other", configmaps.create(&pp, &cm("survivor", &[])))
        .await
        .expect("other");
    let rev_ref = rev.controller_owner_ref(&()).expect("owner ref needs uid");
    let other_ref = other.controller_owner_ref(&()).expect("owner ref");

    let svc = Service {
        metadata: ObjectMeta {
            name: Some("fn".into()),
            owner_references: Some(vec![rev_ref.clone()]),
            ..Default::default()
        },
        ..Default::default()
    };
    let svc = within("svc", services.create(&pp, &svc))
        .await
        .expect("svc");
    // Owned by the service: deleted when the service is collected.
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some("fn-tls".into()),
            owner_references: Some(vec![svc.controller_owner_ref(&()).expect("ref")]),
            ..Default::default()
        },
        ..Default::default()
    };
    within("secret", secrets.create(&pp, &secret))
        .await
        .expect("secret");
    // Two owners, one survives: kept, with the dangling reference removed.
    let mut shared = cm("shared", &[]);
    let mut second = other_ref.clone();
    second.controller = Some(false);
    shared.metadata.owner_references = Some(vec![rev_ref.clone(), second]);
    within("shared", configmaps.create(&pp, &shared))
        .await
        .expect("shared");

    let before: u64 = rev.resource_version().expect("rv").parse().expect("rv");
    let deleted = within(
        "delete",
        revisions.delete("fn-abc", &DeleteParams::default()),
    )
    .await
    .expect("delete");
    let deleted = deleted.left().expect("the deleted object is returned");
    let after: u64 = deleted.resource_version().expect("rv").parse().expect("rv");
    assert!(after > before, "DELETED carries a new resourceVersion");

    assert!(
        within("get rev", revisions.get_opt("fn-abc"))
            .await
            .expect("get")
            .is_none()
    );
    assert!(
        within("get svc", services.get_opt("fn"))
            .await
            .expect("get")
            .is_none()
    );
    assert!(
        within("get secret", secrets.get_opt("fn-tls"))
            .await
            .expect("get")
            .is_none()
    );
    let shared = within("get shared", configmaps.get("shared"))
        .await
        .expect("shared survives");
    let refs = shared.metadata.owner_references.expect("refs");
    assert_eq!(refs.len(), 1);
    assert_eq!(refs[0].uid, other.uid().expect("uid"));
    assert!(
        fake.get("v1", "configmaps", Some("crossplane-system"), "survivor")
            .is_some()
    );
}

#[tokio::test]
async fn finalizers_delay_deletion_until_removed() {
    let fake = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(client(&fake), "default");
    let mut obj = cm("fin", &[]);
    obj.metadata.finalizers = Some(vec!["xfn.test/cleanup".into()]);
    within("create", api.create(&PostParams::default(), &obj))
        .await
        .expect("create");
    let marked = within("delete", api.delete("fin", &DeleteParams::default()))
        .await
        .expect("delete");
    let marked = marked.left().expect("object");
    assert!(marked.metadata.deletion_timestamp.is_some());
    assert!(
        within("still there", api.get_opt("fin"))
            .await
            .expect("get")
            .is_some()
    );
    let patch = json!([
        {"op": "test", "path": "/metadata/finalizers/0", "value": "xfn.test/cleanup"},
        {"op": "remove", "path": "/metadata/finalizers/0"}
    ]);
    within(
        "remove finalizer",
        api.patch(
            "fin",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::<()>::Json(serde_json::from_value(patch).expect("json patch")),
        ),
    )
    .await
    .expect("patch");
    assert!(
        within("gone", api.get_opt("fin"))
            .await
            .expect("get")
            .is_none()
    );
}

#[tokio::test]
async fn direct_store_access_round_trips() {
    let fake = FakeApiServer::new();
    let stored = fake
        .insert(json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "namespace": "crossplane-system"},
            "spec": {"replicas": 1},
            "status": {"availableReplicas": 1}
        }))
        .expect("insert");
    assert!(stored["metadata"]["uid"].is_string());
    // The backdoor keeps status, unlike an API create.
    let api: Api<Deployment> = Api::namespaced(client(&fake), "crossplane-system");
    let d = within("get", api.get("d")).await.expect("get");
    assert_eq!(d.status.and_then(|s| s.available_replicas), Some(1));
    assert!(
        fake.delete("apps/v1", "deployments", Some("crossplane-system"), "d")
            .is_some()
    );
    assert!(
        fake.get("apps/v1", "deployments", Some("crossplane-system"), "d")
            .is_none()
    );
    assert!(
        fake.insert(json!({"apiVersion": "nope/v1", "kind": "Thing"}))
            .is_err()
    );
}

#[tokio::test]
async fn dry_run_writes_are_not_stored() {
    let fake = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(client(&fake), "default");
    let pp = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let rv = fake.resource_version();
    let made = within("dry-run create", api.create(&pp, &cm("dry", &[])))
        .await
        .expect("create");
    assert_eq!(made.name_any(), "dry");
    assert!(
        fake.get("v1", "configmaps", Some("default"), "dry")
            .is_none()
    );
    assert_eq!(fake.resource_version(), rv);
}
