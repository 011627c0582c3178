//! # xfn-oci: wasm function packages from OCI registries
//!
//! Pulls, verifies, caches and pushes Crossplane composition functions built
//! as wasm components.
//!
//! * [`resolve`] turns a reference (`registry/repo:tag` or `…@sha256:…`)
//!   into a verified component per a [`PullPolicy`], from the on-disk
//!   [`Cache`] or the registry. It accepts the CNCF wasm artifact, older
//!   wasm media types, xpkg-style images with a wasm layer beside the
//!   `package.yaml` base layer, and image indexes (see [`layout`]).
//! * [`push`] publishes a component as a CNCF wasm artifact, or, given the
//!   author's `crossplane.yaml`, as an xpkg that Crossplane's package
//!   manager installs and xfn runs ([`xpkg`]).
//! * [`ComponentInfo`] reads what a component imports and exports; a
//!   component importing anything outside [`ALLOWED_IMPORTS`] is refused
//!   before it is compiled.
//!
//! Every blob is checked against its digest before use, and every error
//! names the reference it concerns ([`Error`]).

mod auth;
pub mod base_layer;
mod body;
pub mod cache;
pub mod component;
mod digest;
mod error;
pub mod layout;
pub mod localfile;
mod memories;
mod options;
pub mod package;
mod pull;
mod push;
mod reference;
mod token;
mod transport;
pub mod xpkg;

pub use cache::{CACHE_DIR_ENV, Cache};
pub use component::{
    ALLOWED_IMPORTS, ComponentInfo, FUNCTION_WORLD, Item, ItemKind, MAX_CODE_BYTES, MAX_FUNCTIONS,
};
pub use digest::Digest;
pub use error::{Error, Result};
pub use layout::Layout;
pub use memories::{MAX_MEMORIES, MAX_TABLES};
pub use options::{
    DEFAULT_MAX_LAYER_SIZE, DEFAULT_PULL_TIMEOUT, PullPolicy, RegistryOptions, parse_size,
};
pub use package::{FunctionMetadata, MetadataSource};
pub use pull::{PulledFunction, registry_pulls, resolve};
pub use push::{Artifact, PushMetadata, Pushed, build_artifact, push};
pub use reference::ImageRef;
pub use xpkg::PackageFile;

/// The render annotation that carries a function's pull policy.
pub const PULL_POLICY_ANNOTATION: &str = "render.crossplane.io/runtime-docker-pull-policy";

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
