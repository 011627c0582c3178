//! A test function that does what its input tells it to.
//!
//! Input (all fields optional):
//! * `response`: protojson fields of a `RunFunctionResponse` that replace the
//!   same fields of `Response::to(request)`.
//! * `afterRequirements`: used instead of `response` once the request carries
//!   any resolved required (or extra) resources or schemas.
//! * `echo: true`: put the whole request under context key `xfn.test/request`.
//! * `count: true`: increment the number under context key `xfn.test/calls`.
//! * `unstable: true`: require a different resource on every call.
//! * `probe: true`: try the environment, the filesystem and the network, and
//!   report what happened under context key `xfn.test/probe`.
//! * `holdMib: N`: allocate N MiB in 64 KiB blocks and report the bytes
//!   held under context key `xfn.test/held`.
//! * `fault`: `trap`, `loop`, `alloc` (1 GiB), `panic`, `error` or
//!   `malformed` (a desired state that isn't JSON).
//! * `secretMib: N` with `seed: S`: fill N MiB with a pattern made from S,
//!   report the whole pattern pages it finds in its memory under
//!   `xfn.test/found`, then log `xfn.test/page-out` (a test host may then
//!   push the call's memory to swap) and never touch the pattern again.
//! * `scanMib: N` with `seed: S`: grow memory by N MiB without writing it,
//!   and report the pattern pages of seed S it finds in all of its memory
//!   under `xfn.test/found`: what an earlier call left behind.
//! * `stderrBytes: N`: write N bytes to stderr first, then carry on.
//! * `errorBytes: N`: fail with an error message N bytes long.
//! * `errorText: "text"`: fail with this error message.
//! * `log: "text"`: log the text (at info level) first, then carry on.
//! * `exit: N`: exit the process with status N.
//! * `sleepMs: N`: sleep N milliseconds first, then carry on.
//! * `nest: N`: put a value nested N objects deep in the context.
//! * `fault: overflow`: recurse until the stack runs out.
//! * `fault: overflowBigFrames`: the same, with frames of 64 KiB.

use serde::Deserialize;
use serde_json::{Value, json};
use xfn_sdk::{Request, Response};

/// The scripted function's input.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Input {
    #[serde(default, rename = "apiVersion")]
    _api_version: Option<String>,
    #[serde(default, rename = "kind")]
    _kind: Option<String>,
    /// Fields of the response.
    #[serde(default)]
    pub response: Option<serde_json::Map<String, Value>>,
    /// Fields of the response once requirements are resolved.
    #[serde(default)]
    pub after_requirements: Option<serde_json::Map<String, Value>>,
    /// Echo the request into the context.
    #[serde(default)]
    pub echo: bool,
    /// Count calls in the context.
    #[serde(default)]
    pub count: bool,
    /// Probe the sandbox.
    #[serde(default)]
    pub probe: bool,
    /// Require a different resource on every call (needs `count`).
    #[serde(default)]
    pub unstable: bool,
    /// Misbehave.
    #[serde(default)]
    pub fault: Option<String>,
    /// Hold this many MiB, allocated 64 KiB at a time, for the call.
    #[serde(default)]
    pub hold_mib: usize,
    /// Write this many MiB of the seed's pattern.
    #[serde(default)]
    pub secret_mib: usize,
    /// Grow memory by this many MiB and look for the seed's pattern.
    #[serde(default)]
    pub scan_mib: usize,
    /// The pattern's seed.
    #[serde(default)]
    pub seed: u64,
    /// Write this many bytes to stderr.
    #[serde(default)]
    pub stderr_bytes: usize,
    /// Fail with a message this many bytes long.
    #[serde(default)]
    pub error_bytes: usize,
    /// Fail with this message.
    #[serde(default)]
    pub error_text: Option<String>,
    /// Log this text.
    #[serde(default)]
    pub log: Option<String>,
    /// Exit with this status.
    #[serde(default)]
    pub exit: Option<i32>,
    /// Sleep this many milliseconds.
    #[serde(default)]
    pub sleep_ms: u64,
    /// Put a value nested this many objects deep in the context, under
    /// `xfn.test/deep`.
    #[serde(default)]
    pub nest: usize,
}

/// Runs the script on an SDK request.
pub fn run(req: &Request) -> Result<Response, String> {
    let input: Input = req.input().map_err(|e| e.to_string())?;
    if input.stderr_bytes > 0 {
        use std::io::Write as _;
        let line = [b'e'; 1023];
        let mut left = input.stderr_bytes;
        let mut stderr = std::io::stderr().lock();
        while left > 0 {
            let n = left.min(line.len());
            stderr
                .write_all(&line[..n])
                .map_err(|e| format!("cannot write to stderr: {e}"))?;
            left -= n;
        }
    }
    if let Some(text) = &input.log {
        xfn_sdk::info!("{text}");
    }
    if input.sleep_ms > 0 {
        std::thread::sleep(std::time::Duration::from_millis(input.sleep_ms));
    }
    if let Some(code) = input.exit {
        std::process::exit(code);
    }
    if input.error_bytes > 0 {
        return Err("E".repeat(input.error_bytes));
    }
    if let Some(text) = input.error_text {
        return Err(text);
    }
    match input.fault.as_deref() {
        None | Some("malformed") => {}
        Some("trap") => std::process::abort(),
        Some("loop") => {
            let mut n: u64 = 0;
            loop {
                n = std::hint::black_box(n.wrapping_add(1));
            }
        }
        Some("alloc") => {
            let block = vec![1u8; 1 << 30];
            return Err(format!(
                "allocated {} bytes",
                std::hint::black_box(block).len()
            ));
        }
        Some("panic") => panic!("scripted panic"),
        Some("overflow") => return Err(format!("recursed {} times", recurse(0))),
        Some("overflowBigFrames") => {
            return Err(format!("recursed {} times", recurse_big(0)));
        }
        Some("error") => return Err("scripted error".into()),
        Some(other) => return Err(format!("unknown fault {other:?}")),
    }

    let found = if input.secret_mib > 0 {
        let secret = memory::write_secret(input.seed, input.secret_mib);
        let found = memory::count_secret_pages(input.seed);
        // From here on the secret is not touched again: pushed to swap, it
        // stays there until the host resets the memory for the next call.
        xfn_sdk::info!("xfn.test/page-out");
        std::mem::forget(std::hint::black_box(secret));
        Some(found)
    } else if input.scan_mib > 0 {
        memory::grow(input.scan_mib);
        Some(memory::count_secret_pages(input.seed))
    } else {
        None
    };

    let held: Vec<Vec<u8>> = (0..input.hold_mib * 16)
        .map(|i| vec![i as u8; 64 << 10])
        .collect();

    let resolved = !req.required_resources.is_empty()
        || !req.extra_resources.is_empty()
        || !req.required_schemas.is_empty();
    let overlay = match (&input.after_requirements, resolved) {
        (Some(after), true) => Some(after),
        _ => input.response.as_ref(),
    };
    let mut rsp = Response::to(req);
    if let Some(overlay) = overlay {
        let mut base = serde_json::to_value(&rsp).map_err(|e| e.to_string())?;
        if let Value::Object(fields) = &mut base {
            for (k, v) in overlay {
                fields.insert(k.clone(), v.clone());
            }
        }
        rsp = serde_json::from_value(base).map_err(|e| format!("bad scripted response: {e}"))?;
    }
    if input.echo {
        let echoed = serde_json::to_value(req).map_err(|e| e.to_string())?;
        rsp.set_context_key("xfn.test/request", echoed);
    }
    let calls = req
        .context_key("xfn.test/calls")
        .and_then(Value::as_u64)
        .unwrap_or(0)
        + 1;
    if input.count {
        rsp.set_context_key("xfn.test/calls", json!(calls));
    }
    if input.unstable {
        let selector = xfn_sdk::ResourceSelector {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            r#match: Some(xfn_sdk::ResourceMatch::MatchName(format!("cm-{calls}"))),
            namespace: None,
        };
        rsp.require_resources(format!("call-{calls}"), selector);
    }
    if input.probe {
        rsp.set_context_key("xfn.test/probe", probe());
    }
    if input.nest > 0 {
        let mut deep = json!("bottom");
        for _ in 0..input.nest {
            deep = json!({ "d": deep });
        }
        rsp.set_context_key("xfn.test/deep", deep);
    }
    if let Some(found) = found {
        rsp.set_context_key("xfn.test/found", json!(found));
    }
    if input.hold_mib > 0 {
        let bytes: usize = held.iter().map(Vec::len).sum();
        rsp.set_context_key("xfn.test/held", json!(bytes));
    }
    Ok(rsp)
}

/// Calls itself until the stack runs out; never returns.
#[allow(unconditional_recursion)]
fn recurse(depth: u64) -> u64 {
    let frame = std::hint::black_box([depth; 16]);
    recurse(frame[depth as usize % 16] + 1) + std::hint::black_box(1)
}

/// [`recurse`] with frames of 64 KiB, whose stores land far from where
/// the stack pointer wrapped.
#[allow(unconditional_recursion)]
fn recurse_big(depth: u64) -> u64 {
    let frame = std::hint::black_box([depth; 8192]);
    recurse_big(frame[depth as usize % 8192] + 1) + std::hint::black_box(1)
}

/// Secrets in linear memory, for tests that no call sees another's.
mod memory {
    /// Bytes in a page of the pattern.
    const PAGE: usize = 4096;
    const WORDS: usize = PAGE / 8;

    /// The word at `index` of every pattern page of `seed`. It is computed,
    /// so the pattern is nowhere in the module's own data.
    fn word(seed: u64, index: usize) -> u64 {
        (index as u64 + 1)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(17)
            ^ seed
    }

    /// Fills `mib` MiB with the pattern, page-aligned, and returns it.
    pub fn write_secret(seed: u64, mib: usize) -> Vec<u64> {
        let mut secret = vec![0u64; (mib << 20) / 8 + WORDS];
        for slot in secret.iter_mut() {
            let index = (std::ptr::from_mut(slot) as usize % PAGE) / 8;
            // SAFETY: `slot` is a valid, aligned u64 of `secret`; the write
            // is volatile so the pattern really lands in memory.
            unsafe { std::ptr::write_volatile(slot, word(seed, index)) };
        }
        secret
    }

    /// Grows linear memory by `mib` MiB, leaving the new pages unwritten.
    pub fn grow(mib: usize) {
        #[cfg(target_arch = "wasm32")]
        core::arch::wasm32::memory_grow(0, (mib << 20) / 65536);
        #[cfg(not(target_arch = "wasm32"))]
        let _ = mib;
    }

    /// The whole pattern pages of `seed` in all of linear memory.
    pub fn count_secret_pages(seed: u64) -> usize {
        #[cfg(target_arch = "wasm32")]
        {
            let size = core::arch::wasm32::memory_size(0) * 65536;
            // The first page holds address 0, which Rust may not read.
            (1..size / PAGE)
                .filter(|page| {
                    (0..WORDS).all(|i| {
                        let address = page * PAGE + i * 8;
                        // SAFETY: the address is inside linear memory and
                        // aligned; wasm has no unmapped pages below its size.
                        let value = unsafe { std::ptr::read_volatile(address as *const u64) };
                        value == word(seed, i)
                    })
                })
                .count()
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            let _ = seed;
            0
        }
    }
}

/// What the sandbox lets a guest see and do.
fn probe() -> Value {
    let env: Vec<String> = std::env::vars().map(|(k, _)| k).collect();
    let args: Vec<String> = std::env::args().collect();
    let file = match std::fs::read_to_string("/etc/hostname") {
        Ok(_) => "read".to_owned(),
        Err(e) => format!("error: {e}"),
    };
    let dir = match std::fs::read_dir("/") {
        Ok(_) => "listed".to_owned(),
        Err(e) => format!("error: {e}"),
    };
    let net = match std::net::TcpStream::connect("127.0.0.1:9") {
        Ok(_) => "connected".to_owned(),
        Err(e) => format!("error: {e}"),
    };
    println!("stdout from a guest must go nowhere");
    json!({"env": env, "args": args, "file": file, "dir": dir, "net": net})
}

/// The component's export, which can also return malformed responses.
#[cfg(target_arch = "wasm32")]
mod export {
    use super::*;
    use xfn_sdk::__private::bindings::Guest;
    use xfn_sdk::__private::bindings::xfn::function::types as wit;

    struct Scripted;

    impl Guest for Scripted {
        fn run_function(
            request: wit::RunFunctionRequest,
        ) -> Result<wit::RunFunctionResponse, String> {
            let req = xfn_sdk::wit::request_from_wit(request).map_err(|e| e.to_string())?;
            let malformed = req
                .input
                .as_ref()
                .and_then(|i| i.get("fault"))
                .is_some_and(|f| f == "malformed");
            let mut rsp = xfn_sdk::wit::response_to_wit(run(&req)?);
            if malformed {
                let desired = rsp.desired.get_or_insert_with(|| wit::State {
                    composite: None,
                    resources: Vec::new(),
                });
                desired.composite = Some(wit::ResourceObject {
                    resource: Some("this is not JSON".into()),
                    connection_details: Vec::new(),
                    ready: wit::Ready::Unspecified,
                });
            }
            Ok(rsp)
        }
    }

    xfn_sdk::__private::bindings::export_function!(Scripted with_types_in xfn_sdk::__private::bindings);
}
