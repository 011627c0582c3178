//! SHA-256 content digests (`sha256:<64 hex digits>`), the only algorithm
//! xfn accepts.

use std::fmt;
use std::str::FromStr;

use sha2::{Digest as _, Sha256};

/// A SHA-256 content digest.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest {
    hex: String,
}

impl Digest {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Digest {
        Digest {
            hex: format!("{:x}", Sha256::digest(bytes)),
        }
    }

    /// The digest of what `hasher` was fed.
    pub(crate) fn from_sha256(hasher: Sha256) -> Digest {
        Digest {
            hex: format!("{:x}", hasher.finalize()),
        }
    }

    /// The 64 lowercase hex digits, without the algorithm.
    pub fn hex(&self) -> &str {
        &self.hex
    }

    /// Whether `bytes` hash to this digest.
    pub fn matches(&self, bytes: &[u8]) -> bool {
        Digest::of(bytes) == *self
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256:{}", self.hex)
    }
}

impl FromStr for Digest {
    type Err = String;

    fn from_str(s: &str) -> Result<Digest, String> {
        let Some((algorithm, hex)) = s.split_once(':') else {
            return Err(format!("`{s}` is not a digest (expected sha256:<hex>)"));
        };
        if algorithm != "sha256" {
            return Err(format!(
                "digest algorithm `{algorithm}` is not supported (only sha256)"
            ));
        }
        let valid = hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !valid {
            return Err(format!("`{s}` is not a valid sha256 digest"));
        }
        Ok(Digest {
            hex: hex.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_of_empty_input() {
        let d = Digest::of(b"");
        assert_eq!(
            d.to_string(),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(d.to_string().parse::<Digest>().unwrap(), d);
        assert!(d.matches(b""));
        assert!(!d.matches(b"x"));
    }

    #[test]
    fn rejects_bad_digests() {
        assert!("sha512:abcd".parse::<Digest>().is_err());
        assert!("sha256:ABCD".parse::<Digest>().is_err());
        assert!("sha256:abc".parse::<Digest>().is_err());
        assert!("nocolon".parse::<Digest>().is_err());
        let upper = format!("sha256:{}", "A".repeat(64));
        assert!(upper.parse::<Digest>().is_err());
    }
}
