//! `xfn precompile-builtins`: compiles the built-in functions for this
//! machine and appends them to the executable (see
//! [`xfn_runtime::precompiled`]), so that a render with an empty compile
//! cache costs what a warm one does. `make build`, `make install`, `make
//! image` and `make bench` run it.

use std::path::PathBuf;

use anyhow::{Context as _, Result, bail};
use xfn_runtime::HostConfig;
use xfn_runtime::precompiled;

/// Compile the built-in functions for this machine into the xfn executable.
#[derive(Debug, clap::Args)]
#[command(hide = true)]
pub struct PrecompileArgs {
    /// Only these built-in functions (repeatable); default: all of them.
    #[arg(long = "only", value_name = "NAME")]
    pub only: Vec<String>,
    /// Write the executable here instead of replacing this one.
    #[arg(long, value_name = "PATH")]
    pub output: Option<PathBuf>,
}

/// Runs `xfn precompile-builtins`.
pub fn run(args: PrecompileArgs) -> Result<()> {
    let exe = std::env::current_exe().context("cannot find this executable")?;
    let bytes = std::fs::read(&exe).with_context(|| format!("cannot read {}", exe.display()))?;
    let program = &bytes[..precompiled::without_section(&bytes)];
    let builtins: Vec<(&str, &[u8])> = crate::BUILTINS
        .iter()
        .filter(|b| args.only.is_empty() || args.only.iter().any(|n| n == b.name))
        .filter_map(|b| Some((b.name, b.component?)))
        .collect();
    for name in &args.only {
        if !builtins.iter().any(|(n, _)| n == name) {
            bail!("{name:?} is not a built-in function of this xfn");
        }
    }
    // For the engine render and serve run built-ins on by default.
    let compiler = precompiled::Compiler::new(&HostConfig::default())?;
    let started = std::time::Instant::now();
    // One at a time: wasmtime compiles each component's functions in
    // parallel already.
    let artifacts = builtins
        .iter()
        .map(|(name, wasm)| {
            compiler
                .compile(wasm, Some(name))
                .with_context(|| format!("built-in function {name}"))
        })
        .collect::<Result<Vec<_>>>()?;
    let section = precompiled::section(&artifacts, program.len() as u64);

    let output = args.output.unwrap_or_else(|| exe.clone());
    let staging = output.with_extension("precompiling");
    let mut written = program.to_vec();
    written.extend_from_slice(&section);
    std::fs::write(&staging, &written)
        .with_context(|| format!("cannot write {}", staging.display()))?;
    let mode = std::fs::metadata(&exe)
        .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()))
        .unwrap_or(0o755);
    std::fs::set_permissions(&staging, std::os::unix::fs::PermissionsExt::from_mode(mode))
        .with_context(|| format!("cannot make {} executable", staging.display()))?;
    std::fs::rename(&staging, &output)
        .with_context(|| format!("cannot replace {}", output.display()))?;
    eprintln!(
        "xfn: precompiled {} built-in functions ({:.1} MiB) into {} in {:.1} s",
        artifacts.len(),
        section.len() as f64 / (1 << 20) as f64,
        output.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
