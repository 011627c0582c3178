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
    // Names are only formatted for an error: this runs on every call.
    if let Some(xr) = &state.composite {
        check_resource(xr).map_err(|p| p.describe(&format!("{what} composite resource")))?;
    }
    for (name, resource) in &state.resources {
        check_resource(resource).map_err(|p| p.describe(&format!("{what} resource {name:?}")))?;
    }
    Ok(())
}

fn check_resource(resource: &ResourceObject) -> Result<(), Problem> {
    resource.resource.as_deref().map_or(Ok(()), scan_object)
}

fn check_opt(json: Option<&str>, what: &str) -> Result<(), String> {
    json.map_or(Ok(()), |text| check_object(text, what))
}

/// Checks that `text` is one JSON object, without building it.
pub fn check_object(text: &str, what: &str) -> Result<(), String> {
    scan_object(text).map_err(|p| p.describe(what))
}

/// What is wrong with text that should be a JSON object.
enum Problem {
    NotAnObject,
    Invalid(serde_json::Error),
}

impl Problem {
    fn describe(self, what: &str) -> String {
        match self {
            Problem::NotAnObject => format!("{what} is not a JSON object"),
            Problem::Invalid(e) => format!("{what} is not valid JSON: {e}"),
        }
    }
}

fn scan_object(text: &str) -> Result<(), Problem> {
    if !text.trim_start().starts_with('{') {
        return Err(Problem::NotAnObject);
    }
    serde_json::from_str::<IgnoredAny>(text)
        .map(|_| ())
        .map_err(Problem::Invalid)
}
