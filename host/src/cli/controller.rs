//! `xfn controller`: Crossplane's External function runtime in a cluster.
//! Every replica serves the wasm functions; the one holding the Lease also
//! writes the objects and statuses (see `xfn_cluster`).

use std::time::Duration;

use crate::probes;
use anyhow::{Context as _, Result, bail};
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::watch;
use xfn_cluster::runtime::{ExternalRuntime, RuntimeConfig};
use xfn_grpc::ServerConfig;

/// Run xfn as Crossplane's External function runtime (`--package-runtime=Function=External`).
#[derive(Debug, clap::Args)]
#[command(after_help = "\
For every Active FunctionRevision, the replica holding the Lease makes a headless Service and a \
TLS certificate (signed by crossplane-root-ca) for a wasm package, or what Crossplane's own \
runtime makes for a container package, and writes status.endpoint and RuntimeHealthy. Every \
replica serves the wasm functions over mTLS, picking each function's certificate by SNI.")]
pub struct ControllerArgs {
    /// Crossplane's namespace, where the functions' Services and Secrets go.
    #[arg(long, env = "POD_NAMESPACE", default_value = "crossplane-system")]
    pub namespace: String,
    /// This replica's name in leader election (the pod's name).
    #[arg(long, env = "POD_NAME", value_name = "NAME")]
    pub identity: String,
    /// A label of xfn's pods (repeatable): wasm functions' Services select pods by these.
    #[arg(
        long = "pod-label",
        value_name = "KEY=VALUE",
        default_value = "app.kubernetes.io/name=xfn",
        value_parser = super::flags::parse_key_value
    )]
    pub pod_labels: Vec<(String, String)>,
    /// Where to serve gRPC (Crossplane dials port 9443).
    #[arg(long, default_value = ":9443", value_name = "HOST:PORT")]
    pub address: String,
    /// Where to serve /healthz and /readyz.
    #[arg(long, default_value = ":8080", value_name = "HOST:PORT")]
    pub probe_address: String,
    /// The Kubernetes API server's URL, without credentials (for tests); by default the in-cluster config or $KUBECONFIG.
    #[arg(long, value_name = "URL")]
    pub kube_api: Option<String>,
    /// How long a leader holds the Lease without renewing it (whole seconds, 2s to 1h); it renews a third of that before.
    #[arg(long, default_value = "15s", value_parser = parse_lease_duration)]
    pub lease_duration: Duration,
    #[command(flatten)]
    pub limits: super::flags::ServerLimits,
    #[command(flatten)]
    pub registry: super::flags::RegistryArgs,
}

/// The shortest Lease duration: its renewal comes a third of it (at least
/// a second) before it expires.
const MIN_LEASE_DURATION: Duration = Duration::from_secs(2);

/// The longest Lease duration: a dead leader's Lease blocks the others
/// this long.
const MAX_LEASE_DURATION: Duration = Duration::from_secs(60 * 60);

/// Parses `--lease-duration`: whole seconds (a Lease counts in seconds),
/// [`MIN_LEASE_DURATION`] to [`MAX_LEASE_DURATION`].
fn parse_lease_duration(text: &str) -> Result<Duration, String> {
    let duration = humantime::parse_duration(text).map_err(|e| format!("{text:?}: {e}"))?;
    if duration.subsec_nanos() != 0 {
        return Err(format!(
            "{text:?} is not a whole number of seconds, which a Lease counts in"
        ));
    }
    if !(MIN_LEASE_DURATION..=MAX_LEASE_DURATION).contains(&duration) {
        return Err(format!(
            "{text:?} is out of range: a Lease is held {} to {}",
            humantime::format_duration(MIN_LEASE_DURATION),
            humantime::format_duration(MAX_LEASE_DURATION)
        ));
    }
    Ok(duration)
}

async fn kube_client(api: Option<&str>) -> Result<kube::Client> {
    let config = match api {
        Some(url) => kube::Config::new(
            url.parse()
                .with_context(|| format!("--kube-api {url:?} is not a URL"))?,
        ),
        None => kube::Config::infer().await.context(
            "cannot find the Kubernetes API (no in-cluster config and no usable $KUBECONFIG)",
        )?,
    };
    kube::Client::try_from(config).context("cannot set up the Kubernetes client")
}

/// SIGTERM and SIGINT, as they come.
struct Signals {
    term: Signal,
    int: Signal,
}

impl Signals {
    /// Takes SIGTERM and SIGINT over from their default (ending the process).
    fn new() -> Result<Signals> {
        let listen = |kind: SignalKind| {
            signal(kind).context("cannot listen for SIGTERM and SIGINT, which stop the controller")
        };
        Ok(Signals {
            term: listen(SignalKind::terminate())?,
            int: listen(SignalKind::interrupt())?,
        })
    }

    /// The next signal's name and number.
    async fn next(&mut self) -> (&'static str, i32) {
        tokio::select! {
            _ = self.term.recv() => ("SIGTERM", 15),
            _ = self.int.recv() => ("SIGINT", 2),
        }
    }
}

/// Runs `xfn controller` until SIGTERM or SIGINT.
///
/// The first signal stops it cleanly ([`ExternalRuntime::run_until`]):
/// the gRPC server stops taking calls and drains those in flight (for up
/// to `--timeout` and 5 s), while the leader stops reconciling and
/// releases the Lease, so that another replica leads at once. A second signal ends the process at once, with status 128 plus
/// the signal's number.
pub async fn run(args: ControllerArgs) -> Result<()> {
    let mut signals = Signals::new()?;
    let address = super::parse_address("--address", &args.address)?;
    let probe_address = super::parse_address("--probe-address", &args.probe_address)?;
    if args.identity.is_empty() {
        bail!("--identity (or POD_NAME) must name this replica");
    }
    let config = RuntimeConfig {
        client: kube_client(args.kube_api.as_deref()).await?,
        namespace: args.namespace.clone(),
        identity: args.identity.clone(),
        pod_labels: args.pod_labels.iter().cloned().collect(),
        lease_duration: args.lease_duration,
        server: ServerConfig {
            address,
            max_recv_message_size: args.limits.max_recv_message_bytes(),
            shutdown_grace: args.limits.shutdown_grace(),
            call_threads: Some(super::call_threads(None)?),
            ..ServerConfig::default()
        },
        wasm: args.limits.wasm_runtime(&args.registry)?,
        registry: args.registry.options(),
    };
    let runtime = ExternalRuntime::start(config).await?;
    let (stop_probes, stop) = watch::channel(false);
    let probes_listener = probes::bind(probe_address)
        .await
        .with_context(|| format!("cannot listen on {probe_address}"))?;
    eprintln!(
        "xfn controller: {} serving gRPC on {} and probes on {probe_address}",
        args.identity,
        runtime.local_addr()
    );
    tokio::spawn(probes::serve(probes_listener, runtime.ready(), stop));

    let first_signal = async {
        let (name, _) = signals.next().await;
        eprintln!("xfn controller: {name}: stopping (a second signal stops at once)");
        tokio::spawn(async move {
            let (name, number) = signals.next().await;
            eprintln!("xfn controller: {name} again: exiting at once");
            std::process::exit(128 + number);
        });
    };
    let outcome = runtime.run_until(first_signal).await;
    stop_probes.send_replace(true);
    outcome?;
    eprintln!("xfn controller: stopped");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser as _;

    #[derive(Debug, clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: ControllerArgs,
    }

    fn lease(flag: &str) -> Result<Duration, String> {
        Cli::try_parse_from(["xfn", "--identity", "pod-0", "--lease-duration", flag])
            .map(|cli| cli.args.lease_duration)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn the_lease_duration_is_range_checked() {
        assert_eq!(lease("15s"), Ok(Duration::from_secs(15)));
        assert_eq!(lease("2s"), Ok(MIN_LEASE_DURATION));
        assert_eq!(lease("1h"), Ok(MAX_LEASE_DURATION));
        for bad in ["0s", "1s", "61m", "18446744073709551615s"] {
            let err = lease(bad).unwrap_err();
            assert!(
                err.contains("is out of range: a Lease is held 2s to 1h"),
                "{bad}: {err}"
            );
        }
        let err = lease("2500ms").unwrap_err();
        assert!(err.contains("is not a whole number of seconds"), "{err}");
        assert!(lease("soon").is_err());
    }
}
