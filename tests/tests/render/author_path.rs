//! The function author's path, played as a new user: `xfn new` in an
//! empty directory outside the repository, then the crate's own `make
//! test`, `make build`, `make render`, `make render-observed` and `make
//! push` to a local registry, with nothing else given (the Makefile runs
//! the `xfn` that wrote it; the SDK and a Cargo.lock come with the crate);
//! `xfn render` from the registry reference gives the same output; the
//! input's CRD validates the example input; and the crate, moved to
//! another directory, still builds. Each step is timed and the timings
//! printed (run with `--nocapture` to see them); no timing is asserted.
//!
//! The environment only makes the run hermetic and quick: cargo runs
//! offline (the crate's Cargo.lock pins versions the workspace has
//! downloaded), and every cargo step builds into `author-path/` inside the
//! workspace's target directory (`CARGO_TARGET_DIR`, as the README
//! suggests for sharing one build across function crates). That directory
//! is kept, so only the first run compiles the crate's dependencies.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::oci_support::Registry;
use xfn_tests::{Run, run_xfn};

/// Longest a make step may take (the first run compiles dependencies on
/// a slow machine).
const MAKE_LIMIT: Duration = Duration::from_secs(30 * 60);

const NAME: &str = "function-greet";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("the workspace")
}

/// Where the new crate builds: a directory of its own inside the
/// workspace's target directory (not the workspace's own build directory,
/// which the `cargo test` running this test keeps locked).
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace().join("target"), PathBuf::from)
        .join("author-path")
}

/// Runs `make` with `args` in `dir` under [`MAKE_LIMIT`]; panics with its
/// output if it fails, else returns its standard output.
fn make(dir: &Path, args: &[&str], cache: &Path) -> String {
    let mut make_args = vec![
        "make",
        // Silent: stdout is the recipes' output only (xfn render's YAML).
        "--silent",
        "--no-print-directory",
    ];
    make_args.extend_from_slice(args);
    as_the_author(dir, &make_args, cache)
}

/// Runs `command` in `dir` under [`MAKE_LIMIT`] in the author's
/// environment: the `xfn` under test first on PATH, cargo offline and
/// building into [`target_dir`], nothing of the cargo and make running
/// this test. Panics with its output if it fails, else returns its
/// standard output.
fn as_the_author(dir: &Path, command: &[&str], cache: &Path) -> String {
    let xfn_dir = std::fs::canonicalize(xfn_tests::xfn_bin())
        .expect("the xfn under test")
        .parent()
        .expect("its directory")
        .to_owned();
    let path = std::env::join_paths(std::iter::once(xfn_dir).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    let out = Command::new("timeout")
        .arg("--kill-after=10")
        .arg(MAKE_LIMIT.as_secs().to_string())
        .args(command)
        .current_dir(dir)
        .env("PATH", path)
        .env("CARGO_TARGET_DIR", target_dir())
        .env("CARGO_NET_OFFLINE", "true")
        // xfn's compile cache, private to the test.
        .env("XFN_CACHE_DIR", cache)
        // The make and cargo running this test must not leak into the
        // user's make (jobserver, flags) or cargo (the workspace's
        // settings).
        .env_remove("MAKEFLAGS")
        .env_remove("MFLAGS")
        .env_remove("MAKELEVEL")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("CLIPPY_ARGS")
        .env_remove("XFN_LOG")
        .env_remove("XFN_BIN")
        .output()
        .expect("run the command");
    assert!(
        out.status.success(),
        "{command:?} in {} failed ({}):\n{}\n{}",
        dir.display(),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
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

fn succeeded(step: &str, run: &Run) {
    assert_eq!(run.code, 0, "{step}: {}\n{}", run.stderr, run.stdout);
}

/// What the generated function does to the example XR, as `xfn render`
/// prints it: a composed Bucket with the input's region and tags, and its
/// result.
fn assert_rendered_the_function(stdout: &str) {
    for wanted in [
        "kind: XBucket",
        "kind: Bucket",
        "region: eu-west-1",
        "team: platform",
        "crossplane.io/composite: example",
        "composed a bucket for example",
    ] {
        assert!(stdout.contains(wanted), "{wanted:?} not in:\n{stdout}");
    }
}

/// Copies the directory tree `from` to `to` (files and directories only,
/// as a user's `cp -r` of a checkout would).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("entry");
        let kind = entry.file_type().expect("file type");
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// The Python with `jsonschema`: `$XFN_PYTHON`, else the workspace's
/// `.venv` (tests/requirements.txt). Panics with a hint when it is missing.
fn python_with_jsonschema() -> PathBuf {
    let python = std::env::var_os("XFN_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join(".venv/bin/python"));
    let works = Command::new(&python)
        .args(["-c", "import jsonschema"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        works,
        "{} cannot import jsonschema: run `make venv` (tests/requirements.txt), or point XFN_PYTHON at a python that has it",
        python.display()
    );
    python
}

/// Validates `input` against the CRD's `openAPIV3Schema` with Python's
/// `jsonschema` (Draft 4, which OpenAPI v3's schema objects extend);
/// returns the validation errors, one a line.
fn schema_errors(crd: &serde_json::Value, input: &serde_json::Value) -> String {
    let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    assert!(schema.is_object(), "no openAPIV3Schema in {crd}");
    let script = "import json, sys\nimport jsonschema\nschema, doc = json.load(sys.stdin)\n\
                  for e in jsonschema.Draft4Validator(schema).iter_errors(doc):\n    print(e.message)\n";
    let mut child = Command::new("timeout")
        .args([
            "30",
            &python_with_jsonschema().display().to_string(),
            "-c",
            script,
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run python");
    let payload = serde_json::to_vec(&serde_json::json!([schema, input])).expect("json");
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(&payload).expect("write to python");
    }
    let out = child.wait_with_output().expect("python");
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn yaml_file(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).expect("read YAML");
    serde_yaml_ng::from_str(&text).expect("parse YAML")
}

#[test]
fn a_new_function_tests_builds_renders_pushes_and_builds_elsewhere() {
    let work = tempfile::tempdir().expect("temp dir");
    let cache = work.path().join("xfn-cache");
    let mut timings = Vec::new();

    // xfn new, in an empty directory outside the repository.
    let created = timed(&mut timings, "xfn new", || {
        run_xfn(work.path(), &strings(&["new", NAME]))
    });
    succeeded("xfn new", &created);
    let crate_dir = work.path().join(NAME);
    assert!(
        crate_dir.join("xfn-sdk/src/lib.rs").is_file(),
        "the SDK comes with the crate"
    );
    let makefile = std::fs::read_to_string(crate_dir.join("Makefile")).expect("Makefile");
    let xfn = std::fs::canonicalize(xfn_tests::xfn_bin()).expect("the xfn under test");
    assert!(
        makefile.contains(&xfn.display().to_string()),
        "the Makefile names the xfn that wrote it:\n{makefile}"
    );
    // Running it again refuses the now non-empty directory.
    let again = run_xfn(work.path(), &strings(&["new", NAME]));
    again.assert_failed_with("already exists and is not empty");

    timed(&mut timings, "make test", || {
        make(&crate_dir, &["test"], &cache)
    });
    timed(&mut timings, "make build", || {
        make(&crate_dir, &["build"], &cache)
    });
    let local = timed(&mut timings, "make render", || {
        make(&crate_dir, &["render"], &cache)
    });
    assert_rendered_the_function(&local);
    assert!(
        !local.contains("bucketArn"),
        "nothing observed yet, so no ARN:\n{local}"
    );
    let observed = timed(&mut timings, "make render-observed", || {
        make(&crate_dir, &["render-observed"], &cache)
    });
    assert_rendered_the_function(&observed);
    assert!(
        observed.contains("bucketArn: arn:aws:s3:::example-x7k2p"),
        "the bucket's ARN in the XR's status:\n{observed}"
    );

    // The input's CRD, as packaged, accepts the example's input and
    // refuses a wrong one.
    let crd =
        yaml_file(&crate_dir.join(format!("package/input/{NAME}.fn.example.org_inputs.yaml")));
    let composition = yaml_file(&crate_dir.join("example/composition.yaml"));
    let input = &composition["spec"]["pipeline"][0]["input"];
    assert_eq!(schema_errors(&crd, input), "", "the example input is valid");
    let mut wrong = input.clone();
    wrong["region"] = serde_json::json!(7);
    wrong["tags"] = serde_json::json!(["not", "a", "map"]);
    let errors = schema_errors(&crd, &wrong);
    assert!(
        errors.contains("7 is not of type 'string'") && errors.contains("is not of type 'object'"),
        "{errors}"
    );

    // make push to a registry on loopback, then render from the reference.
    let mut registry = Registry::start();
    let repository = registry.reference("functions");
    let reference = format!("{repository}/{NAME}:v0.1.0");
    timed(&mut timings, "make push", || {
        make(
            &crate_dir,
            &["push", &format!("REGISTRY={repository}"), "TAG=v0.1.0"],
            &cache,
        )
    });
    let functions = work.path().join("functions-registry.yaml");
    std::fs::write(
        &functions,
        format!(
            "apiVersion: pkg.crossplane.io/v1\nkind: Function\nmetadata:\n  name: {NAME}\nspec:\n  package: {reference}\n"
        ),
    )
    .expect("write functions");
    let pulled = timed(&mut timings, "xfn render (from the registry)", || {
        run_xfn(
            &crate_dir,
            &strings(&[
                "render",
                "example/xr.yaml",
                "example/composition.yaml",
                &functions.display().to_string(),
                "--include-function-results",
                "--cache-dir",
                &work.path().join("pull-cache").display().to_string(),
            ]),
        )
    });
    succeeded("xfn render from the registry", &pulled);
    assert_eq!(pulled.stdout, local, "the same function, the same output");
    registry.stop();

    // The crate, moved elsewhere (as a clone of its repository would be),
    // still builds: nothing in it points back to where it was made.
    let moved = work.path().join("elsewhere/greet");
    timed(&mut timings, "move and make build", || {
        copy_tree(&crate_dir, &moved);
        std::fs::remove_dir_all(&crate_dir).expect("remove the original");
        make(&moved, &["build"], &cache)
    });
    assert!(
        target_dir()
            .join("wasm32-wasip2/wasm/function_greet.wasm")
            .is_file(),
        "the moved crate's component"
    );

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

/// The CI workflow `xfn new` writes, run as GitHub would run it, step by
/// step in a git checkout of the crate: every `run:` step in order, each
/// with `bash -e` (GitHub's default shell). The `uses:` steps (checkout,
/// cache) are GitHub's own; the xfn under test is first on PATH, so the
/// workflow's "Install xfn" finds it.
#[test]
fn the_ci_workflow_of_a_new_function_passes() {
    let work = tempfile::tempdir().expect("temp dir");
    let cache = work.path().join("xfn-cache");
    let created = run_xfn(work.path(), &strings(&["new", "function-ci"]));
    succeeded("xfn new", &created);
    let crate_dir = work.path().join("function-ci");
    for git in [
        &["init", "--quiet"][..],
        &["add", "."],
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.org",
            "commit",
            "--quiet",
            "-m",
            "new",
        ],
    ] {
        as_the_author(&crate_dir, &[&["git"][..], git].concat(), &cache);
    }
    let workflow = yaml_file(&crate_dir.join(".github/workflows/ci.yaml"));
    let steps = workflow["jobs"]["ci"]["steps"].as_array().expect("steps");
    let mut ran = Vec::new();
    for step in steps {
        let Some(script) = step["run"].as_str() else {
            assert!(step["uses"].is_string(), "a step that runs nothing: {step}");
            continue;
        };
        let name = step["name"].as_str().unwrap_or(script);
        as_the_author(&crate_dir, &["bash", "-e", "-c", script], &cache);
        ran.push(name.to_owned());
    }
    assert_eq!(
        ran,
        [
            "Toolchain",
            "Lint",
            "Test",
            "Build the component",
            "The input's CRD is current",
            "Install xfn",
            "Render the example"
        ],
        "every step of the workflow ran"
    );
}
