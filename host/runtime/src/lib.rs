//! # xfn-runtime: composition functions as sandboxed wasm components
//!
//! The layer every other xfn crate stands on, with nothing of gRPC,
//! Kubernetes or OCI registries in it:
//!
//! * [`HostEngine`] is wasmtime set up for xfn: the pooling allocator, the
//!   call slots that bound concurrent instances, and the epoch ticker that
//!   enforces deadlines ([`HostConfig`] holds its knobs).
//! * [`WasmRuntime`] compiles a function's component once (through the
//!   on-disk [`CompileCache`]); [`WasmFunction`] runs each call in a fresh
//!   sandbox with a deadline and a memory cap: no files, no network, no
//!   environment.
//! * [`Function`] is what a pipeline step calls, in-process or remote;
//!   [`pipeline`] runs a Composition's steps over any of them with
//!   Crossplane's semantics.
//! * [`protocol`] holds the request and response types of xfn's WIT world;
//!   [`metrics`] is the process's Prometheus registry; [`guest_log`] turns a
//!   function's output into log events; [`local_module`] reads a component
//!   file a user named; [`text`] bounds and escapes text from guests.
//!
//! A call goes: [`Function::call`] → [`WasmFunction`] takes a call slot from
//! the [`HostEngine`] → a fresh instance in the sandbox → the guest's
//! `run-function` export, interrupted by the epoch ticker at its deadline.

mod capture;
mod code_memory;
mod compile_cache;
mod config;
mod engine;
mod error;
mod function;
pub mod guest_log;
pub mod local_module;
pub mod metrics;
pub mod pipeline;
pub mod precompiled;
pub mod priority;
pub mod protocol;
mod response_check;
mod sandbox;
pub mod text;
mod tiering;
mod wasm;

pub use compile_cache::CompileCache;
pub use config::{
    DEFAULT_CALL_TIMEOUT, DEFAULT_DECOMMIT_BATCH, DEFAULT_KEEP_RESIDENT_KIB,
    DEFAULT_MAX_CONCURRENT_CALLS, DEFAULT_MEMORY_LIMIT_MIB, DEFAULT_RESIDENT_BUDGET_MIB,
    HostConfig, Tiering,
};
pub use engine::HostEngine;
pub use error::{CallError, Error};
pub use function::Function;
pub use tiering::Tier;
pub use wasm::{WasmFunction, WasmRuntime};
