//! Hostile programs end with a clear error, quickly, instead of stalling
//! or exhausting the host.

use std::time::{Duration, Instant};

use xfn_kcl::{Error, RunOptions};

fn run(src: &str) -> Result<String, Error> {
    run_with(src, xfn_kcl::Limits::default())
}

/// Runs on a thread with a main thread's stack: unoptimised frames are large.
fn run_with(src: &str, limits: xfn_kcl::Limits) -> Result<String, Error> {
    let src = src.to_string();
    std::thread::Builder::new()
        .stack_size(16 << 20)
        .spawn(move || {
            let opts = RunOptions {
                limits,
                ..Default::default()
            };
            xfn_kcl::run(&src, &opts).map(|o| xfn_kcl::Value::dict(o.values).canonical())
        })
        .expect("spawn")
        .join()
        .expect("interpreter thread")
}

fn assert_limit(src: &str, what: &str) {
    let start = Instant::now();
    match run(src) {
        Err(Error::Limit { msg, .. }) => assert!(msg.contains(what), "{src}: {msg}"),
        other => panic!("{src}: expected a limit error about {what:?}, got {other:?}"),
    }
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{src}: took {:?}",
        start.elapsed()
    );
}

#[test]
fn infinite_recursion_is_bounded() {
    assert_limit("f = lambda x { f(x + 1) }\na = f(0)", "calls nest deeper");
}

#[test]
fn recursive_schemas_are_bounded() {
    assert_limit(
        "schema A:\n    b: int = A {}.b\na = A {}",
        "calls nest deeper",
    );
}

#[test]
fn huge_strings_are_bounded() {
    assert_limit(r#"a = "x" * 1000000000"#, "string is longer");
    assert_limit(
        "_s = \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"\n_t = [_s for _ in range(100000)]\na = \"\".join(_t + _t + _t)",
        "string is longer",
    );
}

#[test]
fn huge_lists_are_bounded() {
    assert_limit("a = [0] * 100000000", "more than");
    assert_limit("a = range(1000000000)", "more than");
    assert_limit(
        "a = [1 for x in range(1000000) for y in range(1000000)]",
        "",
    );
}

#[test]
fn runaway_comprehensions_are_bounded_by_steps() {
    let limits = xfn_kcl::Limits {
        max_steps: 100_000,
        ..Default::default()
    };
    let start = Instant::now();
    let r = run_with(
        "a = sum([x for x in range(1000) for y in range(1000)])",
        limits,
    );
    assert!(
        matches!(r, Err(Error::Limit { ref msg, .. }) if msg.contains("steps")),
        "{r:?}"
    );
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[test]
fn deep_nesting_is_refused_while_parsing() {
    let deep = format!("a = {}1{}", "[".repeat(10_000), "]".repeat(10_000));
    assert_limit(&deep, "nest deeper");
    let deep = format!("a = {}1", "-".repeat(100_000));
    assert_limit(&deep, "nest deeper");
    let deep = format!("a = {}1{}", "(".repeat(10_000), ")".repeat(10_000));
    assert_limit(&deep, "nest deeper");
}

#[test]
fn integer_overflow_is_an_error_not_a_wrap() {
    assert!(matches!(
        run("a = 9223372036854775807 + 1"),
        Err(Error::Eval { .. })
    ));
    assert!(matches!(run("a = 2 ** 64"), Err(Error::Eval { .. })));
}

#[test]
fn unsupported_features_name_the_feature_and_line() {
    let e = run("a = 1\nrule R(S):\n    True").unwrap_err();
    assert_eq!(
        (e.unsupported_feature(), e.line()),
        (Some("rule inheritance"), 2)
    );
    let e = run("a = 1\n@custom\nschema P:\n    x: int").unwrap_err();
    assert_eq!(
        (e.unsupported_feature(), e.line()),
        (Some("decorator @custom"), 2)
    );
    let e = run("a = 1\nimport datetime\n").unwrap_err();
    assert_eq!(
        (e.unsupported_feature(), e.line()),
        (Some("import of module \"datetime\""), 2)
    );
    // A package the run was not given is not found, as in KCL.
    let e = run("import k8s.api.core.v1 as k8core\n").unwrap_err();
    assert!(
        e.to_string().contains("\"k8s.api.core.v1\"") && e.line() == 1,
        "{e}"
    );
}

#[test]
fn deeply_nested_output_is_refused() {
    // Each call nests 60 lists, 20 calls deep: 1200 levels.
    let inner = format!("{}x{}", "[".repeat(60), "]".repeat(60));
    let src = format!("f = lambda n, x {{ x if n == 0 else f(n - 1, {inner}) }}\na = f(20, 1)");
    assert_limit(&src, "nests deeper");
}

#[test]
fn nested_literals_parse_in_linear_time() {
    // Telling a comprehension from a literal must not re-read nested
    // literals at every level (2^depth).
    let start = Instant::now();
    let lists = format!("a = {}1{}", "[".repeat(60), "]".repeat(60));
    assert!(run(&lists).is_ok());
    let dicts = format!("a = {}1{}", "{k: ".repeat(60), "}".repeat(60));
    assert!(run(&dicts).is_ok());
    let mixed = format!("a = {}1{}", "[{k: ".repeat(30), "}]".repeat(30));
    assert!(run(&mixed).is_ok());
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "took {:?}",
        start.elapsed()
    );
}

#[test]
fn shared_strings_cannot_blow_up_text() {
    // One 1 MB string a million times: a tiny value, a terabyte of text.
    let big = "_s = \"x\" * 1000000\n_l = [_s] * 1000000\n";
    assert_limit(&format!("{big}a = str(_l)"), "text would be longer");
    assert_limit(
        &format!("{big}import json\na = json.encode(_l)"),
        "text would be longer",
    );
    assert_limit(&format!("{big}a = \"${{_l}}\""), "text would be longer");
    assert_limit(&format!("{big}a = \"\".join(_l)"), "string is longer");
    assert_limit(&format!("{big}a = _l"), "larger than");
}
