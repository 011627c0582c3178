//! A function's own output: the lines it logs through xfn's log import,
//! and what it printed to stdout and stderr. Each becomes a `tracing`
//! event with target [`TARGET`], the function's name, and the pipeline
//! step that called it if a pipeline did (see [`in_step`]), so `xfn render`
//! can print them per step and `xfn serve` logs them with the function's
//! name. One call's lines are bounded in number and bytes.

use std::future::Future;
use std::sync::Arc;

use crate::protocol::LogLevel;
use crate::text;

/// The `tracing` target of every event that carries a function's output.
pub const TARGET: &str = "xfn::function";

/// Most lines one call may log (log import, stdout and stderr together).
pub const MAX_LINES_PER_CALL: usize = 1000;

/// Most bytes of lines one call may log.
pub const MAX_BYTES_PER_CALL: usize = 256 << 10;

tokio::task_local! {
    static STEP: Arc<str>;
}

/// Runs `call` as pipeline step `step`: the function's output during it is
/// tagged with the step's name.
pub async fn in_step<F: Future>(step: &str, call: F) -> F::Output {
    STEP.scope(Arc::from(step), call).await
}

/// Which stream a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// The log import, at the level the guest chose.
    Log(LogLevel),
    /// What the guest printed to stdout (logged at info level).
    Stdout,
    /// What the guest printed to stderr (logged at info level).
    Stderr,
}

/// One call's log: passes lines on to `tracing` until the call's bound is
/// reached, then counts what it drops.
#[derive(Debug)]
pub struct GuestLog {
    function: Arc<str>,
    lines: usize,
    bytes: usize,
    dropped: usize,
}

impl GuestLog {
    /// An empty log for one call of `function`.
    pub fn new(function: Arc<str>) -> GuestLog {
        GuestLog {
            function,
            lines: 0,
            bytes: 0,
            dropped: 0,
        }
    }

    /// Logs `message` from `stream`, escaped and bounded, unless the
    /// call's bound is reached.
    pub fn line(&mut self, stream: Stream, message: &str) {
        let message = text::for_log(message);
        if self.lines >= MAX_LINES_PER_CALL
            || self.bytes.saturating_add(message.len()) > MAX_BYTES_PER_CALL
        {
            self.dropped += 1;
            return;
        }
        self.lines += 1;
        self.bytes += message.len();
        emit(&self.function, stream, &message);
    }

    /// Logs what the guest printed to `stream` (stdout or stderr), one
    /// event per line; `before` bytes written earlier were not kept.
    pub fn printed(&mut self, stream: Stream, bytes: &[u8], before: u64) {
        if bytes.is_empty() {
            return;
        }
        let text = String::from_utf8_lossy(bytes);
        if before > 0 {
            self.line(
                stream,
                &format!("({before} bytes written before this were not kept)"),
            );
        }
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            self.line(stream, line);
        }
    }

    /// Ends the call's log: says how many lines were dropped, if any.
    pub fn finish(&mut self) {
        if self.dropped > 0 {
            let function = &*self.function;
            let step = current_step();
            let dropped = std::mem::take(&mut self.dropped);
            tracing::warn!(
                target: TARGET,
                function,
                step = step.as_deref(),
                "{dropped} more lines of the function's output were dropped: one call may log at most {MAX_LINES_PER_CALL} lines and {} KiB",
                MAX_BYTES_PER_CALL >> 10
            );
        }
    }
}

/// The step whose call is running on this task, if a pipeline runs it.
fn current_step() -> Option<Arc<str>> {
    STEP.try_with(Arc::clone).ok()
}

fn emit(function: &str, stream: Stream, message: &str) {
    let step = current_step();
    let step = step.as_deref();
    match stream {
        Stream::Log(LogLevel::Trace) => {
            tracing::trace!(target: TARGET, function, step, "{message}")
        }
        Stream::Log(LogLevel::Debug) => {
            tracing::debug!(target: TARGET, function, step, "{message}")
        }
        Stream::Log(LogLevel::Info) => tracing::info!(target: TARGET, function, step, "{message}"),
        Stream::Log(LogLevel::Warn) => tracing::warn!(target: TARGET, function, step, "{message}"),
        Stream::Log(LogLevel::Error) => {
            tracing::error!(target: TARGET, function, step, "{message}")
        }
        Stream::Stdout => {
            tracing::info!(target: TARGET, function, step, stream = "stdout", "{message}")
        }
        Stream::Stderr => {
            tracing::info!(target: TARGET, function, step, stream = "stderr", "{message}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captured(run: impl FnOnce()) -> String {
        let buffer = Arc::new(std::sync::Mutex::new(Vec::new()));
        let writer = {
            let buffer = buffer.clone();
            move || Writer(buffer.clone())
        };
        let subscriber = tracing_subscriber::fmt()
            .with_writer(writer)
            .with_ansi(false)
            .with_max_level(tracing::Level::TRACE)
            .finish();
        tracing::subscriber::with_default(subscriber, run);
        let bytes = buffer.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    struct Writer(Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for Writer {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn lines_carry_the_function_and_the_step() {
        let out = captured(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            runtime.block_on(in_step("compose", async {
                let mut log = GuestLog::new("fn-a".into());
                log.line(Stream::Log(LogLevel::Warn), "careful\nnow");
                log.printed(Stream::Stderr, b"one\n\ntwo", 0);
                log.finish();
            }));
        });
        assert!(
            out.contains(r#"WARN xfn::function: careful\nnow function="fn-a" step="compose""#),
            "{out}"
        );
        assert!(
            out.contains(r#"one function="fn-a" step="compose" stream="stderr""#),
            "{out}"
        );
        assert!(
            out.contains(r#"two function="fn-a" step="compose" stream="stderr""#),
            "{out}"
        );
        assert_eq!(out.lines().count(), 3, "{out}");
    }

    #[test]
    fn one_calls_lines_are_bounded() {
        let out = captured(|| {
            let mut log = GuestLog::new("chatty".into());
            for i in 0..MAX_LINES_PER_CALL + 5 {
                log.line(Stream::Log(LogLevel::Info), &format!("line {i}"));
            }
            log.finish();
        });
        assert_eq!(out.lines().count(), MAX_LINES_PER_CALL + 1, "{out}");
        assert!(
            out.contains("5 more lines of the function's output were dropped"),
            "{out}"
        );
        let out = captured(|| {
            let mut log = GuestLog::new("wordy".into());
            let long = "x".repeat(4000);
            for _ in 0..100 {
                log.line(Stream::Stdout, &long);
            }
            log.finish();
        });
        // 4000-byte lines: 65 fit in 256 KiB.
        assert_eq!(out.lines().count(), 66, "{out}");
        assert!(out.contains("35 more lines"), "{out}");
    }
}
