//! gRPC both ways: `xfn serve` and its lifecycle, the client of conventional functions, deep messages, and real peers (the Python SDK, a grpc-go server).
//!
//! One test binary of the area, a module per file (see `tests/README.md`).

#[path = "../grpc_support/mod.rs"]
mod grpc_support;

mod go_peer;
mod grpc_client;
mod grpc_deep;
mod grpc_serve;
mod native_serve;
mod serve_lifecycle;
