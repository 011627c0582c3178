//! A bound on how long a new connection may take to start speaking HTTP/2.
//!
//! hyper waits for a client's HTTP/2 preface without a deadline, so a
//! client that connects and sends nothing (or a byte now and then) holds a
//! connection and its file descriptor for ever. [`PrefaceDeadline`] fails
//! the connection's reads once its deadline passes before the preface has
//! arrived; after that it adds nothing.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// Longest a client may take from connecting (or finishing its TLS
/// handshake) to sending the whole HTTP/2 preface.
pub const PREFACE_TIMEOUT: Duration = Duration::from_secs(10);

/// Bytes of the HTTP/2 client preface (`PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`).
const PREFACE_LEN: usize = 24;

/// A connection whose first [`PREFACE_LEN`] bytes must arrive before a
/// deadline.
#[derive(Debug)]
pub struct PrefaceDeadline<IO> {
    inner: IO,
    /// Bytes read so far, up to the preface's length.
    read: usize,
    /// `None` once the preface has arrived.
    deadline: Option<Pin<Box<Sleep>>>,
}

impl<IO> PrefaceDeadline<IO> {
    /// `inner`, whose preface must arrive within `timeout` from now.
    pub fn new(inner: IO, timeout: Duration) -> PrefaceDeadline<IO> {
        PrefaceDeadline {
            inner,
            read: 0,
            deadline: Some(Box::pin(tokio::time::sleep_until(Instant::now() + timeout))),
        }
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for PrefaceDeadline<IO> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        let Some(deadline) = &mut this.deadline else {
            return polled;
        };
        if let Poll::Ready(Ok(())) = polled {
            this.read += buf.filled().len() - before;
            if this.read >= PREFACE_LEN {
                this.deadline = None;
            }
            return polled;
        }
        if polled.is_pending() && deadline.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client did not send the HTTP/2 preface in time",
            )));
        }
        polled
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for PrefaceDeadline<IO> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

super::connected_as_inner!(PrefaceDeadline);

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    #[tokio::test]
    async fn a_silent_client_is_cut_off_and_a_prompt_one_is_not() {
        let (client, server) = tokio::io::duplex(64);
        let mut server = PrefaceDeadline::new(server, Duration::from_millis(50));
        let mut buf = [0u8; 64];
        let err = server.read(&mut buf).await.expect_err("times out");
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        drop(client);

        let (mut client, server) = tokio::io::duplex(64);
        let mut server = PrefaceDeadline::new(server, Duration::from_millis(50));
        client.write_all(&[b'P'; PREFACE_LEN]).await.unwrap();
        let mut preface = [0u8; PREFACE_LEN];
        server.read_exact(&mut preface).await.unwrap();
        // Once the preface is in, a connection may idle for as long as it likes.
        tokio::time::sleep(Duration::from_millis(200)).await;
        client.write_all(b"later").await.unwrap();
        let n = server.read(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"later");
    }
}
