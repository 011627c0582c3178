//! The `xfn` command line as a user first meets it. (Building this test
//! also makes `cargo test` build the `xfn` binary that the end-to-end tests
//! in `tests/` run.)

use std::process::Command;

fn xfn(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_xfn"))
        .args(args)
        .output()
        .expect("run xfn")
}

#[test]
fn render_help_lists_every_classic_flag() {
    let out = xfn(&["render", "--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--context-files",
        "--context-values",
        "--include-function-results",
        "--include-full-xr",
        "--observed-resources",
        "--extra-resources",
        "--required-resources",
        "--required-schemas",
        "--include-context",
        "--function-credentials",
        "--function-annotations",
        "--timeout",
        "--xrd",
    ] {
        assert!(help.contains(flag), "render --help lacks {flag}:\n{help}");
    }
}

#[test]
fn every_subcommand_is_listed() {
    let out = xfn(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for command in ["render", "validate", "serve", "push", "pull", "inspect"] {
        assert!(
            help.contains(command),
            "xfn --help lacks {command}:\n{help}"
        );
    }
}

#[test]
fn missing_arguments_are_an_error() {
    let out = xfn(&["render", "only-one.yaml"]);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("required arguments were not provided"));
}

/// Asserts that `args` are refused as a usage error naming `flag`, with
/// `reason`, before anything runs (and without a panic).
fn refused(args: &[&str], flag: &str, reason: &str) {
    let out = xfn(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(
        stderr.contains("invalid value") && stderr.contains(flag),
        "{args:?}: {stderr}"
    );
    assert!(stderr.contains(reason), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
}

#[test]
fn timeouts_out_of_range_are_refused_when_parsed() {
    for command in ["render", "serve"] {
        let mut base = vec![command];
        if command == "render" {
            base.extend(["xr.yaml", "composition.yaml", "functions.yaml"]);
        }
        for (value, reason) in [
            ("0s", "is too short: calls need at least 10ms"),
            ("1ns", "is too short: calls need at least 10ms"),
            ("18446744073709551615s999ms", "is too long: at most 1day"),
            ("25h", "is too long: at most 1day"),
        ] {
            let mut args = base.clone();
            args.extend(["--timeout", value]);
            refused(&args, "--timeout", reason);
        }
    }
}

#[test]
fn too_many_workers_are_refused_when_parsed() {
    refused(
        &["serve", "--insecure", "--workers", "65535"],
        "--workers",
        "65535 is not in 1..=1024",
    );
    refused(
        &["serve", "--insecure", "--workers", "0"],
        "--workers",
        "0 is not in 1..=1024",
    );
}
