use std::collections::BTreeMap;

use prost::Message as _;
use prost_types::value::Kind;
use prost_types::{ListValue, Struct, Value};
use xfn_proto::json::{JsonStruct, v1 as pb};

use super::*;
use xfn_runtime::protocol::*;

/// JSON text as the converter writes it: sorted keys, integers as integers.
fn json(text: &str) -> Option<String> {
    Some(text.to_owned())
}

fn resource(text: &str, ready: Ready) -> ResourceObject {
    ResourceObject {
        resource: json(text),
        connection_details: vec![
            ("a-password".into(), b"s3cr3t\0\xff".to_vec()),
            ("b-user".into(), b"admin".to_vec()),
        ],
        ready,
    }
}

fn selector(m: Option<ResourceMatch>, namespace: Option<&str>) -> ResourceSelector {
    ResourceSelector {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        match_: m,
        namespace: namespace.map(str::to_owned),
    }
}

fn full_request() -> RunFunctionRequest {
    RunFunctionRequest {
        meta: Some(RequestMeta {
            tag: "tag-1".into(),
            capabilities: vec![
                Capability::Unspecified,
                Capability::Capabilities,
                Capability::RequiredResources,
                Capability::Credentials,
                Capability::Conditions,
                Capability::RequiredSchemas,
            ],
        }),
        observed: Some(State {
            composite: Some(resource(
                r#"{"kind":"XR","n":1.5,"replicas":9001,"spec":{"big":1e+300,"neg":-3}}"#,
                Ready::Unspecified,
            )),
            resources: vec![
                ("a".into(), resource(r#"{"kind":"A"}"#, Ready::True)),
                ("b".into(), resource(r#"{"kind":"B"}"#, Ready::False)),
            ],
        }),
        desired: Some(State {
            composite: Some(resource(r#"{"status":{}}"#, Ready::False)),
            resources: vec![(
                "c".into(),
                resource(
                    r#"{"kind":"C","list":[1,"x",null,true,{"k":[]}],"unicode":"é\n\"q\""}"#,
                    Ready::Unspecified,
                ),
            )],
        }),
        input: json(r#"{"apiVersion":"example.org/v1","kind":"Input","max":9007199254740992}"#),
        context: json(r#"{"apiextensions.crossplane.io/environment":{"k":"v"}}"#),
        extra_resources: vec![(
            "extra".into(),
            Resources {
                items: vec![resource(r#"{"kind":"E"}"#, Ready::Unspecified)],
            },
        )],
        credentials: vec![
            ("empty".into(), Credentials { source: None }),
            (
                "creds".into(),
                Credentials {
                    source: Some(CredentialSource::CredentialData(CredentialData {
                        data: vec![
                            ("a".into(), b"1".to_vec()),
                            ("token".into(), b"t0k".to_vec()),
                        ],
                    })),
                },
            ),
        ]
        .into_iter()
        .rev()
        .collect(),
        required_resources: vec![
            ("none".into(), Resources { items: Vec::new() }),
            (
                "req".into(),
                Resources {
                    items: vec![
                        resource(r#"{"kind":"R1"}"#, Ready::Unspecified),
                        resource(r#"{"kind":"R2"}"#, Ready::Unspecified),
                    ],
                },
            ),
        ],
        required_schemas: vec![
            ("missing".into(), Schema { openapi_v3: None }),
            (
                "schema".into(),
                Schema {
                    openapi_v3: json(r#"{"properties":{"a":{"type":"integer"}},"type":"object"}"#),
                },
            ),
        ],
    }
}

fn full_response() -> RunFunctionResponse {
    RunFunctionResponse {
        meta: Some(ResponseMeta {
            tag: "tag-1".into(),
            ttl: Some(Duration {
                seconds: 60,
                nanos: 500,
            }),
        }),
        desired: Some(State {
            composite: Some(resource(r#"{"status":{"ready":true}}"#, Ready::True)),
            resources: vec![(
                "x".into(),
                resource(r#"{"kind":"X","v":0.1}"#, Ready::False),
            )],
        }),
        results: vec![
            FunctionResult {
                severity: Severity::Normal,
                message: "ok".into(),
                reason: None,
                target: None,
            },
            FunctionResult {
                severity: Severity::Warning,
                message: "hmm".into(),
                reason: Some("Odd".into()),
                target: Some(Target::CompositeAndClaim),
            },
            FunctionResult {
                severity: Severity::Fatal,
                message: "no".into(),
                reason: Some("Broken".into()),
                target: Some(Target::Composite),
            },
            FunctionResult {
                severity: Severity::Unspecified,
                message: String::new(),
                reason: None,
                target: Some(Target::Unspecified),
            },
        ],
        context: json(r#"{"k":[1,2.5]}"#),
        requirements: Some(Requirements {
            extra_resources: vec![("old".into(), selector(None, None))],
            resources: vec![
                (
                    "by-labels".into(),
                    selector(
                        Some(ResourceMatch::MatchLabels(MatchLabels {
                            labels: vec![("a".into(), "1".into()), ("b".into(), "2".into())],
                        })),
                        Some("ns"),
                    ),
                ),
                (
                    "by-name".into(),
                    selector(Some(ResourceMatch::MatchName("cm".into())), None),
                ),
            ],
            schemas: vec![(
                "s".into(),
                SchemaSelector {
                    api_version: "example.org/v1".into(),
                    kind: "XR".into(),
                },
            )],
        }),
        conditions: vec![
            Condition {
                type_: "Custom".into(),
                status: ConditionStatus::True,
                reason: "Fine".into(),
                message: Some("all good".into()),
                target: Some(Target::CompositeAndClaim),
            },
            Condition {
                type_: "Other".into(),
                status: ConditionStatus::Unknown,
                reason: "Hmm".into(),
                message: None,
                target: None,
            },
            Condition {
                type_: "Third".into(),
                status: ConditionStatus::False,
                reason: "No".into(),
                message: None,
                target: Some(Target::Composite),
            },
            Condition {
                type_: "Fourth".into(),
                status: ConditionStatus::Unspecified,
                reason: String::new(),
                message: Some(String::new()),
                target: None,
            },
        ],
        output: json(r#"{"out":"put"}"#),
    }
}

/// WIT lists come back sorted by key; sort the credentials the test built
/// in reverse.
fn sorted_request(mut r: RunFunctionRequest) -> RunFunctionRequest {
    r.credentials.sort_by(|a, b| a.0.cmp(&b.0));
    r
}

#[test]
fn every_request_field_round_trips() {
    let wit = full_request();
    let proto = request_to_proto(wit.clone()).expect("to proto");
    // Spot-check the protobuf side.
    assert_eq!(
        proto.meta.as_ref().map(|m| m.capabilities.clone()),
        Some(vec![0, 1, 2, 3, 4, 5])
    );
    assert_eq!(proto.credentials.len(), 2);
    assert_eq!(proto.required_schemas["missing"].openapi_v3, None);
    let back = request_from_proto(proto.clone()).expect("from proto");
    assert_eq!(back, sorted_request(wit));
    // And protobuf -> WIT -> protobuf is the identity too.
    assert_eq!(request_to_proto(back).expect("again"), proto);
}

#[test]
fn a_served_requests_json_goes_back_to_the_pool_for_the_next() {
    let pool = TextPool::default();
    let received = || {
        let bytes = request_to_proto(full_request())
            .expect("to proto")
            .encode_to_vec();
        let proto = pb::RunFunctionRequest::decode(bytes.as_slice()).expect("decodes");
        request_from_proto_in(proto, Some(&pool)).expect("from proto")
    };
    // full_request's JSON: two composites, three composed resources, the
    // input, the context, three listed resources and a schema.
    const JSON_FIELDS: usize = 11;
    recycle_request(received(), &pool);
    assert_eq!(pool.spare().1, JSON_FIELDS);
    // The next request is written into them.
    let again = received();
    assert_eq!(pool.spare(), (0, 0));
    assert_eq!(again, sorted_request(full_request()));
}

#[test]
fn every_response_field_round_trips() {
    let wit = full_response();
    let proto = response_to_proto(wit.clone()).expect("to proto");
    assert_eq!(
        proto.meta.as_ref().and_then(|m| m.ttl),
        Some(prost_types::Duration {
            seconds: 60,
            nanos: 500
        })
    );
    assert_eq!(
        proto.results[1].target,
        Some(pb::Target::CompositeAndClaim as i32)
    );
    let back = response_from_proto(proto.clone()).expect("from proto");
    assert_eq!(back, wit);
    assert_eq!(response_to_proto(back).expect("again"), proto);
}

/// The attack round's low finding: serve forwarded a guest's `meta.ttl`
/// that is no valid protobuf Duration, which Crossplane then fails on.
#[test]
fn an_invalid_ttl_is_refused() {
    for (seconds, nanos) in [
        (315_576_000_001, 0),
        (-315_576_000_001, 0),
        (1, 1_000_000_000),
        (1, -1),
        (-1, 1),
        (i64::MIN, 0),
    ] {
        let mut response = full_response();
        if let Some(meta) = &mut response.meta {
            meta.ttl = Some(Duration { seconds, nanos });
        }
        let err = response_to_proto(response).expect_err("refused");
        assert!(
            err.to_string().starts_with(&format!(
                "meta.ttl: {seconds}s {nanos}ns is not a valid duration"
            )),
            "{err}"
        );
    }
    let mut response = full_response();
    if let Some(meta) = &mut response.meta {
        meta.ttl = Some(Duration {
            seconds: -315_576_000_000,
            nanos: -999_999_999,
        });
    }
    assert!(response_to_proto(response).is_ok());
}

#[test]
fn empty_messages_round_trip() {
    let request = RunFunctionRequest::default();
    let proto = request_to_proto(request.clone()).expect("to proto");
    assert_eq!(proto, pb::RunFunctionRequest::default());
    assert_eq!(request_from_proto(proto).expect("back"), request);
    let response = RunFunctionResponse::default();
    let proto = response_to_proto(response.clone()).expect("to proto");
    assert_eq!(proto, pb::RunFunctionResponse::default());
    assert_eq!(response_from_proto(proto).expect("back"), response);
}

/// A Struct tree as the server receives it: its wire bytes.
fn received(tree: &Struct) -> JsonStruct {
    JsonStruct::decode(bytes::Bytes::from(tree.encode_to_vec())).expect("decodes")
}

fn number(n: f64) -> Value {
    Value {
        kind: Some(Kind::NumberValue(n)),
    }
}

fn one_field(value: Value) -> Struct {
    Struct {
        fields: BTreeMap::from([("n".to_owned(), value)]),
    }
}

#[test]
fn json_numbers_become_f64_and_integral_ones_come_back_as_integers() {
    let s = json_to_struct(
        r#"{"int":9001,"neg":-42,"float":1.5,"zero":0,"exp":2e3,"big":18446744073709551615}"#,
    )
    .expect("parses");
    assert_eq!(s.fields["int"], number(9001.0));
    assert_eq!(s.fields["neg"], number(-42.0));
    assert_eq!(s.fields["float"], number(1.5));
    assert_eq!(s.fields["exp"], number(2000.0));
    assert_eq!(s.fields["big"], number(18_446_744_073_709_551_615.0));
    assert_eq!(
        struct_to_json(&s).expect("writes"),
        r#"{"big":1.8446744073709552e+19,"exp":2000,"float":1.5,"int":9001,"neg":-42,"zero":0}"#
    );
}

#[test]
fn integers_are_exact_up_to_two_to_the_53() {
    let limit = 9_007_199_254_740_992.0; // 2^53
    assert_eq!(
        struct_to_json(&one_field(number(limit))).as_deref(),
        Ok(r#"{"n":9007199254740992}"#)
    );
    assert_eq!(
        struct_to_json(&one_field(number(-limit))).as_deref(),
        Ok(r#"{"n":-9007199254740992}"#)
    );
    // Past 2^53 an f64 is no longer exactly an integer in JSON's sense:
    // it is written as a float, which reads back as the same f64.
    let past = struct_to_json(&one_field(number(limit * 2.0))).expect("writes");
    assert_eq!(past, r#"{"n":1.8014398509481984e+16}"#);
    assert_eq!(
        json_to_struct(&past).expect("reads"),
        one_field(number(limit * 2.0))
    );
    // 2^53 + 1 isn't an f64: it rounds to 2^53, as in Go.
    assert_eq!(
        json_to_struct(r#"{"n":9007199254740993}"#).expect("reads"),
        one_field(number(limit))
    );
    // Fractions and tiny numbers keep their shortest form.
    for (n, text) in [(0.1, "0.1"), (-2.5e-8, "-2.5e-8"), (1e300, "1e+300")] {
        let written = struct_to_json(&one_field(number(n))).expect("writes");
        assert_eq!(written, format!(r#"{{"n":{text}}}"#));
        assert_eq!(
            json_to_struct(&written).expect("reads"),
            one_field(number(n))
        );
    }
}

#[test]
fn non_finite_numbers_are_an_error_naming_the_field() {
    for n in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let nested = Struct {
            fields: BTreeMap::from([(
                "spec".to_owned(),
                Value {
                    kind: Some(Kind::ListValue(ListValue {
                        values: vec![number(n)],
                    })),
                },
            )]),
        };
        let mut state = pb::State::default();
        state.resources.insert(
            "db".into(),
            pb::Resource {
                resource: Some(received(&nested)),
                ..pb::Resource::default()
            },
        );
        let request = pb::RunFunctionRequest {
            observed: Some(state),
            ..pb::RunFunctionRequest::default()
        };
        let err = request_from_proto(request).expect_err("no JSON for it");
        assert_eq!(err.path, r#"observed.resources["db"].resource"#, "{err}");
        assert!(err.reason.contains("has no JSON representation"), "{err}");
    }
    let err = response_from_proto(pb::RunFunctionResponse {
        context: Some(received(&one_field(number(f64::NAN)))),
        ..pb::RunFunctionResponse::default()
    })
    .expect_err("no JSON for NaN");
    assert_eq!(
        err.to_string(),
        "context: the number NaN has no JSON representation"
    );
}

#[test]
fn a_value_without_kind_is_null() {
    let s = one_field(Value { kind: None });
    assert_eq!(struct_to_json(&s).as_deref(), Ok(r#"{"n":null}"#));
}

#[test]
fn json_text_must_be_one_object() {
    for bad in ["[]", "1", "\"s\"", "null", "{", "{} {}", "{\"a\":}"] {
        assert!(json_to_struct(bad).is_err(), "{bad}");
    }
    let err = request_to_proto(RunFunctionRequest {
        input: Some("[1]".into()),
        ..RunFunctionRequest::default()
    })
    .expect_err("not an object");
    assert!(
        err.to_string()
            .starts_with("input: invalid type: sequence, expected a JSON object"),
        "{err}"
    );
    // Whitespace around the object is fine.
    assert!(json_to_struct(" {\"a\": [ ]}\n").is_ok());
}

#[test]
fn proto_maps_become_lists_sorted_by_key() {
    let mut state = pb::State::default();
    let names = ["zeta", "alpha", "mid", "beta", "omega", "gamma", "delta"];
    for name in names {
        state.resources.insert(name.into(), pb::Resource::default());
    }
    let wit = request_from_proto(pb::RunFunctionRequest {
        desired: Some(state),
        ..pb::RunFunctionRequest::default()
    })
    .expect("converts");
    let keys: Vec<&str> = wit
        .desired
        .as_ref()
        .map(|s| s.resources.iter().map(|(k, _)| k.as_str()).collect())
        .unwrap_or_default();
    let mut want = names.to_vec();
    want.sort_unstable();
    assert_eq!(keys, want);
}

#[test]
fn unknown_enum_values_become_unspecified() {
    let request = pb::RunFunctionRequest {
        meta: Some(pb::RequestMeta {
            tag: String::new(),
            capabilities: vec![99, 2],
        }),
        ..pb::RunFunctionRequest::default()
    };
    let wit = request_from_proto(request).expect("converts");
    assert_eq!(
        wit.meta.map(|m| m.capabilities),
        Some(vec![Capability::Unspecified, Capability::RequiredResources])
    );
    let response = pb::RunFunctionResponse {
        results: vec![pb::Result {
            severity: 42,
            target: Some(7),
            ..pb::Result::default()
        }],
        ..pb::RunFunctionResponse::default()
    };
    let wit = response_from_proto(response).expect("converts");
    assert_eq!(wit.results[0].severity, Severity::Unspecified);
    assert_eq!(wit.results[0].target, Some(Target::Unspecified));
}
