use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams};
use serde_json::{Value, json};
use tower::ServiceExt;
use xfn_kube_fake::{Config, FailureRule, FakeApiServer, Registry, ResourceInfo};

use crate::common::{client, within};

async fn call(
    fake: &FakeApiServer,
    method: Method,
    uri: &str,
    ct: Option<&str>,
    body: Vec<u8>,
) -> (StatusCode, Value) {
    let mut req = Request::builder().method(method).uri(uri);
    if let Some(ct) = ct {
        req = req.header("content-type", ct);
    }
    let req = req
        .body(Full::new(bytes::Bytes::from(body)))
        .expect("request");
    let res = within("call", fake.service().oneshot(req))
        .await
        .expect("infallible");
    let status = res.status();
    let bytes = within("body", res.into_body().collect())
        .await
        .expect("body")
        .to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

fn assert_status(body: &Value, code: u16, reason: &str) {
    assert_eq!(body["kind"], "Status", "{body}");
    assert_eq!(body["apiVersion"], "v1");
    assert_eq!(body["status"], "Failure");
    assert_eq!(body["code"], code, "{body}");
    assert_eq!(body["reason"], reason, "{body}");
    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
}

#[tokio::test]
async fn errors_are_status_objects() {
    let fake = FakeApiServer::new();
    let (code, body) = call(
        &fake,
        Method::GET,
        "/apis/example.com/v1/widgets",
        None,
        vec![],
    )
    .await;
    assert_eq!(code, 404);
    assert_status(&body, 404, "NotFound");

    let (code, body) = call(
        &fake,
        Method::GET,
        "/api/v1/namespaces/default/configmaps/missing",
        None,
        vec![],
    )
    .await;
    assert_eq!(code, 404);
    assert_status(&body, 404, "NotFound");

    let (code, body) = call(
        &fake,
        Method::POST,
        "/api/v1/namespaces/default/configmaps",
        Some("application/json"),
        b"{not json".to_vec(),
    )
    .await;
    assert_eq!(code, 400);
    assert_status(&body, 400, "BadRequest");

    let (code, body) = call(
        &fake,
        Method::POST,
        "/api/v1/namespaces/default/configmaps/x",
        None,
        vec![],
    )
    .await;
    assert_eq!(code, 405);
    assert_status(&body, 405, "MethodNotAllowed");

    let (code, body) = call(
        &fake,
        Method::GET,
        "/api/v1/namespaces/default/configmaps?labelSelector=a+in+(b",
        None,
        vec![],
    )
    .await;
    assert_eq!(code, 400);
    assert_status(&body, 400, "BadRequest");

    // configmaps have no status subresource.
    let (code, _) = call(
        &fake,
        Method::GET,
        "/api/v1/namespaces/default/configmaps/x/status",
        None,
        vec![],
    )
    .await;
    assert_eq!(code, 404);

    let create = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}});
    let (code, _) = call(
        &fake,
        Method::POST,
        "/api/v1/namespaces/default/configmaps",
        Some("application/json"),
        serde_json::to_vec(&create).expect("ser"),
    )
    .await;
    assert_eq!(code, 201);
    let (code, body) = call(
        &fake,
        Method::PATCH,
        "/api/v1/namespaces/default/configmaps/x",
        Some("text/plain"),
        b"{}".to_vec(),
    )
    .await;
    assert_eq!(code, 415);
    assert_status(&body, 415, "UnsupportedMediaType");
    let (code, body) = call(
        &fake,
        Method::PATCH,
        "/api/v1/namespaces/default/configmaps/x",
        Some("application/apply-patch+yaml"),
        b"data: {a: b}".to_vec(),
    )
    .await;
    assert_eq!(code, 400, "apply needs a fieldManager");
    assert_status(&body, 400, "BadRequest");
    let (code, body) = call(
        &fake,
        Method::PATCH,
        "/api/v1/namespaces/default/configmaps/x?fieldManager=t",
        Some("application/apply-patch+yaml"),
        b"apiVersion: v1\nkind: ConfigMap\ndata:\n  a: b\n".to_vec(),
    )
    .await;
    assert_eq!(code, 200, "YAML apply bodies work: {body}");
    assert_eq!(body["data"]["a"], "b");
}

#[tokio::test]
async fn request_bodies_are_bounded() {
    let config = Config {
        max_body_bytes: 1024,
        ..Config::default()
    };
    let fake = FakeApiServer::with_config(Registry::with_defaults(), config);
    let big = json!({"metadata": {"name": "big"}, "data": {"k": "x".repeat(4096)}});
    let (code, body) = call(
        &fake,
        Method::POST,
        "/api/v1/namespaces/default/configmaps",
        Some("application/json"),
        serde_json::to_vec(&big).expect("ser"),
    )
    .await;
    assert_eq!(code, 413);
    assert_status(&body, 413, "RequestEntityTooLarge");
}

#[tokio::test]
async fn injected_failures_and_request_log() {
    let fake = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::namespaced(client(&fake), "default");
    fake.inject_failure(
        FailureRule::new("/configmaps", 500)
            .method("GET")
            .times(2)
            .message("boom"),
    );
    for _ in 0..2 {
        let err = within("list", api.list(&ListParams::default()))
            .await
            .expect_err("injected");
        assert!(
            matches!(err, kube::Error::Api(ref s) if s.code == 500 && s.message == "boom"),
            "{err:?}"
        );
    }
    within("list", api.list(&ListParams::default()))
        .await
        .expect("rule used up");
    let log = fake.requests();
    assert_eq!(log.len(), 3);
    assert!(
        log.iter()
            .all(|r| r.method == "GET" && r.path == "/api/v1/namespaces/default/configmaps")
    );
    fake.clear_requests();
    assert!(fake.requests().is_empty());
}

#[tokio::test]
async fn registered_resources_are_served() {
    let fake = FakeApiServer::new();
    fake.register(
        ResourceInfo::new("example.com/v1alpha1", "widgets", "Widget", true).with_status(),
    );
    let (code, body) = call(
        &fake,
        Method::POST,
        "/apis/example.com/v1alpha1/namespaces/ns/widgets",
        Some("application/json"),
        serde_json::to_vec(&json!({"metadata": {"name": "w"}, "spec": {"size": 1}})).expect("ser"),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["kind"], "Widget");
    assert_eq!(body["apiVersion"], "example.com/v1alpha1");
    let (code, body) = call(
        &fake,
        Method::GET,
        "/apis/example.com/v1alpha1",
        None,
        vec![],
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(body["resources"][0]["name"], "widgets");
    let (code, body) = call(&fake, Method::GET, "/version", None, vec![]).await;
    assert_eq!(code, 200);
    assert_eq!(body["major"], "1");
}

#[tokio::test]
async fn watches_are_bounded_in_number() {
    let config = Config {
        max_watches: 1,
        ..Config::default()
    };
    let fake = FakeApiServer::with_config(Registry::with_defaults(), config);
    let uri = "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0&timeoutSeconds=5";
    let req = Request::get(uri)
        .body(Full::new(bytes::Bytes::new()))
        .expect("req");
    let first = within("first watch", fake.service().oneshot(req))
        .await
        .expect("infallible");
    assert_eq!(first.status(), 200);
    assert_eq!(fake.active_watches(), 1);
    let (code, body) = call(&fake, Method::GET, uri, None, vec![]).await;
    assert_eq!(code, 429);
    assert_status(&body, 429, "TooManyRequests");
    drop(first);
    // The watch task notices the dropped body and ends.
    crate::common::eventually("watch released", || fake.active_watches() == 0).await;
}

#[tokio::test]
async fn too_old_resource_version_gets_410_error_event() {
    let fake = FakeApiServer::new();
    fake.insert(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}))
        .expect("insert");
    fake.insert(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}}))
        .expect("insert");
    fake.compact();
    let req = Request::get("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=1")
        .body(Full::new(bytes::Bytes::new()))
        .expect("req");
    let res = within("watch", fake.service().oneshot(req))
        .await
        .expect("infallible");
    assert_eq!(res.status(), 200);
    let bytes = within("body", res.into_body().collect())
        .await
        .expect("body")
        .to_bytes();
    let text = String::from_utf8(bytes.to_vec()).expect("utf8");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert_eq!(lines[0]["type"], "ERROR");
    assert_status(&lines[0]["object"], 410, "Expired");
}
