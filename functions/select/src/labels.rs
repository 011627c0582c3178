//! Label matchers to the labels of a requirement.

use std::collections::BTreeMap;

use serde_json::Value;
use xfn_sdk::fieldpath::{self, FieldPathError};

use crate::goquote::quote;
use crate::input::LabelMatcher;

/// Why a matcher has no value.
#[derive(Debug, thiserror::Error)]
pub enum LabelError {
    /// A `Value` matcher without `value`.
    #[error("Value cannot be nil for type 'Value'")]
    MissingValue,
    /// A `FromCompositeFieldPath` matcher without `valueFromFieldPath`.
    #[error("ValueFromFieldPath cannot be nil for type 'FromCompositeFieldPath'")]
    MissingFieldPath,
    /// A required field of the XR is missing or not a string.
    #[error("cannot get value from field path {}: {source}", quote(.path))]
    FieldPath {
        /// The field path.
        path: String,
        /// What went wrong, in crossplane-runtime's words.
        source: FieldPathError,
    },
}

/// The labels `matchers` ask for, reading `FromCompositeFieldPath` values
/// from `xr` (the observed XR object).
///
/// A matcher of another type is skipped, as Go's `switch` skips it; an
/// optional matcher whose field cannot be read as a string is skipped too.
/// Later matchers of the same key win.
///
/// ```
/// use xfn_select::input::LabelMatcher;
/// let xr = serde_json::json!({"spec": {"env": "prod"}});
/// let matchers = vec![
///     LabelMatcher { type_: Some("Value".into()), key: Some("team".into()), value: Some("a".into()), ..Default::default() },
///     LabelMatcher { key: Some("env".into()), value_from_field_path: Some("spec.env".into()), ..Default::default() },
/// ];
/// let labels = xfn_select::labels::match_labels(&matchers, &xr).unwrap();
/// assert_eq!(labels["team"], "a");
/// assert_eq!(labels["env"], "prod");
/// ```
pub fn match_labels(
    matchers: &[LabelMatcher],
    xr: &Value,
) -> Result<BTreeMap<String, String>, LabelError> {
    let mut labels = BTreeMap::new();
    for m in matchers {
        let key = m.key.clone().unwrap_or_default();
        match m.matcher_type() {
            "Value" => {
                let value = m.value.as_ref().ok_or(LabelError::MissingValue)?;
                labels.insert(key, value.clone());
            }
            "FromCompositeFieldPath" => {
                let path = m
                    .value_from_field_path
                    .as_ref()
                    .ok_or(LabelError::MissingFieldPath)?;
                match fieldpath::get_string(xr, path) {
                    Ok(value) => {
                        labels.insert(key, value.to_owned());
                    }
                    Err(_) if m.is_optional() => {}
                    Err(source) => {
                        return Err(LabelError::FieldPath {
                            path: path.clone(),
                            source,
                        });
                    }
                }
            }
            _ => {}
        }
    }
    Ok(labels)
}
