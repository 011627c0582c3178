//! Where served calls run: threads of their own, and threads of lower
//! priority for calls that have computed long.
//!
//! A call starts on the task that received it, and moves to the call
//! threads the first time it waits. Once its guest has computed for
//! [`DEMOTE_AFTER`] (time spent being polled, not waiting), it moves to the
//! long-call threads, whose lower scheduling priority lets the kernel run
//! short calls and the connections' threads first. A function stuck in a
//! loop until its deadline then takes CPU only when nothing else wants it,
//! and other functions' latency stays what it is alone.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_util::FutureExt as _;
use tokio::runtime::Handle;
use tokio::task::JoinError;

/// How long a call computes before it moves to the long-call threads. Far
/// longer than a typical function's call (P&T takes well under 1 ms), far
/// shorter than a deadline.
pub const DEMOTE_AFTER: Duration = Duration::from_millis(10);

/// The nice value of long-call threads: the kernel gives a thread of nice
/// 10 about a tenth of the CPU a thread of nice 0 gets when both want it.
pub const LONG_CALL_NICE: i32 = 10;

/// The runtimes a server runs its calls on.
#[derive(Debug, Clone)]
pub struct CallThreads {
    /// Where every call starts.
    pub calls: Handle,
    /// Where a call moves once it has computed for `demote_after`; `None`
    /// keeps every call on `calls`.
    pub long_calls: Option<Handle>,
    /// How long a call computes before it moves.
    pub demote_after: Duration,
}

impl CallThreads {
    /// Calls that wait move to `calls` and stay there: no long-call
    /// threads.
    pub fn new(calls: Handle) -> CallThreads {
        CallThreads {
            calls,
            long_calls: None,
            demote_after: DEMOTE_AFTER,
        }
    }

    /// Runs `call` to its end. It starts on the calling task, so a call
    /// that finishes without waiting (most do) costs no hand-off between
    /// threads. The first time it waits (for a call slot, or at an epoch
    /// tick once its guest has run for 1 ms) it moves to the call
    /// threads, so the caller's thread goes back to serving connections;
    /// once it has computed for `demote_after` there, it moves to the
    /// long-call threads. The error is a panic in the call, or a runtime
    /// that shut down under it.
    pub async fn run<F>(&self, call: F) -> Result<F::Output, CallLost>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.run_noting_move(call, || ()).await
    }

    /// [`CallThreads::run`], calling `moved` when the call leaves the
    /// caller's task for the call threads.
    pub async fn run_noting_move<F>(
        &self,
        call: F,
        moved: impl FnOnce(),
    ) -> Result<F::Output, CallLost>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let inline = UntilDemoted::new(Box::pin(call), Duration::ZERO);
        let rest = match AssertUnwindSafe(inline).catch_unwind().await {
            Ok(Ok(output)) => return Ok(output),
            Ok(Err(rest)) => rest,
            Err(panic) => return Err(CallLost::Panicked(panic_message(panic.as_ref()))),
        };
        moved();
        let Some(long_calls) = &self.long_calls else {
            return self.calls.spawn(rest).await.map_err(CallLost::from);
        };
        let on_call_threads = UntilDemoted::new(rest, self.demote_after);
        match self.calls.spawn(on_call_threads).await? {
            Ok(output) => Ok(output),
            Err(rest) => {
                tracing::debug!(
                    "a call computed for {:?}: moved to the long-call threads",
                    self.demote_after
                );
                long_calls.spawn(rest).await.map_err(CallLost::from)
            }
        }
    }
}

/// Why a call ended without an outcome.
#[derive(Debug, thiserror::Error)]
pub enum CallLost {
    /// The call panicked (a bug in xfn, not in the guest).
    #[error("panicked: {0}")]
    Panicked(String),
    /// The threads running it shut down.
    #[error("was cancelled: {0}")]
    Cancelled(String),
}

impl From<JoinError> for CallLost {
    fn from(error: JoinError) -> Self {
        match error.try_into_panic() {
            Ok(panic) => CallLost::Panicked(panic_message(panic.as_ref())),
            Err(error) => CallLost::Cancelled(error.to_string()),
        }
    }
}

/// A panic's message, if it has one.
fn panic_message(panic: &(dyn Any + Send)) -> String {
    match (panic.downcast_ref::<&str>(), panic.downcast_ref::<String>()) {
        (Some(message), _) => (*message).to_owned(),
        (None, Some(message)) => message.clone(),
        (None, None) => "without a message".to_owned(),
    }
}

/// Sets the calling thread's nice value to [`LONG_CALL_NICE`]: for a
/// runtime's `on_thread_start`. Linux keeps nice values per thread. If the
/// kernel refuses, the thread keeps its priority, and calls are as fair as
/// without long-call threads, which is worth a warning, not a failure.
pub fn lower_thread_priority() {
    xfn_runtime::priority::lower_thread_priority(LONG_CALL_NICE, "a long-call thread");
}

/// A call's future, polled until it ends, or until it waits once it has
/// been polled for `demote_after` in all; then it gives the rest of the
/// call back.
struct UntilDemoted<F> {
    call: Option<Pin<Box<F>>>,
    busy: Duration,
    demote_after: Duration,
}

impl<F> UntilDemoted<F> {
    fn new(call: Pin<Box<F>>, demote_after: Duration) -> Self {
        UntilDemoted {
            call: Some(call),
            busy: Duration::ZERO,
            demote_after,
        }
    }
}

impl<F: Future> Future for UntilDemoted<F> {
    type Output = Result<F::Output, Pin<Box<F>>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // Every field is Unpin (the call is boxed).
        let this = self.get_mut();
        let Some(call) = this.call.as_mut() else {
            panic!("UntilDemoted polled after it finished");
        };
        let started = Instant::now();
        let polled = call.as_mut().poll(cx);
        this.busy += started.elapsed();
        match polled {
            Poll::Ready(output) => Poll::Ready(Ok(output)),
            Poll::Pending if this.busy >= this.demote_after => {
                Poll::Ready(Err(this.call.take().expect("checked above")))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn runtime(name: &str, long: bool) -> tokio::runtime::Runtime {
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        builder.worker_threads(1).thread_name(name).enable_all();
        if long {
            builder.on_thread_start(lower_thread_priority);
        }
        builder.build().expect("a runtime")
    }

    /// Runs `future` on one of `host`'s threads, as a server's connection
    /// task runs.
    fn run_on<T: Send + 'static>(
        host: &tokio::runtime::Runtime,
        threads: &CallThreads,
        call: impl Future<Output = T> + Send + 'static,
    ) -> Result<T, CallLost> {
        let threads = threads.clone();
        let task = host.spawn(async move { threads.run(call).await });
        host.block_on(task).expect("the task ends")
    }

    fn thread_name() -> String {
        std::thread::current().name().unwrap_or_default().to_owned()
    }

    /// Computes for `busy` in steps of 1 ms, yielding between them as a
    /// guest does at each epoch tick; returns the threads it ran on.
    async fn compute(busy: Duration) -> Vec<String> {
        let started = Instant::now();
        let mut threads = vec![thread_name()];
        while started.elapsed() < busy {
            let step = Instant::now();
            while step.elapsed() < Duration::from_millis(1) {
                std::hint::spin_loop();
            }
            tokio::task::yield_now().await;
            threads.push(thread_name());
        }
        threads.dedup();
        threads
    }

    /// Waits for `wait` without computing.
    async fn idle(wait: Duration) -> Vec<String> {
        let mut threads = vec![thread_name()];
        tokio::time::sleep(wait).await;
        threads.push(thread_name());
        threads.dedup();
        threads
    }

    fn threads() -> (
        tokio::runtime::Runtime,
        tokio::runtime::Runtime,
        CallThreads,
    ) {
        let calls = runtime("test-call", false);
        let long = runtime("test-long", true);
        let threads = CallThreads {
            calls: calls.handle().clone(),
            long_calls: Some(long.handle().clone()),
            demote_after: Duration::from_millis(20),
        };
        (calls, long, threads)
    }

    #[test]
    fn a_call_that_computes_long_moves_to_the_long_call_threads() {
        let (_calls, _long, threads) = threads();
        let host = runtime("test-host", false);
        let ran_on = run_on(&host, &threads, compute(Duration::from_millis(60))).expect("no panic");
        assert_eq!(ran_on, ["test-host", "test-call", "test-long"]);
        let nice = run_on(&host, &threads, async {
            compute(Duration::from_millis(40)).await;
            // SAFETY: getpriority only reads its integer arguments.
            #[allow(unsafe_code)]
            let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
            nice
        })
        .expect("no panic");
        assert_eq!(nice, LONG_CALL_NICE);
    }

    #[test]
    fn a_call_that_never_waits_stays_on_its_callers_thread() {
        let (_calls, _long, threads) = threads();
        let host = runtime("test-host", false);
        let ran_on = run_on(&host, &threads, compute(Duration::ZERO)).expect("no panic");
        assert_eq!(ran_on, ["test-host"]);
    }

    #[test]
    fn a_call_is_noted_as_moved_when_it_leaves_its_callers_thread_and_only_then() {
        let (_calls, _long, threads) = threads();
        let host = runtime("test-host", false);
        for (call, moves) in [(Duration::ZERO, false), (Duration::from_millis(2), true)] {
            let moved = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let noted = moved.clone();
            let threads = threads.clone();
            let task = host.spawn(async move {
                let note = || {
                    noted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                };
                threads.run_noting_move(compute(call), note).await
            });
            let ran_on = host
                .block_on(task)
                .expect("the task ends")
                .expect("no panic");
            assert_eq!(ran_on.len() > 1, moves, "{ran_on:?}");
            let times = moved.load(std::sync::atomic::Ordering::SeqCst);
            assert_eq!(times, usize::from(moves), "{ran_on:?}");
        }
    }

    #[test]
    fn short_calls_and_calls_that_wait_stay_on_the_call_threads() {
        let (_calls, _long, threads) = threads();
        let host = runtime("test-host", false);
        let short = run_on(&host, &threads, compute(Duration::from_millis(2))).expect("no panic");
        assert_eq!(short, ["test-host", "test-call"]);
        // Waiting is not computing: 100 ms asleep is not 20 ms busy.
        let waiting = run_on(&host, &threads, idle(Duration::from_millis(100))).expect("no panic");
        assert_eq!(waiting, ["test-host", "test-call"]);
    }

    #[test]
    fn without_long_call_threads_a_call_stays_on_the_call_threads() {
        let calls = runtime("test-call", false);
        let staying = CallThreads::new(calls.handle().clone());
        let host = runtime("test-host", false);
        let ran_on = run_on(&host, &staying, compute(Duration::from_millis(30))).expect("no panic");
        assert_eq!(ran_on, ["test-host", "test-call"]);
    }

    #[test]
    fn a_panic_is_an_error_wherever_the_call_runs() {
        let (_calls, _long, threads) = threads();
        let host = runtime("test-host", false);
        for busy in [0, 5, 30] {
            let panicked = run_on(&host, &threads, async move {
                compute(Duration::from_millis(busy)).await;
                panic!("a host call panicked after {busy} ms");
            });
            match panicked {
                Err(CallLost::Panicked(message)) => {
                    assert_eq!(message, format!("a host call panicked after {busy} ms"));
                }
                other => panic!("after {busy} ms: {other:?}"),
            }
        }
    }
}
