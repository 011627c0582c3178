//! Logging to the host. A function has no stdout or stderr of its own: its
//! log lines go to the host's log, tagged with the function's name.

/// How important a log line is.
///
/// ```
/// xfn_sdk::log::write(xfn_sdk::log::Level::Debug, "computed 3 buckets");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Very detailed tracing.
    Trace,
    /// Debugging detail.
    Debug,
    /// Normal operation.
    Info,
    /// Something looks wrong.
    Warn,
    /// Something failed.
    Error,
}

/// Writes `message` to the host's log at `level`.
///
/// ```
/// xfn_sdk::log::write(xfn_sdk::log::Level::Info, "composed the bucket");
/// ```
pub fn write(level: Level, message: &str) {
    #[cfg(target_arch = "wasm32")]
    {
        use crate::bindings::xfn::function::log as host;
        let level = match level {
            Level::Trace => host::Level::Trace,
            Level::Debug => host::Level::Debug,
            Level::Info => host::Level::Info,
            Level::Warn => host::Level::Warn,
            Level::Error => host::Level::Error,
        };
        host::write(level, message);
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        // Natively (in unit tests and benchmarks) there is no host: use stderr.
        eprintln!("[{level:?}] {message}");
    }
}

/// Logs at info level, with `format!` arguments.
///
/// ```
/// xfn_sdk::info!("composed {} resources", 3);
/// ```
#[macro_export]
macro_rules! info {
    ($($arg:tt)*) => { $crate::log::write($crate::log::Level::Info, &format!($($arg)*)) };
}

/// Logs at debug level, with `format!` arguments.
///
/// ```
/// xfn_sdk::debug!("input: {:?}", Some(1));
/// ```
#[macro_export]
macro_rules! debug {
    ($($arg:tt)*) => { $crate::log::write($crate::log::Level::Debug, &format!($($arg)*)) };
}

/// Logs at warn level, with `format!` arguments.
///
/// ```
/// xfn_sdk::warn!("region {} is deprecated", "us-east-1");
/// ```
#[macro_export]
macro_rules! warn {
    ($($arg:tt)*) => { $crate::log::write($crate::log::Level::Warn, &format!($($arg)*)) };
}

/// Logs at error level, with `format!` arguments.
///
/// ```
/// xfn_sdk::error!("cannot read {}", "spec.region");
/// ```
#[macro_export]
macro_rules! error {
    ($($arg:tt)*) => { $crate::log::write($crate::log::Level::Error, &format!($($arg)*)) };
}
