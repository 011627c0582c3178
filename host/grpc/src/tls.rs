//! mTLS material in the layout Crossplane mounts into function pods, and a
//! small certificate authority to make it for tests and local use.
//!
//! A directory holds `tls.crt` (this side's certificate), `tls.key` (its
//! private key) and `ca.crt` (the CA that peers' certificates must chain to),
//! all PEM. Servers require a client certificate from `ca.crt`; clients
//! check the server's certificate against it.

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use tonic::transport::{Certificate, ClientTlsConfig, Identity};

/// The certificate file in a TLS directory.
pub const CERT_FILE: &str = "tls.crt";
/// The private key file in a TLS directory.
pub const KEY_FILE: &str = "tls.key";
/// The CA certificate file in a TLS directory.
pub const CA_FILE: &str = "ca.crt";

/// Why TLS material could not be read, written or made.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A file could not be read or written.
    #[error("{action} {path}: {error}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause (its text is part of the message).
        error: std::io::Error,
    },
    /// A directory to write keys into is a symbolic link, which could send
    /// them anywhere.
    #[error(
        "refusing to write TLS files into {path}: it is a symbolic link; remove it or choose another directory"
    )]
    Symlink {
        /// The directory.
        path: PathBuf,
    },
    /// A certificate or key could not be read.
    #[error("invalid {what}: {reason}")]
    Invalid {
        /// What was being read.
        what: String,
        /// The cause.
        reason: String,
    },
    /// A certificate or key could not be generated.
    #[error("cannot generate {what}: {reason}")]
    Generate {
        /// What was being generated.
        what: String,
        /// The cause.
        reason: String,
    },
}

/// A certificate, its key and the CA to trust, as PEM.
#[derive(Clone)]
pub struct TlsFiles {
    /// This side's certificate chain (`tls.crt`).
    pub cert: Vec<u8>,
    /// This side's private key (`tls.key`).
    pub key: Vec<u8>,
    /// The CA peers must present certificates from (`ca.crt`).
    pub ca: Vec<u8>,
}

impl std::fmt::Debug for TlsFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsFiles").finish_non_exhaustive()
    }
}

impl TlsFiles {
    /// Reads `tls.crt`, `tls.key` and `ca.crt` from `dir`.
    pub fn read_dir(dir: &Path) -> Result<TlsFiles, TlsError> {
        let read = |file: &str| {
            let path = dir.join(file);
            xfn_component::localfile::read(&path, xfn_component::localfile::Limit::CREDENTIALS)
                .map_err(|error| TlsError::Io {
                    action: "cannot read",
                    path,
                    error,
                })
        };
        Ok(TlsFiles {
            cert: read(CERT_FILE)?,
            key: read(KEY_FILE)?,
            ca: read(CA_FILE)?,
        })
    }

    /// Writes `tls.crt`, `tls.key` and `ca.crt` into `dir`, creating it
    /// (it must not be a symbolic link). Each file replaces any file or
    /// link of its name; the key is readable by its owner only.
    pub fn write_dir(&self, dir: &Path) -> Result<(), TlsError> {
        create_dir(dir)?;
        write_file(&dir.join(CERT_FILE), &self.cert, false)?;
        write_file(&dir.join(KEY_FILE), &self.key, true)?;
        write_file(&dir.join(CA_FILE), &self.ca, false)
    }

    /// Checks that the certificate chain, the key and the CA can be used
    /// by a server: each parses, and the key is the certificate's. Serving
    /// checks this before it listens.
    pub fn check_server(&self) -> Result<(), TlsError> {
        use rustls_pki_types::pem::PemObject;
        use rustls_pki_types::{CertificateDer, PrivateKeyDer};
        let invalid = |what: &str| {
            let what = what.to_owned();
            move |reason: String| TlsError::Invalid { what, reason }
        };
        let chain = CertificateDer::pem_slice_iter(&self.cert)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| invalid(CERT_FILE)(e.to_string()))?;
        if chain.is_empty() {
            return Err(invalid(CERT_FILE)("no certificate in it".into()));
        }
        let key = PrivateKeyDer::from_pem_slice(&self.key)
            .map_err(|e| invalid(KEY_FILE)(e.to_string()))?;
        let provider = rustls::crypto::ring::default_provider();
        rustls::sign::CertifiedKey::from_der(chain, key, &provider)
            .map_err(|e| invalid(&format!("{CERT_FILE} and {KEY_FILE}"))(e.to_string()))?;
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(&self.ca) {
            let cert = cert.map_err(|e| invalid(CA_FILE)(e.to_string()))?;
            roots
                .add(cert)
                .map_err(|e| invalid(CA_FILE)(e.to_string()))?;
        }
        if roots.is_empty() {
            return Err(invalid(CA_FILE)("no certificate in it".into()));
        }
        Ok(())
    }

    /// A client config that presents this certificate and expects the
    /// server's certificate, from the CA, to name `server_name`.
    pub(crate) fn client_config(&self, server_name: &str) -> ClientTlsConfig {
        ClientTlsConfig::new()
            .identity(Identity::from_pem(&self.cert, &self.key))
            .ca_certificate(Certificate::from_pem(&self.ca))
            .domain_name(server_name)
    }
}

/// Creates `dir` (and its parents) if missing, and refuses it if it is a
/// symbolic link.
fn create_dir(dir: &Path) -> Result<(), TlsError> {
    let io = |action| {
        move |error| TlsError::Io {
            action,
            path: dir.to_owned(),
            error,
        }
    };
    if let Ok(meta) = std::fs::symlink_metadata(dir)
        && meta.file_type().is_symlink()
    {
        return Err(TlsError::Symlink {
            path: dir.to_owned(),
        });
    }
    std::fs::create_dir_all(dir).map_err(io("cannot create"))
}

/// Writes `contents` to a new file next to `path`, then renames it over
/// `path`: an existing file or symbolic link there is replaced, never
/// written through, and the new file gets its own mode (0600 if
/// `private`, else 0644) rather than keeping an old one.
fn write_file(path: &Path, contents: &[u8], private: bool) -> Result<(), TlsError> {
    let io = |action| {
        move |error| TlsError::Io {
            action,
            path: path.to_owned(),
            error,
        }
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    // A fresh, exclusively created file, readable by its owner only.
    let mut file = tempfile::Builder::new()
        .prefix(".xfn-tls-")
        .tempfile_in(dir)
        .map_err(io("cannot write"))?;
    #[cfg(unix)]
    if !private {
        use std::os::unix::fs::PermissionsExt;
        file.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))
            .map_err(io("cannot write"))?;
    }
    #[cfg(not(unix))]
    let _ = private;
    std::io::Write::write_all(&mut file, contents).map_err(io("cannot write"))?;
    file.as_file().sync_all().map_err(io("cannot write"))?;
    file.persist(path)
        .map_err(|e| io("cannot replace")(e.error))?;
    Ok(())
}

/// The DNS names a function's Service answers to in namespace `namespace`:
/// `name`, `name.ns`, `name.ns.svc` and `name.ns.svc.cluster.local`.
pub fn service_names(function: &str, namespace: &str) -> Vec<String> {
    vec![
        function.to_owned(),
        format!("{function}.{namespace}"),
        format!("{function}.{namespace}.svc"),
        format!("{function}.{namespace}.svc.cluster.local"),
    ]
}

/// A self-signed certificate authority that issues server and client
/// certificates, like Crossplane's `crossplane-root-ca`.
pub struct CertificateAuthority {
    cert_pem: String,
    issuer: Issuer<'static, KeyPair>,
}

impl std::fmt::Debug for CertificateAuthority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CertificateAuthority")
            .finish_non_exhaustive()
    }
}

fn generate_error(what: impl Into<String>) -> impl FnOnce(rcgen::Error) -> TlsError {
    let what = what.into();
    move |e| TlsError::Generate {
        what,
        reason: e.to_string(),
    }
}

impl CertificateAuthority {
    /// Generates a new CA named `common_name`.
    pub fn generate(common_name: &str) -> Result<CertificateAuthority, TlsError> {
        let err = || generate_error(format!("CA {common_name:?}"));
        let key = KeyPair::generate().map_err(err())?;
        let mut params = CertificateParams::new(Vec::<String>::new()).map_err(err())?;
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let cert = params.self_signed(&key).map_err(err())?;
        Ok(CertificateAuthority {
            cert_pem: cert.pem(),
            issuer: Issuer::new(params, key),
        })
    }

    /// The CA whose certificate and key are `cert_pem` and `key_pem`, e.g.
    /// the `tls.crt` and `tls.key` of Crossplane's `crossplane-root-ca`
    /// Secret, whose key is an RSA key in PKCS#1 (`BEGIN RSA PRIVATE KEY`).
    /// PKCS#8 keys (RSA, ECDSA, Ed25519) are read too.
    pub fn from_pem(cert_pem: &str, key_pem: &str) -> Result<CertificateAuthority, TlsError> {
        use rustls_pki_types::pem::PemObject;
        use rustls_pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
        let invalid = |what: &str| {
            let what = what.to_owned();
            move |reason: String| TlsError::Invalid { what, reason }
        };
        let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes())
            .map_err(|e| invalid("CA key")(e.to_string()))?;
        let key = match key {
            PrivateKeyDer::Pkcs1(rsa) => PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
                pkcs1_to_pkcs8(rsa.secret_pkcs1_der()),
            )),
            other => other,
        };
        let key = KeyPair::try_from(&key).map_err(|e| invalid("CA key")(e.to_string()))?;
        let issuer = Issuer::from_ca_cert_pem(cert_pem, key)
            .map_err(|e| invalid("CA certificate")(e.to_string()))?;
        Ok(CertificateAuthority {
            cert_pem: cert_pem.to_owned(),
            issuer,
        })
    }

    /// The CA's certificate, PEM (what goes into `ca.crt`).
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    /// The CA's private key, PEM.
    pub fn key_pem(&self) -> String {
        self.issuer.key().serialize_pem()
    }

    /// Issues a server certificate for `dns_names` (the first is also its
    /// common name). IP addresses are allowed.
    pub fn issue_server(&self, dns_names: &[String]) -> Result<TlsFiles, TlsError> {
        let common_name = dns_names.first().map_or("server", String::as_str);
        self.issue(common_name, dns_names, ExtendedKeyUsagePurpose::ServerAuth)
    }

    /// Issues a client certificate named `common_name`.
    pub fn issue_client(&self, common_name: &str) -> Result<TlsFiles, TlsError> {
        self.issue(common_name, &[], ExtendedKeyUsagePurpose::ClientAuth)
    }

    fn issue(
        &self,
        common_name: &str,
        names: &[String],
        usage: ExtendedKeyUsagePurpose,
    ) -> Result<TlsFiles, TlsError> {
        let err = || generate_error(format!("certificate {common_name:?}"));
        let key = KeyPair::generate().map_err(err())?;
        let mut params = CertificateParams::new(names.to_vec()).map_err(err())?;
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![usage];
        params.use_authority_key_identifier_extension = true;
        let cert = params.signed_by(&key, &self.issuer).map_err(err())?;
        Ok(TlsFiles {
            cert: cert.pem().into_bytes(),
            key: key.serialize_pem().into_bytes(),
            ca: self.cert_pem.clone().into_bytes(),
        })
    }
}

/// Wraps an RSA key in PKCS#1 DER into a PKCS#8 `PrivateKeyInfo`, which
/// is what the certificate library reads: a SEQUENCE of version 0, the
/// `rsaEncryption` algorithm, and the PKCS#1 key as an OCTET STRING.
fn pkcs1_to_pkcs8(pkcs1: &[u8]) -> Vec<u8> {
    /// AlgorithmIdentifier { rsaEncryption (1.2.840.113549.1.1.1), NULL }.
    const RSA_ALGORITHM: [u8; 15] = [
        0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00,
    ];
    fn der(tag: u8, content: &[u8]) -> Vec<u8> {
        let mut out = vec![tag];
        let len = content.len();
        if len < 0x80 {
            out.push(len as u8);
        } else {
            let bytes = len.to_be_bytes();
            let skip = bytes.iter().take_while(|b| **b == 0).count();
            out.push(0x80 | (bytes.len() - skip) as u8);
            out.extend_from_slice(&bytes[skip..]);
        }
        out.extend_from_slice(content);
        out
    }
    let mut info = vec![0x02, 0x01, 0x00];
    info.extend_from_slice(&RSA_ALGORITHM);
    info.extend(der(0x04, pkcs1));
    der(0x30, &info)
}

/// What [`generate_dir`] wrote.
#[derive(Debug, Clone)]
pub struct GeneratedCerts {
    /// `DIR/server`: the server's `tls.crt`, `tls.key`, `ca.crt`
    /// (use as `--tls-certs-dir`).
    pub server_dir: PathBuf,
    /// `DIR/client`: a client's `tls.crt`, `tls.key`, `ca.crt`.
    pub client_dir: PathBuf,
}

/// Generates a CA (`DIR/ca.crt`, `DIR/ca.key`), a server certificate for
/// `server_names` in `DIR/server` and a client certificate in `DIR/client`.
/// Files already there are replaced (links too, not followed); keys are
/// readable by their owner only. `DIR` and its subdirectories must not be
/// symbolic links.
pub fn generate_dir(dir: &Path, server_names: &[String]) -> Result<GeneratedCerts, TlsError> {
    let ca = CertificateAuthority::generate("xfn-root-ca")?;
    create_dir(dir)?;
    write_file(&dir.join(CA_FILE), ca.cert_pem().as_bytes(), false)?;
    write_file(&dir.join("ca.key"), ca.key_pem().as_bytes(), true)?;
    let server_dir = dir.join("server");
    ca.issue_server(server_names)?.write_dir(&server_dir)?;
    let client_dir = dir.join("client");
    ca.issue_client("crossplane")?.write_dir(&client_dir)?;
    Ok(GeneratedCerts {
        server_dir,
        client_dir,
    })
}
