//! Watch streams: replay from the event log, then live events, as newline-delimited JSON.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc, watch};

use crate::body::FakeBody;
use crate::resources::ResourceInfo;
use crate::selector::{FieldSelector, LabelSelector};
use crate::status::ApiError;
use crate::store::{Event, EventType, Subscription};

/// What one watch request asked for.
#[derive(Debug, Clone)]
pub(crate) struct WatchRequest {
    pub(crate) info: ResourceInfo,
    pub(crate) namespace: Option<String>,
    pub(crate) labels: LabelSelector,
    pub(crate) fields: FieldSelector,
    pub(crate) bookmarks: bool,
    /// `sendInitialEvents=true`: end the initial events with an annotated BOOKMARK.
    pub(crate) initial_events_end: bool,
    pub(crate) timeout: Duration,
    pub(crate) bookmark_interval: Option<Duration>,
    /// The resource version the client asked to start after, if any.
    pub(crate) from_rv: Option<u64>,
}

/// Decrements the active-watch counter when a watch ends.
pub(crate) struct WatchGuard(pub(crate) Arc<AtomicUsize>);

impl Drop for WatchGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl WatchRequest {
    /// What this watcher should see for a store event, following selector transitions as the real server
    /// does: an object that starts matching is ADDED, one that stops matching is DELETED.
    fn translate<'e>(&self, ev: &'e Event) -> Option<(&'static str, &'e Value)> {
        if ev.resource != self.info.key()
            || self.namespace.as_ref().is_some_and(|n| *n != ev.namespace)
        {
            return None;
        }
        let matches = |o: &Value| self.labels.matches(o) && self.fields.matches(o);
        let now = matches(&ev.object);
        match ev.kind {
            EventType::Added | EventType::Deleted => now.then_some((ev.kind.as_str(), &ev.object)),
            EventType::Modified => {
                let before = ev.old.as_ref().is_some_and(matches);
                match (before, now) {
                    (true, true) => Some(("MODIFIED", &ev.object)),
                    (false, true) => Some(("ADDED", &ev.object)),
                    (true, false) => Some(("DELETED", &ev.object)),
                    (false, false) => None,
                }
            }
        }
    }

    fn bookmark(&self, rv: u64, initial_end: bool) -> Bytes {
        let mut metadata = json!({"resourceVersion": rv.to_string()});
        if initial_end {
            metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        line(
            "BOOKMARK",
            &json!({
                "apiVersion": self.info.api_version(),
                "kind": self.info.kind,
                "metadata": metadata,
            }),
        )
    }
}

fn line(kind: &str, object: &Value) -> Bytes {
    let mut bytes =
        serde_json::to_vec(&json!({"type": kind, "object": object})).unwrap_or_default();
    bytes.push(b'\n');
    Bytes::from(bytes)
}

/// A body holding one ERROR event, e.g. 410 Expired for a resource version older than the history.
pub(crate) fn error_body(err: &ApiError) -> FakeBody {
    FakeBody::full(line("ERROR", &err.to_status()))
}

/// Spawns the task feeding a watch response body.
pub(crate) fn spawn(
    req: WatchRequest,
    sub: Subscription,
    mut close: watch::Receiver<u64>,
    guard: WatchGuard,
) -> FakeBody {
    let (tx, rx) = mpsc::channel::<Bytes>(128);
    let timeout = req.timeout;
    let plural = req.info.qualified_name();
    tokio::spawn(async move {
        let _guard = guard;
        // Mark the current epoch as seen: only later closes end this watch.
        close.borrow_and_update();
        let run = feed(&req, sub, &tx);
        let why = tokio::select! {
            _ = run => "client gone or fell behind",
            _ = tokio::time::sleep(timeout) => "timeout",
            _ = close.changed() => "closed by the server",
        };
        tracing::debug!(resource = %plural, reason = why, "fake api watch ended");
    });
    FakeBody::stream(rx)
}

async fn feed(req: &WatchRequest, sub: Subscription, tx: &mpsc::Sender<Bytes>) {
    let Subscription {
        initial,
        mut live,
        rv,
    } = sub;
    let mut last_rv = rv.max(req.from_rv.unwrap_or(0));
    for ev in &initial {
        if let Some((kind, obj)) = req.translate(ev)
            && tx.send(line(kind, obj)).await.is_err()
        {
            return;
        }
    }
    if req.initial_events_end && tx.send(req.bookmark(last_rv, true)).await.is_err() {
        return;
    }
    let period = req
        .bookmark_interval
        .filter(|_| req.bookmarks)
        .unwrap_or(Duration::from_secs(3600));
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    loop {
        tokio::select! {
            ev = live.recv() => match ev {
                Ok(ev) => {
                    last_rv = last_rv.max(ev.rv);
                    if let Some((kind, obj)) = req.translate(&ev)
                        && tx.send(line(kind, obj)).await.is_err() {
                            return;
                        }
                }
                // A lagging watcher is ended; the client re-watches from its last resource version.
                Err(broadcast::error::RecvError::Lagged(_)) | Err(broadcast::error::RecvError::Closed) => return,
            },
            _ = ticker.tick(), if req.bookmarks && req.bookmark_interval.is_some() => {
                if tx.send(req.bookmark(last_rv, false)).await.is_err() {
                    return;
                }
            }
            _ = tx.closed() => return,
        }
    }
}
