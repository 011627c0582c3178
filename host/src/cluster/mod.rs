//! xfn in a cluster: Crossplane's External function runtime.
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

pub mod controller;
pub mod crd;
pub mod lease;
pub mod objects;
pub mod packages;
pub mod reconcile;
pub mod serving;

/// The condition Crossplane reads to call a revision's runtime healthy.
pub const RUNTIME_HEALTHY: &str = "RuntimeHealthy";
