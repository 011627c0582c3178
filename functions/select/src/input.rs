//! The input types both functions share, and their decoding.
//!
//! Both Go functions decode their input with function-sdk-go v0.5 or later,
//! whose `resource.AsObject` uses go-json-experiment with
//! `RejectUnknownMembers`: unknown fields are refused and names match
//! case-sensitively, as serde's `deny_unknown_fields` does. A JSON `null`
//! decodes as the field's zero value, so every field here is optional.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use xfn_sdk::Request;

/// `metav1.ObjectMeta`, the input's `metadata`: its fields are known (and
/// refused if unknown) but unused.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
pub struct ObjectMeta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    generate_name: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    self_link: Option<String>,
    #[serde(default)]
    uid: Option<String>,
    #[serde(default)]
    resource_version: Option<String>,
    #[serde(default)]
    generation: Option<i64>,
    #[serde(default)]
    creation_timestamp: Option<Value>,
    #[serde(default)]
    deletion_timestamp: Option<Value>,
    #[serde(default)]
    deletion_grace_period_seconds: Option<i64>,
    #[serde(default)]
    labels: Option<std::collections::BTreeMap<String, String>>,
    #[serde(default)]
    annotations: Option<std::collections::BTreeMap<String, String>>,
    #[serde(default)]
    owner_references: Option<Vec<Value>>,
    #[serde(default)]
    finalizers: Option<Vec<String>>,
    #[serde(default)]
    managed_fields: Option<Vec<Value>>,
}

/// The resolution policy of references (`spec.policy`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// `Required` (the default) or `Optional`; Go accepts any string and
    /// treats all but `Optional` as required.
    #[serde(default)]
    pub resolution: Option<String>,
}

impl Policy {
    /// Whether references that resolve to nothing are skipped
    /// (`IsResolutionPolicyOptional`).
    ///
    /// ```
    /// let p = xfn_select::input::Policy { resolution: Some("Optional".into()) };
    /// assert!(xfn_select::input::Policy::is_optional(Some(&p)));
    /// assert!(!xfn_select::input::Policy::is_optional(None));
    /// ```
    pub fn is_optional(policy: Option<&Policy>) -> bool {
        policy.and_then(|p| p.resolution.as_deref()) == Some("Optional")
    }
}

/// A reference by name (`ref`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    /// The object's name.
    #[serde(default)]
    pub name: Option<String>,
}

/// One `matchLabels` entry: a label whose value is a literal or read from
/// the XR.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LabelMatcher {
    /// `FromCompositeFieldPath` (the default) or `Value`.
    #[serde(default, rename = "type")]
    pub type_: Option<String>,
    /// The label's key.
    #[serde(default)]
    pub key: Option<String>,
    /// The XR field whose value is the label's value.
    #[serde(default)]
    pub value_from_field_path: Option<String>,
    /// `Required` (the default): a missing field fails; `Optional`: the
    /// label is left out.
    #[serde(default)]
    pub from_field_path_policy: Option<String>,
    /// The label's literal value.
    #[serde(default)]
    pub value: Option<String>,
}

impl LabelMatcher {
    /// The matcher's type, `FromCompositeFieldPath` if unset (`GetType`).
    ///
    /// ```
    /// assert_eq!(xfn_select::input::LabelMatcher::default().matcher_type(), "FromCompositeFieldPath");
    /// ```
    pub fn matcher_type(&self) -> &str {
        match self.type_.as_deref() {
            None | Some("") => "FromCompositeFieldPath",
            Some(t) => t,
        }
    }

    /// Whether a missing field leaves the label out (`FromFieldPathIsOptional`).
    ///
    /// ```
    /// let m = xfn_select::input::LabelMatcher { from_field_path_policy: Some("Optional".into()), ..Default::default() };
    /// assert!(m.is_optional());
    /// ```
    pub fn is_optional(&self) -> bool {
        self.from_field_path_policy.as_deref() == Some("Optional")
    }
}

/// Decodes the step's input as function-sdk-go's `request.GetInput` does
/// into a Go type named `go_type` (`*v1beta1.Input`), with its error text
/// up to the JSON decoder's own message (which is serde's here, naming the
/// field; an unknown field of the input itself has go-json-experiment's
/// message). A missing input decodes from `{}`.
///
/// ```
/// #[derive(serde::Deserialize)]
/// #[serde(deny_unknown_fields)]
/// struct Input { spec: Option<serde_json::Value> }
///
/// let req: xfn_sdk::Request = serde_json::from_value(serde_json::json!({"input": {"spek": {}}})).unwrap();
/// let err = xfn_select::input::decode::<Input>(&req, "*v1beta1.Input").err().unwrap();
/// assert_eq!(err, "cannot get function input *v1beta1.Input from *v1.RunFunctionRequest: \
///     cannot unmarshal JSON from *structpb.Struct into *v1beta1.Input: json: \
///     cannot unmarshal Go value of type v1beta1.Input: unknown name \"spek\"");
/// ```
pub fn decode<T: DeserializeOwned>(req: &Request, go_type: &str) -> Result<T, String> {
    let empty = serde_json::Map::new();
    let object = req.input_object().unwrap_or(&empty);
    let map = serde::de::value::MapDeserializer::<_, serde_json::Error>::new(
        object.iter().map(|(k, v)| (k.as_str(), v)),
    );
    serde_path_to_error::deserialize(map).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let text = inner.to_string();
        let top_level_unknown = text
            .strip_prefix("unknown field `")
            .and_then(|t| t.split_once('`'))
            .map(|(name, _)| name)
            .filter(|name| *name == path);
        let detail = match top_level_unknown {
            // go-json-experiment's own message for an unknown member of the
            // input itself.
            Some(name) => format!(
                "cannot unmarshal Go value of type {}: unknown name {}",
                go_type.trim_start_matches('*'),
                crate::goquote::quote(name)
            ),
            None if path == "." => text,
            None => format!("{text} (at {path})"),
        };
        format!(
            "cannot get function input {go_type} from *v1.RunFunctionRequest: \
             cannot unmarshal JSON from *structpb.Struct into {go_type}: json: {detail}"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Input {
        #[serde(default)]
        metadata: Option<ObjectMeta>,
        #[serde(default)]
        spec: Option<Vec<LabelMatcher>>,
    }

    fn req(input: Value) -> Request {
        serde_json::from_value(serde_json::json!({ "input": input })).unwrap()
    }

    #[test]
    fn unknown_fields_are_refused_at_any_depth_with_their_path() {
        let err =
            decode::<Input>(&req(serde_json::json!({"spec": [{"kee": "a"}]})), "*T").unwrap_err();
        assert!(err.contains("unknown field `kee`"), "{err}");
        assert!(err.contains("(at spec[0].kee)"), "{err}");
        let err = decode::<Input>(&req(serde_json::json!({"metadata": {"colour": 1}})), "*T")
            .unwrap_err();
        assert!(err.contains("unknown field `colour`"), "{err}");
    }

    #[test]
    fn names_match_case_sensitively_and_nulls_are_zero_values() {
        let err = decode::<Input>(&req(serde_json::json!({"Spec": []})), "*v1.T").unwrap_err();
        assert!(
            err.ends_with("json: cannot unmarshal Go value of type v1.T: unknown name \"Spec\""),
            "{err}"
        );
        let ok = decode::<Input>(
            &req(serde_json::json!({"spec": null, "metadata": {"name": "x"}})),
            "*T",
        )
        .unwrap();
        assert!(ok.spec.is_none());
    }

    #[test]
    fn a_missing_input_is_empty() {
        let ok = decode::<Input>(&Request::default(), "*T").unwrap();
        assert!(ok.spec.is_none() && ok.metadata.is_none());
    }
}
