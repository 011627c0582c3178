//! # xfn-component: is this wasm component one xfn will run?
//!
//! The checks every layer of xfn makes on a component before it is
//! compiled, with nothing but `wasmparser`: the engine uses them before
//! compiling, `xfn-oci` before pushing and after pulling, `xfn inspect` to
//! explain.
//!
//! * [`ComponentInfo::read`] lists what a component imports and exports
//!   and counts what compiling and instantiating it would cost: linear
//!   memories and tables per instantiation ([`MAX_MEMORIES`],
//!   [`MAX_TABLES`]), functions ([`MAX_FUNCTIONS`]) and code bytes
//!   ([`MAX_CODE_BYTES`]).
//! * [`ComponentInfo::not_runnable`] says why the host would refuse it:
//!   an import outside [`ALLOWED_IMPORTS`], or more than the sandbox gives.
//! * [`localfile`] reads a file a user named with a size cap, never
//!   blocking on a FIFO or device.

#![forbid(unsafe_code)]

mod component;
pub mod localfile;
mod memories;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use component::{
    ALLOWED_IMPORTS, ComponentInfo, FUNCTION_WORLD, Item, ItemKind, MAX_CODE_BYTES,
    MAX_COMPONENT_BYTES, MAX_FUNCTIONS, NotRunnable, RUN_FUNCTION_EXPORT, is_allowed_import,
};
pub use memories::{MAX_MEMORIES, MAX_TABLES};
