//! `xfn serve` takes deeply nested requests up to its documented depth
//! limit, refuses deeper ones with INVALID_ARGUMENT, and keeps serving
//! (issue 12, item 7).

use std::time::Duration;

use crate::grpc_support::*;
use prost_types::value::Kind;
use prost_types::{Struct, Value};
use tonic::Code;
use xfn_grpc::{FunctionTable, ServerConfig};
use xfn_proto::v1;
use xfn_runtime::protocol::{RunFunctionRequest, RunFunctionResponse};
use xfn_runtime::{CallError, Function};

/// Returns the observed composite as the desired one.
struct Echo;

#[async_trait::async_trait]
impl Function for Echo {
    fn name(&self) -> &str {
        "function-echo"
    }

    async fn call(
        &self,
        request: &RunFunctionRequest,
        _: Option<Duration>,
    ) -> Result<RunFunctionResponse, CallError> {
        Ok(RunFunctionResponse {
            desired: request.observed.clone(),
            ..RunFunctionResponse::default()
        })
    }
}

/// `{"a": {"a": … {"leaf": "bottom"} … }}`, `depth` objects deep, built
/// without recursion.
fn nested(depth: usize) -> Struct {
    let mut inner = Struct::default();
    inner.fields.insert(
        "leaf".into(),
        Value {
            kind: Some(Kind::StringValue("bottom".into())),
        },
    );
    for _ in 1..depth {
        let mut outer = Struct::default();
        outer.fields.insert(
            "a".into(),
            Value {
                kind: Some(Kind::StructValue(inner)),
            },
        );
        inner = outer;
    }
    inner
}

/// How many objects deep `s` is, following key `a`, without recursion.
fn depth_of(s: &Struct) -> usize {
    let mut depth = 1;
    let mut at = s;
    while let Some(Value {
        kind: Some(Kind::StructValue(next)),
    }) = at.fields.get("a")
    {
        depth += 1;
        at = next;
    }
    assert!(
        at.fields.contains_key("leaf"),
        "the innermost object survives"
    );
    depth
}

/// Takes a deep struct apart level by level so dropping it can't recurse.
fn dismantle(s: Struct) {
    let mut next = Some(s);
    while let Some(mut at) = next.take() {
        if let Some(Value {
            kind: Some(Kind::StructValue(inner)),
        }) = at.fields.remove("a")
        {
            next = Some(inner);
        }
    }
}

fn deep_request(depth: usize) -> v1::RunFunctionRequest {
    v1::RunFunctionRequest {
        observed: Some(v1::State {
            composite: Some(v1::Resource {
                resource: Some(nested(depth)),
                ..v1::Resource::default()
            }),
            ..v1::State::default()
        }),
        ..v1::RunFunctionRequest::default()
    }
}

async fn call(server: &Serving, depth: usize) -> Result<v1::RunFunctionResponse, tonic::Status> {
    let mut client = raw_client(server.addr, &authority("function-echo"))
        .await
        .max_decoding_message_size(64 << 20);
    let request = deep_request(depth);
    // Encoding a deep message recurses: give it room.
    let response = client.run_function(request).await;
    response.map(tonic::Response::into_inner)
}

fn take_composite(mut response: v1::RunFunctionResponse) -> Struct {
    response
        .desired
        .take()
        .and_then(|mut d| d.composite.take())
        .and_then(|mut c| c.resource.take())
        .expect("the desired composite")
}

#[test]
fn deep_requests_up_to_the_limit_are_served_and_deeper_ones_refused() {
    // The client side (this test) needs room to encode and decode deep
    // messages; the server must cope on its own.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_stack_size(256 << 20)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let mut table = FunctionTable::new();
        table.insert("function-echo", boxed(Echo));
        let config = ServerConfig {
            max_recv_message_size: 64 << 20,
            ..ServerConfig::default()
        };
        let server = Serving::start(config, table).await;

        for depth in [200, 5_000] {
            let response = call(&server, depth)
                .await
                .unwrap_or_else(|s| panic!("a {depth}-deep object is served: {s:?}"));
            let composite = take_composite(response);
            assert_eq!(depth_of(&composite), depth);
            dismantle(composite);
        }

        let too_deep = xfn_proto::MAX_MESSAGE_DEPTH / 3 + 100;
        let status = call(&server, too_deep)
            .await
            .expect_err("deeper than the limit is refused");
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        let limit = xfn_proto::MAX_MESSAGE_DEPTH.to_string();
        assert!(
            status.message().contains(&limit),
            "the message names the limit {limit}: {status:?}"
        );

        // Still serving.
        let response = call(&server, 10).await.expect("still serving");
        assert_eq!(depth_of(&take_composite(response)), 10);
        server.stop().await.expect("stops cleanly");
    });
}
