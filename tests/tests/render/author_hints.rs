//! The mistakes a function author makes first, each answered by an error
//! that names the fix: a core module, a forgotten `export!`, a relative
//! module path, a panic's backtrace note, a Development render against a
//! server of several functions, and what `xfn validate` catches up front.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use xfn_tests::{Run, free_port, run_xfn, run_xfn_within};

const MODULE: &str = "render.crossplane.io/runtime-wasm-module";

/// The smallest core module: what a wasm32-wasip1 build is, for the host.
const CORE_MODULE: &[u8] = b"\0asm\x01\0\0\0";

/// A component that exports nothing: what a crate without `export!` builds.
fn component_without_export() -> Vec<u8> {
    wasm_encoder::Component::new().finish()
}

fn scripted() -> PathBuf {
    xfn_tests::scripted_wasm()
}

/// A Function named `name` whose module is `module`.
fn function(name: &str, module: &str) -> Value {
    json!({"apiVersion": "pkg.crossplane.io/v1", "kind": "Function",
           "metadata": {"name": name, "annotations": {MODULE: module}}})
}

/// Writes an XR, a Composition whose steps call `steps` (step, function,
/// input) and `functions` into `dir`.
fn write_case(dir: &Path, steps: &[(&str, &str, Value)], functions: &[Value]) {
    let xr = json!({"apiVersion": "nop.example.org/v1alpha1", "kind": "XNopResource",
                    "metadata": {"name": "test-render"}});
    let pipeline: Vec<Value> = steps
        .iter()
        .map(|(step, function, input)| json!({"step": step, "functionRef": {"name": function}, "input": input}))
        .collect();
    let composition = json!({"apiVersion": "apiextensions.crossplane.io/v1", "kind": "Composition",
        "metadata": {"name": "hints"},
        "spec": {"compositeTypeRef": {"apiVersion": "nop.example.org/v1alpha1", "kind": "XNopResource"},
                 "mode": "Pipeline", "pipeline": pipeline}});
    let functions: Vec<String> = functions.iter().map(Value::to_string).collect();
    std::fs::write(dir.join("xr.yaml"), xr.to_string()).expect("write");
    std::fs::write(dir.join("composition.yaml"), composition.to_string()).expect("write");
    std::fs::write(dir.join("functions.yaml"), functions.join("\n---\n")).expect("write");
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|a| a.to_string()).collect()
}

fn render(dir: &Path) -> Run {
    run_xfn(
        dir,
        &args(&["render", "xr.yaml", "composition.yaml", "functions.yaml"]),
    )
}

/// A directory with `core.wasm` and `no-export.wasm`, and a one-step case
/// whose function's module is `module`.
fn case_with_module(module: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("core.wasm"), CORE_MODULE).expect("write");
    std::fs::write(
        dir.path().join("no-export.wasm"),
        component_without_export(),
    )
    .expect("write");
    write_case(
        dir.path(),
        &[("only", "fn", json!({}))],
        &[function("fn", module)],
    );
    dir
}

const CORE_HINT: &str = "this is a core wasm module, not a component: build it for wasm32-wasip2 (`cargo build --target wasm32-wasip2`)";
const EXPORT_HINT: &str = "did you forget `xfn_sdk::export!(YourFunction);` in the crate's lib.rs?";

/// `xfn serve --function fn=MODULE` in `dir`: it must refuse to start.
fn serve_refuses(dir: &Path, module: &str) -> Run {
    let flag = format!("fn={module}");
    let list = [
        "serve",
        "--insecure",
        "--address",
        "127.0.0.1:0",
        "--function",
        &flag,
    ];
    run_xfn_within(dir, &args(&list), Duration::from_secs(60))
}

#[test]
fn a_core_module_is_explained_by_render_serve_and_inspect_alike() {
    let dir = case_with_module("core.wasm");
    render(dir.path()).assert_failed_with(CORE_HINT);
    serve_refuses(dir.path(), "core.wasm").assert_failed_with(CORE_HINT);
    run_xfn(dir.path(), &args(&["inspect", "core.wasm"])).assert_failed_with(CORE_HINT);
}

#[test]
fn a_forgotten_export_is_named_with_its_fix() {
    let dir = case_with_module("no-export.wasm");
    render(dir.path()).assert_failed_with(EXPORT_HINT);
    serve_refuses(dir.path(), "no-export.wasm").assert_failed_with(EXPORT_HINT);
}

#[test]
fn a_missing_relative_module_names_the_path_tried_and_how_it_resolved() {
    let dir = tempfile::tempdir().expect("temp dir");
    // The first Function is fine; both missing ones are reported at once,
    // before any function is compiled.
    let good = scripted().display().to_string();
    write_case(
        dir.path(),
        &[
            ("a", "good", json!({})),
            ("b", "lost", json!({})),
            ("c", "gone", json!({})),
        ],
        &[
            function("good", &good),
            function("lost", "build/lost.wasm"),
            function("gone", "gone.wasm"),
        ],
    );
    let root = dir.path().canonicalize().expect("canonical");
    let run = render(&root);
    for (name, file) in [("lost", "build/lost.wasm"), ("gone", "gone.wasm")] {
        let tried = root.join(file).display().to_string();
        run.assert_failed_with(&format!(
            "Function {name:?}: wasm module {file:?} not found at {tried:?}: a relative path is resolved against the current directory ({})",
            root.display()
        ));
    }
    assert!(
        !run.stderr.contains("cannot load function"),
        "{}",
        run.stderr
    );
    let served = serve_refuses(&root, "build/lost.wasm");
    served.assert_failed_with(&format!(
        "wasm module \"build/lost.wasm\" not found at {:?}",
        root.join("build/lost.wasm").display().to_string()
    ));
}

#[test]
fn validate_reports_every_module_problem_at_once() {
    let dir = case_with_module("core.wasm");
    let good = scripted().display().to_string();
    write_case(
        dir.path(),
        &[
            ("a", "good", json!({})),
            ("b", "lost", json!({})),
            ("c", "core", json!({})),
            ("d", "bare", json!({})),
        ],
        &[
            function("good", &good),
            function("lost", "lost.wasm"),
            function("core", "core.wasm"),
            function("bare", "no-export.wasm"),
        ],
    );
    let run = run_xfn(
        dir.path(),
        &args(&["validate", "composition.yaml", "functions.yaml"]),
    );
    run.assert_failed_with("xfn: error: Composition or Functions are invalid:\n");
    let field = format!("metadata.annotations[{MODULE:?}]");
    run.assert_failed_with(&format!(
        "Function \"lost\": {field}: wasm module \"lost.wasm\" not found at "
    ));
    run.assert_failed_with(&format!("Function \"core\": {field}: "));
    run.assert_failed_with(CORE_HINT);
    run.assert_failed_with(&format!("Function \"bare\": {field}: "));
    run.assert_failed_with(EXPORT_HINT);
    assert!(!run.stderr.contains("\"good\""), "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 4, "{}", run.stderr);

    // With only the good Function, the same Composition's other steps
    // are unknown functions, and nothing else is reported.
    write_case(
        dir.path(),
        &[("a", "good", json!({}))],
        &[function("good", &good)],
    );
    let run = run_xfn(
        dir.path(),
        &args(&["validate", "composition.yaml", "functions.yaml"]),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "Composition \"hints\" is valid\n");
}

#[test]
fn a_panic_hint_fits_the_sandbox() {
    let dir = tempfile::tempdir().expect("temp dir");
    let module = scripted().display().to_string();
    write_case(
        dir.path(),
        &[("boom", "fn", json!({"fault": "panic"}))],
        &[function("fn", &module)],
    );
    let run = render(dir.path());
    run.assert_failed_with("scripted panic");
    run.assert_failed_with(
        "RUST_BACKTRACE cannot reach it; for a backtrace, call the function natively, e.g. in a unit test (`cargo test`) run with RUST_BACKTRACE=1",
    );
    assert!(
        !run.stderr
            .contains("note: run with `RUST_BACKTRACE=1` environment variable"),
        "{}",
        run.stderr
    );
}

/// Waits until something listens on 127.0.0.1:`port`, at most 60 s.
fn wait_for_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "xfn serve did not listen on {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Stops the server it holds when dropped.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_development_render_against_a_multi_function_server_says_how_to_dial_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let port = free_port();
    let module = scripted().display().to_string();
    let server = std::process::Command::new(xfn_tests::xfn_bin())
        .current_dir(dir.path())
        .args([
            "serve",
            "--insecure",
            "--address",
            &format!("127.0.0.1:{port}"),
        ])
        .args([
            "--function",
            &format!("one={module}"),
            "--function",
            &format!("two={module}"),
        ])
        .env("XFN_CACHE_DIR", dir.path().join("cache"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start xfn serve");
    let _server = Server(server);
    wait_for_port(port);
    let development = json!({"apiVersion": "pkg.crossplane.io/v1", "kind": "Function",
        "metadata": {"name": "one", "annotations": {
            "render.crossplane.io/runtime": "Development",
            "render.crossplane.io/runtime-development-target": format!("127.0.0.1:{port}")}}});
    write_case(dir.path(), &[("dev", "one", json!({}))], &[development]);
    let run = run_xfn_within(
        dir.path(),
        &args(&["render", "xr.yaml", "composition.yaml", "functions.yaml"]),
        Duration::from_secs(60),
    );
    run.assert_failed_with("no function is served at authority");
    run.assert_failed_with(
        "serve the function on a port of its own (xfn serve --function-port NAME=PORT, or the annotation xfn.dev/serve-port) \
         and point the annotation render.crossplane.io/runtime-development-target at that port",
    );
}
