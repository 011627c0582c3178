//! How many calls a listener has accepted and not yet answered.
//!
//! hyper hands each request to the service stack on its connection's task
//! as the request arrives, and spawns the call's future. [`OpenCallsLayer`]
//! counts a call from then until its future ends (answered, failed or
//! dropped), so while a connection writes a response, [`OpenCalls`] tells
//! whether other calls are still to answer: then
//! [`BatchedWrites`](super::batched_writes::BatchedWrites) waits for them.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

/// The count of calls accepted and not yet answered, shared by a
/// listener's service stack and its connections.
#[derive(Debug, Clone, Default)]
pub struct OpenCalls(Arc<AtomicUsize>);

impl OpenCalls {
    /// Whether any call is open.
    pub fn any(&self) -> bool {
        self.0.load(Ordering::Relaxed) > 0
    }

    /// Counts a call until the returned guard is dropped.
    pub(super) fn open(&self) -> OpenCall {
        self.0.fetch_add(1, Ordering::Relaxed);
        OpenCall(self.clone())
    }
}

/// One open call; dropping it closes it.
#[derive(Debug)]
pub(super) struct OpenCall(OpenCalls);

impl Drop for OpenCall {
    fn drop(&mut self) {
        (self.0).0.fetch_sub(1, Ordering::Relaxed);
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

impl<S, R> tower::Service<R> for OpenCallsService<S>
where
    S: tower::Service<R>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Counted<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: R) -> Self::Future {
        Counted {
            open: Some(self.open.open()),
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
        this.open.take();
        Poll::Ready(output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;
    use tower::Service as _;

    /// Answers `n` with `n + 1`.
    struct AddOne;

    impl tower::Service<u32> for AddOne {
        type Response = u32;
        type Error = Infallible;
        type Future = std::future::Ready<Result<u32, Infallible>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, n: u32) -> Self::Future {
            std::future::ready(Ok(n + 1))
        }
    }

    #[tokio::test]
    async fn a_call_is_open_from_its_arrival_until_its_future_ends_or_is_dropped() {
        let open = OpenCalls::default();
        let mut service = tower::Layer::layer(&OpenCallsLayer::new(open.clone()), AddOne);
        assert!(!open.any());
        let answered = service.call(1);
        let dropped = service.call(2);
        assert!(open.any(), "counted when the call arrives, before it runs");
        drop(dropped);
        assert!(open.any(), "one call is still open");
        assert_eq!(answered.await, Ok(2));
        assert!(!open.any(), "an answered call is closed");
    }
}
