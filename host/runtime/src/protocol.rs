//! The protocol types the host works with: the Rust types that wasmtime
//! generates from xfn's WIT world (`wit/function.wit`).
//!
//! They are the pipeline's one internal representation, whichever side a
//! function runs on: a wasm function takes them as they are, and a gRPC
//! function converts them to protobuf at the edge (see `grpc::convert`).
//! Free-form objects are JSON text, so state flows from step to step
//! without being parsed by the host.

// The bindings are generated from the WIT world, whose own comments are
// the documentation.
#[allow(missing_docs)]
mod bindings {
    wasmtime::component::bindgen!({
        path: "../../wit",
        world: "function",
        additional_derives: [PartialEq, Clone],
        // Calls run on wasmtime fibers, so a long guest yields to the executor
        // (see `wasm`); the log import stays a plain function.
        exports: { default: async },
    });
}
pub use bindings::*;

pub use xfn::function::log::Level as LogLevel;
pub use xfn::function::types::{
    Capability, Condition, ConditionStatus, CredentialData, CredentialSource, Credentials,
    Duration, FunctionResult, MatchLabels, Ready, RequestMeta, Requirements, ResourceMatch,
    ResourceObject, ResourceSelector, Resources, ResponseMeta, Schema, SchemaSelector, Severity,
    State, Target,
};

/// Every capability the host supports, as Crossplane advertises them.
pub const ALL_CAPABILITIES: [Capability; 5] = [
    Capability::Capabilities,
    Capability::RequiredResources,
    Capability::Credentials,
    Capability::Conditions,
    Capability::RequiredSchemas,
];

impl Severity {
    /// The protobuf enum name, e.g. `SEVERITY_NORMAL`.
    pub fn proto_name(self) -> &'static str {
        match self {
            Severity::Unspecified => "SEVERITY_UNSPECIFIED",
            Severity::Fatal => "SEVERITY_FATAL",
            Severity::Warning => "SEVERITY_WARNING",
            Severity::Normal => "SEVERITY_NORMAL",
        }
    }
}

impl ResourceObject {
    /// A Kubernetes object as a resource with no connection details and no
    /// opinion on readiness, as Crossplane sends observed and required ones.
    pub fn from_json(object: &serde_json::Value) -> ResourceObject {
        ResourceObject {
            resource: Some(object.to_string()),
            connection_details: Vec::new(),
            ready: Ready::Unspecified,
        }
    }
}

impl RunFunctionResponse {
    /// The first fatal result, if any.
    pub fn fatal_result(&self) -> Option<&FunctionResult> {
        self.results.iter().find(|r| r.severity == Severity::Fatal)
    }
}

// The generated type can't derive Default: some of its fields are enums.
#[allow(clippy::derivable_impls)]
impl Default for RunFunctionRequest {
    fn default() -> Self {
        RunFunctionRequest {
            meta: None,
            observed: None,
            desired: None,
            input: None,
            context: None,
            extra_resources: Vec::new(),
            credentials: Vec::new(),
            required_resources: Vec::new(),
            required_schemas: Vec::new(),
        }
    }
}

// The generated type can't derive Default: some of its fields are enums.
#[allow(clippy::derivable_impls)]
impl Default for RunFunctionResponse {
    fn default() -> Self {
        RunFunctionResponse {
            meta: None,
            desired: None,
            results: Vec::new(),
            context: None,
            requirements: None,
            conditions: Vec::new(),
            output: None,
        }
    }
}

// The generated type can't derive Default: some of its fields are enums.
#[allow(clippy::derivable_impls)]
impl Default for State {
    fn default() -> Self {
        State {
            composite: None,
            resources: Vec::new(),
        }
    }
}

// The generated type can't derive Default: some of its fields are enums.
#[allow(clippy::derivable_impls)]
impl Default for Requirements {
    fn default() -> Self {
        Requirements {
            extra_resources: Vec::new(),
            resources: Vec::new(),
            schemas: Vec::new(),
        }
    }
}
