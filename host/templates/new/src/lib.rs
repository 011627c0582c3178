//! `{{name}}`: a Crossplane composition function, built as a wasm
//! component for xfn.
//!
//! It composes one ConfigMap per composite resource (XR), holding the
//! message its input gives, and reports what it did in a result.

use serde::Deserialize;
use serde_json::json;
use xfn_sdk::{Function, Request, Resource, Response};

/// The `apiVersion` of this function's input.
pub const INPUT_API_VERSION: &str = "{{name}}.fn.example.org/v1alpha1";
/// The `kind` of this function's input.
pub const INPUT_KIND: &str = "Input";

/// The function's input, the `input` of its pipeline step.
///
/// `apiVersion` and `kind` are declared, so that `deny_unknown_fields`
/// accepts them and the function can check them; any other unknown field
/// (a typo) is an error that names the field.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Must be [`INPUT_API_VERSION`].
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    /// Must be [`INPUT_KIND`].
    pub kind: String,
    /// What to write in the ConfigMap.
    pub message: String,
}

impl Input {
    /// Reads the step's input and checks its apiVersion and kind.
    pub fn from_request(req: &Request) -> Result<Input, String> {
        let input: Input = req.input().map_err(|e| format!("invalid input: {e}"))?;
        if input.api_version != INPUT_API_VERSION || input.kind != INPUT_KIND {
            return Err(format!(
                "invalid input: expected apiVersion {INPUT_API_VERSION:?} and kind {INPUT_KIND:?}, got {:?} and {:?}",
                input.api_version, input.kind
            ));
        }
        Ok(input)
    }
}

/// The function.
pub struct Func;

impl Function for Func {
    fn run(req: &Request) -> Result<Response, xfn_sdk::Error> {
        // Pass the desired state and context on to the next step.
        let mut rsp = Response::to(req);
        let input = match Input::from_request(req) {
            Ok(input) => input,
            Err(message) => {
                rsp.fatal(message);
                return Ok(rsp);
            }
        };
        let xr = req
            .observed_composite()
            .and_then(|xr| xr.resource.as_ref())
            .and_then(|o| o.get("metadata")?.get("name")?.as_str())
            .unwrap_or("unnamed");
        let config_map = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": format!("{xr}-message")},
            "data": {"message": input.message},
        });
        if let serde_json::Value::Object(object) = config_map {
            rsp.set_desired_composed("message", Resource::from_object(object));
        }
        rsp.normal(format!("composed ConfigMap {xr}-message"))
            .reason("Composed");
        Ok(rsp)
    }
}

xfn_sdk::export!(Func);

#[cfg(test)]
mod tests {
    use super::*;
    use xfn_sdk::{Severity, State};

    fn request(input: serde_json::Value) -> Request {
        let xr = json!({"apiVersion": "example.org/v1", "kind": "XMessage", "metadata": {"name": "demo"}});
        Request {
            observed: Some(State {
                composite: xr.as_object().cloned().map(Resource::from_object),
                ..State::default()
            }),
            input: input.as_object().cloned(),
            ..Request::default()
        }
    }

    #[test]
    fn composes_a_config_map_with_the_message() {
        let rsp = Func::run(&request(json!({
            "apiVersion": INPUT_API_VERSION,
            "kind": INPUT_KIND,
            "message": "hi",
        })))
        .expect("runs");
        assert_eq!(rsp.results[0].severity, Severity::Normal);
        let composed = rsp.desired.expect("desired state").resources;
        let object = composed["message"].resource.as_ref().expect("an object");
        assert_eq!(object["metadata"]["name"], "demo-message");
        assert_eq!(object["data"]["message"], "hi");
    }

    #[test]
    fn a_typo_in_the_input_is_fatal_and_named() {
        let rsp = Func::run(&request(json!({
            "apiVersion": INPUT_API_VERSION,
            "kind": INPUT_KIND,
            "mesage": "hi",
        })))
        .expect("runs");
        assert_eq!(rsp.results[0].severity, Severity::Fatal);
        assert!(
            rsp.results[0].message.contains("mesage"),
            "{}",
            rsp.results[0].message
        );
    }
}
