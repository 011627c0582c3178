//! Item 11: one core each. Each server runs pinned to core 0 (Go with
//! `GOMAXPROCS=1`, `xfn serve` with `--workers 1`) and h2load, a load
//! generator in C that costs far less per call than any Rust or Go client,
//! pinned to core 1, so neither the server nor the generator borrows the
//! other's core. That is how a function pod with a CPU limit of one core
//! runs, and the comparison a user makes.
//!
//! Every server gets the same framed gRPC request at 1, 8 and 64 streams of
//! one HTTP/2 connection. The servers run in alternating order (forward in
//! odd rounds, backward in even ones) over [`ROUNDS`] rounds, so a drift of
//! the machine is spread over all of them; the rows give the mean of the
//! rounds, and a note names any figure whose rounds differ by more than 5%.

use std::collections::BTreeMap;

use prost::Message as _;

use super::*;

/// The core each server is pinned to, and the load generator's.
const SERVER_CORE: &str = "0";
const LOAD_CORE: &str = "1";

/// How many rounds each point runs.
const ROUNDS: usize = 2;

/// Streams of the connection, and calls per point at that many streams.
const POINTS: [(usize, u64); 3] = [(1, 10_000), (8, 30_000), (64, 30_000)];

/// The longest one h2load run may take before it is killed.
const RUN_LIMIT_SECONDS: &str = "120";

/// One server's figures at one point.
#[derive(Debug, Clone, Copy)]
struct Point {
    /// Calls answered per second.
    rate: f64,
    /// Latency percentiles, in µs.
    p50: f64,
    p99: f64,
    /// The server's CPU time per answered call, in µs.
    cpu: f64,
}

/// A server under test: its name in the report, the process, and the
/// request file it is sent.
struct Server<'a> {
    name: &'static str,
    peer: &'a Peer,
    body: &'a Path,
}

impl Suite {
    /// Item 11 (see the module's documentation).
    pub(super) fn pinned(&mut self, bin: &Path) {
        if let Err(e) = self.try_pinned(bin) {
            self.notes.push(format!("11: not measured: {e}"));
        }
    }

    fn try_pinned(&mut self, bin: &Path) -> Result<(), String> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        if cores < 2 {
            return Err(format!("it needs two cores, this machine has {cores}"));
        }
        let h2load = which("h2load").ok_or(
            "h2load is missing (`make bench` installs Debian's nghttp2-client)".to_owned(),
        )?;
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let trivial_body = dir.path().join("trivial.grpc");
        let pt_body = dir.path().join("pt.grpc");
        let pt_request = request_to_proto(xfn_tests::convert::request(
            patch_and_transform::docs_request(),
        ))
        .map_err(|e| format!("P&T's request: {e}"))?;
        let trivial_request =
            request_to_proto(hello_request(0)).map_err(|e| format!("hello's request: {e}"))?;
        std::fs::write(&trivial_body, grpc_frame(&trivial_request)).map_err(|e| e.to_string())?;
        std::fs::write(&pt_body, grpc_frame(&pt_request)).map_err(|e| e.to_string())?;

        let wasm = xfn_tests::wasm_dir();
        let cache = dir.path().join("cache");
        let serve = |name: &str, file: &str| {
            Peer::xfn_serve_from(
                pinned_command(bin),
                &[(name.to_owned(), wasm.join(file))],
                &cache,
                &["--workers", "1"],
            )
            .map_err(|e| format!("xfn serve ({name}) did not start: {e}"))
        };
        let hello = serve("function-hello", "hello.wasm")?;
        let pt = serve(
            "function-patch-and-transform",
            "function_patch_and_transform.wasm",
        )?;
        let go = {
            let mut command = pinned_command(&xfn_tests::peers::build_go_peer()?);
            command.env("GOMAXPROCS", "1");
            Peer::listening_from(command).map_err(|e| format!("the Go peer did not start: {e}"))?
        };
        // Each answers its request before any is timed: h2load checks the
        // HTTP status only, not gRPC's.
        for (peer, request) in [
            (&hello, &trivial_request),
            (&go, &trivial_request),
            (&pt, &pt_request),
            (&go, &pt_request),
        ] {
            self.rt
                .block_on(call_once(&peer.target, None, request))
                .map_err(|e| format!("a first call of {} failed: {e}", peer.target))?;
        }

        let servers = [
            Server {
                name: "xfn hello (wasm)",
                peer: &hello,
                body: &trivial_body,
            },
            Server {
                name: "Go, trivial",
                peer: &go,
                body: &trivial_body,
            },
            Server {
                name: "xfn P&T (wasm)",
                peer: &pt,
                body: &pt_body,
            },
            Server {
                name: "Go P&T peer",
                peer: &go,
                body: &pt_body,
            },
        ];
        let mut rounds: BTreeMap<(usize, &str), Vec<Point>> = BTreeMap::new();
        for round in 0..ROUNDS {
            let order: Vec<&Server> = if round % 2 == 0 {
                servers.iter().collect()
            } else {
                servers.iter().rev().collect()
            };
            for (streams, calls) in POINTS {
                for server in &order {
                    let log = dir.path().join("requests.log");
                    let point = h2load_point(&h2load, server, streams, calls, &log)
                        .map_err(|e| format!("{}, {streams} streams: {e}", server.name))?;
                    rounds
                        .entry((streams, server.name))
                        .or_default()
                        .push(point);
                }
            }
        }
        for (streams, _) in POINTS {
            for (xfn, go, pair) in [
                ("xfn hello (wasm)", "Go, trivial", Pair::Trivial),
                ("xfn P&T (wasm)", "Go P&T peer", Pair::PatchAndTransform),
            ] {
                let x = self.mean_point(&rounds, streams, xfn);
                let g = self.mean_point(&rounds, streams, go);
                self.pinned_rows(streams, (xfn, x), (go, g), pair);
            }
        }
        Ok(())
    }

    /// The mean over the rounds of one server's point, noting a figure
    /// whose rounds differ by more than 5%.
    fn mean_point(
        &mut self,
        rounds: &BTreeMap<(usize, &str), Vec<Point>>,
        streams: usize,
        name: &str,
    ) -> Point {
        let points = rounds
            .get(&(streams, name))
            .map(Vec::as_slice)
            .unwrap_or_default();
        let figure = |f: fn(&Point) -> f64| {
            let values: Vec<f64> = points.iter().map(f).collect();
            let mean = values.iter().sum::<f64>() / values.len().max(1) as f64;
            (values, mean)
        };
        let mut mean = |label: &str, f: fn(&Point) -> f64| {
            let (values, mean) = figure(f);
            let (low, high) = values
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
                    (l.min(*v), h.max(*v))
                });
            if label == "throughput" && high > low * 1.05 {
                self.notes.push(format!(
                    "11: {name}, {streams} streams: its rounds' {label} differ by more \
                     than 5% ({})",
                    values
                        .iter()
                        .map(|v| format!("{v:.0}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            mean
        };
        Point {
            rate: mean("throughput", |p| p.rate),
            p50: mean("p50", |p| p.p50),
            p99: mean("p99", |p| p.p99),
            cpu: mean("cpu", |p| p.cpu),
        }
    }

    /// Item 11's rows at `streams`: xfn's figures against Go's, with the
    /// issue's targets on the P&T pair.
    fn pinned_rows(
        &mut self,
        streams: usize,
        (xfn, x): (&str, Point),
        (go, g): (&str, Point),
        pair: Pair,
    ) {
        let pt = pair == Pair::PatchAndTransform;
        for (label, value, peer, unit, target, met) in [
            (
                "throughput",
                x.rate,
                g.rate,
                "calls/s",
                "≥ Go at 64 streams",
                (pt && streams == 64).then_some(x.rate >= g.rate),
            ),
            (
                "p50 latency",
                x.p50,
                g.p50,
                "µs",
                "≤ Go + 20 µs at 1 stream",
                (pt && streams == 1).then_some(x.p50 <= g.p50 + 20.0),
            ),
            ("p99 latency", x.p99, g.p99, "µs", "—", None),
            (
                "server CPU per call",
                x.cpu,
                g.cpu,
                "µs",
                "≤ Go at 64 streams",
                (pt && streams == 64).then_some(x.cpu <= g.cpu),
            ),
        ] {
            self.rows.push(Row {
                item: "11 one core each",
                what: format!("{xfn}: {label}, {streams} streams"),
                value,
                unit,
                peer_what: go.into(),
                peer,
                target: if met.is_some() { target } else { "—" }.into(),
                met,
            });
        }
    }
}

/// Which two servers a row compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pair {
    Trivial,
    PatchAndTransform,
}

/// `program` run on [`SERVER_CORE`] only.
fn pinned_command(program: &Path) -> Command {
    let mut command = Command::new("taskset");
    command.args(["-c", SERVER_CORE]).arg(program);
    command
}

/// `request` as one gRPC message: uncompressed, its length in four bytes
/// (big-endian), then the message.
fn grpc_frame(request: &xfn_proto::json::v1::RunFunctionRequest) -> Vec<u8> {
    let message = request.encode_to_vec();
    let mut frame = Vec::with_capacity(5 + message.len());
    frame.push(0);
    frame.extend_from_slice(&(message.len() as u32).to_be_bytes());
    frame.extend_from_slice(&message);
    frame
}

/// `calls` calls of `server` over `streams` streams of one connection, by
/// h2load on [`LOAD_CORE`], with the server's CPU time over the run.
fn h2load_point(
    h2load: &Path,
    server: &Server,
    streams: usize,
    calls: u64,
    log: &Path,
) -> Result<Point, String> {
    let pid = server.peer.child.id();
    let before = cpu_seconds(pid);
    let out = Command::new("timeout")
        .arg(RUN_LIMIT_SECONDS)
        .args(["taskset", "-c", LOAD_CORE])
        .arg(h2load)
        .args(["-n", &calls.to_string(), "-c", "1", "-t", "1"])
        .args(["-m", &streams.to_string()])
        .args(["-H", "content-type: application/grpc", "-H", "te: trailers"])
        .arg("-d")
        .arg(server.body)
        .arg("--log-file")
        .arg(log)
        .arg(format!(
            "http://{}/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction",
            server.peer.target
        ))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run h2load: {e}"))?;
    let cpu = cpu_seconds(pid) - before;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "h2load failed ({}): {}{}",
            out.status,
            stdout.trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let (rate, succeeded) = h2load_summary(&stdout)?;
    if succeeded != calls {
        return Err(format!("{succeeded} of {calls} calls succeeded: {stdout}"));
    }
    let text = std::fs::read_to_string(log).map_err(|e| format!("h2load's log: {e}"))?;
    let mut latencies: Vec<f64> = text
        .lines()
        .filter_map(|line| line.split('\t').nth(2)?.trim().parse().ok())
        .collect();
    if latencies.is_empty() {
        return Err("h2load logged no request".into());
    }
    latencies.sort_by(f64::total_cmp);
    Ok(Point {
        rate,
        p50: percentile(&latencies, 0.5),
        p99: percentile(&latencies, 0.99),
        cpu: cpu / succeeded as f64 * 1e6,
    })
}

/// The rate and the count of succeeded requests from h2load's summary
/// (`finished in 1.23s, 24390.24 req/s, ...` and `requests: N total, N
/// started, N done, N succeeded, ...`).
fn h2load_summary(stdout: &str) -> Result<(f64, u64), String> {
    let rate = stdout
        .lines()
        .find_map(|line| {
            let rest = line.strip_prefix("finished in ")?;
            let field = rest.split(", ").nth(1)?;
            field.strip_suffix(" req/s")?.parse::<f64>().ok()
        })
        .ok_or_else(|| format!("no rate in h2load's output: {stdout}"))?;
    let succeeded = stdout
        .lines()
        .find_map(|line| {
            let rest = line.strip_prefix("requests: ")?;
            rest.split(", ")
                .find_map(|field| field.strip_suffix(" succeeded")?.parse::<u64>().ok())
        })
        .ok_or_else(|| format!("no request count in h2load's output: {stdout}"))?;
    Ok((rate, succeeded))
}

/// `program` on PATH, if it is there.
fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(program))
            .find(|path| path.is_file())
    })
}
