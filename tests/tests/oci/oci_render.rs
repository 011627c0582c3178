//! `xfn render` with a function pulled from a real registry: pushed with
//! `xfn push`, rendered from the registry, then from the cache alone.

use std::path::{Path, PathBuf};

use crate::oci_support::Registry;
use xfn_tests::{run_xfn, wasm_dir};

fn docs_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/docs")
}

fn functions_file(dir: &Path, package: &str, policy: Option<&str>) -> String {
    let annotations = policy
        .map(|p| {
            format!("  annotations:\n    render.crossplane.io/runtime-docker-pull-policy: {p}\n")
        })
        .unwrap_or_default();
    let text = format!(
        "apiVersion: pkg.crossplane.io/v1\nkind: Function\nmetadata:\n  name: function-patch-and-transform\n{annotations}spec:\n  package: {package}\n"
    );
    let path = dir.join(format!("functions-{}.yaml", policy.unwrap_or("default")));
    std::fs::write(&path, text).expect("write functions");
    path.display().to_string()
}

/// Publishes our patch-and-transform component under its usual name with
/// `xfn push`, and returns its reference.
fn push_patch_and_transform(registry: &Registry, work: &Path) -> String {
    let package = registry.reference("crossplane-contrib/function-patch-and-transform:v0.8.2");
    let wasm = wasm_dir().join("function_patch_and_transform.wasm");
    let push = run_xfn(
        work,
        &[
            "push".to_owned(),
            wasm.display().to_string(),
            package.clone(),
        ],
    );
    assert_eq!(push.code, 0, "xfn push: {}", push.stderr);
    package
}

fn render(work: &Path, cache: &Path, functions: &str) -> xfn_tests::Run {
    let docs = docs_dir();
    let args = [
        "render".to_owned(),
        docs.join("xr.yaml").display().to_string(),
        docs.join("composition.yaml").display().to_string(),
        functions.to_owned(),
        "--cache-dir".to_owned(),
        cache.display().to_string(),
    ];
    run_xfn(work, &args)
}

#[test]
fn the_docs_example_renders_from_a_registry_and_then_from_the_cache() {
    let mut registry = Registry::start();
    let work = tempfile::tempdir().expect("tempdir");
    let cache = work.path().join("cache");
    let want =
        std::fs::read_to_string(docs_dir().join("expected-output.yaml")).expect("expected output");

    // Publish our patch-and-transform component under its usual name.
    let package = push_patch_and_transform(&registry, work.path());

    // Rendered from the registry: the built-in is not used.
    let functions = functions_file(work.path(), &package, None);
    let run = render(work.path(), &cache, &functions);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, want);
    assert!(
        !run.stderr.contains("built-in"),
        "pulled, not built in: {}",
        run.stderr
    );

    // With the registry gone, Never renders from the warm cache alone.
    registry.stop();
    let never = functions_file(work.path(), &package, Some("Never"));
    let run = render(work.path(), &cache, &never);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, want);

    // Always needs the registry: it is down, so xfn says so and falls back
    // to the function that ships with it.
    let always = functions_file(work.path(), &package, Some("Always"));
    let run = render(work.path(), &cache, &always);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, want);
    assert!(
        run.stderr.contains("falling back to the built-in function"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_package_that_is_not_cached_and_not_reachable_is_a_clear_error() {
    let work = tempfile::tempdir().expect("tempdir");
    let port = crate::oci_support::free_port();
    let functions = work.path().join("functions.yaml");
    std::fs::write(
        &functions,
        format!(
            "apiVersion: pkg.crossplane.io/v1\nkind: Function\nmetadata:\n  name: function-patch-and-transform\nspec:\n  package: 127.0.0.1:{port}/acme/function-unknown:v1\n"
        ),
    )
    .expect("write functions");
    let run = render(
        work.path(),
        &work.path().join("cache"),
        &functions.display().to_string(),
    );
    assert_eq!(run.code, 1);
    assert!(run.stdout.is_empty());
    assert!(
        run.stderr.starts_with(
            "xfn: error: cannot render composite resource: cannot start function runtimes: cannot get runtime for Function \"function-patch-and-transform\": "
        ) && run.stderr.contains(&format!("127.0.0.1:{port}/acme/function-unknown:v1")),
        "{}",
        run.stderr
    );
}

#[test]
fn a_cache_that_cannot_be_written_is_warned_about_and_render_goes_on() {
    let registry = Registry::start();
    let work = tempfile::tempdir().expect("tempdir");
    let package = push_patch_and_transform(&registry, work.path());
    // A cache under a regular file can be neither read nor written, even
    // by root (a read-only directory would not stop root).
    let blocker = work.path().join("not-a-directory");
    std::fs::write(&blocker, "").expect("write");
    let cache = blocker.join("cache");
    let functions = functions_file(work.path(), &package, None);
    let run = render(work.path(), &cache, &functions);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let want =
        std::fs::read_to_string(docs_dir().join("expected-output.yaml")).expect("expected output");
    assert_eq!(run.stdout, want);
    assert!(
        run.stderr.contains("continuing without caching it"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("built-in"),
        "pulled, not built in: {}",
        run.stderr
    );
}
