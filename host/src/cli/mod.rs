//! The `xfn` command line: one module per subcommand.

pub mod allocator;
pub mod controller;
pub mod entrypoint;
pub mod flags;
pub mod logging;
pub mod new;
pub mod oci;
pub mod operation;
pub mod precompile;
pub mod render;
pub mod serve;
pub mod validate;

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::OnceLock;

use anyhow::Context as _;
use tokio::runtime::Runtime;
use xfn_grpc::CallThreads;

/// Parses the value of address flag `flag`: `HOST:PORT`, or `:PORT` for
/// every interface.
pub fn parse_address(flag: &str, address: &str) -> anyhow::Result<SocketAddr> {
    let full = match address.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => address.to_owned(),
    };
    full.to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.next())
        .with_context(|| format!("{flag} {address:?} is not HOST:PORT"))
}

/// `error` and its causes on one line, each said once
/// ([`xfn_runtime::text::error_chain`]).
pub fn error_text(error: &anyhow::Error) -> String {
    xfn_runtime::text::error_chain(error.as_ref())
}

/// The threads that run a server's calls, apart from those serving its
/// connections: `workers` threads (default: one per CPU) named `xfn-call`,
/// and as many of lower priority, named `xfn-long-call`, for calls that
/// compute long. They live as long as the process.
pub fn call_threads(workers: Option<u16>) -> anyhow::Result<CallThreads> {
    static CALLS: OnceLock<Result<(Runtime, Runtime), String>> = OnceLock::new();
    let built = CALLS.get_or_init(|| {
        let calls = call_runtime("xfn-call", workers, None)?;
        let long_calls = call_runtime(
            "xfn-long-call",
            workers,
            Some(xfn_grpc::call_threads::lower_thread_priority),
        )?;
        Ok((calls, long_calls))
    });
    match built {
        Ok((calls, long_calls)) => Ok(CallThreads {
            long_calls: Some(long_calls.handle().clone()),
            ..CallThreads::new(calls.handle().clone())
        }),
        Err(e) => anyhow::bail!("cannot start the threads that run calls: {e}"),
    }
}

/// A runtime of `workers` threads named `name`, each started with `start`.
fn call_runtime(name: &str, workers: Option<u16>, start: Option<fn()>) -> Result<Runtime, String> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.thread_name(name).enable_all();
    if let Some(n) = workers {
        builder.worker_threads(usize::from(n));
    }
    if let Some(start) = start {
        builder.on_thread_start(start);
    }
    builder.build().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_addresses() {
        assert_eq!(
            parse_address("--address", ":9443").ok(),
            Some(SocketAddr::from(([0, 0, 0, 0], 9443)))
        );
        assert_eq!(
            parse_address("--address", "127.0.0.1:1").ok(),
            Some(SocketAddr::from(([127, 0, 0, 1], 1)))
        );
        let err = parse_address("--probe-address", "nonsense").unwrap_err();
        assert_eq!(
            err.to_string(),
            "--probe-address \"nonsense\" is not HOST:PORT"
        );
    }

    #[test]
    fn an_error_says_each_cause_once() {
        #[derive(Debug, thiserror::Error)]
        #[error("cannot read f: {0}")]
        struct Repeats(#[source] std::io::Error);
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let error = anyhow::Error::new(Repeats(io)).context("cannot load certificates");
        assert_eq!(
            error_text(&error),
            "cannot load certificates: cannot read f: no such file"
        );
        let plain = anyhow::anyhow!("root").context("outer");
        assert_eq!(error_text(&plain), "outer: root");
    }
}
