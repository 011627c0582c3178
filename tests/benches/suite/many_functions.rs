//! Item 13: many functions in one `xfn serve`, with a real component
//! (function-patch-and-transform, 1.8 MB): ready time (start to listening)
//! and resident memory after one call of each function, for 100 and 1,000
//! functions that are one component served under many names, and for 100
//! distinct components (the same code with a custom section each, as 100
//! authors' builds would be), from an empty compile cache, then a warm one.
//! Distinct components from an empty cache are ready on Winch's code; the
//! item then waits for Cranelift's to replace it, and measures again.
//!
//! Then what each of wasmtime's compilers costs and gives for P&T: the
//! load from an empty cache, and a warm call.
//!
//! The component is byte for byte the built-in one, so `make bench`'s
//! precompiled binary loads it without compiling even from an empty
//! cache; the distinct ones are compiled, in parallel.

use super::*;
use xfn_runtime::{CompileCache, HostEngine, Tier, Tiering, WasmRuntime};

/// Ready within this from a warm cache (issue 38).
const WARM_READY_S: f64 = 5.0;

/// Ready within this from an empty cache, 100 functions (issue 38).
const COLD_READY_S: f64 = 30.0;

/// Longest the bench waits for the background compiler.
const OPTIMIZED_WITHIN: Duration = Duration::from_secs(900);

/// Waits (at most `within`) until the compile cache in `cache` holds
/// `entries` compiled components.
fn until_entries(cache: &Path, entries: usize, within: Duration) -> Option<()> {
    let started = Instant::now();
    while xfn_tests::compiled_entries(cache) < entries {
        if started.elapsed() > within {
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Some(())
}

/// 1,000 functions stay under this resident (issue 38).
const RSS_LIMIT_MIB: f64 = 1024.0;

impl Suite {
    /// Item 13.
    pub(crate) fn many_functions(&mut self, bin: &Path) {
        let pt = xfn_tests::wasm_dir().join("function_patch_and_transform.wasm");
        let bytes = std::fs::read(&pt).expect("read the P&T component");
        let request = request_to_proto(xfn_tests::convert::request(
            patch_and_transform::docs_request(),
        ))
        .expect("proto request");
        let dir = tempfile::tempdir().expect("temp dir");
        let cases: [(usize, bool); 3] = [(100, false), (1000, false), (100, true)];
        for (n, distinct) in cases {
            let paths: Vec<PathBuf> = if distinct {
                (0..n)
                    .map(|i| {
                        let path = dir.path().join(format!("pt-{i}.wasm"));
                        std::fs::write(&path, with_custom_section(&bytes, i)).expect("write");
                        path
                    })
                    .collect()
            } else {
                vec![pt.clone(); n]
            };
            let functions: Vec<(String, PathBuf)> = paths
                .into_iter()
                .enumerate()
                .map(|(i, path)| (format!("fn-{i}"), path))
                .collect();
            let kind = if distinct {
                "distinct components"
            } else {
                "one component"
            };
            let cache = tempfile::tempdir().expect("temp dir");
            for warm in [false, true] {
                let label = if warm { "warm cache" } else { "empty cache" };
                let started = Instant::now();
                let serve = match Peer::xfn_serve(bin, &functions, cache.path(), &[]) {
                    Ok(serve) => serve,
                    Err(e) => {
                        self.notes
                            .push(format!("xfn serve, {n} functions ({kind}): {e}"));
                        break;
                    }
                };
                let ready = started.elapsed().as_secs_f64();
                let mut failed = 0;
                for (name, _) in &functions {
                    let authority = format!("{name}.crossplane-system:9443");
                    if self
                        .rt
                        .block_on(call_once(&serve.target, Some(&authority), &request))
                        .is_err()
                    {
                        failed += 1;
                    }
                }
                if failed > 0 {
                    self.notes.push(format!(
                        "xfn serve, {n} functions ({kind}, {label}): {failed} calls failed"
                    ));
                }
                let rss = rss_kib(serve.child.id()) / 1024.0;
                let ready_target = if warm { WARM_READY_S } else { COLD_READY_S };
                let case = format!("{n} functions, {kind}, {label}");
                // Targets: warm ready for every case, cold ready for 100;
                // resident memory for 1,000.
                self.rows.push(row(
                    format!("{case}: ready"),
                    (ready, "s"),
                    ("target", ready_target),
                    (warm || n == 100)
                        .then(|| (format!("≤ {ready_target} s"), ready <= ready_target)),
                ));
                self.rows.push(row(
                    format!("{case}: resident after a call each"),
                    (rss, "MiB"),
                    ("1 GiB", RSS_LIMIT_MIB),
                    (n == 1000).then(|| ("< 1 GiB".to_owned(), rss < RSS_LIMIT_MIB)),
                ));
                // Distinct components from an empty cache are ready with
                // Winch's code, and Cranelift's replaces it in the
                // background: each component then has an entry of each in
                // the cache.
                if distinct && !warm {
                    match until_entries(cache.path(), 2 * n, OPTIMIZED_WITHIN) {
                        Some(()) => {
                            let optimized = started.elapsed().as_secs_f64();
                            // The last swap follows its entry's write.
                            std::thread::sleep(Duration::from_millis(500));
                            let rss = rss_kib(serve.child.id()) / 1024.0;
                            self.rows.push(row(
                                format!("{case}: every function on Cranelift's code"),
                                (optimized, "s"),
                                ("ready", ready),
                                None,
                            ));
                            self.rows.push(row(
                                format!("{case}: resident on Cranelift's code"),
                                (rss, "MiB"),
                                ("1 GiB", RSS_LIMIT_MIB),
                                None,
                            ));
                        }
                        None => self.notes.push(format!(
                            "xfn serve, {n} functions ({kind}): not all optimized within {OPTIMIZED_WITHIN:?}"
                        )),
                    }
                }
            }
        }
        self.shipped_functions(bin, &request);
        self.compile_tiers(&bytes);
    }

    /// What each compiler costs and gives for P&T, in process: the load
    /// from an empty compile cache (compiling), and a warm call of its
    /// code. A server runs Winch's code until Cranelift's is ready.
    fn compile_tiers(&mut self, component: &[u8]) {
        let request = xfn_tests::convert::request(patch_and_transform::docs_request());
        let budget = Duration::from_secs(2);
        let mut measured = Vec::new();
        for tiering in [Tiering::Baseline, Tiering::Optimized] {
            let cache = tempfile::tempdir().expect("temp dir");
            let engine = HostEngine::new(HostConfig {
                tiering,
                ..HostConfig::default()
            })
            .expect("engine");
            let runtime =
                WasmRuntime::new(engine, Some(CompileCache::new(cache.path()))).expect("runtime");
            let started = Instant::now();
            let function = runtime
                .load("function-patch-and-transform", component)
                .expect("load P&T");
            let compile = started.elapsed().as_secs_f64();
            let call = self.time(budget, || {
                function.call_blocking(&request, None).expect("P&T call");
            });
            measured.push((function.tier(), compile, call));
        }
        let [
            (baseline, winch_compile, winch_call),
            (_, cranelift_compile, cranelift_call),
        ] = measured[..]
        else {
            return;
        };
        if baseline != Tier::Baseline {
            self.notes
                .push("item 13: no baseline compiler on this machine".into());
            return;
        }
        self.rows.push(row(
            "P&T loaded from an empty cache: Winch (baseline) vs Cranelift".into(),
            (winch_compile, "s"),
            ("Cranelift", cranelift_compile),
            None,
        ));
        self.rows.push(row(
            "P&T warm call in process: Winch's code vs Cranelift's".into(),
            (winch_call / 1000.0, "µs"),
            ("Cranelift's", cranelift_call / 1000.0),
            None,
        ));
    }

    /// Resident memory per function for real, different components: the
    /// ports xfn ships, each served once and called once (with P&T's
    /// request: the others answer it with their own results or errors,
    /// having run), against one small function alone.
    fn shipped_functions(&mut self, bin: &Path, request: &xfn_proto::json::v1::RunFunctionRequest) {
        let wasm = xfn_tests::wasm_dir();
        let cache = tempfile::tempdir().expect("temp dir");
        let resident = |functions: &[(String, PathBuf)]| -> Result<f64, String> {
            let serve = Peer::xfn_serve(bin, functions, cache.path(), &[])?;
            for (name, _) in functions {
                let authority = format!("{name}.crossplane-system:9443");
                self.rt
                    .block_on(call_once(&serve.target, Some(&authority), request))
                    .map_err(|e| format!("calling {name}: {e}"))?;
            }
            Ok(rss_kib(serve.child.id()) / 1024.0)
        };
        let alone = [("hello".to_owned(), wasm.join("hello.wasm"))];
        let shipped: Vec<(String, PathBuf)> = SHIPPED
            .iter()
            .map(|name| (name.replace('_', "-"), wasm.join(format!("{name}.wasm"))))
            .collect();
        match resident(&alone).and_then(|alone| Ok((alone, resident(&shipped)?))) {
            Ok((alone, all)) => {
                let n = shipped.len();
                self.rows.push(row(
                    format!(
                        "{n} shipped functions, distinct components: resident after a call each"
                    ),
                    (all, "MiB"),
                    ("one small function alone", alone),
                    None,
                ));
                self.rows.push(row(
                    format!("{n} shipped functions: resident per function above one alone"),
                    ((all - alone) / (n as f64 - 1.0), "MiB"),
                    ("issue 38's budget: 1 GiB for 1,000", RSS_LIMIT_MIB / 1000.0),
                    None,
                ));
            }
            Err(e) => self.notes.push(format!("item 13, shipped functions: {e}")),
        }
    }
}

/// The ports xfn ships as built-ins, by their component's file name.
const SHIPPED: &[&str] = &[
    "function_patch_and_transform",
    "function_auto_ready",
    "function_environment_configs",
    "function_extra_resources",
    "function_sequencer",
    "function_status_transformer",
    "function_cel_filter",
    "function_cidr",
    "function_go_templating",
    "function_kcl",
    "function_annotate",
];

/// A row of item 13: `value` in `unit` beside `peer`, against `target`
/// (its text and whether it is met) if it has one.
fn row(
    what: String,
    (value, unit): (f64, &'static str),
    (peer_what, peer): (&str, f64),
    target: Option<(String, bool)>,
) -> Row {
    let row = Row {
        item: "13 many functions",
        what,
        value,
        unit,
        peer_what: peer_what.into(),
        peer,
        target: "—".into(),
        met: None,
    };
    match target {
        Some((text, met)) => row.against(&text, met),
        None => row,
    }
}
