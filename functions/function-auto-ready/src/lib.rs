//! `function-auto-ready`: marks desired composed resources ready when their
//! observed counterparts are ready.
//!
//! A port of crossplane-contrib/function-auto-ready (v0.7). For every
//! desired composed resource that an earlier step left at
//! `READY_UNSPECIFIED` and that exists in the observed state, it sets
//! `READY_TRUE` if the observed object passes the built-in health check for
//! its kind ([`health`]) or has a `Ready` condition with status `"True"`
//! ([`condition`]). It never sets `READY_FALSE`, never overrides readiness
//! an earlier step set, and leaves everything else in the desired state, the
//! desired composite and the context untouched.
//!
//! [`run`] is the whole function, callable natively; [`AutoReady`] exports it
//! as a wasm component.

pub mod cel_checks;
pub mod condition;
pub mod convert;
pub use xfn_gocompat::duration;
pub mod health;
pub mod input;
pub mod time;
pub mod unstructured;

use xfn_sdk::{Function, Object, Ready, Request, Response};

use crate::input::Input;

/// The function, as exported to the host.
pub struct AutoReady;

impl Function for AutoReady {
    fn run(req: &Request) -> Result<Response, xfn_sdk::Error> {
        // The host passes the Go function's --feature-gates as FEATURE_GATES;
        // Go refuses a bad value at start-up, so the call fails.
        let features = cel_checks::Features::from_env().map_err(|e| {
            xfn_sdk::Error::from(format!("invalid {}: {e}", cel_checks::FEATURE_GATES_ENV))
        })?;
        run_with(req, features).map_err(xfn_sdk::Error::from)
    }
}

xfn_sdk::export!(AutoReady);

/// Runs the function on one request with every feature gate off (as
/// upstream runs by default).
///
/// Problems with the input (an unknown field, an invalid `ttl`) are fatal
/// results; the desired state is then passed through as it came.
pub fn run(req: &Request) -> Response {
    match run_with(req, cel_checks::Features::default()) {
        Ok(rsp) => rsp,
        // Only the CEL pass fails the call, and it is off.
        Err(e) => {
            let mut rsp = Response::to(req);
            rsp.fatal(e);
            rsp
        }
    }
}

/// Runs the function with the given feature gates: with
/// `CELHealthcheckCustomizations`, CEL rules decide first (see
/// [`cel_checks`]). `Err` is a failed call, where Go crashes.
pub fn run_with(req: &Request, features: cel_checks::Features) -> Result<Response, String> {
    let mut rsp = Response::to(req);

    let input = match Input::from_request(req) {
        Ok(input) => input,
        Err(message) => {
            rsp.fatal(message);
            return Ok(rsp);
        }
    };
    match input.ttl() {
        Ok(Some(ttl)) => {
            rsp.set_ttl(ttl);
        }
        Ok(None) => {}
        Err(message) => {
            rsp.fatal(message);
            return Ok(rsp);
        }
    }
    if features.cel_healthcheck_customizations {
        cel_checks::apply(req, &input, &mut rsp)?;
    }

    let observed = req.observed_composed();
    let empty = Object::new();
    for (name, desired) in &mut rsp.desired_mut().resources {
        // An earlier step has an opinion: keep it.
        if desired.ready != Ready::Unspecified {
            continue;
        }
        // Not observed: it doesn't exist yet, so it can't be ready.
        let Some(observed) = observed.get(name) else {
            continue;
        };
        if is_ready(observed.resource.as_ref().unwrap_or(&empty)) {
            desired.ready = Ready::True;
        }
    }
    Ok(rsp)
}

/// Whether an observed composed resource is ready: its kind's health check
/// passes, or (whatever the health check said) its `Ready` condition is
/// `"True"`.
pub fn is_ready(observed: &Object) -> bool {
    health::check(observed) == Some(true) || condition::ready_condition_true(observed)
}

#[cfg(test)]
mod tests;
