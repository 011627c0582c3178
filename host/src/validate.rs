//! Checks that a function's response keeps the protocol: every free-form
//! field must hold a JSON object.

use serde::de::IgnoredAny;

use crate::protocol::{ResourceObject, RunFunctionResponse, State};

/// Returns why `response` is malformed, if it is.
pub fn check_response(response: &RunFunctionResponse) -> Result<(), String> {
    if let Some(desired) = &response.desired {
        check_state(desired, "desired")?;
    }
    check_opt(response.context.as_deref(), "context")?;
    check_opt(response.output.as_deref(), "output")
}

fn check_state(state: &State, what: &str) -> Result<(), String> {
    if let Some(xr) = &state.composite {
        check_resource(xr, &format!("{what} composite resource"))?;
    }
    for (name, resource) in &state.resources {
        check_resource(resource, &format!("{what} resource {name:?}"))?;
    }
    Ok(())
}

fn check_resource(resource: &ResourceObject, what: &str) -> Result<(), String> {
    check_opt(resource.resource.as_deref(), what)
}

fn check_opt(json: Option<&str>, what: &str) -> Result<(), String> {
    json.map_or(Ok(()), |text| check_object(text, what))
}

/// Checks that `text` is one JSON object, without building it.
pub fn check_object(text: &str, what: &str) -> Result<(), String> {
    if !text.trim_start().starts_with('{') {
        return Err(format!("{what} is not a JSON object"));
    }
    serde_json::from_str::<IgnoredAny>(text)
        .map(|_| ())
        .map_err(|e| format!("{what} is not valid JSON: {e}"))
}
