//! `FunctionRunnerService` over gRPC: one server, any number of functions.
//!
//! The server speaks both `apiextensions.fn.proto.v1` and `v1beta1`, routes
//! each call to a function by the authority the client dialed (see
//! [`router`](super::router)), and serves the standard health service and,
//! optionally, reflection. Calls never crash it: a function's failure is a
//! gRPC status (see [`status`](super::status)).
//!
//! ```no_run
//! # async fn demo(functions: xfn_grpc::FunctionTable) -> Result<(), xfn_grpc::ServeError> {
//! use xfn_grpc::server::{Server, ServerConfig};
//! let server = Server::bind(ServerConfig::default(), functions).await?;
//! let handle = server.handle();
//! tokio::spawn(async move { tokio::signal::ctrl_c().await.ok(); handle.shutdown().await });
//! server.serve().await
//! # }
//! ```

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status};
use xfn_proto::json::{v1, v1beta1};

use futures_util::TryStreamExt as _;

use super::batched_writes::BatchedWrites;
use super::call_threads::CallThreads;
use super::health::Health;
use super::open_calls::{OpenCall, OpenCalls, OpenCallsLayer};
use super::preface::{PREFACE_TIMEOUT, PrefaceDeadline};
use super::router::{self, FunctionTable, RouteInfo, RouteLayer};
use super::sni::{self, DynamicTls};
use super::tls::TlsFiles;
use super::{convert, deadline, status};
use xfn_proto::json::TextPool;
use xfn_runtime::metrics;

/// gRPC's usual receive limit: 4 MiB.
pub const DEFAULT_MAX_RECV_MESSAGE_SIZE: usize = 4 << 20;

/// Most streams one HTTP/2 connection may have open at once. tonic sets
/// none of its own (hyper's default of 200 is overridden), so without it
/// one client could open streams without end; a client that wants more
/// waits for a stream to finish, as HTTP/2 has it.
pub const MAX_STREAMS_PER_CONNECTION: u32 = 256;

/// The HTTP/2 flow-control window of each stream and of each connection:
/// how much of a request a client may send before the server reads it.
/// Fixed, not adaptive: a large request still goes a MiB per round trip,
/// the server sends no BDP pings, and a peer cannot grow what it may send
/// unread (adaptive windows grow to 16 MiB).
pub const FLOW_CONTROL_WINDOW: u32 = 1 << 20;

/// The largest health or reflection request accepted. prost decodes
/// these without a depth limit (xfn-proto turns prost's off and checks
/// function calls itself), so their size bounds how deeply they can nest.
const SMALL_REQUEST_LIMIT: usize = 1 << 10;

/// How a [`Server`] listens and serves.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Where to listen for every function.
    pub address: SocketAddr,
    /// Extra listeners, each dedicated to one function (by name), for
    /// clients that can't set the authority.
    pub function_ports: Vec<(String, SocketAddr)>,
    /// The function every request on `address` goes to, whatever its
    /// authority, if set: a function image serves its one function under
    /// whatever name Crossplane gives it.
    pub address_function: Option<String>,
    /// Certificate, key and client CA for mTLS; `None` serves plaintext
    /// (unless `dynamic_tls` is set).
    pub tls: Option<TlsFiles>,
    /// mTLS with a certificate per server name that can change while
    /// serving; wins over `tls`.
    pub dynamic_tls: Option<Arc<DynamicTls>>,
    /// Largest request accepted, in bytes.
    pub max_recv_message_size: usize,
    /// The namespace authorities must name (`<function>.<namespace>`), or
    /// `None` to accept any.
    pub namespace: Option<String>,
    /// Serve gRPC reflection (v1 and v1alpha).
    pub reflection: bool,
    /// How long shutdown waits for calls in flight.
    pub shutdown_grace: Duration,
    /// Where calls run. Threads of their own keep connections and routing
    /// responsive while guests compute: a call then waits behind other
    /// guests at most a tick, not once per step of the gRPC exchange.
    /// `None` runs calls on the server's own runtime (as
    /// [`CallThreads::new`] of it).
    pub call_threads: Option<CallThreads>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            address: SocketAddr::from(([127, 0, 0, 1], 9443)),
            function_ports: Vec::new(),
            address_function: None,
            tls: None,
            dynamic_tls: None,
            max_recv_message_size: DEFAULT_MAX_RECV_MESSAGE_SIZE,
            namespace: None,
            reflection: true,
            shutdown_grace: Duration::from_secs(35),
            call_threads: None,
        }
    }
}

/// Why a server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// An address could not be bound.
    #[error("cannot listen on {address}: {error}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// The cause (its text is part of the message).
        error: std::io::Error,
    },
    /// The certificate, key or CA cannot be served.
    #[error("cannot serve mTLS: {0}")]
    Tls(super::tls::TlsError),
    /// The transport (TLS set-up, HTTP/2) failed.
    #[error("gRPC server: {0}")]
    Transport(#[from] tonic::transport::Error),
    /// The reflection service could not be built.
    #[error("gRPC reflection: {0}")]
    Reflection(String),
    /// A listener stopped unexpectedly.
    #[error("gRPC listener failed: {0}")]
    Listener(String),
    /// The functions to serve could not be loaded (the text says why).
    #[error("{0}")]
    Functions(String),
}

/// A bound server, ready to [`serve`](Server::serve).
pub struct Server {
    shared: Arc<Shared>,
    listeners: Vec<(TcpListener, Option<Arc<str>>)>,
    local_addr: SocketAddr,
    function_addrs: BTreeMap<String, SocketAddr>,
    config: ServerConfig,
}

struct Shared {
    table: RwLock<Arc<FunctionTable>>,
    namespace: Option<String>,
    health: Health,
    shutdown: watch::Sender<bool>,
    reload: tokio::sync::Mutex<()>,
    call_threads: CallThreads,
    /// Buffers for requests' JSON text, given back after each call
    /// (bounded: see [`TextPool::default`]).
    text_pool: TextPool,
}

impl Shared {
    fn table(&self) -> Arc<FunctionTable> {
        self.table
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Controls a running server: reload its functions, shut it down.
#[derive(Clone)]
pub struct ServerHandle {
    shared: Arc<Shared>,
}

async fn bind(address: SocketAddr) -> Result<(TcpListener, SocketAddr), ServeError> {
    let bind_error = |error| ServeError::Bind { address, error };
    let listener = TcpListener::bind(address).await.map_err(bind_error)?;
    let local = listener.local_addr().map_err(bind_error)?;
    Ok((listener, local))
}

impl Server {
    /// Checks the TLS files, if any, binds the server's addresses and
    /// reports `functions` as serving.
    pub async fn bind(
        config: ServerConfig,
        functions: FunctionTable,
    ) -> Result<Server, ServeError> {
        if let Some(tls) = &config.tls {
            tls.check_server().map_err(ServeError::Tls)?;
        }
        let (listener, local_addr) = bind(config.address).await?;
        let mut listeners = vec![(
            listener,
            config.address_function.as_deref().map(Arc::<str>::from),
        )];
        let mut function_addrs = BTreeMap::new();
        for (name, address) in &config.function_ports {
            let (listener, local) = bind(*address).await?;
            listeners.push((listener, Some(Arc::from(name.as_str()))));
            function_addrs.insert(name.clone(), local);
        }
        let health = Health::new(&functions).await;
        let shared = Arc::new(Shared {
            table: RwLock::new(Arc::new(functions)),
            namespace: config.namespace.clone(),
            health,
            shutdown: watch::Sender::new(false),
            reload: tokio::sync::Mutex::new(()),
            call_threads: config
                .call_threads
                .clone()
                .unwrap_or_else(|| CallThreads::new(tokio::runtime::Handle::current())),
            text_pool: TextPool::default(),
        });
        Ok(Server {
            shared,
            listeners,
            local_addr,
            function_addrs,
            config,
        })
    }

    /// The address every function is served on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The address dedicated to function `name`, if it has one.
    pub fn function_addr(&self, name: &str) -> Option<SocketAddr> {
        self.function_addrs.get(name).copied()
    }

    /// A handle to reload or shut down the server once it serves.
    pub fn handle(&self) -> ServerHandle {
        ServerHandle {
            shared: self.shared.clone(),
        }
    }

    /// Serves until [`ServerHandle::shutdown`], then drains calls in flight
    /// for up to the configured grace period.
    pub async fn serve(self) -> Result<(), ServeError> {
        let Server {
            shared,
            listeners,
            local_addr,
            function_addrs,
            config,
        } = self;
        let handle = ServerHandle {
            shared: shared.clone(),
        };
        // Static certificates are served as changing ones are: one accept
        // loop bounds every TLS handshake and HTTP/2 start.
        let tls = match (&config.dynamic_tls, &config.tls) {
            (Some(tls), _) => Some(tls.clone()),
            (None, Some(files)) => Some(Arc::new(
                DynamicTls::from_files(files).map_err(ServeError::Tls)?,
            )),
            (None, None) => None,
        };
        let mut tasks = JoinSet::new();
        for (listener, pinned) in listeners {
            // Its connections batch a response with the others still to come.
            let open_calls = OpenCalls::default();
            let router = config.router(&shared, pinned, open_calls.clone())?;
            let mut stop = shared.shutdown.subscribe();
            let signal = async move {
                // An error means every sender is gone: stop too.
                let _ = stop.wait_for(|stop| *stop).await;
            };
            match &tls {
                Some(tls) => {
                    // The handshake is bounded; then HTTP/2 must start too.
                    let incoming =
                        sni::incoming(listener, tls.clone(), shared.shutdown.subscribe())
                            .map_ok(move |stream| connection(stream, &open_calls));
                    tasks.spawn(router.serve_with_incoming_shutdown(incoming, signal));
                }
                None => {
                    // A client that never starts HTTP/2 is cut off.
                    let incoming = TcpIncoming::from(listener)
                        .with_nodelay(Some(true))
                        .map_ok(move |stream| connection(stream, &open_calls));
                    tasks.spawn(router.serve_with_incoming_shutdown(incoming, signal));
                }
            }
        }
        tracing::info!(
            address = %local_addr,
            functions = ?shared.table(),
            dedicated = ?function_addrs,
            tls = config.tls.is_some() || config.dynamic_tls.is_some(),
            "serving functions"
        );

        let mut stop = shared.shutdown.subscribe();
        let stopped = async move {
            // Dropping the guard here keeps this future `Send`.
            let _ = stop.wait_for(|stop| *stop).await;
        };
        let mut failure = None;
        tokio::select! {
            () = stopped => {}
            Some(joined) = tasks.join_next() => {
                failure = listener_failure(joined);
                handle.shutdown().await;
            }
        }
        let drain = async {
            while let Some(joined) = tasks.join_next().await {
                if let Some(e) = listener_failure(joined) {
                    failure.get_or_insert(e);
                }
            }
        };
        if tokio::time::timeout(config.shutdown_grace, drain)
            .await
            .is_err()
        {
            tracing::warn!(
                grace = ?config.shutdown_grace,
                "calls still in flight after the shutdown grace period; stopping anyway"
            );
        }
        failure.map_or(Ok(()), Err)
    }
}

/// An accepted connection as it is served: its HTTP/2 preface bounded in
/// time, its writes batched while its listener has calls to answer.
fn connection<IO>(stream: IO, open_calls: &OpenCalls) -> BatchedWrites<PrefaceDeadline<IO>> {
    BatchedWrites::new(
        PrefaceDeadline::new(stream, PREFACE_TIMEOUT),
        open_calls.clone(),
    )
}

fn listener_failure(
    joined: Result<Result<(), tonic::transport::Error>, tokio::task::JoinError>,
) -> Option<ServeError> {
    match joined {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(ServeError::Transport(e)),
        Err(e) => Some(ServeError::Listener(e.to_string())),
    }
}

type Router = tonic::transport::server::Router<
    tower::layer::util::Stack<
        RouteLayer,
        tower::layer::util::Stack<OpenCallsLayer, tower::layer::util::Identity>,
    >,
>;

impl ServerConfig {
    /// The services of one listener.
    fn router(
        &self,
        shared: &Arc<Shared>,
        pinned: Option<Arc<str>>,
        open_calls: OpenCalls,
    ) -> Result<Router, ServeError> {
        let builder = tonic::transport::Server::builder()
            .http2_adaptive_window(Some(false))
            .initial_stream_window_size(FLOW_CONTROL_WINDOW)
            .initial_connection_window_size(FLOW_CONTROL_WINDOW)
            .max_concurrent_streams(Some(MAX_STREAMS_PER_CONNECTION));
        let runner = Runner {
            shared: shared.clone(),
        };
        let limit = self.max_recv_message_size;
        let mut router = builder
            .layer(OpenCallsLayer::new(open_calls))
            .layer(RouteLayer::new(pinned))
            .add_service(
                shared
                    .health
                    .service()
                    .max_decoding_message_size(SMALL_REQUEST_LIMIT),
            )
            .add_service(
                v1::function_runner_service_server::FunctionRunnerServiceServer::new(
                    runner.clone(),
                )
                .max_decoding_message_size(limit),
            )
            .add_service(
                v1beta1::function_runner_service_server::FunctionRunnerServiceServer::new(runner)
                    .max_decoding_message_size(limit),
            );
        if self.reflection {
            let reflection = || {
                tonic_reflection::server::Builder::configure()
                    .register_encoded_file_descriptor_set(xfn_proto::FILE_DESCRIPTOR_SET)
                    .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
            };
            let reflection_error =
                |e: tonic_reflection::server::Error| ServeError::Reflection(e.to_string());
            router = router
                .add_service(
                    reflection()
                        .build_v1()
                        .map_err(reflection_error)?
                        .max_decoding_message_size(SMALL_REQUEST_LIMIT),
                )
                .add_service(
                    reflection()
                        .build_v1alpha()
                        .map_err(reflection_error)?
                        .max_decoding_message_size(SMALL_REQUEST_LIMIT),
                );
        }
        Ok(router)
    }
}

impl ServerHandle {
    /// The functions served now.
    pub fn functions(&self) -> Arc<FunctionTable> {
        self.shared.table()
    }

    /// Replaces the functions served. Calls in flight finish on the
    /// functions they started on; new calls see the new set.
    pub async fn reload(&self, functions: FunctionTable) {
        let _one_at_a_time = self.shared.reload.lock().await;
        let new = Arc::new(functions);
        let old = std::mem::replace(
            &mut *self
                .shared
                .table
                .write()
                .unwrap_or_else(PoisonError::into_inner),
            new.clone(),
        );
        self.shared.health.replace(&old, &new).await;
        tracing::info!(functions = ?new, "reloaded functions");
    }

    /// Reports the server as not serving and starts a graceful shutdown:
    /// listeners close, calls in flight finish.
    pub async fn shutdown(&self) {
        if *self.shared.shutdown.borrow() {
            return;
        }
        self.shared.health.shutting_down(&self.shared.table()).await;
        self.shared.shutdown.send_replace(true);
    }
}

/// The function runner service: both protocol versions, every function.
#[derive(Clone)]
struct Runner {
    shared: Arc<Shared>,
}

impl Runner {
    async fn run(
        &self,
        mut request: Request<v1::RunFunctionRequest>,
    ) -> Result<v1::RunFunctionResponse, Status> {
        let open_call = request.extensions_mut().remove::<OpenCall>();
        let info = request
            .extensions_mut()
            .remove::<RouteInfo>()
            .unwrap_or(RouteInfo {
                authority: None,
                pinned: None,
            });
        let timeout = deadline::from_metadata(request.metadata()).map(deadline::for_guest);
        let routed = router::route(
            &self.shared.table(),
            self.shared.namespace.as_deref(),
            &info,
        );
        let (name, function) = match routed {
            Ok(routed) => routed,
            Err(status) => {
                metrics::record_unrouted();
                tracing::warn!(message = status.message(), "unrouted call");
                return Err(status);
            }
        };
        let started = Instant::now();
        let request = request.into_inner();
        let outcome = Self::call(&name, function, request, open_call, timeout, &self.shared).await;
        let result = match &outcome {
            Ok(_) => "ok",
            Err(status) => crate::status::code_label(status.code()),
        };
        metrics::record_call(name, result, started.elapsed());
        outcome
    }

    /// Runs a routed call, from the protobuf request to the protobuf
    /// response.
    async fn call(
        name: &str,
        function: Arc<dyn xfn_runtime::Function>,
        request: v1::RunFunctionRequest,
        open_call: Option<OpenCall>,
        timeout: Option<Duration>,
        shared: &Shared,
    ) -> Result<v1::RunFunctionResponse, Status> {
        let pool = &shared.text_pool;
        let request = convert::request_from_proto_in(request, Some(pool)).map_err(|e| {
            Status::invalid_argument(format!("cannot pass the request to function {name:?}: {e}"))
        })?;

        let started = Instant::now();
        // A call of its own: a panic in it is an error, not a lost connection.
        let run = async move {
            let outcome = function.call(&request, timeout).await;
            (outcome, request)
        };
        // A call that moves to the call threads is no longer about to answer.
        let moved = || open_call.iter().for_each(OpenCall::close);
        let (outcome, request) = shared
            .call_threads
            .run_noting_move(run, moved)
            .await
            .map_err(|e| Status::internal(format!("function {name:?} failed unexpectedly: {e}")))?;
        // Its JSON's buffers, for the next request to be written into.
        convert::recycle_request(request, pool);
        let elapsed = started.elapsed();
        let response = match outcome {
            Ok(response) => response,
            Err(error) => {
                // The error carries the guest's own text: one bounded line.
                let error_text = xfn_runtime::text::for_log(&error.to_string());
                tracing::warn!(function = %name, ?elapsed, "{error_text}");
                return Err(status::to_status(&error));
            }
        };
        tracing::debug!(function = %name, ?elapsed, "call done");
        convert::response_to_proto(response).map_err(|e| {
            Status::internal(format!(
                "function {name:?} returned a response that protobuf can't carry: {e}"
            ))
        })
    }
}

#[tonic::async_trait]
impl v1::function_runner_service_server::FunctionRunnerService for Runner {
    async fn run_function(
        &self,
        request: Request<v1::RunFunctionRequest>,
    ) -> Result<Response<v1::RunFunctionResponse>, Status> {
        self.run(request).await.map(Response::new)
    }
}

#[tonic::async_trait]
impl v1beta1::function_runner_service_server::FunctionRunnerService for Runner {
    async fn run_function(
        &self,
        request: Request<v1beta1::RunFunctionRequest>,
    ) -> Result<Response<v1beta1::RunFunctionResponse>, Status> {
        let (metadata, extensions, message) = request.into_parts();
        let message = v1::RunFunctionRequest::try_from(message)
            .map_err(|e| Status::invalid_argument(format!("cannot read v1beta1 request: {e}")))?;
        let response = self
            .run(Request::from_parts(metadata, extensions, message))
            .await?;
        v1beta1::RunFunctionResponse::try_from(response)
            .map(Response::new)
            .map_err(|e| Status::internal(format!("cannot write v1beta1 response: {e}")))
    }
}
