//! How call failures cross gRPC: a [`CallError`] as the status a server
//! returns, and the status a client receives as a [`CallError`].

use std::time::Duration;

use tonic::{Code, Status};

use crate::CallError;

/// The status a server returns for a failed call. The message is the
/// error's own text, which names the function.
pub fn to_status(error: &CallError) -> Status {
    let code = match error {
        CallError::Timeout { .. } => Code::DeadlineExceeded,
        CallError::MemoryLimit { .. } => Code::ResourceExhausted,
        CallError::Trap { .. } | CallError::Malformed { .. } => Code::Internal,
        CallError::Failed { .. } => Code::Unknown,
        CallError::Unavailable { .. } => Code::Unavailable,
    };
    Status::new(code, error.to_string())
}

/// The error a client reports for a status from function `function` at
/// `target`. `timeout` is the deadline the client set, if any.
pub fn from_status(
    status: &Status,
    function: &str,
    target: &str,
    timeout: Option<Duration>,
) -> CallError {
    let function = function.to_owned();
    let message = format!(
        "gRPC target {target}: {:?}: {}",
        status.code(),
        status.message()
    );
    // tonic's own client-side deadline ends a call as CANCELLED with a
    // TimeoutExpired source; the server's as DEADLINE_EXCEEDED.
    let expired =
        status.code() == Code::DeadlineExceeded || caused_by::<tonic::TimeoutExpired>(status);
    if let (true, Some(limit)) = (expired, timeout) {
        return CallError::Timeout { function, limit };
    }
    match status.code() {
        Code::DeadlineExceeded => CallError::Failed { function, message },
        // The call never reached a function, or the function is not there.
        Code::Unavailable
        | Code::Unimplemented
        | Code::Unauthenticated
        | Code::PermissionDenied
        | Code::Cancelled
        | Code::NotFound => CallError::Unavailable { function, message },
        // tonic reports connection and TLS failures as Unknown with a
        // transport error as source.
        Code::Unknown
            if caused_by::<tonic::transport::Error>(status)
                || caused_by::<std::io::Error>(status) =>
        {
            CallError::Unavailable { function, message }
        }
        _ => CallError::Failed { function, message },
    }
}

/// Whether an error of type `E` is among the causes of `status`.
fn caused_by<E: std::error::Error + 'static>(status: &Status) -> bool {
    let mut source = std::error::Error::source(status);
    while let Some(error) = source {
        if error.is::<E>() {
            return true;
        }
        source = error.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors() -> Vec<(CallError, Code)> {
        let function = || "f".to_owned();
        vec![
            (
                CallError::Timeout {
                    function: function(),
                    limit: Duration::from_secs(1),
                },
                Code::DeadlineExceeded,
            ),
            (
                CallError::MemoryLimit {
                    function: function(),
                    limit: 1,
                    requested: 2,
                },
                Code::ResourceExhausted,
            ),
            (
                CallError::Trap {
                    function: function(),
                    message: "boom".into(),
                },
                Code::Internal,
            ),
            (
                CallError::Malformed {
                    function: function(),
                    reason: "bad".into(),
                },
                Code::Internal,
            ),
            (
                CallError::Failed {
                    function: function(),
                    message: "no".into(),
                },
                Code::Unknown,
            ),
            (
                CallError::Unavailable {
                    function: function(),
                    message: "down".into(),
                },
                Code::Unavailable,
            ),
        ]
    }

    #[test]
    fn every_call_error_has_a_status_with_its_text() {
        for (error, code) in errors() {
            let status = to_status(&error);
            assert_eq!(status.code(), code, "{error}");
            assert_eq!(status.message(), error.to_string());
        }
    }

    #[test]
    fn statuses_map_back_to_call_errors_naming_function_and_target() {
        let limit = Some(Duration::from_millis(5));
        let timeout = from_status(&Status::deadline_exceeded("late"), "f", "t:1", limit);
        assert_eq!(
            timeout,
            CallError::Timeout {
                function: "f".into(),
                limit: Duration::from_millis(5)
            }
        );
        let down = from_status(&Status::unavailable("refused"), "f", "t:1", None);
        assert_eq!(
            down,
            CallError::Unavailable {
                function: "f".into(),
                message: "gRPC target t:1: Unavailable: refused".into()
            }
        );
        let failed = from_status(&Status::internal("trap"), "f", "t:1", None);
        assert!(matches!(failed, CallError::Failed { .. }), "{failed}");
        let late = from_status(&Status::deadline_exceeded("late"), "f", "t:1", None);
        assert!(matches!(late, CallError::Failed { .. }), "{late}");
        let mut expired = Status::cancelled("Timeout expired");
        expired.set_source(std::sync::Arc::new(tonic::TimeoutExpired(())));
        assert_eq!(
            from_status(&expired, "f", "t:1", limit),
            CallError::Timeout {
                function: "f".into(),
                limit: Duration::from_millis(5)
            }
        );
    }
}
