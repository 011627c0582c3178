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

/// `KEY=VALUE` flags are parsed by the command line, before anything
/// runs, with the flag named.
#[test]
fn malformed_pairs_are_refused_when_parsed() {
    let render = ["render", "xr.yaml", "composition.yaml", "functions.yaml"];
    for (flag, value, reason) in [
        (
            "--function-annotations",
            "no-equals-sign",
            "is not KEY=VALUE",
        ),
        ("--context-values", "=v", "is not KEY=VALUE"),
        ("--context-files", "k=", "has no path"),
    ] {
        let mut args = render.to_vec();
        args.extend([flag, value]);
        refused(&args, flag, reason);
    }
    refused(
        &["serve", "--insecure", "--function-port", "f=http"],
        "--function-port",
        "\"http\" is not a port",
    );
    refused(
        &["serve", "--insecure", "--function", "f"],
        "--function",
        "is not NAME=PATH",
    );
    refused(
        &["controller", "--pod-label", "nolabel"],
        "--pod-label",
        "is not KEY=VALUE",
    );
}

/// Every command that pulls takes the same registry flags.
#[test]
fn every_command_that_pulls_takes_the_registry_flags() {
    for command in [
        &["render", "--help"][..],
        &["operation", "render", "--help"],
        &["serve", "--help"],
        &["controller", "--help"],
        &["pull", "--help"],
    ] {
        let out = xfn(command);
        let help = String::from_utf8_lossy(&out.stdout);
        for flag in [
            "--cache-dir",
            "--insecure-registry",
            "--ca-cert",
            "--pull-secret",
            "--docker-config",
            "--max-layer-size",
            "--pull-timeout",
        ] {
            assert!(help.contains(flag), "{command:?} lacks {flag}:\n{help}");
        }
    }
}

/// The attack round's low finding: `--max-recv-message-size 0` was
/// accepted, and the server then refused every call.
#[test]
fn a_zero_message_size_is_refused_when_parsed() {
    for command in [&["serve", "--insecure"][..], &["controller"]] {
        let mut args = command.to_vec();
        args.extend(["--max-recv-message-size", "0"]);
        refused(&args, "--max-recv-message-size", "0 is not in 1..=2048");
    }
}

/// Runs `xfn` with `args`, killing it if it runs past `limit`.
fn xfn_bounded(args: &[&str], limit: std::time::Duration) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_xfn"))
        .args(args)
        .env_remove("XFN_LOG")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run xfn");
    let started = std::time::Instant::now();
    while child.try_wait().expect("wait for xfn").is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().expect("xfn's output")
}

#[cfg(unix)]
fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(path)
        .expect("metadata")
        .permissions()
        .mode()
        & 0o777
}

#[cfg(unix)]
#[test]
fn generated_certs_replace_planted_links_and_keep_keys_private() {
    use std::os::unix::fs::{PermissionsExt, symlink};
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("certs");
    std::fs::create_dir_all(dir.join("server")).unwrap();
    std::fs::create_dir_all(dir.join("client")).unwrap();
    // Links planted where keys go: to a file that doesn't exist yet and to
    // one that does.
    let stolen = tmp.path().join("stolen");
    symlink(&stolen, dir.join("ca.key")).unwrap();
    let planted = tmp.path().join("planted.txt");
    std::fs::write(&planted, "mine").unwrap();
    symlink(&planted, dir.join("server/tls.key")).unwrap();
    // An old, world-readable key.
    let old_key = dir.join("client/tls.key");
    std::fs::write(&old_key, "old").unwrap();
    std::fs::set_permissions(&old_key, std::fs::Permissions::from_mode(0o644)).unwrap();

    let out = xfn(&["serve", "--generate-certs", dir.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!stolen.exists(), "a key was written through a link");
    assert_eq!(std::fs::read_to_string(&planted).unwrap(), "mine");
    for key in ["ca.key", "server/tls.key", "client/tls.key"] {
        let path = dir.join(key);
        let meta = std::fs::symlink_metadata(&path).unwrap();
        assert!(meta.file_type().is_file(), "{key} is a plain file");
        assert_eq!(mode(&path), 0o600, "{key}");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("PRIVATE KEY"), "{key}: {text}");
    }
    for cert in [
        "ca.crt",
        "server/tls.crt",
        "server/ca.crt",
        "client/tls.crt",
    ] {
        assert_eq!(mode(&dir.join(cert)), 0o644, "{cert}");
    }
}

#[cfg(unix)]
#[test]
fn generated_certs_refuse_a_linked_directory() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("certs");
    std::fs::create_dir_all(&dir).unwrap();
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, dir.join("server")).unwrap();

    let out = xfn(&["serve", "--generate-certs", dir.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "xfn: error: refusing to write TLS files into {}: it is a symbolic link; \
             remove it or choose another directory\n",
            dir.join("server").display()
        )
    );
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}

/// A built component to serve: hello, from `make wasm`'s output.
fn hello_wasm() -> std::path::PathBuf {
    let dir = std::env::var_os("XFN_WASM_DIR").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/wasm32-wasip2/wasm"),
        std::path::PathBuf::from,
    );
    let wasm = dir.join("hello.wasm");
    assert!(
        wasm.exists(),
        "{} is missing: build the components with `make wasm`",
        wasm.display()
    );
    wasm
}

#[test]
fn a_bad_server_key_fails_before_serving_is_announced() {
    let tmp = tempfile::tempdir().expect("temp dir");
    xfn_grpc::tls::generate_dir(tmp.path(), &["localhost".to_owned()]).expect("certs");
    let server = tmp.path().join("server");
    std::fs::write(server.join("tls.key"), "not a key").unwrap();
    let function = format!("hello={}", hello_wasm().display());
    let out = xfn_bounded(
        &[
            "serve",
            "--address",
            "127.0.0.1:0",
            "--tls-certs-dir",
            server.to_str().unwrap(),
            "--function",
            &function,
        ],
        std::time::Duration::from_secs(60),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("serving"), "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "xfn: error: cannot load TLS certificates from {}: invalid tls.key: ",
            server.display()
        )),
        "{stderr}"
    );
}

#[test]
fn an_error_says_its_cause_once() {
    let out = xfn(&[
        "serve",
        "--tls-certs-dir",
        "/nonexistent-xfn-dir",
        "--function",
        "a=a.wasm",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "xfn: error: cannot load TLS certificates from /nonexistent-xfn-dir: \
         cannot read /nonexistent-xfn-dir/tls.crt: No such file or directory (os error 2)\n"
    );
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

#[test]
fn a_repeated_function_port_is_refused() {
    let out = xfn_bounded(
        &[
            "serve",
            "--insecure",
            "--address",
            "127.0.0.1:0",
            "--function",
            "function-a=/nonexistent/a.wasm",
            "--function-port",
            "function-a=0",
            "--function-port",
            "function-a=0",
        ],
        std::time::Duration::from_secs(20),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("function \"function-a\" already has a --function-port"),
        "{stderr}"
    );
}
