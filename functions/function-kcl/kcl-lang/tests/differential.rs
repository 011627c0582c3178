//! Differential test: the same programs through xfn-kcl and through the
//! reference KCL (PyPI's `kcl-lib`, run by `tests/reference.py`), compared
//! value for value (ints and floats apart, dict order kept, error or not).
//!
//! Programs: the table in `tests/programs/*.k`, and the inline KCL programs
//! of the corpus's Compositions (`../shared/corpus`, the `spec.source` of
//! function-kcl steps), each run with its Composition's example XR as
//! `option("params").oxr` (without an example, an XR of its type with only
//! a name).
//!
//! The reference runs in the Python that `XFN_KCL_PYTHON` names, or the
//! repository's `.venv/bin/python` (`make venv` installs `kcl-lib` there);
//! without it the test says so and skips. It prints the counts: compared,
//! equal, unsupported (by feature) and different. A difference fails the
//! test unless `tests/known-differences.txt` lists it with its reason.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value as J, json};
use xfn_kcl::{Error, RunOptions, Value};

struct Program {
    name: String,
    source: String,
    /// `option()` values, as JSON text.
    options: BTreeMap<String, String>,
    /// The program's package directory, for programs that import modules
    /// (`tests/packages/NAME`, its `main.k` the source).
    dir: Option<PathBuf>,
    /// Whether the program is its whole package (`dir`), run as `kcl run
    /// DIR` runs it: its `kcl.mod`'s `[profile] entries`, or its root's
    /// `.k` files (`tests/package_runs/NAME`).
    package: bool,
}

/// The external packages the package programs may import
/// (`tests/packages/_external/NAME`), by name.
fn external_packages() -> BTreeMap<String, PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/packages/_external");
    std::fs::read_dir(&dir)
        .expect("tests/packages/_external")
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .collect()
}

/// A directory's files, by path relative to it, as xfn-kcl's `Files`:
/// what a caller (function-kcl's host) hands the interpreter.
fn read_files(root: &Path) -> xfn_kcl::Files {
    let mut out = xfn_kcl::Files::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read package dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "k" || x == "mod") {
                let rel = p.strip_prefix(root).expect("relative").to_string_lossy();
                out.insert(
                    rel.replace('\\', "/"),
                    std::fs::read_to_string(&p).expect("read"),
                );
            }
        }
    }
    out
}

/// The programs of `tests/packages/*/` (the `_external` packages aside):
/// a `main.k` with the modules of its directory and external packages.
fn packages() -> Vec<Program> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/packages");
    let mut dirs: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/packages")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.is_dir()
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('_'))
        })
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|d| Program {
            name: format!(
                "packages/{}",
                d.file_name().unwrap_or_default().to_string_lossy()
            ),
            source: std::fs::read_to_string(d.join("main.k")).expect("main.k"),
            options: BTreeMap::new(),
            dir: Some(d),
            package: false,
        })
        .collect()
}

/// The packages of `tests/package_runs/*/`, each run as a whole.
fn package_runs() -> Vec<Program> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/package_runs");
    let mut dirs: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/package_runs")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|d| Program {
            name: format!(
                "package_runs/{}",
                d.file_name().unwrap_or_default().to_string_lossy()
            ),
            source: String::new(),
            options: BTreeMap::new(),
            dir: Some(d),
            package: true,
        })
        .collect()
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

fn python() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("XFN_KCL_PYTHON") {
        return Some(PathBuf::from(p));
    }
    let venv = repo_root().join(".venv/bin/python");
    venv.exists().then_some(venv)
}

fn table() -> Vec<Program> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/programs")
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    files
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "k"))
        .map(|p| {
            let source = std::fs::read_to_string(&p).expect("read program");
            // `# option NAME=JSON` lines give option() values.
            let options = source
                .lines()
                .filter_map(|l| l.strip_prefix("# option "))
                .filter_map(|l| l.split_once('='))
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .collect();
            Program {
                name: format!(
                    "table/{}",
                    p.file_name().and_then(|n| n.to_str()).unwrap_or_default()
                ),
                source,
                options,
                dir: None,
                package: false,
            }
        })
        .collect()
}

/// The corpus's inline function-kcl programs with their example XRs.
fn corpus() -> Vec<Program> {
    let root = repo_root().join("../shared/corpus");
    let Ok(index) = std::fs::read_to_string(root.join("index.json")) else {
        eprintln!("differential: ../shared/corpus is absent; corpus programs skipped");
        return vec![];
    };
    let index: J = serde_json::from_str(&index).expect("index.json");
    let mut out = Vec::new();
    for e in index["entries"].as_array().into_iter().flatten() {
        let Some(fns) = e["fns"].as_array() else {
            continue;
        };
        let refs: Vec<&str> = fns
            .iter()
            .filter(|f| {
                f["canon"] == "function-kcl"
                    && (f["source"] == "kcl:inline" || f["source"] == "kcl:inline+deps")
            })
            .filter_map(|f| f["step"].as_str())
            .collect();
        if refs.is_empty() {
            continue;
        }
        let dir = root.join(e["dir"].as_str().unwrap_or_default());
        let Ok(text) = std::fs::read_to_string(dir.join(e["file"].as_str().unwrap_or_default()))
        else {
            continue;
        };
        let name = e["name"].as_str();
        let mut comp = None;
        for doc in serde_yaml_ng::Deserializer::from_str(&text) {
            let Ok(v) = <J as serde::Deserialize>::deserialize(doc) else {
                continue;
            };
            if v["kind"] == "Composition"
                && (name.is_none() || v["metadata"]["name"].as_str() == name)
            {
                comp = Some(v);
                break;
            }
        }
        let Some(comp) = comp else { continue };
        let xr = e["xr"]
            .as_str()
            .and_then(|x| std::fs::read_to_string(dir.join(x)).ok())
            .and_then(|t| {
                serde_yaml_ng::Deserializer::from_str(&t)
                    .filter_map(|d| <J as serde::Deserialize>::deserialize(d).ok())
                    .find(|d| d.is_object())
            });
        // Without an example, an XR of the Composition's type with a name.
        let xr = xr.unwrap_or_else(|| {
            json!({
                "apiVersion": e["type"]["apiVersion"],
                "kind": e["type"]["kind"],
                "metadata": {"name": "example"},
                "spec": {}
            })
        });
        for step in comp["spec"]["pipeline"].as_array().into_iter().flatten() {
            let Some(step_name) = step["step"].as_str() else {
                continue;
            };
            if !refs.contains(&step_name) {
                continue;
            }
            let Some(src) = step["input"]["spec"]["source"].as_str() else {
                continue;
            };
            let mut params = serde_json::Map::new();
            if let Some(p) = step["input"]["spec"]["params"].as_object() {
                params.extend(p.clone());
            }
            params.insert("oxr".into(), xr.clone());
            params.insert(
                "dxr".into(),
                json!({"apiVersion": xr["apiVersion"], "kind": xr["kind"]}),
            );
            for k in ["ocds", "dcds", "ctx", "extraResources", "requiredResources"] {
                params.insert(k.into(), json!({}));
            }
            let options = BTreeMap::from([
                ("params".to_string(), J::Object(params).to_string()),
                ("items".to_string(), "[]".to_string()),
            ]);
            out.push(Program {
                name: format!(
                    "corpus/{}/{}/{}#{}:{}",
                    e["cat"].as_str().unwrap_or_default(),
                    e["dir"].as_str().unwrap_or_default(),
                    e["file"].as_str().unwrap_or_default(),
                    name.unwrap_or_default(),
                    step_name
                ),
                source: src.to_string(),
                options,
                dir: None,
                package: false,
            });
        }
    }
    out
}

/// A small deterministic generator of programs (xorshift), for the
/// differential test. Most expressions are typed (ints, floats, strings,
/// bools, lists, dicts: arithmetic, comparisons, boolean operators,
/// conditionals, comprehensions, quantifiers, indexing, slicing, builtins,
/// string methods, interpolation, config unification): KCL's static type
/// checker, which xfn-kcl does not have, rejects programs that mix types
/// even where they would run, so the generator does not mix them.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn n(&mut self, k: u64) -> u64 {
        self.next() % k
    }

    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.n(xs.len() as u64) as usize]
    }

    fn int(&mut self, d: u32) -> String {
        if d == 0 {
            return format!("{}", self.n(21) as i64 - 10);
        }
        match self.n(9) {
            0 => format!(
                "({} {} {})",
                self.int(d - 1),
                self.pick(&["+", "-", "*"]),
                self.int(d - 1)
            ),
            1 => format!(
                "({} {} {})",
                self.int(d - 1),
                self.pick(&["//", "%"]),
                self.n(9) + 1
            ),
            2 => format!("len({})", self.list(d - 1)),
            3 => format!("len({})", self.str(d - 1)),
            4 => format!(
                "({} if {} else {})",
                self.int(d - 1),
                self.bool(d - 1),
                self.int(d - 1)
            ),
            5 => format!("int({})", self.float(d - 1)),
            6 => format!("sum([{}, {}])", self.int(d - 1), self.int(d - 1)),
            7 => format!(
                "{}([{}, {}, {}])",
                self.pick(&["max", "min"]),
                self.int(d - 1),
                self.int(d - 1),
                self.int(d - 1)
            ),
            _ => format!(
                "({} {} {})",
                self.int(d - 1),
                self.pick(&["&", "|", "^", "<<"]),
                self.n(4)
            ),
        }
    }

    fn float(&mut self, d: u32) -> String {
        if d == 0 {
            return format!("{}.{}", self.n(20), self.n(1000));
        }
        match self.n(6) {
            0 => format!(
                "({} {} {})",
                self.float(d - 1),
                self.pick(&["+", "-", "*"]),
                self.int(d - 1)
            ),
            1 => format!(
                "({} / {})",
                self.int(d - 1),
                self.pick(&["3", "4", "0.5", "7.0"])
            ),
            2 => format!("float({})", self.int(d - 1)),
            3 => format!("round({}, {})", self.float(d - 1), self.n(4)),
            4 => format!("({} ** {})", self.float(d - 1), self.n(3)),
            _ => format!("abs({})", self.float(d - 1)),
        }
    }

    fn str(&mut self, d: u32) -> String {
        if d == 0 {
            return format!(
                "\"{}\"",
                self.pick(&["", "a", "xy", "Hello World", "a-b-c", "1", "  pad "])
            );
        }
        match self.n(10) {
            0 => format!("({} + {})", self.str(d - 1), self.str(d - 1)),
            1 => format!("\"<${{{}}}|${{{}}}>\"", self.int(d - 1), self.float(d - 1)),
            2 => format!(
                "{}.{}()",
                self.str(d - 1),
                self.pick(&["upper", "lower", "strip", "title", "capitalize"])
            ),
            3 => format!("str({})", self.any(d - 1)),
            4 => format!("\"-\".join([{}, {}])", self.str(d - 1), self.str(d - 1)),
            5 => format!("{}[{}:{}]", self.str(d - 1), self.n(3), self.n(5)),
            6 => format!("({} * {})", self.str(d - 1), self.n(3)),
            7 => format!("{}.replace(\"a\", \"b\")", self.str(d - 1)),
            8 => format!(
                "\"{{}}:{{}}\".format({}, {})",
                self.int(d - 1),
                self.str(d - 1)
            ),
            _ => format!("typeof({})", self.any(d - 1)),
        }
    }

    fn bool(&mut self, d: u32) -> String {
        if d == 0 {
            return self.pick(&["True", "False"]).to_string();
        }
        match self.n(8) {
            0 => format!(
                "({} {} {})",
                self.int(d - 1),
                self.pick(&["<", "<=", "==", "!=", ">", ">="]),
                self.int(d - 1)
            ),
            1 => format!(
                "({} {} {})",
                self.bool(d - 1),
                self.pick(&["and", "or"]),
                self.bool(d - 1)
            ),
            2 => format!("(not {})", self.bool(d - 1)),
            3 => format!("({} in {})", self.int(d - 1), self.list(d - 1)),
            4 => format!("({} in {})", self.str(0), self.str(d - 1)),
            5 => format!(
                "(all x in [{}, {}] {{ x > 0 }})",
                self.int(d - 1),
                self.int(d - 1)
            ),
            6 => format!(
                "(any x in [{}, {}] {{ x % 2 == 0 }})",
                self.int(d - 1),
                self.int(d - 1)
            ),
            _ => format!("{}.startswith({})", self.str(d - 1), self.str(0)),
        }
    }

    fn list(&mut self, d: u32) -> String {
        if d == 0 {
            return format!("[{}, {}]", self.n(5), self.n(5));
        }
        match self.n(8) {
            0 => format!(
                "[{}, {}, {}]",
                self.int(d - 1),
                self.int(d - 1),
                self.int(d - 1)
            ),
            1 => format!("({} + {})", self.list(d - 1), self.list(d - 1)),
            2 => format!(
                "[x * {} for x in {} if x != {}]",
                self.n(3),
                self.list(d - 1),
                self.n(4)
            ),
            3 => format!("sorted({})", self.list(d - 1)),
            4 => format!("{}[{}:]", self.list(d - 1), self.n(3)),
            5 => format!("list(range({}))", self.n(6)),
            6 => format!(
                "(map x in [{}, {}] {{ x + 1 }})",
                self.int(d - 1),
                self.int(d - 1)
            ),
            _ => format!(
                "(filter x in [{}, {}] {{ x > 1 }})",
                self.int(d - 1),
                self.int(d - 1)
            ),
        }
    }

    fn dict(&mut self, d: u32) -> String {
        if d == 0 {
            return format!("{{\"k\": {}, j: \"v\"}}", self.n(5));
        }
        match self.n(6) {
            0 => format!("{{a: {}, b.c = {}}}", self.any(d - 1), self.int(d - 1)),
            1 => format!("({} | {{extra: {}}})", self.dict(d - 1), self.int(d - 1)),
            2 => format!("{{str(k): v for k, v in {}}}", self.list(d - 1)),
            3 => format!(
                "{{a: {{x: {}}}, a: {{y: {}}}}}",
                self.int(d - 1),
                self.str(d - 1)
            ),
            4 => format!("{{l: [{}], l += [{}]}}", self.int(d - 1), self.int(d - 1)),
            _ => format!(
                "{{k = {}, if {}: m = {}}}",
                self.int(d - 1),
                self.bool(d - 1),
                self.str(d - 1)
            ),
        }
    }

    fn any(&mut self, d: u32) -> String {
        match self.n(7) {
            0 => self.int(d),
            1 => self.float(d),
            2 => self.str(d),
            3 => self.bool(d),
            4 => self.list(d),
            5 => self.dict(d),
            _ => self.pick(&["None", "Undefined"]).to_string(),
        }
    }

    fn program(&mut self) -> String {
        let mut src = String::new();
        for i in 0..5 {
            let d = (self.n(3) + 1) as u32;
            let e = self.any(d);
            src.push_str(&format!("v{i} = {e}\n"));
        }
        src
    }
}

/// Generated programs (`generated/<n>`), the same on every run.
fn generated(n: usize) -> Vec<Program> {
    let mut g = Gen(0x9E37_79B9_7F4A_7C15);
    (0..n)
        .map(|i| Program {
            name: format!("generated/{i:03}"),
            source: g.program(),
            options: BTreeMap::new(),
            dir: None,
            package: false,
        })
        .collect()
}

/// Runs the programs through the reference; `None` (with the reason) when it is unavailable.
fn reference(programs: &[Program]) -> Result<HashMap<String, Result<String, String>>, String> {
    let Some(py) = python() else {
        return Err("no Python with kcl-lib: run `make venv` (or set XFN_KCL_PYTHON)".into());
    };
    let input: Vec<J> = programs
        .iter()
        .map(|p| match &p.dir {
            Some(dir) => json!({
                "name": p.name, "source": p.source, "options": p.options,
                "dir": dir, "external": external_packages(), "package": p.package,
            }),
            None => json!({"name": p.name, "source": p.source, "options": p.options}),
        })
        .collect();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference.py");
    let mut child = Command::new(&py)
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", py.display()))?;
    child
        .stdin
        .take()
        .ok_or("no stdin")?
        .write_all(J::Array(input).to_string().as_bytes())
        .map_err(|e| e.to_string())?;
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if out.status.code() == Some(3) {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    if !out.status.success() {
        panic!(
            "reference.py failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let results: Vec<J> = serde_json::from_slice(&out.stdout).expect("reference output");
    Ok(results
        .into_iter()
        .map(|r| {
            let name = r["name"].as_str().unwrap_or_default().to_string();
            let res = match r["ok"].as_str() {
                Some(ok) => Ok(ok.to_string()),
                None => Err(r["error"].as_str().unwrap_or_default().to_string()),
            };
            (name, res)
        })
        .collect())
}

fn ours(p: &Program) -> Result<String, Error> {
    let src = p.source.clone();
    let options = p.options.clone();
    let whole_package = p.package;
    let packages = p.dir.as_ref().map(|d| xfn_kcl::Packages {
        main: read_files(d),
        external: external_packages()
            .into_iter()
            .map(|(name, dir)| (name, read_files(&dir)))
            .collect(),
    });
    // Unoptimised frames are large: give the interpreter a main thread's stack.
    std::thread::Builder::new()
        .stack_size(16 << 20)
        .spawn(move || {
            let mut opts = RunOptions::default();
            if let Some(packages) = packages {
                opts.packages = std::sync::Arc::new(packages);
            }
            for (k, v) in &options {
                opts.options
                    .insert(k.clone(), Value::from_json_text(v).expect("option JSON"));
            }
            let out = if whole_package {
                xfn_kcl::run_package(&opts)?
            } else {
                xfn_kcl::run(&src, &opts)?
            };
            // A stream of documents (a top-level list expression).
            match out.stream {
                Some(docs) if docs.len() == 1 => Ok(docs[0].canonical()),
                Some(docs) => Ok(format!("stream:{}", Value::list(docs).canonical())),
                None => Ok(Value::dict(out.values).canonical()),
            }
        })
        .expect("spawn")
        .join()
        .expect("interpreter thread")
}

fn known_differences() -> HashMap<String, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/known-differences.txt");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once(" -- "))
        .map(|(n, r)| (n.trim().to_string(), r.trim().to_string()))
        .collect()
}

#[test]
fn differential_against_reference_kcl() {
    let mut programs = table();
    programs.extend(packages());
    programs.extend(package_runs());
    programs.extend(corpus());
    programs.extend(generated(1000));
    let reference = match reference(&programs) {
        Ok(r) => r,
        Err(why) => {
            eprintln!("differential test SKIPPED: {why}");
            return;
        }
    };
    // A table program fails in the reference only when it is meant to (`err_*.k`).
    let failing: Vec<&String> = programs
        .iter()
        .filter(|p| {
            (p.name.starts_with("table/")
                || p.name.starts_with("packages/")
                || p.name.starts_with("package_runs/"))
                && !p.name.starts_with("table/err_")
                && !p.name.starts_with("packages/err_")
                && !p.name.starts_with("package_runs/err_")
                && !p.name.starts_with("table/unsupported_")
        })
        .filter(|p| reference[&p.name].is_err())
        .map(|p| &p.name)
        .collect();
    assert!(
        failing.is_empty(),
        "table programs the reference KCL rejects: {failing:?}"
    );
    let known = known_differences();
    let (mut equal, mut unsupported, mut different) =
        (0, BTreeMap::<String, Vec<String>>::new(), Vec::new());
    let mut both_error = 0;
    let (mut misplaced, mut places_checked) = (Vec::new(), 0);
    for p in &programs {
        let theirs = &reference[&p.name];
        let mine = ours(p);
        match misplaced_error(p, &mine, theirs) {
            Some(Ok(())) => places_checked += 1,
            Some(Err(wrong)) => misplaced.push(wrong),
            None => {}
        }
        match (&mine, theirs) {
            (Err(e), _) if e.unsupported_feature().is_some() => {
                unsupported
                    .entry(e.unsupported_feature().unwrap_or_default().to_string())
                    .or_default()
                    .push(p.name.clone());
            }
            (Ok(a), Ok(b)) if a == b => equal += 1,
            (Err(e), Err(_)) => {
                equal += 1;
                both_error += 1;
                if !p.name.starts_with("table/") && !p.name.starts_with("generated/") {
                    eprintln!("  error on both sides: {}: {e}", p.name);
                }
            }
            _ => different.push((p.name.clone(), mine, theirs.clone())),
        }
    }
    // Counts by group: the table, and the corpus by category (user, docs, fnex, ...).
    let group = |name: &str| -> String {
        let mut parts = name.splitn(3, '/');
        match (parts.next(), parts.next()) {
            (Some("corpus"), Some(cat)) => format!("corpus/{cat}"),
            (Some(g), _) => g.to_string(),
            _ => String::new(),
        }
    };
    let mut groups: BTreeMap<String, [usize; 4]> = BTreeMap::new();
    for p in &programs {
        groups.entry(group(&p.name)).or_default()[0] += 1;
    }
    for names in unsupported.values() {
        for n in names {
            groups.entry(group(n)).or_default()[2] += 1;
        }
    }
    for (n, _, _) in &different {
        groups.entry(group(n)).or_default()[3] += 1;
    }
    for c in groups.values_mut() {
        c[1] = c[0] - c[2] - c[3];
    }
    let n_unsupported: usize = unsupported.values().map(Vec::len).sum();
    eprintln!(
        "differential: {} compared, {} equal ({} of them an error on both sides), {} unsupported, {} different",
        programs.len(),
        equal,
        both_error,
        n_unsupported,
        different.len()
    );
    for (g, [n, eq, un, diff]) in &groups {
        eprintln!("  {g}: {n} compared, {eq} equal, {un} unsupported, {diff} different");
    }
    for (feature, names) in &unsupported {
        eprintln!("  unsupported: {feature}: {}", names.join(", "));
    }
    let mut unexplained = Vec::new();
    for (name, mine, theirs) in &different {
        let mine = match mine {
            Ok(v) => v.clone(),
            Err(e) => format!("error: {e}"),
        };
        let theirs = match theirs {
            Ok(v) => v.clone(),
            Err(e) => format!("error: {e}"),
        };
        // Show both from a little before where they first differ.
        let at = mine
            .chars()
            .zip(theirs.chars())
            .take_while(|(a, b)| a == b)
            .count()
            .saturating_sub(120);
        let short = |s: &str| s.chars().skip(at).take(400).collect::<String>();
        let (mine, theirs) = (short(&mine), short(&theirs));
        match known.get(name) {
            Some(reason) => eprintln!("  different (known: {reason}): {name}"),
            None => {
                eprintln!("  DIFFERENT: {name}\n    xfn-kcl:   {mine}\n    reference: {theirs}");
                unexplained.push(name.clone());
            }
        }
    }
    assert!(
        unexplained.is_empty(),
        "{} programs differ from the reference KCL: {unexplained:?}",
        unexplained.len()
    );
    eprintln!(
        "  error places of failing package programs: {places_checked} as the reference's, {} not",
        misplaced.len()
    );
    assert!(
        misplaced.is_empty(),
        "errors of package programs not where the reference KCL puts them:\n{}",
        misplaced.join("\n")
    );
}

/// For a package program meant to fail (`packages/err_*`,
/// `package_runs/err_*`): whether its error is at a place the reference's
/// error names (the file, relative to the package directory, and the
/// line), and if not, why; `None` for other programs, and when the
/// reference's error names no place.
fn misplaced_error(
    p: &Program,
    mine: &Result<String, Error>,
    theirs: &Result<String, String>,
) -> Option<Result<(), String>> {
    let dir = p.dir.as_ref().filter(|_| {
        p.name.starts_with("packages/err_") || p.name.starts_with("package_runs/err_")
    })?;
    let (mine, theirs) = match (mine, theirs) {
        (Err(mine), Err(theirs)) => (mine, theirs),
        _ => return Some(Err(format!("{}: does not fail on both sides", p.name))),
    };
    // A `packages/` program's main file runs inline: its errors name no file.
    let at = (mine.file().unwrap_or("main.k").to_string(), mine.line());
    let places = reference_places(theirs, dir);
    if places.is_empty() {
        return None;
    }
    if places.contains(&at) {
        return Some(Ok(()));
    }
    Some(Err(format!(
        "{}: xfn-kcl at {}:{} ({mine}), the reference at {places:?}",
        p.name, at.0, at.1
    )))
}

/// The places (`--> FILE:LINE:COLUMN`) a reference error names, as files
/// relative to `dir` and lines.
fn reference_places(msg: &str, dir: &Path) -> Vec<(String, u32)> {
    let colors = regex::Regex::new("\x1b\\[[0-9;]*m").expect("regex");
    let place = regex::Regex::new(r"--> (.+):(\d+):\d+").expect("regex");
    let msg = colors.replace_all(msg, "");
    let dir = format!("{}/", dir.display());
    place
        .captures_iter(&msg)
        .filter_map(|c| {
            let file = c[1].strip_prefix(&dir)?.to_string();
            Some((file, c[2].parse().ok()?))
        })
        .collect()
}

/// Prints generated program number `GEN` (e.g. `GEN=042`), to look at
/// one the test reports.
#[test]
#[ignore]
fn print_generated() {
    let Ok(n) = std::env::var("GEN") else { return };
    for p in generated(1000) {
        if p.name.ends_with(&n) {
            println!("{}", p.source);
        }
    }
}
