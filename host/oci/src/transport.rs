//! Connecting to a registry: TLS (rustls with the ring provider, extra CA
//! certificates), plain HTTP for insecure and loopback registries, and the
//! token handshake (see [`crate::token`]).

use oci_client::client::{Certificate, CertificateEncoding, ClientConfig, ClientProtocol};
use oci_client::errors::OciDistributionError;
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, RegistryOperation};
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;

use crate::auth;
use crate::error::{ConnectFailure, Error, Result, connect_failure, from_oci};
use crate::options::RegistryOptions;
use crate::reference::ImageRef;
use crate::token::{self, HandshakeError};

/// An authenticated connection to the registry of one reference.
pub(crate) struct Session {
    pub client: Client,
    pub auth: RegistryAuth,
    pub reference: ImageRef,
    /// The HTTP client of pulls, whose bodies xfn reads itself (bounded).
    http: reqwest::Client,
    /// `https` or `http`, as the handshake settled.
    scheme: &'static str,
    /// The bearer token the handshake returned, if any.
    token: Option<String>,
}

impl Session {
    /// Connects to `reference`'s registry for `op`: reads credentials,
    /// picks HTTPS or plain HTTP, and performs the registry's auth
    /// handshake (which also tells whether it is up).
    ///
    /// A registry marked insecure is reached over plain HTTP. A loopback
    /// registry is tried over HTTPS first and over plain HTTP if it does not
    /// speak TLS (as Docker does).
    pub async fn open(
        reference: &ImageRef,
        op: RegistryOperation,
        options: &RegistryOptions,
    ) -> Result<Session> {
        install_crypto_provider();
        let registry = reference.registry();
        let auth = auth::credentials_for(registry, options).await?;
        let certs = read_ca_certs(options)?;
        let insecure = options.is_insecure(registry);
        let http = build_http(reference, &certs, options)?;
        let mut scheme = if insecure { "http" } else { "https" };
        let token = match handshake(&http, scheme, reference, &auth, op).await {
            Err(HandshakeError::Transport(e))
                if !insecure
                    && reference.is_loopback()
                    && connect_failure(&e) == ConnectFailure::NotTls =>
            {
                tracing::debug!("{registry} does not speak TLS; using plain HTTP (loopback)");
                scheme = "http";
                handshake(&http, scheme, reference, &auth, op).await
            }
            other => other,
        }
        .map_err(|e| handshake_error(reference, e))?;
        let protocol = if scheme == "http" {
            ClientProtocol::Http
        } else {
            ClientProtocol::Https
        };
        let client = build_client(reference, protocol, &certs, options)?;
        if op == RegistryOperation::Push {
            // Pushes go through oci-client: hand it the token (which costs
            // no request), or the credentials when the registry asked for
            // no token. (oci-client then probes `/v2/` once more itself; a
            // registry that only now turns to tokens would get its token
            // read unbounded. Pulls never reach that code.)
            let auth = token
                .clone()
                .map_or_else(|| auth.clone(), RegistryAuth::Bearer);
            client
                .auth(reference.oci(), &auth, op)
                .await
                .map_err(|e| from_oci(reference.text(), registry, e))?;
        }
        Ok(Session {
            client,
            auth,
            reference: reference.clone(),
            http,
            scheme,
            token,
        })
    }

    /// GETs `path` (under `/v2/<repository>/`) with the session's
    /// credentials; a status other than 200 is an error, its body read
    /// only up to [`crate::body::MAX_ERROR_BODY`].
    pub async fn get(&self, path: &str, accept: Option<&str>) -> Result<reqwest::Response> {
        let oci = self.reference.oci();
        let url = format!(
            "{}://{}/v2/{}/{path}",
            self.scheme,
            oci.resolve_registry(),
            oci.repository()
        );
        let mut request = self.http.get(&url);
        if let Some(accept) = accept {
            request = request.header(http::header::ACCEPT, accept);
        }
        request = match (&self.token, &self.auth) {
            (Some(token), _) => request.bearer_auth(token),
            (None, RegistryAuth::Basic(user, password)) => request.basic_auth(user, Some(password)),
            _ => request,
        };
        let response = request
            .send()
            .await
            .map_err(|e| self.error(OciDistributionError::RequestError(e)))?;
        if response.status() == reqwest::StatusCode::OK {
            return Ok(response);
        }
        Err(self.error(crate::body::status_error(response).await))
    }

    /// Maps an oci-client error to ours, naming this session's reference.
    pub fn error(&self, err: OciDistributionError) -> Error {
        from_oci(self.reference.text(), self.reference.registry(), err)
    }
}

/// The token handshake with `reference`'s registry over `scheme`.
async fn handshake(
    http: &reqwest::Client,
    scheme: &str,
    reference: &ImageRef,
    auth: &RegistryAuth,
    op: RegistryOperation,
) -> std::result::Result<Option<String>, HandshakeError> {
    let oci = reference.oci();
    let base = format!("{scheme}://{}", oci.resolve_registry());
    token::bearer_token(http, &base, oci.repository(), auth, op).await
}

/// Our error for a failed handshake with `reference`'s registry.
fn handshake_error(reference: &ImageRef, err: HandshakeError) -> Error {
    let registry = reference.registry();
    match err {
        HandshakeError::Transport(e) => from_oci(
            reference.text(),
            registry,
            OciDistributionError::RequestError(e),
        ),
        HandshakeError::Refused(e) => from_oci(reference.text(), registry, e),
        HandshakeError::TokenTooLarge { limit } => Error::BodyTooLarge {
            reference: reference.text().to_owned(),
            registry: registry.to_owned(),
            what: String::from("token response"),
            limit,
        },
    }
}

/// Makes ring the process's rustls crypto provider, unless one is set.
fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may have won the race; either provider is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

fn build_client(
    reference: &ImageRef,
    protocol: ClientProtocol,
    certs: &[Certificate],
    options: &RegistryOptions,
) -> Result<Client> {
    let config = ClientConfig {
        protocol,
        extra_root_certificates: certs.to_vec(),
        connect_timeout: Some(options.connect_timeout),
        read_timeout: Some(options.read_timeout),
        user_agent: concat!("xfn/", env!("CARGO_PKG_VERSION")),
        // Index entries are chosen by xfn (the wasm entry), not by platform.
        platform_resolver: None,
        ..ClientConfig::default()
    };
    Client::try_from(config).map_err(|e| Error::Registry {
        reference: reference.text().to_owned(),
        detail: format!("cannot set up the HTTP client: {e}"),
    })
}

/// The HTTP client of pulls: the same TLS roots and timeouts as
/// oci-client's, with rustls and the ring provider.
fn build_http(
    reference: &ImageRef,
    certs: &[Certificate],
    options: &RegistryOptions,
) -> Result<reqwest::Client> {
    let fail = |detail: String| Error::Registry {
        reference: reference.text().to_owned(),
        detail,
    };
    let mut roots = Vec::with_capacity(certs.len());
    for cert in certs {
        roots.push(
            reqwest::Certificate::from_der(&cert.data)
                .map_err(|e| fail(format!("cannot use a CA certificate: {e}")))?,
        );
    }
    reqwest::Client::builder()
        .tls_certs_merge(roots)
        .connect_timeout(options.connect_timeout)
        .read_timeout(options.read_timeout)
        .user_agent(concat!("xfn/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| fail(format!("cannot set up the HTTP client: {e}")))
}

/// Reads every certificate of every `--ca-cert` PEM file.
fn read_ca_certs(options: &RegistryOptions) -> Result<Vec<Certificate>> {
    let mut certs = Vec::new();
    for path in &options.ca_certs {
        let fail = |reason: String| Error::CaCert {
            path: path.clone(),
            reason,
        };
        let pem =
            xfn_component::localfile::read(path, xfn_component::localfile::Limit::CREDENTIALS)
                .map_err(|e| fail(e.to_string()))?;
        let iter = CertificateDer::pem_slice_iter(&pem);
        let before = certs.len();
        for cert in iter {
            let cert = cert.map_err(|e| fail(format!("bad PEM: {e}")))?;
            certs.push(Certificate {
                encoding: CertificateEncoding::Der,
                data: cert.as_ref().to_vec(),
            });
        }
        if certs.len() == before {
            return Err(fail(String::from("no PEM certificate in the file")));
        }
    }
    Ok(certs)
}
