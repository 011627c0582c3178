//! A hostile registry on loopback: answers `/v2/` like an anonymous
//! registry (or one that wants a bearer token from its own `/token`), then
//! misbehaves on manifests or tokens. It serves a bounded number of
//! connections for a bounded time and stops by itself.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How a hostile registry answers a manifest or token request.
#[derive(Debug, Clone, Copy)]
pub enum Misbehaviour {
    /// A chunked body that never ends (zeros, until the client hangs up or
    /// `cap` bytes were sent).
    EndlessManifest { cap: usize },
    /// A manifest sent one byte every `every`, up to `bytes` bytes.
    Drip { every: Duration, bytes: usize },
    /// `/v2/` asks for a bearer token from `/token`, which answers with a
    /// token that never ends (up to `cap` bytes).
    EndlessToken { cap: usize },
    /// `/v2/` asks for a bearer token from `/token`, which answers with
    /// [`GOOD_TOKEN`]; a manifest request that carries it is answered
    /// 404 MANIFEST_UNKNOWN, one that doesn't 401.
    TokenAuth,
}

/// The token [`Misbehaviour::TokenAuth`] hands out.
pub const GOOD_TOKEN: &str = "xfn-test-token";

/// A running hostile registry.
pub struct Hostile {
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// How many bytes of manifest body it managed to send, all told.
    pub sent: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

/// How long a hostile registry lives at most.
const LIFETIME: Duration = Duration::from_secs(60);

impl Hostile {
    /// Starts a registry that misbehaves as `how`.
    pub async fn start(how: Misbehaviour) -> Hostile {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address").to_string();
        let sent = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = sent.clone();
        tokio::spawn(async move {
            let serve = async {
                for _ in 0..32 {
                    let Ok((stream, _)) = listener.accept().await else {
                        return;
                    };
                    tokio::spawn(answer(stream, how, counter.clone()));
                }
            };
            let _ = tokio::time::timeout(LIFETIME, serve).await;
        });
        Hostile { addr, sent }
    }

    /// `<addr>/<repo_tag>`.
    pub fn reference(&self, repo_tag: &str) -> String {
        format!("{}/{repo_tag}", self.addr)
    }
}

async fn answer(
    mut stream: TcpStream,
    how: Misbehaviour,
    sent: std::sync::Arc<std::sync::atomic::AtomicUsize>,
) {
    let _ = tokio::time::timeout(LIFETIME, async {
        let Some((path, head)) = read_request(&mut stream).await else {
            return;
        };
        let add = |n: usize| sent.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        let wants_token = matches!(
            how,
            Misbehaviour::EndlessToken { .. } | Misbehaviour::TokenAuth
        );
        if path == "/v2/" && wants_token {
            let addr = stream.local_addr().map(|a| a.to_string()).unwrap_or_default();
            let reply = format!(
                "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer realm=\"http://{addr}/token\",\
                 service=\"hostile\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            let _ = stream.write_all(reply.as_bytes()).await;
            return;
        }
        if path.starts_with("/token") {
            match how {
                Misbehaviour::EndlessToken { cap } => {
                    endless(&mut stream, "application/json", cap, add).await;
                }
                _ => {
                    let body = format!("{{\"token\":\"{GOOD_TOKEN}\"}}");
                    let reply = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
                         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = stream.write_all(reply.as_bytes()).await;
                }
            }
            return;
        }
        if !path.contains("/manifests/") {
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                .await;
            return;
        }
        match how {
            Misbehaviour::EndlessManifest { cap } => {
                endless(
                    &mut stream,
                    "application/vnd.oci.image.manifest.v1+json",
                    cap,
                    add,
                )
                .await;
            }
            Misbehaviour::Drip { every, bytes } => {
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.oci.image.manifest.v1+json\r\n\
                     Content-Length: {bytes}\r\nConnection: close\r\n\r\n"
                );
                if stream.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                for _ in 0..bytes {
                    tokio::time::sleep(every).await;
                    if stream.write_all(b" ").await.is_err() {
                        return;
                    }
                    add(1);
                }
            }
            Misbehaviour::TokenAuth | Misbehaviour::EndlessToken { .. } => {
                let bearer = format!("authorization: bearer {}", GOOD_TOKEN.to_lowercase());
                let reply = if head.to_lowercase().contains(&bearer) {
                    let body = r#"{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}"#;
                    format!(
                        "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n\
                         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    )
                } else {
                    String::from(
                        "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    )
                };
                let _ = stream.write_all(reply.as_bytes()).await;
            }
        }
    })
    .await;
}

/// Sends a chunked `content_type` body that never ends, until the client
/// hangs up or `cap` bytes were sent, counting them with `add`.
async fn endless(
    stream: &mut TcpStream,
    content_type: &str,
    cap: usize,
    add: impl Fn(usize) -> usize,
) {
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\n\
         Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    if stream.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    let chunk = vec![b' '; 64 << 10];
    let framed = [format!("{:x}\r\n", chunk.len()).as_bytes(), &chunk, b"\r\n"].concat();
    let mut total = 0;
    while total < cap {
        if stream.write_all(&framed).await.is_err() {
            return;
        }
        total += chunk.len();
        add(chunk.len());
    }
}

/// Reads a request head; returns its path and the whole head.
async fn read_request(stream: &mut TcpStream) -> Option<(String, String)> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 16 << 10 {
        if stream.read(&mut byte).await.ok()? == 0 {
            return None;
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let path = head.lines().next()?.split_whitespace().nth(1)?.to_owned();
    Some((path, head))
}
