//! function-patch-and-transform, ported to Rust for xfn.
//!
//! A faithful port of crossplane-contrib/function-patch-and-transform: the
//! same input (`pt.fn.crossplane.io/v1beta1` `Resources`), the same desired
//! state, results and messages as the Go function, down to Go's number
//! typing and formatting. Deliberate differences are listed in the README.
//!
//! [`run`] is the whole function as a plain Rust call; [`PatchAndTransform`]
//! exports it as a WebAssembly component.

pub mod connection;
#[path = "fn.rs"]
pub mod function;
pub mod goconv;
pub mod input;
pub mod patches;
pub mod quantity;
pub mod ready;
pub mod transforms;
pub mod validate;

/// Go's formatting, JSON and values, shared with function-go-templating.
pub use xfn_gocompat::{gofmt, gojson, goregex, value};

pub use function::{ENVIRONMENT_KEY, run};

/// The function, for [`xfn_sdk::export!`].
pub struct PatchAndTransform;

impl xfn_sdk::Function for PatchAndTransform {
    fn run(request: &xfn_sdk::Request) -> Result<xfn_sdk::Response, xfn_sdk::Error> {
        Ok(run(request))
    }
}

xfn_sdk::export!(PatchAndTransform);
