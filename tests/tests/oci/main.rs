//! OCI packages against a real registry: pull, push, xpkg, auth and TLS, failures and hostile registries, render from a registry.
//!
//! One test binary of the area, a module per file (see `tests/README.md`).

#[path = "../oci_support/mod.rs"]
mod oci_support;

mod oci_auth_tls;
mod oci_failures;
mod oci_kcl;
mod oci_push_pull;
mod oci_render;
mod oci_xpkg;
