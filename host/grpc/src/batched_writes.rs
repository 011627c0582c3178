//! Responses of calls that finish together go out in one write.
//!
//! A connection's task writes each time a call's response is ready, and
//! tokio runs a task woken from a worker next, ahead of the calls already
//! waiting there; h2 also wrote each response's DATA frame apart from its
//! trailers. So each response took one or two system calls, and the
//! server, the kernel's loopback path and the client each paid for them,
//! where grpc-go sends about ten responses in one write under load.
//!
//! [`BatchedWrites`] keeps what the connection writes, up to
//! [`BATCH_BYTES`], and sends it when h2 flushes. While other calls of the
//! listener are still to answer ([`OpenCalls`]), the first flush of a batch
//! steps aside instead: it wakes the connection's task, which puts it at
//! the back of its worker's queue, behind the calls that are ready to run,
//! and reports the flush done. When the task is polled again, the
//! responses those calls produced meanwhile join the batch, and the next
//! flush sends it all. Requests read but whose calls have not started yet
//! count too ([`OpenStreams`]): under load they are most of what is to
//! come. With no other call open nothing waits: a lone call's response
//! goes out in the flush that wrote it.
//!
//! h2 polls a connection's reads before its writes every time its task
//! runs, so a read marks the task's next poll; a flush in the same poll as
//! the step aside leaves the batch for that next poll.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::open_calls::OpenCalls;
use super::open_streams::OpenStreams;

/// Most bytes a batch holds; a write that would overflow it sends the batch
/// first.
pub const BATCH_BYTES: usize = 64 << 10;

/// Writes at least this large are not copied: they go out at once, in one
/// system call with the batch before them.
pub const COPY_LIMIT: usize = 4 << 10;

/// A connection whose writes are kept and sent together, after the other
/// ready tasks had a turn.
#[derive(Debug)]
pub struct BatchedWrites<IO> {
    inner: IO,
    /// What was written and not yet sent, from `sent` on.
    batch: Vec<u8>,
    sent: usize,
    /// Where the batch's flush stands.
    flush: Flush,
    /// The calls of this connection's listener still to answer.
    open_calls: OpenCalls,
    /// This connection's requests still to answer, counted from the frames
    /// read, before their calls start.
    streams: OpenStreams,
}

/// Where a batch's flush stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flush {
    /// No flush asked for since the batch began.
    NotAsked,
    /// The task stepped aside: flushes wait for its next poll.
    SteppedAside,
    /// The task has been polled again: the next flush sends the batch.
    Due,
}

impl<IO> BatchedWrites<IO> {
    /// `inner`, with its writes batched while `open_calls` has calls.
    pub fn new(inner: IO, open_calls: OpenCalls) -> BatchedWrites<IO> {
        BatchedWrites {
            inner,
            batch: Vec::new(),
            sent: 0,
            flush: Flush::NotAsked,
            open_calls,
            streams: OpenStreams::default(),
        }
    }

    fn pending(&self) -> usize {
        self.batch.len() - self.sent
    }
}

impl<IO: AsyncWrite + Unpin> BatchedWrites<IO> {
    /// Sends the whole batch.
    fn poll_send(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.pending() > 0 {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.batch[self.sent..]))?;
            self.advance(n)?;
        }
        Poll::Ready(Ok(()))
    }

    /// Writes `buf`, which is too large to copy, in one system call with
    /// what the batch holds before it.
    fn poll_send_with(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        while self.pending() > 0 {
            let pending = self.pending();
            let both = [
                io::IoSlice::new(&self.batch[self.sent..]),
                io::IoSlice::new(buf),
            ];
            let n = ready!(Pin::new(&mut self.inner).poll_write_vectored(cx, &both))?;
            self.advance(n.min(pending))?;
            if n > pending {
                return Poll::Ready(Ok(n - pending));
            }
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    /// Marks `n` more bytes of the batch sent; once all are, the batch
    /// starts again, empty.
    fn advance(&mut self, n: usize) -> io::Result<()> {
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        self.sent += n;
        if self.pending() == 0 {
            self.batch.clear();
            if self.batch.capacity() > BATCH_BYTES {
                self.batch.shrink_to(BATCH_BYTES);
            }
            self.sent = 0;
            self.flush = Flush::NotAsked;
        }
        Ok(())
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for BatchedWrites<IO> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.flush == Flush::SteppedAside {
            this.flush = Flush::Due;
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        this.streams.read(&buf.filled()[before..]);
        Poll::Ready(Ok(()))
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for BatchedWrites<IO> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if buf.len() >= COPY_LIMIT {
            let n = ready!(this.poll_send_with(cx, buf))?;
            this.streams.wrote(&buf[..n]);
            return Poll::Ready(Ok(n));
        }
        if this.pending() + buf.len() > BATCH_BYTES {
            ready!(this.poll_send(cx))?;
        }
        this.batch.extend_from_slice(buf);
        this.streams.wrote(buf);
        Poll::Ready(Ok(buf.len()))
    }

    /// Not vectored, so that h2 copies a DATA frame of up to 1 KiB into its
    /// own buffer rather than writing it apart, and a small response's
    /// frames arrive in one flush.
    fn is_write_vectored(&self) -> bool {
        false
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.pending() > 0 {
            match this.flush {
                // Reported done, with the task woken to finish it: a wake in
                // the poll that woke it already is free, and one in a later
                // poll that did not read keeps the batch from waiting for
                // the peer.
                Flush::NotAsked | Flush::SteppedAside
                    if this.open_calls.any() || this.streams.open() > 0 =>
                {
                    this.flush = Flush::SteppedAside;
                    cx.waker().wake_by_ref();
                    return Poll::Ready(Ok(()));
                }
                _ => ready!(this.poll_send(cx))?,
            }
        }
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_send(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

super::connected_as_inner!(BatchedWrites);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::open_calls::OpenCall;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Wake, Waker};

    /// A peer that records each write it is given, as a system call would
    /// see it, and has `incoming` to read.
    #[derive(Default)]
    struct Recorder {
        writes: Vec<Vec<u8>>,
        incoming: Vec<u8>,
        shut: bool,
    }

    impl AsyncWrite for Recorder {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            self.get_mut().writes.push(buf.to_vec());
            Poll::Ready(Ok(buf.len()))
        }

        fn poll_write_vectored(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            bufs: &[io::IoSlice<'_>],
        ) -> Poll<io::Result<usize>> {
            let write: Vec<u8> = bufs.iter().flat_map(|b| b.iter().copied()).collect();
            let n = write.len();
            self.get_mut().writes.push(write);
            Poll::Ready(Ok(n))
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            self.get_mut().shut = true;
            Poll::Ready(Ok(()))
        }
    }

    impl AsyncRead for Recorder {
        fn poll_read(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            let this = self.get_mut();
            if this.incoming.is_empty() {
                return Poll::Pending;
            }
            let n = this.incoming.len().min(buf.remaining());
            buf.put_slice(&this.incoming[..n]);
            this.incoming.drain(..n);
            Poll::Ready(Ok(()))
        }
    }

    /// Counts its wake-ups.
    #[derive(Default)]
    struct Wakes(AtomicUsize);

    impl Wake for Wakes {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// A connection over a [`Recorder`], driven by hand as a task would.
    struct Driver {
        io: BatchedWrites<Recorder>,
        wakes: Arc<Wakes>,
        waker: Waker,
    }

    impl Driver {
        fn new(open_calls: OpenCalls) -> Driver {
            let wakes = Arc::new(Wakes::default());
            Driver {
                io: BatchedWrites::new(Recorder::default(), open_calls),
                waker: Waker::from(wakes.clone()),
                wakes,
            }
        }

        /// A connection whose listener has another call open, until the
        /// returned guard is dropped.
        fn beside_an_open_call() -> (Driver, OpenCall) {
            let open = OpenCalls::default();
            let call = open.open();
            (Driver::new(open), call)
        }

        fn write(&mut self, bytes: &[u8]) {
            let mut cx = Context::from_waker(&self.waker);
            let written = Pin::new(&mut self.io).poll_write(&mut cx, bytes);
            assert!(matches!(written, Poll::Ready(Ok(n)) if n == bytes.len()));
        }

        fn flush(&mut self) {
            let mut cx = Context::from_waker(&self.waker);
            let flushed = Pin::new(&mut self.io).poll_flush(&mut cx);
            assert!(matches!(flushed, Poll::Ready(Ok(()))));
        }

        /// What h2 does first each time its task is polled: read.
        fn read(&mut self) {
            let mut cx = Context::from_waker(&self.waker);
            let mut buf = [0u8; 16];
            let _ = Pin::new(&mut self.io).poll_read(&mut cx, &mut ReadBuf::new(&mut buf));
        }

        fn sent(&self) -> &[Vec<u8>] {
            &self.io.inner.writes
        }

        fn wakes(&self) -> usize {
            self.wakes.0.load(Ordering::SeqCst)
        }
    }

    #[test]
    fn with_no_other_call_open_a_flush_sends_its_writes_at_once_in_one_write() {
        let mut conn = Driver::new(OpenCalls::default());
        conn.write(b"headers");
        conn.write(b"data");
        assert!(conn.sent().is_empty(), "writes wait for the flush");
        conn.flush();
        assert_eq!(conn.sent(), [b"headersdata".to_vec()]);
        conn.write(b"trailers");
        conn.flush();
        assert_eq!(conn.sent().len(), 2);
        assert_eq!(conn.sent()[1], b"trailers");
        assert_eq!(conn.wakes(), 0, "nothing stepped aside");
    }

    #[test]
    fn while_other_calls_are_open_a_flush_waits_for_the_tasks_next_poll() {
        let (mut conn, call) = Driver::beside_an_open_call();
        // This poll: a response, flushed; the task steps aside.
        conn.read();
        conn.write(b"one");
        conn.flush();
        assert!(conn.sent().is_empty(), "the first flush steps aside");
        assert_eq!(conn.wakes(), 1, "the task is woken to finish the flush");
        // Still the same poll: h2 flushes again after a chained frame.
        conn.write(b"two");
        conn.flush();
        assert!(conn.sent().is_empty(), "nothing goes out in the same poll");
        // The next poll, once the other calls had their turn: one write.
        conn.read();
        conn.write(b"three");
        conn.flush();
        assert_eq!(conn.sent(), [b"onetwothree".to_vec()]);
        // A new batch steps aside again while a call is open...
        conn.write(b"four");
        conn.flush();
        assert_eq!(conn.sent().len(), 1);
        // ... and goes out at once when the last one is answered.
        drop(call);
        conn.flush();
        assert_eq!(conn.sent()[1], b"four");
    }

    #[test]
    fn a_poll_that_does_not_read_still_gets_the_batch_out_by_waking_again() {
        let (mut conn, _call) = Driver::beside_an_open_call();
        conn.write(b"one");
        conn.flush();
        conn.flush();
        assert_eq!(conn.wakes(), 2, "each deferred flush wakes the task");
        assert!(conn.sent().is_empty());
        conn.read();
        conn.flush();
        assert_eq!(conn.sent(), [b"one".to_vec()]);
    }

    #[test]
    fn a_large_write_goes_out_at_once_with_the_batch_before_it_in_order() {
        let (mut conn, _call) = Driver::beside_an_open_call();
        conn.write(b"head");
        let payload = vec![7u8; COPY_LIMIT];
        conn.write(&payload);
        let mut expected = b"head".to_vec();
        expected.extend_from_slice(&payload);
        assert_eq!(
            conn.sent(),
            [expected],
            "one write, not copied into the batch"
        );
        conn.write(b"tail");
        conn.flush();
        assert!(
            conn.sent().len() == 1,
            "the batch starts again, stepping aside"
        );
    }

    #[test]
    fn a_batch_never_holds_more_than_its_bound() {
        let (mut conn, _call) = Driver::beside_an_open_call();
        let chunk = vec![1u8; COPY_LIMIT - 1];
        let mut written = 0;
        while written + chunk.len() <= BATCH_BYTES {
            conn.write(&chunk);
            written += chunk.len();
        }
        assert!(conn.sent().is_empty());
        conn.write(&chunk);
        assert_eq!(conn.sent().len(), 1, "the full batch went out first");
        assert_eq!(conn.sent()[0].len(), written);
        assert!(conn.io.batch.len() <= BATCH_BYTES);
    }

    #[test]
    fn shutting_down_sends_what_waits_first() {
        let (mut conn, _call) = Driver::beside_an_open_call();
        conn.write(b"goaway");
        conn.flush();
        assert!(conn.sent().is_empty());
        let mut cx = Context::from_waker(&conn.waker);
        let shut = Pin::new(&mut conn.io).poll_shutdown(&mut cx);
        assert!(matches!(shut, Poll::Ready(Ok(()))));
        assert_eq!(conn.sent(), [b"goaway".to_vec()]);
        assert!(conn.io.inner.shut);
    }
}
