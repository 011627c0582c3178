//! A Rust port of crossplane-contrib/function-go-templating (v0.12.2) for
//! xfn: Go templates rendered into desired composed resources, with a Go
//! `text/template` engine written for it, sprig's functions and upstream's.

pub mod decimal;
pub mod fns;
pub mod function;
pub mod gotime;
pub mod goutils;
pub mod manifests;
pub mod render;
pub mod sprig;
pub mod sprig_extra;
pub mod sprig_time;
pub mod template;
pub mod xstrings;
pub mod yamlv2;
pub mod yamlv3;

pub use function::{run, run_with};

/// The function as a wasm component.
pub struct GoTemplating;

impl xfn_sdk::Function for GoTemplating {
    fn run(req: &xfn_sdk::Request) -> Result<xfn_sdk::Response, xfn_sdk::Error> {
        Ok(function::run(req))
    }
}

xfn_sdk::export!(GoTemplating);
