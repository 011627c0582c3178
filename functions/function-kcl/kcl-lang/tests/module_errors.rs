//! Errors raised while an imported module runs name the module's file and
//! the line in it (the reference KCL's `--> models/foo.k:12:5`), whether
//! the main file runs inline or as a package; `differential.rs` checks the
//! same places against the reference's.

use std::path::Path;
use std::sync::Arc;

use xfn_kcl::{Error, Files, Packages, RunOptions};

/// A package of `tests/packages`, as a caller hands it over.
fn package(name: &str) -> Files {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/packages")
        .join(name);
    let mut out = Files::new();
    let mut dirs = vec![root.clone()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("package dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                let rel = p.strip_prefix(&root).expect("relative");
                let text = std::fs::read_to_string(&p).expect("read");
                out.insert(rel.to_string_lossy().replace('\\', "/"), text);
            }
        }
    }
    out
}

/// The error of package `name`, run with its `main.k` inline and as a
/// package (`run_package`): the same on both ways.
fn error_of(name: &str) -> Error {
    let files = package(name);
    let main = files["main.k"].clone();
    // Unoptimised frames are large: give the interpreter a main thread's stack.
    std::thread::Builder::new()
        .stack_size(16 << 20)
        .spawn(move || {
            let opts = RunOptions {
                packages: Arc::new(Packages {
                    main: files,
                    external: Default::default(),
                }),
                ..RunOptions::default()
            };
            let inline = xfn_kcl::run(&main, &opts).expect_err("the program fails");
            let as_package = xfn_kcl::run_package(&opts).expect_err("the package fails");
            assert_eq!(inline, as_package);
            inline
        })
        .expect("spawn")
        .join()
        .expect("thread")
}

#[test]
fn a_failed_assert_in_a_module_names_its_file_and_line() {
    let err = error_of("err_module_assert");
    assert_eq!(
        err.to_string(),
        "evaluation error at models/limits.k:6: replicas exceed the maximum"
    );
    assert_eq!((err.file(), err.line()), (Some("models/limits.k"), 6));
}

#[test]
fn a_failed_schema_check_in_a_module_names_its_file_and_line() {
    // The line of the check's condition (the reference names it after the
    // instance's, line 8).
    let err = error_of("err_module_schema");
    assert_eq!(
        err.to_string(),
        "evaluation error at models/ports.k:5: Instance check failed: port out of range"
    );
}

#[test]
fn a_type_error_in_a_module_names_its_file_and_line() {
    let err = error_of("err_module_type");
    assert_eq!((err.file(), err.line()), (Some("models/labels.k"), 4));
    assert!(
        err.to_string()
            .starts_with("evaluation error at models/labels.k:4: "),
        "{err}"
    );
}

#[test]
fn an_error_in_an_external_package_names_the_package() {
    let external = Files::from([(
        "lib/check.k".to_string(),
        "x = 1\nassert x > 1, \"x is too small\"\n".to_string(),
    )]);
    let opts = RunOptions {
        packages: Arc::new(Packages {
            main: Files::new(),
            external: [("shared".to_string(), external)].into(),
        }),
        ..RunOptions::default()
    };
    let err = xfn_kcl::run("import shared.lib.check\n\ny = check.x\n", &opts).unwrap_err();
    assert_eq!(
        err.to_string(),
        "evaluation error at lib/check.k:2 of package shared: x is too small"
    );
}

#[test]
fn an_error_of_the_inline_program_names_no_file() {
    let opts = RunOptions {
        packages: Arc::new(Packages {
            main: Files::from([("m.k".to_string(), "v = 1\n".to_string())]),
            external: Default::default(),
        }),
        ..RunOptions::default()
    };
    let err = xfn_kcl::run("import m\n\nassert m.v > 1\n", &opts).unwrap_err();
    assert_eq!((err.file(), err.line()), (None, 3), "{err}");
}

#[test]
fn a_lambda_of_a_module_fails_in_the_module_file() {
    let opts = RunOptions {
        packages: Arc::new(Packages {
            main: Files::from([(
                "sub/f.k".to_string(),
                "# a helper\nhalf = lambda x: int {\n    x / 0\n}\n".to_string(),
            )]),
            external: Default::default(),
        }),
        ..RunOptions::default()
    };
    let err = xfn_kcl::run("import sub.f\n\ny = f.half(4)\n", &opts).unwrap_err();
    assert_eq!((err.file(), err.line()), (Some("sub/f.k"), 3), "{err}");
}

#[test]
fn a_syntax_error_of_a_package_file_names_it() {
    let files = Files::from([
        (
            "kcl.mod".to_string(),
            "[package]\nname = \"p\"\n".to_string(),
        ),
        ("a.k".to_string(), "a = 1\n".to_string()),
        ("b.k".to_string(), "b = 1\nc = = 2\n".to_string()),
    ]);
    let opts = RunOptions {
        packages: Arc::new(Packages {
            main: files,
            external: Default::default(),
        }),
        ..RunOptions::default()
    };
    let err = xfn_kcl::run_package(&opts).unwrap_err();
    assert_eq!((err.file(), err.line()), (Some("b.k"), 2), "{err}");
    assert!(
        err.to_string().starts_with("syntax error at b.k:2: "),
        "{err}"
    );
}
