//! The registry's token handshake (the Docker registry token protocol),
//! done by xfn rather than oci-client so that every byte a registry or its
//! token server sends is read against a bound: `GET /v2/`, and if that
//! answers with a `Bearer` challenge, `GET <realm>?scope=…&service=…`,
//! whose body is read up to [`MAX_TOKEN_BODY`].

use http::header::WWW_AUTHENTICATE;
use oci_client::RegistryOperation;
use oci_client::errors::OciDistributionError;
use oci_client::secrets::RegistryAuth;
use serde::Deserialize;

use crate::body::{BodyError, read_limited, status_error};

/// The largest token response read: 1 MiB. Real ones are a few KiB (a JWT
/// and its expiry).
pub const MAX_TOKEN_BODY: u64 = 1 << 20;

/// Why the handshake failed.
#[derive(Debug)]
pub(crate) enum HandshakeError {
    /// A request could not be sent, or its answer not read.
    Transport(reqwest::Error),
    /// The token response passed [`MAX_TOKEN_BODY`].
    TokenTooLarge { limit: u64 },
    /// The token server refused, or answered something that is not a token.
    Refused(OciDistributionError),
}

/// A `Bearer` challenge: where to ask for a token, and for which service.
#[derive(Debug, PartialEq, Eq)]
struct Challenge {
    realm: String,
    service: Option<String>,
}

/// A token server's answer: the token under either of its two names.
#[derive(Deserialize)]
struct TokenReply {
    token: Option<String>,
    access_token: Option<String>,
}

/// Performs the handshake with the registry at `base` (`scheme://host`)
/// for `repository` and `op`. Returns the bearer token to send, or `None`
/// when the registry asks for none (anonymous access, or HTTP Basic).
/// Credentials that already are a token are used as they are.
pub(crate) async fn bearer_token(
    http: &reqwest::Client,
    base: &str,
    repository: &str,
    auth: &RegistryAuth,
    op: RegistryOperation,
) -> Result<Option<String>, HandshakeError> {
    if let RegistryAuth::Bearer(token) = auth {
        return Ok(Some(token.clone()));
    }
    let probe = http
        .get(format!("{base}/v2/"))
        .send()
        .await
        .map_err(HandshakeError::Transport)?;
    let challenge = probe
        .headers()
        .get_all(WWW_AUTHENTICATE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .find_map(bearer_challenge);
    // The probe's body is not read: only its headers matter.
    drop(probe);
    let Some(challenge) = challenge else {
        return Ok(None);
    };
    let scope = match op {
        RegistryOperation::Pull => format!("repository:{repository}:pull"),
        RegistryOperation::Push => format!("repository:{repository}:pull,push"),
    };
    let mut request = http
        .get(&challenge.realm)
        .query(&[("scope", scope.as_str())]);
    if let Some(service) = &challenge.service {
        request = request.query(&[("service", service.as_str())]);
    }
    if let RegistryAuth::Basic(user, password) = auth {
        request = request.basic_auth(user, Some(password));
    }
    let response = request.send().await.map_err(HandshakeError::Transport)?;
    if response.status() != reqwest::StatusCode::OK {
        return Err(HandshakeError::Refused(status_error(response).await));
    }
    let body = read_limited(response, MAX_TOKEN_BODY)
        .await
        .map_err(|e| match e {
            BodyError::TooLarge { limit } => HandshakeError::TokenTooLarge { limit },
            BodyError::Transport(e) => HandshakeError::Transport(e),
        })?;
    parse_token(&body)
        .map(Some)
        .map_err(HandshakeError::Refused)
}

/// The first `Bearer` challenge of a `WWW-Authenticate` value, if any.
fn bearer_challenge(header: &str) -> Option<Challenge> {
    http_auth::ChallengeParser::new(header)
        .filter_map(Result::ok)
        .filter(|challenge| challenge.scheme.eq_ignore_ascii_case("Bearer"))
        .find_map(|challenge| {
            let param = |name: &str| {
                challenge
                    .params
                    .iter()
                    .find(|(key, _)| key.eq_ignore_ascii_case(name))
                    .map(|(_, value)| value.to_unescaped())
            };
            Some(Challenge {
                realm: param("realm")?,
                service: param("service"),
            })
        })
}

/// The token of a token server's JSON answer.
fn parse_token(body: &[u8]) -> Result<String, OciDistributionError> {
    let reply: TokenReply = serde_json::from_slice(body).map_err(|e| {
        OciDistributionError::RegistryTokenDecodeError(format!("the token response: {e}"))
    })?;
    reply
        .token
        .or(reply.access_token)
        .filter(|token| !token.is_empty())
        .ok_or_else(|| {
            OciDistributionError::RegistryTokenDecodeError(String::from(
                "the token response has no `token` or `access_token`",
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_bearer_challenge_among_others() {
        let header = r#"Basic realm="x", Bearer realm="https://auth.example.com/token",service="registry.example.com",scope="repository:a:pull""#;
        assert_eq!(
            bearer_challenge(header),
            Some(Challenge {
                realm: String::from("https://auth.example.com/token"),
                service: Some(String::from("registry.example.com")),
            })
        );
    }

    #[test]
    fn a_bearer_challenge_needs_a_realm() {
        assert_eq!(bearer_challenge(r#"Bearer service="s""#), None);
        assert_eq!(bearer_challenge(r#"Basic realm="registry""#), None);
        assert_eq!(bearer_challenge("not a challenge ,,, ="), None);
    }

    #[test]
    fn tokens_come_under_either_name() {
        assert_eq!(
            parse_token(br#"{"token":"a","expires_in":60}"#).unwrap(),
            "a"
        );
        assert_eq!(parse_token(br#"{"access_token":"b"}"#).unwrap(), "b");
        for bad in [&br#"{"token":""}"#[..], br#"{}"#, b"<html>"] {
            let err = parse_token(bad).unwrap_err().to_string();
            assert!(err.contains("token response"), "{err}");
        }
    }
}
