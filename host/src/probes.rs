//! The pod's HTTP endpoint for Kubernetes and Prometheus: `/healthz` (the
//! process answers), `/readyz` (the functions present at start are loaded,
//! so the pod may join its Services) and `/metrics` (see
//! [`metrics`](xfn_runtime::metrics)).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use http::{Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// Longest a probe request may take, headers included.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// Serves the probes and metrics on `listener` until `stop` turns true.
pub async fn serve(
    listener: TcpListener,
    ready: watch::Receiver<bool>,
    mut stop: watch::Receiver<bool>,
) {
    let stopped = async move {
        // An error means the sender is gone: stop too.
        let _ = stop.wait_for(|s| *s).await;
    };
    tokio::pin!(stopped);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!("probe listener: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut stopped => return,
        };
        let ready = ready.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                let ready = *ready.borrow();
                async move { Ok::<_, Infallible>(answer(request.uri().path(), ready)) }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .header_read_timeout(REQUEST_TIMEOUT)
                .timer(hyper_util::rt::TokioTimer::new())
                .serve_connection(TokioIo::new(stream), service);
            let _ = tokio::time::timeout(REQUEST_TIMEOUT * 2, connection).await;
        });
    }
}

fn answer(path: &str, ready: bool) -> Response<Full<Bytes>> {
    let (status, content_type, body) = match path {
        "/healthz" => (StatusCode::OK, TEXT, Bytes::from_static(b"ok\n")),
        "/readyz" if ready => (StatusCode::OK, TEXT, Bytes::from_static(b"ready\n")),
        "/readyz" => (
            StatusCode::SERVICE_UNAVAILABLE,
            TEXT,
            Bytes::from_static(b"loading functions\n"),
        ),
        "/metrics" => (
            StatusCode::OK,
            xfn_runtime::metrics::CONTENT_TYPE,
            Bytes::from(xfn_runtime::metrics::render()),
        ),
        _ => (
            StatusCode::NOT_FOUND,
            TEXT,
            Bytes::from_static(b"not found\n"),
        ),
    };
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(content_type),
    );
    response
}

const TEXT: &str = "text/plain; charset=utf-8";

/// Binds the probe address.
pub async fn bind(address: SocketAddr) -> std::io::Result<TcpListener> {
    TcpListener::bind(address).await
}
