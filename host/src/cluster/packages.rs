//! Telling a revision's package kind by reading it from its registry.

use xfn_oci::{PullPolicy, RegistryOptions};

use super::reconcile::{PackageKind, PackageProbe};

/// Reads packages from their OCI registries (through xfn's cache): a
/// package with a wasm component xfn can run is [`PackageKind::Wasm`]; one
/// that the registry has but that carries no component is a container
/// package. Anything else (unreachable, unauthorized, a component that
/// imports what xfn doesn't provide) is an error for the revision.
pub struct OciProbe {
    options: RegistryOptions,
}

impl OciProbe {
    /// A probe that pulls with `options` (its credentials are replaced by
    /// each revision's pull secrets).
    pub fn new(options: RegistryOptions) -> OciProbe {
        OciProbe { options }
    }
}

#[async_trait::async_trait]
impl PackageProbe for OciProbe {
    async fn probe(
        &self,
        image: &str,
        docker_configs: &[(String, Vec<u8>)],
    ) -> Result<PackageKind, String> {
        let mut options = self.options.clone();
        options.docker_configs = docker_configs.to_vec();
        match xfn_oci::resolve(image, PullPolicy::IfNotPresent, &options).await {
            Ok(_) => Ok(PackageKind::Wasm),
            Err(e) if e.is_not_wasm() => Ok(PackageKind::Container),
            Err(e) => Err(e.to_string()),
        }
    }
}
