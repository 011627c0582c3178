//! Round-trip and conversion tests.

use std::collections::{BTreeMap, HashMap};

use prost::Message as _;
use prost_types::{Duration, ListValue, Struct, Value, value::Kind};

use super::*;

fn s(v: &str) -> Value {
    Value {
        kind: Some(Kind::StringValue(v.to_owned())),
    }
}

fn obj(fields: impl IntoIterator<Item = (&'static str, Value)>) -> Struct {
    Struct {
        fields: fields
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect::<BTreeMap<_, _>>(),
    }
}

/// A JSON-ish object using every `Value` kind.
fn kube_object(kind: &str, name: &str) -> Struct {
    obj([
        ("apiVersion", s("example.org/v1")),
        ("kind", s(kind)),
        (
            "metadata",
            Value {
                kind: Some(Kind::StructValue(obj([("name", s(name))]))),
            },
        ),
        (
            "spec",
            Value {
                kind: Some(Kind::StructValue(obj([
                    (
                        "replicas",
                        Value {
                            kind: Some(Kind::NumberValue(3.0)),
                        },
                    ),
                    (
                        "enabled",
                        Value {
                            kind: Some(Kind::BoolValue(true)),
                        },
                    ),
                    (
                        "nothing",
                        Value {
                            kind: Some(Kind::NullValue(0)),
                        },
                    ),
                    (
                        "tags",
                        Value {
                            kind: Some(Kind::ListValue(ListValue {
                                values: vec![s("a"), s("b")],
                            })),
                        },
                    ),
                ]))),
            },
        ),
    ])
}

fn resource(name: &str, ready: v1::Ready) -> v1::Resource {
    v1::Resource {
        resource: Some(kube_object("Thing", name)),
        connection_details: HashMap::from([("password".to_owned(), b"s3cr3t\x00\xff".to_vec())]),
        ready: ready as i32,
    }
}

fn state() -> v1::State {
    v1::State {
        composite: Some(resource("xr", v1::Ready::Unspecified)),
        resources: HashMap::from([
            ("a".to_owned(), resource("a", v1::Ready::True)),
            ("b".to_owned(), resource("b", v1::Ready::False)),
        ]),
    }
}

/// A request with every field (including the deprecated one) set.
fn full_request() -> v1::RunFunctionRequest {
    let resources = v1::Resources {
        items: vec![
            resource("r1", v1::Ready::Unspecified),
            resource("r2", v1::Ready::True),
        ],
    };
    v1::RunFunctionRequest {
        meta: Some(v1::RequestMeta {
            tag: "tag-1".to_owned(),
            capabilities: vec![
                v1::Capability::Capabilities as i32,
                v1::Capability::RequiredResources as i32,
                v1::Capability::Credentials as i32,
                v1::Capability::Conditions as i32,
                v1::Capability::RequiredSchemas as i32,
            ],
        }),
        observed: Some(state()),
        desired: Some(v1::State::default()),
        input: Some(obj([("x", s("y"))])),
        context: Some(obj([("apiextensions.crossplane.io/environment", s("e"))])),
        extra_resources: HashMap::from([("old".to_owned(), resources.clone())]),
        credentials: HashMap::from([(
            "creds".to_owned(),
            v1::Credentials {
                source: Some(v1::credentials::Source::CredentialData(
                    v1::CredentialData {
                        data: HashMap::from([("key".to_owned(), vec![0, 1, 2, 255])]),
                    },
                )),
            },
        )]),
        required_resources: HashMap::from([("new".to_owned(), resources)]),
        required_schemas: HashMap::from([
            (
                "found".to_owned(),
                v1::Schema {
                    openapi_v3: Some(obj([("type", s("object"))])),
                },
            ),
            ("missing".to_owned(), v1::Schema { openapi_v3: None }),
        ]),
    }
}

/// A response with every field (including the deprecated one) set.
fn full_response() -> v1::RunFunctionResponse {
    let selector = |m| v1::ResourceSelector {
        api_version: "v1".to_owned(),
        kind: "ConfigMap".to_owned(),
        r#match: Some(m),
        namespace: Some("default".to_owned()),
    };
    v1::RunFunctionResponse {
        meta: Some(v1::ResponseMeta {
            tag: "tag-1".to_owned(),
            ttl: Some(Duration {
                seconds: 60,
                nanos: 5,
            }),
        }),
        desired: Some(state()),
        results: vec![
            v1::Result {
                severity: v1::Severity::Normal as i32,
                message: "ok".to_owned(),
                reason: Some("Composed".to_owned()),
                target: Some(v1::Target::CompositeAndClaim as i32),
            },
            v1::Result {
                severity: v1::Severity::Fatal as i32,
                message: "bad".to_owned(),
                reason: None,
                target: None,
            },
        ],
        context: Some(obj([("k", s("v"))])),
        requirements: Some(v1::Requirements {
            extra_resources: HashMap::from([(
                "old".to_owned(),
                selector(v1::resource_selector::Match::MatchName("cm".to_owned())),
            )]),
            resources: HashMap::from([(
                "new".to_owned(),
                selector(v1::resource_selector::Match::MatchLabels(v1::MatchLabels {
                    labels: HashMap::from([("app".to_owned(), "x".to_owned())]),
                })),
            )]),
            schemas: HashMap::from([(
                "s".to_owned(),
                v1::SchemaSelector {
                    api_version: "example.org/v1".to_owned(),
                    kind: "XThing".to_owned(),
                },
            )]),
        }),
        conditions: vec![v1::Condition {
            r#type: "DatabaseReady".to_owned(),
            status: v1::Status::ConditionTrue as i32,
            reason: "Available".to_owned(),
            message: Some("up".to_owned()),
            target: Some(v1::Target::Composite as i32),
        }],
        output: Some(obj([("done", s("yes"))])),
    }
}

#[test]
fn request_round_trips() {
    let req = full_request();
    let bytes = req.encode_to_vec();
    let back = v1::RunFunctionRequest::decode(bytes.as_slice()).expect("decode");
    assert_eq!(back, req);
}

#[test]
fn response_round_trips() {
    let rsp = full_response();
    let back = v1::RunFunctionResponse::decode(rsp.encode_to_vec().as_slice()).expect("decode");
    assert_eq!(back, rsp);
}

#[test]
fn request_converts_between_v1_and_v1beta1() {
    let req = full_request();
    let beta = v1beta1::RunFunctionRequest::try_from(&req).expect("to v1beta1");
    // The v1beta1 bytes decode as the original v1 message.
    let decoded = v1::RunFunctionRequest::decode(beta.encode_to_vec().as_slice()).expect("decode");
    assert_eq!(decoded, req);
    // Spot-check that fields landed where expected.
    assert_eq!(beta.meta.as_ref().map(|m| m.tag.as_str()), Some("tag-1"));
    assert_eq!(beta.extra_resources["old"].items.len(), 2);
    assert!(beta.required_schemas["missing"].openapi_v3.is_none());
    let back = v1::RunFunctionRequest::try_from(beta).expect("to v1");
    assert_eq!(back, req);
}

#[test]
fn response_converts_between_v1_and_v1beta1() {
    let rsp = full_response();
    let beta = v1beta1::RunFunctionResponse::try_from(rsp.clone()).expect("to v1beta1");
    let decoded = v1::RunFunctionResponse::decode(beta.encode_to_vec().as_slice()).expect("decode");
    assert_eq!(decoded, rsp);
    assert_eq!(
        beta.results[0].target,
        Some(v1beta1::Target::CompositeAndClaim as i32)
    );
    let back = v1::RunFunctionResponse::try_from(&beta).expect("to v1");
    assert_eq!(back, rsp);
}

#[test]
fn transcode_keeps_messages_past_prosts_old_recursion_limit() {
    // 200 objects is 600 message levels: past prost's default limit of 100,
    // within MAX_MESSAGE_DEPTH (issue 12, item 7).
    let mut deep = obj([]);
    for _ in 0..200 {
        deep = obj([(
            "n",
            Value {
                kind: Some(Kind::StructValue(deep)),
            },
        )]);
    }
    let req = v1::RunFunctionRequest {
        input: Some(deep),
        ..Default::default()
    };
    let beta = v1beta1::RunFunctionRequest::try_from(&req).expect("to v1beta1");
    let back = v1::RunFunctionRequest::try_from(&beta).expect("to v1");
    assert_eq!(back, req);
}

#[test]
fn descriptor_set_has_both_packages() {
    let fds = prost_types::FileDescriptorSet::decode(FILE_DESCRIPTOR_SET).expect("decode");
    let packages: Vec<&str> = fds.file.iter().map(|f| f.package()).collect();
    assert!(packages.contains(&"apiextensions.fn.proto.v1"));
    assert!(packages.contains(&"apiextensions.fn.proto.v1beta1"));
    assert!(packages.contains(&"google.protobuf"));
    for (pkg, name) in [
        ("apiextensions.fn.proto.v1", V1_SERVICE_NAME),
        ("apiextensions.fn.proto.v1beta1", V1BETA1_SERVICE_NAME),
    ] {
        let file = fds.file.iter().find(|f| f.package() == pkg).expect("file");
        assert_eq!(file.service.len(), 1);
        assert_eq!(format!("{pkg}.{}", file.service[0].name()), name);
    }
}

#[test]
fn service_names_match_generated_code() {
    use tonic::server::NamedService;
    assert_eq!(
        <v1::function_runner_service_server::FunctionRunnerServiceServer<Noop> as NamedService>::NAME,
        V1_SERVICE_NAME
    );
    assert_eq!(
        <v1beta1::function_runner_service_server::FunctionRunnerServiceServer<Noop> as NamedService>::NAME,
        V1BETA1_SERVICE_NAME
    );
}

/// A do-nothing function, to instantiate the generated servers.
struct Noop;

#[tonic::async_trait]
impl v1::function_runner_service_server::FunctionRunnerService for Noop {
    async fn run_function(
        &self,
        _: tonic::Request<v1::RunFunctionRequest>,
    ) -> Result<tonic::Response<v1::RunFunctionResponse>, tonic::Status> {
        Err(tonic::Status::unimplemented("noop"))
    }
}

#[tonic::async_trait]
impl v1beta1::function_runner_service_server::FunctionRunnerService for Noop {
    async fn run_function(
        &self,
        _: tonic::Request<v1beta1::RunFunctionRequest>,
    ) -> Result<tonic::Response<v1beta1::RunFunctionResponse>, tonic::Status> {
        Err(tonic::Status::unimplemented("noop"))
    }
}
