//! The flag groups the commands share, each defined once, and the parsers
//! of flag values. Every default is a named constant of the library it
//! configures; the libraries never see a flag.

use std::path::PathBuf;
use std::time::Duration;

use xfn_oci::RegistryOptions;
use xfn_runtime::{CompileCache, HostConfig, HostEngine, Tiering, WasmRuntime};

/// `--timeout`'s default for a served call: [`xfn_runtime::DEFAULT_CALL_TIMEOUT`].
pub const CALL_TIMEOUT: &str = "30s";

/// `--timeout`'s default for a render, every call in it included.
pub const RENDER_TIMEOUT: &str = "1m";

/// How to reach registries, and where the cache is: every command that
/// pulls or compiles flattens it.
#[derive(Debug, Clone, clap::Args)]
pub struct RegistryArgs {
    /// The cache root (blobs/, refs/ and the compile cache's compiled/).
    /// Default: $XFN_CACHE_DIR, else the user's cache directory + /xfn.
    #[arg(long, env = "XFN_CACHE_DIR", value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// A registry (HOST or HOST:PORT) to reach over plain HTTP. Repeatable.
    /// Loopback registries fall back to plain HTTP without it.
    #[arg(long = "insecure-registry", value_name = "HOST[:PORT]")]
    pub insecure_registries: Vec<String>,
    /// A PEM file of CA certificates to trust for registries. Repeatable.
    #[arg(long = "ca-cert", value_name = "PEM")]
    pub ca_certs: Vec<PathBuf>,
    /// A Kubernetes Secret YAML of type kubernetes.io/dockerconfigjson with
    /// registry credentials. Repeatable; tried before the Docker config.
    #[arg(long = "pull-secret", value_name = "FILE")]
    pub pull_secrets: Vec<PathBuf>,
    /// The Docker config.json (or its directory).
    /// Default: $DOCKER_CONFIG/config.json, else ~/.docker/config.json.
    #[arg(long, value_name = "PATH")]
    pub docker_config: Option<PathBuf>,
    /// The largest layer to download (bytes, or with a Ki, Mi or Gi suffix).
    #[arg(long, value_name = "SIZE", default_value = "64Mi", value_parser = xfn_oci::parse_size)]
    pub max_layer_size: u64,
    /// The largest layer of a container function's image to download.
    #[arg(long, value_name = "SIZE", default_value = "2Gi", value_parser = xfn_oci::parse_size)]
    pub max_image_layer_size: u64,
    /// The largest container function image to download, all its layers together.
    #[arg(long, value_name = "SIZE", default_value = "8Gi", value_parser = xfn_oci::parse_size)]
    pub max_image_size: u64,
    /// The longest one pull from a registry may take, all its requests together (e.g. 90s, 5m).
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = humantime::parse_duration)]
    pub pull_timeout: std::time::Duration,
}

impl RegistryArgs {
    /// The library options these flags describe.
    pub fn options(&self) -> RegistryOptions {
        let mut options = RegistryOptions::default();
        if let Some(dir) = &self.cache_dir {
            options.cache_dir = dir.clone();
        }
        options.insecure_registries = self.insecure_registries.clone();
        options.ca_certs = self.ca_certs.clone();
        options.pull_secrets = self.pull_secrets.clone();
        options.docker_config = self.docker_config.clone();
        options.max_layer_size = self.max_layer_size;
        options.max_image_layer_size = self.max_image_layer_size;
        options.max_image_size = self.max_image_size;
        options.pull_timeout = self.pull_timeout;
        options
    }
}

/// Most memory one function call may use: render, serve and the controller.
#[derive(Debug, Clone, clap::Args)]
pub struct MemoryLimit {
    /// Most memory one function call may use, in MiB (at least 1).
    #[arg(long = "memory-limit", default_value_t = xfn_runtime::DEFAULT_MEMORY_LIMIT_MIB, value_name = "MIB",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub mib: usize,
}

impl MemoryLimit {
    /// The limit in bytes.
    pub fn bytes(&self) -> usize {
        self.mib.saturating_mul(1 << 20)
    }
}

/// The limits and cache of a server's calls: the flags `xfn serve` and
/// `xfn controller` share.
#[derive(Debug, clap::Args)]
pub struct ServerLimits {
    /// Largest request accepted, in MiB (1 to 2048).
    #[arg(long, default_value_t = xfn_grpc::server::DEFAULT_MAX_RECV_MESSAGE_SIZE >> 20, value_name = "MIB",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=2048))]
    pub max_recv_message_size: usize,
    /// Longest a call may run when the client sets no shorter gRPC deadline (10ms to 1day).
    #[arg(long, default_value = CALL_TIMEOUT, value_parser = parse_timeout)]
    pub timeout: Duration,
    #[command(flatten)]
    pub memory: MemoryLimit,
    /// Calls that may run at once, over all functions (each holds a sandboxed instance); more wait their turn.
    #[arg(long, default_value_t = xfn_runtime::DEFAULT_MAX_CONCURRENT_CALLS, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
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
    /// How a function whose optimized code is neither built in nor cached is compiled: baseline-first runs code of wasmtime's baseline compiler (Winch) at once and swaps in the optimizing compiler's (Cranelift) when the background has compiled it; optimized waits for Cranelift.
    #[arg(long, value_enum, default_value_t = CompileTiers::BaselineFirst, value_name = "TIERS")]
    pub compile: CompileTiers,
}

/// The values of `--compile`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompileTiers {
    /// Winch's code first, Cranelift's from when the background has compiled it.
    BaselineFirst,
    /// Cranelift's code only, compiled before the function is ready.
    Optimized,
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
    /// cached under `registry`'s cache directory.
    pub fn wasm_runtime(&self, registry: &RegistryArgs) -> anyhow::Result<WasmRuntime> {
        wasm_runtime(
            HostConfig {
                call_timeout: self.timeout,
                memory_limit: self.memory.bytes(),
                max_concurrent_calls: self.max_concurrent_calls,
                max_calls_per_function: self.max_calls_per_function,
                keep_resident: self.keep_resident.saturating_mul(1 << 10),
                resident_budget: self.resident_budget.saturating_mul(1 << 20),
                decommit_batch: self.decommit_batch,
                tiering: match self.compile {
                    CompileTiers::BaselineFirst => Tiering::BaselineFirst,
                    CompileTiers::Optimized => Tiering::Optimized,
                },
                ..HostConfig::default()
            },
            registry.cache_dir.clone(),
        )
    }
}

/// A wasm runtime of `config`, whose compiled functions are cached under
/// `cache_dir` (default: [`CompileCache::default_dir`]).
pub fn wasm_runtime(config: HostConfig, cache_dir: Option<PathBuf>) -> anyhow::Result<WasmRuntime> {
    let engine = HostEngine::new(config)?;
    let cache = cache_dir
        .or_else(CompileCache::default_dir)
        .map(CompileCache::new);
    Ok(WasmRuntime::new(engine, cache)?
        .with_precompiled(xfn_runtime::precompiled::of_this_executable()))
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

/// Parses `KEY=VALUE` (the value may hold `=`; the key may not be empty).
pub fn parse_key_value(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => {
            Ok((key.trim().to_owned(), value.to_owned()))
        }
        _ => Err(format!("{text:?} is not KEY=VALUE")),
    }
}

/// Parses `KEY=PATH`.
pub fn parse_key_path(text: &str) -> Result<(String, PathBuf), String> {
    let (key, path) = parse_key_value(text).map_err(|_| format!("{text:?} is not KEY=PATH"))?;
    if path.is_empty() {
        return Err(format!("{text:?} has no path"));
    }
    Ok((key, PathBuf::from(path)))
}

/// Parses `NAME=PORT`.
pub fn parse_name_port(text: &str) -> Result<(String, u16), String> {
    let (name, port) = parse_key_value(text).map_err(|_| format!("{text:?} is not NAME=PORT"))?;
    let port = port
        .parse()
        .map_err(|_| format!("{text:?}: {port:?} is not a port"))?;
    Ok((name, port))
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn the_default_timeouts_parse_to_the_librarys() {
        assert_eq!(
            parse_timeout(CALL_TIMEOUT),
            Ok(xfn_runtime::DEFAULT_CALL_TIMEOUT)
        );
        assert_eq!(parse_timeout(RENDER_TIMEOUT), Ok(Duration::from_secs(60)));
    }

    #[test]
    fn pairs_are_parsed_by_their_first_equals_sign() {
        assert_eq!(
            parse_key_value("a=b=c"),
            Ok(("a".to_owned(), "b=c".to_owned()))
        );
        assert!(parse_key_value("no-equals").is_err());
        assert!(parse_key_value("=v").is_err());
        assert_eq!(
            parse_key_path("k=/tmp/x=y.json"),
            Ok(("k".to_owned(), PathBuf::from("/tmp/x=y.json")))
        );
        assert!(parse_key_path("k=").is_err());
        assert_eq!(parse_name_port("fn=9444"), Ok(("fn".to_owned(), 9444)));
        assert!(parse_name_port("fn=http").is_err_and(|e| e.contains("is not a port")));
    }
}
