//! Container functions without Docker: a real Go function from an OCI
//! image of several layers, in xfn's sandbox, alone and in render.
//!
//! One test binary of the area, a module per file (see `tests/README.md`).
//! Linux only, as the container runtime is.
#![cfg(target_os = "linux")]

#[path = "../oci_support/mod.rs"]
mod oci_support;

#[path = "../grpc_support/mod.rs"]
mod grpc_support;

mod render;
mod runnable_package;
mod sandbox;
mod support;
