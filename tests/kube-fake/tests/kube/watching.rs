use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{
    Api, DeleteParams, ObjectMeta, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::runtime::watcher::{self, Event, watcher};
use kube::{Resource, ResourceExt};
use serde_json::json;
use xfn_kube_fake::{FailureRule, FakeApiServer};

use crate::common::{client, within};

fn cm(name: &str, app: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(BTreeMap::from([("app".to_string(), app.to_string())])),
            ..Default::default()
        },
        ..Default::default()
    }
}

type Events = futures_util::stream::BoxStream<'static, Result<Event<ConfigMap>, watcher::Error>>;

async fn next(stream: &mut Events) -> Result<Event<ConfigMap>, watcher::Error> {
    within("watcher event", stream.next())
        .await
        .expect("stream ended")
}

/// A compact description of a watcher event.
fn describe(ev: &Event<ConfigMap>) -> String {
    match ev {
        Event::Init => "Init".into(),
        Event::InitApply(o) => format!("InitApply {}", o.name_any()),
        Event::InitDone => "InitDone".into(),
        Event::Apply(o) => format!(
            "Apply {} {}",
            o.name_any(),
            o.data
                .as_ref()
                .and_then(|d| d.get("v"))
                .map(String::as_str)
                .unwrap_or("-")
        ),
        Event::Delete(o) => format!("Delete {}", o.name_any()),
    }
}

#[tokio::test]
async fn watcher_sees_writes_in_order_including_those_between_list_and_watch() {
    let fake = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(client(&fake), "default");
    within(
        "seed",
        api.create(&PostParams::default(), &cm("one", "web")),
    )
    .await
    .expect("seed");
    // The first watch request fails, so the watcher sits between its list and its watch while we write.
    fake.inject_failure(FailureRule::new("/configmaps", 500).query_contains("watch=true"));
    let mut stream = watcher(api.clone(), watcher::Config::default()).boxed();

    assert_eq!(describe(&next(&mut stream).await.expect("init")), "Init");
    assert_eq!(
        describe(&next(&mut stream).await.expect("initapply")),
        "InitApply one"
    );
    assert_eq!(
        describe(&next(&mut stream).await.expect("initdone")),
        "InitDone"
    );
    assert!(
        next(&mut stream).await.is_err(),
        "the injected watch failure surfaces"
    );

    // Writes while no watch is open.
    within("gap writes", async {
        api.create(&PostParams::default(), &cm("two", "web"))
            .await
            .expect("create two");
        let p = json!({"data": {"v": "1"}});
        api.patch("one", &PatchParams::default(), &Patch::Merge(&p))
            .await
            .expect("patch one");
        api.delete("one", &DeleteParams::default())
            .await
            .expect("delete one");
    })
    .await;
    assert_eq!(
        describe(&next(&mut stream).await.expect("replayed")),
        "Apply two -"
    );
    assert_eq!(
        describe(&next(&mut stream).await.expect("replayed")),
        "Apply one 1"
    );
    assert_eq!(
        describe(&next(&mut stream).await.expect("replayed")),
        "Delete one"
    );

    // Live writes.
    let p = json!({"data": {"v": "2"}});
    within(
        "live patch",
        api.patch("two", &PatchParams::default(), &Patch::Merge(&p)),
    )
    .await
    .expect("patch");
    assert_eq!(
        describe(&next(&mut stream).await.expect("live")),
        "Apply two 2"
    );
    // A no-op patch produces no event: the next event is the delete.
    within(
        "no-op patch",
        api.patch("two", &PatchParams::default(), &Patch::Merge(&p)),
    )
    .await
    .expect("patch");
    within("live delete", api.delete("two", &DeleteParams::default()))
        .await
        .expect("delete");
    assert_eq!(
        describe(&next(&mut stream).await.expect("live")),
        "Delete two"
    );
}

#[tokio::test]
async fn watcher_relists_after_410() {
    let fake = FakeApiServer::new();
    let client = client(&fake);
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    within(
        "seed",
        api.create(&PostParams::default(), &cm("one", "web")),
    )
    .await
    .expect("seed");
    let mut stream = watcher(api.clone(), watcher::Config::default()).boxed();
    assert_eq!(describe(&next(&mut stream).await.expect("init")), "Init");
    assert_eq!(
        describe(&next(&mut stream).await.expect("initapply")),
        "InitApply one"
    );
    assert_eq!(
        describe(&next(&mut stream).await.expect("initdone")),
        "InitDone"
    );
    // Other kinds move the global resourceVersion past what the configmap watch has seen.
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "default");
    for name in ["s1", "s2"] {
        let s = Secret {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..Default::default()
            },
            ..Default::default()
        };
        within("secret", secrets.create(&PostParams::default(), &s))
            .await
            .expect("secret");
    }
    // Drive the watcher until its watch request is open.
    within("watch open", async {
        while fake.active_watches() == 0 {
            if let Ok(ev) = tokio::time::timeout(Duration::from_millis(50), stream.next()).await {
                panic!("unexpected event {:?}", ev.map(|e| e.map(|e| describe(&e))));
            }
        }
    })
    .await;
    let lists_before = fake
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/configmaps") && !r.query_has("watch=true"))
        .count();
    fake.compact();
    fake.close_watches();

    let err = next(&mut stream)
        .await
        .expect_err("410 surfaces as an error");
    assert!(format!("{err:?}").contains("410"), "{err:?}");
    assert_eq!(describe(&next(&mut stream).await.expect("relist")), "Init");
    assert_eq!(
        describe(&next(&mut stream).await.expect("relist")),
        "InitApply one"
    );
    assert_eq!(
        describe(&next(&mut stream).await.expect("relist")),
        "InitDone"
    );
    let lists_after = fake
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/configmaps") && !r.query_has("watch=true"))
        .count();
    assert_eq!(lists_after, lists_before + 1, "the watcher listed again");
    // And it keeps watching from the new list.
    within(
        "create",
        api.create(&PostParams::default(), &cm("two", "web")),
    )
    .await
    .expect("create");
    assert_eq!(
        describe(&next(&mut stream).await.expect("live")),
        "Apply two -"
    );
}

#[tokio::test]
async fn selector_transitions_become_added_and_deleted() {
    let fake = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(client(&fake), "default");
    let wp = WatchParams::default().labels("app=web").timeout(10);
    let stream = within("watch", api.watch(&wp, "0")).await.expect("watch");
    let mut stream = stream.boxed();
    let mut ev = async || {
        within("watch event", stream.try_next())
            .await
            .expect("ok")
            .expect("not ended")
    };

    within(
        "create",
        api.create(&PostParams::default(), &cm("other", "db")),
    )
    .await
    .expect("create");
    within(
        "create",
        api.create(&PostParams::default(), &cm("x", "web")),
    )
    .await
    .expect("create");
    assert!(matches!(ev().await, WatchEvent::Added(o) if o.name_any() == "x"));
    let to_db = json!({"metadata": {"labels": {"app": "db"}}});
    within(
        "relabel",
        api.patch("x", &PatchParams::default(), &Patch::Merge(&to_db)),
    )
    .await
    .expect("patch");
    assert!(matches!(ev().await, WatchEvent::Deleted(o) if o.name_any() == "x"));
    let to_web = json!({"metadata": {"labels": {"app": "web"}}});
    within(
        "relabel",
        api.patch("x", &PatchParams::default(), &Patch::Merge(&to_web)),
    )
    .await
    .expect("patch");
    assert!(matches!(ev().await, WatchEvent::Added(o) if o.name_any() == "x"));
    let data = json!({"data": {"v": "1"}});
    within(
        "modify",
        api.patch("x", &PatchParams::default(), &Patch::Merge(&data)),
    )
    .await
    .expect("patch");
    assert!(matches!(ev().await, WatchEvent::Modified(o) if o.name_any() == "x"));
}

#[tokio::test]
async fn watches_end_after_their_timeout() {
    let fake = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(client(&fake), "default");
    let rv = fake.resource_version().to_string();
    let stream = within("watch", api.watch(&WatchParams::default().timeout(1), &rv))
        .await
        .expect("watch");
    let events: Vec<_> = within("timeout", stream.collect::<Vec<_>>()).await;
    assert!(events.is_empty());
    crate::common::eventually("released", || fake.active_watches() == 0).await;
}

#[tokio::test]
async fn delete_events_reach_watchers_with_gc() {
    let fake = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(client(&fake), "default");
    let owner = within(
        "owner",
        api.create(&PostParams::default(), &cm("owner", "web")),
    )
    .await
    .expect("owner");
    let mut child = cm("child", "web");
    child.metadata.owner_references = Some(vec![owner.controller_owner_ref(&()).expect("ref")]);
    within("child", api.create(&PostParams::default(), &child))
        .await
        .expect("child");
    let rv = fake.resource_version().to_string();
    let stream = within("watch", api.watch(&WatchParams::default().timeout(10), &rv))
        .await
        .expect("watch");
    let mut stream = stream.boxed();
    within("delete", api.delete("owner", &DeleteParams::default()))
        .await
        .expect("delete");
    let mut deleted = Vec::new();
    for _ in 0..2 {
        match within("event", stream.try_next())
            .await
            .expect("ok")
            .expect("event")
        {
            WatchEvent::Deleted(o) => {
                deleted.push((o.name_any(), o.resource_version().expect("rv")))
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(deleted[0].0, "owner");
    assert_eq!(deleted[1].0, "child");
    assert!(deleted[1].1.parse::<u64>().expect("rv") > deleted[0].1.parse::<u64>().expect("rv"));
}

#[tokio::test]
async fn bookmarks_are_sent_when_allowed() {
    let config = xfn_kube_fake::Config {
        bookmark_interval: Some(Duration::from_millis(100)),
        ..Default::default()
    };
    let fake = FakeApiServer::with_config(xfn_kube_fake::Registry::with_defaults(), config);
    let api: Api<ConfigMap> = Api::namespaced(client(&fake), "default");
    within("seed", api.create(&PostParams::default(), &cm("a", "web")))
        .await
        .expect("seed");
    let rv = fake.resource_version();
    let wp = WatchParams::default().timeout(10);
    let stream = within("watch", api.watch(&wp, &rv.to_string()))
        .await
        .expect("watch");
    let mut stream = stream.boxed();
    match within("bookmark", stream.try_next())
        .await
        .expect("ok")
        .expect("event")
    {
        WatchEvent::Bookmark(b) => assert_eq!(b.metadata.resource_version, rv.to_string()),
        other => panic!("expected a bookmark, got {other:?}"),
    }
}

#[tokio::test]
async fn streaming_list_watchers_get_initial_events() {
    let fake = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(client(&fake), "default");
    within(
        "seed",
        api.create(&PostParams::default(), &cm("one", "web")),
    )
    .await
    .expect("seed");
    let mut stream = watcher(api.clone(), watcher::Config::default().streaming_lists()).boxed();
    assert_eq!(describe(&next(&mut stream).await.expect("init")), "Init");
    assert_eq!(
        describe(&next(&mut stream).await.expect("initapply")),
        "InitApply one"
    );
    assert_eq!(
        describe(&next(&mut stream).await.expect("initdone")),
        "InitDone"
    );
    within(
        "create",
        api.create(&PostParams::default(), &cm("two", "web")),
    )
    .await
    .expect("create");
    assert_eq!(
        describe(&next(&mut stream).await.expect("live")),
        "Apply two -"
    );
    assert!(
        fake.requests()
            .iter()
            .filter(|r| r.method == "GET")
            .all(|r| r.query_has("watch=true") && r.query_has("sendInitialEvents=true")),
        "no list request was needed"
    );
}
