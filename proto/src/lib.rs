//! Crossplane's composition function protocol for prost and tonic.
//!
//! Two wire-identical packages are provided, as Crossplane ships them:
//!
//! * [`v1`]: `apiextensions.fn.proto.v1`, the current package (Crossplane ≥ 1.17);
//! * [`v1beta1`]: `apiextensions.fn.proto.v1beta1`, still sent by Crossplane ≤ 1.16.
//!
//! Each holds the prost messages, the tonic client
//! (`function_runner_service_client::FunctionRunnerServiceClient`) and the tonic server
//! (`function_runner_service_server::{FunctionRunnerService, FunctionRunnerServiceServer}`).
//!
//! The v1beta1 source is derived at build time from the v1 source by rewriting only
//! its `package` line. Messages convert between the packages the way Crossplane
//! converts them: encode as one, decode as the other (see [`transcode`] and the
//! `TryFrom` impls between the request and response types).
//!
//! [`FILE_DESCRIPTOR_SET`] holds the encoded descriptors of both packages and their
//! imports, for gRPC reflection.

pub mod codec;
pub mod depth;
pub mod json;

pub use depth::{MAX_MESSAGE_DEPTH, with_deep_stack};

/// `apiextensions.fn.proto.v1`: the current function protocol. The
/// generated messages carry the proto file's own comments.
#[allow(missing_docs)]
pub mod v1 {
    include!(concat!(env!("OUT_DIR"), "/apiextensions.r#fn.proto.v1.rs"));
}

/// `apiextensions.fn.proto.v1beta1`: the previous package, wire-identical to [`v1`].
#[allow(missing_docs)]
pub mod v1beta1 {
    include!(concat!(
        env!("OUT_DIR"),
        "/apiextensions.r#fn.proto.v1beta1.rs"
    ));
}

/// Encoded `google.protobuf.FileDescriptorSet` of `fn/v1/run_function.proto`,
/// `fn/v1beta1/run_function.proto` and the google well-known types they import,
/// with source info (comments). Suitable for a gRPC reflection service.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/xfn_proto_descriptor_set.bin"));

/// Fully-qualified name of the v1 service, as used in gRPC paths and health checks.
pub const V1_SERVICE_NAME: &str = "apiextensions.fn.proto.v1.FunctionRunnerService";

/// Fully-qualified name of the v1beta1 service.
pub const V1BETA1_SERVICE_NAME: &str = "apiextensions.fn.proto.v1beta1.FunctionRunnerService";

/// Converts a message to another wire-compatible message type by encoding it and
/// decoding the bytes as `T`.
///
/// This is how Crossplane and its SDKs convert between v1 and v1beta1. It fails
/// only if decoding fails: bytes that are not a `T`. (prost's recursion
/// limit is off in this workspace; depth is bounded by [`depth`] before a
/// message is decoded.)
pub fn transcode<T, M>(msg: &M) -> Result<T, prost::DecodeError>
where
    T: prost::Message + Default + depth::Checked,
    M: prost::Message + depth::Checked,
{
    // Encoding and decoding a tree recurse once per level.
    depth::with_stack_if(T::RECURSES || M::RECURSES, || {
        T::decode(msg.encode_to_vec().as_slice())
    })
}

macro_rules! checked {
    ($($ty:ty => $name:literal, recurses: $recurses:literal),* $(,)?) => {$(
        impl depth::Checked for $ty {
            const PROTO_NAME: &'static str = $name;
            const RECURSES: bool = $recurses;
        }
    )*};
}

checked! {
    v1::RunFunctionRequest => "apiextensions.fn.proto.v1.RunFunctionRequest", recurses: true,
    v1::RunFunctionResponse => "apiextensions.fn.proto.v1.RunFunctionResponse", recurses: true,
    v1beta1::RunFunctionRequest => "apiextensions.fn.proto.v1beta1.RunFunctionRequest", recurses: true,
    v1beta1::RunFunctionResponse => "apiextensions.fn.proto.v1beta1.RunFunctionResponse", recurses: true,
    json::v1::RunFunctionRequest => "apiextensions.fn.proto.v1.RunFunctionRequest", recurses: false,
    json::v1::RunFunctionResponse => "apiextensions.fn.proto.v1.RunFunctionResponse", recurses: false,
    json::v1beta1::RunFunctionRequest => "apiextensions.fn.proto.v1beta1.RunFunctionRequest", recurses: false,
    json::v1beta1::RunFunctionResponse => "apiextensions.fn.proto.v1beta1.RunFunctionResponse", recurses: false,
}

/// Implements `TryFrom` (by value and by reference) between wire-identical types.
macro_rules! wire_identical {
    ($($from:ty => $to:ty),* $(,)?) => {$(
        impl TryFrom<&$from> for $to {
            type Error = prost::DecodeError;

            /// Converts by encoding and decoding, as Crossplane does.
            fn try_from(msg: &$from) -> Result<Self, Self::Error> {
                transcode(msg)
            }
        }

        impl TryFrom<$from> for $to {
            type Error = prost::DecodeError;

            /// Converts by encoding and decoding, as Crossplane does.
            fn try_from(msg: $from) -> Result<Self, Self::Error> {
                // A tree `msg` is dropped on the deep stack too.
                depth::with_stack_if(<$from as depth::Checked>::RECURSES, move || transcode(&msg))
            }
        }
    )*};
}

wire_identical! {
    v1::RunFunctionRequest => v1beta1::RunFunctionRequest,
    v1beta1::RunFunctionRequest => v1::RunFunctionRequest,
    v1::RunFunctionResponse => v1beta1::RunFunctionResponse,
    v1beta1::RunFunctionResponse => v1::RunFunctionResponse,
    json::v1::RunFunctionRequest => json::v1beta1::RunFunctionRequest,
    json::v1beta1::RunFunctionRequest => json::v1::RunFunctionRequest,
    json::v1::RunFunctionResponse => json::v1beta1::RunFunctionResponse,
    json::v1beta1::RunFunctionResponse => json::v1::RunFunctionResponse,
}

#[cfg(test)]
mod tests;
