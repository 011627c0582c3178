//! The `xfn` command: Crossplane composition functions as wasm components.

mod cli;
mod probes;

/// The functions that ship inside this binary (see `build.rs`).
static BUILTINS: &[xfn_catalog::Builtin] = include!(concat!(env!("OUT_DIR"), "/builtins.rs"));

/// The functions that ship inside this binary.
pub fn builtins() -> xfn_catalog::Builtins {
    xfn_catalog::Builtins::new(BUILTINS)
}

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Run Crossplane composition functions as sandboxed WebAssembly components.
#[derive(Debug, Parser)]
#[command(name = "xfn", version, about)]
struct Cli {
    /// Log more: -v info (a function's info lines in render), -vv debug, -vvv trace, -vvvv also the libraries' (wasmtime, cranelift...) debug and trace; default warnings and errors. XFN_LOG (e.g. XFN_LOG=warn,xfn::function=debug) wins over it.
    #[arg(short = 'v', long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    /// The level of the functions' own log lines (error, warn, info, debug, trace, off), whatever -v sets for xfn's.
    #[arg(long, global = true, value_name = "LEVEL", value_parser = ["off", "error", "warn", "info", "debug", "trace"])]
    function_log: Option<String>,
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
    /// Serve one component as Crossplane runs a function pod: the entrypoint of a runnable package (`xfn push --runnable`).
    Entrypoint(cli::entrypoint::EntrypointArgs),
    /// Be Crossplane's External function runtime in a cluster.
    Controller(cli::controller::ControllerArgs),
    /// Publish a wasm component as a CNCF wasm artifact.
    Push(cli::oci::PushArgs),
    /// Fetch a function package (a wasm component or a container image) into the cache and print its digest.
    Pull(cli::oci::PullArgs),
    /// Show what a component (file or reference) imports and exports, or which platforms a container image offers.
    Inspect(cli::oci::InspectArgs),
    /// Create a function crate that builds, tests and renders as it is.
    New(cli::new::NewArgs),
    /// Compile the built-in functions for this machine into this executable.
    PrecompileBuiltins(cli::precompile::PrecompileArgs),
}

fn main() -> ExitCode {
    // The container sandbox's launcher is this binary, started by render
    // with a hidden first argument; it must stay single-threaded, so it
    // runs before anything else.
    #[cfg(target_os = "linux")]
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == xfn_container::LAUNCHER_ARG)
    {
        let code = xfn_container::launcher_main();
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    xfn_runtime::precompiled::embedded_builtins(
        BUILTINS.iter().filter_map(|b| Some((b.name, b.component?))),
    );
    let cli = Cli::parse();
    // function-sdk-go's --debug, which Crossplane passes to a function pod.
    let verbose = match &cli.command {
        Command::Entrypoint(args) if args.debug => cli.verbose.max(2),
        _ => cli.verbose,
    };
    cli::logging::init(verbose, cli.function_log.as_deref());
    xfn_runtime::metrics::count_pulls_from(xfn_oci::registry_pulls);
    let outcome = match cli.command {
        Command::Render(args) => on_runtime(cli::render::run(args)),
        Command::Operation(command) => on_runtime(cli::operation::run(command)),
        Command::Composition(args) => on_runtime(cli::render::run_composition(args)),
        Command::Validate(args) => cli::validate::run(args),
        Command::Serve(args) => on_runtime(cli::serve::run(args)),
        Command::Entrypoint(args) => on_runtime(cli::entrypoint::run(args)),
        Command::Controller(args) => runtime().and_then(|rt| {
            let outcome = rt.block_on(cli::controller::run(args));
            // The controller bounds its own shutdown: work still running
            // in the background (a compile, a pull) is not waited for.
            rt.shutdown_timeout(std::time::Duration::from_secs(1));
            outcome
        }),
        Command::Push(args) => on_runtime(cli::oci::push(args)),
        Command::Pull(args) => on_runtime(cli::oci::pull(args)),
        Command::Inspect(args) => on_runtime(cli::oci::inspect(args)),
        Command::New(args) => cli::new::run(args),
        Command::PrecompileBuiltins(args) => cli::precompile::run(args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xfn: error: {}", cli::error_text(&e));
            ExitCode::FAILURE
        }
    }
}

/// Runs `command` to completion on a multi-threaded runtime.
fn on_runtime(
    command: impl std::future::Future<Output = anyhow::Result<()>>,
) -> anyhow::Result<()> {
    runtime()?.block_on(command)
}

/// A multi-threaded runtime with a worker thread per CPU.
fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}
