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

#[test]
fn a_zero_memory_limit_is_refused_before_anything_runs() {
    for command in [
        &[
            "render",
            "--memory-limit",
            "0",
            "xr.yaml",
            "c.yaml",
            "f.yaml",
        ][..],
        // An address that cannot be parsed: were the flag accepted, serve
        // would stop there instead of listening.
        &[
            "serve",
            "--memory-limit",
            "0",
            "--insecure",
            "--address",
            "no-port",
        ][..],
    ] {
        let out = xfn(command);
        assert!(!out.status.success(), "{command:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("--memory-limit") && stderr.contains("0 is not in 1.."),
            "{command:?}: {stderr}"
        );
    }
}
