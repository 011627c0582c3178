//! The function's input, `cidr.fn.crossplane.io/v1beta1` `Parameters`, as
//! v0.7.0 declares it (strict decoding; see [`xfn_select::input`]).

use serde::Deserialize;
use xfn_select::input::ObjectMeta;

/// One prefix of `multiPrefix`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MultiPrefix {
    /// The prefix.
    #[serde(default)]
    pub prefix: Option<String>,
    /// The extensions of its subnets.
    #[serde(default)]
    pub new_bits: Option<Vec<i64>>,
    /// Subnets to skip first (an extension prepended and dropped).
    #[serde(default)]
    pub offset: Option<i64>,
}

/// The whole input.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(missing_docs, dead_code)]
pub struct Parameters {
    #[serde(default)]
    api_version: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    metadata: Option<ObjectMeta>,
    #[serde(default)]
    pub cidr_func: Option<String>,
    #[serde(default)]
    pub cidr_func_field: Option<String>,
    #[serde(default)]
    pub multi_prefix: Option<Vec<MultiPrefix>>,
    #[serde(default)]
    pub multi_prefix_field: Option<String>,
    #[serde(default)]
    pub prefix_field: Option<String>,
    #[serde(default)]
    pub prefix: Option<String>,
    #[serde(default)]
    pub host_num_field: Option<String>,
    #[serde(default)]
    pub host_num: Option<i64>,
    #[serde(default)]
    pub new_bits_field: Option<String>,
    #[serde(default)]
    pub new_bits: Option<Vec<i64>>,
    #[serde(default)]
    pub net_num_field: Option<String>,
    #[serde(default)]
    pub net_num: Option<i64>,
    #[serde(default)]
    pub net_num_count_field: Option<String>,
    #[serde(default)]
    pub net_num_count: Option<i64>,
    #[serde(default)]
    pub net_num_items_field: Option<String>,
    #[serde(default)]
    pub net_num_items: Option<Vec<String>>,
    #[serde(default)]
    pub offset_field: Option<String>,
    #[serde(default)]
    pub offset: Option<i64>,
    #[serde(default)]
    pub output_field: Option<String>,
}

/// A string field's value, `""` if unset (Go's zero value).
pub fn text(v: &Option<String>) -> &str {
    v.as_deref().unwrap_or("")
}
