//! Local files that are not what they should be (issue 12, item 17): a
//! FIFO, a device or an oversized file given as an input, a module or an
//! `inspect` target is refused at once with an error naming the path and
//! what is wrong, instead of hanging or reading gigabytes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use xfn_tests::{Run, run_xfn_within};

/// Every run here is refused before anything runs; it used to hang.
const LIMIT: Duration = Duration::from_secs(60);

/// A directory holding a render case that succeeds as it is.
fn case() -> tempfile::TempDir {
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("render/cases/c1-success");
    let dir = tempfile::tempdir().expect("temp dir");
    for file in ["xr.yaml", "composition.yaml", "functions.yaml"] {
        std::fs::copy(source.join(file), dir.path().join(file)).expect("copy the case");
    }
    dir
}

fn module() -> String {
    xfn_tests::scripted_wasm().display().to_string()
}

/// `xfn render` of the case in `dir`, with `module` as every function's
/// wasm module.
fn render(dir: &Path, module: &str) -> Run {
    let args = [
        "render",
        "xr.yaml",
        "composition.yaml",
        "functions.yaml",
        "-a",
        &format!("render.crossplane.io/runtime-wasm-module={module}"),
    ]
    .map(String::from);
    run_xfn_within(dir, &args, LIMIT)
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("a path");
    // SAFETY: `c` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// Replaces `file` in `dir` with a FIFO no one writes to.
fn fifo_for(dir: &Path, file: &str) -> PathBuf {
    let path = dir.join(file);
    let _ = std::fs::remove_file(&path);
    mkfifo(&path);
    path
}

const FIFO: &str = "it is a FIFO (named pipe), not a regular file";

#[test]
fn the_case_renders_as_it_is() {
    let dir = case();
    let run = render(dir.path(), &module());
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn a_fifo_as_an_input_is_refused_at_once() {
    for (file, what) in [
        ("xr.yaml", "cannot load composite resource from \"xr.yaml\""),
        (
            "composition.yaml",
            "cannot load Composition from \"composition.yaml\"",
        ),
        (
            "functions.yaml",
            "cannot load functions from \"functions.yaml\"",
        ),
    ] {
        let dir = case();
        fifo_for(dir.path(), file);
        let run = render(dir.path(), &module());
        run.assert_failed_with(&format!(
            "{what}: cannot read {file}: {FIFO}; a YAML input must be a regular file"
        ));
    }
}

#[test]
fn a_fifo_as_a_module_is_refused_at_once() {
    let dir = case();
    let fifo = fifo_for(dir.path(), "module.wasm");
    let run = render(dir.path(), &fifo.display().to_string());
    run.assert_failed_with(&format!(
        "cannot read wasm module {:?}: {FIFO}; a wasm component must be a regular file",
        fifo.display().to_string()
    ));
}

#[test]
fn dev_zero_as_an_input_or_a_module_is_refused_before_reading() {
    let dir = case();
    let args = ["render", "/dev/zero", "composition.yaml", "functions.yaml"].map(String::from);
    let run = run_xfn_within(dir.path(), &args, LIMIT);
    run.assert_failed_with("cannot read /dev/zero: it is a character device, not a regular file");
    let run = render(dir.path(), "/dev/zero");
    run.assert_failed_with(
        "cannot read wasm module \"/dev/zero\": it is a character device, not a regular file",
    );
}

/// The attack round's M4: local YAML flow lists cost about 130 times
/// their size to load (a 32 MiB XR passed 4 GB). A text of more nodes than
/// the guard's bound is refused before it is loaded, in bounded memory.
#[test]
fn an_input_of_millions_of_tiny_nodes_is_refused_before_loading() {
    let dir = case();
    let mut xr = String::from(
        "apiVersion: example.org/v1\nkind: XR\nmetadata:\n  name: x\nspec:\n  items: [",
    );
    while xr.len() < (32 << 20) {
        xr.push_str("a,");
    }
    xr.push_str("a]\n");
    std::fs::write(dir.path().join("xr.yaml"), xr).expect("write");
    let started = std::time::Instant::now();
    let run = render(dir.path(), &module());
    run.assert_failed_with(
        "YAML text has more than 2097152 nodes (scalars, collections and aliases); \
         refusing it before it is loaded",
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn an_oversized_input_or_module_is_refused_naming_its_cap() {
    let dir = case();
    // Sparse files: their size is what counts, and they take no disk.
    let big = std::fs::File::create(dir.path().join("xr.yaml")).expect("create");
    big.set_len((64 << 20) + 1).expect("grow");
    let run = render(dir.path(), &module());
    run.assert_failed_with(
        "cannot read xr.yaml: it is 67108865 bytes, over the limit of 64 MiB for a YAML input",
    );

    let dir = case();
    let path = dir.path().join("big.wasm");
    let big = std::fs::File::create(&path).expect("create");
    big.set_len((256 << 20) + 1).expect("grow");
    let run = render(dir.path(), &path.display().to_string());
    run.assert_failed_with("it is 268435457 bytes, over the limit of 256 MiB for a wasm component");
}

#[test]
fn a_fifo_for_a_served_function_is_refused_at_once() {
    let dir = case();
    let fifo = fifo_for(dir.path(), "fn.wasm");
    let args = [
        "serve",
        "--insecure",
        "--address",
        "127.0.0.1:0",
        "--function",
        &format!("fn={}", fifo.display()),
    ]
    .map(String::from);
    let run = run_xfn_within(dir.path(), &args, LIMIT);
    run.assert_failed_with(&format!("cannot read {}: {FIFO}", fifo.display()));
}

#[test]
fn inspect_treats_an_existing_fifo_as_a_file_not_a_reference() {
    let dir = case();
    let fifo = fifo_for(dir.path(), "fn.wasm");
    let args = ["inspect".to_owned(), fifo.display().to_string()];
    let run = run_xfn_within(dir.path(), &args, LIMIT);
    run.assert_failed_with(&format!("cannot read {}: {FIFO}", fifo.display()));
    assert!(!run.stderr.contains("registry"), "{}", run.stderr);
    // A directory is a path too, not a reference.
    let args = ["inspect".to_owned(), dir.path().display().to_string()];
    let run = run_xfn_within(dir.path(), &args, LIMIT);
    run.assert_failed_with("it is a directory, not a regular file");
}
