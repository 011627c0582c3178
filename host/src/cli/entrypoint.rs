//! `xfn entrypoint`: the entrypoint of a runnable function image
//! (`xfn push --package crossplane.yaml --runnable`), serving its one
//! component as a function pod serves a function built with
//! function-sdk-go, so that a stock Crossplane runs the image as any
//! container function.

use std::path::PathBuf;

use anyhow::Result;
use xfn_catalog::functions_file::FunctionSpec;

/// Serve one component as Crossplane runs a function pod (the entrypoint of a runnable package).
#[derive(Debug, clap::Args)]
#[command(after_help = "\
The flags are function-sdk-go's: Crossplane starts a function pod with TLS_SERVER_CERTS_DIR set \
to the directory of its mTLS files and adds --debug when asked; `crossplane render` adds \
--insecure. Every call reaches the component, whatever name the Function has in the cluster.")]
pub struct EntrypointArgs {
    /// The component to serve (built for wasm32-wasip2).
    pub component: PathBuf,
    /// The function's name in logs and metrics.
    #[arg(long, default_value = "function")]
    pub name: String,
    /// Where to listen (`:PORT` for every interface).
    #[arg(long, default_value = ":9443", value_name = "HOST:PORT")]
    pub address: String,
    /// Serve plaintext gRPC, without TLS.
    #[arg(long)]
    pub insecure: bool,
    /// A directory with tls.crt, tls.key and ca.crt: serve mTLS, requiring client certificates from ca.crt.
    #[arg(long, env = "TLS_SERVER_CERTS_DIR", value_name = "DIR")]
    pub tls_certs_dir: Option<PathBuf>,
    /// Log debug lines, the function's and xfn's (as -vv).
    #[arg(short, long)]
    pub debug: bool,
    /// Threads that run calls, 1 to 1024; default: one per CPU.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub workers: Option<u16>,
    #[command(flatten)]
    pub limits: super::flags::ServerLimits,
    #[command(flatten)]
    pub registry: super::flags::RegistryArgs,
}

/// Runs `xfn entrypoint`: `xfn serve` of the one component, on a listener
/// that routes every call to it. The compile cache defaults to the
/// temporary directory, since an image's home may be read-only or absent.
pub async fn run(args: EntrypointArgs) -> Result<()> {
    let function = FunctionSpec::local(&args.name, args.component.clone())
        .map_err(|e| anyhow::anyhow!("--name {:?}: {e}", args.name))?;
    let mut registry = args.registry;
    if registry.cache_dir.is_none() {
        registry.cache_dir = Some(std::env::temp_dir().join("xfn-cache"));
    }
    let serve = super::serve::ServeArgs {
        address: args.address,
        insecure: args.insecure,
        tls_certs_dir: args.tls_certs_dir,
        functions: None,
        function: vec![function],
        function_port: Vec::new(),
        namespace: None,
        limits: args.limits,
        registry,
        workers: args.workers,
        metrics_address: None,
        watch: false,
        generate_certs: None,
    };
    super::serve::serve(serve, Some(args.name)).await
}
