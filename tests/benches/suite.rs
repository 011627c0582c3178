//! `make bench`: xfn's benchmark suite, side by side in one run, with a
//! report in `target/bench-report/` (README.md and chart.svg).
//!
//! 1. a warm call of function-patch-and-transform on the docs example:
//!    through the wasm host, natively (the floor), through `xfn serve`,
//!    the p99 of one caller's calls timed alone, and calls made after the
//!    thread has idled as a server does between one stream's calls;
//! 2. instantiation alone, and with a call of `hello`, with a pooling vs an
//!    on-demand instance allocator;
//! 3. `xfn render` of the docs example as a process, cold vs warm cache;
//! 4. `xfn serve` vs a Go function server (grpc-go, tests/go-peer) and the
//!    Python SDK under load, 1/8/64 concurrent streams, with xfn's server
//!    running P&T natively (`xfn-native-serve`) to split a served call into
//!    the server's cost and the sandbox's;
//! 5. resident memory of one `xfn serve` holding N functions vs N Python
//!    function processes;
//! 6. cost vs request size, in-process and through gRPC;
//! 7. resident memory of one `xfn controller` pod serving 100 functions
//!    from a real registry (Crossplane's objects in the fake API server)
//!    vs 100 function Deployments, one Python SDK process each;
//! 8. fairness: a healthy function's p50/p99 latency through `xfn serve`
//!    alone, then beside N calls of another function that compute until
//!    their deadline (N = 1, the cores, then 4 × the cores), and the Python
//!    SDK function's alone (a Python process has no neighbours to suffer
//!    from). N = 1 is issue 15's "latency under a slow function": one
//!    function at its deadline must not raise the other's p99.
//! 9. a container function's start (tests/container-function's image, in
//!    xfn's sandbox) to its first answered call, with its root unpacked
//!    (cold) and reused (warm), beside a wasm function's load and first
//!    call without and with a compile cache.
//! 10. a warm call of function-go-templating on a typical template (two
//!     resources per item of a `range`, `toYaml`, `setResourceNameAnnotation`,
//!     the XR's status), through the wasm host and natively, beside item 1's
//!     P&T call.
//! 11. one core each: `xfn serve` (`hello`, and P&T) and the Go peer (a
//!     trivial function, and P&T's patch) each pinned to core 0 (Go with
//!     `GOMAXPROCS=1`, xfn with `--workers 1`), h2load pinned to core 1,
//!     1/8/64 streams, in alternating order over two rounds: throughput,
//!     p50/p99 and server CPU per call, as ratios to Go. This is how a
//!     function pod with a CPU limit of one core runs.
//! 12. a warm call of function-kcl on a typical corpus-shaped program,
//!     through the wasm host and natively, beside item 1's P&T call and the
//!     real KCL's (kcl-lib) time for the same program.
//! 13. many functions in one `xfn serve` with a real component (P&T): ready
//!     time and resident memory for 100 and 1,000 functions of one
//!     component, and 100 distinct components, from an empty then a warm
//!     compile cache.
//!
//! Without `--bench` (as `cargo test --all-targets` runs it) it runs a smoke
//! version of the in-process measurements only, in a few seconds, and writes
//! no report. Item numbers after `--` run just those items and print their
//! figures without writing the report, e.g.
//! `cargo bench -p xfn-tests --bench suite -- 1 4`.

#[path = "../tests/oci_support/mod.rs"]
mod oci_support;

#[path = "suite/cluster_pod.rs"]
mod cluster_pod;

#[path = "suite/pinned.rs"]
mod pinned;

#[path = "suite/many_functions.rs"]
mod many_functions;

#[path = "suite/kcl.rs"]
mod kcl;

use std::fmt::Write as _;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use xfn_grpc::convert::request_to_proto;
use xfn_grpc::{ClientOptions, FunctionTable, GrpcFunction, Server, ServerConfig};
use xfn_runtime::protocol::RunFunctionRequest;
use xfn_runtime::{Function, HostConfig, WasmFunction};
// The load generator sends what xfn's own client sends: Structs as JSON.
use xfn_proto::json::v1::function_runner_service_client::FunctionRunnerServiceClient;
use xfn_tests::patch_and_transform;

/// The allocator the `xfn` binary ships with, so that in-process figures
/// (and the native floor) are measured as xfn runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The sleep before each of item 1's calls timed after idling: about the
/// time a server waits between one stream's calls.
const IDLE_BETWEEN_CALLS: Duration = Duration::from_micros(200);

/// How long each load point runs.
const LOAD_SECONDS: u64 = 3;

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let only: Vec<u32> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let mut suite = Suite {
        full,
        only,
        rows: Vec::new(),
        notes: Vec::new(),
        pt_in_host: None,
        pt_in_host_idle: None,
        rt: tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("tokio runtime"),
    };
    if suite.wants(1) {
        suite.patch_and_transform();
    }
    if suite.wants(10) {
        suite.go_templating();
    }
    if suite.wants(12) {
        suite.kcl();
    }
    if suite.wants(2) {
        suite.instantiation();
    }
    if suite.wants(6) {
        suite.request_size();
    }
    if full {
        match xfn_bin() {
            Some(bin) => {
                if suite.wants(3) {
                    suite.render(&bin);
                }
                if suite.wants(4) || suite.wants(5) {
                    suite.serve_vs_python(&bin);
                }
                if suite.wants(7) {
                    suite.cluster_pod(&bin);
                }
                if suite.wants(8) {
                    suite.fairness(&bin);
                }
                if suite.wants(9) {
                    suite.container_start();
                }
                if suite.wants(11) {
                    suite.pinned(&bin);
                }
                if suite.wants(13) {
                    suite.many_functions(&bin);
                }
            }
            None => suite.notes.push(
                "target/release/xfn is missing (set XFN_BIN or run `make bench`): \
                 items 3-5, 7-9, 11 and 13 skipped"
                    .into(),
            ),
        }
        if !suite.only.is_empty() {
            println!("{}", suite.markdown());
            println!("(items {:?} only: report not written)", suite.only);
            return;
        }
        let dir = workspace().join("target/bench-report");
        std::fs::create_dir_all(&dir).expect("create target/bench-report");
        std::fs::write(dir.join("README.md"), suite.markdown()).expect("write README.md");
        std::fs::write(dir.join("chart.svg"), suite.svg()).expect("write chart.svg");
        println!("{}", suite.markdown());
        println!("report: {}", dir.display());
    } else {
        println!("bench suite smoke run ok ({} figures)", suite.rows.len());
    }
}

/// The container test function and its image (tests/tests/container).
#[cfg(target_os = "linux")]
#[allow(dead_code)]
#[path = "../tests/container/support.rs"]
mod container_support;

/// One figure of the report, against its peer from the same run.
struct Row {
    item: &'static str,
    what: String,
    value: f64,
    unit: &'static str,
    peer_what: String,
    peer: f64,
    /// The target, and whether it is met (None: informational).
    target: String,
    met: Option<bool>,
}

impl Row {
    /// A figure in µs, from nanosecond timings, with no target.
    fn micros(
        item: &'static str,
        what: impl Into<String>,
        value_ns: f64,
        peer_what: impl Into<String>,
        peer_ns: f64,
    ) -> Row {
        Row {
            item,
            what: what.into(),
            value: value_ns / 1000.0,
            unit: "µs",
            peer_what: peer_what.into(),
            peer: peer_ns / 1000.0,
            target: "—".into(),
            met: None,
        }
    }

    /// The same figure, with its target and whether it is met.
    fn against(mut self, target: &str, met: bool) -> Row {
        self.target = target.into();
        self.met = Some(met);
        self
    }

    fn ratio(&self) -> f64 {
        self.value / self.peer
    }
}

struct Suite {
    full: bool,
    /// The items to run; empty for all.
    only: Vec<u32>,
    rows: Vec<Row>,
    notes: Vec<String>,
    /// Item 1's warm in-process call of P&T, in ns, when it ran: item 4's
    /// targets add it to the Go peer's figures.
    pt_in_host: Option<f64>,
    /// The same call after idling for [`IDLE_BETWEEN_CALLS`], in ns: about
    /// how a call at 1 stream finds the machine.
    pt_in_host_idle: Option<f64>,
    rt: tokio::runtime::Runtime,
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn xfn_bin() -> Option<PathBuf> {
    let bin = std::env::var_os("XFN_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target/release/xfn"));
    bin.exists().then_some(bin)
}

fn python() -> PathBuf {
    std::env::var_os("XFN_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join(".venv/bin/python"))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// The Go peer in item 4's rows: grpc-go doing P&T's patch natively.
const GO_PEER: &str = "Go peer, grpc-go, P&T natively";

/// Item 10's template: what upstream's examples do (`example/inline`,
/// `example/functions/toYaml`): a `range` composing two resources per
/// item, maps copied with `toYaml`, names set with
/// `setResourceNameAnnotation`, and a document updating the XR's status.
const GO_TEMPLATE: &str = r#"{{- $xr := .observed.composite.resource }}
{{- range $i := until ($xr.spec.count | int) }}
---
apiVersion: s3.aws.upbound.io/v1beta1
kind: Bucket
metadata:
  annotations:
    {{ setResourceNameAnnotation (printf "bucket-%d" $i) }}
  labels:
    {{- $xr.metadata.labels | toYaml | nindent 4 }}
spec:
  forProvider:
    region: {{ $xr.spec.region }}
    tags: {{- $xr.spec.tags | toYaml | nindent 6 }}
---
apiVersion: s3.aws.upbound.io/v1beta1
kind: BucketVersioning
metadata:
  annotations:
    {{ setResourceNameAnnotation (printf "versioning-%d" $i) }}
spec:
  forProvider:
    bucketRef:
      name: {{ $xr.metadata.name }}-{{ $i }}
    region: {{ $xr.spec.region }}
    versioningConfiguration:
      - status: {{ ternary "Enabled" "Suspended" $xr.spec.versioning }}
{{- end }}
---
apiVersion: {{ $xr.apiVersion }}
kind: {{ $xr.kind }}
status:
  buckets: {{ $xr.spec.count }}
"#;

/// The resources item 10's template composes from [`go_templating_request`].
const GO_TEMPLATE_RESOURCES: usize = 4;

/// Item 10's request: an XR asking for two buckets, and [`GO_TEMPLATE`]
/// inline.
fn go_templating_request() -> xfn_sdk::Request {
    serde_json::from_value(json!({
        "observed": {"composite": {"resource": {
            "apiVersion": "example.crossplane.io/v1beta1", "kind": "XBucketSet",
            "metadata": {"name": "example", "labels": {"team": "platform", "env": "dev"}},
            "spec": {"count": 2, "region": "us-east-2", "versioning": true,
                     "tags": {"cost-center": "42", "owner": "platform", "managed-by": "crossplane"}},
        }}},
        "input": {
            "apiVersion": "gotemplating.fn.crossplane.io/v1beta1", "kind": "GoTemplate",
            "source": "Inline", "inline": {"template": GO_TEMPLATE},
        },
    }))
    .expect("a request")
}

/// hello's request, its XR padded with `padding` bytes.
fn hello_request(padding: usize) -> RunFunctionRequest {
    let request: xfn_sdk::Request = serde_json::from_value(json!({
        "observed": {"composite": {"resource": {
            "apiVersion": "example.crossplane.io/v1", "kind": "XGreeting",
            "metadata": {"name": "example-hello"},
            "spec": {"audience": "world", "padding": "x".repeat(padding)},
        }}},
        "input": {"apiVersion": "hello.fn.xfn.dev/v1alpha1", "kind": "Input", "greeting": "Hello"},
    }))
    .expect("a request");
    xfn_tests::convert::request(request)
}

/// Built-in function `name` (its component named with `_` for `-`),
/// loaded on `runtime` and checked on `request`: what a timing measures
/// must be the function's work, not an error's, so the call must compose
/// `composed` resources without a fatal result.
fn loaded_and_checked(
    runtime: &xfn_runtime::WasmRuntime,
    name: &str,
    request: &RunFunctionRequest,
    composed: usize,
) -> Arc<WasmFunction> {
    let wasm = xfn_tests::load(runtime, name, &name.replace('-', "_"));
    let response = wasm
        .call_blocking(request, None)
        .unwrap_or_else(|e| panic!("{name} call: {e}"));
    assert!(
        response.fatal_result().is_none(),
        "{name} failed: {:?}",
        response.results
    );
    let resources = response.desired.as_ref().map_or(0, |d| d.resources.len());
    assert_eq!(resources, composed, "{response:?}");
    wasm
}

impl Suite {
    fn wants(&self, item: u32) -> bool {
        self.only.is_empty() || self.only.contains(&item)
    }

    /// Median nanoseconds per call of `f`, in batches of at least 20 µs,
    /// over `budget` (5 batches at least; a smoke run takes 5 batches).
    fn time(&self, budget: Duration, mut f: impl FnMut()) -> f64 {
        let budget = if self.full { budget } else { Duration::ZERO };
        f();
        let mut batch = 1usize;
        loop {
            let t = Instant::now();
            for _ in 0..batch {
                f();
            }
            if t.elapsed() >= Duration::from_micros(20) || batch >= 1 << 16 || !self.full {
                break;
            }
            batch *= 2;
        }
        median(Self::samples(budget, batch, 5, Duration::ZERO, f))
    }

    /// Nanoseconds per call of `f`, one sample per `batch` calls, until
    /// `budget` has passed and there are at least `least` samples; the
    /// thread sleeps for `pause` (untimed) before each batch.
    fn samples(
        budget: Duration,
        batch: usize,
        least: usize,
        pause: Duration,
        mut f: impl FnMut(),
    ) -> Vec<f64> {
        let mut samples = Vec::new();
        let started = Instant::now();
        while samples.len() < least || started.elapsed() < budget {
            if !pause.is_zero() {
                std::thread::sleep(pause);
            }
            let t = Instant::now();
            for _ in 0..batch {
                f();
            }
            samples.push(t.elapsed().as_nanos() as f64 / batch as f64);
        }
        samples
    }

    /// An in-process `xfn serve` of `table`, accepting requests up to
    /// `max_recv` bytes.
    fn serve(&self, table: FunctionTable, max_recv: usize) -> String {
        self.rt.block_on(async {
            let config = ServerConfig {
                address: ([127, 0, 0, 1], 0).into(),
                max_recv_message_size: max_recv,
                shutdown_grace: Duration::from_secs(1),
                ..ServerConfig::default()
            };
            let server = Server::bind(config, table).await.expect("bind");
            let addr = server.local_addr().to_string();
            tokio::spawn(server.serve());
            addr
        })
    }

    fn client(&self, name: &str, target: &str, max_recv: usize) -> GrpcFunction {
        let _guard = self.rt.enter();
        let options = ClientOptions {
            max_recv_message_size: max_recv,
            ..ClientOptions::default()
        };
        GrpcFunction::new(name, target, options).expect("client")
    }

    fn grpc_call(&self, f: &GrpcFunction, request: &RunFunctionRequest) -> Result<(), String> {
        self.rt
            .block_on(f.call(request, Some(Duration::from_secs(30))))
            .map(drop)
            .map_err(|e| e.to_string())
    }

    /// Item 1: a warm call of P&T on the docs example.
    fn patch_and_transform(&mut self) {
        let request = patch_and_transform::docs_request();
        let host_request = xfn_tests::convert::request(request.clone());
        let runtime = xfn_tests::runtime(HostConfig::default());
        let name = "function-patch-and-transform";
        let wasm = xfn_tests::load(&runtime, name, "function_patch_and_transform");
        let budget = Duration::from_secs(2);

        let native = self.time(budget, || {
            std::hint::black_box(function_patch_and_transform::run(std::hint::black_box(
                &request,
            )));
        });
        // The guest gets each object as JSON text and returns JSON text:
        // the native floor plus that (de)serialization.
        let json_request = serde_json::to_string(&request).expect("serialize");
        let native_json_call = || {
            let request: xfn_sdk::Request =
                serde_json::from_str(std::hint::black_box(&json_request)).expect("parse");
            let response = function_patch_and_transform::run(&request);
            std::hint::black_box(serde_json::to_string(&response).expect("serialize"));
        };
        let native_json = self.time(budget, native_json_call);
        let in_host = self.time(budget, || {
            wasm.call_blocking(&host_request, None).expect("wasm call");
        });
        // Calls that find the caches as one stream's calls find a server's:
        // cold, after the thread has slept between them.
        let native_json_idle = percentile(
            &self.single_calls(budget, IDLE_BETWEEN_CALLS, native_json_call),
            0.5,
        );
        let in_host_idle = percentile(
            &self.single_calls(budget, IDLE_BETWEEN_CALLS, || {
                wasm.call_blocking(&host_request, None).expect("wasm call");
            }),
            0.5,
        );
        // One caller's calls one by one: the tail shows what a few calls
        // pay for all (each flush of a decommit batch).
        let singles = self.single_calls(budget, Duration::ZERO, || {
            wasm.call_blocking(&host_request, None).expect("wasm call");
        });
        // Where the wasm host's time goes: a fresh instance and its
        // teardown, and the rest (lowering the request, the guest's run,
        // lifting the response).
        let instance = self.time(budget, || {
            wasm.probe().expect("P&T instantiates");
        });
        // Pages the kernel maps in per call (each a fault on this VM costs
        // about a microsecond), against those of the smallest function.
        let call_faults = xfn_tests::minor_faults_per_run(1000, || {
            wasm.call_blocking(&host_request, None).expect("wasm call");
        });
        let hello = xfn_tests::load(&runtime, "function-hello", "hello");
        let hello_request = hello_request(0);
        let hello_faults = xfn_tests::minor_faults_per_run(1000, || {
            hello
                .call_blocking(&hello_request, None)
                .expect("hello call");
        });
        let mut table = FunctionTable::new();
        table.insert(name, wasm.clone() as Arc<dyn Function>);
        let target = self.serve(table, 4 << 20);
        let client = self.client(name, &target, 4 << 20);
        let grpc = self.time(budget, || {
            self.grpc_call(&client, &host_request).expect("gRPC call");
        });

        self.pt_in_host = Some(in_host);
        self.pt_in_host_idle = Some(in_host_idle);
        let item = "1 P&T warm call";
        self.rows.push(
            Row::micros(item, "wasm host (call_blocking)", in_host, "native", native).against(
                "≤ 2× native and < 30 µs",
                in_host <= 2.0 * native && in_host < 30_000.0,
            ),
        );
        self.rows.push(Row::micros(
            item,
            "wasm host, one caller's calls timed alone: p99",
            percentile(&singles, 0.99),
            "p50",
            percentile(&singles, 0.5),
        ));
        self.rows.push(Row::micros(
            item,
            "native + JSON round trip of request/response",
            native_json,
            "native",
            native,
        ));
        let idle = format!("{} µs idle", IDLE_BETWEEN_CALLS.as_micros());
        self.rows.push(Row::micros(
            item,
            format!("wasm host, a call after {idle}"),
            in_host_idle,
            "back to back",
            in_host,
        ));
        self.rows.push(Row::micros(
            item,
            format!("native + JSON, a call after {idle}"),
            native_json_idle,
            "back to back",
            native_json,
        ));
        self.rows.push(Row::micros(
            item,
            "of the wasm host's time: fresh instance + teardown",
            instance,
            "wasm host",
            in_host,
        ));
        self.rows.push(Row::micros(
            item,
            "of the wasm host's time: WIT lowering + guest run + lifting",
            in_host - instance,
            "native + JSON",
            native_json,
        ));
        self.rows.push(Row {
            item,
            what: "page faults per call, this thread".into(),
            value: call_faults,
            unit: "faults",
            peer_what: "a call of hello".into(),
            peer: hello_faults,
            target: "—".into(),
            met: None,
        });
        self.rows.push(Row::micros(
            item,
            "xfn serve, loopback gRPC",
            grpc,
            "wasm host",
            in_host,
        ));
    }

    /// Item 10: a warm call of function-go-templating on a typical
    /// template, beside P&T's on the docs example.
    fn go_templating(&mut self) {
        let request = go_templating_request();
        let host_request = xfn_tests::convert::request(request.clone());
        let runtime = xfn_tests::runtime(HostConfig::default());
        let wasm = loaded_and_checked(
            &runtime,
            "function-go-templating",
            &host_request,
            GO_TEMPLATE_RESOURCES,
        );
        let native_response = function_go_templating::run(&request);
        assert!(
            native_response.results.is_empty(),
            "{:?}",
            native_response.results
        );

        let budget = Duration::from_secs(2);
        let native = self.time(budget, || {
            std::hint::black_box(function_go_templating::run(std::hint::black_box(&request)));
        });
        let in_host = self.time(budget, || {
            wasm.call_blocking(&host_request, None).expect("wasm call");
        });
        let (pt_in_host, pt_native) = {
            let pt_request = patch_and_transform::docs_request();
            let pt = xfn_tests::load(
                &runtime,
                "function-patch-and-transform",
                "function_patch_and_transform",
            );
            let pt_host_request = xfn_tests::convert::request(pt_request.clone());
            let in_host = match self.pt_in_host {
                Some(ns) => ns,
                None => self.time(budget, || {
                    pt.call_blocking(&pt_host_request, None).expect("wasm call");
                }),
            };
            let native = self.time(budget, || {
                std::hint::black_box(function_patch_and_transform::run(std::hint::black_box(
                    &pt_request,
                )));
            });
            (in_host, native)
        };

        let item = "10 go-templating warm call";
        self.rows.push(Row::micros(
            item,
            "function-go-templating, wasm host (call_blocking)",
            in_host,
            "native",
            native,
        ));
        self.rows.push(Row::micros(
            item,
            "function-go-templating, wasm host",
            in_host,
            "P&T, wasm host (item 1)",
            pt_in_host,
        ));
        self.rows.push(Row::micros(
            item,
            "function-go-templating, native",
            native,
            "P&T, native",
            pt_native,
        ));
    }

    /// Each call of `f` timed alone, in ns, sorted: at least 1,000 calls
    /// (a few in a smoke run), for `budget` in a full one, each after the
    /// thread has slept for `pause` (if not zero). A cost that a few calls
    /// pay for many (a batch given back to the kernel) shows in the tail,
    /// which batched timing averages away; a pause leaves the caches as a
    /// server finds them between one stream's calls.
    fn single_calls(&self, budget: Duration, pause: Duration, mut f: impl FnMut()) -> Vec<f64> {
        let (least, budget) = if self.full {
            (1000, budget)
        } else {
            (10, Duration::ZERO)
        };
        f();
        let mut samples = Self::samples(budget, 1, least, pause, f);
        samples.sort_by(f64::total_cmp);
        samples
    }

    /// Item 2: instantiation alone (a fresh store and instance, torn down),
    /// and instantiation plus a call of hello, pooled vs on-demand.
    fn instantiation(&mut self) {
        let request = hello_request(0);
        let budget = Duration::from_secs(2);
        let mut alone = Vec::new();
        let mut with_call = Vec::new();
        for pooling in [true, false] {
            let runtime = xfn_tests::runtime(HostConfig {
                pooling,
                ..HostConfig::default()
            });
            let hello = xfn_tests::load(&runtime, "function-hello", "hello");
            alone.push(self.time(budget, || {
                hello.probe().expect("hello instantiates");
            }));
            with_call.push(self.time(budget, || {
                hello.call_blocking(&request, None).expect("hello call");
            }));
        }
        self.rows.push(
            Row::micros(
                "2 instantiation",
                "instantiate alone, pooling allocator",
                alone[0],
                "on-demand",
                alone[1],
            )
            .against("pooled < 10 µs", alone[0] < 10_000.0),
        );
        self.rows.push(Row::micros(
            "2 instantiation",
            "instantiate + call hello, pooling allocator",
            with_call[0],
            "on-demand",
            with_call[1],
        ));
    }

    /// Item 9: a container function's start, from starting its sandbox
    /// to its first answered call, with its root unpacked (cold) and
    /// reused (warm), beside a wasm function's load and first call with
    /// and without a compile cache.
    #[cfg(target_os = "linux")]
    fn container_start(&mut self) {
        use xfn_container::{ContainerFunction, FunctionSettings};
        const ROUNDS: usize = 5;
        let request = hello_request(0);
        let blobs = tempfile::tempdir().expect("tempdir");
        let image = container_support::local_image(blobs.path(), &[]);
        let warm_cache = tempfile::tempdir().expect("cache");
        let container = |cache: &std::path::Path| {
            let options = container_support::options(cache);
            self.rt.block_on(async {
                let began = Instant::now();
                let function = ContainerFunction::start(
                    "bench",
                    &image,
                    &FunctionSettings::default(),
                    &options,
                )
                .await
                .expect("start the container function");
                function
                    .call(&request, Some(Duration::from_secs(10)))
                    .await
                    .expect("first call");
                began.elapsed().as_nanos() as f64
            })
        };
        container(warm_cache.path());
        let cold: Vec<f64> = (0..ROUNDS)
            .map(|_| container(tempfile::tempdir().expect("cache").path()))
            .collect();
        let warm: Vec<f64> = (0..ROUNDS).map(|_| container(warm_cache.path())).collect();

        let pt = xfn_tests::component("function_patch_and_transform");
        let compile_cache = tempfile::tempdir().expect("compile cache");
        let wasm = |cached: bool| {
            let engine = xfn_runtime::HostEngine::new(HostConfig::default()).expect("engine");
            let cache = cached.then(|| xfn_runtime::CompileCache::new(compile_cache.path()));
            let runtime = xfn_runtime::WasmRuntime::new(engine, cache).expect("runtime");
            let began = Instant::now();
            let function = runtime.load("pt", &pt).expect("load P&T");
            let _ = function.call_blocking(&request, None);
            began.elapsed().as_nanos() as f64
        };
        wasm(true);
        let wasm_cold: Vec<f64> = (0..ROUNDS).map(|_| wasm(false)).collect();
        let wasm_warm: Vec<f64> = (0..ROUNDS).map(|_| wasm(true)).collect();
        self.rows.push(Row::micros(
            "9 container start",
            "container function: unpack 3 layers + sandbox + listen + first call (cold)",
            median(cold),
            "wasm P&T: compile + first call",
            median(wasm_cold),
        ));
        self.rows.push(Row::micros(
            "9 container start",
            "container function: cached root + sandbox + listen + first call (warm)",
            median(warm),
            "wasm P&T: compile cache + first call",
            median(wasm_warm),
        ));
    }

    #[cfg(not(target_os = "linux"))]
    fn container_start(&mut self) {
        self.notes
            .push("item 9 (container start) runs on Linux only".into());
    }

    /// Item 6: cost vs the size of the observed state.
    fn request_size(&mut self) {
        let sizes: &[(usize, &str)] = if self.full {
            &[
                (1 << 10, "1 KiB"),
                (64 << 10, "64 KiB"),
                (1 << 20, "1 MiB"),
                (8 << 20, "8 MiB"),
            ]
        } else {
            &[(1 << 10, "1 KiB")]
        };
        let runtime = xfn_tests::runtime(HostConfig::default());
        let hello = xfn_tests::load(&runtime, "function-hello", "hello");
        let table = |f: &Arc<WasmFunction>| {
            let mut t = FunctionTable::new();
            t.insert("function-hello", f.clone() as Arc<dyn Function>);
            t
        };
        let default_target = self.serve(table(&hello), 4 << 20);
        let big_target = self.serve(table(&hello), 64 << 20);
        let default_client = self.client("function-hello", &default_target, 4 << 20);
        let big_client = self.client("function-hello", &big_target, 64 << 20);
        let budget = Duration::from_secs(1);
        let mut host_times = Vec::new();
        let mut grpc_times = Vec::new();
        for &(size, label) in sizes {
            let request = hello_request(size);
            let in_host = self.time(budget, || {
                hello.call_blocking(&request, None).expect("hello call");
            });
            match self.grpc_call(&default_client, &request) {
                Ok(()) => {}
                Err(e) => self.notes.push(format!(
                    "6: a {label} request through gRPC with the default 4 MiB limits: {e}"
                )),
            }
            let grpc = match self.grpc_call(&big_client, &request) {
                Ok(()) => self.time(budget, || {
                    self.grpc_call(&big_client, &request).expect("gRPC call");
                }),
                Err(e) => {
                    self.notes.push(format!(
                        "6: a {label} request through gRPC with 64 MiB limits: {e}"
                    ));
                    f64::NAN
                }
            };
            host_times.push(in_host);
            grpc_times.push(grpc);
            self.rows.push(Row::micros(
                "6 cost vs request size",
                format!("{label}: gRPC (64 MiB limits)"),
                grpc,
                "wasm host",
                in_host,
            ));
        }
        if host_times.len() == 4 {
            // Linear: from 1 MiB to 8 MiB, at most 1.5× the ideal 8× growth.
            for (times, what) in [(&host_times, "wasm host"), (&grpc_times, "gRPC")] {
                let growth = times[3] / times[2];
                self.rows.push(Row {
                    item: "6 cost vs request size",
                    what: format!("{what}: time(8 MiB) / time(1 MiB)"),
                    value: growth,
                    unit: "×",
                    peer_what: "linear: 8×".into(),
                    peer: 8.0,
                    target: "linear growth (≤ 12×)".into(),
                    met: Some(growth <= 12.0),
                });
            }
        }
    }

    /// Item 3: `xfn render` of the docs example as a process.
    fn render(&mut self, bin: &Path) {
        let dir = workspace().join("examples/docs");
        let run = |cache: &Path| {
            let t = Instant::now();
            let status = Command::new(bin)
                .current_dir(&dir)
                .args(["render", "xr.yaml", "composition.yaml", "functions.yaml"])
                .env("XFN_CACHE_DIR", cache)
                .env_remove("XFN_LOG")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("run xfn render");
            assert!(status.success(), "xfn render failed: {status}");
            t.elapsed().as_secs_f64() * 1000.0
        };
        let mut cold = Vec::new();
        for _ in 0..3 {
            let cache = tempfile::tempdir().expect("temp dir");
            cold.push(run(cache.path()));
        }
        let cache = tempfile::tempdir().expect("temp dir");
        run(cache.path());
        let mut warm = Vec::new();
        let started = Instant::now();
        while warm.len() < 10 || (started.elapsed() < Duration::from_secs(3) && warm.len() < 200) {
            warm.push(run(cache.path()));
        }
        let (cold, warm) = (median(cold), median(warm));
        self.rows.push(Row {
            item: "3 xfn render (process)",
            what: "warm compile cache".into(),
            value: warm,
            unit: "ms",
            peer_what: "cold cache".into(),
            peer: cold,
            target: "warm < 5 ms".into(),
            met: Some(warm < 5.0),
        });
        // `make bench` precompiles the built-ins into the binary, as `make
        // build` does: a cold cache then costs what a warm one does.
        let precompiled = xfn_runtime::precompiled::Precompiled::open(bin)
            .ok()
            .flatten()
            .is_some_and(|p| !p.is_empty());
        self.rows.push(Row {
            item: "3 xfn render (process)",
            what: if precompiled {
                "empty compile cache (precompiled built-ins)"
            } else {
                "empty compile cache (built-ins NOT precompiled)"
            }
            .into(),
            value: cold,
            unit: "ms",
            peer_what: "warm compile cache".into(),
            peer: warm,
            target: "cold ≤ 2 × warm".into(),
            met: Some(cold <= 2.0 * warm),
        });
    }

    /// The Python SDK function, started; `None` (with a note) if it can't be.
    fn python_peer(&mut self) -> Option<Peer> {
        Peer::python()
            .inspect_err(|e| {
                self.notes
                    .push(format!("the Python SDK function did not start: {e}"))
            })
            .ok()
    }

    /// The Go peer (tests/go-peer), built and started; `None` (with a note)
    /// if it can't be.
    fn go_peer(&mut self) -> Option<Peer> {
        Peer::go()
            .inspect_err(|e| self.notes.push(format!("the Go peer did not start: {e}")))
            .ok()
    }

    /// `peer`'s resident memory in KiB after it has served one call of
    /// `hello`'s request; `None` (with a note) if the call fails.
    fn rss_after_one_call(&mut self, peer: &Peer) -> Option<f64> {
        let request = request_to_proto(hello_request(0)).expect("proto request");
        match self.rt.block_on(call_once(&peer.target, None, &request)) {
            Ok(()) => Some(rss_kib(peer.child.id())),
            Err(e) => {
                self.notes.push(format!("a call of {}: {e}", peer.target));
                None
            }
        }
    }

    /// Item 7: one `xfn controller` pod serving 100 functions, beside 100
    /// function Deployments (one Python SDK process each).
    fn cluster_pod(&mut self, bin: &Path) {
        const FUNCTIONS: usize = 100;
        let Some(python) = self.python_peer() else {
            return;
        };
        let Some(py_rss) = self.rss_after_one_call(&python) else {
            return;
        };
        let hello =
            std::fs::read(xfn_tests::wasm_dir().join("hello.wasm")).expect("read hello.wasm");
        let components: Vec<Vec<u8>> = (0..FUNCTIONS)
            .map(|i| with_custom_section(&hello, i))
            .collect();
        match self
            .rt
            .block_on(cluster_pod::controller_rss_kib(bin, &components))
        {
            Ok(rss) => {
                let peer = py_rss * FUNCTIONS as f64;
                self.rows.push(Row {
                    item: "7 cluster pod memory",
                    what: format!("xfn controller pod, {FUNCTIONS} functions"),
                    value: rss / 1024.0,
                    unit: "MiB",
                    peer_what: format!(
                        "{FUNCTIONS} function Deployments (Python SDK process each)"
                    ),
                    peer: peer / 1024.0,
                    target: "< 1/10 of Python".into(),
                    met: Some(rss < peer / 10.0),
                });
            }
            Err(e) => self.notes.push(format!("xfn controller pod: {e}")),
        }
    }

    /// Items 4 and 5: `xfn serve` and the Python SDK as processes.
    fn serve_vs_python(&mut self, bin: &Path) {
        let hello = xfn_tests::wasm_dir().join("hello.wasm");
        let hello_bytes = std::fs::read(&hello).expect("read hello.wasm");
        let Some(python) = self.python_peer() else {
            return;
        };
        let request = request_to_proto(hello_request(0)).expect("proto request");

        let cache = tempfile::tempdir().expect("temp dir");
        if self.wants(5) {
            // 5 first: memory after one call each, before any load.
            let dir = tempfile::tempdir().expect("temp dir");
            let names = |n: usize| (0..n).map(|i| format!("fn-{i}")).collect::<Vec<_>>();
            let mut paths = Vec::new();
            for i in 0..100 {
                let path = dir.path().join(format!("hello-{i}.wasm"));
                std::fs::write(&path, with_custom_section(&hello_bytes, i)).expect("write copy");
                paths.push(path);
            }
            let cache = tempfile::tempdir().expect("temp dir");
            let Some(py_rss) = self.rss_after_one_call(&python) else {
                return;
            };
            for n in [1usize, 10, 100] {
                let args: Vec<(String, PathBuf)> =
                    names(n).into_iter().zip(paths.iter().cloned()).collect();
                let serve = match Peer::xfn_serve(bin, &args, cache.path(), &[]) {
                    Ok(s) => s,
                    Err(e) => {
                        self.notes
                            .push(format!("xfn serve with {n} functions: {e}"));
                        continue;
                    }
                };
                for (name, _) in &args {
                    let authority = format!("{name}.crossplane-system:9443");
                    if let Err(e) =
                        self.rt
                            .block_on(call_once(&serve.target, Some(&authority), &request))
                    {
                        self.notes.push(format!("xfn serve, call of {name}: {e}"));
                    }
                }
                let rss = rss_kib(serve.child.id());
                let peer = py_rss * n as f64;
                self.rows.push(Row {
                    item: "5 resident memory",
                    what: format!("xfn serve, {n} functions"),
                    value: rss / 1024.0,
                    unit: "MiB",
                    peer_what: format!("{n} × Python SDK process"),
                    peer: peer / 1024.0,
                    target: if n == 100 { "< 1/10 of Python" } else { "—" }.into(),
                    met: (n == 100).then_some(rss < peer / 10.0),
                });
            }
        }

        if !self.wants(4) {
            return;
        }
        // 4: throughput and latency under load, with function-patch-and-transform
        // on the docs example. The Go peer does the same work natively (P&T's
        // simplest patch, tests/go-peer/patch.go: the same response, which
        // tests/tests/go_peer.rs checks); the Python peer passes the request
        // through and adds a resource (a label-style function). The
        // Python server runs Python on one core at a time; xfn serve gets one
        // call thread (its connections have their own), the Go peer every
        // core as a Go pod would, and the load generator shares the machine.
        let pt = xfn_tests::wasm_dir().join("function_patch_and_transform.wasm");
        let request = request_to_proto(xfn_tests::convert::request(
            patch_and_transform::docs_request(),
        ))
        .expect("proto request");
        let serve = match Peer::xfn_serve(
            bin,
            &[("function-patch-and-transform".into(), pt)],
            cache.path(),
            &["--workers", "1"],
        ) {
            Ok(s) => s,
            Err(e) => {
                self.notes.push(format!("xfn serve did not start: {e}"));
                return;
            }
        };
        let go = self.go_peer();
        let native = Peer::native_serve()
            .inspect_err(|e| {
                self.notes
                    .push(format!("xfn-native-serve did not start: {e}"))
            })
            .ok();
        for concurrency in [1usize, 8, 64] {
            let duration = Duration::from_secs(LOAD_SECONDS);
            // CPU per call of the server and of the load generator (this
            // process), apart: they share the machine's cores.
            let measure = |peer: &Peer| {
                let server = cpu_seconds(peer.child.id());
                let generator = cpu_seconds(std::process::id());
                let load =
                    self.rt
                        .block_on(load(&peer.target, None, concurrency, duration, &request));
                let calls = load.rate * load.seconds;
                let per_call = |before: f64, pid: u32| (cpu_seconds(pid) - before) / calls * 1e6;
                let cpu = Cpu {
                    server: per_call(server, peer.child.id()),
                    generator: per_call(generator, std::process::id()),
                };
                (load, cpu)
            };
            let x = measure(&serve);
            let n = native.as_ref().map(measure);
            let g = go.as_ref().map(measure);
            let p = measure(&python);
            self.load_rows(concurrency, &x, g.as_ref(), &p);
            if let Some(n) = &n {
                self.sandbox_rows(concurrency, &x, n, g.as_ref());
            }
            let mut outcomes = vec![("xfn serve", &x.0), ("Python", &p.0)];
            if let Some(g) = &g {
                outcomes.push(("Go", &g.0));
            }
            if let Some(n) = &n {
                outcomes.push(("xfn's server, P&T native", &n.0));
            }
            for (who, r) in outcomes {
                if r.errors > 0 {
                    self.notes.push(format!(
                        "4: {who}, {concurrency} streams: {} failed calls, e.g. {}",
                        r.errors, r.first_error
                    ));
                }
            }
        }
    }

    /// Item 4's rows at `concurrency` streams: xfn serve's figures against
    /// the Go peer's (with issue 15's targets) and the Python SDK's.
    fn load_rows(
        &mut self,
        concurrency: usize,
        x: &(Load, Cpu),
        go: Option<&(Load, Cpu)>,
        python: &(Load, Cpu),
    ) {
        let figures = |(load, cpu): &(Load, Cpu)| {
            [
                ("throughput", load.rate, "calls/s"),
                ("p50 latency", load.p50, "ms"),
                ("p99 latency", load.p99, "ms"),
                ("server CPU per call", cpu.server, "µs"),
                ("load generator CPU per call", cpu.generator, "µs"),
            ]
        };
        // The in-process call of P&T, in ms, when item 1 ran.
        let in_host = self.pt_in_host.map(|ns| ns / 1e6);
        let go = go.map(figures);
        let python = figures(python);
        for (i, (label, value, unit)) in figures(x).into_iter().enumerate() {
            // (peer, its figure, the target against it, whether it is met)
            let mut peers = Vec::new();
            if let Some(go) = &go {
                let peer = go[i].1;
                let (target, met) = match (label, concurrency, in_host) {
                    ("throughput", 64, _) => ("≥ Go".to_owned(), Some(value >= peer)),
                    ("p50 latency", 1, Some(call)) => (
                        format!("≤ Go + in-process call ({:.3} ms)", call),
                        Some(value <= peer + call),
                    ),
                    _ => ("—".to_owned(), None),
                };
                peers.push((GO_PEER, peer, target, met));
            }
            let peer = python[i].1;
            let (target, met) = match label {
                "throughput" => ("≥ 5× Python".to_owned(), Some(value >= 5.0 * peer)),
                "p99 latency" => ("< Python".to_owned(), Some(value < peer)),
                _ => ("—".to_owned(), None),
            };
            // The 1-stream target again, with the in-process call timed as
            // a call at 1 stream runs: after idling, not back to back.
            if let (Some(go), "p50 latency", 1, Some(idle)) =
                (&go, label, concurrency, self.pt_in_host_idle)
            {
                let idle = idle / 1e6;
                peers.push((
                    "Go peer + in-process call after idle",
                    go[i].1 + idle,
                    format!(
                        "(informational: in-process call after {} µs idle, {idle:.3} ms)",
                        IDLE_BETWEEN_CALLS.as_micros()
                    ),
                    None,
                ));
            }
            peers.push(("Python SDK", peer, target, met));
            for (peer_what, peer, target, met) in peers {
                self.rows.push(Row {
                    item: "4 serve under load",
                    what: format!("{label}, {concurrency} streams"),
                    value,
                    unit,
                    peer_what: peer_what.into(),
                    peer,
                    target,
                    met,
                });
            }
        }
        if concurrency == 64
            && let Some(call) = self.pt_in_host
        {
            let call = call / 1000.0;
            let value = x.1.server;
            self.rows.push(Row {
                item: "4 serve under load",
                what: "server CPU per call, 64 streams".into(),
                value,
                unit: "µs",
                peer_what: "in-process call (item 1)".into(),
                peer: call,
                target: "≤ in-process call + 15 µs".into(),
                met: Some(value <= call + 15.0),
            });
        }
    }

    /// Item 4's split of a served call at `concurrency` streams: xfn's
    /// server running P&T natively (the transport and conversions alone)
    /// against the Go peer, and what the sandbox adds to the wasm server's
    /// CPU per call against the in-process call.
    fn sandbox_rows(
        &mut self,
        concurrency: usize,
        wasm: &(Load, Cpu),
        native: &(Load, Cpu),
        go: Option<&(Load, Cpu)>,
    ) {
        let item = "4 serve under load";
        if let Some((go_load, go_cpu)) = go {
            for (label, value, peer, unit) in [
                ("throughput", native.0.rate, go_load.rate, "calls/s"),
                ("p50 latency", native.0.p50, go_load.p50, "ms"),
                ("server CPU per call", native.1.server, go_cpu.server, "µs"),
            ] {
                self.rows.push(Row {
                    item,
                    what: format!("xfn's server, P&T native: {label}, {concurrency} streams"),
                    value,
                    unit,
                    peer_what: GO_PEER.into(),
                    peer,
                    target: "—".into(),
                    met: None,
                });
            }
        }
        if let Some(call) = self.pt_in_host {
            self.rows.push(Row {
                item,
                what: format!("server CPU per call, {concurrency} streams: wasm less native"),
                value: wasm.1.server - native.1.server,
                unit: "µs",
                peer_what: "in-process call (item 1)".into(),
                peer: call / 1000.0,
                target: "—".into(),
                met: None,
            });
        }
    }

    /// Item 8: a healthy function's latency through `xfn serve`, one stream
    /// of back-to-back calls of `hello`, alone and then beside calls of
    /// another function that compute forever.
    fn fairness(&mut self, bin: &Path) {
        const ITEM: &str = "8 fairness";
        let wasm = xfn_tests::wasm_dir();
        let functions = [
            ("function-hello".to_owned(), wasm.join("hello.wasm")),
            ("function-loop".to_owned(), xfn_tests::scripted_wasm()),
        ];
        let cache = tempfile::tempdir().expect("temp dir");
        // Call threads: one per core, as `xfn serve` runs by default.
        let serve = match Peer::xfn_serve(bin, &functions, cache.path(), &[]) {
            Ok(s) => s,
            Err(e) => {
                self.notes.push(format!("8: xfn serve did not start: {e}"));
                return;
            }
        };
        let request = request_to_proto(hello_request(0)).expect("proto request");
        let duration = Duration::from_secs(LOAD_SECONDS);
        let hello = Some("function-hello.crossplane-system:9443");
        let alone = self
            .rt
            .block_on(load(&serve.target, hello, 1, duration, &request));
        if alone.errors > 0 {
            self.notes.push(format!(
                "8: alone: {} failed calls, e.g. {}",
                alone.errors, alone.first_error
            ));
            return;
        }
        let python = self.python_peer().map(|python| {
            self.rt
                .block_on(load(&python.target, None, 1, duration, &request))
        });

        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        for loopers in [1, cores, 4 * cores] {
            let beside =
                match self
                    .rt
                    .block_on(beside_loops(&serve.target, loopers, duration, &request))
                {
                    Ok(load) => load,
                    Err(e) => {
                        self.notes
                            .push(format!("8: beside {loopers} looping calls: {e}"));
                        continue;
                    }
                };
            if beside.errors > 0 {
                self.notes.push(format!(
                    "8: beside {loopers} looping calls: {} failed calls, e.g. {}",
                    beside.errors, beside.first_error
                ));
            }
            let what = |label: &str| format!("hello {label}, beside {loopers} looping calls");
            self.rows.push(Row {
                item: ITEM,
                what: what("p50 latency"),
                value: beside.p50,
                unit: "ms",
                peer_what: "alone".into(),
                peer: alone.p50,
                target: "—".into(),
                met: None,
            });
            // Beside as many loops as there are call threads, every core
            // computes: the threads that serve connections get one back
            // within the kernel's scheduling latency (a few ms), and a call
            // waits at most a 1 ms time slice per loop on its thread. Issue
            // 12 measured medians of 300-500 ms here before calls yielded
            // every 1 ms on threads of their own.
            // Beside one looping call, a call thread is free: the healthy
            // function's p99 stays within noise (1 ms) of its p99 alone.
            let (target, met) = if loopers == 1 {
                (
                    "≤ alone + 1 ms".to_owned(),
                    Some(beside.p99 <= alone.p99 + 1.0),
                )
            } else if loopers == cores {
                ("< 10 ms".to_owned(), Some(beside.p99 < 10.0))
            } else {
                ("—".to_owned(), None)
            };
            self.rows.push(Row {
                item: ITEM,
                what: what("p99 latency"),
                value: beside.p99,
                unit: "ms",
                peer_what: "alone".into(),
                peer: alone.p99,
                target,
                met,
            });
            if let Some(python) = python.as_ref().filter(|p| p.errors == 0) {
                self.rows.push(Row {
                    item: ITEM,
                    what: what("p99 latency"),
                    value: beside.p99,
                    unit: "ms",
                    peer_what: "Python SDK function, alone".into(),
                    peer: python.p99,
                    target: "—".into(),
                    met: None,
                });
            }
        }
        self.rows.push(Row {
            item: ITEM,
            what: "hello p99 latency, alone".into(),
            value: alone.p99,
            unit: "ms",
            peer_what: "Python SDK function, alone".into(),
            peer: python.as_ref().map_or(f64::NAN, |p| p.p99),
            target: "—".into(),
            met: None,
        });
    }

    fn markdown(&self) -> String {
        let mut md = String::from(
            "# xfn benchmark report\n\n\
             Every figure is from the same run, against its peer from that run \
             (ratio = value / peer). ✅ met, ❌ missed, — informational.\n\n\
             | item | measurement | value | peer | ratio | target | met |\n\
             |---|---|---:|---:|---:|---|:-:|\n",
        );
        for r in &self.rows {
            let _ = writeln!(
                md,
                "| {} | {} | {} {} | {} {} ({}) | {:.2}× | {} | {} |",
                r.item,
                r.what,
                fmt(r.value),
                r.unit,
                fmt(r.peer),
                r.unit,
                r.peer_what,
                r.ratio(),
                r.target,
                match r.met {
                    Some(true) => "✅",
                    Some(false) => "❌",
                    None => "—",
                }
            );
        }
        if !self.notes.is_empty() {
            md.push_str("\n## Notes\n\n");
            for n in &self.notes {
                let _ = writeln!(md, "- {n}");
            }
        }
        md.push_str(
            "\nMachine: the CI box (2 cores); in-process figures are medians of warm batches, \
             process figures are medians of runs; load points run 3 s each over one HTTP/2 \
             connection. chart.svg plots each ratio on a log scale.\n",
        );
        md
    }

    /// A horizontal bar per figure: its ratio against its peer, log scale.
    fn svg(&self) -> String {
        let (label_w, bar_w, row_h) = (430.0, 420.0, 22.0);
        let height = 60.0 + row_h * self.rows.len() as f64;
        let width = label_w + bar_w + 120.0;
        // log10 ratio from 1/1000 to 1000, 1× in the middle.
        let x = |ratio: f64| {
            let l = ratio.log10().clamp(-3.0, 3.0);
            label_w + bar_w * (l + 3.0) / 6.0
        };
        let mut s = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
             font-family=\"sans-serif\" font-size=\"12\">\n\
             <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
             <text x=\"10\" y=\"20\" font-size=\"15\" font-weight=\"bold\">xfn benchmarks: \
             value / peer (log scale; green = target met, red = missed, grey = informational)</text>\n"
        );
        for tick in [0.001, 0.01, 0.1, 1.0, 10.0, 100.0, 1000.0] {
            let tx = x(tick);
            let _ = writeln!(
                s,
                "<line x1=\"{tx}\" y1=\"35\" x2=\"{tx}\" y2=\"{}\" stroke=\"{}\"/>\
                 <text x=\"{tx}\" y=\"{}\" text-anchor=\"middle\" fill=\"#555\">{tick}×</text>",
                height - 20.0,
                if tick == 1.0 { "#000" } else { "#ddd" },
                height - 6.0
            );
        }
        for (i, r) in self.rows.iter().enumerate() {
            let y = 40.0 + row_h * i as f64;
            let ratio = r.ratio();
            let color = match r.met {
                Some(true) => "#2e9e44",
                Some(false) => "#d23c3c",
                None => "#8a8a8a",
            };
            let label = xml(&format!("{}: {}", r.item, r.what));
            let _ = writeln!(
                s,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{label}</text>",
                label_w - 8.0,
                y + 14.0
            );
            if ratio.is_finite() && ratio > 0.0 {
                let (a, b) = (x(1.0), x(ratio));
                let _ = writeln!(
                    s,
                    "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{color}\"/>\
                     <text x=\"{}\" y=\"{}\">{:.2}×</text>",
                    a.min(b),
                    y + 3.0,
                    (b - a).abs().max(1.0),
                    row_h - 6.0,
                    label_w + bar_w + 8.0,
                    y + 14.0,
                    ratio
                );
            } else {
                let _ = writeln!(
                    s,
                    "<text x=\"{}\" y=\"{}\">n/a</text>",
                    label_w + bar_w + 8.0,
                    y + 14.0
                );
            }
        }
        s.push_str("</svg>\n");
        s
    }
}

fn fmt(v: f64) -> String {
    if !v.is_finite() {
        "n/a".into()
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn leb128(mut n: usize, out: &mut Vec<u8>) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// `component` with a custom section appended: a distinct digest, the same
/// function.
fn with_custom_section(component: &[u8], i: usize) -> Vec<u8> {
    let name = b"xfn-bench";
    let payload = i.to_le_bytes();
    let mut body = Vec::new();
    leb128(name.len(), &mut body);
    body.extend_from_slice(name);
    body.extend_from_slice(&payload);
    let mut out = component.to_vec();
    out.push(0);
    leb128(body.len(), &mut out);
    out.extend_from_slice(&body);
    out
}

pub(crate) fn rss_kib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(f64::NAN)
}

/// CPU seconds (user + system) process `pid` has used so far.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name, which is in parentheses: utime and
    // stime are the 12th and 13th, in clock ticks (100 per second on Linux).
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok());
    match (ticks(11), ticks(12)) {
        (Some(user), Some(system)) => (user + system) / 100.0,
        _ => f64::NAN,
    }
}

/// A server process, killed on drop.
struct Peer {
    child: Child,
    target: String,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Peer {
    /// Starts `command` and waits (at most `wait`) for a line of the
    /// chosen stream from which `parse` gets the target.
    fn start(
        mut command: Command,
        from_stderr: bool,
        wait: Duration,
        parse: fn(&str) -> Option<String>,
    ) -> Result<Peer, String> {
        let (out, err) = if from_stderr {
            (Stdio::null(), Stdio::piped())
        } else {
            (Stdio::piped(), Stdio::null())
        };
        let mut child = command
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| e.to_string())?;
        let stream: Box<dyn std::io::Read + Send> = if from_stderr {
            Box::new(child.stderr.take().expect("stderr"))
        } else {
            Box::new(child.stdout.take().expect("stdout"))
        };
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stream).lines() {
                let Ok(line) = line else { break };
                if !sent && let Some(target) = parse(&line) {
                    let _ = tx.send(target);
                    sent = true;
                }
            }
        });
        let mut peer = Peer {
            child,
            target: String::new(),
        };
        peer.target = rx
            .recv_timeout(wait)
            .map_err(|_| "did not start listening in time".to_owned())?;
        Ok(peer)
    }

    fn python() -> Result<Peer, String> {
        let mut command = Command::new(python());
        command
            .arg(workspace().join("tests/python/function.py"))
            .args(["--insecure", "--address", "127.0.0.1:0"])
            .args(["--max-seconds", "600"]);
        Peer::start(command, false, Duration::from_secs(60), listening)
    }

    /// xfn's own server with P&T run natively (src/bin/xfn-native-serve.rs):
    /// a served call's cost without the sandbox's.
    fn native_serve() -> Result<Peer, String> {
        Peer::listening(Path::new(env!("CARGO_BIN_EXE_xfn-native-serve")))
    }

    /// The Go peer, built by tests/go-peer/build.sh (which `make bench`
    /// runs first, installing its packages; here it installs nothing).
    fn go() -> Result<Peer, String> {
        Peer::listening(&xfn_tests::peers::build_go_peer()?)
    }

    /// A peer program that takes `--address` and `--max-seconds` and
    /// announces its port with "LISTENING <port>" (the Go peer,
    /// xfn-native-serve).
    fn listening(program: &Path) -> Result<Peer, String> {
        Peer::listening_from(Command::new(program))
    }

    /// [`Peer::listening`] with the program's command given (pinned, or
    /// with its environment set).
    fn listening_from(mut command: Command) -> Result<Peer, String> {
        command.args(["--address", "127.0.0.1:0", "--max-seconds", "600"]);
        Peer::start(command, false, Duration::from_secs(30), listening)
    }

    fn xfn_serve(
        bin: &Path,
        functions: &[(String, PathBuf)],
        cache: &Path,
        extra_args: &[&str],
    ) -> Result<Peer, String> {
        Peer::xfn_serve_from(Command::new(bin), functions, cache, extra_args)
    }

    /// [`Peer::xfn_serve`] with the binary's command given.
    fn xfn_serve_from(
        mut command: Command,
        functions: &[(String, PathBuf)],
        cache: &Path,
        extra_args: &[&str],
    ) -> Result<Peer, String> {
        command
            .args(["serve", "--insecure", "--address", "127.0.0.1:0"])
            .args(extra_args)
            .env("XFN_CACHE_DIR", cache)
            .env_remove("XFN_LOG");
        for (name, path) in functions {
            command
                .arg("--function")
                .arg(format!("{name}={}", path.display()));
        }
        Peer::start(command, true, Duration::from_secs(300), |line| {
            let rest = line.strip_prefix("xfn serve: serving ")?;
            let (_, addr) = rest.rsplit_once(" on ")?;
            Some(addr.split_whitespace().next()?.to_owned())
        })
    }
}

/// The target a peer announces with "LISTENING <port>" on 127.0.0.1.
fn listening(line: &str) -> Option<String> {
    xfn_tests::peers::listening_port(line).map(|port| format!("127.0.0.1:{port}"))
}

async fn channel(
    target: &str,
    authority: Option<&str>,
) -> Result<tonic::transport::Channel, String> {
    let mut endpoint = tonic::transport::Endpoint::from_shared(format!("http://{target}"))
        .map_err(|e| e.to_string())?
        .connect_timeout(Duration::from_secs(5))
        .tcp_nodelay(true);
    if let Some(authority) = authority {
        let origin: tonic::transport::Uri = format!("http://{authority}")
            .parse()
            .map_err(|e| format!("{e}"))?;
        endpoint = endpoint.origin(origin);
    }
    endpoint.connect().await.map_err(|e| e.to_string())
}

async fn call_once(
    target: &str,
    authority: Option<&str>,
    request: &xfn_proto::json::v1::RunFunctionRequest,
) -> Result<(), String> {
    let mut client = FunctionRunnerServiceClient::new(channel(target, authority).await?);
    tokio::time::timeout(
        Duration::from_secs(30),
        client.run_function(request.clone()),
    )
    .await
    .map_err(|_| "timed out".to_owned())?
    .map(drop)
    .map_err(|e| e.to_string())
}

/// `load` of hello through `target`, one stream, while `loopers` calls of
/// `function-loop` compute forever. The looping calls end by their own
/// deadline, which must come after the load point: a load point that
/// outlives them would measure a server with nothing to share.
async fn beside_loops(
    target: &str,
    loopers: usize,
    duration: Duration,
    request: &xfn_proto::json::v1::RunFunctionRequest,
) -> Result<Load, String> {
    let channel = channel(target, Some("function-loop.crossplane-system:9443")).await?;
    let input = xfn_proto::json::JsonStruct::from_json(r#"{"fault": "loop"}"#)
        .map_err(|e| e.to_string())?;
    let looping = xfn_proto::json::v1::RunFunctionRequest {
        input: Some(input),
        ..xfn_proto::json::v1::RunFunctionRequest::default()
    };
    // Room for the start, the load's warm-up calls and the load itself.
    let lasting = duration + Duration::from_secs(5);
    let loops: Vec<_> = (0..loopers)
        .map(|_| {
            let mut client = FunctionRunnerServiceClient::new(channel.clone());
            let mut request = tonic::Request::new(looping.clone());
            request.set_timeout(lasting);
            tokio::spawn(async move {
                let outcome = client.run_function(request).await;
                (outcome.map(drop), Instant::now())
            })
        })
        .collect();
    // Until every looping guest runs.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let load = load(
        target,
        Some("function-hello.crossplane-system:9443"),
        1,
        duration,
        request,
    )
    .await;
    let measured = Instant::now();
    for call in loops {
        let (outcome, ended) = call.await.map_err(|e| e.to_string())?;
        match outcome {
            Err(status) if status.code() == tonic::Code::DeadlineExceeded => {}
            other => return Err(format!("a looping call ended with {other:?}")),
        }
        if ended < measured {
            return Err("a looping call ended before the load point did".into());
        }
    }
    Ok(load)
}

/// CPU per call, in µs: of the server process and of the load generator.
struct Cpu {
    server: f64,
    generator: f64,
}

struct Load {
    rate: f64,
    /// How long the load ran.
    seconds: f64,
    p50: f64,
    p99: f64,
    errors: usize,
    first_error: String,
}

impl Load {
    /// A load point that could not run at all.
    fn failed(error: String) -> Load {
        Load {
            rate: f64::NAN,
            seconds: f64::NAN,
            p50: f64::NAN,
            p99: f64::NAN,
            errors: 1,
            first_error: error,
        }
    }
}

/// `concurrency` streams sending `request` (to `authority`, if given) back
/// to back for `duration`.
async fn load(
    target: &str,
    authority: Option<&str>,
    concurrency: usize,
    duration: Duration,
    request: &xfn_proto::json::v1::RunFunctionRequest,
) -> Load {
    let channel = match channel(target, authority).await {
        Ok(c) => c,
        Err(e) => {
            return Load::failed(e);
        }
    };
    // Warm up the connection and the function, and make sure it answers.
    let mut warm = FunctionRunnerServiceClient::new(channel.clone());
    for _ in 0..20 {
        if let Err(e) = warm.run_function(request.clone()).await {
            return Load::failed(e.to_string());
        }
    }
    let started = Instant::now();
    let deadline = started + duration;
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let mut client = FunctionRunnerServiceClient::new(channel.clone());
        let request = request.clone();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut errors = (0usize, String::new());
            while Instant::now() < deadline {
                let t = Instant::now();
                match tokio::time::timeout(
                    Duration::from_secs(10),
                    client.run_function(request.clone()),
                )
                .await
                {
                    Ok(Ok(_)) => latencies.push(t.elapsed().as_secs_f64() * 1000.0),
                    Ok(Err(e)) => {
                        errors.0 += 1;
                        errors.1 = e.to_string();
                    }
                    Err(_) => {
                        errors.0 += 1;
                        errors.1 = "timed out".into();
                    }
                }
            }
            (latencies, errors)
        }));
    }
    let mut latencies = Vec::new();
    let mut errors = 0;
    let mut first_error = String::new();
    for task in tasks {
        let (l, (n, e)) = task.await.expect("load task");
        latencies.extend(l);
        errors += n;
        if first_error.is_empty() {
            first_error = e;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    latencies.sort_by(f64::total_cmp);
    if latencies.is_empty() {
        latencies.push(f64::NAN);
    }
    Load {
        rate: (latencies.len() as f64) / seconds,
        seconds,
        p50: percentile(&latencies, 0.5),
        p99: percentile(&latencies, 0.99),
        errors,
        first_error,
    }
}
