//! A conventional gRPC function as a pipeline [`Function`].
//!
//! Calls are sent as `apiextensions.fn.proto.v1`; if the function answers
//! `UNIMPLEMENTED` they are sent again as `v1beta1`, as Crossplane does, and
//! this function keeps using v1beta1 from then on; once it has answered v1,
//! requests are no longer copied for a retry. The connection is made
//! on the first call and re-made as needed.

use std::str::FromStr;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use tonic::transport::{Channel, Endpoint, Uri};
use tonic::{Code, Request};
use xfn_proto::json::{v1, v1beta1};

use super::server::DEFAULT_MAX_RECV_MESSAGE_SIZE;
use super::tls::{TlsError, TlsFiles};
use super::{convert, status};
use xfn_runtime::CallError;
use xfn_runtime::Function;
use xfn_runtime::protocol::{RunFunctionRequest, RunFunctionResponse};

/// mTLS settings of a client: its certificate, key and the CA that signed
/// the server's certificate.
#[derive(Debug, Clone)]
pub struct ClientTls {
    /// `tls.crt`, `tls.key` and `ca.crt`.
    pub files: TlsFiles,
    /// The name the server's certificate must carry; by default the
    /// authority's host, else the target's host.
    pub server_name: Option<String>,
}

impl ClientTls {
    /// Reads `tls.crt`, `tls.key` and `ca.crt` from `dir` (Crossplane's
    /// `TLS_CLIENT_CERTS_DIR` layout).
    pub fn from_dir(dir: &std::path::Path) -> Result<ClientTls, TlsError> {
        Ok(ClientTls {
            files: TlsFiles::read_dir(dir)?,
            server_name: None,
        })
    }

    /// Expects the server's certificate to name `name`.
    pub fn with_server_name(mut self, name: impl Into<String>) -> ClientTls {
        self.server_name = Some(name.into());
        self
    }
}

/// How a [`GrpcFunction`] connects.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// mTLS, or plaintext if `None`.
    pub tls: Option<ClientTls>,
    /// The `:authority` to send instead of the target's, e.g.
    /// `function-a.crossplane-system:9443` to reach one function of an
    /// `xfn serve` by address.
    pub authority: Option<String>,
    /// Largest response accepted, in bytes (default 4 MiB).
    pub max_recv_message_size: usize,
    /// How long to wait for a connection (default 10 s).
    pub connect_timeout: Duration,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            tls: None,
            authority: None,
            max_recv_message_size: DEFAULT_MAX_RECV_MESSAGE_SIZE,
            connect_timeout: Duration::from_secs(10),
        }
    }
}

/// Why a client could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The target isn't one this client can dial.
    #[error("function {function:?}: invalid gRPC target {target:?}: {reason}")]
    Target {
        /// The function.
        function: String,
        /// The target.
        target: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The transport could not be configured (e.g. bad TLS material).
    #[error("function {function:?}: cannot configure a connection to {target}: {reason}")]
    Transport {
        /// The function.
        function: String,
        /// The target.
        target: String,
        /// The cause and its own causes (tonic's error names only its
        /// kind; the details are in its sources).
        reason: String,
    },
}

/// A function served over gRPC.
#[derive(Debug)]
pub struct GrpcFunction {
    name: String,
    target: String,
    channel: Channel,
    max_recv_message_size: usize,
    /// The protocol version the function speaks: one of `PROTOCOL_*`.
    protocol: AtomicU8,
}

/// A function at gRPC `target` (`host:port`, `dns:///host:port`,
/// `http://host:port`, `https://host:port`), plaintext unless `tls` is set.
/// Connects lazily, on the first call.
pub async fn connect(
    name: &str,
    target: &str,
    tls: Option<ClientTls>,
) -> Result<GrpcFunction, ClientError> {
    GrpcFunction::new(
        name,
        target,
        ClientOptions {
            tls,
            ..ClientOptions::default()
        },
    )
}

/// A parsed gRPC target.
#[derive(Debug, Clone, PartialEq)]
struct Target {
    /// `host:port`.
    host_port: String,
    /// The host alone (no brackets for IPv6).
    host: String,
    /// `Some(true)` for `https://`, `Some(false)` for `http://`.
    tls: Option<bool>,
}

/// gRPC's default port when a target names none.
const DEFAULT_PORT: u16 = 443;

fn parse_target(target: &str) -> Result<Target, String> {
    let (rest, tls) = if let Some(rest) = target.strip_prefix("https://") {
        (rest, Some(true))
    } else if let Some(rest) = target.strip_prefix("http://") {
        (rest, Some(false))
    } else if let Some(rest) = target.strip_prefix("dns:") {
        // dns:[//resolver/]host[:port]; the resolver is the system's.
        let rest = match rest.strip_prefix("//") {
            Some(with_authority) => with_authority
                .split_once('/')
                .map(|(_, host)| host)
                .ok_or("a dns target needs `dns:///host:port`")?,
            None => rest,
        };
        (rest, None)
    } else if let Some(rest) = target.strip_prefix("passthrough:///") {
        (rest, None)
    } else if target.starts_with("unix:") || target.starts_with("unix-abstract:") {
        return Err("unix socket targets are not supported".into());
    } else {
        (target, None)
    };
    let rest = rest.trim_end_matches('/');
    if rest.is_empty() || rest.contains('/') {
        return Err("expected host:port".into());
    }
    let (host, port) = split_host_port(rest)?;
    let host_port = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    Ok(Target {
        host_port,
        host: host.to_owned(),
        tls,
    })
}

fn split_host_port(s: &str) -> Result<(&str, u16), String> {
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or("unclosed [ in IPv6 address")?;
        (host, after.strip_prefix(':'))
    } else {
        match s.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (s, None),
        }
    };
    if host.is_empty() {
        return Err("missing host".into());
    }
    let port = match port {
        Some(p) => p.parse().map_err(|_| format!("invalid port {p:?}"))?,
        None => DEFAULT_PORT,
    };
    Ok((host, port))
}

/// `error` and each of its sources, joined by `: `.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

impl GrpcFunction {
    /// A function at `target` with `options`. Connects lazily.
    pub fn new(
        name: &str,
        target: &str,
        options: ClientOptions,
    ) -> Result<GrpcFunction, ClientError> {
        let target_error = |reason: String| ClientError::Target {
            function: name.to_owned(),
            target: target.to_owned(),
            reason,
        };
        let transport_error = |error: tonic::transport::Error| ClientError::Transport {
            function: name.to_owned(),
            target: target.to_owned(),
            reason: error_chain(&error),
        };
        let parsed = parse_target(target).map_err(target_error)?;
        match (parsed.tls, options.tls.is_some()) {
            (Some(true), false) => {
                return Err(target_error(
                    "an https target needs client TLS (tls.crt, tls.key, ca.crt)".into(),
                ));
            }
            (Some(false), true) => {
                return Err(target_error(
                    "an http target is plaintext, but client TLS is configured".into(),
                ));
            }
            _ => {}
        }
        let scheme = if options.tls.is_some() {
            "https"
        } else {
            "http"
        };
        let mut endpoint = Endpoint::from_shared(format!("{scheme}://{}", parsed.host_port))
            .map_err(transport_error)?
            .connect_timeout(options.connect_timeout)
            .tcp_nodelay(true)
            .http2_adaptive_window(true);
        let mut authority_host = None;
        if let Some(authority) = &options.authority {
            let origin = Uri::from_str(&format!("{scheme}://{authority}"))
                .map_err(|e| target_error(format!("invalid authority {authority:?}: {e}")))?;
            authority_host = origin.host().map(str::to_owned);
            endpoint = endpoint.origin(origin);
        }
        if let Some(tls) = &options.tls {
            let server_name = tls
                .server_name
                .clone()
                .or(authority_host)
                .unwrap_or_else(|| parsed.host.clone());
            endpoint = endpoint
                .tls_config(tls.files.client_config(&server_name))
                .map_err(transport_error)?;
        }
        Ok(GrpcFunction {
            name: name.to_owned(),
            target: target.to_owned(),
            channel: endpoint.connect_lazy(),
            max_recv_message_size: options.max_recv_message_size,
            protocol: AtomicU8::new(PROTOCOL_UNKNOWN),
        })
    }

    /// A function listening on the Unix socket at `path` (plaintext), such
    /// as a container function's relay. Connects lazily, on the first call,
    /// and again whenever the connection is lost.
    pub fn over_unix_socket(
        name: &str,
        path: &std::path::Path,
        options: ClientOptions,
    ) -> Result<GrpcFunction, ClientError> {
        let target = format!("unix:{}", path.display());
        // The URI is only the `:authority` the server sees; the connector
        // dials the socket whatever it says.
        let endpoint = Endpoint::from_static("http://localhost:9443")
            .connect_timeout(options.connect_timeout)
            .http2_adaptive_window(true);
        let socket = path.to_owned();
        let connector = tower::service_fn(move |_: Uri| {
            let socket = socket.clone();
            async move {
                tokio::net::UnixStream::connect(socket)
                    .await
                    .map(hyper_util::rt::TokioIo::new)
            }
        });
        Ok(GrpcFunction {
            name: name.to_owned(),
            target,
            channel: endpoint.connect_with_connector_lazy(connector),
            max_recv_message_size: options.max_recv_message_size,
            protocol: AtomicU8::new(PROTOCOL_UNKNOWN),
        })
    }

    /// The target this function is dialed at.
    pub fn target(&self) -> &str {
        &self.target
    }

    async fn call_v1(
        &self,
        request: v1::RunFunctionRequest,
        timeout: Option<Duration>,
    ) -> Result<v1::RunFunctionResponse, tonic::Status> {
        let mut client = v1::function_runner_service_client::FunctionRunnerServiceClient::new(
            self.channel.clone(),
        )
        .max_decoding_message_size(self.max_recv_message_size);
        client
            .run_function(with_deadline(request, timeout))
            .await
            .map(tonic::Response::into_inner)
    }

    async fn call_v1beta1(
        &self,
        request: v1::RunFunctionRequest,
        timeout: Option<Duration>,
    ) -> Result<v1::RunFunctionResponse, tonic::Status> {
        let request = v1beta1::RunFunctionRequest::try_from(request)
            .map_err(|e| tonic::Status::internal(format!("cannot encode v1beta1: {e}")))?;
        let mut client = v1beta1::function_runner_service_client::FunctionRunnerServiceClient::new(
            self.channel.clone(),
        )
        .max_decoding_message_size(self.max_recv_message_size);
        let response = client
            .run_function(with_deadline(request, timeout))
            .await?
            .into_inner();
        v1::RunFunctionResponse::try_from(response)
            .map_err(|e| tonic::Status::internal(format!("cannot decode v1beta1: {e}")))
    }

    /// One call, v1 first unless the function is known to speak only v1beta1.
    async fn call_proto(
        &self,
        request: v1::RunFunctionRequest,
        timeout: Option<Duration>,
    ) -> Result<v1::RunFunctionResponse, tonic::Status> {
        match self.protocol.load(Ordering::Relaxed) {
            PROTOCOL_V1BETA1 => return self.call_v1beta1(request, timeout).await,
            PROTOCOL_V1 => return self.call_v1(request, timeout).await,
            _ => {}
        }
        // Until the function has answered v1, keep a copy for v1beta1
        // (its Structs are JSON: cloning doesn't recurse).
        let copy = request.clone();
        let outcome = self.call_v1(copy, timeout).await;
        if let Err(status) = &outcome
            && status.code() == Code::Unimplemented
        {
            tracing::debug!(function = %self.name, "v1 is unimplemented; using v1beta1");
            self.protocol.store(PROTOCOL_V1BETA1, Ordering::Relaxed);
            return self.call_v1beta1(request, timeout).await;
        }
        if outcome.is_ok() {
            self.protocol.store(PROTOCOL_V1, Ordering::Relaxed);
        }
        outcome
    }
}

/// Which protocol version a function speaks, as far as calls have shown.
const PROTOCOL_UNKNOWN: u8 = 0;
const PROTOCOL_V1: u8 = 1;
const PROTOCOL_V1BETA1: u8 = 2;

fn with_deadline<T>(message: T, timeout: Option<Duration>) -> Request<T> {
    let mut request = Request::new(message);
    if let Some(t) = timeout {
        request.set_timeout(t);
    }
    request
}

#[async_trait::async_trait]
impl Function for GrpcFunction {
    fn name(&self) -> &str {
        &self.name
    }

    async fn call(
        &self,
        request: &RunFunctionRequest,
        timeout: Option<Duration>,
    ) -> Result<RunFunctionResponse, CallError> {
        let request =
            convert::request_to_proto(request.clone()).map_err(|e| CallError::Failed {
                function: self.name.clone(),
                message: format!(
                    "cannot encode the request for gRPC target {}: {e}",
                    self.target
                ),
            })?;
        let call = self.call_proto(request, timeout);
        let outcome = match timeout {
            // The server is told the deadline; this also bounds connecting.
            Some(limit) => tokio::time::timeout(limit, call)
                .await
                .unwrap_or_else(|_| Err(tonic::Status::deadline_exceeded("client deadline"))),
            None => call.await,
        };
        let response =
            outcome.map_err(|s| status::from_status(&s, &self.name, &self.target, timeout))?;
        convert::response_from_proto(response).map_err(|e| CallError::Malformed {
            function: self.name.clone(),
            reason: format!("from gRPC target {}: {e}", self.target),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(target: &str) -> Result<(String, String, Option<bool>), String> {
        parse_target(target).map(|t| (t.host_port, t.host, t.tls))
    }

    #[test]
    fn parses_grpc_target_syntax() {
        let plain = |hp: &str, h: &str| Ok((hp.to_owned(), h.to_owned(), None));
        assert_eq!(
            parsed("localhost:9443"),
            plain("localhost:9443", "localhost")
        );
        assert_eq!(
            parsed("dns:///function-a.crossplane-system:9443"),
            plain(
                "function-a.crossplane-system:9443",
                "function-a.crossplane-system"
            )
        );
        assert_eq!(
            parsed("dns://8.8.8.8/example.org:7443"),
            plain("example.org:7443", "example.org")
        );
        assert_eq!(
            parsed("dns:example.org"),
            plain("example.org:443", "example.org")
        );
        assert_eq!(parsed("[::1]:9443"), plain("[::1]:9443", "::1"));
        assert_eq!(
            parsed("http://127.0.0.1:1234"),
            Ok(("127.0.0.1:1234".into(), "127.0.0.1".into(), Some(false)))
        );
        assert_eq!(
            parsed("https://fn.example:1/"),
            Ok(("fn.example:1".into(), "fn.example".into(), Some(true)))
        );
    }

    #[test]
    fn refuses_bad_targets() {
        for bad in [
            "",
            "unix:///tmp/sock",
            "host:port",
            "dns://resolver",
            "http://h:1/path",
            "[::1",
            ":9443",
        ] {
            assert!(parse_target(bad).is_err(), "{bad:?}");
        }
    }

    #[tokio::test]
    async fn an_https_target_needs_tls() {
        let err = connect("f", "https://localhost:1", None).await.err();
        assert!(
            err.is_some_and(|e| e.to_string().contains("needs client TLS")),
            "https without TLS is refused"
        );
    }

    #[tokio::test]
    async fn an_unreachable_target_is_unavailable_and_named() {
        // A port that was free a moment ago: nothing listens on it.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let target = format!("127.0.0.1:{port}");
        let f = connect("fn-x", &target, None).await.expect("lazy");
        let err = f
            .call(&RunFunctionRequest::default(), Some(Duration::from_secs(5)))
            .await
            .expect_err("nothing listens");
        match &err {
            CallError::Unavailable { function, message } => {
                assert_eq!(function, "fn-x");
                assert!(message.contains(&target), "{message}");
            }
            other => panic!("want Unavailable, got {other}"),
        }
    }
}
