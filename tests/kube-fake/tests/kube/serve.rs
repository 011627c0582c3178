use futures_util::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use kube::api::{Api, ListParams, ObjectMeta, PostParams};
use kube::runtime::watcher::{self, Event, watcher};
use xfn_kube_fake::FakeApiServer;

use crate::common::within;

fn cm(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        ..Default::default()
    }
}

#[tokio::test]
async fn loopback_http_mode_works_with_a_config_client() {
    let fake = FakeApiServer::new();
    let (addr, handle) = within("serve", fake.serve("127.0.0.1:0".parse().expect("addr")))
        .await
        .expect("bind");
    assert!(addr.ip().is_loopback());
    assert_eq!(handle.url(), format!("http://{addr}"));
    let config = kube::Config::new(handle.url().parse().expect("url"));
    let client = kube::Client::try_from(config).expect("client");
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");

    within(
        "create",
        api.create(&PostParams::default(), &cm("over-http")),
    )
    .await
    .expect("create");
    let list = within("list", api.list(&ListParams::default()))
        .await
        .expect("list");
    assert_eq!(list.items.len(), 1);

    let mut stream = watcher(api.clone(), watcher::Config::default()).boxed();
    let mut seen = Vec::new();
    while seen.len() < 3 {
        let ev = within("watch over http", stream.next())
            .await
            .expect("event")
            .expect("ok");
        seen.push(ev);
    }
    assert!(matches!(&seen[1], Event::InitApply(o) if o.name_any() == "over-http"));
    within(
        "create live",
        api.create(&PostParams::default(), &cm("live")),
    )
    .await
    .expect("create");
    let ev = within("live event", stream.next())
        .await
        .expect("event")
        .expect("ok");
    assert!(matches!(ev, Event::Apply(o) if o.name_any() == "live"));

    // Shutting the handle down closes the port and the open watch.
    within("shutdown", handle.shutdown()).await;
    let ended = within("watch ends", stream.next()).await;
    assert!(
        !matches!(ended, Some(Ok(Event::Apply(_)))),
        "no more events after shutdown"
    );
    let err = within("request after shutdown", api.list(&ListParams::default())).await;
    assert!(err.is_err(), "the listener is gone");
}

#[tokio::test]
async fn dropping_the_handle_stops_serving() {
    let fake = FakeApiServer::new();
    let (addr, handle) = within("serve", fake.serve("127.0.0.1:0".parse().expect("addr")))
        .await
        .expect("bind");
    drop(handle);
    let mut refused = false;
    for _ in 0..50 {
        if tokio::net::TcpStream::connect(addr).await.is_err() {
            refused = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(refused, "the port still accepts connections");
}
