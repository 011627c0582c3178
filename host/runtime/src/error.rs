//! Errors of the host library.

use std::time::Duration;

/// A failure to set up the host or load a function.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The wasm engine could not be configured.
    #[error("cannot configure the wasm engine: {0}")]
    Engine(String),
    /// A component could not be compiled, linked or pre-instantiated.
    #[error("cannot load function {function:?}: {reason}")]
    Load {
        /// The function's name.
        function: String,
        /// What went wrong.
        reason: String,
    },
    /// A file could not be read or written.
    #[error("{action} {path}: {error}")]
    Io {
        /// What was being done, e.g. "cannot read".
        action: &'static str,
        /// The file.
        path: std::path::PathBuf,
        /// The cause (its text is part of the message).
        error: std::io::Error,
    },
}

/// Why one call of a function failed. Every variant names the function.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CallError {
    /// The call ran past its deadline and was interrupted.
    #[error(
        "function {function:?} timed out after {limit:?} (if it needs longer, raise --timeout)"
    )]
    Timeout {
        /// The function's name.
        function: String,
        /// The deadline it ran past.
        limit: Duration,
    },
    /// The guest tried to grow its memory past the limit.
    #[error(
        "function {function:?} exceeded its memory limit of {limit} bytes (it asked for {requested} in all; if it needs more, raise --memory-limit)"
    )]
    MemoryLimit {
        /// The function's name.
        function: String,
        /// The limit in bytes.
        limit: usize,
        /// The total size, over all its memories and tables, it tried to grow to.
        requested: usize,
    },
    /// The guest trapped: a panic, an `unreachable`, an out-of-bounds access.
    #[error("function {function:?} trapped: {message}")]
    Trap {
        /// The function's name.
        function: String,
        /// The trap, with what the guest printed (a panic message) if anything.
        message: String,
    },
    /// The function reported that it could not run.
    #[error("function {function:?} failed: {message}")]
    Failed {
        /// The function's name.
        function: String,
        /// The function's own error message.
        message: String,
    },
    /// The response broke the protocol (e.g. a state that isn't a JSON object).
    #[error("function {function:?} returned a malformed response: {reason}")]
    Malformed {
        /// The function's name.
        function: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The function could not be reached or refused the call (gRPC functions).
    #[error("cannot call function {function:?}: {message}")]
    Unavailable {
        /// The function's name.
        function: String,
        /// The transport's or server's error.
        message: String,
    },
}
