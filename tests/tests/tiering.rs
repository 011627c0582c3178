//! A component with no optimized code at hand runs Winch's code at once,
//! and Cranelift's once the background has compiled it; both give the same
//! answers, and what each compiler made is cached for the next start.

use std::path::Path;
use std::time::{Duration, Instant};

use xfn_runtime::protocol::RunFunctionRequest;
use xfn_runtime::{CompileCache, HostConfig, HostEngine, Tier, Tiering, WasmFunction, WasmRuntime};
use xfn_tests::patch_and_transform::docs_request;

const PATCH_AND_TRANSFORM: &str = "function_patch_and_transform";

fn runtime(tiering: Tiering, cache: &Path) -> WasmRuntime {
    let engine = HostEngine::new(HostConfig {
        tiering,
        max_concurrent_calls: 8,
        ..HostConfig::default()
    })
    .expect("engine");
    WasmRuntime::new(engine, Some(CompileCache::new(cache))).expect("runtime")
}

fn load(runtime: &WasmRuntime) -> WasmFunction {
    runtime
        .load(
            "function-patch-and-transform",
            &xfn_tests::component(PATCH_AND_TRANSFORM),
        )
        .expect("load")
}

fn request() -> RunFunctionRequest {
    xfn_tests::convert::request(docs_request())
}

/// Waits (at most two minutes) until `function` runs optimized code.
fn until_optimized(function: &WasmFunction) {
    let started = Instant::now();
    while function.tier() != Tier::Optimized {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the background compiler did not swap in optimized code"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn baseline_first_runs_winch_code_then_cranelift_code_with_the_same_answers() {
    let cache = tempfile::tempdir().expect("tempdir");
    let rt = runtime(Tiering::BaselineFirst, cache.path());
    let function = load(&rt);
    assert_eq!(function.tier(), Tier::Baseline, "ready before Cranelift");
    let baseline = function.call_blocking(&request(), None).expect("call");

    until_optimized(&function);
    let optimized = function.call_blocking(&request(), None).expect("call");
    assert_eq!(baseline, optimized, "both compilers' code answers the same");
    // A second function of the same component shares the optimized code.
    assert_eq!(load(&rt).tier(), Tier::Optimized);
    assert_eq!(rt.loaded_components(), 1);
    assert_eq!(
        xfn_tests::compiled_entries(cache.path()),
        2,
        "each compiler's code is cached"
    );

    // The next start finds Cranelift's code in the cache.
    let next = runtime(Tiering::BaselineFirst, cache.path());
    assert_eq!(load(&next).tier(), Tier::Optimized);
    assert_eq!(xfn_tests::compiled_entries(cache.path()), 2);
}

#[test]
fn baseline_runs_winch_code_and_caches_it_for_the_next_process() {
    let cache = tempfile::tempdir().expect("tempdir");
    let function = load(&runtime(Tiering::Baseline, cache.path()));
    assert_eq!(function.tier(), Tier::Baseline);
    let answer = function.call_blocking(&request(), None).expect("call");
    assert_eq!(xfn_tests::compiled_entries(cache.path()), 1);

    // Nothing compiles in the background: the code stays Winch's.
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(function.tier(), Tier::Baseline);

    // The next process loads it from the cache, with the same answers;
    // a process asking for optimized code compiles it.
    let again = load(&runtime(Tiering::Baseline, cache.path()));
    assert_eq!(again.call_blocking(&request(), None).expect("call"), answer);
    assert_eq!(
        xfn_tests::compiled_entries(cache.path()),
        1,
        "loaded, not compiled again"
    );
    let optimized = load(&runtime(Tiering::Optimized, cache.path()));
    assert_eq!(optimized.tier(), Tier::Optimized);
    assert_eq!(xfn_tests::compiled_entries(cache.path()), 2);

    // Once the cache has Cranelift's code, a render runs it.
    assert_eq!(
        load(&runtime(Tiering::Baseline, cache.path())).tier(),
        Tier::Optimized
    );
}

#[test]
fn calls_across_the_swap_all_answer_right_and_end_on_cranelift_s_code() {
    let cache = tempfile::tempdir().expect("tempdir");
    let rt = runtime(Tiering::BaselineFirst, cache.path());
    let function = std::sync::Arc::new(load(&rt));
    // Calls run on other threads all through the swap; each must finish
    // with the right answer, whichever code it started with.
    let expected = function.call_blocking(&request(), None).expect("call");
    let callers: Vec<_> = (0..2)
        .map(|_| {
            let function = function.clone();
            let expected = expected.clone();
            std::thread::spawn(move || {
                let mut tiers = Vec::new();
                loop {
                    let tier = function.tier();
                    let answer = function.call_blocking(&request(), None).expect("call");
                    assert_eq!(answer, expected);
                    tiers.push(tier);
                    if tier == Tier::Optimized {
                        return tiers;
                    }
                }
            })
        })
        .collect();
    until_optimized(&function);
    for caller in callers {
        let tiers = caller.join().expect("caller");
        assert_eq!(tiers.last(), Some(&Tier::Optimized));
    }
}
