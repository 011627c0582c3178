//! What the pipeline calls: any function, wherever it runs.

use std::time::Duration;

use crate::CallError;
use crate::protocol::{RunFunctionRequest, RunFunctionResponse};

/// A function the pipeline can call: a wasm component run in-process, or a
/// conventional function reached over gRPC.
#[async_trait::async_trait]
pub trait Function: Send + Sync {
    /// The function's name (the pipeline's `functionRef.name`).
    fn name(&self) -> &str;

    /// Calls the function once. `timeout`, if set, tightens the function's
    /// own default deadline.
    async fn call(
        &self,
        request: &RunFunctionRequest,
        timeout: Option<Duration>,
    ) -> Result<RunFunctionResponse, CallError>;
}
