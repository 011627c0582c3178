//! function-cel-filter, ported to Rust for xfn.
//!
//! A port of crossplane-contrib/function-cel-filter v0.2.0: each filter
//! names desired composed resources by a regular expression (anchored) and
//! keeps them only if its CEL expression over the request's `observed`,
//! `desired` and `context` is true. CEL is cel-rust through [`xfn_cel`];
//! differences from cel-go are listed in the README.

use serde::Deserialize;
use xfn_cel::CelError;
use xfn_gocompat::goregex::GoRegex;
use xfn_sdk::{Request, Response};
use xfn_select::goquote::quote;
use xfn_select::input::ObjectMeta;

/// The input, `filters.cel.crossplane.io/v1beta1` `Filters`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
pub struct Filters {
    #[serde(default)]
    api_version: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    metadata: Option<ObjectMeta>,
    /// The filters, in order.
    #[serde(default)]
    pub filters: Option<Vec<Filter>>,
}

/// One filter.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Filter {
    /// A regular expression of desired composed resource names (anchored).
    #[serde(default)]
    pub name: Option<String>,
    /// A CEL expression; false removes the resources the name matches.
    #[serde(default)]
    pub expression: Option<String>,
}

/// The function, for [`xfn_sdk::export!`].
pub struct CelFilter;

impl xfn_sdk::Function for CelFilter {
    fn run(request: &Request) -> Result<Response, xfn_sdk::Error> {
        Ok(run(request))
    }
}

xfn_sdk::export!(CelFilter);

/// Go's `Evaluate`: the expression must be of type `bool` exactly (as far
/// as [`xfn_cel::static_type`] can tell) and is then evaluated.
fn evaluate(ctx: &cel::Context<'_, '_>, expression: &str) -> Result<bool, String> {
    match xfn_cel::static_type(expression) {
        Err(CelError::Parse(e)) => return Err(format!("cannot parse expression: {e}")),
        Ok(Some("bool")) | Ok(None) | Err(_) => {}
        Ok(Some(other)) => {
            return Err(format!(
                "expression {} must return a boolean, but will return {other} instead",
                quote(expression)
            ));
        }
    }
    match xfn_cel::evaluate_bool(ctx, expression) {
        Ok(b) => Ok(b),
        Err(CelError::Parse(e)) => Err(format!("cannot parse expression: {e}")),
        Err(CelError::Eval(e)) => Err(format!("cannot evaluate CEL program: {e}")),
        // Go wraps a nil error here, which is nil: the resource is filtered.
        Err(CelError::NotBool(_)) => Ok(false),
    }
}

/// Runs the function on one request (Go's `RunFunction`).
pub fn run(req: &Request) -> Response {
    let mut rsp = Response::to(req);
    let input: Filters = match xfn_select::input::decode(req, "*v1beta1.Filters") {
        Ok(input) => input,
        Err(e) => {
            rsp.fatal(format!(
                "cannot get filters from *v1.RunFunctionRequest: {e}"
            ));
            return rsp;
        }
    };
    let filters = input.filters.unwrap_or_default();
    let ctx = xfn_cel::request_context(req);
    let mut compiled = Vec::with_capacity(filters.len());
    for (i, f) in filters.iter().enumerate() {
        let expr = format!("^{}$", f.name.as_deref().unwrap_or(""));
        let re = match GoRegex::compile(&expr) {
            Ok(re) => re,
            Err(e) => {
                rsp.fatal(format!(
                    "cannot compile regular expression {} for filter {i}: {e}",
                    quote(&expr)
                ));
                return rsp;
            }
        };
        let expression = f.expression.as_deref().unwrap_or("");
        match evaluate(&ctx, expression) {
            Ok(include) => compiled.push((re, include)),
            Err(e) => {
                rsp.fatal(format!(
                    "cannot evaluate CEL expression {} for filter {i}: {e}",
                    quote(expression)
                ));
                return rsp;
            }
        }
    }
    if let Some(desired) = rsp.desired.as_mut() {
        desired.resources.retain(|name, _| {
            compiled
                .iter()
                .all(|(re, include)| *include || !re.is_match(name))
        });
    }
    rsp
}
