//! `hello`: the smallest useful composition function.
//!
//! It passes the desired state through and greets the composite resource by
//! name in a normal result. Its input may set `greeting` (default `Hello`).
//! It also records the greeting in the XR's `status.greeting`, so that
//! `xfn render` shows the function's effect.

use serde::Deserialize;
use xfn_sdk::{Function, Request, Response};

/// The function's input (`hello.fn.xfn.dev/v1alpha1`, kind `Input`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    #[serde(rename = "apiVersion", default)]
    _api_version: Option<String>,
    #[serde(rename = "kind", default)]
    _kind: Option<String>,
    /// The greeting to use.
    #[serde(default)]
    pub greeting: Option<String>,
}

/// The hello function.
pub struct Hello;

impl Function for Hello {
    fn run(req: &Request) -> Result<Response, xfn_sdk::Error> {
        let mut rsp = Response::to(req);
        let input: Input = match req.input() {
            Ok(input) => input,
            Err(e) => {
                rsp.fatal(e.to_string());
                return Ok(rsp);
            }
        };
        let greeting = input.greeting.as_deref().unwrap_or("Hello");
        let name = req
            .observed_composite()
            .and_then(|xr| xr.resource.as_ref())
            .and_then(|o| o.get("metadata")?.get("name")?.as_str())
            .unwrap_or("world");
        let message = format!("{greeting}, {name}!");

        let mut xr = req.desired_composite().cloned().unwrap_or_default();
        xr.set_value("status.greeting", message.clone().into())?;
        rsp.set_desired_composite(xr);
        rsp.normal(message).reason("Greeted");
        xfn_sdk::info!("greeted {name}");
        Ok(rsp)
    }
}

xfn_sdk::export!(Hello);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use xfn_sdk::{Resource, Severity, State};

    fn request(input: serde_json::Value) -> Request {
        let xr =
            json!({"apiVersion": "example.org/v1", "kind": "XThing", "metadata": {"name": "demo"}});
        Request {
            observed: Some(State {
                composite: Some(Resource::from_object(
                    xr.as_object().cloned().unwrap_or_default(),
                )),
                ..State::default()
            }),
            input: input.as_object().cloned(),
            ..Request::default()
        }
    }

    #[test]
    fn greets_the_composite_by_name() {
        let rsp = Hello::run(&request(json!({"greeting": "Hi"}))).expect("runs");
        assert_eq!(rsp.results.len(), 1);
        assert_eq!(rsp.results[0].severity, Severity::Normal);
        assert_eq!(rsp.results[0].message, "Hi, demo!");
        let xr = rsp
            .desired
            .and_then(|d| d.composite)
            .and_then(|c| c.resource);
        assert_eq!(
            xr,
            json!({"status": {"greeting": "Hi, demo!"}})
                .as_object()
                .cloned()
        );
    }

    #[test]
    fn rejects_unknown_input_fields_with_a_fatal_result() {
        let rsp = Hello::run(&request(json!({"greting": "typo"}))).expect("runs");
        assert_eq!(rsp.results[0].severity, Severity::Fatal);
        assert!(
            rsp.results[0].message.contains("unknown field `greting`"),
            "{}",
            rsp.results[0].message
        );
    }
}
