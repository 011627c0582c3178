//! Conversion between the WIT types that cross the component boundary and
//! the SDK's types, and the glue that runs a [`crate::Function`].
//!
//! JSON objects cross as text: the guest parses each one once on the way in
//! and writes each one once on the way out.

use std::collections::BTreeMap;

use crate::bindings::xfn::function::types as wit;
use crate::{
    Capability, Condition, ConditionStatus, CredentialData, Credentials, Error, FunctionResult,
    MatchLabels, Object, Ready, Request, RequestMeta, Requirements, Resource, ResourceMatch,
    ResourceSelector, Resources, Response, ResponseMeta, Schema, SchemaSelector, Severity, State,
    Target,
};

/// Runs `F` on a request as it arrived over the WIT boundary.
///
/// ```
/// struct Noop;
/// impl xfn_sdk::Function for Noop {
///     fn run(req: &xfn_sdk::Request) -> Result<xfn_sdk::Response, xfn_sdk::Error> {
///         Ok(xfn_sdk::Response::to(req))
///     }
/// }
/// let wire = xfn_sdk::wit::request_to_wit(xfn_sdk::Request::default());
/// let rsp = xfn_sdk::wit::response_from_wit(xfn_sdk::wit::run::<Noop>(wire).unwrap()).unwrap();
/// assert_eq!(rsp.meta.unwrap().ttl, Some(xfn_sdk::DEFAULT_TTL));
/// ```
pub fn run<F: crate::Function>(
    request: wit::RunFunctionRequest,
) -> Result<wit::RunFunctionResponse, String> {
    let request = request_from_wit(request).map_err(|e| format!("cannot read request: {e}"))?;
    let response = F::run(&request).map_err(|e| e.to_string());
    discard(request);
    Ok(response_to_wit(response?))
}

fn parse_object(text: String, what: &str) -> Result<Object, Error> {
    serde_json::from_str(&text)
        .map_err(|e| Error::from(format!("{what} is not a JSON object: {e}")))
}

fn parse_opt(text: Option<String>, what: &str) -> Result<Option<Object>, Error> {
    text.map(|t| parse_object(t, what)).transpose()
}

fn write_object(object: Object) -> String {
    // Serializing a map of JSON values cannot fail. Writing the map
    // directly skips `Display`'s formatter machinery.
    let text = serde_json::to_string(&object).unwrap_or_default();
    discard(object);
    text
}

/// Drops `value`, except in wasm builds with the call arena: their memory
/// is thrown away after the call, so walking `value` to free it into the
/// arena would be wasted work.
fn discard<T>(value: T) {
    if cfg!(all(target_arch = "wasm32", feature = "call-arena")) {
        std::mem::forget(value);
    }
}

fn map_from<K: Ord, V, W>(
    pairs: Vec<(K, W)>,
    mut f: impl FnMut(W) -> Result<V, Error>,
) -> Result<BTreeMap<K, V>, Error> {
    pairs.into_iter().map(|(k, w)| Ok((k, f(w)?))).collect()
}

fn map_to<K, V, W>(map: BTreeMap<K, V>, f: impl Fn(V) -> W) -> Vec<(K, W)> {
    map.into_iter().map(|(k, v)| (k, f(v))).collect()
}

/// Converts a WIT request into the SDK's [`Request`].
///
/// ```
/// let req = xfn_sdk::testing::request_from_yaml("input: {size: 2}").unwrap();
/// let back = xfn_sdk::wit::request_from_wit(xfn_sdk::wit::request_to_wit(req.clone())).unwrap();
/// assert_eq!(back, req);
/// ```
pub fn request_from_wit(r: wit::RunFunctionRequest) -> Result<Request, Error> {
    Ok(Request {
        meta: r.meta.map(|m| RequestMeta {
            tag: m.tag,
            capabilities: m
                .capabilities
                .into_iter()
                .map(capability_from_wit)
                .collect(),
        }),
        observed: r.observed.map(state_from_wit).transpose()?,
        desired: r.desired.map(state_from_wit).transpose()?,
        input: parse_opt(r.input, "input")?,
        context: parse_opt(r.context, "context")?,
        extra_resources: map_from(r.extra_resources, resources_from_wit)?,
        credentials: map_from(r.credentials, |c| Ok(credentials_from_wit(c)))?,
        required_resources: map_from(r.required_resources, resources_from_wit)?,
        required_schemas: map_from(r.required_schemas, |s| {
            Ok(Schema {
                openapi_v3: parse_opt(s.openapi_v3, "required schema")?,
            })
        })?,
    })
}

/// Converts the SDK's [`Request`] into its WIT form (used by tests and by hosts written in Rust).
///
/// ```
/// let req = xfn_sdk::Request::default();
/// let back = xfn_sdk::wit::request_from_wit(xfn_sdk::wit::request_to_wit(req.clone())).unwrap();
/// assert_eq!(back, req);
/// ```
pub fn request_to_wit(r: Request) -> wit::RunFunctionRequest {
    wit::RunFunctionRequest {
        meta: r.meta.map(|m| wit::RequestMeta {
            tag: m.tag,
            capabilities: m.capabilities.into_iter().map(capability_to_wit).collect(),
        }),
        observed: r.observed.map(state_to_wit),
        desired: r.desired.map(state_to_wit),
        input: r.input.map(write_object),
        context: r.context.map(write_object),
        extra_resources: map_to(r.extra_resources, resources_to_wit),
        credentials: map_to(r.credentials, |c| wit::Credentials {
            source: c.credential_data.map(|d| {
                wit::CredentialSource::CredentialData(wit::CredentialData {
                    data: d.data.into_iter().collect(),
                })
            }),
        }),
        required_resources: map_to(r.required_resources, resources_to_wit),
        required_schemas: map_to(r.required_schemas, |s| wit::Schema {
            openapi_v3: s.openapi_v3.map(write_object),
        }),
    }
}

/// Converts the SDK's [`Response`] into its WIT form.
///
/// ```
/// let mut rsp = xfn_sdk::Response::default();
/// rsp.normal("hi");
/// let back = xfn_sdk::wit::response_from_wit(xfn_sdk::wit::response_to_wit(rsp.clone())).unwrap();
/// assert_eq!(back, rsp);
/// ```
pub fn response_to_wit(r: Response) -> wit::RunFunctionResponse {
    wit::RunFunctionResponse {
        meta: r.meta.map(|m| wit::ResponseMeta {
            tag: m.tag,
            ttl: m.ttl.map(|d| wit::Duration {
                seconds: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
                nanos: i32::try_from(d.subsec_nanos()).unwrap_or(0),
            }),
        }),
        desired: r.desired.map(state_to_wit),
        results: r
            .results
            .into_iter()
            .map(|x| wit::FunctionResult {
                severity: severity_to_wit(x.severity),
                message: x.message,
                reason: x.reason,
                target: x.target.map(target_to_wit),
            })
            .collect(),
        context: r.context.map(write_object),
        requirements: r.requirements.map(|q| wit::Requirements {
            extra_resources: map_to(q.extra_resources, selector_to_wit),
            resources: map_to(q.resources, selector_to_wit),
            schemas: map_to(q.schemas, |s| wit::SchemaSelector {
                api_version: s.api_version,
                kind: s.kind,
            }),
        }),
        conditions: r
            .conditions
            .into_iter()
            .map(|c| wit::Condition {
                type_: c.r#type,
                status: condition_status_to_wit(c.status),
                reason: c.reason,
                message: c.message,
                target: c.target.map(target_to_wit),
            })
            .collect(),
        output: r.output.map(write_object),
    }
}

/// Converts a WIT response into the SDK's [`Response`] (used by tests and by hosts written in Rust).
///
/// ```
/// let rsp = xfn_sdk::testing::response_from_yaml("context: {a: 1}").unwrap();
/// let back = xfn_sdk::wit::response_from_wit(xfn_sdk::wit::response_to_wit(rsp.clone())).unwrap();
/// assert_eq!(back, rsp);
/// ```
pub fn response_from_wit(r: wit::RunFunctionResponse) -> Result<Response, Error> {
    Ok(Response {
        meta: r.meta.map(|m| ResponseMeta {
            tag: m.tag,
            ttl: m.ttl.map(|d| {
                std::time::Duration::new(
                    u64::try_from(d.seconds).unwrap_or(0),
                    u32::try_from(d.nanos).unwrap_or(0),
                )
            }),
        }),
        desired: r.desired.map(state_from_wit).transpose()?,
        results: r
            .results
            .into_iter()
            .map(|x| FunctionResult {
                severity: severity_from_wit(x.severity),
                message: x.message,
                reason: x.reason,
                target: x.target.map(target_from_wit),
            })
            .collect(),
        context: parse_opt(r.context, "context")?,
        requirements: r.requirements.map(|q| Requirements {
            extra_resources: q
                .extra_resources
                .into_iter()
                .map(|(k, s)| (k, selector_from_wit(s)))
                .collect(),
            resources: q
                .resources
                .into_iter()
                .map(|(k, s)| (k, selector_from_wit(s)))
                .collect(),
            schemas: q
                .schemas
                .into_iter()
                .map(|(k, s)| {
                    (
                        k,
                        SchemaSelector {
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
            .map(|c| Condition {
                r#type: c.type_,
                status: condition_status_from_wit(c.status),
                reason: c.reason,
                message: c.message,
                target: c.target.map(target_from_wit),
            })
            .collect(),
        output: parse_opt(r.output, "output")?,
    })
}

fn resource_from_wit(r: wit::ResourceObject) -> Result<Resource, Error> {
    Ok(Resource {
        resource: parse_opt(r.resource, "resource")?,
        connection_details: r.connection_details.into_iter().collect(),
        ready: match r.ready {
            wit::Ready::Unspecified => Ready::Unspecified,
            wit::Ready::True => Ready::True,
            wit::Ready::False => Ready::False,
        },
    })
}

fn resource_to_wit(r: Resource) -> wit::ResourceObject {
    wit::ResourceObject {
        resource: r.resource.map(write_object),
        connection_details: r.connection_details.into_iter().collect(),
        ready: match r.ready {
            Ready::Unspecified => wit::Ready::Unspecified,
            Ready::True => wit::Ready::True,
            Ready::False => wit::Ready::False,
        },
    }
}

fn state_from_wit(s: wit::State) -> Result<State, Error> {
    Ok(State {
        composite: s.composite.map(resource_from_wit).transpose()?,
        resources: map_from(s.resources, resource_from_wit)?,
    })
}

fn state_to_wit(s: State) -> wit::State {
    wit::State {
        composite: s.composite.map(resource_to_wit),
        resources: map_to(s.resources, resource_to_wit),
    }
}

fn resources_from_wit(r: wit::Resources) -> Result<Resources, Error> {
    Ok(Resources {
        items: r
            .items
            .into_iter()
            .map(resource_from_wit)
            .collect::<Result<_, _>>()?,
    })
}

fn resources_to_wit(r: Resources) -> wit::Resources {
    wit::Resources {
        items: r.items.into_iter().map(resource_to_wit).collect(),
    }
}

fn credentials_from_wit(c: wit::Credentials) -> Credentials {
    Credentials {
        credential_data: c.source.map(|s| match s {
            wit::CredentialSource::CredentialData(d) => CredentialData {
                data: d.data.into_iter().collect(),
            },
        }),
    }
}

fn selector_to_wit(s: ResourceSelector) -> wit::ResourceSelector {
    wit::ResourceSelector {
        api_version: s.api_version,
        kind: s.kind,
        match_: s.r#match.map(|m| match m {
            ResourceMatch::MatchName(n) => wit::ResourceMatch::MatchName(n),
            ResourceMatch::MatchLabels(l) => wit::ResourceMatch::MatchLabels(wit::MatchLabels {
                labels: l.labels.into_iter().collect(),
            }),
        }),
        namespace: s.namespace,
    }
}

fn selector_from_wit(s: wit::ResourceSelector) -> ResourceSelector {
    ResourceSelector {
        api_version: s.api_version,
        kind: s.kind,
        r#match: s.match_.map(|m| match m {
            wit::ResourceMatch::MatchName(n) => ResourceMatch::MatchName(n),
            wit::ResourceMatch::MatchLabels(l) => ResourceMatch::MatchLabels(MatchLabels {
                labels: l.labels.into_iter().collect(),
            }),
        }),
        namespace: s.namespace,
    }
}

fn capability_from_wit(c: wit::Capability) -> Capability {
    match c {
        wit::Capability::Unspecified => Capability::Unspecified,
        wit::Capability::Capabilities => Capability::Capabilities,
        wit::Capability::RequiredResources => Capability::RequiredResources,
        wit::Capability::Credentials => Capability::Credentials,
        wit::Capability::Conditions => Capability::Conditions,
        wit::Capability::RequiredSchemas => Capability::RequiredSchemas,
    }
}

fn capability_to_wit(c: Capability) -> wit::Capability {
    match c {
        Capability::Unspecified => wit::Capability::Unspecified,
        Capability::Capabilities => wit::Capability::Capabilities,
        Capability::RequiredResources => wit::Capability::RequiredResources,
        Capability::Credentials => wit::Capability::Credentials,
        Capability::Conditions => wit::Capability::Conditions,
        Capability::RequiredSchemas => wit::Capability::RequiredSchemas,
    }
}

fn severity_to_wit(s: Severity) -> wit::Severity {
    match s {
        Severity::Unspecified => wit::Severity::Unspecified,
        Severity::Fatal => wit::Severity::Fatal,
        Severity::Warning => wit::Severity::Warning,
        Severity::Normal => wit::Severity::Normal,
    }
}

fn severity_from_wit(s: wit::Severity) -> Severity {
    match s {
        wit::Severity::Unspecified => Severity::Unspecified,
        wit::Severity::Fatal => Severity::Fatal,
        wit::Severity::Warning => Severity::Warning,
        wit::Severity::Normal => Severity::Normal,
    }
}

fn target_to_wit(t: Target) -> wit::Target {
    match t {
        Target::Unspecified => wit::Target::Unspecified,
        Target::Composite => wit::Target::Composite,
        Target::CompositeAndClaim => wit::Target::CompositeAndClaim,
    }
}

fn target_from_wit(t: wit::Target) -> Target {
    match t {
        wit::Target::Unspecified => Target::Unspecified,
        wit::Target::Composite => Target::Composite,
        wit::Target::CompositeAndClaim => Target::CompositeAndClaim,
    }
}

fn condition_status_to_wit(s: ConditionStatus) -> wit::ConditionStatus {
    match s {
        ConditionStatus::Unspecified => wit::ConditionStatus::Unspecified,
        ConditionStatus::Unknown => wit::ConditionStatus::Unknown,
        ConditionStatus::True => wit::ConditionStatus::True,
        ConditionStatus::False => wit::ConditionStatus::False,
    }
}

fn condition_status_from_wit(s: wit::ConditionStatus) -> ConditionStatus {
    match s {
        wit::ConditionStatus::Unspecified => ConditionStatus::Unspecified,
        wit::ConditionStatus::Unknown => ConditionStatus::Unknown,
        wit::ConditionStatus::True => ConditionStatus::True,
        wit::ConditionStatus::False => ConditionStatus::False,
    }
}
