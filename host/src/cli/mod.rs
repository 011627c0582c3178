//! The `xfn` command line: one module per subcommand.

pub mod allocator;
pub mod controller;
pub mod oci;
pub mod render;
pub mod serve;
pub mod validate;

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::Path;
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

/// The wasm runtime of a server: calls limited to `timeout` and
/// `memory_limit_mib`, compiled functions cached in `cache_dir` (else the
/// user's cache directory).
pub fn server_runtime(
    timeout: Duration,
    memory_limit_mib: usize,
    cache_dir: Option<&Path>,
) -> anyhow::Result<WasmRuntime> {
    let engine = HostEngine::new(HostConfig {
        call_timeout: timeout,
        memory_limit: memory_limit_mib.saturating_mul(1 << 20),
        ..HostConfig::default()
    })?;
    let cache = cache_dir
        .map(Path::to_path_buf)
        .or_else(CompileCache::default_dir)
        .map(CompileCache::new);
    Ok(WasmRuntime::new(engine, cache)?)
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
