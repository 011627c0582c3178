//! The annotations on a `Function` object that tell xfn how to run it: the
//! ones `crossplane render` reads (`render.crossplane.io/…`) and xfn's own
//! (`xfn.dev/…`). Every crate reads them from here.

/// Which runtime runs the Function: absent, empty or `Wasm` (xfn's
/// in-process runtime), `Development` (a gRPC function someone runs), or
/// `Docker`.
pub const RUNTIME: &str = "render.crossplane.io/runtime";
/// A local wasm component to run instead of pulling `spec.package`.
pub const WASM_MODULE: &str = "render.crossplane.io/runtime-wasm-module";
/// The pull policy of a wasm package; wins over [`PULL_POLICY`].
pub const WASM_PULL_POLICY: &str = "render.crossplane.io/runtime-wasm-pull-policy";
/// The pull policy users know from the Docker runtime.
pub const PULL_POLICY: &str = xfn_oci::PULL_POLICY_ANNOTATION;
/// A Development runtime's gRPC target.
pub const DEVELOPMENT_TARGET: &str = "render.crossplane.io/runtime-development-target";
/// A directory of client certificates (`tls.crt`, `tls.key`, `ca.crt`) for
/// an mTLS Development runtime.
pub const DEVELOPMENT_TLS_CERTS_DIR: &str =
    "render.crossplane.io/runtime-development-tls-certs-dir";
/// The name a Development runtime's server certificate must carry.
pub const DEVELOPMENT_TLS_SERVER_NAME: &str =
    "render.crossplane.io/runtime-development-tls-server-name";
/// A port of its own for the Function in `xfn serve`.
pub const SERVE_PORT: &str = "xfn.dev/serve-port";
/// On a TLS Secret the controller writes: the server names its
/// certificate covers.
pub const TLS_NAMES: &str = "xfn.dev/tls-names";

/// The Development target when [`DEVELOPMENT_TARGET`] names none.
pub const DEFAULT_DEVELOPMENT_TARGET: &str = "localhost:9443";

/// The image a container function runs instead of `spec.package`.
pub const DOCKER_IMAGE: &str = "render.crossplane.io/runtime-docker-image";

/// Environment for a container function: `k1=v1,k2=v2`.
pub const DOCKER_ENV: &str = "render.crossplane.io/runtime-docker-env";

/// What Docker does with a function's container after render; xfn's
/// sandbox always ends with render.
pub const DOCKER_CLEANUP: &str = "render.crossplane.io/runtime-docker-cleanup";

/// The name of a function's Docker container, to reuse one; xfn's sandbox
/// is started for each render.
pub const DOCKER_NAME: &str = "render.crossplane.io/runtime-docker-name";

/// Give a container function the host's network (`"true"`); by default it
/// has none.
pub const CONTAINER_NETWORK: &str = "xfn.dev/container-network";
