//! Crossplane's objects as its package manager writes them, for tests that
//! play Crossplane against the fake API server.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::{Value, json};

/// A `pkg.crossplane.io/v1` Function of `package`.
pub fn function(name: &str, package: &str) -> Value {
    json!({
        "apiVersion": "pkg.crossplane.io/v1", "kind": "Function",
        "metadata": {"name": name},
        "spec": {"package": package},
    })
}

/// A FunctionRevision of `function` for `image`, in `state` (`Active` or
/// `Inactive`), that Crossplane has vetted (`RevisionHealthy`).
pub fn function_revision(name: &str, function: &str, image: &str, state: &str) -> Value {
    json!({
        "apiVersion": "pkg.crossplane.io/v1", "kind": "FunctionRevision",
        "metadata": {
            "name": name,
            "labels": {"pkg.crossplane.io/package": function},
            "ownerReferences": [{"apiVersion": "pkg.crossplane.io/v1", "kind": "Function",
                "name": function, "uid": format!("{function}-uid"), "controller": true}],
        },
        "spec": {
            "desiredState": state, "image": image, "revision": 1,
            "ignoreCrossplaneConstraints": false, "packagePullPolicy": "IfNotPresent",
            "skipDependencyResolution": false,
        },
        "status": {
            "conditions": [{"type": "RevisionHealthy", "status": "True", "reason": "HealthyPackageRevision",
                "lastTransitionTime": "2026-11-01T00:00:00Z"}],
            "capabilities": ["composition"],
        },
    })
}

/// An Opaque Secret in `namespace` with `data` (base64-encoded here).
pub fn secret(name: &str, namespace: &str, data: &[(&str, &[u8])]) -> Value {
    let data: BTreeMap<&str, String> = data
        .iter()
        .map(|(key, value)| {
            (
                *key,
                base64::engine::general_purpose::STANDARD.encode(value),
            )
        })
        .collect();
    json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "data": data,
    })
}

/// Crossplane's `crossplane-root-ca` Secret in `namespace`, holding the CA
/// certificate and key (PEM) it signs function certificates with.
pub fn root_ca_secret(namespace: &str, cert_pem: &str, key_pem: &str) -> Value {
    secret(
        "crossplane-root-ca",
        namespace,
        &[
            ("tls.crt", cert_pem.as_bytes()),
            ("tls.key", key_pem.as_bytes()),
        ],
    )
}
