//! mTLS whose certificates change while the server runs: one certificate
//! per function, picked by the server name the client sends (SNI), and a
//! client CA that can be replaced.
//!
//! Crossplane dials each function at `<service>.<namespace>:9443` and sets
//! no explicit server name, so its TLS client sends that host as SNI and
//! checks the certificate against it. One xfn port serves every function,
//! so the certificate is chosen per connection. Connections keep the
//! certificate they started with; new ones get the current set, so
//! rotation needs no restart.

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use rustls::crypto::CryptoProvider;
use rustls::server::{ClientHello, ResolvesServerCert, WebPkiClientVerifier};
use rustls::sign::CertifiedKey;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc, watch};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

use super::tls::{TlsError, TlsFiles};

/// Longest a client may take to finish its TLS handshake, from its
/// connection.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Most handshakes in progress at once; more connections wait to start one.
/// A connection takes a slot only once its first bytes (the ClientHello)
/// arrive, so idle connections hold none.
const MAX_HANDSHAKES: usize = 256;
/// Most connections waiting for their first bytes at once; past it, new
/// connections wait to be accepted.
const MAX_SILENT_CONNECTIONS: usize = 4096;

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn invalid(what: &str) -> impl FnOnce(String) -> TlsError + '_ {
    move |reason| TlsError::Invalid {
        what: what.to_owned(),
        reason,
    }
}

/// Certificates by server name, and the CA clients must chain to.
#[derive(Default)]
pub struct DynamicTls {
    certs: Arc<Certificates>,
    config: RwLock<Option<Arc<rustls::ServerConfig>>>,
}

impl std::fmt::Debug for DynamicTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicTls")
            .field("names", &self.certs.names())
            .field("client_ca", &self.acceptor().is_some())
            .finish()
    }
}

#[derive(Default)]
struct Certificates {
    by_name: RwLock<HashMap<String, Arc<CertifiedKey>>>,
    /// Served for any other name, or none (a server of static certificates).
    fallback: RwLock<Option<Arc<CertifiedKey>>>,
}

impl std::fmt::Debug for Certificates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.names()).finish()
    }
}

impl Certificates {
    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .by_name
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .keys()
            .cloned()
            .collect();
        names.sort();
        names
    }
}

impl ResolvesServerCert for Certificates {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        // No server name, or one nothing is served as: the fallback if
        // there is one, else the handshake fails.
        let named = hello.server_name().and_then(|name| {
            self.by_name
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .get(&name.to_ascii_lowercase())
                .cloned()
        });
        named.or_else(|| {
            self.fallback
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
        })
    }
}

impl DynamicTls {
    /// No certificates and no client CA yet: every handshake fails until
    /// both are set.
    pub fn new() -> DynamicTls {
        DynamicTls::default()
    }

    /// Requires clients to present a certificate from the CA in `ca_pem`
    /// (one or more PEM certificates), from the next connection on.
    pub fn set_client_ca(&self, ca_pem: &[u8]) -> Result<(), TlsError> {
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(ca_pem) {
            let cert = cert.map_err(|e| invalid("client CA")(e.to_string()))?;
            roots
                .add(cert)
                .map_err(|e| invalid("client CA")(e.to_string()))?;
        }
        if roots.is_empty() {
            return Err(invalid("client CA")("no certificate in it".into()));
        }
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
            .build()
            .map_err(|e| invalid("client CA")(e.to_string()))?;
        let mut config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| invalid("TLS settings")(e.to_string()))?
            .with_client_cert_verifier(verifier)
            .with_cert_resolver(self.certs.clone());
        config.alpn_protocols = vec![b"h2".to_vec()];
        *self.config.write().unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(config));
        Ok(())
    }

    /// Static certificates (`serve --tls-certs-dir`): the certificate in
    /// `files` for every server name, clients from its CA. Served through
    /// the same accept loop as changing ones, so its handshake and HTTP/2
    /// start are bounded alike.
    pub fn from_files(files: &TlsFiles) -> Result<DynamicTls, TlsError> {
        let tls = DynamicTls::new();
        tls.set_client_ca(&files.ca)?;
        let certified = certified_key(&files.cert, &files.key)?;
        *tls.certs
            .fallback
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(certified);
        Ok(tls)
    }

    /// Serves `names` with the certificate chain and key in `cert_pem` and
    /// `key_pem`, replacing what they were served with.
    pub fn set_certificate(
        &self,
        names: &[String],
        cert_pem: &[u8],
        key_pem: &[u8],
    ) -> Result<(), TlsError> {
        let certified = certified_key(cert_pem, key_pem)?;
        let mut by_name = self
            .certs
            .by_name
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        for name in names {
            by_name.insert(name.to_ascii_lowercase(), certified.clone());
        }
        Ok(())
    }

    /// Stops serving `names`.
    pub fn remove(&self, names: &[String]) {
        let mut by_name = self
            .certs
            .by_name
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        for name in names {
            by_name.remove(&name.to_ascii_lowercase());
        }
    }

    /// The server names a certificate is set for, sorted.
    pub fn names(&self) -> Vec<String> {
        self.certs.names()
    }

    fn acceptor(&self) -> Option<TlsAcceptor> {
        self.config
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .map(TlsAcceptor::from)
    }
}

/// A certificate chain and its key, from PEM.
fn certified_key(cert_pem: &[u8], key_pem: &[u8]) -> Result<Arc<CertifiedKey>, TlsError> {
    let chain = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid("server certificate")(e.to_string()))?;
    if chain.is_empty() {
        return Err(invalid("server certificate")("no certificate in it".into()));
    }
    let key =
        PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| invalid("server key")(e.to_string()))?;
    let certified = CertifiedKey::from_der(chain, key, &provider())
        .map_err(|e| invalid("server certificate")(e.to_string()))?;
    Ok(Arc::new(certified))
}

/// Accepts connections on `listener` and completes their TLS handshakes,
/// each bounded in time, until `stop` turns true. Connections that fail
/// the handshake are dropped and logged.
pub(crate) fn incoming(
    listener: TcpListener,
    tls: Arc<DynamicTls>,
    mut stop: watch::Receiver<bool>,
) -> impl futures_util::Stream<Item = io::Result<TlsStream<TcpStream>>> + Send + 'static {
    let (ready, streams) = mpsc::channel::<TlsStream<TcpStream>>(64);
    tokio::spawn(async move {
        let handshakes = Arc::new(Semaphore::new(MAX_HANDSHAKES));
        let silent = Arc::new(Semaphore::new(MAX_SILENT_CONNECTIONS));
        loop {
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                _ = stop.wait_for(|stop| *stop) => return,
                () = ready.closed() => return,
            };
            let (socket, peer) = match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: pause, don't spin.
                    tracing::warn!("cannot accept a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let _ = socket.set_nodelay(true);
            let Ok(waiting) = silent.clone().acquire_owned().await else {
                return;
            };
            let Some(acceptor) = tls.acceptor() else {
                tracing::warn!(%peer, "refusing a connection: no client CA is set yet");
                continue;
            };
            let (ready, handshakes) = (ready.clone(), handshakes.clone());
            tokio::spawn(async move {
                let handshake = async {
                    // Nothing sent yet costs no handshake slot (a peek
                    // waits for a byte that is really there).
                    if socket.peek(&mut [0u8; 1]).await? == 0 {
                        return Err(io::Error::from(io::ErrorKind::UnexpectedEof));
                    }
                    drop(waiting);
                    let _permit = handshakes.acquire_owned().await.map_err(io::Error::other)?;
                    acceptor.accept(socket).await
                };
                match tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake).await {
                    Ok(Ok(stream)) => {
                        let _ = ready.send(stream).await;
                    }
                    Ok(Err(e)) => tracing::debug!(%peer, "TLS handshake failed: {e}"),
                    Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                }
            });
        }
    });
    futures_util::stream::unfold(streams, |mut streams| async move {
        streams.recv().await.map(|s| (Ok(s), streams))
    })
}
