//! Telling a revision's package kind by reading it from its registry.

use xfn_oci::{PullPolicy, RegistryOptions};

use super::reconcile::{PackageKind, PackageProbe};

/// Reads packages from their OCI registries (through xfn's cache): a
/// package with a wasm component xfn can run is [`PackageKind::Wasm`]; one
/// that the registry has but that carries no component is a container
/// package, told from its manifest (or index) and config alone, without
/// pulling its layers. A package whose registry xfn cannot reach is left to
/// run as a container, as Crossplane would run it (the kubelet may reach
/// it where xfn can't), with a warning; it is looked at again on the next
/// reconcile. Anything else (credentials the registry refuses, a component
/// that imports what xfn doesn't provide, a corrupt package) is an error
/// for the revision.
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
            Err(e) if e.is_unreachable() => {
                tracing::warn!(
                    "cannot read package {}, so running it as a container function, as Crossplane \
                     would: {}",
                    xfn_runtime::text::for_log(image),
                    xfn_runtime::text::for_log(&e.to_string())
                );
                Ok(PackageKind::Container)
            }
            Err(e) => Err(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 41, item 4: a container function whose registry xfn can't
    /// reach was marked `UnusablePackage`, though Crossplane could run it.
    #[tokio::test]
    async fn a_package_whose_registry_is_unreachable_runs_as_a_container() {
        // Nothing listens on a port just released.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        let cache = std::env::temp_dir().join(format!("xfn-probe-{}", std::process::id()));
        let options = RegistryOptions {
            cache_dir: cache.clone(),
            insecure_registries: vec![format!("127.0.0.1:{port}")],
            ..RegistryOptions::default()
        };
        let kind = OciProbe::new(options)
            .probe(&format!("127.0.0.1:{port}/fns/function-go:v1"), &[])
            .await;
        assert_eq!(kind, Ok(PackageKind::Container));
        let _ = std::fs::remove_dir_all(cache);
    }
}
