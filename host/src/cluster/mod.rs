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

/// Most bytes of a message xfn writes into a condition or an event: an
/// event's note may have at most 1 KiB, and a condition gains nothing from
/// more (a registry or a package controls much of what goes in).
pub const MAX_MESSAGE_BYTES: usize = 1024;

/// `text`, cut to [`MAX_MESSAGE_BYTES`] on a character boundary, saying
/// how much was cut.
pub fn bounded_message(text: &str) -> String {
    // Room for the marker, `… (N bytes more)`.
    crate::text::bounded(text, MAX_MESSAGE_BYTES - 32).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

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
