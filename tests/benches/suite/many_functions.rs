//! Item 13: many functions in one `xfn serve`, with a real component
//! (function-patch-and-transform, 1.8 MB): ready time (start to listening)
//! and resident memory after one call of each function, for 100 and 1,000
//! functions that are one component served under many names, and for 100
//! distinct components (the same code with a custom section each, as 100
//! authors' builds would be), from an empty compile cache, then a warm one.
//!
//! The component is byte for byte the built-in one, so `make bench`'s
//! precompiled binary loads it without compiling even from an empty
//! cache; the distinct ones are compiled, in parallel.

use super::*;

/// Ready within this from a warm cache (issue 38).
const WARM_READY_S: f64 = 5.0;

/// Ready within this from an empty cache, 100 functions (issue 38).
const COLD_READY_S: f64 = 30.0;

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
            }
        }
    }
}

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
