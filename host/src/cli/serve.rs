//! `xfn serve`: serve wasm functions over gRPC as Crossplane's
//! `FunctionRunnerService` (v1 and v1beta1), many functions on one port.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use xfn_catalog::functions_file::{FunctionSpec, Loader, OciPackages, ServedFiles, served_specs};
use xfn_grpc::ServerConfig;
use xfn_grpc::serve::{Reloaded, Reloader, Serve, ServeConfig};
use xfn_grpc::tls::{self, TlsFiles};

/// Most `--workers`: more threads than this only cost memory.
const MAX_WORKERS: i64 = 1024;

/// Serve wasm functions over gRPC, as Crossplane calls functions.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Each function is reached at the authority Crossplane dials, <function>.<namespace>:<port> \
(also <function>, <function>.<namespace>.svc[.<cluster-domain>]), or at a port of its own \
(--function-port, or the xfn.dev/serve-port annotation).

Functions are reloaded on SIGHUP (and with --watch when their files change), without dropping \
calls in flight. SIGTERM or SIGINT drains calls in flight, then exits.")]
pub struct ServeArgs {
    /// Where to listen. The default only accepts local clients; use `:9443` (all interfaces) in a pod.
    #[arg(long, default_value = "127.0.0.1:9443", value_name = "HOST:PORT")]
    pub address: String,
    /// Serve plaintext gRPC, without TLS (wins over --tls-certs-dir).
    #[arg(long)]
    pub insecure: bool,
    /// A directory with tls.crt, tls.key and ca.crt: serve mTLS, requiring client certificates from ca.crt.
    #[arg(long, env = "TLS_SERVER_CERTS_DIR", value_name = "DIR")]
    pub tls_certs_dir: Option<PathBuf>,
    /// A YAML file of Crossplane Function objects to serve (render.crossplane.io/runtime-wasm-module, or a spec.package that ships with xfn).
    #[arg(long, value_name = "FILE")]
    pub functions: Option<PathBuf>,
    /// A function to serve from a local component (repeatable).
    #[arg(long = "function", value_name = "NAME=PATH.wasm", value_parser = parse_function)]
    pub function: Vec<FunctionSpec>,
    /// Also serve function NAME alone on PORT, for clients that can't set the authority (repeatable).
    #[arg(long = "function-port", value_name = "NAME=PORT", value_parser = super::flags::parse_name_port)]
    pub function_port: Vec<(String, u16)>,
    /// Only route authorities in this namespace (<function>.<namespace>); any namespace if unset.
    #[arg(long, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    #[command(flatten)]
    pub limits: super::flags::ServerLimits,
    #[command(flatten)]
    pub registry: super::flags::RegistryArgs,
    /// Threads that run calls (wasm), 1 to 1024; default: one per CPU.
    /// Connections are served by threads of their own, so a guest that
    /// computes never delays another call's network exchange; as many
    /// threads again, of lower priority, run calls that compute past 10 ms.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=MAX_WORKERS))]
    pub workers: Option<u16>,
    /// Also serve Prometheus metrics (/metrics) and probes (/healthz, /readyz) over plain HTTP here.
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics_address: Option<String>,
    /// Reload when the functions file or a component changes (checked every 2 s).
    #[arg(long)]
    pub watch: bool,
    /// Write a CA, a server certificate for every function's service names, and a client certificate into DIR, then exit.
    #[arg(long, value_name = "DIR")]
    pub generate_certs: Option<PathBuf>,
}

/// Runs `xfn serve`.
pub async fn run(args: ServeArgs) -> Result<()> {
    serve(args, None).await
}

/// Serves as `xfn serve` does; every call on `--address` goes to
/// `address_function` if set, whatever its authority.
pub(crate) async fn serve(args: ServeArgs, address_function: Option<String>) -> Result<()> {
    let specs = served_specs(
        args.functions.as_deref(),
        &args.function,
        &args.function_port,
    )?;
    if let Some(dir) = &args.generate_certs {
        return generate_certs(dir, &args, &specs);
    }
    if specs.is_empty() {
        bail!("no functions to serve: use --functions FILE or --function NAME=PATH.wasm");
    }
    let address = super::parse_address("--address", &args.address)?;
    let metrics_address = args
        .metrics_address
        .as_deref()
        .map(|a| super::parse_address("--metrics-address", a))
        .transpose()?;
    let tls = match (&args.tls_certs_dir, args.insecure) {
        (_, true) => None,
        (Some(dir), false) => Some(
            // Checked now, so that a bad key fails before anything is served.
            TlsFiles::read_dir(dir)
                .and_then(|files| files.check_server().map(|()| files))
                .with_context(|| format!("cannot load TLS certificates from {}", dir.display()))?,
        ),
        (None, false) => bail!(
            "no TLS certificates: set --tls-certs-dir (or TLS_SERVER_CERTS_DIR) to a directory \
             with tls.crt, tls.key and ca.crt, or serve plaintext with --insecure"
        ),
    };

    let catalog = xfn_catalog::Catalog::new(args.registry.options(), crate::builtins());
    let packages = OciPackages::new(catalog, tokio::runtime::Handle::current());
    let functions = Arc::new(ServedFiles {
        functions_file: args.functions.clone(),
        functions: args.function.clone(),
        ports: args.function_port.clone(),
        loader: Loader::new(args.limits.wasm_runtime(&args.registry)?, packages),
    });
    let config = ServeConfig {
        server: ServerConfig {
            address,
            function_ports: Vec::new(),
            address_function,
            tls,
            dynamic_tls: None,
            max_recv_message_size: args.limits.max_recv_message_bytes(),
            namespace: args.namespace.clone(),
            reflection: true,
            shutdown_grace: args.limits.shutdown_grace(),
            call_threads: Some(super::call_threads(args.workers)?),
        },
        watch: args.watch.then_some(WATCH_EVERY),
        on_reload: Some(print_reload),
        after_load: Some(super::allocator::release_free_memory),
    };
    let plaintext = config.server.tls.is_none();
    let serve = Serve::start(config, functions).await?;
    eprintln!(
        "xfn serve: serving {} on {} ({})",
        serve.names().join(", "),
        serve.local_addr(),
        if plaintext { "plaintext" } else { "mTLS" },
    );
    for name in serve.names() {
        if let Some(addr) = serve.function_addr(&name) {
            eprintln!("xfn serve: {name} alone on {addr}");
        }
    }

    // Kept until the server stops: dropping it stops the metrics endpoint.
    let (_metrics_stop, stop) = tokio::sync::watch::channel(false);
    if let Some(address) = metrics_address {
        let listener = crate::probes::bind(address)
            .await
            .with_context(|| format!("cannot serve metrics on {address}"))?;
        let (_, ready) = tokio::sync::watch::channel(true);
        eprintln!("xfn serve: metrics on http://{address}/metrics");
        tokio::spawn(crate::probes::serve(listener, ready, stop));
    }

    tokio::spawn(on_signals(serve.reloader()));
    serve.run().await?;
    eprintln!("xfn serve: stopped");
    Ok(())
}

/// How often `--watch` looks at the functions file and components.
const WATCH_EVERY: Duration = Duration::from_secs(2);

/// Parses `--function NAME=PATH.wasm`.
fn parse_function(text: &str) -> Result<FunctionSpec, String> {
    let (name, path) = super::flags::parse_key_path(text)
        .map_err(|_| format!("{text:?} is not NAME=PATH.wasm"))?;
    FunctionSpec::local(&name, path)
}

/// Prints a reload's outcome, as `xfn serve` reports on stderr.
fn print_reload(outcome: &Result<Reloaded, String>) {
    match outcome {
        Ok(reloaded) => {
            if reloaded.ports_changed {
                eprintln!(
                    "xfn serve: dedicated function ports changed; they take effect on restart"
                );
            }
            eprintln!("xfn serve: reloaded: {}", reloaded.names.join(", "));
        }
        Err(e) => {
            eprintln!("xfn serve: cannot reload, still serving the previous functions: {e}")
        }
    }
}

/// SIGHUP reloads; SIGTERM and SIGINT shut down gracefully.
async fn on_signals(reloader: Reloader) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut hup), Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::hangup()),
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        eprintln!("xfn serve: cannot handle signals");
        return;
    };
    loop {
        tokio::select! {
            _ = hup.recv() => {
                let _ = reloader.reload().await;
            }
            _ = term.recv() => break,
            _ = int.recv() => break,
        }
    }
    eprintln!("xfn serve: shutting down, draining calls in flight");
    reloader.shutdown().await;
}

fn generate_certs(dir: &std::path::Path, args: &ServeArgs, specs: &[FunctionSpec]) -> Result<()> {
    let namespace = args.namespace.as_deref().unwrap_or("crossplane-system");
    let mut names: Vec<String> = specs
        .iter()
        .flat_map(|s| tls::service_names(&s.name, namespace))
        .collect();
    names.extend(["localhost".to_owned(), "127.0.0.1".to_owned()]);
    let generated = tls::generate_dir(dir, &names)?;
    println!("CA:     {}", dir.join(tls::CA_FILE).display());
    println!(
        "server: {} (use as --tls-certs-dir)",
        generated.server_dir.display()
    );
    println!("client: {}", generated.client_dir.display());
    println!("names:  {}", names.join(", "));
    Ok(())
}
