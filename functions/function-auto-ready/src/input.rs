//! The function's input: `autoready.fn.crossplane.io/v1beta1`, kind `Input`.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use xfn_sdk::{Object, Request};

use crate::duration;

/// The optional input. Decoding is strict, as in Go: an unknown field, or a
/// field of the wrong type, is fatal. `apiVersion` and `kind` are not checked.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Input {
    /// The input's `apiVersion` (ignored).
    #[serde(default)]
    pub api_version: Option<String>,
    /// The input's `kind` (ignored).
    #[serde(default)]
    pub kind: Option<String>,
    /// The input's `metadata` (ignored).
    #[serde(default)]
    pub metadata: Option<Object>,
    /// How long the response may be cached, as a Go duration (`5m`).
    #[serde(default)]
    pub ttl: Option<String>,
    /// CEL readiness rules by `<group>_<version>_<kind>`, used behind the
    /// `CELHealthcheckCustomizations` feature gate (off by default).
    #[serde(default)]
    pub cel_health_check_customization: Option<BTreeMap<String, String>>,
    /// Where in the context to find more CEL rules (same gate).
    #[serde(default)]
    pub cel_health_check_customization_from: Option<String>,
}

impl Input {
    /// Decodes the request's input; a missing input is an empty one.
    ///
    /// The error is the message of the fatal result Go would return.
    pub fn from_request(req: &Request) -> Result<Input, String> {
        let Some(object) = req.input_object() else {
            return Ok(Input::default());
        };
        Input::deserialize(serde_json::Value::Object(object.clone()))
            .map_err(|e| format!("cannot get Function input from *v1.RunFunctionRequest: {e}"))
    }

    /// The TTL the input asks for, if any. A negative duration is clamped to
    /// zero, since the protocol's TTL cannot be negative here.
    ///
    /// The error is the message of the fatal result Go would return.
    pub fn ttl(&self) -> Result<Option<Duration>, String> {
        let Some(text) = self.ttl.as_deref().filter(|t| !t.is_empty()) else {
            return Ok(None);
        };
        let nanos = duration::parse(text).map_err(|e| format!("cannot set ttl: {e}"))?;
        Ok(Some(Duration::from_nanos(nanos.max(0).unsigned_abs())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn request(input: Value) -> Request {
        Request {
            input: match input {
                Value::Object(map) => Some(map),
                _ => None,
            },
            ..Request::default()
        }
    }

    #[test]
    fn accepts_every_documented_field() {
        let input = Input::from_request(&request(json!({
            "apiVersion": "autoready.fn.crossplane.io/v1beta1",
            "kind": "Input",
            "metadata": {"name": "x"},
            "ttl": "5m",
            "celHealthCheckCustomization": {"pkg.crossplane.io_v1_Configuration": "true"},
            "celHealthCheckCustomizationFrom": "[apiextensions.crossplane.io/environment].rules"
        })));
        let input = input.map_err(|e| e.to_string());
        assert!(input.is_ok(), "{input:?}");
        let ttl = input.and_then(|i| i.ttl());
        assert_eq!(ttl, Ok(Some(Duration::from_secs(300))));
    }

    #[test]
    fn missing_or_empty_input_is_default() {
        let none = Input::from_request(&Request::default()).and_then(|i| i.ttl());
        assert_eq!(none, Ok(None));
        let empty = Input::from_request(&request(json!({}))).and_then(|i| i.ttl());
        assert_eq!(empty, Ok(None));
        let blank = Input::from_request(&request(json!({"ttl": ""}))).and_then(|i| i.ttl());
        assert_eq!(blank, Ok(None));
        let null = Input::from_request(&request(json!({"ttl": null}))).and_then(|i| i.ttl());
        assert_eq!(null, Ok(None));
    }

    #[test]
    fn strict_decoding() {
        for bad in [
            json!({"ttl": "1m", "tll": "1m"}),
            json!({"TTL": "1m"}),
            json!({"ttl": 60}),
            json!({"celHealthCheckCustomization": {"x": true}}),
            json!({"celHealthCheckCustomizationFrom": ["a"]}),
            json!({"kind": 1}),
        ] {
            let err = Input::from_request(&request(bad.clone()))
                .err()
                .unwrap_or_default();
            assert!(
                err.starts_with("cannot get Function input from *v1.RunFunctionRequest: "),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn ttl_errors_and_clamping() {
        let ttl = |text: &str| {
            Input {
                ttl: Some(text.to_owned()),
                ..Input::default()
            }
            .ttl()
        };
        assert_eq!(
            ttl("x"),
            Err(r#"cannot set ttl: time: invalid duration "x""#.to_owned())
        );
        assert_eq!(
            ttl("10"),
            Err(r#"cannot set ttl: time: missing unit in duration "10""#.to_owned())
        );
        assert_eq!(ttl("1h30m"), Ok(Some(Duration::from_secs(5400))));
        assert_eq!(ttl("1.5s"), Ok(Some(Duration::from_millis(1500))));
        assert_eq!(ttl("0"), Ok(Some(Duration::ZERO)));
        assert_eq!(ttl("-5m"), Ok(Some(Duration::ZERO)));
    }
}
