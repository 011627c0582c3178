//! The function's input, `environmentconfigs.fn.crossplane.io/v1beta1`
//! `Input`, as v0.7.1 declares it.
//!
//! Like the Go function, the input's `apiVersion` and `kind` are not
//! checked (upstream's own tests send `template.fn.crossplane.io/v1beta1`),
//! unknown fields are refused and a `null` is a field's zero value (see
//! [`xfn_select::input`]).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;
use xfn_select::input::{LabelMatcher, ObjectMeta, Policy, Reference};

/// The whole input.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct Input {
    #[serde(default, rename = "apiVersion")]
    api_version: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    metadata: Option<ObjectMeta>,
    /// The specification.
    #[serde(default)]
    pub spec: Option<InputSpec>,
}

/// `spec`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct InputSpec {
    /// The environment's initial data, overridden by everything else.
    #[serde(default)]
    pub default_data: Option<BTreeMap<String, Value>>,
    /// The EnvironmentConfigs to select, in merge order. `None` (missing or
    /// `null`) makes the function do nothing; an empty list does not.
    #[serde(default)]
    pub environment_configs: Option<Vec<EnvironmentSource>>,
    /// The resolution policy of every reference.
    #[serde(default)]
    pub policy: Option<Policy>,
}

/// One entry of `environmentConfigs`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EnvironmentSource {
    /// `Reference` (the default) or `Selector`.
    #[serde(default, rename = "type")]
    pub type_: Option<String>,
    /// The EnvironmentConfig's name, for `Reference`.
    #[serde(default, rename = "ref")]
    pub reference: Option<Reference>,
    /// The labels to select by, for `Selector`.
    #[serde(default)]
    pub selector: Option<Selector>,
    /// Where in the environment the data goes (default: its root).
    #[serde(default)]
    pub to_field_path: Option<String>,
}

impl EnvironmentSource {
    /// The type as written, `""` if unset (`buildRequirements` switches on this).
    pub fn raw_type(&self) -> &str {
        self.type_.as_deref().unwrap_or("")
    }

    /// The type with its default, `Reference` (`GetType`).
    pub fn source_type(&self) -> &str {
        match self.raw_type() {
            "" => "Reference",
            t => t,
        }
    }
}

/// `selector`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Selector {
    /// `Single` (the default) or `Multiple`.
    #[serde(default)]
    pub mode: Option<String>,
    /// In `Multiple` mode, how many to keep at most after sorting.
    #[serde(default)]
    pub max_match: Option<u64>,
    /// In `Multiple` mode, how many must match at least.
    #[serde(default)]
    pub min_match: Option<u64>,
    /// The field to sort by, `metadata.name` by default.
    #[serde(default)]
    pub sort_by_field_path: Option<String>,
    /// The labels.
    #[serde(default)]
    pub match_labels: Option<Vec<LabelMatcher>>,
}

impl Selector {
    /// The mode with its default (`GetMode`).
    pub fn mode(&self) -> &str {
        match self.mode.as_deref() {
            None | Some("") => "Single",
            Some(m) => m,
        }
    }

    /// The sort field with its default (`GetSortByFieldPath`).
    pub fn sort_by_field_path(&self) -> &str {
        match self.sort_by_field_path.as_deref() {
            None | Some("") => "metadata.name",
            Some(p) => p,
        }
    }
}
