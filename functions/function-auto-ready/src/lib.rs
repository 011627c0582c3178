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
        Ok(run(req))
    }
}

xfn_sdk::export!(AutoReady);

/// Runs the function on one request.
///
/// Problems with the input (an unknown field, an invalid `ttl`) are fatal
/// results; the desired state is then passed through as it came.
pub fn run(req: &Request) -> Response {
    let mut rsp = Response::to(req);

    let input = match Input::from_request(req) {
        Ok(input) => input,
        Err(message) => {
            rsp.fatal(message);
            return rsp;
        }
    };
    match input.ttl() {
        Ok(Some(ttl)) => {
            rsp.set_ttl(ttl);
        }
        Ok(None) => {}
        Err(message) => {
            rsp.fatal(message);
            return rsp;
        }
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
    rsp
}

/// Whether an observed composed resource is ready: its kind's health check
/// passes, or (whatever the health check said) its `Ready` condition is
/// `"True"`.
pub fn is_ready(observed: &Object) -> bool {
    health::check(observed) == Some(true) || condition::ready_condition_true(observed)
}

#[cfg(test)]
mod tests;
