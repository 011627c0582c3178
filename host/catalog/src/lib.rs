//! # xfn-catalog: from a `Function` object to a component
//!
//! Everything that decides where a function's wasm component comes from,
//! shared by `xfn render`, `xfn serve` and `xfn controller`:
//!
//! * [`annotations`]: the annotations on a Function that say how to run it.
//! * [`FunctionSource`]: the one rule that reads them (a local module, a
//!   package and its pull policy, a Development target, Docker).
//! * [`Catalog`]: a package's component, from its registry or the cache
//!   per the pull policy, else from the functions that ship with xfn
//!   ([`Builtins`], a table the binary hands in).
//! * [`functions_file`]: the functions `xfn serve` serves, read from a
//!   file of Function objects, and the [`Loader`](functions_file::Loader)
//!   that compiles them.

#![forbid(unsafe_code)]

pub mod annotations;
mod builtins;
pub mod functions_file;
mod packages;
mod source;

pub use builtins::{Builtin, Builtins};
pub use packages::{Catalog, ComponentOrigin, PackageComponent, PackageRun};
pub use source::{DevelopmentTarget, FunctionSource, pull_policy};
