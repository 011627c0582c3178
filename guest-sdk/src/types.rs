//! The protocol types as authors see them: plain Rust values, with JSON
//! objects for the free-form parts (`google.protobuf.Struct` in the protocol).
//!
//! Every type serializes to and from protojson's field names and enum names,
//! so a response can be written down as JSON (for tests, say) and read back.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A JSON object: a Kubernetes resource, an input, a context.
pub type Object = serde_json::Map<String, serde_json::Value>;

/// Connection details or credential data: names to raw bytes.
pub type Bytes = BTreeMap<String, Vec<u8>>;

/// What the caller of a function supports (`Capability`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Capability {
    /// `CAPABILITY_UNSPECIFIED`
    #[serde(rename = "CAPABILITY_UNSPECIFIED")]
    Unspecified,
    /// `CAPABILITY_CAPABILITIES`: the caller advertises its capabilities, so
    /// the absence of another one means it is unsupported.
    #[serde(rename = "CAPABILITY_CAPABILITIES")]
    Capabilities,
    /// `CAPABILITY_REQUIRED_RESOURCES`
    #[serde(rename = "CAPABILITY_REQUIRED_RESOURCES")]
    RequiredResources,
    /// `CAPABILITY_CREDENTIALS`
    #[serde(rename = "CAPABILITY_CREDENTIALS")]
    Credentials,
    /// `CAPABILITY_CONDITIONS`
    #[serde(rename = "CAPABILITY_CONDITIONS")]
    Conditions,
    /// `CAPABILITY_REQUIRED_SCHEMAS`
    #[serde(rename = "CAPABILITY_REQUIRED_SCHEMAS")]
    RequiredSchemas,
}

/// Whether a resource is ready (`Ready`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Ready {
    /// `READY_UNSPECIFIED`: the function has no opinion.
    #[default]
    #[serde(rename = "READY_UNSPECIFIED")]
    Unspecified,
    /// `READY_TRUE`
    #[serde(rename = "READY_TRUE")]
    True,
    /// `READY_FALSE`
    #[serde(rename = "READY_FALSE")]
    False,
}

/// How bad a result is (`Severity`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Severity {
    /// `SEVERITY_UNSPECIFIED`
    #[default]
    #[serde(rename = "SEVERITY_UNSPECIFIED")]
    Unspecified,
    /// `SEVERITY_FATAL`: stops the pipeline.
    #[serde(rename = "SEVERITY_FATAL")]
    Fatal,
    /// `SEVERITY_WARNING`
    #[serde(rename = "SEVERITY_WARNING")]
    Warning,
    /// `SEVERITY_NORMAL`
    #[serde(rename = "SEVERITY_NORMAL")]
    Normal,
}

/// Which object a result or condition is about (`Target`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Target {
    /// `TARGET_UNSPECIFIED`: treated as the composite.
    #[default]
    #[serde(rename = "TARGET_UNSPECIFIED")]
    Unspecified,
    /// `TARGET_COMPOSITE`
    #[serde(rename = "TARGET_COMPOSITE")]
    Composite,
    /// `TARGET_COMPOSITE_AND_CLAIM`
    #[serde(rename = "TARGET_COMPOSITE_AND_CLAIM")]
    CompositeAndClaim,
}

/// The status of a condition (`Status`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ConditionStatus {
    /// `STATUS_CONDITION_UNSPECIFIED`
    #[default]
    #[serde(rename = "STATUS_CONDITION_UNSPECIFIED")]
    Unspecified,
    /// `STATUS_CONDITION_UNKNOWN`
    #[serde(rename = "STATUS_CONDITION_UNKNOWN")]
    Unknown,
    /// `STATUS_CONDITION_TRUE`
    #[serde(rename = "STATUS_CONDITION_TRUE")]
    True,
    /// `STATUS_CONDITION_FALSE`
    #[serde(rename = "STATUS_CONDITION_FALSE")]
    False,
}

/// `RequestMeta`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct RequestMeta {
    /// Opaque tag; identical tags mean otherwise identical requests.
    pub tag: String,
    /// What the caller supports.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<Capability>,
}

/// `Resource`: a composite or composed resource with its connection details
/// and readiness.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Resource {
    /// The Kubernetes object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource: Option<Object>,
    /// Connection details.
    #[serde(
        skip_serializing_if = "BTreeMap::is_empty",
        with = "crate::serde_bytes"
    )]
    pub connection_details: Bytes,
    /// Readiness (desired state only).
    #[serde(skip_serializing_if = "is_default")]
    pub ready: Ready,
}

/// `State`: a composite resource and its composed resources.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct State {
    /// The composite resource (XR).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub composite: Option<Resource>,
    /// Composed resources, by composition resource name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub resources: BTreeMap<String, Resource>,
}

/// `Resources`: resources that matched a requirement.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Resources {
    /// The matching resources.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<Resource>,
}

/// `Credentials`: what a pipeline step was given access to.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Credentials {
    /// `credential_data`, the only source so far; `None` if unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credential_data: Option<CredentialData>,
}

/// `CredentialData`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CredentialData {
    /// Secret data.
    #[serde(
        skip_serializing_if = "BTreeMap::is_empty",
        with = "crate::serde_bytes"
    )]
    pub data: Bytes,
}

/// `Schema`: an OpenAPI v3 schema; `None` means "looked, not found".
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Schema {
    /// The schema.
    #[serde(rename = "openapiV3", skip_serializing_if = "Option::is_none")]
    pub openapi_v3: Option<Object>,
}

/// `RunFunctionRequest`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Request {
    /// Request metadata.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
    /// Observed state at the start of the pipeline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed: Option<State>,
    /// Desired state accumulated by earlier steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub desired: Option<State>,
    /// The pipeline step's input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<Object>,
    /// The pipeline context.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<Object>,
    /// Deprecated: use `required_resources`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub extra_resources: BTreeMap<String, Resources>,
    /// Credentials, by name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub credentials: BTreeMap<String, Credentials>,
    /// Resolved required resources, by requirement name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub required_resources: BTreeMap<String, Resources>,
    /// Resolved required schemas, by requirement name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub required_schemas: BTreeMap<String, Schema>,
}

/// The `match` of a [`ResourceSelector`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ResourceMatch {
    /// Match one object by name.
    MatchName(String),
    /// Match objects by labels.
    MatchLabels(MatchLabels),
}

/// `MatchLabels`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct MatchLabels {
    /// Labels that must all match.
    pub labels: BTreeMap<String, String>,
}

/// `ResourceSelector`: which resources a function requires.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ResourceSelector {
    /// API version of the resources.
    pub api_version: String,
    /// Kind of the resources.
    pub kind: String,
    /// By name or by labels; `None` matches every object of the kind.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub r#match: Option<ResourceMatch>,
    /// Namespace; `None` for cluster-scoped (or all namespaces, for labels).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// `SchemaSelector`: which schema a function requires.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SchemaSelector {
    /// API version of the kind.
    pub api_version: String,
    /// The kind.
    pub kind: String,
}

/// `Requirements`: what a function needs to be called again with.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Requirements {
    /// Deprecated: use `resources`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub extra_resources: BTreeMap<String, ResourceSelector>,
    /// Required resources, by requirement name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub resources: BTreeMap<String, ResourceSelector>,
    /// Required schemas, by requirement name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub schemas: BTreeMap<String, SchemaSelector>,
}

/// `ResponseMeta`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ResponseMeta {
    /// Must equal the request's tag.
    pub tag: String,
    /// How long the response may be cached.
    #[serde(
        skip_serializing_if = "Option::is_none",
        with = "crate::serde_duration"
    )]
    pub ttl: Option<Duration>,
}

/// `Result`: a message for the user from a function.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct FunctionResult {
    /// Severity; a fatal result stops the pipeline.
    pub severity: Severity,
    /// The message.
    pub message: String,
    /// PascalCase reason; Crossplane defaults it to `ComposeResources`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Which object the result is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
}

/// `Condition`: a status condition a function sets on the composite.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Condition {
    /// Condition type.
    pub r#type: String,
    /// Condition status.
    pub status: ConditionStatus,
    /// PascalCase reason.
    pub reason: String,
    /// Human-readable message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Which object the condition is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
}

/// `RunFunctionResponse`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Response {
    /// Response metadata.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResponseMeta>,
    /// The desired state; replaces the pipeline's desired state wholesale.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub desired: Option<State>,
    /// Results for the user.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub results: Vec<FunctionResult>,
    /// Context for the next step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<Object>,
    /// What the function needs to be called again with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requirements: Option<Requirements>,
    /// Conditions for the composite.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Output of an operation function.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Object>,
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}
