//! xfn in a cluster: the controller as processes against the fake API server, replicas and the Lease, the deploy manifests.
//!
//! One test binary of the area, a module per file (see `tests/README.md`).

#[path = "../oci_support/mod.rs"]
mod oci_support;

mod cluster_e2e;
mod cluster_replicas;
mod controller_process;
mod deploy_manifests;

/// A fake API server holding Crossplane's root CA (`crossplane-root-ca` in
/// `namespace`, a fresh CA), and that CA, to issue client certificates
/// from: what every cluster test starts from.
fn fake_with_root_ca(
    namespace: &str,
) -> (
    xfn_kube_fake::FakeApiServer,
    xfn_grpc::tls::CertificateAuthority,
) {
    let fake = xfn_kube_fake::FakeApiServer::new();
    let ca =
        xfn_grpc::tls::CertificateAuthority::generate("crossplane-root-ca").expect("a root CA");
    fake.insert(xfn_kube_fake::crossplane::root_ca_secret(
        namespace,
        ca.cert_pem(),
        &ca.key_pem(),
    ))
    .expect("the root CA Secret");
    (fake, ca)
}
