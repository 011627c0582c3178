//! Builds the test guests (`tests/guests/*`) as wasm components, so that
//! `cargo test` needs no other step for them: wasmtime builds its test
//! programs the same way. The tests find them at `XFN_TEST_GUESTS_DIR`
//! ([`xfn_tests::test_guests_dir`]).
//!
//! The guests are built by a cargo of their own, into `target/test-guests`
//! (a target directory apart, whose lock the outer build doesn't hold),
//! for `wasm32-wasip2` with the workspace's `wasm` profile.

use std::env;
use std::path::PathBuf;
use std::process::Command;

/// The guest packages, and the directories their sources are in.
const GUESTS: &[(&str, &str)] = &[("xfn-test-scripted", "guests/scripted")];

fn main() {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let workspace = manifest.join("..");
    let target = env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target"))
        .join("test-guests");
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .current_dir(&workspace)
        .args([
            "build",
            "--quiet",
            "--profile",
            "wasm",
            "--target",
            "wasm32-wasip2",
        ])
        .arg("--target-dir")
        .arg(&target)
        // The outer build's settings are for the host, not for the guests.
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET")
        .env_remove("CARGO_TARGET_DIR")
        // `make test` lints the workspace as it builds it for the host.
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("CLIPPY_ARGS");
    for (package, dir) in GUESTS {
        build.args(["-p", package]);
        println!("cargo:rerun-if-changed={}", manifest.join(dir).display());
    }
    println!(
        "cargo:rerun-if-changed={}",
        workspace.join("guest-sdk").display()
    );
    println!("cargo:rerun-if-changed={}", workspace.join("wit").display());
    match build.status() {
        Ok(status) if status.success() => {}
        Ok(status) => panic!(
            "building the test guests failed ({status}); the wasm32-wasip2 target must be installed \
             (`rustup target add wasm32-wasip2`, which `make wasm-target` runs)"
        ),
        Err(e) => panic!("cannot run cargo to build the test guests: {e}"),
    }
    println!(
        "cargo:rustc-env=XFN_TEST_GUESTS_DIR={}",
        target.join("wasm32-wasip2/wasm").display()
    );
}
