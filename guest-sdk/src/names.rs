//! Names for composed resources.

use sha2::{Digest, Sha256};

/// The longest Kubernetes name that is also a DNS label.
const DNS_LABEL_MAX: usize = 63;
/// Hex digits of the hash suffix.
const HASH_LEN: usize = 5;

/// A deterministic name for a child resource, at most 63 characters for a
/// one-character `sep`: the Python SDK's `resource.child_name`.
///
/// The parts are joined with `sep`, the join is cut to 57 characters, any
/// trailing characters found in `sep` are trimmed, and `sep` plus the first
/// five hex digits of the SHA-256 of the whole join are appended. The suffix
/// is added even to short names, so names look alike whatever their length.
///
/// ```
/// assert_eq!(xfn_sdk::child_name(&["my-xr", "bucket"], "-"), "my-xr-bucket-05ecb");
/// let long = xfn_sdk::child_name(&[&"a".repeat(70)], "-");
/// assert_eq!(long.len(), 63);
/// ```
pub fn child_name(parts: &[&str], sep: &str) -> String {
    let full = parts.join(sep);
    let digest = Sha256::digest(full.as_bytes());
    let mut hash = String::with_capacity(HASH_LEN + 1);
    for byte in &digest[..HASH_LEN.div_ceil(2)] {
        hash.push_str(&format!("{byte:02x}"));
    }
    hash.truncate(HASH_LEN);
    // Python cuts by characters (code points), not bytes.
    let cut = full
        .char_indices()
        .nth(DNS_LABEL_MAX - HASH_LEN - 1)
        .map_or(full.len(), |(i, _)| i);
    // Python's `rstrip(sep)` strips any character of `sep`, not the string.
    let prefix = full[..cut].trim_end_matches(|c| sep.contains(c));
    format!("{prefix}{sep}{hash}")
}

#[cfg(test)]
mod tests {
    use super::child_name;

    // Expected values computed with crossplane-function-sdk-python's
    // `child_name`.
    #[test]
    fn matches_the_python_sdk() {
        assert_eq!(child_name(&["my-xr", "bucket"], "-"), "my-xr-bucket-05ecb");
        assert_eq!(
            child_name(&[&"a".repeat(70)], "-"),
            format!("{}-6bd5e", "a".repeat(57))
        );
        assert_eq!(
            child_name(&[&"x".repeat(56), "-y"], "-"),
            format!("{}-169b4", "x".repeat(56))
        );
        assert_eq!(
            child_name(&[&"é".repeat(60), "b"], "-"),
            format!("{}-3f6ef", "é".repeat(57))
        );
        assert_eq!(child_name(&["a", "b"], "--"), "a--b--90827");
    }
}
