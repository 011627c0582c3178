//! # xfn-oci: function packages from OCI registries
//!
//! Pulls, verifies, caches and pushes Crossplane composition functions built
//! as wasm components, and pulls those built as container images.
//!
//! * [`resolve`] turns a reference (`registry/repo:tag` or `…@sha256:…`)
//!   into a verified component per a [`PullPolicy`], from the on-disk
//!   [`Cache`] or the registry. It accepts the CNCF wasm artifact, older
//!   wasm media types, xpkg-style images with a wasm layer beside the
//!   `package.yaml` base layer, and image indexes (see [`layout`]).
//! * [`resolve_package`] resolves a reference the same way to either kind
//!   of function package: a wasm component ([`Resolved::Wasm`], as
//!   [`resolve`] returns it), or an ordinary container image for the
//!   container runtime ([`Resolved::Image`]: its config, and its layers
//!   streamed into the cache and verified; see [`image`]).
//! * [`push`] publishes a component as a CNCF wasm artifact, or, given the
//!   author's `crossplane.yaml`, as an xpkg that Crossplane's package
//!   manager installs and xfn runs ([`xpkg`]).
//! * [`check_runnable`] refuses, naming the reference, a component the host
//!   would not run (the checks themselves are `xfn-component`'s
//!   [`ComponentInfo`]).
//!
//! Every blob is checked against its digest before use, and every error
//! names the reference it concerns ([`Error`]).

#![forbid(unsafe_code)]

mod auth;
pub mod base_layer;
mod body;
pub mod cache;
mod digest;
mod error;
pub mod image;
pub mod kcl_package;
pub mod layout;
mod options;
pub mod package;
mod pull;
mod pull_image;
mod push;
mod reference;
pub mod runnable;
mod token;
mod transport;
pub mod xpkg;

pub use cache::{CACHE_DIR_ENV, Cache};
pub use digest::Digest;
pub use error::{Error, Result};
pub use image::{Compression, ImageConfig, ImageLayer, PulledImage};
pub use layout::Layout;
pub use options::{
    DEFAULT_MAX_IMAGE_LAYER_SIZE, DEFAULT_MAX_IMAGE_SIZE, DEFAULT_MAX_LAYER_SIZE,
    DEFAULT_PULL_TIMEOUT, PullPolicy, RegistryOptions, parse_size,
};
pub use package::{FunctionMetadata, MetadataSource};
pub use pull::{PulledFunction, Resolved, registry_pulls, resolve, resolve_package};
pub use push::{
    Artifact, PushMetadata, Pushed, PushedRunnable, build_artifact, push, push_runnable,
};
pub use reference::ImageRef;
pub use runnable::EntrypointBinary;
pub use xfn_component::{ALLOWED_IMPORTS, ComponentInfo, FUNCTION_WORLD, localfile};
pub use xpkg::PackageFile;

/// The render annotation that carries a function's pull policy.
pub const PULL_POLICY_ANNOTATION: &str = "render.crossplane.io/runtime-docker-pull-policy";

/// Refuses, as a package at `reference`, a component the host would not
/// run: one with imports outside xfn's world, or more than the sandbox gives.
pub fn check_runnable(info: &ComponentInfo, reference: &str) -> Result<()> {
    match info.not_runnable() {
        None => Ok(()),
        Some(xfn_component::NotRunnable::ForbiddenImports(imports)) => {
            Err(Error::ForbiddenImports {
                reference: reference.to_owned(),
                imports,
            })
        }
        Some(xfn_component::NotRunnable::TooLarge(reason)) => Err(Error::InvalidComponent {
            reference: reference.to_owned(),
            reason,
        }),
    }
}

/// Reads a component file and lists its imports and exports.
pub fn inspect_file(path: &std::path::Path) -> Result<ComponentInfo> {
    let bytes = localfile::read(path, localfile::Limit::WASM).map_err(|error| Error::ReadFile {
        path: path.to_owned(),
        error,
    })?;
    ComponentInfo::read(&bytes).map_err(|reason| Error::InvalidComponent {
        reference: path.display().to_string(),
        reason,
    })
}

#[cfg(test)]
mod tests {
    use xfn_component::testing::{component_with_functions, component_with_modules};

    use crate::{Error, ImageRef, PushMetadata, build_artifact};

    /// Push refuses, before anything is uploaded, a component the host
    /// would not run: here too many functions (the attack round's H3) and
    /// too many memories.
    #[test]
    fn push_refuses_components_the_host_would_not_run() {
        let reference = ImageRef::parse("reg.example/fn:v1").unwrap();
        let cases = [
            (component_with_functions(100_001, 0), "100001 functions"),
            (
                component_with_modules(&[1; 8], &[0, 1, 2, 3, 4, 5, 6, 7]).finish(),
                "8 linear memories",
            ),
        ];
        for (component, why) in cases {
            let pushed = build_artifact(&reference, component, &PushMetadata::default());
            assert!(
                matches!(&pushed, Err(Error::InvalidComponent { reason, .. }) if reason.contains(why)),
                "{:?}",
                pushed.err()
            );
        }
    }

    #[test]
    fn check_runnable_names_the_reference() {
        let many = component_with_modules(&[1; 8], &[0, 1, 2, 3, 4, 5, 6, 7]).finish();
        let info = crate::ComponentInfo::read(&many).unwrap();
        let err = crate::check_runnable(&info, "reg.example/fn:v1").unwrap_err();
        assert!(
            err.to_string().contains(
                "reg.example/fn:v1: not a usable wasm component: it creates 8 linear memories"
            ),
            "{err}"
        );
    }
}
