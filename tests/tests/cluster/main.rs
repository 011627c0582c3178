//! xfn in a cluster: the controller as processes against the fake API server, replicas and the Lease, the deploy manifests.
//!
//! One test binary of the area, a module per file (see `tests/README.md`).

#[path = "../oci_support/mod.rs"]
mod oci_support;

mod cluster_e2e;
mod cluster_replicas;
mod controller_process;
mod deploy_manifests;
