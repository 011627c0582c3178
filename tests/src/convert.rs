//! Conversion between the guest SDK's types and the host's protocol types,
//! so fixtures written in protojson (as the SDK reads them) can drive a
//! real component through the host.

use std::collections::BTreeMap;

use xfn_runtime::protocol as host;
use xfn_sdk as sdk;

fn text(object: sdk::Object) -> String {
    serde_json::Value::Object(object).to_string()
}

fn object(text: Option<String>) -> Option<sdk::Object> {
    text.map(|t| serde_json::from_str(&t).expect("the host checked this is a JSON object"))
}

fn pairs<V, W>(map: BTreeMap<String, V>, f: impl Fn(V) -> W) -> Vec<(String, W)> {
    map.into_iter().map(|(k, v)| (k, f(v))).collect()
}

fn resource(r: sdk::Resource) -> host::ResourceObject {
    host::ResourceObject {
        resource: r.resource.map(text),
        connection_details: r.connection_details.into_iter().collect(),
        ready: match r.ready {
            sdk::Ready::Unspecified => host::Ready::Unspecified,
            sdk::Ready::True => host::Ready::True,
            sdk::Ready::False => host::Ready::False,
        },
    }
}

fn state(s: sdk::State) -> host::State {
    host::State {
        composite: s.composite.map(resource),
        resources: pairs(s.resources, resource),
    }
}

fn resources(r: sdk::Resources) -> host::Resources {
    host::Resources {
        items: r.items.into_iter().map(resource).collect(),
    }
}

/// An SDK request as the host sends it.
pub fn request(r: sdk::Request) -> host::RunFunctionRequest {
    host::RunFunctionRequest {
        meta: r.meta.map(|m| host::RequestMeta {
            tag: m.tag,
            capabilities: m
                .capabilities
                .into_iter()
                .map(|c| match c {
                    sdk::Capability::Unspecified => host::Capability::Unspecified,
                    sdk::Capability::Capabilities => host::Capability::Capabilities,
                    sdk::Capability::RequiredResources => host::Capability::RequiredResources,
                    sdk::Capability::Credentials => host::Capability::Credentials,
                    sdk::Capability::Conditions => host::Capability::Conditions,
                    sdk::Capability::RequiredSchemas => host::Capability::RequiredSchemas,
                })
                .collect(),
        }),
        observed: r.observed.map(state),
        desired: r.desired.map(state),
        input: r.input.map(text),
        context: r.context.map(text),
        extra_resources: pairs(r.extra_resources, resources),
        credentials: pairs(r.credentials, |c| host::Credentials {
            source: c.credential_data.map(|d| {
                host::CredentialSource::CredentialData(host::CredentialData {
                    data: d.data.into_iter().collect(),
                })
            }),
        }),
        required_resources: pairs(r.required_resources, resources),
        required_schemas: pairs(r.required_schemas, |s| host::Schema {
            openapi_v3: s.openapi_v3.map(text),
        }),
    }
}

fn resource_back(r: host::ResourceObject) -> sdk::Resource {
    sdk::Resource {
        resource: object(r.resource),
        connection_details: r.connection_details.into_iter().collect(),
        ready: match r.ready {
            host::Ready::Unspecified => sdk::Ready::Unspecified,
            host::Ready::True => sdk::Ready::True,
            host::Ready::False => sdk::Ready::False,
        },
    }
}

fn state_back(s: host::State) -> sdk::State {
    sdk::State {
        composite: s.composite.map(resource_back),
        resources: s
            .resources
            .into_iter()
            .map(|(k, v)| (k, resource_back(v)))
            .collect(),
    }
}

fn target_back(t: host::Target) -> sdk::Target {
    match t {
        host::Target::Unspecified => sdk::Target::Unspecified,
        host::Target::Composite => sdk::Target::Composite,
        host::Target::CompositeAndClaim => sdk::Target::CompositeAndClaim,
    }
}

fn selector_back(s: host::ResourceSelector) -> sdk::ResourceSelector {
    sdk::ResourceSelector {
        api_version: s.api_version,
        kind: s.kind,
        r#match: s.match_.map(|m| match m {
            host::ResourceMatch::MatchName(n) => sdk::ResourceMatch::MatchName(n),
            host::ResourceMatch::MatchLabels(l) => {
                sdk::ResourceMatch::MatchLabels(sdk::MatchLabels {
                    labels: l.labels.into_iter().collect(),
                })
            }
        }),
        namespace: s.namespace,
    }
}

/// A host response as the SDK would read it.
pub fn response(r: host::RunFunctionResponse) -> sdk::Response {
    sdk::Response {
        meta: r.meta.map(|m| sdk::ResponseMeta {
            tag: m.tag,
            ttl: m.ttl.map(|d| {
                std::time::Duration::new(
                    u64::try_from(d.seconds).unwrap_or(0),
                    u32::try_from(d.nanos).unwrap_or(0),
                )
            }),
        }),
        desired: r.desired.map(state_back),
        results: r
            .results
            .into_iter()
            .map(|x| sdk::FunctionResult {
                severity: match x.severity {
                    host::Severity::Unspecified => sdk::Severity::Unspecified,
                    host::Severity::Fatal => sdk::Severity::Fatal,
                    host::Severity::Warning => sdk::Severity::Warning,
                    host::Severity::Normal => sdk::Severity::Normal,
                },
                message: x.message,
                reason: x.reason,
                target: x.target.map(target_back),
            })
            .collect(),
        context: object(r.context),
        requirements: r.requirements.map(|q| sdk::Requirements {
            extra_resources: q
                .extra_resources
                .into_iter()
                .map(|(k, s)| (k, selector_back(s)))
                .collect(),
            resources: q
                .resources
                .into_iter()
                .map(|(k, s)| (k, selector_back(s)))
                .collect(),
            schemas: q
                .schemas
                .into_iter()
                .map(|(k, s)| {
                    (
                        k,
                        sdk::SchemaSelector {
                            api_version: s.api_version,
                            kind: s.kind,
                        },
                    )
                })
                .collect(),
        }),
        conditions: r
            .conditions
            .into_iter()
            .map(|c| sdk::Condition {
                r#type: c.type_,
                status: match c.status {
                    host::ConditionStatus::Unspecified => sdk::ConditionStatus::Unspecified,
                    host::ConditionStatus::Unknown => sdk::ConditionStatus::Unknown,
                    host::ConditionStatus::True => sdk::ConditionStatus::True,
                    host::ConditionStatus::False => sdk::ConditionStatus::False,
                },
                reason: c.reason,
                message: c.message,
                target: c.target.map(target_back),
            })
            .collect(),
        output: object(r.output),
    }
}

fn resources_back(r: host::Resources) -> sdk::Resources {
    sdk::Resources {
        items: r.items.into_iter().map(resource_back).collect(),
    }
}

/// A host request as the guest SDK reads it: what a function's own code
/// gets, here for a function run natively behind xfn's server.
pub fn request_back(r: host::RunFunctionRequest) -> sdk::Request {
    sdk::Request {
        meta: r.meta.map(|m| sdk::RequestMeta {
            tag: m.tag,
            capabilities: m
                .capabilities
                .into_iter()
                .map(|c| match c {
                    host::Capability::Unspecified => sdk::Capability::Unspecified,
                    host::Capability::Capabilities => sdk::Capability::Capabilities,
                    host::Capability::RequiredResources => sdk::Capability::RequiredResources,
                    host::Capability::Credentials => sdk::Capability::Credentials,
                    host::Capability::Conditions => sdk::Capability::Conditions,
                    host::Capability::RequiredSchemas => sdk::Capability::RequiredSchemas,
                })
                .collect(),
        }),
        observed: r.observed.map(state_back),
        desired: r.desired.map(state_back),
        input: object(r.input),
        context: object(r.context),
        extra_resources: r
            .extra_resources
            .into_iter()
            .map(|(k, v)| (k, resources_back(v)))
            .collect(),
        credentials: r
            .credentials
            .into_iter()
            .map(|(k, c)| {
                let credential_data = c.source.map(|s| match s {
                    host::CredentialSource::CredentialData(d) => sdk::CredentialData {
                        data: d.data.into_iter().collect(),
                    },
                });
                (k, sdk::Credentials { credential_data })
            })
            .collect(),
        required_resources: r
            .required_resources
            .into_iter()
            .map(|(k, v)| (k, resources_back(v)))
            .collect(),
        required_schemas: r
            .required_schemas
            .into_iter()
            .map(|(k, s)| {
                let openapi_v3 = object(s.openapi_v3);
                (k, sdk::Schema { openapi_v3 })
            })
            .collect(),
    }
}

fn target(t: sdk::Target) -> host::Target {
    match t {
        sdk::Target::Unspecified => host::Target::Unspecified,
        sdk::Target::Composite => host::Target::Composite,
        sdk::Target::CompositeAndClaim => host::Target::CompositeAndClaim,
    }
}

fn selector(s: sdk::ResourceSelector) -> host::ResourceSelector {
    host::ResourceSelector {
        api_version: s.api_version,
        kind: s.kind,
        match_: s.r#match.map(|m| match m {
            sdk::ResourceMatch::MatchName(n) => host::ResourceMatch::MatchName(n),
            sdk::ResourceMatch::MatchLabels(l) => {
                host::ResourceMatch::MatchLabels(host::MatchLabels {
                    labels: l.labels.into_iter().collect(),
                })
            }
        }),
        namespace: s.namespace,
    }
}

/// An SDK response as the host gets it back from a guest.
pub fn response_forward(r: sdk::Response) -> host::RunFunctionResponse {
    host::RunFunctionResponse {
        meta: r.meta.map(|m| host::ResponseMeta {
            tag: m.tag,
            ttl: m.ttl.map(|d| host::Duration {
                seconds: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
                nanos: i32::try_from(d.subsec_nanos()).unwrap_or(0),
            }),
        }),
        desired: r.desired.map(state),
        results: r
            .results
            .into_iter()
            .map(|x| host::FunctionResult {
                severity: match x.severity {
                    sdk::Severity::Unspecified => host::Severity::Unspecified,
                    sdk::Severity::Fatal => host::Severity::Fatal,
                    sdk::Severity::Warning => host::Severity::Warning,
                    sdk::Severity::Normal => host::Severity::Normal,
                },
                message: x.message,
                reason: x.reason,
                target: x.target.map(target),
            })
            .collect(),
        context: r.context.map(text),
        requirements: r.requirements.map(|q| host::Requirements {
            extra_resources: pairs(q.extra_resources, selector),
            resources: pairs(q.resources, selector),
            schemas: pairs(q.schemas, |s| host::SchemaSelector {
                api_version: s.api_version,
                kind: s.kind,
            }),
        }),
        conditions: r
            .conditions
            .into_iter()
            .map(|c| host::Condition {
                type_: c.r#type,
                status: match c.status {
                    sdk::ConditionStatus::Unspecified => host::ConditionStatus::Unspecified,
                    sdk::ConditionStatus::Unknown => host::ConditionStatus::Unknown,
                    sdk::ConditionStatus::True => host::ConditionStatus::True,
                    sdk::ConditionStatus::False => host::ConditionStatus::False,
                },
                reason: c.reason,
                message: c.message,
                target: c.target.map(target),
            })
            .collect(),
        output: r.output.map(text),
    }
}
