//! How call failures cross gRPC: a [`CallError`] as the status a server
//! returns, and the status a client receives as a [`CallError`].

use std::time::Duration;

use tonic::{Code, Status};

use xfn_runtime::CallError;

/// Most bytes a status message may take once percent-encoded into the
/// `grpc-message` trailer. gRPC clients refuse metadata past 8 or 16 KiB
/// (grpc-core's soft and hard limits) and then report that instead of the
/// error, so a longer message is cut.
pub const MAX_STATUS_MESSAGE: usize = 6 << 10;

/// The status a server returns for a failed call. The message is the
/// error's own text, which names the function, cut to fit
/// [`MAX_STATUS_MESSAGE`] once encoded.
pub fn to_status(error: &CallError) -> Status {
    let code = match error {
        CallError::Timeout { .. } => Code::DeadlineExceeded,
        CallError::MemoryLimit { .. } => Code::ResourceExhausted,
        CallError::Trap { .. } | CallError::Malformed { .. } => Code::Internal,
        CallError::Failed { .. } => Code::Unknown,
        CallError::Unavailable { .. } => Code::Unavailable,
    };
    Status::new(code, bounded_message(&error.to_string()))
}

/// `message` cut so that its percent-encoding for `grpc-message` (every
/// byte of a char other than printable ASCII takes 3) fits
/// [`MAX_STATUS_MESSAGE`].
pub fn bounded_message(message: &str) -> String {
    let encoded_len = |c: char| {
        if c.is_ascii_graphic() && !"\"#%<>?`{}".contains(c) {
            1
        } else {
            3 * c.len_utf8()
        }
    };
    xfn_runtime::text::bounded_by(message, MAX_STATUS_MESSAGE, encoded_len).into_owned()
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

/// The name of a gRPC code as a metric label: `deadline_exceeded`, ...
pub fn code_label(code: tonic::Code) -> &'static str {
    use tonic::Code;
    match code {
        Code::Ok => "ok",
        Code::Cancelled => "cancelled",
        Code::Unknown => "unknown",
        Code::InvalidArgument => "invalid_argument",
        Code::DeadlineExceeded => "deadline_exceeded",
        Code::NotFound => "not_found",
        Code::AlreadyExists => "already_exists",
        Code::PermissionDenied => "permission_denied",
        Code::ResourceExhausted => "resource_exhausted",
        Code::FailedPrecondition => "failed_precondition",
        Code::Aborted => "aborted",
        Code::OutOfRange => "out_of_range",
        Code::Unimplemented => "unimplemented",
        Code::Internal => "internal",
        Code::Unavailable => "unavailable",
        Code::DataLoss => "data_loss",
        Code::Unauthenticated => "unauthenticated",
    }
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
    fn a_long_message_is_cut_to_fit_the_trailer_once_encoded() {
        let failed = |message: String| CallError::Failed {
            function: "f".into(),
            message,
        };
        let ascii = to_status(&failed("x".repeat(1 << 20)));
        assert!(
            ascii.message().len() <= MAX_STATUS_MESSAGE + 64,
            "{}",
            ascii.message().len()
        );
        assert!(ascii.message().starts_with("function \"f\" failed: xxx"));
        assert!(
            ascii.message().ends_with("bytes more)"),
            "{}",
            ascii.message()
        );
        // Each "é" takes 6 bytes encoded: a third as many chars fit.
        let wide = to_status(&failed("é".repeat(1 << 20)));
        assert!(
            wide.message().len() <= MAX_STATUS_MESSAGE / 3 + 64,
            "{}",
            wide.message().len()
        );
        // A short message is untouched.
        assert_eq!(
            to_status(&failed("no".into())).message(),
            "function \"f\" failed: no"
        );
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
