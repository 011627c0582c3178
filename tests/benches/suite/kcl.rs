//! Item 12: a warm call of function-kcl on a typical corpus program
//! (`kcl_typical.k`, 67 lines: a schema with checks, `regex`, a config of
//! labels, two list comprehensions of resources, the XR's status), through
//! the wasm host and natively, beside P&T's call (item 1) and the real
//! KCL's time for the same program (kcl-lib from PyPI, in-process, warm).

use super::*;

/// The program, written for this benchmark in the shape of the corpus's
/// inline programs (53 lines at the median).
const PROGRAM: &str = include_str!("kcl_typical.k");

/// The reference's runner.
const REFERENCE: &str = "tests/benches/suite/kcl_reference.py";

/// The resources the program composes from [`xr`]: two per bucket.
const COMPOSED: usize = 4;

/// The observed XR the program reads as `option("params").oxr`.
fn xr() -> serde_json::Value {
    json!({
        "apiVersion": "example.crossplane.io/v1beta1", "kind": "XBucketSet",
        "metadata": {"name": "example"},
        "spec": {"count": 2, "region": "us-east-2", "versioning": true,
                 "tags": {"cost-center": "42", "owner": "platform"}},
    })
}

fn request() -> xfn_sdk::Request {
    serde_json::from_value(json!({
        "observed": {"composite": {"resource": xr()}},
        "input": {
            "apiVersion": "krm.kcl.dev/v1alpha1", "kind": "KCLInput",
            "spec": {"source": PROGRAM},
        },
    }))
    .expect("a request")
}

impl Suite {
    /// Item 12 (see the module's documentation).
    pub(super) fn kcl(&mut self) {
        let request = request();
        let host_request = xfn_tests::convert::request(request.clone());
        let runtime = xfn_tests::runtime(HostConfig::default());
        let wasm = loaded_and_checked(&runtime, "function-kcl", &host_request, COMPOSED);
        let native_run = || {
            <function_kcl::FunctionKcl as xfn_sdk::Function>::run(std::hint::black_box(&request))
        };
        let native_response = native_run().expect("native run");
        assert!(
            native_response.results.is_empty(),
            "{:?}",
            native_response.results
        );

        let budget = Duration::from_secs(2);
        let native = self.time(budget, || {
            std::hint::black_box(native_run().ok());
        });
        let in_host = self.time(budget, || {
            wasm.call_blocking(&host_request, None).expect("wasm call");
        });
        let pt_in_host = match self.pt_in_host {
            Some(ns) => ns,
            None => {
                let pt = xfn_tests::load(
                    &runtime,
                    "function-patch-and-transform",
                    "function_patch_and_transform",
                );
                let pt_request = xfn_tests::convert::request(patch_and_transform::docs_request());
                self.time(budget, || {
                    pt.call_blocking(&pt_request, None).expect("wasm call");
                })
            }
        };

        let item = "12 function-kcl warm call";
        self.rows.push(Row::micros(
            item,
            "function-kcl, wasm host (call_blocking)",
            in_host,
            "native",
            native,
        ));
        self.rows.push(Row::micros(
            item,
            "function-kcl, wasm host",
            in_host,
            "P&T, wasm host (item 1)",
            pt_in_host,
        ));
        if !self.full {
            return;
        }
        match reference_ns() {
            Ok(reference) => self.rows.push(Row::micros(
                item,
                "function-kcl, wasm host",
                in_host,
                "kcl-lib 0.12.3 (the real KCL, in-process, warm)",
                reference,
            )),
            Err(e) => self.notes.push(format!("12: kcl-lib not measured: {e}")),
        }
    }
}

/// The median ns of a warm run of [`PROGRAM`] by kcl-lib, which must give
/// the same items as the port.
fn reference_ns() -> Result<f64, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let program = dir.path().join("main.k");
    std::fs::write(&program, PROGRAM).map_err(|e| e.to_string())?;
    let params = json!({"oxr": xr()}).to_string();
    let out = Command::new("timeout")
        .arg("120")
        .arg(python())
        .arg(workspace().join(REFERENCE))
        .arg(&program)
        .arg(&params)
        .arg("200")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python().display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} (`make venv` installs kcl-lib)",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut lines = stdout.lines();
    let result: serde_json::Value = lines
        .next()
        .and_then(|l| serde_json::from_str(l).ok())
        .ok_or("kcl-lib printed no result")?;
    let items = result["items"].as_array().map_or(0, Vec::len);
    if items != COMPOSED + 1 {
        return Err(format!("kcl-lib gave {items} items, not {}", COMPOSED + 1));
    }
    lines
        .next()
        .and_then(|l| l.trim().parse().ok())
        .ok_or_else(|| "kcl-lib printed no time".to_owned())
}
