//! Imports of user modules and packages: resolution, errors and bounds
//! (the values are compared with the reference KCL in `differential.rs`).

use std::sync::Arc;

use xfn_kcl::{Error, Files, Packages, RunOptions};

fn files(pairs: &[(&str, &str)]) -> Files {
    pairs
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect()
}

fn opts(main: Files, external: &[(&str, Files)]) -> Arc<Packages> {
    Arc::new(Packages {
        main,
        external: external
            .iter()
            .map(|(n, f)| (n.to_string(), f.clone()))
            .collect(),
    })
}

/// Runs `src` with the packages, on a thread with a main thread's stack
/// (unoptimised frames are large).
fn run(src: &str, packages: &Arc<Packages>) -> Result<String, Error> {
    let src = src.to_string();
    let packages = packages.clone();
    std::thread::Builder::new()
        .stack_size(16 << 20)
        .spawn(move || {
            let o = RunOptions {
                packages,
                ..RunOptions::default()
            };
            xfn_kcl::run(&src, &o).map(|out| xfn_kcl::Value::dict(out.values).canonical())
        })
        .expect("spawn")
        .join()
        .expect("thread")
}

#[test]
fn an_unresolved_import_names_the_import_and_the_line() {
    let o = opts(files(&[("a.k", "x = 1\n")]), &[]);
    let err = run("import a\n\nimport b.c as d\ny = a.x\n", &o).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("\"b.c\""), "{text}");
    assert!(text.contains("line 3"), "{text}");
    assert_eq!(err.line(), 3);
}

#[test]
fn a_module_runs_once_and_sees_its_own_globals() {
    let o = opts(
        files(&[(
            "m.k",
            "_n = 2\ntwice = lambda x { x * _n }\nschema S:\n    v: int = _n\n",
        )]),
        &[],
    );
    let out = run(
        "import m\nimport m as again\n_n = 100\na = m.twice(5)\nb = again.S {}\n",
        &o,
    )
    .unwrap();
    assert_eq!(out, r#"{"a":10,"b":{"v":2}}"#);
}

#[test]
fn an_external_package_is_found_by_its_name() {
    let o = opts(
        Files::new(),
        &[(
            "pkg",
            files(&[
                ("kcl.mod", "[package]\nname = \"pkg\"\n"),
                ("sub/m.k", "v = \"ext\"\n"),
                ("top.k", "w = 1\n"),
            ]),
        )],
    );
    assert_eq!(
        run("import pkg.sub.m\nimport pkg\na = m.v\nb = pkg.w\n", &o).unwrap(),
        r#"{"a":"ext","b":1}"#
    );
}

#[test]
fn an_import_cycle_is_an_error() {
    let o = opts(
        files(&[("a.k", "import b\nx = 1\n"), ("b.k", "import a\ny = 2\n")]),
        &[],
    );
    let err = run("import a\nz = a.x\n", &o).unwrap_err();
    assert!(err.to_string().contains("cycle"), "{err}");
}

#[test]
fn a_missing_member_of_a_module_is_an_error() {
    let o = opts(files(&[("a.k", "x = 1\n")]), &[]);
    let err = run("import a\nz = a.nope\n", &o).unwrap_err();
    assert!(err.to_string().contains("'nope' not found"), "{err}");
}

#[test]
fn a_syntax_error_in_a_module_names_its_file() {
    let o = opts(files(&[("sub/bad.k", "x = = 1\n")]), &[]);
    let err = run("import sub.bad\n", &o).unwrap_err();
    assert!(err.to_string().contains("sub/bad.k"), "{err}");
}

#[test]
fn paths_that_leave_the_package_are_refused() {
    for bad in ["../escape.k", "/abs.k", "a//b.k", "a/./b.k"] {
        let o = opts(files(&[(bad, "x = 1\n")]), &[]);
        let err = run("a = 1\n", &o).unwrap_err();
        assert!(matches!(err, Error::Limit { .. }), "{bad}: {err}");
    }
    let o = opts(files(&[]), &[]);
    assert!(run("import ..up\n", &o).is_err());
}

#[test]
fn too_many_files_are_refused() {
    let many: Files = (0..=xfn_kcl::MAX_FILES)
        .map(|i| (format!("f{i}.k"), String::new()))
        .collect();
    let err = run("a = 1\n", &opts(many, &[])).unwrap_err();
    assert!(err.to_string().contains("files"), "{err}");
}

#[test]
fn imports_nest_only_so_deep() {
    let n = xfn_kcl::MAX_IMPORT_DEPTH + 2;
    let chain: Files = (0..n)
        .map(|i| (format!("m{i}.k"), format!("import m{}\nv = {i}\n", i + 1)))
        .chain(std::iter::once((format!("m{n}.k"), "v = 0\n".to_string())))
        .collect();
    let err = run("import m0\n", &opts(chain, &[])).unwrap_err();
    assert!(matches!(err.without_file(), Error::Limit { .. }), "{err}");
}

#[test]
fn a_package_runs_its_root_files_as_one_module() {
    let o = opts(
        files(&[
            ("kcl.mod", "[package]\nname = \"p\"\n"),
            ("a.k", "\"\"\"doc\"\"\"\nx = y + 1\n"),
            ("b.k", "\"\"\"doc of b\"\"\"\ny = 1\n"),
            ("b_test.k", "z = 3\n"),
            ("sub/c.k", "w = 4\n"),
        ]),
        &[],
    );
    let o = RunOptions {
        packages: o,
        ..RunOptions::default()
    };
    let out = xfn_kcl::run_package(&o).unwrap();
    assert_eq!(
        xfn_kcl::Value::dict(out.values).canonical(),
        r#"{"x":2,"y":1}"#
    );
}
