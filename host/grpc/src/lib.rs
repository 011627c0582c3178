//! # xfn-grpc: Crossplane's gRPC function protocol, both ways
//!
//! * [`server`]: `xfn serve` — wasm functions as `FunctionRunnerService`
//!   (v1 and v1beta1), routed by the authority Crossplane dials, with mTLS,
//!   health and reflection.
//! * [`serve`]: `xfn serve` as a library type: a server of a set of
//!   functions that reloads on request or when its files change.
//! * [`client`]: a conventional gRPC function as a pipeline
//!   [`Function`](xfn_runtime::Function), with Crossplane's v1 → v1beta1 fallback.
//! * [`convert`]: the host's WIT types ⇄ `xfn_proto::json::v1` messages.
//! * [`tls`]: the mTLS files Crossplane mounts, and a CA to make them.
//! * [`sni`]: mTLS with a certificate per function, chosen by SNI, that
//!   can change while serving (`xfn controller`).
//! * [`call_threads`]: where served calls run, and how a call that
//!   computes long makes way for the others.

/// Implements tonic's `Connected` for a connection wrapper `$wrapper<IO>`
/// (with a field `inner: IO`): it tells what its inner connection tells.
macro_rules! connected_as_inner {
    ($wrapper:ident) => {
        impl<IO: tonic::transport::server::Connected> tonic::transport::server::Connected
            for $wrapper<IO>
        {
            type ConnectInfo = IO::ConnectInfo;

            fn connect_info(&self) -> Self::ConnectInfo {
                self.inner.connect_info()
            }
        }
    };
}
use connected_as_inner;

mod batched_writes;
pub mod call_threads;
pub mod client;
pub mod convert;
mod deadline;
mod health;
mod open_calls;
mod open_streams;
mod preface;
mod router;
pub mod serve;
pub mod server;
pub mod sni;
pub mod status;
pub mod tls;

pub use call_threads::CallThreads;
pub use client::{ClientOptions, ClientTls, GrpcFunction, connect};
pub use router::FunctionTable;
pub use server::{ServeError, Server, ServerConfig, ServerHandle};
