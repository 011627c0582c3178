//! The function's input, `extra-resources.fn.crossplane.io/v1beta1`
//! `Input`, as v0.3.0 declares it.
//!
//! The input's `apiVersion` and `kind` are not checked, unknown fields are
//! refused and a `null` is a field's zero value (see
//! [`xfn_select::input`]). v0.3.0 has no `spec.context`: a later,
//! unreleased upstream version added it, and v0.3.0 refuses it as unknown.

use serde::Deserialize;
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
    /// The resources to select.
    #[serde(default)]
    pub extra_resources: Option<Vec<ResourceSource>>,
    /// The resolution policy of every reference.
    #[serde(default)]
    pub policy: Option<Policy>,
}

/// One entry of `extraResources`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ResourceSource {
    /// `Reference` (the default) or `Selector`.
    #[serde(default, rename = "type")]
    pub type_: Option<String>,
    /// The resource's name, for `Reference`.
    #[serde(default, rename = "ref")]
    pub reference: Option<Reference>,
    /// The labels to select by, for `Selector`.
    #[serde(default)]
    pub selector: Option<Selector>,
    /// The resources' kind.
    #[serde(default)]
    pub kind: Option<String>,
    /// The resources' apiVersion.
    #[serde(default)]
    pub api_version: Option<String>,
    /// The namespace to look in (namespaced kinds).
    #[serde(default)]
    pub namespace: Option<String>,
    /// The requirement's name and the context key of the resources' list.
    #[serde(default)]
    pub into: Option<String>,
}

impl ResourceSource {
    /// The type as written, `""` if unset.
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
    /// How many to keep at most after sorting.
    #[serde(default)]
    pub max_match: Option<u64>,
    /// How many must match at least.
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
    /// The sort field with its default (`GetSortByFieldPath`).
    pub fn sort_by_field_path(&self) -> &str {
        match self.sort_by_field_path.as_deref() {
            None | Some("") => "metadata.name",
            Some(p) => p,
        }
    }
}
