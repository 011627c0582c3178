//! The `xfn` command line: one module per subcommand.

pub mod allocator;
pub mod controller;
pub mod logging;
pub mod new;
pub mod oci;
pub mod operation;
pub mod render;
pub mod serve;
pub mod validate;

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::Context as _;
use tokio::runtime::Runtime;
use xfn_grpc::CallThreads;
use xfn_runtime::{CompileCache, HostConfig, HostEngine, WasmRuntime};

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

/// `error` and its causes on one line, joined by `: `, each said once: a
/// cause whose text the message before it already includes (as errors
/// that print their source do) is not repeated.
pub fn error_text(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let cause = cause.to_string();
        if text.contains(&cause) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&cause);
    }
    text
}

/// Shortest `--timeout`: the host notices a deadline within one epoch tick
/// (1 ms) plus scheduling, so a much shorter one could not be kept.
pub const MIN_TIMEOUT: Duration = Duration::from_millis(10);

/// Longest `--timeout`: a day. (Longer deadlines overflow clocks.)
pub const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

/// Parses a `--timeout` value: a duration such as `30s` or `2m`, from
/// [`MIN_TIMEOUT`] to [`MAX_TIMEOUT`].
pub fn parse_timeout(text: &str) -> Result<Duration, String> {
    let timeout = humantime::parse_duration(text).map_err(|e| format!("{text:?}: {e}"))?;
    if timeout < MIN_TIMEOUT {
        return Err(format!(
            "{text:?} is too short: calls need at least {}",
            humantime::format_duration(MIN_TIMEOUT)
        ));
    }
    if timeout > MAX_TIMEOUT {
        return Err(format!(
            "{text:?} is too long: at most {} is allowed",
            humantime::format_duration(MAX_TIMEOUT)
        ));
    }
    Ok(timeout)
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

/// The limits and cache of a server's calls: the flags `xfn serve` and
/// `xfn controller` share.
#[derive(Debug, clap::Args)]
pub struct ServerLimits {
    /// Largest request accepted, in MiB (1 to 2048).
    #[arg(long, default_value_t = 4, value_name = "MIB",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=2048))]
    pub max_recv_message_size: usize,
    /// Longest a call may run when the client sets no shorter gRPC deadline (10ms to 1day).
    #[arg(long, default_value = "30s", value_parser = parse_timeout)]
    pub timeout: Duration,
    /// Most memory one function call may use, in MiB (at least 1).
    #[arg(long, default_value_t = 256, value_name = "MIB",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub memory_limit: usize,
    /// Calls that may run at once, over all functions (each holds a sandboxed instance); more wait their turn.
    #[arg(long, default_value_t = 128, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub max_concurrent_calls: u32,
    /// Of those, how many one function may hold, so that a slow function cannot starve the others (default: half).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub max_calls_per_function: Option<u32>,
    /// Memory a call wrote that each sandbox memory slot keeps, reset in place, for the next call instead of giving it back to the kernel, in KiB (0: none).
    #[arg(long, default_value_t = xfn_runtime::DEFAULT_KEEP_RESIDENT_KIB, value_name = "KIB")]
    pub keep_resident: usize,
    /// Most memory the instance pool keeps resident between calls, in MiB, over all its slots: caps --keep-resident.
    #[arg(long, default_value_t = xfn_runtime::DEFAULT_RESIDENT_BUDGET_MIB, value_name = "MIB")]
    pub resident_budget: usize,
    /// Sandbox memories and tables of finished calls given back to the kernel together, in one system call; until then their slots wait, with what the calls wrote, a batch per CPU, cut so that no more wait than --max-concurrent-calls (1: each at once).
    #[arg(long, default_value_t = xfn_runtime::DEFAULT_DECOMMIT_BATCH, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub decommit_batch: u32,
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
            max_concurrent_calls: self.max_concurrent_calls,
            max_calls_per_function: self.max_calls_per_function,
            keep_resident: self.keep_resident.saturating_mul(1 << 10),
            resident_budget: self.resident_budget.saturating_mul(1 << 20),
            decommit_batch: self.decommit_batch,
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

    #[test]
    fn timeouts_are_bounded() {
        assert_eq!(parse_timeout("45s"), Ok(Duration::from_secs(45)));
        assert_eq!(parse_timeout("10ms"), Ok(MIN_TIMEOUT));
        assert_eq!(parse_timeout("1day"), Ok(MAX_TIMEOUT));
        for short in ["0s", "1ns", "9ms"] {
            let err = parse_timeout(short).unwrap_err();
            assert!(
                err.contains("is too short: calls need at least 10ms"),
                "{err}"
            );
        }
        for long in ["18446744073709551615s999ms", "25h"] {
            let err = parse_timeout(long).unwrap_err();
            assert!(err.contains("at most 1day"), "{err}");
        }
        assert!(parse_timeout("soon").is_err());
    }
}
