//! The context function of engine render: how today's `crossplane render`
//! passes `--context-*` values in and gets the context out.
//!
//! The CLI (crossplane/cli `cmd/crossplane/render/contextfn/`) runs a
//! function named `crossplane-render-context` and adds two steps to the
//! pipeline it sends the engine: `crossplane-render-inject-context` first,
//! when context values are given, which merges them over the context it is
//! sent; and `crossplane-render-extract-context` last, on `-c`, which
//! records the context the last real step returned. Both pass the desired
//! state through. The steps are visible in what engine render prints (an
//! Operation's `spec.pipeline`), so xfn adds them the same way and runs the
//! function in-process.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value, json};

use xfn_runtime::CallError;
use xfn_runtime::Function;
use xfn_runtime::protocol::{ResponseMeta, RunFunctionRequest, RunFunctionResponse};

/// The function's name.
pub const FUNCTION_NAME: &str = "crossplane-render-context";
/// The step that seeds the context.
pub const SEED_STEP: &str = "crossplane-render-inject-context";
/// The step that captures the context.
pub const CAPTURE_STEP: &str = "crossplane-render-extract-context";

/// The context function: seeds `values`, and records what it captures.
#[derive(Debug, Clone)]
pub struct ContextFunction {
    values: Map<String, Value>,
    captured: Arc<Mutex<Option<String>>>,
}

impl ContextFunction {
    /// A function that seeds `values`.
    pub fn new(values: Map<String, Value>) -> ContextFunction {
        ContextFunction {
            values,
            captured: Arc::default(),
        }
    }

    /// The context the capture step received, as JSON object text; `None`
    /// if it didn't run or was sent no context.
    pub fn captured(&self) -> Option<String> {
        self.captured.lock().map(|c| c.clone()).unwrap_or(None)
    }

    /// The pipeline step (as it appears in a Composition or an Operation)
    /// of the given mode: `Seed` or `Capture`.
    pub fn step(name: &str, mode: &str) -> Value {
        json!({
            "step": name,
            "functionRef": {"name": FUNCTION_NAME},
            "input": {"mode": mode},
        })
    }
}

#[async_trait]
impl Function for ContextFunction {
    fn name(&self) -> &str {
        FUNCTION_NAME
    }

    async fn call(
        &self,
        request: &RunFunctionRequest,
        _timeout: Option<Duration>,
    ) -> Result<RunFunctionResponse, CallError> {
        let failed = |message: String| CallError::Failed {
            function: FUNCTION_NAME.to_owned(),
            message,
        };
        let input: Value = match &request.input {
            Some(text) => xfn_proto::json::parse_value(text)
                .map_err(|e| failed(format!("cannot unmarshal input: {e}")))?,
            None => Value::Null,
        };
        let mode = input.get("mode").and_then(Value::as_str).unwrap_or("");
        let mut response = RunFunctionResponse {
            meta: Some(ResponseMeta {
                tag: request
                    .meta
                    .as_ref()
                    .map(|m| m.tag.clone())
                    .unwrap_or_default(),
                ttl: None,
            }),
            desired: request.desired.clone(),
            ..RunFunctionResponse::default()
        };
        match mode {
            "Seed" => {
                let mut merged: Map<String, Value> = match &request.context {
                    Some(text) => xfn_proto::json::parse_value(text)
                        .map_err(|e| failed(format!("cannot read the context: {e}")))?,
                    None => Map::new(),
                };
                merged.extend(self.values.clone());
                response.context = Some(Value::Object(merged).to_string());
            }
            "Capture" => {
                if let Ok(mut captured) = self.captured.lock() {
                    *captured = request.context.clone();
                }
            }
            other => return Err(failed(format!("unsupported mode {other:?}"))),
        }
        Ok(response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xfn_runtime::protocol::State;

    fn request(mode: &str, context: Option<&str>) -> RunFunctionRequest {
        RunFunctionRequest {
            input: Some(json!({"mode": mode}).to_string()),
            context: context.map(str::to_owned),
            desired: Some(State::default()),
            ..RunFunctionRequest::default()
        }
    }

    #[tokio::test]
    async fn seed_merges_its_values_over_the_incoming_context() {
        let values = json!({"a": 1, "b": 2});
        let f = ContextFunction::new(values.as_object().cloned().unwrap_or_default());
        let rsp = f
            .call(&request("Seed", Some(r#"{"a":0,"c":3}"#)), None)
            .await
            .expect("seeds");
        let context: Value = serde_json::from_str(rsp.context.as_deref().unwrap_or("null"))
            .expect("context is JSON");
        assert_eq!(context, json!({"a": 1, "b": 2, "c": 3}));
        assert_eq!(rsp.desired, Some(State::default()));
    }

    #[tokio::test]
    async fn capture_records_the_context_and_drops_it() {
        let f = ContextFunction::new(Map::new());
        assert_eq!(f.captured(), None);
        let rsp = f
            .call(&request("Capture", Some(r#"{"k":"v"}"#)), None)
            .await
            .expect("captures");
        assert_eq!(rsp.context, None);
        assert_eq!(f.captured().as_deref(), Some(r#"{"k":"v"}"#));
        let err = f
            .call(&request("Other", None), None)
            .await
            .expect_err("unknown mode");
        assert!(
            err.to_string().contains("unsupported mode \"Other\""),
            "{err}"
        );
    }
}
