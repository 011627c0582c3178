//! The function's input,
//! `function-status-transformer.fn.crossplane.io/v1beta1`
//! `StatusTransformation`, as v0.5.1 declares it (strict decoding; see
//! [`xfn_select::input`]).

use serde::Deserialize;
use xfn_select::input::ObjectMeta;

/// The whole input.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
pub struct StatusTransformation {
    #[serde(default)]
    api_version: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    metadata: Option<ObjectMeta>,
    /// The hooks, in order.
    #[serde(default)]
    pub status_condition_hooks: Option<Vec<StatusConditionHook>>,
}

/// One hook: when all its matchers match, its conditions and events are set.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StatusConditionHook {
    /// All must match.
    #[serde(default)]
    pub matchers: Option<Vec<Matcher>>,
    /// Conditions to set.
    #[serde(default)]
    pub set_conditions: Option<Vec<SetCondition>>,
    /// Events (results) to create.
    #[serde(default)]
    pub create_events: Option<Vec<CreateEvent>>,
}

/// Which resources' conditions to match, and how.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Matcher {
    /// A name for the matcher (unused).
    #[serde(default)]
    pub name: Option<String>,
    /// How resources and conditions combine; `AllResourcesMatchAllConditions` by default.
    #[serde(default, rename = "type")]
    pub type_: Option<String>,
    /// Regular expressions of observed resource names.
    #[serde(default)]
    pub resources: Option<Vec<ResourceMatcher>>,
    /// The conditions to look for.
    #[serde(default)]
    pub conditions: Option<Vec<ConditionMatcher>>,
    /// Match the composite's own conditions too.
    #[serde(default)]
    pub include_composite_as_resource: Option<bool>,
    /// Match the resources function-extra-resources put in the context too.
    #[serde(default)]
    pub include_extra_resources: Option<bool>,
}

/// A regular expression of resource names.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceMatcher {
    /// The regular expression (unanchored).
    #[serde(default)]
    pub name: Option<String>,
}

/// A condition to look for.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConditionMatcher {
    /// The condition type.
    #[serde(default, rename = "type")]
    pub type_: Option<String>,
    /// The status it must have.
    #[serde(default)]
    pub status: Option<String>,
    /// The reason it must have.
    #[serde(default)]
    pub reason: Option<String>,
    /// A regular expression its message must match; its groups feed the templates.
    #[serde(default)]
    pub message: Option<String>,
}

/// `Composite` or `CompositeAndClaim`.
pub type Target = Option<String>;

/// A condition to set.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetCondition {
    /// Where the condition goes.
    #[serde(default)]
    pub target: Target,
    /// Set it even if an earlier hook set the same type.
    #[serde(default)]
    pub force: Option<bool>,
    /// The condition.
    #[serde(default)]
    pub condition: Option<Condition>,
}

/// A condition.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    /// Its type.
    #[serde(default, rename = "type")]
    pub type_: Option<String>,
    /// `True`, `False`, or anything else for `Unknown`.
    #[serde(default)]
    pub status: Option<String>,
    /// Its reason.
    #[serde(default)]
    pub reason: Option<String>,
    /// Its message, a Go template of the captured groups.
    #[serde(default)]
    pub message: Option<String>,
}

/// An event to create.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateEvent {
    /// Where the event goes.
    #[serde(default)]
    pub target: Target,
    /// The event.
    #[serde(default)]
    pub event: Option<Event>,
}

/// An event.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Event {
    /// `Normal` (the default) or `Warning`.
    #[serde(default, rename = "type")]
    pub type_: Option<String>,
    /// Its reason.
    #[serde(default)]
    pub reason: Option<String>,
    /// Its message, a Go template of the captured groups.
    #[serde(default)]
    pub message: Option<String>,
}
