//! The `grpc-timeout` header: how long the client will wait for a call.

use std::time::Duration;

/// The header's name.
pub const GRPC_TIMEOUT: &str = "grpc-timeout";

/// Parses a `grpc-timeout` value: 1 to 8 digits and a unit (`H`, `M`, `S`,
/// `m`, `u`, `n`). `None` if it is malformed.
pub fn parse(value: &str) -> Option<Duration> {
    let split = value.len().checked_sub(1)?;
    let (digits, unit) = value.split_at(split);
    if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(n * 3600),
        "M" => Duration::from_secs(n * 60),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    })
}

/// The client's deadline for a call, from its metadata.
pub fn from_metadata(metadata: &tonic::metadata::MetadataMap) -> Option<Duration> {
    metadata
        .get(GRPC_TIMEOUT)
        .and_then(|v| v.to_str().ok())
        .and_then(parse)
}

/// The time a guest gets for a call whose client waits `deadline`: a
/// little less (a tenth, at most 100 ms), so that the guest is interrupted
/// and its `DEADLINE_EXCEEDED` reaches the client before the transport
/// gives up on the call with a bare `CANCELLED` (clients that enforce
/// their deadline themselves, as grpc-go and grpc-python do, report
/// `DEADLINE_EXCEEDED` either way).
pub fn for_guest(deadline: Duration) -> Duration {
    deadline.saturating_sub((deadline / 10).min(Duration::from_millis(100)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guests_get_a_little_less_than_the_deadline() {
        assert_eq!(
            for_guest(Duration::from_millis(300)),
            Duration::from_millis(270)
        );
        assert_eq!(
            for_guest(Duration::from_secs(30)),
            Duration::from_millis(29_900)
        );
        assert_eq!(for_guest(Duration::ZERO), Duration::ZERO);
    }

    #[test]
    fn parses_every_unit() {
        assert_eq!(parse("2H"), Some(Duration::from_secs(7200)));
        assert_eq!(parse("3M"), Some(Duration::from_secs(180)));
        assert_eq!(parse("4S"), Some(Duration::from_secs(4)));
        assert_eq!(parse("500m"), Some(Duration::from_millis(500)));
        assert_eq!(parse("99999999u"), Some(Duration::from_micros(99_999_999)));
        assert_eq!(parse("1n"), Some(Duration::from_nanos(1)));
    }

    #[test]
    fn refuses_malformed_values() {
        for bad in ["", "S", "123456789S", "1.5S", "-1S", "10x", "10", "ms"] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }
}
