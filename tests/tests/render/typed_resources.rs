//! Typed provider resources (examples/typed-resources): a function whose
//! composed Bucket is the provider's own type, generated from the
//! provider's CRD by kopium, compiles (`make wasm` builds it) and renders,
//! first without and then with the bucket observed; and the generated
//! types are what kopium makes of the CRD today, when kopium is installed
//! (`make kopium`; `XFN_KOPIUM` names another).

use std::path::{Path, PathBuf};
use std::process::Command;

use xfn_tests::run_xfn;

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/typed-resources")
}

/// Renders the example (with `extra` arguments) from a directory holding
/// its inputs and a Functions file naming the component `make wasm` built.
fn render(extra: &[&str]) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let module = xfn_tests::wasm_dir().join("typed_resources.wasm");
    let functions = std::fs::read_to_string(example().join("example/functions.yaml"))
        .expect("functions")
        .replace(
            "target/wasm32-wasip2/wasm/typed_resources.wasm",
            &module.display().to_string(),
        );
    std::fs::write(dir.path().join("functions.yaml"), functions).expect("write");
    let mut args: Vec<String> = vec!["render".into()];
    for file in ["example/xr.yaml", "example/composition.yaml"] {
        args.push(example().join(file).display().to_string());
    }
    args.push("functions.yaml".into());
    args.extend(
        extra
            .iter()
            .map(|a| a.replace("{example}", &example().display().to_string())),
    );
    let run = run_xfn(dir.path(), &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.stdout
}

#[test]
fn a_function_of_generated_provider_types_renders() {
    let fresh = render(&[]);
    for wanted in [
        "kind: Bucket",
        "    forceDestroy: true\n    region: eu-west-3\n    tags:\n      crossplane.io/composite: typed-storage\n      team: platform\n",
        "message: 'Unready resources: bucket'",
    ] {
        assert!(fresh.contains(wanted), "{wanted:?} in {fresh}");
    }
    assert!(!fresh.contains("bucketArn"), "{fresh}");

    let observed = render(&["--observed-resources", "{example}/example/observed.yaml"]);
    for wanted in [
        "status:\n  bucketArn: arn:aws:s3:::typed-storage-abcde\n",
        "  name: typed-storage-abcde\n",
        "    reason: Available\n    status: \"True\"\n    type: Ready\n",
    ] {
        assert!(observed.contains(wanted), "{wanted:?} in {observed}");
    }
}

/// kopium: `$XFN_KOPIUM`, else on PATH, else where `make kopium` installs it.
fn kopium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("XFN_KOPIUM") {
        return Some(PathBuf::from(path));
    }
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let installed = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace.join("target"), PathBuf::from)
        .join("kopium/bin/kopium");
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join("kopium"))
        .chain([installed])
        .find(|path| path.is_file())
}

#[test]
fn the_generated_types_are_what_kopium_makes_of_the_crd() {
    let generated = example().join("src/bucket.rs");
    let text = std::fs::read_to_string(&generated).expect("bucket.rs");
    // The command that made it, which kopium writes in its header.
    let command = text
        .lines()
        .find_map(|l| l.strip_prefix("// kopium command: kopium "))
        .expect("the kopium command in the header");
    let Some(kopium) = kopium() else {
        eprintln!("kopium is not installed (`make kopium`): not regenerating {generated:?}");
        return;
    };
    let output = Command::new(&kopium)
        .args(command.split_whitespace())
        .current_dir(example())
        .output()
        .expect("run kopium");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let regenerated = rustfmt(&output.stdout);
    // The version line differs between kopium releases; the rest must not.
    let without_version = |text: &str| {
        text.lines()
            .filter(|l| !l.starts_with("// kopium version:"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        without_version(&regenerated),
        without_version(&text),
        "src/bucket.rs is not what `kopium {command}` makes of the CRD now: regenerate it"
    );
}

/// `source` as `cargo fmt` formats it in the workspace.
fn rustfmt(source: &[u8]) -> String {
    use std::io::Write as _;
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2024", "--emit", "stdout"])
        .current_dir(workspace)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("rustfmt");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(source)
        .expect("write");
    let output = child.wait_with_output().expect("rustfmt");
    assert!(output.status.success(), "rustfmt failed");
    String::from_utf8(output.stdout).expect("UTF-8")
}
