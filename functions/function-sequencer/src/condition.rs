//! A rule's CEL `condition`, over the request's `observed`, `desired` and
//! `context` (Go's `evaluateCondition`), with [`xfn_cel`].

use xfn_cel::CelError;
use xfn_sdk::Request;

/// Evaluates `condition`; the error says why it could not be, wrapped as
/// the Go function wraps cel-go's errors (the inner messages are
/// cel-rust's).
pub fn evaluate(req: &Request, condition: &str) -> Result<bool, String> {
    let ctx = xfn_cel::request_context(req);
    xfn_cel::evaluate_bool(&ctx, condition).map_err(|e| match e {
        CelError::Parse(e) => format!("cannot parse CEL condition: {e}"),
        CelError::Eval(e) => format!("cannot evaluate CEL condition: {e}"),
        CelError::NotBool(_) => "CEL condition result is not bool".to_owned(),
    })
}
