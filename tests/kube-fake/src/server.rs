//! Serving the fake over plain HTTP/1.1 on a loopback address.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::task::{JoinHandle, JoinSet};

use crate::Shared;
use crate::service::handle;

/// Connections served at once; further ones are closed right away.
const MAX_CONNECTIONS: usize = 1024;

/// A running HTTP listener. Dropping it, or calling [`ServeHandle::shutdown`], stops the listener and
/// closes every connection it accepted.
#[derive(Debug)]
pub struct ServeHandle {
    addr: SocketAddr,
    task: Option<JoinHandle<()>>,
}

impl ServeHandle {
    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR`, usable as a kube `Config` cluster URL.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops the listener and waits until it and its connections are gone.
    pub async fn shutdown(mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            let _ = task.await;
        }
    }
}

impl Drop for ServeHandle {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// Binds `addr` and serves `shared` on it.
pub(crate) async fn serve(
    shared: Arc<Shared>,
    addr: SocketAddr,
) -> std::io::Result<(SocketAddr, ServeHandle)> {
    let listener = TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let task = tokio::spawn(accept_loop(listener, shared));
    Ok((
        bound,
        ServeHandle {
            addr: bound,
            task: Some(task),
        },
    ))
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut shutdown = shared.shutdown.subscribe();
    // Dropping the set when this task ends or is aborted aborts every connection.
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    if conns.len() >= MAX_CONNECTIONS {
                        drop(stream);
                        continue;
                    }
                    let shared = shared.clone();
                    conns.spawn(async move {
                        let svc = hyper::service::service_fn(move |req| {
                            let shared = shared.clone();
                            async move { Ok::<_, Infallible>(handle(shared, req).await) }
                        });
                        let _ = http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), svc)
                            .await;
                    });
                }
                // E.g. too many open files: back off briefly.
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            },
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
            _ = async { shutdown.wait_for(|down| *down).await.map(|_| ()) } => break,
        }
    }
}
