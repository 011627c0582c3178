//! Errors a user can act on, each naming the reference it concerns.

use std::path::PathBuf;

use oci_client::errors::{OciDistributionError, OciErrorCode};

/// Everything that can go wrong pulling, pushing or inspecting a function.
///
/// Each variant's fields are named for what they hold (`reference`,
/// `reason`, `path`, `error`); the variant's message says how they read.
#[allow(missing_docs)]
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The reference can't be parsed.
    #[error("invalid reference `{reference}`: {reason}")]
    InvalidReference { reference: String, reason: String },

    /// The registry has no such repository, tag or digest.
    #[error("{reference}: not found in the registry (unknown repository, tag or digest): {detail}")]
    NotFound { reference: String, detail: String },

    /// The registry refused the credentials (or needs some).
    #[error(
        "{reference}: authentication to {registry} failed: {detail} \
         (check the credentials in the Docker config or the pull secret)"
    )]
    Unauthorized {
        reference: String,
        registry: String,
        detail: String,
    },

    /// The registry can't be reached: down, refusing connections, timing out
    /// or failing with a server error.
    #[error("{reference}: registry {registry} is unavailable: {detail}")]
    Unavailable {
        reference: String,
        registry: String,
        detail: String,
    },

    /// The TLS connection failed: an untrusted or invalid certificate.
    #[error(
        "{reference}: TLS connection to {registry} failed: {detail} \
         (pass the registry's CA with --ca-cert, or mark it with --insecure-registry if it speaks plain HTTP)"
    )]
    Tls {
        reference: String,
        registry: String,
        detail: String,
    },

    /// The artifact has no layer of a wasm media type.
    #[error(
        "{reference}: no wasm component layer in the image (layer media types: {}); \
         expected one of: {}",
        found.join(", "),
        crate::layout::WASM_LAYER_MEDIA_TYPES.join(", ")
    )]
    WrongMediaType {
        reference: String,
        found: Vec<String>,
    },

    /// An image index with no wasm entry (e.g. a multi-platform container
    /// image).
    #[error(
        "{reference}: unsupported artifact layout: the image index has no wasm entry \
         (platform wasm/wasip2); its entries: {}",
        if platforms.is_empty() { String::from("none") } else { platforms.join(", ") }
    )]
    NoWasmPlatform {
        reference: String,
        platforms: Vec<String>,
    },

    /// An image index (of a container image) with no entry for this
    /// host's platform, nor a wasm one.
    #[error(
        "{reference}: the image index has no entry for {wanted}; it offers {} \
         (push the function built for {wanted}, or run it on a host of a platform it offers)",
        if offered.is_empty() { String::from("none") } else { offered.join(", ") }
    )]
    NoPlatformEntry {
        reference: String,
        wanted: String,
        offered: Vec<String>,
    },

    /// A container image built for another platform than this host's.
    #[error(
        "{reference}: the image is built for {found}, not {wanted} (this host's platform); \
         push the function built for {wanted}, or an image index with a {wanted} entry"
    )]
    WrongPlatform {
        reference: String,
        wanted: String,
        found: String,
    },

    /// A container image's config can't be read.
    #[error("{reference}: invalid image config {digest}: {reason}")]
    ImageConfig {
        reference: String,
        digest: String,
        reason: String,
    },

    /// A container image layer xfn can't unpack.
    #[error("{reference}: layer {digest} has media type `{media_type}`: {reason}")]
    LayerMediaType {
        reference: String,
        digest: String,
        media_type: String,
        reason: String,
    },

    /// A container image layer is larger than the configured limit.
    #[error(
        "{reference}: image layer {digest} is {size} bytes, over the limit of {limit} bytes \
         (raise it with --max-image-layer-size)"
    )]
    ImageLayerTooLarge {
        reference: String,
        digest: String,
        size: u64,
        limit: u64,
    },

    /// A container image's layers together are larger than the limit.
    #[error(
        "{reference}: the image's {layers} layers are {size} bytes together, over the limit \
         of {limit} bytes (raise it with --max-image-size)"
    )]
    ImageTooLarge {
        reference: String,
        layers: usize,
        size: u64,
        limit: u64,
    },

    /// A container image layer can't be stored in the cache, where it is
    /// kept (it is never held in memory).
    /// (The cause's text is part of the message, so it is no `source`.)
    #[error(
        "{reference}: cannot store layer {digest} in the cache ({}): {error} \
         (free space there, or pick another cache with --cache-dir)",
        path.display()
    )]
    LayerCache {
        reference: String,
        digest: String,
        path: PathBuf,
        error: std::io::Error,
    },

    /// The artifact's manifest or index doesn't have a layout xfn can run.
    #[error("{reference}: unsupported artifact layout: {reason}")]
    Layout { reference: String, reason: String },

    /// A blob's content doesn't hash to the digest that names it.
    #[error(
        "{reference}: digest mismatch for {what}: expected {expected}, got {actual}; refusing it"
    )]
    DigestMismatch {
        reference: String,
        what: String,
        expected: String,
        actual: String,
    },

    /// A layer is larger than the configured limit.
    #[error(
        "{reference}: layer {digest} is {size} bytes, over the limit of {limit} bytes \
         (raise it with --max-layer-size)"
    )]
    LayerTooLarge {
        reference: String,
        digest: String,
        size: u64,
        limit: u64,
    },

    /// The component imports interfaces the host does not provide.
    #[error(
        "{reference}: the component imports interfaces outside xfn's WIT world: {}; \
         allowed: {}",
        imports.join(", "),
        xfn_component::ALLOWED_IMPORTS.join(", ")
    )]
    ForbiddenImports {
        reference: String,
        imports: Vec<String>,
    },

    /// The bytes are not a wasm component xfn can run.
    #[error("{reference}: not a usable wasm component: {reason}")]
    InvalidComponent { reference: String, reason: String },

    /// The `xfn` binary given for a runnable image can't run there.
    #[error("{path}: cannot be a function image's entrypoint: {reason}")]
    EntrypointBinary { path: String, reason: String },

    /// The package metadata (`package.yaml` or annotations) can't be read.
    #[error("{reference}: invalid package metadata: {reason}")]
    Metadata { reference: String, reason: String },

    /// The pull policy is `Never` and the cache doesn't hold the artifact.
    #[error(
        "{reference}: not in the cache at {} and the pull policy is Never \
         (pull it first with `xfn pull {reference}`)",
        cache.display()
    )]
    NotCached { reference: String, cache: PathBuf },

    /// The cache directory can't be read or written.
    /// (The cause's text is part of the message, so it is no `source`.)
    #[error("cache {}: {error}", path.display())]
    Cache {
        path: PathBuf,
        error: std::io::Error,
    },

    /// Credentials (Docker config, credential helper, pull secret) can't be read.
    #[error("credentials from {source_name}: {reason}")]
    Credentials { source_name: String, reason: String },

    /// A CA certificate file can't be read.
    #[error("CA certificate {}: {reason}", path.display())]
    CaCert { path: PathBuf, reason: String },

    /// A local component file can't be read.
    /// (The cause's text is part of the message, so it is no `source`.)
    #[error("cannot read {}: {error}", path.display())]
    ReadFile {
        path: PathBuf,
        error: std::io::Error,
    },

    /// The registry sent a body over its limit (refused while streaming).
    #[error(
        "{reference}: registry {registry} sent a {what} over the limit of {limit} bytes; \
         refusing it"
    )]
    BodyTooLarge {
        reference: String,
        registry: String,
        what: String,
        limit: u64,
    },

    /// A pull did not finish within its deadline.
    #[error(
        "{reference}: pulling from registry {registry} did not finish within {}s \
         (raise it with --pull-timeout)",
        deadline.as_secs_f64()
    )]
    Deadline {
        reference: String,
        registry: String,
        deadline: std::time::Duration,
    },

    /// Any other error the registry returned.
    #[error("{reference}: registry error: {detail}")]
    Registry { reference: String, detail: String },
}

impl Error {
    /// Whether the registry has the image, but it carries no wasm component:
    /// a conventional (container) function package.
    pub fn is_not_wasm(&self) -> bool {
        matches!(
            self,
            Error::WrongMediaType { .. } | Error::NoWasmPlatform { .. }
        )
    }
}

impl Error {
    /// Whether the registry could not be reached (down, or too slow): the
    /// package's kind is unknown, and a runtime on another network path
    /// (the kubelet pulling a container image) may still fetch it. A
    /// registry that refuses the credentials is not unreachable: Crossplane
    /// pulls with the same pull secrets, so that is the user's to fix.
    pub fn is_unreachable(&self) -> bool {
        matches!(self, Error::Unavailable { .. } | Error::Deadline { .. })
    }
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Maps an `oci-client` error to the error a user can act on.
pub(crate) fn from_oci(reference: &str, registry: &str, err: OciDistributionError) -> Error {
    let reference = reference.to_owned();
    let registry = registry.to_owned();
    match err {
        OciDistributionError::UnauthorizedError { url } => Error::Unauthorized {
            reference,
            registry,
            detail: format!("401 Unauthorized from {url}"),
        },
        OciDistributionError::AuthenticationFailure(detail) => Error::Unauthorized {
            reference,
            registry,
            detail,
        },
        OciDistributionError::RegistryError { envelope, url } => {
            let detail = format!("{envelope} ({url})");
            let codes = || envelope.errors.iter().map(|e| &e.code);
            if codes().any(|c| matches!(c, OciErrorCode::Unauthorized | OciErrorCode::Denied)) {
                Error::Unauthorized {
                    reference,
                    registry,
                    detail,
                }
            } else if codes().any(|c| {
                matches!(
                    c,
                    OciErrorCode::ManifestUnknown
                        | OciErrorCode::NameUnknown
                        | OciErrorCode::NotFound
                        | OciErrorCode::BlobUnknown
                )
            }) {
                Error::NotFound { reference, detail }
            } else {
                Error::Registry { reference, detail }
            }
        }
        OciDistributionError::ServerError { code, url, message } => {
            let detail = format!("HTTP {code} from {url}: {}", message.trim());
            from_status(code, reference, registry, detail)
        }
        OciDistributionError::ImageManifestNotFoundError(detail) => {
            Error::NotFound { reference, detail }
        }
        OciDistributionError::DigestError(oci_client::errors::DigestError::VerificationError {
            expected,
            actual,
        }) => Error::DigestMismatch {
            reference,
            what: String::from("manifest"),
            expected,
            actual,
        },
        OciDistributionError::IncompatibleLayerMediaTypeError(found) => Error::WrongMediaType {
            reference,
            found: vec![found],
        },
        OciDistributionError::RequestError(e) => from_request(reference, registry, &e),
        other => Error::Registry {
            reference,
            detail: other.to_string(),
        },
    }
}

/// What a failed HTTP request says about the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConnectFailure {
    /// The peer answered, but not with TLS (a plain-HTTP registry).
    NotTls,
    /// The peer's certificate was refused.
    Certificate,
    /// Anything else: refused, reset, timed out, DNS.
    Other,
}

/// Classifies a transport error by walking its source chain.
pub(crate) fn connect_failure(err: &(dyn std::error::Error + 'static)) -> ConnectFailure {
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = next {
        match e.downcast_ref::<rustls::Error>() {
            Some(rustls::Error::InvalidMessage(_))
            | Some(rustls::Error::InappropriateMessage { .. }) => {
                return ConnectFailure::NotTls;
            }
            Some(rustls::Error::InvalidCertificate(_))
            | Some(rustls::Error::NoCertificatesPresented) => {
                return ConnectFailure::Certificate;
            }
            Some(_) => return ConnectFailure::Other,
            None => {}
        }
        next = cause(e);
    }
    ConnectFailure::Other
}

/// The next error of a chain. `io::Error::source` skips the error it
/// wraps, so an `io::Error` yields its inner error instead.
fn cause<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> Option<&'a (dyn std::error::Error + 'static)> {
    match e
        .downcast_ref::<std::io::Error>()
        .and_then(|io| io.get_ref())
    {
        Some(inner) => Some(inner),
        None => e.source(),
    }
}

/// The full chain of an error's messages, joined by `: `.
pub(crate) fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![err.to_string()];
    let mut next = cause(err);
    while let Some(e) = next {
        let text = e.to_string();
        if parts.last().is_none_or(|last| !last.contains(&text)) {
            parts.push(text);
        }
        next = cause(e);
    }
    parts.join(": ")
}

/// The error for an HTTP status a registry answered with.
fn from_status(code: u16, reference: String, registry: String, detail: String) -> Error {
    match code {
        401 | 403 => Error::Unauthorized {
            reference,
            registry,
            detail,
        },
        404 => Error::NotFound { reference, detail },
        500.. => Error::Unavailable {
            reference,
            registry,
            detail,
        },
        _ => Error::Registry { reference, detail },
    }
}

fn from_request(reference: String, registry: String, err: &reqwest::Error) -> Error {
    let detail = chain(err);
    if let Some(status) = err.status() {
        return from_status(status.as_u16(), reference, registry, detail);
    }
    match connect_failure(err) {
        ConnectFailure::Certificate => Error::Tls {
            reference,
            registry,
            detail,
        },
        ConnectFailure::NotTls => Error::Tls {
            reference,
            registry,
            detail: format!("{detail} (the registry does not speak TLS)"),
        },
        ConnectFailure::Other => Error::Unavailable {
            reference,
            registry,
            detail,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error and its causes, as a library user prints the chain.
    fn chain(error: &dyn std::error::Error) -> String {
        let mut text = error.to_string();
        let mut cause = error.source();
        while let Some(c) = cause {
            text.push_str(&format!(": {c}"));
            cause = c.source();
        }
        text
    }

    #[test]
    fn io_causes_are_said_once() {
        let io = || std::io::Error::other("disk on fire");
        for error in [
            Error::Cache {
                path: PathBuf::from("/cache/blobs"),
                error: io(),
            },
            Error::ReadFile {
                path: PathBuf::from("fn.wasm"),
                error: io(),
            },
        ] {
            let text = chain(&error);
            assert_eq!(text.matches("disk on fire").count(), 1, "{text}");
        }
    }
}
