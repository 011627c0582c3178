//! # xfn-sdk: Crossplane composition functions in Rust, for xfn
//!
//! A function is a type that implements [`Function`], exported with
//! [`export!`] and compiled to a `wasm32-wasip2` component:
//!
//! ```no_run
//! use xfn_sdk::{Function, Request, Response};
//!
//! struct Hello;
//!
//! impl Function for Hello {
//!     fn run(req: &Request) -> Result<Response, xfn_sdk::Error> {
//!         let mut rsp = Response::to(req);
//!         rsp.normal("hello from a wasm function");
//!         Ok(rsp)
//!     }
//! }
//!
//! xfn_sdk::export!(Hello);
//! ```
//!
//! The SDK mirrors function-sdk-go: [`Response::to`] passes the desired
//! state and context through, results and conditions are one call each,
//! and [`Request`] has getters for everything a function is sent.
//! [`fieldpath`] reads and writes Kubernetes objects by field path;
//! [`Response::merge_desired_composite_status`] adds to the XR's status
//! without replacing what earlier steps wrote ([`merge`]); with the
//! `schema` feature, [`crd`] writes a typed input's CRD.

pub mod arena;
#[doc(hidden)]
pub mod bindings;
#[cfg(feature = "schema")]
pub mod crd;
mod decode;
pub mod fieldpath;
pub mod log;
pub mod merge;
mod names;
mod request;
mod resource;
mod response;
mod serde_helpers;
#[cfg(not(target_arch = "wasm32"))]
pub mod testing;
mod types;
pub mod wit;

pub use names::child_name;
pub use request::{CONTEXT_KEY_ENVIRONMENT, InputType, TypeMeta, WATCHED_RESOURCE};
pub use resource::ResourceCondition;
pub use response::DEFAULT_TTL;
pub(crate) use serde_helpers::{serde_bytes, serde_duration};
pub use types::*;

/// Every call runs in a fresh instance, so wasm builds allocate from a
/// bump arena (see [`arena`]); turn off the `call-arena` feature to use
/// your own global allocator.
#[cfg(all(target_arch = "wasm32", feature = "call-arena"))]
#[global_allocator]
static ALLOCATOR: arena::CallArena<arena::SystemChunks> =
    arena::CallArena::new(arena::SystemChunks);

/// The error a function returns when it cannot run at all. It reaches the
/// caller as an error of the call, not as a result.
///
/// ```
/// fn check(region: &str) -> Result<(), xfn_sdk::Error> {
///     if region.is_empty() { return Err("region is empty".into()); }
///     Ok(())
/// }
/// assert_eq!(check("").unwrap_err().to_string(), "region is empty");
/// ```
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// A composition function.
///
/// ```
/// use xfn_sdk::{Function, Request, Response};
/// struct Noop;
/// impl Function for Noop {
///     fn run(req: &Request) -> Result<Response, xfn_sdk::Error> {
///         Ok(Response::to(req))
///     }
/// }
/// assert!(Noop::run(&Request::default()).unwrap().results.is_empty());
/// ```
pub trait Function {
    /// Runs the function on one request.
    ///
    /// Report problems the user can fix as results ([`Response::fatal`],
    /// [`Response::warning`]); return `Err` only when the function itself
    /// cannot run.
    fn run(request: &Request) -> Result<Response, Error>;
}

/// Exports a [`Function`] as the component's `run-function`.
///
/// The export exists only in wasm builds: natively (in tests and
/// benchmarks) the crate is a plain library, so several functions can be
/// linked into one program.
///
/// ```
/// struct Noop;
/// impl xfn_sdk::Function for Noop {
///     fn run(req: &xfn_sdk::Request) -> Result<xfn_sdk::Response, xfn_sdk::Error> {
///         Ok(xfn_sdk::Response::to(req))
///     }
/// }
/// xfn_sdk::export!(Noop);
/// ```
#[macro_export]
macro_rules! export {
    ($function:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            struct XfnExport;

            impl $crate::__private::bindings::Guest for XfnExport {
                fn run_function(
                    request: $crate::__private::bindings::xfn::function::types::RunFunctionRequest,
                ) -> ::core::result::Result<
                    $crate::__private::bindings::xfn::function::types::RunFunctionResponse,
                    ::std::string::String,
                > {
                    $crate::wit::run::<$function>(request)
                }
            }

            $crate::__private::bindings::export_function!(XfnExport with_types_in $crate::__private::bindings);
        };
    };
}

/// The README's Rust examples, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

#[doc(hidden)]
pub mod __private {
    pub use crate::bindings;
}
