//! Protobuf requests and responses as the gRPC server and client decode
//! them ([`xfn_proto::codec::decode_checked`]), converted to the host's WIT
//! types and back ([`xfn_grpc::convert`]).

use prost::Message;
use xfn_grpc::convert;
use xfn_proto::codec::decode_checked;
use xfn_proto::json::v1 as pb;

/// Decodes `data` as a request and as a response. Whatever converts to WIT
/// must convert back to protobuf, survive the wire, and convert to the same
/// WIT value again: WIT → protobuf → WIT is the identity. (protobuf → WIT is
/// not: it drops unknown enum values and fields, and sorts maps.)
pub fn proto_wit_roundtrip(data: &[u8]) {
    // Comparing and dropping deep messages recurses once per level.
    xfn_proto::with_deep_stack(|| {
        request(data);
        response(data);
    });
}

fn request(data: &[u8]) {
    let Ok(decoded) = decode_checked::<pb::RunFunctionRequest>(data.to_vec().into()) else {
        return;
    };
    let Ok(first) = convert::request_from_proto(decoded) else {
        return;
    };
    let proto = convert::request_to_proto(first.clone())
        .unwrap_or_else(|e| panic!("a request from protobuf does not convert back: {e}"));
    let wire = decode_checked::<pb::RunFunctionRequest>(proto.encode_to_vec().into())
        .unwrap_or_else(|e| panic!("a converted request does not decode: {e}"));
    assert_eq!(wire, proto, "the converted request changed on the wire");
    let second = convert::request_from_proto(wire)
        .unwrap_or_else(|e| panic!("a converted request does not convert again: {e}"));
    assert!(
        second == first,
        "WIT -> protobuf -> WIT changed the request"
    );
}

fn response(data: &[u8]) {
    let Ok(decoded) = decode_checked::<pb::RunFunctionResponse>(data.to_vec().into()) else {
        return;
    };
    let Ok(first) = convert::response_from_proto(decoded) else {
        return;
    };
    let proto = convert::response_to_proto(first.clone())
        .unwrap_or_else(|e| panic!("a response from protobuf does not convert back: {e}"));
    let wire = decode_checked::<pb::RunFunctionResponse>(proto.encode_to_vec().into())
        .unwrap_or_else(|e| panic!("a converted response does not decode: {e}"));
    assert_eq!(wire, proto, "the converted response changed on the wire");
    let second = convert::response_from_proto(wire)
        .unwrap_or_else(|e| panic!("a converted response does not convert again: {e}"));
    assert!(
        second == first,
        "WIT -> protobuf -> WIT changed the response"
    );
}
