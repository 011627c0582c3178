//! JSON Structs against prost's own `Struct` decoding and encoding.

use std::collections::BTreeMap;

use bytes::Bytes;
use prost::Message as _;
use prost_types::value::Kind;
use prost_types::{ListValue, Struct, Value};

use super::{JsonStruct, MAX_JSON_DEPTH, TextPool};

fn value(kind: Kind) -> Value {
    Value { kind: Some(kind) }
}

fn object(fields: &[(&str, Value)]) -> Struct {
    Struct {
        fields: fields
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect::<BTreeMap<_, _>>(),
    }
}

/// A Struct with every kind of value, nested.
fn every_kind() -> Struct {
    let list = ListValue {
        values: vec![
            value(Kind::NumberValue(1.0)),
            value(Kind::StringValue("two".into())),
            value(Kind::NullValue(0)),
            value(Kind::ListValue(ListValue { values: vec![] })),
            value(Kind::StructValue(object(&[(
                "x",
                value(Kind::BoolValue(false)),
            )]))),
        ],
    };
    object(&[
        (
            "apiVersion",
            value(Kind::StringValue("example.org/v1".into())),
        ),
        (
            "escaped \"key\"\n",
            value(Kind::StringValue("tab\there é ✓".into())),
        ),
        ("count", value(Kind::NumberValue(9001.0))),
        ("ratio", value(Kind::NumberValue(0.25))),
        ("negative", value(Kind::NumberValue(-3.0))),
        ("huge", value(Kind::NumberValue(1e300))),
        ("ready", value(Kind::BoolValue(true))),
        ("nothing", value(Kind::NullValue(0))),
        ("unset", Value { kind: None }),
        ("items", value(Kind::ListValue(list))),
        (
            "spec",
            value(Kind::StructValue(object(&[
                ("empty", value(Kind::StructValue(Struct::default()))),
                ("", value(Kind::StringValue(String::new()))),
            ]))),
        ),
    ])
}

/// Decodes protobuf bytes as a JsonStruct, from `Bytes` as tonic does.
fn decode(bytes: Vec<u8>) -> JsonStruct {
    JsonStruct::decode(Bytes::from(bytes)).expect("decodes")
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).expect("valid JSON")
}

#[test]
fn wire_bytes_become_the_json_of_the_struct_with_sorted_keys() {
    let text = decode(every_kind().encode_to_vec())
        .to_json()
        .expect("converts");
    assert_eq!(
        text,
        concat!(
            r#"{"apiVersion":"example.org/v1","count":9001,"escaped \"key\"\n":"tab\there é ✓","#,
            r#""huge":1e+300,"items":[1,"two",null,[],{"x":false}],"negative":-3,"nothing":null,"#,
            r#""ratio":0.25,"ready":true,"spec":{"":"","empty":{}},"unset":null}"#
        )
    );
}

#[test]
fn json_text_becomes_bytes_prost_reads_as_the_same_struct() {
    let text = decode(every_kind().encode_to_vec())
        .to_json()
        .expect("converts");
    let encoded = JsonStruct::from_json(&text)
        .expect("encodes")
        .encode_to_vec();
    let tree = Struct::decode(encoded.as_slice()).expect("prost decodes it");
    // A value with no kind came out as `null`, and stays that.
    let mut expected = every_kind();
    expected
        .fields
        .insert("unset".into(), value(Kind::NullValue(0)));
    assert_eq!(tree, expected);
}

#[test]
fn a_struct_from_json_reads_back_as_the_same_json() {
    let text = r#"{"b":[1,2.5,-0.5,{"c":null}],"a":{"d":"e\u0000","f":true},"n":12345678901}"#;
    let back = JsonStruct::from_json(text)
        .expect("encodes")
        .to_json()
        .expect("converts");
    assert_eq!(json(&back), json(text));
    // ...and survives a trip over the wire.
    let wire = JsonStruct::from_json(text)
        .expect("encodes")
        .encode_to_vec();
    assert_eq!(json(&decode(wire).to_json().expect("converts")), json(text));
}

#[test]
fn the_encoded_length_is_exact() {
    for text in [
        "{}",
        r#"{"a":1}"#,
        r#"{"a":[[],{},null,true,"x"]}"#,
        &format!(r#"{{"long":"{}"}}"#, "x".repeat(300)),
    ] {
        let s = JsonStruct::from_json(text).expect("encodes");
        assert_eq!(s.encoded_len(), s.encode_to_vec().len(), "{text}");
        let decoded = decode(s.encode_to_vec());
        assert_eq!(decoded.encoded_len(), s.encoded_len(), "{text}");
        assert_eq!(decoded, s, "{text}");
    }
}

#[test]
fn integers_are_exact_up_to_two_to_the_53_and_rounded_past_it() {
    let number = |n: f64| {
        decode(object(&[("n", value(Kind::NumberValue(n)))]).encode_to_vec())
            .to_json()
            .expect("converts")
    };
    assert_eq!(number(9_007_199_254_740_992.0), r#"{"n":9007199254740992}"#);
    assert_eq!(
        number(-9_007_199_254_740_992.0),
        r#"{"n":-9007199254740992}"#
    );
    assert_eq!(
        number(18_014_398_509_481_984.0),
        r#"{"n":1.8014398509481984e+16}"#
    );
    let from = |text: &str| {
        let wire = JsonStruct::from_json(text)
            .expect("encodes")
            .encode_to_vec();
        match &Struct::decode(wire.as_slice()).expect("decodes").fields["n"].kind {
            Some(Kind::NumberValue(n)) => *n,
            other => panic!("not a number: {other:?}"),
        }
    };
    assert_eq!(from(r#"{"n":9007199254740993}"#), 9_007_199_254_740_992.0);
    assert_eq!(from(r#"{"n":-7}"#), -7.0);
}

#[test]
fn non_finite_numbers_have_no_json() {
    for n in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let err = decode(object(&[("n", value(Kind::NumberValue(n)))]).encode_to_vec())
            .to_json()
            .expect_err("no JSON for it");
        assert!(
            err.to_string().contains("has no JSON representation"),
            "{err}"
        );
    }
}

#[test]
fn json_must_be_one_object() {
    for bad in [
        "", "[]", "1", "null", "\"s\"", "{", "{} {}", "{\"a\":}", "{'a':1}",
    ] {
        assert!(JsonStruct::from_json(bad).is_err(), "{bad:?}");
    }
    assert!(JsonStruct::from_json(" {\"a\": [ ]}\n").is_ok());
}

#[test]
fn depth_is_bounded_both_ways() {
    let deep = |n: usize| format!("{}{}", "[".repeat(n - 1), "]".repeat(n - 1));
    let at_limit = format!("{{\"a\":{}}}", deep(MAX_JSON_DEPTH));
    let s = JsonStruct::from_json(&at_limit).expect("the limit itself is accepted");
    assert_eq!(s.to_json().expect("converts"), at_limit);
    let past = format!("{{\"a\":{}}}", deep(MAX_JSON_DEPTH + 1));
    let err = JsonStruct::from_json(&past).expect_err("too deep");
    assert!(err.to_string().contains("deeper than the limit"), "{err}");
    // Text that opens far more levels than the limit and never closes
    // them is refused at the limit, not parsed to its end.
    let unclosed = format!("{{\"a\":{}", "[{\"b\":".repeat(100 * MAX_JSON_DEPTH));
    let err = JsonStruct::from_json(&unclosed).expect_err("too deep");
    assert!(err.to_string().contains("deeper than the limit"), "{err}");
    // Objects count as levels as lists do.
    let objects = |n: usize| format!("{}1{}", "{\"o\":".repeat(n), "}".repeat(n));
    assert!(JsonStruct::from_json(objects(MAX_JSON_DEPTH)).is_ok());
    let err = JsonStruct::from_json(objects(MAX_JSON_DEPTH + 1)).expect_err("too deep");
    assert!(err.to_string().contains("deeper than the limit"), "{err}");
}

/// Protobuf bytes written by hand: `(field << 3) | wire type`, lengths.
fn field(tag: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![(tag << 3) | 2, u8::try_from(payload.len()).expect("short")];
    out.extend_from_slice(payload);
    out
}

fn entry(key: &str, value: &[u8]) -> Vec<u8> {
    field(1, &[field(1, key.as_bytes()), field(2, value)].concat())
}

fn string_value(s: &str) -> Vec<u8> {
    field(3, s.as_bytes())
}

#[test]
fn of_entries_with_one_key_the_last_wins_as_in_prost() {
    let bytes = [
        entry("k", &string_value("first")),
        entry("a", &string_value("other")),
        entry("k", &string_value("last")),
    ]
    .concat();
    assert_eq!(
        decode(bytes.clone()).to_json().expect("converts"),
        r#"{"a":"other","k":"last"}"#
    );
    let tree = Struct::decode(bytes.as_slice()).expect("prost decodes");
    assert_eq!(tree.fields["k"], value(Kind::StringValue("last".into())));

    // The same within a nested object, whose entries share one buffer.
    let nested = [
        entry("k", &string_value("first")),
        entry("a", &string_value("other")),
        entry("k", &string_value("last")),
    ]
    .concat();
    let bytes = entry("o", &field(5, &nested));
    assert_eq!(
        decode(bytes).to_json().expect("converts"),
        r#"{"o":{"a":"other","k":"last"}}"#
    );
}

#[test]
fn repeated_message_fields_merge_and_a_new_kind_replaces_as_in_prost() {
    // Value.struct_value twice: the two objects merge.
    let inner_a = entry("a", &string_value("1"));
    let inner_b = entry("b", &string_value("2"));
    let merged = [field(5, &inner_a), field(5, &inner_b)].concat();
    // Value.struct_value, then a string, then a list: the list wins.
    let replaced = [field(5, &inner_a), string_value("s"), field(6, &[])].concat();
    let bytes = [entry("m", &merged), entry("r", &replaced)].concat();
    assert_eq!(
        decode(bytes.clone()).to_json().expect("converts"),
        r#"{"m":{"a":"1","b":"2"},"r":[]}"#
    );
    let tree = Struct::decode(bytes.as_slice()).expect("prost decodes");
    assert_eq!(
        tree.fields["m"],
        value(Kind::StructValue(object(&[
            ("a", value(Kind::StringValue("1".into()))),
            ("b", value(Kind::StringValue("2".into())))
        ])))
    );
}

#[test]
fn unknown_fields_are_skipped() {
    // A varint field 7 and a 32-bit field 8 in the Struct, the entry and the value.
    let value = [
        string_value("v"),
        vec![7 << 3, 1],
        vec![(8 << 3) | 5, 0, 0, 0, 0],
    ]
    .concat();
    let mut entry_body = [field(1, b"k"), field(2, &value)].concat();
    entry_body.extend_from_slice(&[7 << 3, 1]);
    let bytes = [field(1, &entry_body), vec![7 << 3, 1]].concat();
    assert_eq!(decode(bytes).to_json().expect("converts"), r#"{"k":"v"}"#);
}

#[test]
fn malformed_bytes_are_an_error_not_a_panic() {
    let cases: Vec<Vec<u8>> = vec![
        // An entry whose value is cut short.
        entry("k", &[(3 << 3) | 2, 9, b'x']),
        // A string that is not UTF-8.
        entry("k", &string_value_bytes(&[0xff, 0xfe])),
        // A key that is not UTF-8.
        field(
            1,
            &[field(1, &[0xc3]), field(2, &string_value("v"))].concat(),
        ),
        // A number with the wrong wire type.
        entry("k", &[2 << 3, 1]),
        // A 64-bit number cut short.
        entry("k", &[(2 << 3) | 1, 0, 0]),
        // A list item with the wrong wire type.
        entry("k", &field(6, &[1 << 3, 1])),
    ];
    for bytes in cases {
        let err = decode(bytes.clone()).to_json().expect_err("malformed");
        assert!(err.to_string().contains("google.protobuf.Struct"), "{err}");
    }
    // A Struct field with the wrong wire type fails decoding itself.
    assert!(JsonStruct::decode(&[1 << 3, 1][..]).is_err());
}

fn string_value_bytes(bytes: &[u8]) -> Vec<u8> {
    field(3, bytes)
}

#[test]
fn a_decoded_struct_merged_into_an_encoded_one_keeps_both() {
    let mut s = JsonStruct::from_json(r#"{"a":1}"#).expect("encodes");
    s.merge(Bytes::from(entry("b", &string_value("x"))))
        .expect("merges");
    assert_eq!(s.to_json().expect("converts"), r#"{"a":1,"b":"x"}"#);
}

/// A Struct of `n` top-level keys.
fn keys(n: usize) -> JsonStruct {
    let bytes: Vec<u8> = (0..n)
        .flat_map(|i| entry(&format!("k{i}"), &string_value("v")))
        .collect();
    decode(bytes)
}

#[test]
fn text_given_back_to_a_pool_is_written_into_by_its_next_conversion() {
    let pool = TextPool::default();
    let bytes = every_kind().encode_to_vec();
    let first = decode(bytes.clone())
        .into_json_in(Some(&pool))
        .expect("converts");
    let expected = first.clone();
    let buffer = first.as_ptr();
    pool.give_back(first);
    assert_eq!(pool.spare().1, 1);
    let second = decode(bytes).into_json_in(Some(&pool)).expect("converts");
    assert_eq!(second, expected);
    assert_eq!(second.as_ptr(), buffer, "the spare buffer was not reused");
    assert_eq!(pool.spare(), (0, 0));
}

#[test]
fn a_pool_takes_the_smallest_buffer_that_fits() {
    let pool = TextPool::default();
    for capacity in [100, 10_000, 1_000_000] {
        pool.give_back(String::with_capacity(capacity));
    }
    let text = decode(keys(500).encode_to_vec())
        .into_json_in(Some(&pool))
        .expect("converts");
    // 500 entries of about 10 bytes: the 10 000-byte buffer.
    assert_eq!(text.capacity(), 10_000, "{}", text.len());
    assert_eq!(pool.spare(), (1_000_100, 2));
    // Too big for any: the largest grows.
    let text = decode(keys(200_000).encode_to_vec())
        .into_json_in(Some(&pool))
        .expect("converts");
    assert!(text.capacity() > 1_000_000);
    assert_eq!(pool.spare(), (100, 1));
}

#[test]
fn a_pool_keeps_spare_text_within_its_bounds() {
    let pool = TextPool::new(1000, 4);
    pool.give_back(String::with_capacity(1001));
    assert_eq!(pool.spare(), (0, 0), "a buffer past the byte bound");
    for _ in 0..6 {
        pool.give_back(String::with_capacity(100));
    }
    assert_eq!(pool.spare(), (400, 4), "past the count bound");
    pool.give_back(String::with_capacity(601));
    assert_eq!(
        pool.spare(),
        (400, 4),
        "a buffer that would pass the byte bound"
    );
    // Without a pool, nothing is taken from one.
    let pool = TextPool::default();
    pool.give_back(String::with_capacity(1 << 10));
    keys(10).into_json().expect("converts");
    assert_eq!(pool.spare(), (1 << 10, 1));
}

#[test]
fn the_sort_index_is_kept_for_the_next_conversion_within_its_bound() {
    use super::reuse::MAX_KEPT_INDEX_BYTES;
    std::thread::spawn(|| {
        assert_eq!(super::reuse::kept_index_capacity(), 0);
        let small = keys(100).to_json().expect("converts");
        assert!(
            small.starts_with(r#"{"k0":"v","k1":"v","k10":"v""#),
            "{small}"
        );
        assert!(super::reuse::kept_index_capacity() >= 100);
        // An index past the bound is dropped when the conversion ends.
        let past = MAX_KEPT_INDEX_BYTES / size_of::<super::to_json::Entry>() + 1;
        keys(past).to_json().expect("converts");
        assert_eq!(super::reuse::kept_index_capacity(), 0);
        // And kept again under it.
        keys(1000).to_json().expect("converts");
        assert!(super::reuse::kept_index_capacity() >= 1000);
    })
    .join()
    .expect("the test thread");
}
