//! `meta.tag` as the Crossplane engine computes it: the hex SHA-256 of the
//! request's deterministic protobuf encoding, taken before `meta` is set
//! (`Tag()` in `composition_functions.go` and `internal/xfn/utils.go`).
//!
//! Go's `proto.MarshalOptions{Deterministic: true}` writes fields in field
//! number order, map entries sorted by key, and every map entry with both
//! its key and value (even empty ones). prost's maps here are `HashMap`s
//! and it leaves empty map keys and values out, so this module writes the
//! bytes itself.

use std::collections::HashMap;

use prost::encoding::{WireType, encode_key, encode_varint};
use prost_types::value::Kind;
use sha2::{Digest, Sha256};
use xfn_proto::v1 as pb;

use xfn_runtime::protocol::RunFunctionRequest;

/// The tag of `request` (its `meta` is ignored). Empty if the request
/// cannot be converted to protobuf, as then no function could be sent it.
pub fn tag(request: &RunFunctionRequest) -> String {
    let mut request = request.clone();
    request.meta = None;
    // The templates render read for function-go-templating are not part
    // of the input Crossplane would have sent.
    if let Some(original) = request
        .input
        .as_deref()
        .and_then(crate::gotemplating_fs::original_input)
    {
        request.input = Some(original);
    }
    // Nor are the KCL files render fetched for function-kcl.
    if let Some(original) = request
        .input
        .as_deref()
        .and_then(crate::kcl_sources::original_input)
    {
        request.input = original;
    }
    // Objects may nest deeply: encode (and drop) on a deep stack.
    xfn_proto::with_deep_stack(move || {
        let Some(proto) = tree(request) else {
            return String::new();
        };
        let bytes = encode_request(&proto);
        drop(proto);
        hex(&Sha256::digest(&bytes))
    })
}

/// The request as protobuf with `prost_types::Struct` trees, whose keys
/// are sorted.
fn tree(request: RunFunctionRequest) -> Option<pb::RunFunctionRequest> {
    let proto = xfn_grpc::convert::request_to_proto(request).ok()?;
    xfn_proto::transcode(&proto).ok()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Appends a length-delimited field.
fn put_bytes(buf: &mut Vec<u8>, field: u32, body: &[u8]) {
    encode_key(field, WireType::LengthDelimited, buf);
    encode_varint(body.len() as u64, buf);
    buf.extend_from_slice(body);
}

fn put_varint(buf: &mut Vec<u8>, field: u32, value: u64) {
    encode_key(field, WireType::Varint, buf);
    encode_varint(value, buf);
}

/// Appends a map field: one entry message per key, sorted by key.
fn put_map<V>(
    buf: &mut Vec<u8>,
    field: u32,
    map: &HashMap<String, V>,
    value: impl Fn(&V) -> Vec<u8>,
) {
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    for key in keys {
        let mut entry = Vec::new();
        put_bytes(&mut entry, 1, key.as_bytes());
        put_bytes(&mut entry, 2, &value(&map[key]));
        put_bytes(buf, field, &entry);
    }
}

fn encode_request(r: &pb::RunFunctionRequest) -> Vec<u8> {
    let mut buf = Vec::new();
    // Field 1, meta, is unset while the tag is computed.
    if let Some(observed) = &r.observed {
        put_bytes(&mut buf, 2, &encode_state(observed));
    }
    if let Some(desired) = &r.desired {
        put_bytes(&mut buf, 3, &encode_state(desired));
    }
    if let Some(input) = &r.input {
        put_bytes(&mut buf, 4, &encode_struct(input));
    }
    if let Some(context) = &r.context {
        put_bytes(&mut buf, 5, &encode_struct(context));
    }
    put_map(&mut buf, 6, &r.extra_resources, encode_resources);
    put_map(&mut buf, 7, &r.credentials, encode_credentials);
    put_map(&mut buf, 8, &r.required_resources, encode_resources);
    put_map(&mut buf, 9, &r.required_schemas, |s: &pb::Schema| {
        let mut buf = Vec::new();
        if let Some(schema) = &s.openapi_v3 {
            put_bytes(&mut buf, 1, &encode_struct(schema));
        }
        buf
    });
    buf
}

fn encode_state(s: &pb::State) -> Vec<u8> {
    let mut buf = Vec::new();
    if let Some(composite) = &s.composite {
        put_bytes(&mut buf, 1, &encode_resource(composite));
    }
    put_map(&mut buf, 2, &s.resources, encode_resource);
    buf
}

fn encode_resource(r: &pb::Resource) -> Vec<u8> {
    let mut buf = Vec::new();
    if let Some(resource) = &r.resource {
        put_bytes(&mut buf, 1, &encode_struct(resource));
    }
    put_map(&mut buf, 2, &r.connection_details, Clone::clone);
    if r.ready != 0 {
        put_varint(&mut buf, 3, r.ready as u64);
    }
    buf
}

fn encode_resources(r: &pb::Resources) -> Vec<u8> {
    let mut buf = Vec::new();
    for item in &r.items {
        put_bytes(&mut buf, 1, &encode_resource(item));
    }
    buf
}

fn encode_credentials(c: &pb::Credentials) -> Vec<u8> {
    let mut buf = Vec::new();
    if let Some(pb::credentials::Source::CredentialData(data)) = &c.source {
        let mut body = Vec::new();
        put_map(&mut body, 1, &data.data, Clone::clone);
        put_bytes(&mut buf, 1, &body);
    }
    buf
}

fn encode_struct(s: &prost_types::Struct) -> Vec<u8> {
    let mut buf = Vec::new();
    // A BTreeMap: its keys are already in order.
    for (key, value) in &s.fields {
        let mut entry = Vec::new();
        put_bytes(&mut entry, 1, key.as_bytes());
        put_bytes(&mut entry, 2, &encode_value(value));
        put_bytes(&mut buf, 1, &entry);
    }
    buf
}

fn encode_value(v: &prost_types::Value) -> Vec<u8> {
    let mut buf = Vec::new();
    match &v.kind {
        None => {}
        Some(Kind::NullValue(n)) => put_varint(&mut buf, 1, *n as u64),
        Some(Kind::NumberValue(n)) => {
            encode_key(2, WireType::SixtyFourBit, &mut buf);
            buf.extend_from_slice(&n.to_le_bytes());
        }
        Some(Kind::StringValue(s)) => put_bytes(&mut buf, 3, s.as_bytes()),
        Some(Kind::BoolValue(b)) => put_varint(&mut buf, 4, u64::from(*b)),
        Some(Kind::StructValue(s)) => put_bytes(&mut buf, 5, &encode_struct(s)),
        Some(Kind::ListValue(l)) => {
            let mut body = Vec::new();
            for item in &l.values {
                put_bytes(&mut body, 1, &encode_value(item));
            }
            put_bytes(&mut buf, 6, &body);
        }
    }
    buf
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message as _;

    fn request() -> RunFunctionRequest {
        RunFunctionRequest {
            input: Some(r#"{"b": [1, "x", true, null, {"c": {}}], "a": 1.5}"#.into()),
            context: Some("{}".into()),
            ..RunFunctionRequest::default()
        }
    }

    #[test]
    fn the_templates_render_read_are_not_part_of_the_tag() {
        let original = r#"{"source":"FileSystem","fileSystem":{"dirPath":"/no/such/dir"}}"#;
        let filled =
            crate::gotemplating_fs::fill_input(original, crate::gotemplating_fs::Limits::default())
                .expect("a FileSystem source");
        assert!(filled.contains(crate::gotemplating_fs::READ_ERROR_KEY));
        let with = |input: &str| RunFunctionRequest {
            input: Some(input.into()),
            ..RunFunctionRequest::default()
        };
        assert_eq!(tag(&with(&filled)), tag(&with(original)));
        assert_ne!(tag(&with(&filled)), tag(&with(r#"{"source":"Inline"}"#)));
    }

    #[test]
    fn without_maps_it_is_prosts_encoding() {
        // prost and Go agree on messages whose maps have no empty keys.
        let proto = tree(request()).expect("converts");
        assert_eq!(encode_request(&proto), proto.encode_to_vec());
    }

    #[test]
    fn map_entries_are_sorted_and_meta_is_ignored() {
        let mut a = request();
        a.credentials = ["z", "a", "m"]
            .iter()
            .map(|k| {
                (
                    (*k).to_owned(),
                    xfn_runtime::protocol::Credentials {
                        source: Some(xfn_runtime::protocol::CredentialSource::CredentialData(
                            xfn_runtime::protocol::CredentialData {
                                data: vec![(String::new(), Vec::new())],
                            },
                        )),
                    },
                )
            })
            .collect();
        let mut b = a.clone();
        b.credentials.reverse();
        b.meta = Some(xfn_runtime::protocol::RequestMeta {
            tag: "set".into(),
            capabilities: Vec::new(),
        });
        assert_eq!(tag(&a), tag(&b));
        assert_eq!(tag(&a).len(), 64);
        let proto = tree(a).expect("converts");
        let bytes = encode_request(&proto);
        // Entry "a" comes first, with its empty key and value written out.
        let first = [
            0x3a, 0x0d, 0x0a, 0x01, b'a', 0x12, 0x08, 0x0a, 0x06, 0x0a, 0x04, 0x0a, 0x00, 0x12,
            0x00,
        ];
        let at = bytes.len() - 3 * first.len();
        assert_eq!(&bytes[at..at + first.len()], first);
    }
}
