//! # xfn-cluster: xfn as Crossplane's External function runtime
//!
//! With `--package-runtime=Function=External`, Crossplane still installs
//! every Function package and creates its FunctionRevisions, but nothing
//! runs them. `xfn controller` does: for every Active revision,
//!
//! * a package with a wasm layer is served by xfn's own shared pods: the
//!   leader applies a headless Service selecting them and a TLS server
//!   Secret signed by `crossplane-root-ca`, then writes the revision's
//!   `status.endpoint` and `RuntimeHealthy`; every replica loads the
//!   component and serves it at that Service's name;
//! * a conventional (container) package gets what Crossplane's own
//!   Deployment runtime would make: ServiceAccount, Deployment, Service and
//!   Secret ([`objects`]).
//!
//! Everything the controller makes is owned by the revision, so it goes
//! when the revision goes.

#![forbid(unsafe_code)]

pub mod controller;
pub mod crd;
pub mod lease;
pub mod objects;
pub mod packages;
pub mod plan;
pub mod reconcile;
pub mod runtime;
pub mod serving;

/// The condition Crossplane reads to call a revision's runtime healthy.
pub const RUNTIME_HEALTHY: &str = "RuntimeHealthy";

/// Most bytes of a message xfn writes into a condition or an event: an
/// event's note may have at most 1 KiB, and a condition gains nothing from
/// more (a registry or a package controls much of what goes in).
pub const MAX_MESSAGE_BYTES: usize = 1024;

/// `text`, cut to [`MAX_MESSAGE_BYTES`] on a character boundary, saying
/// how much was cut.
pub fn bounded_message(text: &str) -> String {
    // Room for the marker, `… (N bytes more)`.
    xfn_runtime::text::bounded(text, MAX_MESSAGE_BYTES - 32).into_owned()
}

/// Most bytes of `tls.crt` (and of `tls.key`) accepted from
/// `crossplane-root-ca`. Crossplane writes one certificate of about 1 KiB;
/// a bundle goes into every function's `ca.crt` and, as the client CAs,
/// into every TLS handshake xfn serves.
pub const MAX_ROOT_CA_BYTES: usize = 64 << 10;

/// Most certificates accepted in `crossplane-root-ca`'s `tls.crt`: room for
/// a rotation, well under what breaks clients (BoringSSL's refuse a
/// handshake that lists hundreds of acceptable CAs).
pub const MAX_ROOT_CA_CERTS: usize = 8;

/// The PEM text of `key` in `crossplane-root-ca`, checked against
/// [`MAX_ROOT_CA_BYTES`] and, for `tls.crt`, [`MAX_ROOT_CA_CERTS`]; or why
/// it can't be used. Whether it parses is checked where it is used.
pub fn root_ca_text<'a>(key: &str, bytes: &'a [u8]) -> Result<&'a str, String> {
    if bytes.len() > MAX_ROOT_CA_BYTES {
        return Err(format!(
            "{key} is {} bytes, over the limit of {MAX_ROOT_CA_BYTES}",
            bytes.len()
        ));
    }
    let text = std::str::from_utf8(bytes)
        .map_err(|_| format!("{key} is not PEM: it is not even UTF-8 text"))?;
    if key == "tls.crt" {
        let certs = text.matches("-----BEGIN CERTIFICATE-----").count();
        if certs == 0 {
            return Err(format!("{key} holds no PEM certificate"));
        }
        if certs > MAX_ROOT_CA_CERTS {
            return Err(format!(
                "{key} holds {certs} certificates, more than the {MAX_ROOT_CA_CERTS} accepted"
            ));
        }
    }
    Ok(text)
}

/// Text from an object or a registry (an image, a message with one in it)
/// for a log line: control characters escaped so that it stays on its one
/// line, then cut to [`MAX_MESSAGE_BYTES`].
pub fn for_log(text: &str) -> String {
    bounded_message(&xfn_runtime::text::escape_control(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_text_stays_on_one_bounded_line() {
        let image = format!("reg.example/fn:v1\nFORGED line\r{}", "a".repeat(300_000));
        let logged = for_log(&image);
        assert!(!logged.contains('\n') && !logged.contains('\r'), "{logged}");
        assert!(
            logged.starts_with("reg.example/fn:v1\\nFORGED line\\r"),
            "{logged}"
        );
        assert!(logged.len() <= MAX_MESSAGE_BYTES, "{}", logged.len());
        assert!(logged.ends_with(" bytes more)"), "{logged}");
        assert_eq!(for_log("plain"), "plain");
    }

    #[test]
    fn a_root_ca_is_bounded_and_must_be_pem_text() {
        let one = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
        assert_eq!(root_ca_text("tls.crt", one.as_bytes()), Ok(one));
        assert_eq!(
            root_ca_text("tls.crt", &[0xff, 0xfe, 0x00]),
            Err("tls.crt is not PEM: it is not even UTF-8 text".into())
        );
        assert_eq!(
            root_ca_text("tls.crt", b"garbage"),
            Err("tls.crt holds no PEM certificate".into())
        );
        let many = one.repeat(MAX_ROOT_CA_CERTS + 1);
        assert_eq!(
            root_ca_text("tls.crt", many.as_bytes()),
            Err(format!(
                "tls.crt holds 9 certificates, more than the {MAX_ROOT_CA_CERTS} accepted"
            ))
        );
        assert!(root_ca_text("tls.crt", one.repeat(MAX_ROOT_CA_CERTS).as_bytes()).is_ok());
        let huge = "x".repeat(MAX_ROOT_CA_BYTES + 1);
        assert_eq!(
            root_ca_text("tls.key", huge.as_bytes()),
            Err(format!(
                "tls.key is {} bytes, over the limit of {MAX_ROOT_CA_BYTES}",
                MAX_ROOT_CA_BYTES + 1
            ))
        );
        // A key is not counted as certificates.
        assert_eq!(root_ca_text("tls.key", b"key"), Ok("key"));
    }

    #[test]
    fn messages_are_cut_to_the_bound_on_a_character_boundary() {
        assert_eq!(bounded_message("short"), "short");
        let long = "é".repeat(5000);
        let cut = bounded_message(&long);
        assert!(cut.len() <= MAX_MESSAGE_BYTES, "{}", cut.len());
        assert!(cut.starts_with("éé"));
        let kept = cut.split("… (").next().unwrap_or_default().len();
        assert!(
            cut.ends_with(&format!("({} bytes more)", long.len() - kept)),
            "{cut}"
        );
    }
}
