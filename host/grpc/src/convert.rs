//! Conversion between the host's WIT types ([`xfn_runtime::protocol`]) and the
//! protobuf messages of `apiextensions.fn.proto.v1` whose Structs are JSON
//! text ([`xfn_proto::json::v1`]), which the server and client send and
//! receive.
//!
//! Every field is carried over. The two representations differ in three ways:
//!
//! * **Structs.** A `google.protobuf.Struct` is JSON object text in WIT,
//!   written straight from the Struct's wire bytes and back (see
//!   [`xfn_proto::json`]), with no value tree between. Protobuf numbers are `f64`, so a JSON integer becomes the nearest `f64`
//!   on the way to protobuf (exact up to ±2^53, as in Crossplane's Go code).
//!   On the way back, an integral `f64` within ±2^53 is written as a JSON
//!   integer (`9001`, not `9001.0`), and any other finite number in the
//!   shortest form that reads back as the same `f64`. NaN and ±infinity have
//!   no JSON form: converting a Struct that holds one is an error (Go's
//!   `encoding/json` refuses them too). A `Value` with no kind set is written
//!   as `null`. Object keys come out sorted; JSON sent to protobuf keeps
//!   its order.
//! * **Maps.** Protobuf maps (`HashMap`s) become WIT lists of pairs sorted by
//!   key, so the same message always converts to the same list. A list with
//!   a repeated key keeps the last pair.
//! * **Enums.** A protobuf enum value this host doesn't know (from a newer
//!   peer) becomes `Unspecified`.

use std::collections::HashMap;
use std::fmt;

use prost_types::Struct;
use xfn_proto::json::{JsonError, JsonStruct, TextPool, v1 as pb};

use xfn_runtime::protocol as wit;

/// A field that cannot be converted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct ConvertError {
    /// Where the field is, e.g. `observed.resources["a"].resource`.
    pub path: String,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for ConvertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.reason)
        } else {
            write!(f, "{}: {}", self.path, self.reason)
        }
    }
}

impl ConvertError {
    fn new(reason: impl Into<String>) -> Self {
        ConvertError {
            path: String::new(),
            reason: reason.into(),
        }
    }

    /// Prefixes the path with the enclosing field.
    fn within(mut self, field: impl fmt::Display) -> Self {
        self.path = if self.path.is_empty() {
            field.to_string()
        } else if self.path.starts_with('[') {
            format!("{field}{}", self.path)
        } else {
            format!("{field}.{}", self.path)
        };
        self
    }
}

type Result<T, E = ConvertError> = std::result::Result<T, E>;

// ---------------------------------------------------------------------------
// google.protobuf.Struct <-> JSON object text

/// The deepest JSON nesting converted to a Struct.
pub use xfn_proto::json::MAX_JSON_DEPTH;

impl From<JsonError> for ConvertError {
    fn from(e: JsonError) -> Self {
        ConvertError::new(e.to_string())
    }
}

/// Writes a `prost_types::Struct` tree as JSON object text, by the same
/// rules as the serving path (for callers that hold trees: tests and
/// clients built on [`xfn_proto::v1`]).
pub fn struct_to_json(value: &Struct) -> Result<String> {
    // Encoding a tree recurses once per level.
    let bytes = xfn_proto::with_deep_stack(|| prost::Message::encode_to_vec(value));
    let json = <JsonStruct as prost::Message>::decode(bytes::Bytes::from(bytes))
        .map_err(|e| ConvertError::new(e.to_string()))?;
    Ok(json.to_json()?)
}

/// Parses JSON object text into a `prost_types::Struct` tree, by the same
/// rules as the serving path.
pub fn json_to_struct(text: &str) -> Result<Struct> {
    let bytes = prost::Message::encode_to_vec(&JsonStruct::from_json(text)?);
    // Decoding a tree recurses once per level.
    xfn_proto::with_deep_stack(|| <Struct as prost::Message>::decode(bytes.as_slice()))
        .map_err(|e| ConvertError::new(e.to_string()))
}

/// Where a conversion writes JSON text: into a [`TextPool`]'s spare
/// buffers, or into new ones.
type Pool<'a> = Option<&'a TextPool>;

fn opt_to_json(value: Option<JsonStruct>, field: &str, pool: Pool) -> Result<Option<String>> {
    value
        .map(|s| {
            s.into_json_in(pool)
                .map_err(|e| ConvertError::from(e).within(field))
        })
        .transpose()
}

fn opt_to_struct(text: Option<String>, field: &str) -> Result<Option<JsonStruct>> {
    text.map(|t| JsonStruct::from_json(t).map_err(|e| ConvertError::from(e).within(field)))
        .transpose()
}

// ---------------------------------------------------------------------------
// Maps and enums

/// A protobuf map as a WIT list sorted by key.
fn sorted<V, W>(
    map: HashMap<String, V>,
    mut f: impl FnMut(V) -> Result<W>,
) -> Result<Vec<(String, W)>> {
    let mut pairs = map
        .into_iter()
        .map(|(k, v)| match f(v) {
            Ok(w) => Ok((k, w)),
            Err(e) => Err(e.within(format!("[{k:?}]"))),
        })
        .collect::<Result<Vec<_>>>()?;
    pairs.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Ok(pairs)
}

/// A WIT list of pairs as a protobuf map.
fn mapped<V, W>(
    pairs: Vec<(String, V)>,
    mut f: impl FnMut(V) -> Result<W>,
) -> Result<HashMap<String, W>> {
    pairs
        .into_iter()
        .map(|(k, v)| match f(v) {
            Ok(w) => Ok((k, w)),
            Err(e) => Err(e.within(format!("[{k:?}]"))),
        })
        .collect()
}

fn infallible<V, W>(f: impl Fn(V) -> W) -> impl Fn(V) -> Result<W> {
    move |v| Ok(f(v))
}

fn capability_from_proto(v: i32) -> wit::Capability {
    use pb::Capability as P;
    match P::try_from(v).unwrap_or(P::Unspecified) {
        P::Unspecified => wit::Capability::Unspecified,
        P::Capabilities => wit::Capability::Capabilities,
        P::RequiredResources => wit::Capability::RequiredResources,
        P::Credentials => wit::Capability::Credentials,
        P::Conditions => wit::Capability::Conditions,
        P::RequiredSchemas => wit::Capability::RequiredSchemas,
    }
}

fn capability_to_proto(v: wit::Capability) -> i32 {
    use pb::Capability as P;
    (match v {
        wit::Capability::Unspecified => P::Unspecified,
        wit::Capability::Capabilities => P::Capabilities,
        wit::Capability::RequiredResources => P::RequiredResources,
        wit::Capability::Credentials => P::Credentials,
        wit::Capability::Conditions => P::Conditions,
        wit::Capability::RequiredSchemas => P::RequiredSchemas,
    }) as i32
}

fn ready_from_proto(v: i32) -> wit::Ready {
    match pb::Ready::try_from(v).unwrap_or(pb::Ready::Unspecified) {
        pb::Ready::Unspecified => wit::Ready::Unspecified,
        pb::Ready::True => wit::Ready::True,
        pb::Ready::False => wit::Ready::False,
    }
}

fn ready_to_proto(v: wit::Ready) -> i32 {
    (match v {
        wit::Ready::Unspecified => pb::Ready::Unspecified,
        wit::Ready::True => pb::Ready::True,
        wit::Ready::False => pb::Ready::False,
    }) as i32
}

fn severity_from_proto(v: i32) -> wit::Severity {
    use pb::Severity as P;
    match P::try_from(v).unwrap_or(P::Unspecified) {
        P::Unspecified => wit::Severity::Unspecified,
        P::Fatal => wit::Severity::Fatal,
        P::Warning => wit::Severity::Warning,
        P::Normal => wit::Severity::Normal,
    }
}

fn severity_to_proto(v: wit::Severity) -> i32 {
    use pb::Severity as P;
    (match v {
        wit::Severity::Unspecified => P::Unspecified,
        wit::Severity::Fatal => P::Fatal,
        wit::Severity::Warning => P::Warning,
        wit::Severity::Normal => P::Normal,
    }) as i32
}

fn target_from_proto(v: i32) -> wit::Target {
    use pb::Target as P;
    match P::try_from(v).unwrap_or(P::Unspecified) {
        P::Unspecified => wit::Target::Unspecified,
        P::Composite => wit::Target::Composite,
        P::CompositeAndClaim => wit::Target::CompositeAndClaim,
    }
}

fn target_to_proto(v: wit::Target) -> i32 {
    use pb::Target as P;
    (match v {
        wit::Target::Unspecified => P::Unspecified,
        wit::Target::Composite => P::Composite,
        wit::Target::CompositeAndClaim => P::CompositeAndClaim,
    }) as i32
}

fn status_from_proto(v: i32) -> wit::ConditionStatus {
    use pb::Status as P;
    match P::try_from(v).unwrap_or(P::ConditionUnspecified) {
        P::ConditionUnspecified => wit::ConditionStatus::Unspecified,
        P::ConditionUnknown => wit::ConditionStatus::Unknown,
        P::ConditionTrue => wit::ConditionStatus::True,
        P::ConditionFalse => wit::ConditionStatus::False,
    }
}

fn status_to_proto(v: wit::ConditionStatus) -> i32 {
    use pb::Status as P;
    (match v {
        wit::ConditionStatus::Unspecified => P::ConditionUnspecified,
        wit::ConditionStatus::Unknown => P::ConditionUnknown,
        wit::ConditionStatus::True => P::ConditionTrue,
        wit::ConditionStatus::False => P::ConditionFalse,
    }) as i32
}

// ---------------------------------------------------------------------------
// Messages: protobuf -> WIT

/// Converts a protobuf request into the host's request.
pub fn request_from_proto(r: pb::RunFunctionRequest) -> Result<wit::RunFunctionRequest> {
    request_from_proto_in(r, None)
}

/// [`request_from_proto`], writing the request's JSON into `pool`'s spare
/// buffers; [`recycle_request`] gives them back.
pub fn request_from_proto_in(
    r: pb::RunFunctionRequest,
    pool: Pool,
) -> Result<wit::RunFunctionRequest> {
    Ok(wit::RunFunctionRequest {
        meta: r.meta.map(|m| wit::RequestMeta {
            tag: m.tag,
            capabilities: m
                .capabilities
                .into_iter()
                .map(capability_from_proto)
                .collect(),
        }),
        observed: r
            .observed
            .map(|s| state_from_proto(s, pool))
            .transpose()
            .map_err(|e| e.within("observed"))?,
        desired: r
            .desired
            .map(|s| state_from_proto(s, pool))
            .transpose()
            .map_err(|e| e.within("desired"))?,
        input: opt_to_json(r.input, "input", pool)?,
        context: opt_to_json(r.context, "context", pool)?,
        extra_resources: sorted(r.extra_resources, |r| resources_from_proto(r, pool))
            .map_err(|e| e.within("extra_resources"))?,
        credentials: sorted(r.credentials, infallible(credentials_from_proto))?,
        required_resources: sorted(r.required_resources, |r| resources_from_proto(r, pool))
            .map_err(|e| e.within("required_resources"))?,
        required_schemas: sorted(r.required_schemas, |s| schema_from_proto(s, pool))
            .map_err(|e| e.within("required_schemas"))?,
    })
}

/// Gives the JSON text of a request back to `pool`, for the next request
/// [`request_from_proto_in`] converts to write into: a server calls it
/// when the function is done with the request.
pub fn recycle_request(r: wit::RunFunctionRequest, pool: &TextPool) {
    let recycle = |text| pool.give_back(text);
    let states = r.observed.into_iter().chain(r.desired);
    let listed = (r.extra_resources.into_iter().chain(r.required_resources))
        .flat_map(|(_, resources)| resources.items);
    let objects = states
        .flat_map(|s| {
            s.composite
                .into_iter()
                .chain(s.resources.into_iter().map(|(_, r)| r))
        })
        .chain(listed);
    let schemas = r.required_schemas.into_iter().map(|(_, s)| s.openapi_v3);
    objects
        .map(|o| o.resource)
        .chain([r.input, r.context])
        .chain(schemas)
        .flatten()
        .for_each(recycle);
}

/// Converts a protobuf response into the host's response.
pub fn response_from_proto(r: pb::RunFunctionResponse) -> Result<wit::RunFunctionResponse> {
    Ok(wit::RunFunctionResponse {
        meta: r.meta.map(|m| wit::ResponseMeta {
            tag: m.tag,
            ttl: m.ttl.map(|d| wit::Duration {
                seconds: d.seconds,
                nanos: d.nanos,
            }),
        }),
        desired: r
            .desired
            .map(|s| state_from_proto(s, None))
            .transpose()
            .map_err(|e| e.within("desired"))?,
        results: r.results.into_iter().map(result_from_proto).collect(),
        context: opt_to_json(r.context, "context", None)?,
        requirements: r.requirements.map(requirements_from_proto),
        conditions: r.conditions.into_iter().map(condition_from_proto).collect(),
        output: opt_to_json(r.output, "output", None)?,
    })
}

fn resource_from_proto(r: pb::Resource, pool: Pool) -> Result<wit::ResourceObject> {
    Ok(wit::ResourceObject {
        resource: opt_to_json(r.resource, "resource", pool)?,
        connection_details: sorted(r.connection_details, infallible(|v| v))?,
        ready: ready_from_proto(r.ready),
    })
}

fn state_from_proto(s: pb::State, pool: Pool) -> Result<wit::State> {
    Ok(wit::State {
        composite: s
            .composite
            .map(|r| resource_from_proto(r, pool))
            .transpose()
            .map_err(|e| e.within("composite"))?,
        resources: sorted(s.resources, |r| resource_from_proto(r, pool))
            .map_err(|e| e.within("resources"))?,
    })
}

fn resources_from_proto(r: pb::Resources, pool: Pool) -> Result<wit::Resources> {
    let items = r
        .items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            resource_from_proto(item, pool).map_err(|e| e.within(format!("items[{i}]")))
        })
        .collect::<Result<_>>()?;
    Ok(wit::Resources { items })
}

fn credentials_from_proto(c: pb::Credentials) -> wit::Credentials {
    use pb::credentials::Source;
    wit::Credentials {
        source: c.source.map(|Source::CredentialData(d)| {
            let mut data: Vec<_> = d.data.into_iter().collect();
            data.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            wit::CredentialSource::CredentialData(wit::CredentialData { data })
        }),
    }
}

fn schema_from_proto(s: pb::Schema, pool: Pool) -> Result<wit::Schema> {
    Ok(wit::Schema {
        openapi_v3: opt_to_json(s.openapi_v3, "openapi_v3", pool)?,
    })
}

fn selector_from_proto(s: pb::ResourceSelector) -> wit::ResourceSelector {
    use pb::resource_selector::Match;
    wit::ResourceSelector {
        api_version: s.api_version,
        kind: s.kind,
        match_: s.r#match.map(|m| match m {
            Match::MatchName(name) => wit::ResourceMatch::MatchName(name),
            Match::MatchLabels(l) => {
                let mut labels: Vec<_> = l.labels.into_iter().collect();
                labels.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                wit::ResourceMatch::MatchLabels(wit::MatchLabels { labels })
            }
        }),
        namespace: s.namespace,
    }
}

fn requirements_from_proto(r: pb::Requirements) -> wit::Requirements {
    fn sort<V>(map: HashMap<String, V>) -> Vec<(String, V)> {
        let mut pairs: Vec<_> = map.into_iter().collect();
        pairs.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        pairs
    }
    let selectors = |m: HashMap<String, pb::ResourceSelector>| {
        sort(m)
            .into_iter()
            .map(|(k, v)| (k, selector_from_proto(v)))
            .collect()
    };
    wit::Requirements {
        extra_resources: selectors(r.extra_resources),
        resources: selectors(r.resources),
        schemas: sort(r.schemas)
            .into_iter()
            .map(|(k, s)| {
                let selector = wit::SchemaSelector {
                    api_version: s.api_version,
                    kind: s.kind,
                };
                (k, selector)
            })
            .collect(),
    }
}

fn result_from_proto(r: pb::Result) -> wit::FunctionResult {
    wit::FunctionResult {
        severity: severity_from_proto(r.severity),
        message: r.message,
        reason: r.reason,
        target: r.target.map(target_from_proto),
    }
}

fn condition_from_proto(c: pb::Condition) -> wit::Condition {
    wit::Condition {
        type_: c.r#type,
        status: status_from_proto(c.status),
        reason: c.reason,
        message: c.message,
        target: c.target.map(target_from_proto),
    }
}

// ---------------------------------------------------------------------------
// Messages: WIT -> protobuf

/// Converts the host's request into a protobuf request.
pub fn request_to_proto(r: wit::RunFunctionRequest) -> Result<pb::RunFunctionRequest> {
    Ok(pb::RunFunctionRequest {
        meta: r.meta.map(|m| pb::RequestMeta {
            tag: m.tag,
            capabilities: m
                .capabilities
                .into_iter()
                .map(capability_to_proto)
                .collect(),
        }),
        observed: r
            .observed
            .map(state_to_proto)
            .transpose()
            .map_err(|e| e.within("observed"))?,
        desired: r
            .desired
            .map(state_to_proto)
            .transpose()
            .map_err(|e| e.within("desired"))?,
        input: opt_to_struct(r.input, "input")?,
        context: opt_to_struct(r.context, "context")?,
        extra_resources: mapped(r.extra_resources, resources_to_proto)
            .map_err(|e| e.within("extra_resources"))?,
        credentials: mapped(r.credentials, infallible(credentials_to_proto))?,
        required_resources: mapped(r.required_resources, resources_to_proto)
            .map_err(|e| e.within("required_resources"))?,
        required_schemas: mapped(r.required_schemas, schema_to_proto)
            .map_err(|e| e.within("required_schemas"))?,
    })
}

/// The most seconds a `google.protobuf.Duration` holds, either way
/// (10,000 years).
const MAX_DURATION_SECONDS: i64 = 315_576_000_000;

/// A guest's duration as protobuf's, which must be within 10,000 years,
/// with nanoseconds under a second and of the seconds' sign: a client
/// (Crossplane's protojson and Go's `AsDuration`) rejects or misreads any
/// other.
fn duration_to_proto(d: wit::Duration) -> Result<prost_types::Duration> {
    let valid = d.seconds.unsigned_abs() <= MAX_DURATION_SECONDS.unsigned_abs()
        && d.nanos.unsigned_abs() < 1_000_000_000
        && !(d.seconds > 0 && d.nanos < 0 || d.seconds < 0 && d.nanos > 0);
    if !valid {
        return Err(ConvertError {
            path: String::new(),
            reason: format!(
                "{}s {}ns is not a valid duration (at most {MAX_DURATION_SECONDS}s either way, \
                 and nanoseconds under a second of the seconds' sign)",
                d.seconds, d.nanos
            ),
        });
    }
    Ok(prost_types::Duration {
        seconds: d.seconds,
        nanos: d.nanos,
    })
}

/// Converts the host's response into a protobuf response.
pub fn response_to_proto(r: wit::RunFunctionResponse) -> Result<pb::RunFunctionResponse> {
    let meta = r
        .meta
        .map(|m| {
            let ttl = m.ttl.map(duration_to_proto).transpose();
            Ok::<_, ConvertError>(pb::ResponseMeta {
                tag: m.tag,
                ttl: ttl.map_err(|e| e.within("ttl"))?,
            })
        })
        .transpose()
        .map_err(|e| e.within("meta"))?;
    Ok(pb::RunFunctionResponse {
        meta,
        desired: r
            .desired
            .map(state_to_proto)
            .transpose()
            .map_err(|e| e.within("desired"))?,
        results: r.results.into_iter().map(result_to_proto).collect(),
        context: opt_to_struct(r.context, "context")?,
        requirements: r.requirements.map(requirements_to_proto),
        conditions: r.conditions.into_iter().map(condition_to_proto).collect(),
        output: opt_to_struct(r.output, "output")?,
    })
}

fn resource_to_proto(r: wit::ResourceObject) -> Result<pb::Resource> {
    Ok(pb::Resource {
        resource: opt_to_struct(r.resource, "resource")?,
        connection_details: r.connection_details.into_iter().collect(),
        ready: ready_to_proto(r.ready),
    })
}

fn state_to_proto(s: wit::State) -> Result<pb::State> {
    Ok(pb::State {
        composite: s
            .composite
            .map(resource_to_proto)
            .transpose()
            .map_err(|e| e.within("composite"))?,
        resources: mapped(s.resources, resource_to_proto).map_err(|e| e.within("resources"))?,
    })
}

fn resources_to_proto(r: wit::Resources) -> Result<pb::Resources> {
    let items = r
        .items
        .into_iter()
        .enumerate()
        .map(|(i, item)| resource_to_proto(item).map_err(|e| e.within(format!("items[{i}]"))))
        .collect::<Result<_>>()?;
    Ok(pb::Resources { items })
}

fn credentials_to_proto(c: wit::Credentials) -> pb::Credentials {
    use pb::credentials::Source;
    pb::Credentials {
        source: c.source.map(|wit::CredentialSource::CredentialData(d)| {
            Source::CredentialData(pb::CredentialData {
                data: d.data.into_iter().collect(),
            })
        }),
    }
}

fn schema_to_proto(s: wit::Schema) -> Result<pb::Schema> {
    Ok(pb::Schema {
        openapi_v3: opt_to_struct(s.openapi_v3, "openapi_v3")?,
    })
}

fn selector_to_proto(s: wit::ResourceSelector) -> pb::ResourceSelector {
    use pb::resource_selector::Match;
    pb::ResourceSelector {
        api_version: s.api_version,
        kind: s.kind,
        r#match: s.match_.map(|m| match m {
            wit::ResourceMatch::MatchName(name) => Match::MatchName(name),
            wit::ResourceMatch::MatchLabels(l) => Match::MatchLabels(pb::MatchLabels {
                labels: l.labels.into_iter().collect(),
            }),
        }),
        namespace: s.namespace,
    }
}

fn requirements_to_proto(r: wit::Requirements) -> pb::Requirements {
    let selectors = |pairs: Vec<(String, wit::ResourceSelector)>| {
        pairs
            .into_iter()
            .map(|(k, v)| (k, selector_to_proto(v)))
            .collect()
    };
    pb::Requirements {
        extra_resources: selectors(r.extra_resources),
        resources: selectors(r.resources),
        schemas: r
            .schemas
            .into_iter()
            .map(|(k, s)| {
                let selector = pb::SchemaSelector {
                    api_version: s.api_version,
                    kind: s.kind,
                };
                (k, selector)
            })
            .collect(),
    }
}

fn result_to_proto(r: wit::FunctionResult) -> pb::Result {
    pb::Result {
        severity: severity_to_proto(r.severity),
        message: r.message,
        reason: r.reason,
        target: r.target.map(target_to_proto),
    }
}

fn condition_to_proto(c: wit::Condition) -> pb::Condition {
    pb::Condition {
        r#type: c.type_,
        status: status_to_proto(c.status),
        reason: c.reason,
        message: c.message,
        target: c.target.map(target_to_proto),
    }
}

#[cfg(test)]
mod tests;
