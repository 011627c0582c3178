//! The benchmark's transport floor: xfn's own gRPC server (the code `xfn
//! serve` runs, with its conversions, buffers and call threads) serving
//! function-patch-and-transform compiled natively, with no sandbox.
//!
//! Beside `xfn serve` running the same function as wasm, it splits a
//! served call's cost into the server's part and the sandbox's, measured
//! on the same request in the same run (`make bench`, item 4).
//!
//! Like the benchmark's other peers, it prints "LISTENING <port>" once it
//! listens, and exits by itself after `--max-seconds`.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use xfn_grpc::call_threads::CallThreads;
use xfn_grpc::{FunctionTable, Server, ServerConfig};
use xfn_runtime::protocol::{RunFunctionRequest, RunFunctionResponse};
use xfn_runtime::{CallError, Function};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The name the function is served under, as `xfn serve` would serve the
/// wasm build.
const NAME: &str = "function-patch-and-transform";

#[derive(Parser)]
#[command(about = "xfn's gRPC server with function-patch-and-transform run natively")]
struct Args {
    /// Where to listen.
    #[arg(long, default_value = "127.0.0.1:0")]
    address: SocketAddr,
    /// Exit after this many seconds, whatever happens.
    #[arg(long, default_value_t = 300)]
    max_seconds: u64,
}

/// function-patch-and-transform, called natively on what the guest SDK
/// would hand the wasm build: the request's objects parsed from their JSON
/// text, the response's written back as JSON text.
struct NativePatchAndTransform;

#[async_trait::async_trait]
impl Function for NativePatchAndTransform {
    fn name(&self) -> &str {
        NAME
    }

    async fn call(
        &self,
        request: &RunFunctionRequest,
        _timeout: Option<Duration>,
    ) -> Result<RunFunctionResponse, CallError> {
        // The wasm host copies the request into the guest, too.
        let request = xfn_tests::convert::request_back(request.clone());
        let response = function_patch_and_transform::run(&request);
        Ok(xfn_tests::convert::response_forward(response))
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    // As `xfn serve --workers 1` runs: the connections on a runtime with a
    // thread per core, calls that wait on one call thread (a native call
    // never waits).
    let runtimes = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .and_then(|server| {
            let calls = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("xfn-call")
                .enable_all()
                .build()?;
            Ok((server, calls))
        });
    let (server_runtime, call_runtime) = match runtimes {
        Ok(r) => r,
        Err(e) => {
            eprintln!("xfn-native-serve: cannot start its runtimes: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut table = FunctionTable::new();
    table.insert(NAME, Arc::new(NativePatchAndTransform) as Arc<dyn Function>);
    let config = ServerConfig {
        address: args.address,
        call_threads: Some(CallThreads::new(call_runtime.handle().clone())),
        ..ServerConfig::default()
    };
    let outcome = server_runtime.block_on(async {
        let server = Server::bind(config, table)
            .await
            .map_err(|e| e.to_string())?;
        println!("LISTENING {}", server.local_addr().port());
        match tokio::time::timeout(Duration::from_secs(args.max_seconds), server.serve()).await {
            Ok(served) => served,
            Err(_) => Ok(()),
        }
        .map_err(|e| e.to_string())
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xfn-native-serve: {e}");
            ExitCode::FAILURE
        }
    }
}
