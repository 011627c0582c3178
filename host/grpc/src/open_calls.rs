//! How many calls a listener has accepted and is about to answer.
//!
//! hyper hands each request to the service stack on its connection's task
//! as the request arrives, and spawns the call's future. [`OpenCallsLayer`]
//! counts a call from then until its future ends (answered, failed or
//! dropped), or until the server closes it early through the [`OpenCall`]
//! in the request's extensions: a call that moves to the call threads (it
//! waited for a slot, or its guest computes on) may take until its
//! deadline, so it is no longer about to answer. While a connection writes
//! a response, [`OpenCalls`] tells whether other calls will answer on the
//! connections' threads before long: then
//! [`BatchedWrites`](super::batched_writes::BatchedWrites) waits for them,
//! and a function looping to its deadline does not make other responses
//! wait a turn.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};

/// The count of calls accepted and about to answer, shared by a listener's
/// service stack and its connections.
#[derive(Debug, Clone, Default)]
pub struct OpenCalls(Arc<AtomicUsize>);

impl OpenCalls {
    /// Whether any call is open.
    pub fn any(&self) -> bool {
        self.0.load(Ordering::Relaxed) > 0
    }

    /// Counts a call until it is closed, or every clone of the returned
    /// handle is dropped.
    pub(super) fn open(&self) -> OpenCall {
        self.0.fetch_add(1, Ordering::Relaxed);
        OpenCall(Arc::new(Counting {
            calls: self.clone(),
            closed: AtomicBool::new(false),
        }))
    }
}

/// One open call, in the count until [`OpenCall::close`] or until its last
/// handle is dropped.
#[derive(Debug, Clone)]
pub(super) struct OpenCall(Arc<Counting>);

#[derive(Debug)]
struct Counting {
    calls: OpenCalls,
    closed: AtomicBool,
}

impl OpenCall {
    /// Takes the call out of the count (once, however often it is called).
    pub fn close(&self) {
        self.0.close();
    }
}

impl Counting {
    fn close(&self) {
        if !self.closed.swap(true, Ordering::Relaxed) {
            self.calls.0.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Drop for Counting {
    fn drop(&mut self) {
        self.close();
    }
}

/// A tower layer that counts its service's calls in [`OpenCalls`].
#[derive(Debug, Clone)]
pub struct OpenCallsLayer(OpenCalls);

impl OpenCallsLayer {
    /// Counts calls in `open`.
    pub fn new(open: OpenCalls) -> OpenCallsLayer {
        OpenCallsLayer(open)
    }
}

impl<S> tower::Layer<S> for OpenCallsLayer {
    type Service = OpenCallsService<S>;

    fn layer(&self, inner: S) -> OpenCallsService<S> {
        OpenCallsService {
            inner,
            open: self.0.clone(),
        }
    }
}

/// The service of [`OpenCallsLayer`].
#[derive(Debug, Clone)]
pub struct OpenCallsService<S> {
    inner: S,
    open: OpenCalls,
}

impl<S, B> tower::Service<http::Request<B>> for OpenCallsService<S>
where
    S: tower::Service<http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Counted<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<B>) -> Self::Future {
        let open = self.open.open();
        request.extensions_mut().insert(open.clone());
        Counted {
            open: Some(open),
            inner: self.inner.call(request),
        }
    }
}

pin_project_lite::pin_project! {
    /// A call's future, open until it ends or is dropped.
    pub struct Counted<F> {
        #[pin]
        inner: F,
        open: Option<OpenCall>,
    }
}

impl<F: Future> Future for Counted<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let output = std::task::ready!(this.inner.poll(cx));
        // Closed before hyper queues the response, so that the connection
        // writing it sees only the other calls.
        if let Some(open) = this.open.take() {
            open.close();
        }
        Poll::Ready(output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;
    use tower::Service as _;

    /// Answers a request of `n` with `n + 1`, and keeps the request's
    /// [`OpenCall`] handle where a test can reach it.
    #[derive(Default)]
    struct AddOne {
        handles: Vec<OpenCall>,
    }

    impl tower::Service<http::Request<u32>> for AddOne {
        type Response = u32;
        type Error = Infallible;
        type Future = std::future::Ready<Result<u32, Infallible>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, mut request: http::Request<u32>) -> Self::Future {
            let handle = request.extensions_mut().remove::<OpenCall>();
            self.handles.extend(handle);
            std::future::ready(Ok(request.into_body() + 1))
        }
    }

    fn counted(open: &OpenCalls) -> OpenCallsService<AddOne> {
        tower::Layer::layer(&OpenCallsLayer::new(open.clone()), AddOne::default())
    }

    #[tokio::test]
    async fn a_call_is_open_from_its_arrival_until_its_future_ends_or_is_dropped() {
        let open = OpenCalls::default();
        let mut service = counted(&open);
        assert!(!open.any());
        let answered = service.call(http::Request::new(1));
        let dropped = service.call(http::Request::new(2));
        service.inner.handles.clear();
        assert!(open.any(), "counted when the call arrives, before it runs");
        drop(dropped);
        assert!(open.any(), "one call is still open");
        assert_eq!(answered.await, Ok(2));
        assert!(!open.any(), "an answered call is closed");
    }

    #[tokio::test]
    async fn a_call_closed_early_leaves_the_count_once() {
        let open = OpenCalls::default();
        let mut service = counted(&open);
        let moved = service.call(http::Request::new(1));
        let other = service.call(http::Request::new(2));
        let handle = service.inner.handles.remove(0);
        handle.close();
        handle.close();
        assert!(open.any(), "the other call is still open");
        assert_eq!(moved.await, Ok(2));
        assert!(open.any(), "closing twice took one call out, not two");
        drop(handle);
        assert_eq!(other.await, Ok(3));
        assert!(!open.any());
    }
}
