//! `xfn-sdk` is ready to publish: `cargo package` (offline, without the
//! verifying build, which `cargo package -p xfn-sdk` adds) makes a crate
//! that carries xfn's WIT world byte for byte, its README, and the
//! metadata crates.io and docs.rs show.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn cargo() -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.current_dir(workspace());
    command
}

/// Runs `command` and returns its standard output; panics with its
/// standard error if it fails.
fn output(command: &mut Command) -> String {
    let out = command.output().expect("run cargo");
    assert!(
        out.status.success(),
        "{command:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_package_lists_the_wit_world_and_the_readme() {
    let list = output(cargo().args([
        "package",
        "-p",
        "xfn-sdk",
        "--list",
        "--allow-dirty",
        "--offline",
    ]));
    let files: Vec<&str> = list.lines().collect();
    for wanted in ["wit/function.wit", "README.md", "src/lib.rs", "Cargo.toml"] {
        assert!(files.contains(&wanted), "{wanted} not packaged: {files:?}");
    }
}

#[test]
fn the_packaged_crate_carries_the_wit_and_complete_metadata() {
    let target = tempfile::tempdir().expect("temp dir");
    output(
        cargo()
            .args([
                "package",
                "-p",
                "xfn-sdk",
                "--no-verify",
                "--allow-dirty",
                "--offline",
            ])
            .arg("--target-dir")
            .arg(target.path()),
    );
    let version = env!("CARGO_PKG_VERSION");
    let crate_file = target
        .path()
        .join("package")
        .join(format!("xfn-sdk-{version}.crate"));
    let file = std::fs::File::open(&crate_file).expect("open the .crate");
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let prefix = format!("xfn-sdk-{version}/");
    let mut wit = None;
    let mut manifest = None;
    for entry in archive.entries().expect("read the .crate") {
        let mut entry = entry.expect("an entry");
        let path = entry.path().expect("a path").to_string_lossy().into_owned();
        let mut text = String::new();
        match path.strip_prefix(&prefix) {
            Some("wit/function.wit") => {
                entry.read_to_string(&mut text).expect("read the WIT");
                wit = Some(text);
            }
            Some("Cargo.toml") => {
                entry.read_to_string(&mut text).expect("read Cargo.toml");
                manifest = Some(text);
            }
            _ => {}
        }
    }
    let source = std::fs::read_to_string(workspace().join("wit/function.wit")).expect("wit/");
    assert_eq!(
        wit.as_deref(),
        Some(source.as_str()),
        "the packaged WIT differs from wit/function.wit"
    );
    let manifest = manifest.expect("a Cargo.toml in the .crate");
    for key in [
        "description = ",
        "license = \"Apache-2.0\"",
        "repository = ",
        "documentation = \"https://docs.rs/xfn-sdk\"",
        "readme = \"README.md\"",
        "keywords = ",
        "categories = ",
        "rust-version = ",
    ] {
        assert!(manifest.contains(key), "{key} missing from:\n{manifest}");
    }
}
