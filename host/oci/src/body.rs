//! Reading registry responses without trusting their size: every body is
//! read chunk by chunk and refused as soon as it passes its limit, so an
//! endless or oversized response costs at most the limit in memory.

use oci_client::errors::{OciDistributionError, OciEnvelope};

/// The largest error body read from a registry: 64 KiB.
pub const MAX_ERROR_BODY: u64 = 64 << 10;

/// Why a body could not be read.
#[derive(Debug)]
pub(crate) enum BodyError {
    /// More than `limit` bytes.
    TooLarge { limit: u64 },
    /// The transport failed (or timed out) while reading.
    Transport(reqwest::Error),
}

/// Reads `response`'s body, refusing it once it passes `limit` bytes.
pub(crate) async fn read_limited(
    mut response: reqwest::Response,
    limit: u64,
) -> Result<Vec<u8>, BodyError> {
    if response.content_length().is_some_and(|len| len > limit) {
        return Err(BodyError::TooLarge { limit });
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(BodyError::Transport)? {
        if body.len() as u64 + chunk.len() as u64 > limit {
            return Err(BodyError::TooLarge { limit });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The error a response other than 200 stands for, as oci-client reports
/// it (its body read up to [`MAX_ERROR_BODY`]).
pub(crate) async fn status_error(response: reqwest::Response) -> OciDistributionError {
    let status = response.status();
    let url = response.url().to_string();
    if status == reqwest::StatusCode::UNAUTHORIZED {
        return OciDistributionError::UnauthorizedError { url };
    }
    if status.is_success() {
        return OciDistributionError::SpecViolationError(format!(
            "expected HTTP status 200 OK, got {status}"
        ));
    }
    let body = match read_limited(response, MAX_ERROR_BODY).await {
        Ok(body) => body,
        Err(BodyError::TooLarge { limit }) => {
            format!("(an error body over {limit} bytes, not read)").into_bytes()
        }
        Err(BodyError::Transport(e)) => return OciDistributionError::RequestError(e),
    };
    if status.is_client_error()
        && let Ok(envelope) = serde_json::from_slice::<OciEnvelope>(&body)
    {
        return OciDistributionError::RegistryError { envelope, url };
    }
    OciDistributionError::ServerError {
        code: status.as_u16(),
        url,
        message: String::from_utf8_lossy(&body).into_owned(),
    }
}
