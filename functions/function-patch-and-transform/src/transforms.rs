//! Transforms (transforms.go): map, match, math, string and convert.
//!
//! Every function takes and returns [`GoValue`]s typed as in Go, and fails
//! with Go's message chain (`<type> transform could not resolve: ...`).

use std::collections::BTreeMap;

use serde_json::Value;
use sha1::Digest as _;

use crate::goconv;
use crate::gofmt::{format_float, quote, sprint_v, sprintf};
use crate::gojson;
use crate::goregex::GoRegex;
use crate::input::{
    ConvertTransform, MatchPattern, MatchTransform, MathTransform, StringTransform, Transform,
};
use crate::quantity;
use crate::validate;
use crate::value::{GoValue, go_lossy_utf8};

/// Runs transforms in order (`ResolveTransforms`); an error is wrapped as
/// `transform at index i returned error: ...`.
pub fn resolve_all(transforms: &[Transform], mut input: GoValue) -> Result<GoValue, String> {
    for (i, t) in transforms.iter().enumerate() {
        input =
            resolve(t, input).map_err(|e| format!("transform at index {i} returned error: {e}"))?;
    }
    Ok(input)
}

/// Runs one transform (`Resolve`).
pub fn resolve(t: &Transform, input: GoValue) -> Result<GoValue, String> {
    let missing = || format!("given transform type {} requires configuration", t.r#type);
    let out = match t.r#type.as_str() {
        "math" => resolve_math(t.math.as_ref().ok_or_else(missing)?, input),
        "map" => resolve_map(t.map.as_ref().ok_or_else(missing)?, input),
        "match" => resolve_match(t.r#match.as_ref().ok_or_else(missing)?, input),
        "string" => {
            resolve_string(t.string.as_ref().ok_or_else(missing)?, input).map(GoValue::String)
        }
        "convert" => resolve_convert(t.convert.as_ref().ok_or_else(missing)?, input),
        other => return Err(format!("transform type {other} is not supported")),
    };
    out.map_err(|e| format!("{} transform could not resolve: {e}", t.r#type))
}

/// A JSON value as `encoding/json` decodes it into `interface{}` (numbers are `float64`).
fn from_raw_json(v: &Value) -> GoValue {
    refloat(GoValue::from_json(v))
}

fn refloat(v: GoValue) -> GoValue {
    match v {
        GoValue::Int(i) => GoValue::Float(i as f64),
        GoValue::Slice(items) => GoValue::Slice(items.into_iter().map(refloat).collect()),
        GoValue::Map(m) => GoValue::Map(m.into_iter().map(|(k, v)| (k, refloat(v))).collect()),
        other => other,
    }
}

// --- math ------------------------------------------------------------------

/// `ResolveMath`.
pub fn resolve_math(m: &MathTransform, input: GoValue) -> Result<GoValue, String> {
    validate::validate_math(m).map_err(|e| e.to_string())?;
    let as_int = match &input {
        GoValue::Int(i) => *i,
        GoValue::Float(f) => goconv::float_to_int64(*f),
        other => {
            return Err(format!(
                "input is required to be a number for math transformer, got {}",
                other.type_name()
            ));
        }
    };
    match m.r#type.as_str() {
        "Multiply" => {
            let k = m.multiply.unwrap_or_default();
            Ok(match input {
                GoValue::Int(i) => GoValue::Int(i.wrapping_mul(k)),
                GoValue::Float(f) => GoValue::Float(f * k as f64),
                other => other,
            })
        }
        "ClampMin" => {
            let min = m.clamp_min.unwrap_or_default();
            Ok(if as_int < min {
                GoValue::Int(min)
            } else {
                input
            })
        }
        "ClampMax" => {
            let max = m.clamp_max.unwrap_or_default();
            Ok(if as_int > max {
                GoValue::Int(max)
            } else {
                input
            })
        }
        other => Err(format!(
            "type {other} is not supported for math transform type"
        )),
    }
}

// --- map -------------------------------------------------------------------

/// `ResolveMap`.
pub fn resolve_map(
    pairs: &BTreeMap<String, Option<Value>>,
    input: GoValue,
) -> Result<GoValue, String> {
    let GoValue::String(key) = &input else {
        return Err(format!(
            "type {} is not supported for map transform",
            input.type_name()
        ));
    };
    match pairs.get(key) {
        None => Err(format!("key {key} is not found in map")),
        // A JSON null leaves extv1.JSON empty, which does not decode.
        Some(None) => Err(format!(
            "value for key {key} is not valid JSON: unexpected end of JSON input"
        )),
        Some(Some(v)) => Ok(from_raw_json(v)),
    }
}

// --- match -----------------------------------------------------------------

/// `ResolveMatch`.
pub fn resolve_match(m: &MatchTransform, input: GoValue) -> Result<GoValue, String> {
    for (i, p) in m.patterns.iter().enumerate() {
        let matched =
            matches(p, &input).map_err(|e| format!("cannot match pattern at index {i}: {e}"))?;
        if matched {
            return Ok(p.result.as_ref().map_or(GoValue::Nil, from_raw_json));
        }
    }
    if m.fallback_to == "Input" {
        if m.fallback_value.is_some() {
            return Err("cannot set both a fallback value and the fallback to input flag".into());
        }
        return Ok(input);
    }
    Ok(m.fallback_value
        .as_ref()
        .map_or(GoValue::Nil, from_raw_json))
}

fn matches(p: &MatchPattern, input: &GoValue) -> Result<bool, String> {
    match p.r#type.as_str() {
        "literal" => {
            let Some(lit) = &p.literal else {
                return Err("literal is required by type literal".into());
            };
            match input {
                GoValue::String(s) => Ok(s == lit),
                other => Err(format!("unsupported input type '{}'", other.type_name())),
            }
        }
        "regexp" => {
            let Some(re) = &p.regexp else {
                return Err("regexp is required by type regexp".into());
            };
            let re = GoRegex::compile(re).map_err(|e| format!("cannot compile regexp: {e}"))?;
            match input {
                GoValue::Nil => Err("unsupported input type 'null'".into()),
                GoValue::String(s) => Ok(re.is_match(s)),
                other => Err(format!("unsupported input type '{}'", other.type_name())),
            }
        }
        other => Err(format!("unsupported pattern type '{other}'")),
    }
}

// --- string ----------------------------------------------------------------

/// `ResolveString`; the result is always a string.
pub fn resolve_string(s: &StringTransform, input: GoValue) -> Result<String, String> {
    let t = s.r#type.as_str();
    let not_set = |what: &str| format!("string transform of type {t} {what} is not set");
    match t {
        "Format" => {
            let f = s.fmt.as_ref().ok_or_else(|| not_set("fmt"))?;
            Ok(sprintf(f, &[input]))
        }
        "Convert" => {
            let c = s.convert.as_ref().ok_or_else(|| not_set("convert"))?;
            string_convert(c, &input)
        }
        "TrimPrefix" | "TrimSuffix" => {
            let trim = s.trim.as_ref().ok_or_else(|| not_set("trim"))?;
            let v = sprint_v(&input);
            let out = if t == "TrimPrefix" {
                v.strip_prefix(trim.as_str())
            } else {
                v.strip_suffix(trim.as_str())
            };
            Ok(out.map_or_else(|| v.clone(), str::to_owned))
        }
        "Regexp" => {
            let r = s.regexp.as_ref().ok_or_else(|| not_set("regexp"))?;
            let re = GoRegex::compile(&r.r#match)
                .map_err(|e| format!("could not compile regexp: {e}"))?;
            let g = r.group.unwrap_or(0);
            let groups = re.find_submatch(&sprint_v(&input)).unwrap_or_default();
            match usize::try_from(g).ok().and_then(|g| groups.get(g)) {
                Some(m) => Ok(m.clone()),
                None => Err(format!(
                    "regexp {} had no matches for group {g}",
                    quote(&r.r#match)
                )),
            }
        }
        "Join" => {
            let sep = s.join.as_ref().ok_or_else(|| not_set("join"))?;
            let items = match &input {
                GoValue::Slice(items) => items.as_slice(),
                // A nil []interface {} (convert of `null`): no items.
                GoValue::NilSlice => &[],
                _ => return Err("could not parse input array".into()),
            };
            if items.is_empty() {
                return Ok(String::new());
            }
            let mut out = String::new();
            for item in items {
                out.push_str(&sprint_v(item));
                out.push_str(sep);
            }
            if sep.is_empty() {
                return Ok(out);
            }
            // Go cuts exactly one byte, even from a multi-byte separator.
            let bytes = out.as_bytes();
            Ok(go_lossy_utf8(&bytes[..bytes.len() - 1]))
        }
        "Replace" => {
            let r = s.replace.as_ref().ok_or_else(|| not_set("replace"))?;
            Ok(sprint_v(&input).replace(r.search.as_str(), &r.replace))
        }
        other => Err(format!(
            "type {other} is not supported for string transform type"
        )),
    }
}

/// The bytes a hash is taken of: a string's own bytes, anything else's JSON.
fn hash_input(input: &GoValue) -> Result<Vec<u8>, String> {
    match input {
        GoValue::String(s) => Ok(s.as_bytes().to_vec()),
        other => gojson::marshal(other)
            .map(String::into_bytes)
            .map_err(|e| format!("cannot marshal to JSON: {e}")),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn string_convert(c: &str, input: &GoValue) -> Result<String, String> {
    let s = sprint_v(input);
    match c {
        "ToUpper" => Ok(goconv::to_upper(&s)),
        "ToLower" => Ok(goconv::to_lower(&s)),
        "ToJson" => gojson::marshal(input).map_err(|e| format!("cannot marshal to JSON: {e}")),
        "ToBase64" => Ok(goconv::base64_encode(s.as_bytes())),
        "FromBase64" => goconv::base64_decode(&s)
            .map(|b| go_lossy_utf8(&b))
            .map_err(|n| {
                format!("string is not valid base64: illegal base64 data at input byte {n}")
            }),
        "ToSha1" => {
            let b = hash_input(input).map_err(|e| format!("cannot generate hash: {e}"))?;
            Ok(hex(&sha1::Sha1::digest(&b)))
        }
        "ToSha256" => {
            let b = hash_input(input).map_err(|e| format!("cannot generate hash: {e}"))?;
            Ok(hex(&sha2::Sha256::digest(&b)))
        }
        "ToSha512" => {
            let b = hash_input(input).map_err(|e| format!("cannot generate hash: {e}"))?;
            Ok(hex(&sha2::Sha512::digest(&b)))
        }
        "ToAdler32" => {
            let b =
                hash_input(input).map_err(|e| format!("unable to generate Adler checksum: {e}"))?;
            Ok(goconv::adler32(&b).to_string())
        }
        other => Err(format!("type {other} is not supported for string convert")),
    }
}

// --- convert ---------------------------------------------------------------

/// `ResolveConvert`.
pub fn resolve_convert(c: &ConvertTransform, input: GoValue) -> Result<GoValue, String> {
    validate::validate_convert(c).map_err(|e| e.to_string())?;
    let from = match &input {
        GoValue::String(_) => "string",
        GoValue::Bool(_) => "bool",
        GoValue::Int(_) => "int64",
        GoValue::Float(_) => "float64",
        other => return Err(format!("invalid input type {}", other.type_name())),
    };
    let to = if c.to_type == "int" {
        "int64"
    } else {
        c.to_type.as_str()
    };
    if to == from {
        return Ok(input);
    }
    let format = c.format();
    let unsupported =
        || format!("conversion from {from} to {to} is not supported with format {format}");
    match (input, to, format) {
        (GoValue::String(s), "int64", "none") => goconv::parse_int(&s).map(GoValue::Int),
        (GoValue::String(s), "bool", "none") => goconv::parse_bool(&s).map(GoValue::Bool),
        (GoValue::String(s), "float64", "none") => goconv::parse_float(&s).map(GoValue::Float),
        (GoValue::String(s), "float64", "quantity") => quantity::parse_quantity_as_f64(&s)
            .map(GoValue::Float)
            .map_err(str::to_owned),
        (GoValue::String(s), "object", "json") => gojson::unmarshal(&s, gojson::Target::Map),
        (GoValue::String(s), "array", "json") => gojson::unmarshal(&s, gojson::Target::Slice),
        (GoValue::Int(i), "string", "none") => Ok(GoValue::String(i.to_string())),
        (GoValue::Int(i), "bool", "none") => Ok(GoValue::Bool(i == 1)),
        (GoValue::Int(i), "float64", "none") => Ok(GoValue::Float(i as f64)),
        (GoValue::Bool(b), "string", "none") => Ok(GoValue::String(b.to_string())),
        (GoValue::Bool(b), "int64", "none") => Ok(GoValue::Int(i64::from(b))),
        (GoValue::Bool(b), "float64", "none") => Ok(GoValue::Float(if b { 1.0 } else { 0.0 })),
        (GoValue::Float(f), "string", "none") => Ok(GoValue::String(format_float(f, b'f', -1))),
        (GoValue::Float(f), "int64", "none") => Ok(GoValue::Int(goconv::float_to_int64(f))),
        (GoValue::Float(f), "bool", "none") => Ok(GoValue::Bool(f == 1.0)),
        _ => Err(unsupported()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::input::{StringRegexp, StringReplace};

    fn s(v: &str) -> GoValue {
        GoValue::String(v.into())
    }

    fn math(t: &str, n: Option<i64>) -> MathTransform {
        MathTransform {
            r#type: t.into(),
            multiply: if t == "Multiply" { n } else { None },
            clamp_min: if t == "ClampMin" { n } else { None },
            clamp_max: if t == "ClampMax" { n } else { None },
        }
    }

    #[test]
    fn math_transforms() {
        let f = GoValue::Float;
        let i = GoValue::Int;
        let cases: Vec<(MathTransform, GoValue, Result<GoValue, &str>)> = vec![
            (math("Multiply", Some(3)), f(10.0), Ok(f(30.0))),
            (math("Multiply", Some(3)), i(10), Ok(i(30))),
            (math("Multiply", Some(2)), i(i64::MAX), Ok(i(-2))),
            (
                math("Multiply", Some(3)),
                s("10"),
                Err("input is required to be a number for math transformer, got string"),
            ),
            (
                math("Multiply", Some(3)),
                GoValue::Nil,
                Err("input is required to be a number for math transformer, got <nil>"),
            ),
            (
                math("Multiply", None),
                f(1.0),
                Err(
                    "multiply: Required value: must specify a value if a multiply math transform is specified",
                ),
            ),
            (
                math("", Some(1)),
                f(1.0),
                Err("type: Required value: math transform type is required"),
            ),
            (
                math("Pow", Some(1)),
                f(1.0),
                Err("type: Invalid value: \"Pow\": unknown math transform type"),
            ),
            (math("ClampMin", Some(2)), f(2.7), Ok(f(2.7))),
            (math("ClampMin", Some(3)), f(2.7), Ok(i(3))),
            (math("ClampMin", Some(3)), i(1), Ok(i(3))),
            (math("ClampMax", Some(1)), f(1.5), Ok(f(1.5))),
            (math("ClampMax", Some(1)), f(2.5), Ok(i(1))),
            (math("ClampMax", Some(10)), i(5), Ok(i(5))),
            (math("ClampMin", Some(-5)), f(-5.9), Ok(f(-5.9))),
            (math("ClampMin", Some(0)), f(f64::NAN), Ok(i(0))),
        ];
        for (m, input, want) in cases {
            let got = resolve_math(&m, input.clone());
            assert_eq!(
                got.as_ref().map_err(String::as_str),
                want.as_ref().map_err(|e| *e),
                "{m:?} {input:?}"
            );
        }
    }

    #[test]
    fn map_transforms() {
        let mut pairs = BTreeMap::new();
        pairs.insert("ola".to_string(), Some(json!("voila")));
        pairs.insert("num".to_string(), Some(json!(5)));
        pairs.insert("obj".to_string(), Some(json!({"a": [1]})));
        pairs.insert("nul".to_string(), None);
        assert_eq!(resolve_map(&pairs, s("ola")), Ok(s("voila")));
        assert_eq!(resolve_map(&pairs, s("num")), Ok(GoValue::Float(5.0)));
        let GoValue::Map(m) = resolve_map(&pairs, s("obj")).unwrap() else {
            panic!()
        };
        assert_eq!(m["a"], GoValue::Slice(vec![GoValue::Float(1.0)]));
        assert_eq!(
            resolve_map(&pairs, s("x")),
            Err("key x is not found in map".into())
        );
        assert_eq!(
            resolve_map(&pairs, GoValue::Float(1.0)),
            Err("type float64 is not supported for map transform".into())
        );
        assert_eq!(
            resolve_map(&pairs, GoValue::Bool(true)),
            Err("type bool is not supported for map transform".into())
        );
        assert_eq!(
            resolve_map(&pairs, GoValue::Nil),
            Err("type <nil> is not supported for map transform".into())
        );
        assert_eq!(
            resolve_map(&pairs, s("nul")),
            Err("value for key nul is not valid JSON: unexpected end of JSON input".into())
        );
    }

    fn pat(t: &str, lit: Option<&str>, re: Option<&str>, result: Option<Value>) -> MatchPattern {
        MatchPattern {
            r#type: t.into(),
            literal: lit.map(Into::into),
            regexp: re.map(Into::into),
            result,
        }
    }

    #[test]
    fn match_transforms() {
        let m = |patterns, fallback_value, fallback_to: &str| MatchTransform {
            patterns,
            fallback_value,
            fallback_to: fallback_to.into(),
        };
        let regexp = m(
            vec![pat(
                "regexp",
                None,
                Some("^foo.*$"),
                Some(json!("Hello World")),
            )],
            None,
            "",
        );
        assert_eq!(resolve_match(&regexp, s("foobar")), Ok(s("Hello World")));
        assert_eq!(resolve_match(&regexp, s("bar")), Ok(GoValue::Nil));
        assert_eq!(
            resolve_match(&regexp, GoValue::Nil),
            Err("cannot match pattern at index 0: unsupported input type 'null'".into())
        );
        assert_eq!(
            resolve_match(&regexp, GoValue::Float(1.0)),
            Err("cannot match pattern at index 0: unsupported input type 'float64'".into())
        );
        let literals = m(
            vec![
                pat("literal", Some("foo"), None, Some(json!("bar"))),
                pat("literal", Some("foo"), None, Some(json!("not this"))),
            ],
            None,
            "",
        );
        assert_eq!(resolve_match(&literals, s("foo")), Ok(s("bar")));
        assert_eq!(
            resolve_match(&literals, GoValue::Bool(true)),
            Err("cannot match pattern at index 0: unsupported input type 'bool'".into())
        );
        let number = m(
            vec![pat("literal", Some("a"), None, Some(json!(5)))],
            None,
            "",
        );
        assert_eq!(resolve_match(&number, s("a")), Ok(GoValue::Float(5.0)));
        // Upstream TestMatchResolve/MatchLiteralWithResultSlice.
        let slice = m(
            vec![pat(
                "literal",
                Some("foo"),
                None,
                Some(json!(["Hello", "World"])),
            )],
            None,
            "",
        );
        assert_eq!(
            resolve_match(&slice, s("foo")),
            Ok(GoValue::Slice(vec![s("Hello"), s("World")]))
        );
        let null_result = m(vec![pat("literal", Some("a"), None, None)], None, "");
        assert_eq!(resolve_match(&null_result, s("a")), Ok(GoValue::Nil));
        let object = m(
            vec![pat("literal", Some("a"), None, Some(json!({"k": "v"})))],
            None,
            "",
        );
        assert!(matches!(
            resolve_match(&object, s("a")),
            Ok(GoValue::Map(_))
        ));
        let fallback = m(
            vec![pat("literal", Some("a"), None, Some(json!(1)))],
            Some(json!("fb")),
            "Value",
        );
        assert_eq!(resolve_match(&fallback, s("z")), Ok(s("fb")));
        let to_input = m(
            vec![pat("literal", Some("a"), None, Some(json!(1)))],
            None,
            "Input",
        );
        assert_eq!(resolve_match(&to_input, s("z")), Ok(s("z")));
        let both = m(
            vec![pat("literal", Some("a"), None, Some(json!(1)))],
            Some(json!("foo")),
            "Input",
        );
        assert_eq!(
            resolve_match(&both, s("z")),
            Err("cannot set both a fallback value and the fallback to input flag".into())
        );
        let no_type = m(vec![pat("", Some("a"), None, Some(json!(1)))], None, "");
        assert_eq!(
            resolve_match(&no_type, s("a")),
            Err("cannot match pattern at index 0: unsupported pattern type ''".into())
        );
        let bad_re = m(vec![pat("regexp", None, Some("[a-z"), None)], None, "");
        assert_eq!(
            resolve_match(&bad_re, s("a")),
            Err("cannot match pattern at index 0: cannot compile regexp: error parsing regexp: missing closing ]: `[a-z`".into())
        );
        let no_lit = m(vec![pat("literal", None, None, None)], None, "");
        assert_eq!(
            resolve_match(&no_lit, s("a")),
            Err("cannot match pattern at index 0: literal is required by type literal".into())
        );
        let no_re = m(vec![pat("regexp", None, None, None)], None, "");
        assert_eq!(
            resolve_match(&no_re, s("a")),
            Err("cannot match pattern at index 0: regexp is required by type regexp".into())
        );
    }

    fn st(t: &str) -> StringTransform {
        StringTransform {
            r#type: t.into(),
            ..StringTransform::default()
        }
    }

    fn conv(c: &str) -> StringTransform {
        StringTransform {
            convert: Some(c.into()),
            ..st("Convert")
        }
    }

    #[test]
    fn string_format_and_trim() {
        let fmt = |f: &str| StringTransform {
            fmt: Some(f.into()),
            ..st("Format")
        };
        assert_eq!(
            resolve_string(&fmt("verycool%s"), s("Crossplane")),
            Ok("verycoolCrossplane".into())
        );
        assert_eq!(
            resolve_string(&fmt("the largest %d"), GoValue::Int(8)),
            Ok("the largest 8".into())
        );
        assert_eq!(
            resolve_string(&fmt("the largest %d"), GoValue::Float(8.0)),
            Ok("the largest %!d(float64=8)".into())
        );
        assert_eq!(
            resolve_string(&fmt("%v"), GoValue::Float(3.0)),
            Ok("3".into())
        );
        assert_eq!(
            resolve_string(&fmt("abc"), s("foo")),
            Ok("abc%!(EXTRA string=foo)".into())
        );
        assert_eq!(
            resolve_string(&st("Format"), s("x")),
            Err("string transform of type Format fmt is not set".into())
        );
        let trim = |t: &str, v: &str| StringTransform {
            trim: Some(v.into()),
            ..st(t)
        };
        assert_eq!(
            resolve_string(&trim("TrimPrefix", "https://"), s("https://crossplane.io")),
            Ok("crossplane.io".into())
        );
        assert_eq!(
            resolve_string(&trim("TrimSuffix", "-test"), s("a-test-test")),
            Ok("a-test".into())
        );
        assert_eq!(
            resolve_string(&trim("TrimPrefix", "x"), s("abc")),
            Ok("abc".into())
        );
        assert_eq!(
            resolve_string(&trim("TrimSuffix", ".0"), GoValue::Float(1.5)),
            Ok("1.5".into())
        );
        assert_eq!(
            resolve_string(&st("TrimPrefix"), s("x")),
            Err("string transform of type TrimPrefix trim is not set".into())
        );
        assert_eq!(
            resolve_string(&st("Upper"), s("x")),
            Err("type Upper is not supported for string transform type".into())
        );
    }

    #[test]
    fn string_converts() {
        let cases: Vec<(&str, GoValue, Result<&str, &str>)> = vec![
            ("ToUpper", s("crossplane"), Ok("CROSSPLANE")),
            ("ToLower", s("CrossPlane"), Ok("crossplane")),
            ("ToUpper", GoValue::Float(1.5), Ok("1.5")),
            ("ToBase64", s("CrossPlane"), Ok("Q3Jvc3NQbGFuZQ==")),
            ("FromBase64", s("Q3Jvc3NQbGFuZQ=="), Ok("CrossPlane")),
            (
                "FromBase64",
                s("ThisStringIsNotBase64"),
                Err("string is not valid base64: illegal base64 data at input byte 20"),
            ),
            ("ToJson", s("a"), Ok("\"a\"")),
            ("ToJson", GoValue::Float(1.0), Ok("1")),
            ("ToJson", GoValue::Nil, Ok("null")),
            (
                "ToJson",
                GoValue::Float(f64::NAN),
                Err("cannot marshal to JSON: json: unsupported value: NaN"),
            ),
            (
                "ToSha1",
                s("Crossplane"),
                Ok("3b683dc8ff44122b331a5e4f253dd69d90726d75"),
            ),
            (
                "ToSha256",
                s("Crossplane"),
                Ok("19c8a7c24ed0067f606815b59e5b82d92935ff69deed04171457a55018e31224"),
            ),
            (
                "ToSha512",
                s("1234"),
                Ok(
                    "d404559f602eab6fd602ac7680dacbfaadd13630335e951f097af3900e9de176b6db28512f2e000b9d04fba5133e8b1c6e8df59db3a8ab9d60be4b97cc9e81db",
                ),
            ),
            (
                "ToSha512",
                GoValue::Float(1234.0),
                Ok(
                    "d404559f602eab6fd602ac7680dacbfaadd13630335e951f097af3900e9de176b6db28512f2e000b9d04fba5133e8b1c6e8df59db3a8ab9d60be4b97cc9e81db",
                ),
            ),
            (
                "ToSha256",
                GoValue::Float(f64::INFINITY),
                Err("cannot generate hash: cannot marshal to JSON: json: unsupported value: +Inf"),
            ),
            ("ToAdler32", s("Crossplane"), Ok("373097499")),
            ("ToAdler32", s("⡌⠁⠧⠑ ⠼⠁⠒  ⡍⠜⠇⠑⠹⠰⠎ ⡣⠕⠌"), Ok("4110427190")),
            (
                "ToAdler32",
                GoValue::Float(f64::NAN),
                Err(
                    "unable to generate Adler checksum: cannot marshal to JSON: json: unsupported value: NaN",
                ),
            ),
            (
                "ToRot13",
                s("x"),
                Err("type ToRot13 is not supported for string convert"),
            ),
        ];
        for (c, input, want) in cases {
            let got = resolve_string(&conv(c), input.clone());
            assert_eq!(
                got.as_deref().map_err(String::as_str),
                want,
                "{c} {input:?}"
            );
        }
        let mut m = BTreeMap::new();
        m.insert("b".to_string(), GoValue::String("<".into()));
        m.insert("a".to_string(), GoValue::Float(1.0));
        assert_eq!(
            resolve_string(&conv("ToJson"), GoValue::Map(m)),
            Ok("{\"a\":1,\"b\":\"\\u003c\"}".into())
        );
        assert_eq!(
            resolve_string(&st("Convert"), s("x")),
            Err("string transform of type Convert convert is not set".into())
        );
    }

    #[test]
    fn string_regexp_join_replace() {
        let re = |m: &str, g: Option<i64>| StringTransform {
            regexp: Some(StringRegexp {
                r#match: m.into(),
                group: g,
            }),
            ..st("Regexp")
        };
        assert_eq!(
            resolve_string(&re("my-([0-9]+)-string", Some(1)), s("my-1-string")),
            Ok("1".into())
        );
        assert_eq!(
            resolve_string(&re("my-([0-9]+)-string", None), s("my-1-string")),
            Ok("my-1-string".into())
        );
        assert_eq!(
            resolve_string(&re("my-([0-9]+)-string", Some(2)), s("my-1-string")),
            Err("regexp \"my-([0-9]+)-string\" had no matches for group 2".into())
        );
        assert_eq!(
            resolve_string(&re("my-([0-9]+)-string", None), s("other")),
            Err("regexp \"my-([0-9]+)-string\" had no matches for group 0".into())
        );
        assert_eq!(
            resolve_string(&re("[a-z", None), s("a")),
            Err("could not compile regexp: error parsing regexp: missing closing ]: `[a-z`".into())
        );
        assert_eq!(
            resolve_string(&re("a(b)?c", Some(1)), s("ac")),
            Ok("".into())
        );
        assert_eq!(
            resolve_string(&re("\\d+", None), GoValue::Float(42.0)),
            Ok("42".into())
        );

        let join = |sep: &str| StringTransform {
            join: Some(sep.into()),
            ..st("Join")
        };
        let arr = GoValue::Slice(vec![s("cross"), s("plane"), GoValue::Float(42.0)]);
        assert_eq!(
            resolve_string(&join("-"), arr.clone()),
            Ok("cross-plane-42".into())
        );
        assert_eq!(
            resolve_string(&join(""), arr.clone()),
            Ok("crossplane42".into())
        );
        assert_eq!(
            resolve_string(&join(", "), GoValue::Slice(vec![s("a"), s("b"), s("c")])),
            Ok("a, b, c,".into())
        );
        assert_eq!(
            resolve_string(&join("→"), GoValue::Slice(vec![s("a"), s("b")])),
            Ok("a→b\u{FFFD}\u{FFFD}".into())
        );
        assert_eq!(
            resolve_string(&join("-"), GoValue::Slice(vec![])),
            Ok("".into())
        );
        assert_eq!(
            resolve_string(&join("-"), s("a")),
            Err("could not parse input array".into())
        );
        assert_eq!(
            resolve_string(&st("Join"), arr),
            Err("string transform of type Join join is not set".into())
        );

        let replace = |a: &str, b: &str| StringTransform {
            replace: Some(StringReplace {
                search: a.into(),
                replace: b.into(),
            }),
            ..st("Replace")
        };
        assert_eq!(
            resolve_string(&replace("Cr", "B"), s("Crossplane")),
            Ok("Bossplane".into())
        );
        assert_eq!(
            resolve_string(&replace("ss", ""), s("Crossplane")),
            Ok("Croplane".into())
        );
        assert_eq!(
            resolve_string(&replace("xx", "y"), s("Crossplane")),
            Ok("Crossplane".into())
        );
        assert_eq!(
            resolve_string(&st("Replace"), s("x")),
            Err("string transform of type Replace replace is not set".into())
        );
    }

    fn cv(to: &str, format: Option<&str>) -> ConvertTransform {
        ConvertTransform {
            to_type: to.into(),
            format: format.map(Into::into),
        }
    }

    #[test]
    fn converts() {
        let f = GoValue::Float;
        let i = GoValue::Int;
        let b = GoValue::Bool;
        let cases: Vec<(ConvertTransform, GoValue, Result<GoValue, &str>)> = vec![
            (cv("int64", None), s("10"), Ok(i(10))),
            (cv("int", None), s("-10"), Ok(i(-10))),
            (
                cv("int64", None),
                s("1.5"),
                Err("strconv.ParseInt: parsing \"1.5\": invalid syntax"),
            ),
            (cv("bool", None), s("true"), Ok(b(true))),
            (
                cv("bool", None),
                s("yes"),
                Err("strconv.ParseBool: parsing \"yes\": invalid syntax"),
            ),
            (cv("float64", None), s("1.5"), Ok(f(1.5))),
            (cv("float64", Some("quantity")), s("1000m"), Ok(f(1.0))),
            (
                cv("float64", Some("quantity")),
                s("1000 blabla"),
                Err(quantity::ERR_FORMAT_WRONG),
            ),
            (cv("string", None), i(5), Ok(s("5"))),
            (cv("bool", None), i(1), Ok(b(true))),
            (cv("bool", None), i(2), Ok(b(false))),
            (cv("float64", None), i(5), Ok(f(5.0))),
            (cv("string", None), b(true), Ok(s("true"))),
            (cv("int64", None), b(true), Ok(i(1))),
            (cv("float64", None), b(false), Ok(f(0.0))),
            (cv("string", None), f(1e21), Ok(s("1000000000000000000000"))),
            (cv("string", None), f(3.0), Ok(s("3"))),
            (cv("int64", None), f(1.1), Ok(i(1))),
            (cv("int64", None), f(-1.9), Ok(i(-1))),
            (cv("bool", None), f(1.0), Ok(b(true))),
            (cv("float64", None), f(1.5), Ok(f(1.5))),
            (
                cv("float64", Some("bogus")),
                f(1.5),
                Err("format: Invalid value: \"bogus\": invalid format"),
            ),
            (cv("string", None), s("x"), Ok(s("x"))),
            (
                cv("object", None),
                s("{}"),
                Err("conversion from string to object is not supported with format none"),
            ),
            (
                cv("array", Some("json")),
                s("[1, \"a\"]"),
                Ok(GoValue::Slice(vec![f(1.0), s("a")])),
            ),
            (
                cv("object", Some("json")),
                s("[1]"),
                Err("json: cannot unmarshal array into Go value of type map[string]interface {}"),
            ),
            (
                cv("object", Some("json")),
                s("{\"foo\":"),
                Err("unexpected end of JSON input"),
            ),
            (
                cv("object", None),
                GoValue::Map(BTreeMap::new()),
                Err("invalid input type map[string]interface {}"),
            ),
            (
                cv("array", None),
                GoValue::Slice(vec![]),
                Err("invalid input type []interface {}"),
            ),
            (
                cv("string", None),
                GoValue::Nil,
                Err("invalid input type <nil>"),
            ),
            (
                cv("int64", Some("quantity")),
                s("1"),
                Err("conversion from string to int64 is not supported with format quantity"),
            ),
            (
                cv("string", Some("quantity")),
                i(1),
                Err("conversion from int64 to string is not supported with format quantity"),
            ),
            (
                cv("complex", None),
                s("1"),
                Err("toType: Invalid value: \"complex\": invalid type"),
            ),
        ];
        for (c, input, want) in cases {
            let got = resolve_convert(&c, input.clone());
            assert_eq!(
                got.as_ref().map_err(String::as_str),
                want.as_ref().map_err(|e| *e),
                "{c:?} {input:?}"
            );
        }
        let GoValue::Map(m) =
            resolve_convert(&cv("object", Some("json")), s("{\"foo\":\"bar\"}")).unwrap()
        else {
            panic!()
        };
        assert_eq!(m["foo"], s("bar"));
    }

    #[test]
    fn resolve_wraps_errors() {
        let t = Transform {
            r#type: "math".into(),
            ..Transform::default()
        };
        assert_eq!(
            resolve(&t, GoValue::Nil),
            Err("given transform type math requires configuration".into())
        );
        let t = Transform {
            r#type: "bogus".into(),
            ..Transform::default()
        };
        assert_eq!(
            resolve(&t, GoValue::Nil),
            Err("transform type bogus is not supported".into())
        );
        let t = Transform {
            r#type: "convert".into(),
            convert: Some(cv("int64", None)),
            ..Transform::default()
        };
        assert_eq!(
            resolve_all(&[t], s("x")),
            Err("transform at index 0 returned error: convert transform could not resolve: strconv.ParseInt: parsing \"x\": invalid syntax".into())
        );
    }
}
