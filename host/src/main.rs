//! The `xfn` command: Crossplane composition functions as wasm components.

mod cli;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Run Crossplane composition functions as sandboxed WebAssembly components.
#[derive(Debug, Parser)]
#[command(name = "xfn", version, about)]
struct Cli {
    /// Log more: -v info (a function's info lines in render), -vv debug, -vvv trace; default warnings and errors. XFN_LOG (e.g. XFN_LOG=debug) wins over it.
    #[arg(short = 'v', long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    /// A Crossplane CLI configuration file. Accepted for compatibility: xfn reads nothing from it.
    #[arg(long = "config", global = true, value_name = "PATH")]
    _config: Option<std::path::PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Render an XR with a Composition's function pipeline (a Docker-free `crossplane render`).
    Render(cli::render::RenderArgs),
    /// Work with Operations: `xfn operation render`.
    #[command(subcommand)]
    Operation(cli::operation::OperationCommand),
    /// Composition commands of the current Crossplane CLI (`xfn composition render`).
    Composition(cli::render::CompositionArgs),
    /// Check a Composition's pipeline.
    Validate(cli::validate::ValidateArgs),
    /// Serve wasm functions to Crossplane as gRPC FunctionRunnerServices.
    Serve(cli::serve::ServeArgs),
    /// Be Crossplane's External function runtime in a cluster.
    Controller(cli::controller::ControllerArgs),
    /// Publish a wasm component as a CNCF wasm artifact.
    Push(cli::oci::PushArgs),
    /// Fetch a function package into the cache and print its digest.
    Pull(cli::oci::PullArgs),
    /// Show what a component (file or reference) imports and exports.
    Inspect(cli::oci::InspectArgs),
    /// Create a function crate that builds, tests and renders as it is.
    New(cli::new::NewArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    cli::logging::init(cli.verbose);
    let outcome = match cli.command {
        Command::Render(args) => runtime(None).and_then(|rt| rt.block_on(cli::render::run(args))),
        Command::Operation(command) => {
            runtime(None).and_then(|rt| rt.block_on(cli::operation::run(command)))
        }
        Command::Composition(args) => {
            runtime(None).and_then(|rt| rt.block_on(cli::render::run_composition(args)))
        }
        Command::Validate(args) => cli::validate::run(args),
        Command::Serve(args) => runtime(None).and_then(|rt| rt.block_on(cli::serve::run(args))),
        Command::Controller(args) => runtime(None).and_then(|rt| {
            let outcome = rt.block_on(cli::controller::run(args));
            // The controller bounds its own shutdown: work still running
            // in the background (a compile, a pull) is not waited for.
            rt.shutdown_timeout(std::time::Duration::from_secs(1));
            outcome
        }),
        Command::Push(args) => runtime(None).and_then(|rt| rt.block_on(cli::oci::push(args))),
        Command::Pull(args) => runtime(None).and_then(|rt| rt.block_on(cli::oci::pull(args))),
        Command::Inspect(args) => runtime(None).and_then(|rt| rt.block_on(cli::oci::inspect(args))),
        Command::New(args) => cli::new::run(args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xfn: error: {}", cli::error_text(&e));
            ExitCode::FAILURE
        }
    }
}

/// A multi-threaded runtime with `workers` threads (default: one per CPU).
fn runtime(workers: Option<u16>) -> anyhow::Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = workers {
        builder.worker_threads(usize::from(n));
    }
    Ok(builder.enable_all().build()?)
}
