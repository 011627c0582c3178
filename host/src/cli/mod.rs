//! The `xfn` command line: one module per subcommand.

pub mod allocator;
pub mod controller;
pub mod oci;
pub mod render;
pub mod serve;
pub mod validate;

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use anyhow::Context as _;
use xfn_host::{CompileCache, HostConfig, HostEngine, WasmRuntime};

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

/// The limits and cache of a server's calls: the flags `xfn serve` and
/// `xfn controller` share.
#[derive(Debug, clap::Args)]
pub struct ServerLimits {
    /// Largest request accepted, in MiB.
    #[arg(long, default_value_t = 4, value_name = "MIB")]
    pub max_recv_message_size: usize,
    /// Longest a call may run when the client sets no shorter gRPC deadline.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub timeout: Duration,
    /// Most memory one function call may use, in MiB (at least 1).
    #[arg(long, default_value_t = 256, value_name = "MIB",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub memory_limit: usize,
    /// Where packages and compiled functions are cached (default: $XFN_CACHE_DIR, else the user's cache directory).
    #[arg(long, env = "XFN_CACHE_DIR", value_name = "DIR")]
    pub cache_dir: Option<std::path::PathBuf>,
}

impl ServerLimits {
    /// The largest request, in bytes.
    pub fn max_recv_message_bytes(&self) -> usize {
        self.max_recv_message_size.saturating_mul(1 << 20)
    }

    /// How long shutdown waits for calls in flight: a call's limit and a
    /// little more.
    pub fn shutdown_grace(&self) -> Duration {
        self.timeout + Duration::from_secs(5)
    }

    /// The wasm runtime: calls limited as the flags say, compiled functions
    /// cached in the cache directory.
    pub fn runtime(&self) -> anyhow::Result<WasmRuntime> {
        let engine = HostEngine::new(HostConfig {
            call_timeout: self.timeout,
            memory_limit: self.memory_limit.saturating_mul(1 << 20),
            ..HostConfig::default()
        })?;
        let cache = self
            .cache_dir
            .clone()
            .or_else(CompileCache::default_dir)
            .map(CompileCache::new);
        Ok(WasmRuntime::new(engine, cache)?)
    }
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
}
