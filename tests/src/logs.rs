//! The log lines the host writes, captured as text for tests to read.

use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use tracing::subscriber::DefaultGuard;

/// Log output, formatted as `xfn` formats it, gathered from this thread
/// (and from tasks of a current-thread runtime on it) while its guard lives.
#[derive(Clone, Default)]
pub struct Logs {
    text: Arc<Mutex<Vec<u8>>>,
}

impl Logs {
    /// Starts capturing every event at `level` and above on this thread.
    pub fn capture(level: tracing::Level) -> (Logs, DefaultGuard) {
        let logs = Logs::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(logs.clone())
            .with_ansi(false)
            .with_max_level(level)
            .finish();
        let guard = tracing::subscriber::set_default(subscriber);
        (logs, guard)
    }

    /// What was logged so far.
    pub fn text(&self) -> String {
        let text = self.text.lock().unwrap_or_else(PoisonError::into_inner);
        String::from_utf8_lossy(&text).into_owned()
    }
}

impl Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut text = self.text.lock().unwrap_or_else(PoisonError::into_inner);
        text.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Logs {
    type Writer = Logs;

    fn make_writer(&'a self) -> Logs {
        self.clone()
    }
}
