//! A guest that misbehaves gets a clear error naming it, and the same host
//! then serves a healthy call: with code of either compiler (see
//! [`Tiering`]), as the same sandbox runs both.

use std::time::Duration;

use serde_json::json;
use xfn_runtime::protocol::RunFunctionRequest;
use xfn_runtime::{CallError, HostConfig, Tiering};
use xfn_tests::{load, runtime};

/// The tests, for code of one compiler.
macro_rules! host_fault_tests {
    ($tiering:expr) => {
        use super::*;

        fn request(input: serde_json::Value) -> RunFunctionRequest {
            RunFunctionRequest {
                input: Some(input.to_string()),
                ..RunFunctionRequest::default()
            }
        }

        fn config() -> HostConfig {
            HostConfig {
                call_timeout: Duration::from_millis(500),
                memory_limit: 64 << 20,
                tiering: $tiering,
                ..HostConfig::default()
            }
        }

        /// Runs a faulty call, then a healthy one on the same function and host.
        fn fault_then_healthy(fault: &str) -> CallError {
            fault_then_healthy_input(json!({"fault": fault}))
        }

        /// Runs a call with a faulty `input`, then a healthy one on the same
        /// function and host.
        fn fault_then_healthy_input(input: serde_json::Value) -> CallError {
            let rt = runtime(config());
            let f = load(&rt, "scripted", "xfn_test_scripted");
            let err = f
                .call_blocking(&request(input), None)
                .expect_err("the fault must fail the call");
            let healthy = f
                .call_blocking(&request(json!({"count": true})), None)
                .expect("a healthy call after the fault");
            assert_eq!(healthy.context.as_deref(), Some(r#"{"xfn.test/calls":1}"#));
            err
        }

        #[test]
        fn a_trap_is_reported_and_the_host_carries_on() {
            let err = fault_then_healthy("trap");
            assert!(
                matches!(&err, CallError::Trap { function, .. } if function == "scripted"),
                "{err}"
            );
            assert!(
                err.to_string().contains("function \"scripted\" trapped"),
                "{err}"
            );
        }

        #[test]
        fn an_infinite_loop_times_out() {
            let started = std::time::Instant::now();
            let err = fault_then_healthy("loop");
            assert!(
                matches!(err, CallError::Timeout { limit, .. } if limit == Duration::from_millis(500)),
                "{err}"
            );
            assert!(err.to_string().contains("timed out after 500ms"), "{err}");
            assert!(err.to_string().contains("raise --timeout"), "{err}");
            assert!(started.elapsed() < Duration::from_secs(20));
        }

        #[test]
        fn a_caller_deadline_tightens_the_timeout() {
            let rt = runtime(config());
            let f = load(&rt, "scripted", "xfn_test_scripted");
            let err = f
                .call_blocking(
                    &request(json!({"fault": "loop"})),
                    Some(Duration::from_millis(50)),
                )
                .expect_err("times out");
            assert!(
                matches!(err, CallError::Timeout { limit, .. } if limit == Duration::from_millis(50)),
                "{err}"
            );
        }

        #[test]
        fn a_gibibyte_allocation_hits_the_memory_limit() {
            let err = fault_then_healthy("alloc");
            match &err {
                CallError::MemoryLimit {
                    function,
                    limit,
                    requested,
                } => {
                    assert_eq!(function, "scripted");
                    assert_eq!(*limit, 64 << 20);
                    assert!(*requested > *limit);
                }
                other => panic!("want a memory limit error, got {other}"),
            }
            assert!(
                err.to_string()
                    .contains("exceeded its memory limit of 67108864 bytes")
                    && err.to_string().contains("raise --memory-limit"),
                "{err}"
            );
        }

        #[test]
        fn a_panic_is_reported_with_its_message() {
            let err = fault_then_healthy("panic");
            assert!(matches!(err, CallError::Trap { .. }), "{err}");
            assert!(
                err.to_string().contains("scripted panic"),
                "the panic message is kept: {err}"
            );
        }

        #[test]
        fn a_function_error_is_reported() {
            let err = fault_then_healthy("error");
            assert_eq!(
                err,
                CallError::Failed {
                    function: "scripted".into(),
                    message: "scripted error".into()
                }
            );
        }

        #[test]
        fn a_malformed_response_is_refused() {
            let err = fault_then_healthy("malformed");
            assert!(matches!(err, CallError::Malformed { .. }), "{err}");
            assert!(
                err.to_string()
                    .contains("function \"scripted\" returned a malformed response: desired composite resource is not a JSON object"),
                "{err}"
            );
        }

        #[test]
        fn the_sandbox_grants_no_environment_filesystem_or_network() {
            let rt = runtime(config());
            let f = load(&rt, "scripted", "xfn_test_scripted");
            let rsp = f
                .call_blocking(&request(json!({"probe": true})), None)
                .expect("probe runs");
            let context: serde_json::Value =
                serde_json::from_str(rsp.context.as_deref().unwrap_or("{}")).expect("json");
            let probe = &context["xfn.test/probe"];
            assert_eq!(probe["env"], json!([]), "no environment variables");
            assert_eq!(probe["args"], json!([]), "no arguments");
            assert!(
                probe["file"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("error")),
                "{probe}"
            );
            assert!(
                probe["dir"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("error")),
                "{probe}"
            );
            assert!(
                probe["net"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("error")),
                "{probe}"
            );
        }

        #[test]
        fn every_call_gets_a_fresh_instance() {
            // The counter lives only in the context the caller passes: a reused
            // instance would not matter here, so check the guest's own memory:
            // two calls with no context must both count from zero.
            let rt = runtime(config());
            let f = load(&rt, "scripted", "xfn_test_scripted");
            each_call_counts_from_zero(&f, 3);
        }

        /// Makes `calls` calls of `f` that count the calls their instance
        /// has seen, with no context: each must see only itself.
        fn each_call_counts_from_zero(f: &xfn_runtime::WasmFunction, calls: usize) {
            for _ in 0..calls {
                let rsp = f
                    .call_blocking(&request(json!({"count": true})), None)
                    .expect("runs");
                assert_eq!(rsp.context.as_deref(), Some(r#"{"xfn.test/calls":1}"#));
            }
        }

        #[test]
        fn slots_waiting_in_a_decommit_batch_are_reset_before_reuse() {
            // A pool of three slots whose finished memories and tables are given
            // back in batches (of three, cut to fit the pool over the machine's
            // decommit queues): a slot sits unusable until its batch goes, and
            // calls from concurrent threads must still each find a fresh instance
            // (and never run short of slots while others wait in the batch).
            let rt = runtime(HostConfig {
                max_concurrent_calls: 3,
                max_calls_per_function: Some(3),
                decommit_batch: 3,
                ..config()
            });
            let f = load(&rt, "scripted", "xfn_test_scripted");
            std::thread::scope(|scope| {
                for _ in 0..3 {
                    scope.spawn(|| each_call_counts_from_zero(&f, 20));
                }
            });
        }

        #[test]
        fn a_component_that_is_not_a_function_is_refused_at_load() {
            let rt = runtime(config());
            let err = refused(&rt, "bogus", b"\0asm\x01\0\0\0");
            assert!(err.starts_with("cannot load function \"bogus\""), "{err}");
        }

        /// The error of loading `bytes` as function `name`, which must fail.
        fn refused(rt: &xfn_runtime::WasmRuntime, name: &str, bytes: &[u8]) -> String {
            match rt.load(name, bytes) {
                Ok(_) => panic!("{name} must be refused"),
                Err(e) => e.to_string(),
            }
        }

        #[test]
        fn a_component_that_does_not_compile_is_refused_naming_the_function() {
            let cache = tempfile::tempdir().expect("temp dir");
            let engine = xfn_runtime::HostEngine::new(config()).expect("engine");
            let rt = xfn_runtime::WasmRuntime::new(
                engine,
                Some(xfn_runtime::CompileCache::new(cache.path())),
            )
            .expect("runtime");
            let err = refused(&rt, "function-broken", b"this is not wasm");
            assert!(
                err.starts_with("cannot load function \"function-broken\": cannot compile component: "),
                "{err}"
            );
        }

        #[test]
        fn a_guest_can_use_most_of_its_memory_limit() {
            // 60 MiB held in small blocks under a 64 MiB cap: the arena's growing
            // chunks must not ask for more than the cap leaves.
            let rt = runtime(config());
            let f = load(&rt, "scripted", "xfn_test_scripted");
            let rsp = f
                .call_blocking(&request(json!({"holdMib": 60})), None)
                .expect("60 MiB fits under 64 MiB");
            assert_eq!(
                rsp.context.as_deref(),
                Some(r#"{"xfn.test/held":62914560}"#)
            );
        }

        #[test]
        fn stderr_past_the_capture_bound_is_cut_not_a_trap() {
            let rt = runtime(config());
            let f = load(&rt, "scripted", "xfn_test_scripted");
            // 1 MiB to stderr, far past the 64 KiB kept, then a healthy response.
            let rsp = f
                .call_blocking(
                    &request(json!({"stderrBytes": 1 << 20, "count": true})),
                    None,
                )
                .expect("writing much to stderr is not a fault");
            assert_eq!(rsp.context.as_deref(), Some(r#"{"xfn.test/calls":1}"#));
            // The same, then a panic: the error keeps the end of stderr (the panic
            // message), bounded, and says how much came before.
            let err = f
                .call_blocking(
                    &request(json!({"stderrBytes": 1 << 20, "fault": "panic"})),
                    None,
                )
                .expect_err("the panic fails the call");
            let message = err.to_string();
            assert!(matches!(err, CallError::Trap { .. }), "{message}");
            assert!(message.contains("scripted panic"), "{message}");
            assert!(message.contains(" bytes before) …"), "{message}");
            assert!(message.len() < 8 << 10, "{} bytes", message.len());
        }

        #[test]
        fn a_huge_error_message_is_cut_saying_how_much_is_left_out() {
            let rt = runtime(config());
            let f = load(&rt, "scripted", "xfn_test_scripted");
            let err = f
                .call_blocking(&request(json!({"errorBytes": 3 << 20})), None)
                .expect_err("the function fails");
            let CallError::Failed { message, .. } = &err else {
                panic!("want a function error, got {err}");
            };
            let kept = xfn_runtime::text::MAX_GUEST_TEXT;
            assert_eq!(
                *message,
                format!("{}… ({} bytes more)", "E".repeat(kept), (3 << 20) - kept)
            );
        }

        #[test]
        fn guest_logs_cannot_forge_host_log_lines() {
            let rt = runtime(config());
            let f = load(&rt, "scripted", "xfn_test_scripted");
            let (logs, _guard) = xfn_tests::logs::Logs::capture(tracing::Level::INFO);
            let forged = "hello\n2026-01-01T00:00:00Z ERROR xfn: forged\r\x1b[2Kgone";
            f.call_blocking(&request(json!({"log": forged})), None)
                .expect("the call runs");
            let text = logs.text();
            assert_eq!(text.lines().count(), 1, "one log line: {text:?}");
            assert!(
                text.contains(r"hello\n2026-01-01T00:00:00Z ERROR xfn: forged\r\u{1b}[2Kgone"),
                "control characters are escaped: {text:?}"
            );
        }

        #[test]
        fn an_exit_is_one_line_that_invents_no_status() {
            for (code, how) in [(3, "with an error status"), (0, "(with a success status)")] {
                let err = fault_then_healthy_input(json!({"exit": code}));
                assert_eq!(
                    err.to_string(),
                    format!(
                        "function \"scripted\" trapped: the function exited {how} instead of returning a response"
                    )
                );
            }
        }

        #[test]
        fn a_stack_overflow_is_reported_as_one() {
            // The attack round's low finding: with frames of 64 KiB the fault lands
            // above 4 GiB, and was reported as "out of bounds memory access".
            for fault in ["overflow", "overflowBigFrames"] {
                let err = fault_then_healthy(fault);
                assert_eq!(
                    err.to_string(),
                    "function \"scripted\" trapped: the function ran out of stack (endless or too deep recursion?)",
                    "{fault}"
                );
            }
        }

        #[test]
        fn the_code_is_the_compiler_s_asked_for() {
            let rt = runtime(config());
            let f = load(&rt, "scripted", "xfn_test_scripted");
            let expected = match $tiering {
                Tiering::Optimized => xfn_runtime::Tier::Optimized,
                _ => xfn_runtime::Tier::Baseline,
            };
            assert_eq!(f.tier(), expected);
        }
    };
}

/// Code of Cranelift, the optimizing compiler.
mod optimized {
    host_fault_tests!(Tiering::Optimized);
}

/// Code of Winch, the baseline compiler.
mod baseline {
    host_fault_tests!(Tiering::Baseline);
}
