//! Parsing image references (`registry/repository:tag` or `…@sha256:…`) and
//! telling which registries are on this machine.

use std::net::IpAddr;

use oci_client::Reference;

use crate::digest::Digest;
use crate::error::{Error, Result};

/// A parsed reference, with the text the user wrote kept for messages.
#[derive(Debug, Clone)]
pub struct ImageRef {
    text: String,
    inner: Reference,
}

impl ImageRef {
    /// Parses `text` (e.g. `127.0.0.1:5000/functions/hello:v1`,
    /// `xpkg.crossplane.io/org/fn@sha256:…`). A missing tag means `latest`.
    pub fn parse(text: &str) -> Result<ImageRef> {
        let trimmed = text.trim();
        let invalid = |reason: String| Error::InvalidReference {
            reference: text.to_owned(),
            reason,
        };
        if trimmed.is_empty() {
            return Err(invalid(String::from("empty reference")));
        }
        let inner: Reference = trimmed.parse().map_err(|e| invalid(format!("{e}")))?;
        if let Some(d) = inner.digest() {
            d.parse::<Digest>().map_err(invalid)?;
        }
        Ok(ImageRef {
            text: trimmed.to_owned(),
            inner,
        })
    }

    /// The reference as the user wrote it.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The oci-client form.
    pub fn oci(&self) -> &Reference {
        &self.inner
    }

    /// The registry host (and port), e.g. `127.0.0.1:5000` or `docker.io`.
    pub fn registry(&self) -> &str {
        self.inner.registry()
    }

    /// The repository path, e.g. `functions/hello`.
    pub fn repository(&self) -> &str {
        self.inner.repository()
    }

    /// The tag, if the reference is not pinned by digest alone.
    pub fn tag(&self) -> Option<&str> {
        self.inner.tag()
    }

    /// The digest the reference is pinned to, if any.
    pub fn digest(&self) -> Option<Digest> {
        self.inner.digest().and_then(|d| d.parse().ok())
    }

    /// The same repository, pinned to `digest`.
    pub fn with_digest(&self, digest: &Digest) -> ImageRef {
        let inner = Reference::with_digest(
            self.registry().to_owned(),
            self.repository().to_owned(),
            digest.to_string(),
        );
        ImageRef {
            text: inner.whole(),
            inner,
        }
    }

    /// The last path segment of the repository (`hello` for `functions/hello`).
    pub fn short_name(&self) -> &str {
        let repo = self.repository();
        repo.rsplit('/').next().unwrap_or(repo)
    }

    /// Whether the registry is on the loopback interface.
    pub fn is_loopback(&self) -> bool {
        is_loopback_registry(self.registry())
    }
}

impl std::fmt::Display for ImageRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// The host part of `registry` (`host`, `host:port` or `[v6]:port`).
pub fn registry_host(registry: &str) -> &str {
    if let Some(rest) = registry.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match registry.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => registry,
    }
}

/// Whether `registry` names this machine: `localhost` or a loopback address.
pub fn is_loopback_registry(registry: &str) -> bool {
    let host = registry_host(registry);
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tags_and_digests() {
        let r = ImageRef::parse("127.0.0.1:5000/functions/hello:v1").unwrap();
        assert_eq!(r.registry(), "127.0.0.1:5000");
        assert_eq!(r.repository(), "functions/hello");
        assert_eq!(r.tag(), Some("v1"));
        assert_eq!(r.digest(), None);
        assert_eq!(r.short_name(), "hello");
        assert!(r.is_loopback());

        let d = Digest::of(b"x");
        let pinned = ImageRef::parse(&format!("example.com/fn@{d}")).unwrap();
        assert_eq!(pinned.digest(), Some(d.clone()));
        assert!(!pinned.is_loopback());
        assert_eq!(r.with_digest(&d).digest(), Some(d));
    }

    #[test]
    fn missing_tag_means_latest() {
        let r = ImageRef::parse("localhost:5000/hello").unwrap();
        assert_eq!(r.tag(), Some("latest"));
    }

    #[test]
    fn rejects_invalid_references() {
        for bad in ["", "UPPER/Case:tag", "host/repo@sha256:short", "a:b:c:d"] {
            assert!(
                matches!(ImageRef::parse(bad), Err(Error::InvalidReference { .. })),
                "{bad} should be invalid"
            );
        }
    }

    #[test]
    fn loopback_registries() {
        assert!(is_loopback_registry("localhost"));
        assert!(is_loopback_registry("localhost:5000"));
        assert!(is_loopback_registry("127.0.0.1:5000"));
        assert!(is_loopback_registry("127.1.2.3"));
        assert!(is_loopback_registry("[::1]:5000"));
        assert!(!is_loopback_registry("registry.example.com:5000"));
        assert!(!is_loopback_registry("10.0.0.1:5000"));
        assert_eq!(registry_host("[::1]:5000"), "::1");
        assert_eq!(registry_host("example.com"), "example.com");
    }
}
