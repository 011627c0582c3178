//! Built-in functions precompiled into the executable (`xfn
//! precompile-builtins`, which `make build`, `install`, `image` and `bench`
//! run): a render with an empty compile cache loads them instead of
//! compiling, with the same output; the section can be written again; and
//! a damaged one costs only the compile.

use std::path::{Path, PathBuf};

use xfn_tests::run_xfn;

fn docs() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/docs")
}

/// `xfn` at `bin` rendering the docs example with the compile cache
/// `cache`, at `-vv`.
fn render(bin: &Path, cache: &Path) -> xfn_tests::Run {
    let output = std::process::Command::new(bin)
        .current_dir(docs())
        .args([
            "render",
            "xr.yaml",
            "composition.yaml",
            "functions.yaml",
            "-vv",
            "--cache-dir",
        ])
        .arg(cache)
        .env_remove("XFN_LOG")
        .output()
        .expect("run xfn");
    xfn_tests::Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Renders with `bin` and an empty cache: the reference's output, `log`
/// on standard error, and `compiled` entries in the cache after.
#[track_caller]
fn renders_as(bin: &Path, reference: &xfn_tests::Run, log: &str, compiled: usize) {
    let cache = tempfile::tempdir().expect("cache");
    let run = render(bin, cache.path());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, reference.stdout);
    assert!(run.stderr.contains(log), "{log:?} in {}", run.stderr);
    assert_eq!(compiled_entries(cache.path()), compiled, "compiled entries");
}

/// The compiled entries a cache holds.
fn compiled_entries(cache: &Path) -> usize {
    std::fs::read_dir(cache.join("compiled")).map_or(0, |d| d.count())
}

#[test]
fn a_render_with_an_empty_cache_loads_the_precompiled_built_in() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bin = dir.path().join("xfn");
    std::fs::copy(xfn_tests::xfn_bin(), &bin).expect("copy xfn");
    let args = |extra: &[&str]| -> Vec<String> {
        [
            "precompile-builtins",
            "--only",
            "function-patch-and-transform",
        ]
        .iter()
        .chain(extra)
        .map(|a| (*a).to_owned())
        .collect()
    };
    let precompiled = std::process::Command::new(&bin)
        .args(args(&[]))
        .output()
        .expect("precompile");
    assert!(
        precompiled.status.success(),
        "{}",
        String::from_utf8_lossy(&precompiled.stderr)
    );
    let size = std::fs::metadata(&bin).expect("xfn").len();

    // The original, compiling into its cache, is the reference.
    let reference_cache = tempfile::tempdir().expect("cache");
    let reference = render(&xfn_tests::xfn_bin(), reference_cache.path());
    assert_eq!(reference.code, 0, "{}", reference.stderr);
    assert_eq!(
        compiled_entries(reference_cache.path()),
        1,
        "it compiled P&T"
    );

    // Nothing compiled.
    renders_as(&bin, &reference, "loaded the precompiled component", 0);

    // Written again, the section replaces the old one, byte for byte.
    let again = run_xfn(dir.path(), &args(&["--output", "xfn-2"]));
    let again_path = dir.path().join("xfn-2");
    assert_eq!(again.code, 0, "{}", again.stderr);
    let rewritten = std::process::Command::new(&bin)
        .args(args(&["--output"]))
        .arg(&again_path)
        .output()
        .expect("precompile again");
    assert!(rewritten.status.success());
    // Compiled for the architecture's baseline CPU: the same bytes again
    // (an image that ships them stays reproducible).
    assert_eq!(std::fs::metadata(&again_path).expect("xfn-2").len(), size);
    assert!(
        std::fs::read(&again_path).expect("xfn-2") == std::fs::read(&bin).expect("xfn"),
        "the same section"
    );

    // A damaged index: a warning, and the component is compiled.
    let mut bytes = std::fs::read(&bin).expect("read");
    let at = bytes
        .windows(11)
        .rposition(|w| w == b"{\"entries\":")
        .expect("the index");
    bytes[at] = b'[';
    let damaged = dir.path().join("xfn-damaged");
    std::fs::write(&damaged, &bytes).expect("write");
    std::fs::set_permissions(
        &damaged,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("chmod");
    renders_as(&damaged, &reference, "the precompiled index is damaged", 1);

    let unknown = run_xfn(
        dir.path(),
        &[
            "precompile-builtins".into(),
            "--only".into(),
            "function-nope".into(),
        ],
    );
    unknown.assert_failed_with("\"function-nope\" is not a built-in function");
}
