//! Golden-file cases of the render commands: a directory holds the inputs,
//! `args` (a JSON list; `${WASM}` is the directory of the first-party
//! functions, `${GUESTS}` that of the test guests, `${CASE}` the case's own
//! directory, for a case that runs elsewhere)
//! and either `expected.yaml` (stdout, byte for byte, made by the reference
//! YAML emitter) or `expected-error.txt` (stderr, exit 1, nothing on stdout;
//! where a package's registry can't be reached, the reason is written `...`).

use std::path::{Path, PathBuf};

use crate::{Run, run_xfn, test_guests_dir, wasm_dir};

/// Runs the case in `dir`.
pub fn run_case(dir: &Path) -> Run {
    run_case_in(dir, dir)
}

/// Runs the case of `dir` with `run_dir` as the current directory (a case
/// whose inputs live elsewhere, such as an upstream example directory).
pub fn run_case_in(dir: &Path, run_dir: &Path) -> Run {
    run_xfn(run_dir, &case_args(dir))
}

/// The arguments of the case in `dir` (its `args` file), with `${WASM}`,
/// `${GUESTS}` and `${CASE}` expanded.
pub fn case_args(dir: &Path) -> Vec<String> {
    let args_text = std::fs::read_to_string(dir.join("args")).expect("args");
    let args: Vec<String> = serde_json::from_str(&args_text).expect("args is a JSON list");
    let wasm = wasm_dir().display().to_string();
    let guests = test_guests_dir().display().to_string();
    let case = dir.display().to_string();
    args.iter()
        .map(|a| {
            a.replace("${WASM}", &wasm)
                .replace("${GUESTS}", &guests)
                .replace("${CASE}", &case)
        })
        .collect()
}

/// Checks one case; a case with no expectation file is left to its own test.
pub fn check_case(dir: &Path) -> Result<(), String> {
    check_case_in(dir, dir)
}

/// Checks the case of `dir`, run with `run_dir` as the current directory.
pub fn check_case_in(dir: &Path, run_dir: &Path) -> Result<(), String> {
    let name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_owned();
    let expected_yaml = dir.join("expected.yaml");
    let expected_error = dir.join("expected-error.txt");
    if !expected_yaml.exists() && !expected_error.exists() {
        return Ok(());
    }
    let run = run_case_in(dir, run_dir);
    if let Ok(want) = std::fs::read_to_string(&expected_yaml) {
        if run.code != 0 || run.stdout != want {
            return Err(format!(
                "case {name}: exit {}\n--- stderr\n{}--- want stdout\n{want}--- got stdout\n{}",
                run.code, run.stderr, run.stdout
            ));
        }
    } else {
        let want = std::fs::read_to_string(&expected_error).unwrap_or_default();
        let stderr = without_registry_errors(&run.stderr);
        if run.code != 1 || !run.stdout.is_empty() || stderr != want {
            return Err(format!(
                "case {name}: exit {} (want 1)\n--- stdout (want none)\n{}--- want stderr\n{want}--- got stderr\n{}",
                run.code, run.stdout, run.stderr
            ));
        }
    }
    Ok(())
}

/// `stderr` with the reason of each fallback from an unreachable registry
/// to a built-in function written as `...`: it says how this machine's
/// network failed, not what xfn did.
fn without_registry_errors(stderr: &str) -> String {
    const FROM: &str = " from its registry (";
    const TO: &str = "); falling back to the built-in function";
    if !stderr.contains(TO) {
        return stderr.to_owned();
    }
    stderr
        .lines()
        .map(|line| match (line.find(FROM), line.rfind(TO)) {
            (Some(start), Some(end)) if start + FROM.len() <= end => {
                format!("{}...{}\n", &line[..start + FROM.len()], &line[end..])
            }
            _ => format!("{line}\n"),
        })
        .collect()
}

/// Checks every case under `cases` (at least `at_least` of them), a few at
/// a time, and panics with every failure.
pub fn check_all(cases: &Path, at_least: usize) {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(cases)
        .expect("cases directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(
        dirs.len() >= at_least,
        "found only {} cases in {}",
        dirs.len(),
        cases.display()
    );
    check_in_parallel(&dirs, "cases", check_case);
}

/// Runs `check` on every directory of `dirs`, a few at a time (each is
/// its own processes), and panics with every failure, counted among
/// `what`.
pub fn check_in_parallel(
    dirs: &[PathBuf],
    what: &str,
    check: impl Fn(&Path) -> Result<(), String> + Sync,
) {
    let check = &check;
    let failures: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = dirs
            .chunks(dirs.len().div_ceil(4).max(1))
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .filter_map(|d| check(d).err())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|_| vec!["a case panicked".into()]))
            .collect()
    });
    assert!(
        failures.is_empty(),
        "{} of {} {what} failed:\n{}",
        failures.len(),
        dirs.len(),
        failures.join("\n")
    );
}
