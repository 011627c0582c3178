//! Go's `encoding/json`, as far as P&T uses it: `Marshal` of dynamic values
//! (sorted keys, HTML-safe escaping, Go's float format) and `Unmarshal` into
//! `map[string]interface {}` / `[]interface {}` with Go's error messages.

use std::collections::BTreeMap;

use crate::gofmt::{format_float, quote};
use crate::value::GoValue;

/// `json.Marshal(v)`. NaN and infinities fail with `json: unsupported value: NaN`.
pub fn marshal(v: &GoValue) -> Result<String, String> {
    let mut out = String::new();
    encode(&mut out, v)?;
    Ok(out)
}

fn encode(out: &mut String, v: &GoValue) -> Result<(), String> {
    match v {
        GoValue::Nil | GoValue::NilSlice | GoValue::NilMap => out.push_str("null"),
        GoValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        GoValue::Int(i) => out.push_str(&i.to_string()),
        GoValue::Float(f) => out.push_str(&encode_float(*f)?),
        GoValue::String(s) => encode_string(out, s),
        GoValue::Slice(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                encode(out, item)?;
            }
            out.push(']');
        }
        GoValue::Map(m) => {
            out.push('{');
            for (i, (k, item)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                encode_string(out, k);
                out.push(':');
                encode(out, item)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

/// A float as `encoding/json` writes it: like `%f` (shortest digits) unless
/// |f| < 1e-6 or |f| ≥ 1e21, then an exponent (`1e-7`, `1e+21`).
pub fn encode_float(f: f64) -> Result<String, String> {
    if !f.is_finite() {
        return Err(format!(
            "json: unsupported value: {}",
            format_float(f, b'g', -1)
        ));
    }
    let abs = f.abs();
    let fmt = if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        b'e'
    } else {
        b'f'
    };
    let mut s = format_float(f, fmt, -1);
    if fmt == b'e' {
        let b = s.as_bytes();
        let n = b.len();
        if n >= 4 && b[n - 4] == b'e' && b[n - 3] == b'-' && b[n - 2] == b'0' {
            s.remove(n - 2);
        }
    }
    Ok(s)
}

/// A string as `encoding/json` writes it, with `<`, `>`, `&`, U+2028 and
/// U+2029 escaped.
pub fn encode_string(out: &mut String, s: &str) {
    write_string(out, s, Escaping::EncodingJson);
}

/// Which Go encoder a string is escaped for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escaping {
    /// `encoding/json`: HTML characters and line separators escaped too.
    EncodingJson,
    /// protojson: control characters and DEL only.
    Protojson,
}

fn write_string(out: &mut String, s: &str, escaping: Escaping) {
    let html = escaping == Escaping::EncodingJson;
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{0}'..='\u{1f}' => push_u00(out, c),
            '<' | '>' | '&' if html => push_u00(out, c),
            '\u{7f}' if !html => push_u00(out, c),
            '\u{2028}' if html => out.push_str("\\u2028"),
            '\u{2029}' if html => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `c` (ASCII) as `\u00XX`.
fn push_u00(out: &mut String, c: char) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let b = c as u8;
    out.push_str("\\u00");
    out.push(HEX[(b >> 4) as usize] as char);
    out.push(HEX[(b & 0xF) as usize] as char);
}

/// A JSON value as protojson writes a `google.protobuf.Struct`: sorted keys,
/// every number a double in Go's JSON float format, no HTML escaping
/// (protojson's random extra spaces are left out).
pub fn protojson(v: &serde_json::Value) -> String {
    use serde_json::Value;
    let mut out = String::new();
    fn walk(out: &mut String, v: &Value) {
        match v {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => {
                out.push_str(&encode_float(n.as_f64().unwrap_or(0.0)).unwrap_or_default())
            }
            Value::String(s) => write_string(out, s, Escaping::Protojson),
            Value::Array(a) => {
                out.push('[');
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    walk(out, x);
                }
                out.push(']');
            }
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                out.push('{');
                for (i, k) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_string(out, k, Escaping::Protojson);
                    out.push(':');
                    walk(out, &m[k]);
                }
                out.push('}');
            }
        }
    }
    walk(&mut out, v);
    out
}

/// The Go type an `Unmarshal` decodes into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `interface {}`
    Any,
    /// `map[string]interface {}`
    Map,
    /// `[]interface {}`
    Slice,
}

/// `json.Unmarshal(text, &target)`: a syntax error (`invalid character 'x'
/// looking for beginning of value`, `unexpected end of JSON input`) or a type
/// error (`json: cannot unmarshal array into Go value of type
/// map[string]interface {}`). JSON `null` decodes to `nil`.
pub fn unmarshal(text: &str, target: Target) -> Result<GoValue, String> {
    let mut p = Parser {
        b: text.as_bytes(),
        pos: 0,
        number_error: None,
    };
    p.skip_ws();
    let v = p.value()?;
    p.skip_ws();
    if p.pos < p.b.len() {
        return Err(p.invalid("after top-level value"));
    }
    let kind = match &v {
        // `null` leaves the target's zero value: a nil map or slice.
        GoValue::Nil => {
            return Ok(match target {
                Target::Map => GoValue::NilMap,
                Target::Slice => GoValue::NilSlice,
                Target::Any => GoValue::Nil,
            });
        }
        GoValue::NilSlice | GoValue::NilMap => "null",
        GoValue::Bool(_) => "bool",
        GoValue::Int(_) | GoValue::Float(_) => "number",
        GoValue::String(_) => "string",
        GoValue::Slice(_) => "array",
        GoValue::Map(_) => "object",
    };
    let type_error = |t: &str| {
        Err(format!(
            "json: cannot unmarshal {kind} into Go value of type {t}"
        ))
    };
    match (target, &v) {
        (Target::Map, GoValue::Map(_)) | (Target::Slice, GoValue::Slice(_)) | (Target::Any, _) => {}
        (Target::Map, _) => return type_error("map[string]interface {}"),
        (Target::Slice, _) => return type_error("[]interface {}"),
    }
    if let Some(e) = p.number_error {
        return Err(e);
    }
    Ok(v)
}

struct Parser<'a> {
    b: &'a [u8],
    pos: usize,
    number_error: Option<String>,
}

/// Go's `quoteChar`: a byte as a quoted character for scanner errors.
fn quote_char(c: u8) -> String {
    match c {
        b'\'' => "'\\''".into(),
        b'"' => "'\"'".into(),
        c => {
            let q = quote(&char::from(c).to_string());
            format!("'{}'", &q[1..q.len() - 1])
        }
    }
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.pos += 1;
        }
    }

    fn eof() -> String {
        "unexpected end of JSON input".into()
    }

    fn invalid(&self, context: &str) -> String {
        match self.peek() {
            Some(c) => format!("invalid character {} {context}", quote_char(c)),
            None => Self::eof(),
        }
    }

    fn value(&mut self) -> Result<GoValue, String> {
        match self.peek() {
            None => Err(Self::eof()),
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => self.string().map(GoValue::String),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.literal("true", GoValue::Bool(true)),
            Some(b'f') => self.literal("false", GoValue::Bool(false)),
            Some(b'n') => self.literal("null", GoValue::Nil),
            Some(_) => Err(self.invalid("looking for beginning of value")),
        }
    }

    fn literal(&mut self, word: &str, v: GoValue) -> Result<GoValue, String> {
        let w = word.as_bytes();
        self.pos += 1;
        for expected in &w[1..] {
            match self.peek() {
                None => return Err(Self::eof()),
                Some(c) if c == *expected => self.pos += 1,
                Some(_) => {
                    return Err(self.invalid(&format!(
                        "in literal {word} (expecting {})",
                        quote_char(*expected)
                    )));
                }
            }
        }
        Ok(v)
    }

    fn number(&mut self) -> Result<GoValue, String> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
            match self.peek() {
                Some(b'0'..=b'9') => {}
                None => return Err(Self::eof()),
                Some(_) => return Err(self.invalid("in numeric literal")),
            }
        }
        if self.peek() == Some(b'0') {
            self.pos += 1;
        } else {
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                self.pos += 1;
            }
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            match self.peek() {
                Some(b'0'..=b'9') => {}
                None => return Err(Self::eof()),
                Some(_) => return Err(self.invalid("after decimal point in numeric literal")),
            }
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                self.pos += 1;
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            match self.peek() {
                Some(b'0'..=b'9') => {}
                None => return Err(Self::eof()),
                Some(_) => return Err(self.invalid("in exponent of numeric literal")),
            }
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                self.pos += 1;
            }
        }
        let text = std::str::from_utf8(&self.b[start..self.pos]).unwrap_or("0");
        let f: f64 = text.parse().unwrap_or(f64::NAN);
        if !f.is_finite() && self.number_error.is_none() {
            self.number_error = Some(format!(
                "json: cannot unmarshal number {text} into Go value of type float64"
            ));
        }
        Ok(GoValue::Float(f))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let mut v = 0u32;
        for _ in 0..4 {
            match self.peek() {
                None => return Err(Self::eof()),
                Some(c) if c.is_ascii_hexdigit() => {
                    v = v * 16 + char::from(c).to_digit(16).unwrap_or(0);
                    self.pos += 1;
                }
                Some(_) => return Err(self.invalid("in \\u hexadecimal character escape")),
            }
        }
        Ok(v)
    }

    fn string(&mut self) -> Result<String, String> {
        self.pos += 1; // opening quote
        let mut out: Vec<u8> = Vec::new();
        loop {
            match self.peek() {
                None => return Err(Self::eof()),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(String::from_utf8_lossy(&out).into_owned());
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let c = self.peek().ok_or_else(Self::eof)?;
                    let simple = match c {
                        b'b' => Some(b'\x08'),
                        b'f' => Some(b'\x0c'),
                        b'n' => Some(b'\n'),
                        b'r' => Some(b'\r'),
                        b't' => Some(b'\t'),
                        b'\\' | b'/' | b'"' => Some(c),
                        b'u' => None,
                        _ => return Err(self.invalid("in string escape code")),
                    };
                    self.pos += 1;
                    match simple {
                        Some(b) => out.push(b),
                        None => {
                            let u = self.hex4()?;
                            let ch = if (0xD800..0xDC00).contains(&u) {
                                // A high surrogate needs a low one right after.
                                let save = self.pos;
                                if self.b.get(self.pos) == Some(&b'\\')
                                    && self.b.get(self.pos + 1) == Some(&b'u')
                                {
                                    self.pos += 2;
                                    let lo = self.hex4()?;
                                    if (0xDC00..0xE000).contains(&lo) {
                                        char::from_u32(
                                            0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00),
                                        )
                                    } else {
                                        self.pos = save;
                                        None
                                    }
                                } else {
                                    None
                                }
                            } else {
                                char::from_u32(u)
                            };
                            let ch = ch.unwrap_or('\u{FFFD}');
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                    }
                }
                Some(c) if c < 0x20 => return Err(self.invalid("in string literal")),
                Some(c) => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn array(&mut self) -> Result<GoValue, String> {
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(GoValue::Slice(items));
        }
        loop {
            self.skip_ws();
            items.push(self.value()?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(GoValue::Slice(items));
                }
                None => return Err(Self::eof()),
                Some(_) => return Err(self.invalid("after array element")),
            }
        }
    }

    fn object(&mut self) -> Result<GoValue, String> {
        self.pos += 1;
        let mut m = BTreeMap::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(GoValue::Map(m));
        }
        loop {
            self.skip_ws();
            match self.peek() {
                Some(b'"') => {}
                None => return Err(Self::eof()),
                Some(_) => return Err(self.invalid("looking for beginning of object key string")),
            }
            let key = self.string()?;
            self.skip_ws();
            match self.peek() {
                Some(b':') => self.pos += 1,
                None => return Err(Self::eof()),
                Some(_) => return Err(self.invalid("after object key")),
            }
            self.skip_ws();
            let v = self.value()?;
            m.insert(key, v);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(GoValue::Map(m));
                }
                None => return Err(Self::eof()),
                Some(_) => return Err(self.invalid("after object key:value pair")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marshal_like_go() {
        let v = unmarshal(
            r#"{"b":[1,2.5,true,null],"a":"<&>\u2028","c":{}}"#,
            Target::Any,
        )
        .unwrap();
        assert_eq!(
            marshal(&v).unwrap(),
            r#"{"a":"\u003c\u0026\u003e\u2028","b":[1,2.5,true,null],"c":{}}"#
        );
        assert_eq!(marshal(&GoValue::Float(1e21)).unwrap(), "1e+21");
        assert_eq!(marshal(&GoValue::Float(1e-7)).unwrap(), "1e-7");
        assert_eq!(
            marshal(&GoValue::Float(1e20)).unwrap(),
            "100000000000000000000"
        );
        assert_eq!(marshal(&GoValue::Float(0.000001)).unwrap(), "0.000001");
        assert_eq!(marshal(&GoValue::Int(-3)).unwrap(), "-3");
        assert_eq!(
            marshal(&GoValue::String("a\u{1}\u{8}".into())).unwrap(),
            "\"a\\u0001\\b\""
        );
        assert_eq!(
            marshal(&GoValue::Float(f64::NAN)).unwrap_err(),
            "json: unsupported value: NaN"
        );
    }

    #[test]
    fn protojson_like_go() {
        let v = serde_json::json!({"z": [1, 1.5, 1e21], "a": "<&>\u{7f}\n", "m": {}});
        assert_eq!(
            protojson(&v),
            r#"{"a":"<&>\u007f\n","m":{},"z":[1,1.5,1e+21]}"#
        );
    }

    #[test]
    fn encoding_json_escapes_html_and_line_separators_but_not_del() {
        let mut out = String::new();
        encode_string(&mut out, "<&>\u{7f}\u{1}\u{2028}\u{2029}\"\\");
        assert_eq!(
            out,
            "\"\\u003c\\u0026\\u003e\u{7f}\\u0001\\u2028\\u2029\\\"\\\\\""
        );
        let v = serde_json::json!("\u{2028}\u{1}");
        assert_eq!(protojson(&v), "\"\u{2028}\\u0001\"");
    }

    #[test]
    fn unmarshal_errors_like_go() {
        let cases = [
            ("", "unexpected end of JSON input"),
            ("{", "unexpected end of JSON input"),
            ("[1,2", "unexpected end of JSON input"),
            ("x", "invalid character 'x' looking for beginning of value"),
            ("{\"a\" 1}", "invalid character '1' after object key"),
            (
                "{\"a\":1 \"b\"}",
                "invalid character '\"' after object key:value pair",
            ),
            (
                "{1}",
                "invalid character '1' looking for beginning of object key string",
            ),
            ("[1 2]", "invalid character '2' after array element"),
            ("{} x", "invalid character 'x' after top-level value"),
            ("tru", "unexpected end of JSON input"),
            (
                "trUe",
                "invalid character 'U' in literal true (expecting 'u')",
            ),
            (
                "nul!",
                "invalid character '!' in literal null (expecting 'l')",
            ),
            ("-x", "invalid character 'x' in numeric literal"),
            (
                "1.x",
                "invalid character 'x' after decimal point in numeric literal",
            ),
            (
                "1ex",
                "invalid character 'x' in exponent of numeric literal",
            ),
            ("\"\\q\"", "invalid character 'q' in string escape code"),
            (
                "\"\\u12g4\"",
                "invalid character 'g' in \\u hexadecimal character escape",
            ),
            ("\"a\nb\"", "invalid character '\\n' in string literal"),
            (
                "'a'",
                "invalid character '\\'' looking for beginning of value",
            ),
            ("01", "invalid character '1' after top-level value"),
        ];
        for (text, want) in cases {
            assert_eq!(unmarshal(text, Target::Any).unwrap_err(), want, "{text:?}");
        }
        assert_eq!(
            unmarshal("[1]", Target::Map).unwrap_err(),
            "json: cannot unmarshal array into Go value of type map[string]interface {}"
        );
        assert_eq!(
            unmarshal("\"s\"", Target::Slice).unwrap_err(),
            "json: cannot unmarshal string into Go value of type []interface {}"
        );
        assert_eq!(
            unmarshal("[1e400]", Target::Slice).unwrap_err(),
            "json: cannot unmarshal number 1e400 into Go value of type float64"
        );
        // `null` leaves the typed target nil: a nil map or slice, not an untyped nil.
        assert_eq!(unmarshal("null", Target::Map).unwrap(), GoValue::NilMap);
        assert_eq!(unmarshal("null", Target::Slice).unwrap(), GoValue::NilSlice);
        assert_eq!(unmarshal("null", Target::Any).unwrap(), GoValue::Nil);
        assert_eq!(
            unmarshal("\"\\ud83d\\ude00\"", Target::Any).unwrap(),
            GoValue::String("😀".into())
        );
        assert_eq!(
            unmarshal("\"\\ud83d\"", Target::Any).unwrap(),
            GoValue::String("\u{FFFD}".into())
        );
    }
}
