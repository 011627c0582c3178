//! A function's own output: its log lines, stdout and stderr reach
//! `xfn render`'s stderr as `[step] LEVEL message` at the level `-v` or
//! `XFN_LOG` chooses, and a server's logs with the function's name.

use std::path::Path;

use serde_json::json;
use xfn_runtime::HostConfig;
use xfn_runtime::protocol::RunFunctionRequest;
use xfn_tests::{Run, load, runtime, xfn_bin};

/// A render case whose one step, `say-hello`, logs a line at info level
/// and writes `eeeee` to stderr.
fn write_case(dir: &Path) {
    let xr = json!({"apiVersion": "nop.example.org/v1alpha1", "kind": "XNopResource",
                    "metadata": {"name": "test-render"}});
    let composition = json!({"apiVersion": "apiextensions.crossplane.io/v1", "kind": "Composition",
        "metadata": {"name": "logs"},
        "spec": {"compositeTypeRef": {"apiVersion": "nop.example.org/v1alpha1", "kind": "XNopResource"},
                 "mode": "Pipeline",
                 "pipeline": [{"step": "say-hello", "functionRef": {"name": "function-scripted"},
                               "input": {"log": "hello from the guest", "stderrBytes": 5}}]}});
    let module = xfn_tests::scripted_wasm();
    let functions = json!({"apiVersion": "pkg.crossplane.io/v1", "kind": "Function",
        "metadata": {"name": "function-scripted",
                     "annotations": {"render.crossplane.io/runtime-wasm-module": module}},
        "spec": {"package": "xpkg.xfn.dev/xfn/function-scripted:v0.1.0"}});
    for (file, doc) in [
        ("xr.yaml", xr),
        ("composition.yaml", composition),
        ("functions.yaml", functions),
    ] {
        std::fs::write(dir.join(file), doc.to_string()).expect("write case file");
    }
}

/// Renders the case with `flags`, `XFN_LOG` set to `xfn_log` if given.
fn render(flags: &[&str], xfn_log: Option<&str>) -> Run {
    let dir = tempfile::tempdir().expect("temp dir");
    write_case(dir.path());
    let mut command = std::process::Command::new(xfn_bin());
    command
        .current_dir(dir.path())
        .args(["render", "xr.yaml", "composition.yaml", "functions.yaml"])
        .args(flags)
        .env("XFN_CACHE_DIR", dir.path().join("cache"))
        .env_remove("XFN_LOG");
    if let Some(level) = xfn_log {
        command.env("XFN_LOG", level);
    }
    let output = command.output().expect("run xfn");
    let run = Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    };
    assert_eq!(run.code, 0, "{}", run.stderr);
    run
}

const LOGGED: &str = "[say-hello] INFO hello from the guest\n";
const PRINTED: &str = "[say-hello] INFO (stderr) eeeee\n";

#[test]
fn render_prints_a_functions_info_lines_at_v_and_not_without() {
    let quiet = render(&[], None);
    assert!(
        !quiet.stderr.contains("hello from the guest"),
        "{}",
        quiet.stderr
    );
    assert!(!quiet.stderr.contains("eeeee"), "{}", quiet.stderr);
    for flags in [&["-v"][..], &["--verbose"], &["-vv"]] {
        let run = render(flags, None);
        assert!(run.stderr.contains(LOGGED), "{flags:?}: {}", run.stderr);
        assert!(run.stderr.contains(PRINTED), "{flags:?}: {}", run.stderr);
        assert!(
            !run.stdout.contains("hello from the guest"),
            "{}",
            run.stdout
        );
    }
}

#[test]
fn xfn_log_selects_the_level_too() {
    let run = render(&[], Some("info"));
    assert!(run.stderr.contains(LOGGED), "{}", run.stderr);
    assert!(run.stderr.contains(PRINTED), "{}", run.stderr);
    // XFN_LOG wins over -v.
    let run = render(&["-vvv"], Some("warn"));
    assert!(
        !run.stderr.contains("hello from the guest"),
        "{}",
        run.stderr
    );
}

/// What `xfn serve` logs: the same lines as structured events with the
/// function's name (serve runs its functions as this host does).
#[test]
fn a_servers_logs_carry_the_functions_name() {
    let rt = runtime(HostConfig::default());
    let f = load(&rt, "function-scripted", "xfn_test_scripted");
    let (logs, _guard) = xfn_tests::logs::Logs::capture(tracing::Level::INFO);
    let request = RunFunctionRequest {
        input: Some(json!({"log": "hello from the guest", "stderrBytes": 5}).to_string()),
        ..RunFunctionRequest::default()
    };
    f.call_blocking(&request, None).expect("the call runs");
    let text = logs.text();
    assert!(
        text.contains(r#"INFO xfn::function: hello from the guest function="function-scripted""#),
        "{text}"
    );
    assert!(
        text.contains(r#"INFO xfn::function: eeeee function="function-scripted" stream="stderr""#),
        "{text}"
    );
}
