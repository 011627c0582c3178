//! # xfn-host: Crossplane composition functions as sandboxed wasm components
//!
//! The host compiles each function's component once ([`WasmRuntime`]), then
//! runs every call in a fresh, sandboxed instance ([`WasmFunction`]) with a
//! deadline and a memory cap. The [`pipeline`] runs a Composition's steps
//! with Crossplane's semantics over any [`Function`], in-process or remote.

pub mod builtin;
mod capture;
pub mod cluster;
pub mod compile_cache;
mod config;
mod engine;
mod error;
mod function;
pub mod grpc;
pub mod guest_log;
pub mod local_module;
pub mod metrics;
pub mod packages;
pub mod pipeline;
pub mod probes;
pub mod protocol;
pub mod render;
mod sandbox;
pub mod text;
mod validate;
mod wasm;

pub use compile_cache::CompileCache;
pub use config::{
    DEFAULT_DECOMMIT_BATCH, DEFAULT_KEEP_RESIDENT_KIB, DEFAULT_RESIDENT_BUDGET_MIB, HostConfig,
};
pub use engine::HostEngine;
pub use error::{CallError, Error};
pub use function::Function;
pub use wasm::{WasmFunction, WasmRuntime};
