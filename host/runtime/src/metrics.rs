//! Prometheus metrics of the process: calls by function and result, their
//! latency, instances in use, compile-cache lookups and package pulls.
//!
//! The metrics live in one process-wide registry, as Prometheus clients
//! usually keep them, so the serving path, the engine and the package
//! loaders record into it without being handed a registry. [`render`]
//! gives the OpenMetrics text that `/metrics` serves.
//!
//! Label values are bounded: `function` is a name the server serves (an
//! unrouted call is counted apart, without the name the client sent), and
//! `result` is `ok` or a gRPC code's name.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// The content type of [`render`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Labels of one call.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    function: Arc<str>,
    result: &'static str,
}

/// Labels of an outcome alone.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    result: &'static str,
}

type LatencyFamily = Family<CallLabels, Histogram, fn() -> Histogram>;

struct Metrics {
    registry: Registry,
    calls: Family<CallLabels, Counter>,
    latency: LatencyFamily,
    unrouted: Counter,
    instances: Gauge,
    compile_cache: Family<ResultLabels, Counter>,
    pulls: Family<ResultLabels, Counter>,
    reconciles: Family<ResultLabels, Counter>,
    reconcile_latency: Family<ResultLabels, Histogram, fn() -> Histogram>,
    /// The registry pulls already counted in `pulls`: (ok, error).
    pulls_counted: std::sync::Mutex<(u64, u64)>,
}

/// Latency buckets: 100 µs to about 3.3 s, doubling.
fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.0001, 2.0, 16))
}

fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(|| {
        let mut registry = Registry::with_prefix("xfn");
        let calls = Family::<CallLabels, Counter>::default();
        registry.register(
            "function_calls",
            "Function calls served, by function and result (ok or a gRPC code)",
            calls.clone(),
        );
        let latency: LatencyFamily = Family::new_with_constructor(latency_histogram);
        registry.register(
            "function_call_duration_seconds",
            "Time from routing a call to its outcome, by function and result",
            latency.clone(),
        );
        let unrouted = Counter::default();
        registry.register(
            "unrouted_calls",
            "Calls for no function this server serves",
            unrouted.clone(),
        );
        let instances = Gauge::default();
        registry.register(
            "instances_in_use",
            "Sandboxed instances alive now, one per call in progress",
            instances.clone(),
        );
        let compile_cache = Family::<ResultLabels, Counter>::default();
        registry.register(
            "compile_cache_lookups",
            "Lookups in the compile cache, by result (hit or miss)",
            compile_cache.clone(),
        );
        let pulls = Family::<ResultLabels, Counter>::default();
        registry.register(
            "package_pulls",
            "Function packages fetched from a registry, by result (ok or error)",
            pulls.clone(),
        );
        let reconciles = Family::<ResultLabels, Counter>::default();
        registry.register(
            "reconciles",
            "FunctionRevision reconciles of the controller, by result (healthy, unhealthy, deactivated or api_error)",
            reconciles.clone(),
        );
        let reconcile_latency: Family<ResultLabels, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(latency_histogram);
        registry.register(
            "reconcile_duration_seconds",
            "Time a FunctionRevision reconcile took, by result",
            reconcile_latency.clone(),
        );
        Metrics {
            registry,
            calls,
            latency,
            unrouted,
            instances,
            compile_cache,
            pulls,
            reconciles,
            reconcile_latency,
            pulls_counted: std::sync::Mutex::new((0, 0)),
        }
    })
}

/// Records one call of `function` that ended with `result` (`ok` or a gRPC
/// code's name) after `elapsed`.
pub fn record_call(function: Arc<str>, result: &'static str, elapsed: Duration) {
    let labels = CallLabels { function, result };
    let m = metrics();
    m.calls.get_or_create(&labels).inc();
    m.latency
        .get_or_create(&labels)
        .observe(elapsed.as_secs_f64());
}

/// Records a call that no served function matched.
pub fn record_unrouted() {
    metrics().unrouted.inc();
}

/// Records one reconcile of the controller that ended with `result`
/// (`healthy`, `unhealthy`, `deactivated` or `api_error`) after `elapsed`.
pub fn record_reconcile(result: &'static str, elapsed: Duration) {
    let m = metrics();
    let labels = ResultLabels { result };
    m.reconciles.get_or_create(&labels).inc();
    m.reconcile_latency
        .get_or_create(&labels)
        .observe(elapsed.as_secs_f64());
}

/// Records a compile-cache lookup.
pub fn record_compile_cache(hit: bool) {
    let result = if hit { "hit" } else { "miss" };
    metrics()
        .compile_cache
        .get_or_create(&ResultLabels { result })
        .inc();
}

/// Where the registry pull counters come from: a function returning the
/// pulls made so far, `(succeeded, failed)`, set once by whoever pulls.
static PULL_COUNTS: OnceLock<fn() -> (u64, u64)> = OnceLock::new();

/// Tells the metrics where to read the number of registry pulls made so far
/// (`(succeeded, failed)`), e.g. `xfn_oci::registry_pulls`. Only the first
/// call counts; without one, the pull counters stay at zero.
pub fn count_pulls_from(pulls: fn() -> (u64, u64)) {
    let _ = PULL_COUNTS.set(pulls);
}

/// Brings the pull counters up to the pulls made so far.
fn count_pulls(m: &Metrics) {
    let Some(pulls) = PULL_COUNTS.get() else {
        return;
    };
    let (ok, failed) = pulls();
    let mut counted = m
        .pulls_counted
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (counted_ok, counted_failed) = &mut *counted;
    for (result, now, before) in [("ok", ok, counted_ok), ("error", failed, counted_failed)] {
        if now > *before {
            m.pulls
                .get_or_create(&ResultLabels { result })
                .inc_by(now - *before);
            *before = now;
        }
    }
}

/// Counts one instance in use for as long as it lives.
#[derive(Debug)]
pub struct InstanceInUse(());

impl InstanceInUse {
    /// Counts an instance from now until the value is dropped.
    pub fn start() -> InstanceInUse {
        metrics().instances.inc();
        InstanceInUse(())
    }
}

impl Drop for InstanceInUse {
    fn drop(&mut self) {
        metrics().instances.dec();
    }
}

/// The metrics in the OpenMetrics text format ([`CONTENT_TYPE`]).
pub fn render() -> String {
    let m = metrics();
    count_pulls(m);
    let mut text = String::new();
    // Writing into a String cannot fail.
    let _ = prometheus_client::encoding::text::encode(&mut text, &m.registry);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of the sample line that starts with `prefix`.
    fn sample(text: &str, prefix: &str) -> Option<f64> {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
    }

    #[test]
    fn calls_are_counted_by_function_and_result_with_their_latency() {
        // No other test uses this function name.
        record_call("metrics-unit".into(), "ok", Duration::from_millis(3));
        record_call("metrics-unit".into(), "ok", Duration::from_millis(3));
        record_call(
            "metrics-unit".into(),
            "deadline_exceeded",
            Duration::from_secs(1),
        );
        let text = render();
        let ok = r#"xfn_function_calls_total{function="metrics-unit",result="ok"}"#;
        assert_eq!(sample(&text, ok), Some(2.0), "{text}");
        let late =
            r#"xfn_function_calls_total{function="metrics-unit",result="deadline_exceeded"}"#;
        assert_eq!(sample(&text, late), Some(1.0), "{text}");
        // Each `ok` bucket holds both 3 ms calls from its bound up, none below.
        let buckets: Vec<(f64, f64)> = text
            .lines()
            .filter(|l| l.starts_with("xfn_function_call_duration_seconds_bucket{"))
            .filter(|l| l.contains(r#"function="metrics-unit""#) && l.contains(r#"result="ok""#))
            .filter_map(|l| {
                let le = l.split(r#"le=""#).nth(1)?.split('"').next()?;
                let le = if le == "+Inf" {
                    f64::INFINITY
                } else {
                    le.parse().ok()?
                };
                Some((le, l.rsplit(' ').next()?.parse().ok()?))
            })
            .collect();
        assert_eq!(buckets.len(), 17, "{text}");
        for (le, count) in buckets {
            let want = if le < 0.003 { 0.0 } else { 2.0 };
            assert_eq!(count, want, "bucket le={le}: {text}");
        }
        assert!(text.ends_with("# EOF\n"));
    }

    #[test]
    fn reconciles_are_counted_by_result_with_their_duration() {
        record_reconcile("api_error", Duration::from_millis(2));
        let text = render();
        let count = |result: &str| {
            sample(
                &text,
                &format!("xfn_reconciles_total{{result=\"{result}\"}}"),
            )
        };
        assert!(count("api_error").is_some_and(|n| n >= 1.0), "{text}");
        assert!(
            text.contains(r#"xfn_reconcile_duration_seconds_count{result="api_error"}"#),
            "{text}"
        );
    }

    #[test]
    fn instances_in_use_follow_their_guards() {
        // Other tests may hold instances meanwhile; compare with a guard's
        // own effect only through two readings under the same guards.
        let read = || sample(&render(), "xfn_instances_in_use ").unwrap_or(f64::NAN);
        let guard = InstanceInUse::start();
        let with_one = read();
        let second = InstanceInUse::start();
        let with_two = read();
        drop(second);
        drop(guard);
        assert!(with_two >= with_one, "{with_one} then {with_two}");
        assert!(with_one >= 1.0);
    }
}
