//! The function's input, `sequencer.fn.crossplane.io/v1beta1` `Input`, as
//! v0.6.0 declares it (strict decoding; see [`xfn_select::input`]).

use serde::Deserialize;
use xfn_select::input::ObjectMeta;

/// The whole input.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
pub struct Input {
    #[serde(default)]
    api_version: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    metadata: Option<ObjectMeta>,
    /// The response's TTL, a Go duration.
    #[serde(default, rename = "cacheTTL")]
    pub cache_ttl: Option<String>,
    /// Generate Usages that keep the deletion order.
    #[serde(default)]
    pub enable_deletion_sequencing: Option<bool>,
    /// The Usages' `replayDeletion`.
    #[serde(default)]
    pub replay_deletion: Option<bool>,
    /// `v1` (apiextensions Usage) or anything else (protection Usage/ClusterUsage).
    #[serde(default)]
    pub usage_version: Option<String>,
    /// Mark the composite not ready when a creation is delayed.
    #[serde(default)]
    pub reset_composite_readiness: Option<bool>,
    /// The sequencing rules.
    #[serde(default)]
    pub rules: Option<Vec<Rule>>,
}

/// One rule.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Rule {
    /// A CEL expression; the rule's creation sequencing is skipped when it is false.
    #[serde(default)]
    pub condition: Option<String>,
    /// Only generate Usages, never delay creation.
    #[serde(default)]
    pub delete_only: Option<bool>,
    /// Resource names or regular expressions, in creation order.
    #[serde(default)]
    pub sequence: Option<Vec<String>>,
}
