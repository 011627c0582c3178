//! The function author's path, from a clean directory and without network:
//! `xfn new` → `cargo test` → wasm build → `xfn render` of the new crate's
//! example → `xfn push --package` to a local registry → `xfn render` from
//! the registry reference. Each step is timed and the timings printed
//! (run with `--nocapture` to see them); no timing is asserted.
//!
//! The new crate depends on this repository's xfn-sdk (`--sdk-path`) and
//! builds offline, with the workspace's Cargo.lock as its starting
//! lockfile, so that it resolves from the local registry cache to versions
//! already downloaded. It builds into `author-path/` inside the
//! workspace's target directory: not the workspace's own build directory,
//! which the `cargo test` running this test keeps locked. That directory
//! is kept, so only the first run compiles the crate's dependencies.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::oci_support::Registry;
use xfn_tests::{Run, run_xfn};

/// Longest a cargo step may take (the first run compiles dependencies on
/// a slow machine).
const CARGO_LIMIT: Duration = Duration::from_secs(30 * 60);

const NAME: &str = "function-greet";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("the workspace")
}

/// Where the new crate builds: a directory of its own inside the
/// workspace's target directory.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace().join("target"), PathBuf::from)
        .join("author-path")
}

/// Runs cargo with `args` in `dir`, offline, under `timeout`; panics with
/// its output if it fails.
fn cargo(dir: &Path, args: &[&str]) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new("timeout")
        .arg("--kill-after=10")
        .arg(CARGO_LIMIT.as_secs().to_string())
        .arg(cargo)
        .args(args)
        .arg("--offline")
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target_dir())
        .output()
        .expect("run cargo");
    assert!(
        out.status.success(),
        "cargo {args:?} in {} failed ({}):\n{}\n{}",
        dir.display(),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `step`, records how long it took under `name`.
fn timed<T>(
    timings: &mut Vec<(&'static str, Duration)>,
    name: &'static str,
    step: impl FnOnce() -> T,
) -> T {
    let start = Instant::now();
    let value = step();
    timings.push((name, start.elapsed()));
    value
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| (*a).to_owned()).collect()
}

/// The arguments of `xfn render` of the crate's example with `functions`,
/// then `extra`.
fn render_example(functions: &str, extra: &[&str]) -> Vec<String> {
    let mut args = strings(&[
        "render",
        "example/xr.yaml",
        "example/composition.yaml",
        functions,
        "--include-function-results",
    ]);
    args.extend(strings(extra));
    args
}

fn succeeded(step: &str, run: &Run) {
    assert_eq!(run.code, 0, "{step}: {}\n{}", run.stderr, run.stdout);
}

/// What the generated function does to the example XR, as `xfn render`
/// prints it: a composed ConfigMap holding the input's message.
fn assert_rendered_the_function(run: &Run) {
    for wanted in [
        "kind: XMessage",
        "kind: ConfigMap",
        "name: example-message",
        &format!("message: Hello from {NAME}"),
        "composed ConfigMap example-message",
    ] {
        assert!(
            run.stdout.contains(wanted),
            "{wanted:?} not in:\n{}",
            run.stdout
        );
    }
}

#[test]
fn a_new_function_tests_builds_renders_pushes_and_renders_from_the_registry() {
    let work = tempfile::tempdir().expect("temp dir");
    let mut timings = Vec::new();

    // xfn new, against this repository's SDK.
    let sdk = workspace().join("guest-sdk");
    let created = timed(&mut timings, "xfn new", || {
        run_xfn(
            work.path(),
            &strings(&["new", NAME, "--sdk-path", &sdk.display().to_string()]),
        )
    });
    succeeded("xfn new", &created);
    let crate_dir = work.path().join(NAME);
    assert!(crate_dir.join("Cargo.toml").is_file());
    // Running it again refuses the now non-empty directory.
    let again = run_xfn(work.path(), &strings(&["new", NAME]));
    again.assert_failed_with("already exists and is not empty");

    // Offline: start from the workspace's lockfile (cargo drops what the
    // crate doesn't use and keeps the versions of what it does).
    std::fs::copy(workspace().join("Cargo.lock"), crate_dir.join("Cargo.lock"))
        .expect("copy Cargo.lock");

    timed(&mut timings, "cargo test", || cargo(&crate_dir, &["test"]));
    timed(&mut timings, "wasm build", || {
        cargo(
            &crate_dir,
            &["build", "--profile", "wasm", "--target", "wasm32-wasip2"],
        )
    });
    // The example names the component where a build with the default
    // target directory puts it; this one went to `target_dir()`.
    let built = target_dir().join("wasm32-wasip2/wasm/function_greet.wasm");
    let wasm = crate_dir.join("target/wasm32-wasip2/wasm/function_greet.wasm");
    std::fs::create_dir_all(wasm.parent().expect("a parent")).expect("mkdir");
    std::fs::copy(&built, &wasm).expect("copy the component");

    // xfn render of the example, from the crate's root as `make render` does.
    let local = timed(&mut timings, "xfn render (local file)", || {
        run_xfn(&crate_dir, &render_example("example/functions.yaml", &[]))
    });
    succeeded("xfn render", &local);
    assert_rendered_the_function(&local);

    // xfn push --package, as `make push` does, to a registry on loopback.
    let mut registry = Registry::start();
    let reference = registry.reference(&format!("functions/{NAME}:v0.1.0"));
    let push = timed(&mut timings, "xfn push --package", || {
        run_xfn(
            &crate_dir,
            &strings(&[
                "push",
                "--package",
                "package/crossplane.yaml",
                "target/wasm32-wasip2/wasm/function_greet.wasm",
                &reference,
            ]),
        )
    });
    succeeded("xfn push --package", &push);

    // Rendered from the registry: the Function names the package only.
    let functions = crate_dir.join("example/functions-registry.yaml");
    std::fs::write(
        &functions,
        format!(
            "apiVersion: pkg.crossplane.io/v1\nkind: Function\nmetadata:\n  name: {NAME}\nspec:\n  package: {reference}\n"
        ),
    )
    .expect("write functions");
    let cache = work.path().join("cache");
    let pulled = timed(&mut timings, "xfn render (from the registry)", || {
        run_xfn(
            &crate_dir,
            &render_example(
                &functions.display().to_string(),
                &["--cache-dir", &cache.display().to_string()],
            ),
        )
    });
    succeeded("xfn render from the registry", &pulled);
    assert_eq!(
        pulled.stdout, local.stdout,
        "the same function, the same output"
    );
    assert!(
        cache.join("blobs/sha256").is_dir(),
        "rendered from the registry, so the package is cached"
    );
    registry.stop();

    for (step, took) in &timings {
        eprintln!("author's path: {step:<32} {:>8.1} s", took.as_secs_f64());
    }
    let total: Duration = timings.iter().map(|(_, t)| *t).sum();
    eprintln!(
        "author's path: {:<32} {:>8.1} s",
        "total",
        total.as_secs_f64()
    );
}
