//! The relay: render's connections on a Unix socket, copied to and from
//! the function's TCP port inside its network namespace.
//!
//! It runs on a single-threaded tokio runtime: a process that has made a
//! PID namespace can't start threads.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::net::{TcpStream, UnixListener};

/// Connections relayed at once; render makes one per function.
const MAX_CONNECTIONS: usize = 32;

/// How long connecting to the function may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Accepts connections on `listener` and relays each to `target`, until
/// the process exits.
pub async fn serve(listener: UnixListener, target: SocketAddr) {
    let open = Arc::new(AtomicUsize::new(0));
    loop {
        let Ok((mut client, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        if open.load(Ordering::Relaxed) >= MAX_CONNECTIONS {
            continue;
        }
        open.fetch_add(1, Ordering::Relaxed);
        let done = Arc::clone(&open);
        tokio::spawn(async move {
            if let Ok(Ok(mut upstream)) =
                tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(target)).await
            {
                let _ = upstream.set_nodelay(true);
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            }
            done.fetch_sub(1, Ordering::Relaxed);
        });
    }
}
