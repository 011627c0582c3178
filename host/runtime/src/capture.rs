//! A guest's stderr, captured for error messages: the last bytes it wrote,
//! up to a bound. Writing past the bound never fails the guest (wasmtime's
//! own memory pipe traps then); the oldest bytes are dropped and counted.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use bytes::Bytes;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

/// How much a guest may write at once: anything, as the capture keeps up.
const WRITE_PERMIT: usize = 64 << 10;

/// The tail of a stream, at most `capacity` bytes of it. Clones share it.
#[derive(Debug, Clone)]
pub struct TailCapture {
    inner: Arc<Mutex<Tail>>,
}

#[derive(Debug)]
struct Tail {
    kept: VecDeque<u8>,
    capacity: usize,
    dropped: u64,
}

impl TailCapture {
    /// An empty capture that keeps the last `capacity` bytes written.
    pub fn new(capacity: usize) -> TailCapture {
        TailCapture {
            inner: Arc::new(Mutex::new(Tail {
                kept: VecDeque::new(),
                capacity,
                dropped: 0,
            })),
        }
    }

    fn push(&self, bytes: &[u8]) {
        let mut tail = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let capacity = tail.capacity;
        let bytes = if bytes.len() > capacity {
            let skip = bytes.len() - capacity;
            tail.dropped += skip as u64;
            &bytes[skip..]
        } else {
            bytes
        };
        tail.kept.extend(bytes);
        let excess = tail.kept.len().saturating_sub(capacity);
        if excess > 0 {
            tail.kept.drain(..excess);
            tail.dropped += excess as u64;
        }
    }

    /// The bytes kept, and how many written before them were dropped.
    pub fn contents(&self) -> (Vec<u8>, u64) {
        let tail = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        (tail.kept.iter().copied().collect(), tail.dropped)
    }
}

#[async_trait::async_trait]
impl Pollable for TailCapture {
    async fn ready(&mut self) {}
}

#[async_trait::async_trait]
impl OutputStream for TailCapture {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.push(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(WRITE_PERMIT)
    }
}

impl tokio::io::AsyncWrite for TailCapture {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.push(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl IsTerminal for TailCapture {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for TailCapture {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_bytes_and_counts_the_rest() {
        let capture = TailCapture::new(4);
        let mut stream = capture.p2_stream();
        stream.write(Bytes::from_static(b"abc")).unwrap();
        assert_eq!(capture.contents(), (b"abc".to_vec(), 0));
        stream.write(Bytes::from_static(b"def")).unwrap();
        assert_eq!(capture.contents(), (b"cdef".to_vec(), 2));
        stream.write(Bytes::from_static(b"0123456789")).unwrap();
        assert_eq!(capture.contents(), (b"6789".to_vec(), 12));
        assert_eq!(stream.check_write().unwrap(), WRITE_PERMIT);
    }
}
