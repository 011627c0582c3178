//! The protocol types as authors see them: plain Rust values, with JSON
//! objects for the free-form parts (`google.protobuf.Struct` in the protocol).
//!
//! Every type serializes to and from protojson's field names and enum names,
//! so a response can be written down as JSON (for tests, say) and read back.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A JSON object: a Kubernetes resource, an input, a context.
///
/// ```
/// let mut o = xfn_sdk::Object::new();
/// o.insert("kind".into(), "Bucket".into());
/// assert_eq!(o["kind"], "Bucket");
/// ```
pub type Object = serde_json::Map<String, serde_json::Value>;

/// Connection details or credential data: names to raw bytes.
///
/// ```
/// let mut b = xfn_sdk::Bytes::new();
/// b.insert("password".into(), b"s3cr3t".to_vec());
/// assert_eq!(b["password"], b"s3cr3t");
/// ```
pub type Bytes = BTreeMap<String, Vec<u8>>;

/// What the caller of a function supports (`Capability`).
///
/// ```
/// let v: xfn_sdk::Capability = serde_json::from_value(serde_json::json!("CAPABILITY_CONDITIONS")).unwrap();
/// assert_eq!(v, xfn_sdk::Capability::Conditions);
/// ```
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
///
/// ```
/// let v: xfn_sdk::Ready = serde_json::from_value(serde_json::json!("READY_TRUE")).unwrap();
/// assert_eq!(v, xfn_sdk::Ready::True);
/// ```
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
///
/// ```
/// let v: xfn_sdk::Severity = serde_json::from_value(serde_json::json!("SEVERITY_FATAL")).unwrap();
/// assert_eq!(v, xfn_sdk::Severity::Fatal);
/// ```
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
///
/// ```
/// let v: xfn_sdk::Target = serde_json::from_value(serde_json::json!("TARGET_COMPOSITE_AND_CLAIM")).unwrap();
/// assert_eq!(v, xfn_sdk::Target::CompositeAndClaim);
/// ```
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
///
/// ```
/// let v: xfn_sdk::ConditionStatus = serde_json::from_value(serde_json::json!("STATUS_CONDITION_FALSE")).unwrap();
/// assert_eq!(v, xfn_sdk::ConditionStatus::False);
/// ```
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
///
/// ```
/// let v: xfn_sdk::RequestMeta = serde_json::from_value(serde_json::json!({"tag": "t"})).unwrap();
/// assert_eq!(v.tag, "t");
/// ```
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
///
/// ```
/// let v: xfn_sdk::Resource = serde_json::from_value(serde_json::json!({"resource": {"kind": "Bucket"}, "ready": "READY_TRUE"})).unwrap();
/// assert_eq!(v.ready, xfn_sdk::Ready::True);
/// ```
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
///
/// ```
/// let v: xfn_sdk::State = serde_json::from_value(serde_json::json!({"resources": {"bucket": {}}})).unwrap();
/// assert!(v.composite.is_none() && v.resources.contains_key("bucket"));
/// ```
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
///
/// ```
/// let v: xfn_sdk::Resources = serde_json::from_value(serde_json::json!({"items": [{}]})).unwrap();
/// assert_eq!(v.items.len(), 1);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Resources {
    /// The matching resources.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<Resource>,
}

/// `Credentials`: what a pipeline step was given access to.
///
/// ```
/// let v: xfn_sdk::Credentials = serde_json::from_value(serde_json::json!({"credentialData": {"data": {"k": "aGk="}}})).unwrap();
/// assert_eq!(v.credential_data.unwrap().data["k"], b"hi");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Credentials {
    /// `credential_data`, the only source so far; `None` if unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credential_data: Option<CredentialData>,
}

/// `CredentialData`.
///
/// ```
/// let v: xfn_sdk::CredentialData = serde_json::from_value(serde_json::json!({"data": {"k": "aGk="}})).unwrap();
/// assert_eq!(v.data["k"], b"hi");
/// ```
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
///
/// ```
/// let v: xfn_sdk::Schema = serde_json::from_value(serde_json::json!({"openapiV3": {"type": "object"}})).unwrap();
/// assert!(v.openapi_v3.is_some());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Schema {
    /// The schema.
    #[serde(rename = "openapiV3", skip_serializing_if = "Option::is_none")]
    pub openapi_v3: Option<Object>,
}

/// `RunFunctionRequest`.
///
/// ```
/// let v: xfn_sdk::Request = serde_json::from_value(serde_json::json!({"meta": {"tag": "t"}, "input": {"size": 1}})).unwrap();
/// assert_eq!(v.tag(), "t");
/// ```
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
///
/// ```
/// let m = xfn_sdk::ResourceMatch::MatchName("main".into());
/// assert_eq!(serde_json::to_value(&m).unwrap(), serde_json::json!({"matchName": "main"}));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ResourceMatch {
    /// Match one object by name.
    MatchName(String),
    /// Match objects by labels.
    MatchLabels(MatchLabels),
}

/// `MatchLabels`.
///
/// ```
/// let v: xfn_sdk::MatchLabels = serde_json::from_value(serde_json::json!({"labels": {"app": "web"}})).unwrap();
/// assert_eq!(v.labels["app"], "web");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct MatchLabels {
    /// Labels that must all match.
    pub labels: BTreeMap<String, String>,
}

/// `ResourceSelector`: which resources a function requires.
///
/// ```
/// let v: xfn_sdk::ResourceSelector = serde_json::from_value(serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "matchName": "cfg"})).unwrap();
/// assert_eq!(v.r#match, Some(xfn_sdk::ResourceMatch::MatchName("cfg".into())));
/// ```
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
///
/// ```
/// let v: xfn_sdk::SchemaSelector = serde_json::from_value(serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap"})).unwrap();
/// assert_eq!(v.kind, "ConfigMap");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SchemaSelector {
    /// API version of the kind.
    pub api_version: String,
    /// The kind.
    pub kind: String,
}

/// `Requirements`: what a function needs to be called again with.
///
/// ```
/// let v: xfn_sdk::Requirements = serde_json::from_value(serde_json::json!({"schemas": {"s": {"apiVersion": "v1", "kind": "Pod"}}})).unwrap();
/// assert_eq!(v.schemas["s"].kind, "Pod");
/// ```
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
///
/// ```
/// let v: xfn_sdk::ResponseMeta = serde_json::from_value(serde_json::json!({"tag": "t", "ttl": "30s"})).unwrap();
/// assert_eq!(v.ttl, Some(std::time::Duration::from_secs(30)));
/// ```
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
///
/// ```
/// let v: xfn_sdk::FunctionResult = serde_json::from_value(serde_json::json!({"severity": "SEVERITY_WARNING", "message": "m"})).unwrap();
/// assert_eq!(v.severity, xfn_sdk::Severity::Warning);
/// ```
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
///
/// ```
/// let v: xfn_sdk::Condition = serde_json::from_value(serde_json::json!({"type": "Ready", "status": "STATUS_CONDITION_TRUE", "reason": "Ok"})).unwrap();
/// assert_eq!(v.status, xfn_sdk::ConditionStatus::True);
/// ```
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
///
/// ```
/// let v: xfn_sdk::Response = serde_json::from_value(serde_json::json!({"results": [{"severity": "SEVERITY_NORMAL", "message": "hi"}]})).unwrap();
/// assert!(!v.is_fatal());
/// ```
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
