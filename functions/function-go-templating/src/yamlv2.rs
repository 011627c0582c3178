//! Reading one rendered YAML document as upstream does (sigs.k8s.io/yaml's
//! `YAMLToJSON`, i.e. go-yaml v2 into `interface {}` then JSON): libyaml's
//! events, with go-yaml v2's YAML 1.1 resolution of plain scalars (`yes`,
//! `on`, `y` are booleans, `0644` is octal, `1_000` an integer, `~` null),
//! anchors, aliases and `<<` merge keys, and its error texts
//! (`yaml: line N: PROBLEM`, the line off by one for parser errors as
//! go-yaml computes it).

use libyaml_safer::{EventData, Parser, ScalarStyle};
use serde_json::{Map, Number, Value as J};

/// The deepest nesting of a document.
pub const MAX_DEPTH: usize = 500;
/// The most values a document may expand to (aliases included).
pub const MAX_NODES: usize = 5_000_000;

/// A YAML error: its line as go-yaml reports it (0 when it has none) and
/// the problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    /// The line go-yaml names.
    pub line: usize,
    /// libyaml's problem, or the loader's.
    pub message: String,
}

enum Frame {
    Seq(Vec<J>, Option<String>),
    Map(Map<String, J>, Option<J>, Option<String>),
}

/// Which go-yaml reads the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schema {
    /// go-yaml v2 through sigs.k8s.io/yaml (rendered manifests): YAML 1.1
    /// booleans, infinities refused by the JSON conversion.
    V2,
    /// yaml.v3 into `interface {}` (`fromYaml`): only `true`/`false`
    /// booleans; infinities and NaN are refused as not representable here.
    V3,
}

/// Parses the first document of `text` as sigs.k8s.io/yaml does (go-yaml
/// v2) into JSON (null for an empty one).
pub fn to_json(text: &str) -> Result<J, YamlError> {
    to_json_with(text, Schema::V2)
}

/// Parses the first document of `text` with `schema`'s resolution.
pub fn to_json_with(text: &str, schema: Schema) -> Result<J, YamlError> {
    // libyaml-safer 0.3 panics ("unexpected end of input") on a block
    // scalar that ends the text without a line break; a final line break
    // changes no value go-yaml reads (the differential test checks it).
    if let Some(line) = tag_before_comma(text) {
        return Err(YamlError {
            line,
            message: "a tag followed directly by ',' is not supported by xfn's YAML reader".into(),
        });
    }
    let original_len = text.len() as u64;
    let eof_line = text.matches('\n').count() as u64;
    let appended = !text.ends_with('\n');
    let owned;
    let text = if appended {
        owned = format!("{text}\n");
        owned.as_str()
    } else {
        text
    };
    // A mark past the original text is at its end.
    let clamp = |m: libyaml_safer::Mark| {
        if m.index >= original_len {
            eof_line
        } else {
            m.line
        }
    };
    let mut bytes = text.as_bytes();
    let mut parser = Parser::new();
    parser.set_input_string(&mut bytes);
    let mut anchors: std::collections::HashMap<String, J> = std::collections::HashMap::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut nodes = 0usize;
    let mut result: Option<J> = None;
    loop {
        let event = parser.parse().map_err(|e| {
            // go-yaml v2's parser.fail: the problem's line (plus one for a
            // scanner error) when it is not 0, else the context's line, else
            // none. A scanner error at the end of the text is where the text
            // ends; the parser's end of stream is on the next line, as
            // libyaml forces a line break there.
            let scanner = e.kind() == libyaml_safer::ErrorKind::Scanner;
            let mark_line = |m: libyaml_safer::Mark| if scanner { clamp(m) } else { m.line };
            let problem = e.problem_mark().map_or(0, mark_line);
            let context = e.context_mark().map_or(0, mark_line);
            let line = if problem != 0 {
                if scanner { problem + 1 } else { problem }
            } else {
                context
            };
            let message = if line == 0 {
                format!("yaml: {}", e.problem())
            } else {
                e.problem().to_string()
            };
            YamlError {
                line: line as usize,
                message,
            }
        })?;
        let at_eof = appended && event.end_mark.index >= original_len;
        let mut value: Option<(J, Option<String>)> = None;
        match event.data {
            EventData::StreamEnd | EventData::DocumentEnd { .. } => break,
            EventData::StreamStart { .. } | EventData::DocumentStart { .. } => continue,
            EventData::Alias { anchor } => {
                let v = anchors.get(&anchor).cloned().ok_or_else(|| YamlError {
                    line: 0,
                    message: format!("yaml: unknown anchor '{anchor}' referenced"),
                })?;
                nodes += count(&v);
                value = Some((v, None));
            }
            EventData::Scalar {
                anchor,
                tag,
                value: mut text,
                style,
                ..
            } => {
                // The line break added above is not the scalar's.
                if at_eof
                    && matches!(style, ScalarStyle::Literal | ScalarStyle::Folded)
                    && text.ends_with('\n')
                {
                    text.pop();
                }
                let v = resolve(&text, style, tag.as_deref(), schema)
                    .map_err(|message| YamlError { line: 0, message })?;
                value = Some((v, anchor));
            }
            EventData::SequenceStart { anchor, .. } => {
                if stack.len() >= MAX_DEPTH {
                    return Err(YamlError {
                        line: 0,
                        message: format!("document nests deeper than {MAX_DEPTH} levels"),
                    });
                }
                stack.push(Frame::Seq(Vec::new(), anchor));
            }
            EventData::MappingStart { anchor, .. } => {
                if stack.len() >= MAX_DEPTH {
                    return Err(YamlError {
                        line: 0,
                        message: format!("document nests deeper than {MAX_DEPTH} levels"),
                    });
                }
                stack.push(Frame::Map(Map::new(), None, anchor));
            }
            EventData::SequenceEnd => {
                if let Some(Frame::Seq(items, anchor)) = stack.pop() {
                    value = Some((J::Array(items), anchor));
                }
            }
            EventData::MappingEnd => {
                if let Some(Frame::Map(m, _, anchor)) = stack.pop() {
                    value = Some((J::Object(m), anchor));
                }
            }
        }
        let Some((v, anchor)) = value else { continue };
        nodes += 1;
        if nodes > MAX_NODES {
            return Err(YamlError {
                line: 0,
                message: format!("document expands to more than {MAX_NODES} values"),
            });
        }
        if let Some(a) = anchor {
            anchors.insert(a, v.clone());
        }
        match stack.last_mut() {
            None => result = Some(v),
            Some(Frame::Seq(items, _)) => items.push(v),
            Some(Frame::Map(m, key, _)) => match key.take() {
                None => *key = Some(v),
                Some(k) => insert(m, k, v).map_err(|message| YamlError { line: 0, message })?,
            },
        }
    }
    Ok(result.unwrap_or(J::Null))
}

/// Where a tag (`!x`) is followed directly by `,`: libyaml-safer 0.3 panics
/// there ("TODO") in flow context, so such a text is refused first. The
/// 1-based line, as go-yaml would name it.
fn tag_before_comma(text: &str) -> Option<usize> {
    let chars: Vec<char> = text.chars().collect();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
        }
        // A tag starts a token: not inside a word (`Hello!, world` is text).
        let starts = i == 0 || !chars[i - 1].is_alphanumeric();
        if c == '!' && starts {
            let mut j = i + 1;
            while j < chars.len() && !matches!(chars[j], ' ' | '\t' | '\n' | '\r' | ',') {
                j += 1;
            }
            if j < chars.len() && chars[j] == ',' {
                return Some(line);
            }
        }
        i += 1;
    }
    None
}

fn count(v: &J) -> usize {
    match v {
        J::Array(a) => 1 + a.iter().map(count).sum::<usize>(),
        J::Object(o) => 1 + o.values().map(count).sum::<usize>(),
        _ => 1,
    }
}

/// Adds a key to a mapping: `<<` merges (see below), other keys
/// become strings as sigs.k8s.io/yaml writes them, and a repeated key's
/// last value wins.
fn insert(m: &mut Map<String, J>, key: J, v: J) -> Result<(), String> {
    if key == J::String("<<".into()) {
        // go-yaml v2 merges a list's maps from the last to the first, each
        // setting its keys: the first map wins, and keys written after the
        // merge key override it.
        let sources: Vec<J> = match v {
            J::Array(a) => a.into_iter().rev().collect(),
            other => vec![other],
        };
        for s in sources {
            if let J::Object(o) = s {
                for (k, val) in o {
                    m.insert(k, val);
                }
            }
        }
        return Ok(());
    }
    let k = match key {
        J::String(s) => s,
        J::Bool(b) => b.to_string(),
        J::Number(n) => n.to_string(),
        other => {
            // sigs.k8s.io/yaml: "%s, key: %+#v, value: %+#v".
            let shown = |j: &J| {
                let g = crate::template::Value::from_json(j).to_go();
                xfn_gocompat::gofmt::sprintf("%+#v", &[g])
            };
            let (ty, key) = match &other {
                J::Null => ("%!s(<nil>)".to_string(), "<nil>".to_string()),
                o => (
                    crate::template::Value::from_json(o).type_name().to_string(),
                    shown(o),
                ),
            };
            return Err(format!(
                "Unsupported map key of type: {ty}, key: {key}, value: {}",
                shown(&v)
            ));
        }
    };
    m.insert(k, v);
    Ok(())
}

/// go-yaml v2's `resolve` of a scalar; infinities and NaN cannot become
/// JSON (`json: unsupported value`, as `YAMLToJSON` fails).
fn resolve(text: &str, style: ScalarStyle, tag: Option<&str>, schema: Schema) -> Result<J, String> {
    let plain = style == ScalarStyle::Plain;
    match tag {
        Some("tag:yaml.org,2002:str") | Some("!!str") => return Ok(J::String(text.into())),
        Some("tag:yaml.org,2002:binary") | Some("!!binary") => {
            use base64::Engine as _;
            let clean: String = text.chars().filter(|c| !c.is_whitespace()).collect();
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(clean)
                .map_err(|_| "yaml: !!binary value contains invalid base64 data".to_string())?;
            return Ok(J::String(xfn_gocompat::value::go_lossy_utf8(&bytes)));
        }
        Some(_) => {}
        None if !plain => return Ok(J::String(text.into())),
        None => {}
    }
    if schema == Schema::V3 {
        if text.starts_with(|c: char| c.is_ascii_digit()) && crate::yamlv3::is_timestamp(text) {
            return Err(format!(
                "fromYaml: the timestamp {text} (a time.Time in Go) is not supported by xfn's port"
            ));
        }
        match text {
            "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" | "n" | "N" | "no" | "No"
            | "NO" | "off" | "Off" | "OFF" => return Ok(J::String(text.into())),
            ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf"
            | "-.INF" | ".nan" | ".NaN" | ".NAN" => {
                return Err(format!(
                    "fromYaml: the float {text} is not supported by xfn's port"
                ));
            }
            _ => {}
        }
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Ok(J::Null),
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Ok(J::Bool(true));
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Ok(J::Bool(false));
        }
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Err("json: unsupported value: +Inf".into());
        }
        "-.inf" | "-.Inf" | "-.INF" => return Err("json: unsupported value: -Inf".into()),
        ".nan" | ".NaN" | ".NAN" => return Err("json: unsupported value: NaN".into()),
        _ => {}
    }
    let c = text.as_bytes()[0];
    if c.is_ascii_digit() || matches!(c, b'+' | b'-' | b'.') {
        let clean = text.replace('_', "");
        if let Some(i) = go_parse_int(&clean) {
            return Ok(J::from(i));
        }
        if !clean.starts_with('-')
            && let Ok(u) = clean.strip_prefix('+').unwrap_or(&clean).parse::<u64>()
        {
            return Ok(J::from(u));
        }
        if let Some(Ok(i)) = clean.strip_prefix("0b").map(|b| i64::from_str_radix(b, 2)) {
            return Ok(J::from(i));
        }
        if let Some(Ok(i)) = clean.strip_prefix("-0b").map(|b| i64::from_str_radix(b, 2)) {
            return Ok(J::from(-i));
        }
        if is_yaml_float(&clean)
            && let Some(n) = clean.parse::<f64>().ok().and_then(Number::from_f64)
        {
            return Ok(J::Number(n));
        }
    }
    Ok(J::String(text.into()))
}

/// `strconv.ParseInt(s, 0, 64)`.
fn go_parse_int(s: &str) -> Option<i64> {
    let (neg, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, digits) =
        if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
            (16, h)
        } else if let Some(o) = body.strip_prefix("0o").or_else(|| body.strip_prefix("0O")) {
            (8, o)
        } else if body.len() > 1 && body.starts_with('0') {
            (8, &body[1..])
        } else {
            (10, body)
        };
    if digits.is_empty() || digits.starts_with(['+', '-']) {
        return None;
    }
    let mag = u64::from_str_radix(digits, radix).ok()?;
    if neg {
        if mag <= 1 << 63 {
            Some((mag as i64).wrapping_neg())
        } else {
            None
        }
    } else {
        i64::try_from(mag).ok()
    }
}

/// go-yaml's `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_float(s: &str) -> bool {
    let b = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (mant, exp) = match b.find(['e', 'E']) {
        Some(i) => (&b[..i], Some(&b[i + 1..])),
        None => (b, None),
    };
    let mant_ok = if let Some(f) = mant.strip_prefix('.') {
        !f.is_empty() && f.bytes().all(|c| c.is_ascii_digit())
    } else {
        let (i, f) = mant.split_once('.').unwrap_or((mant, ""));
        !i.is_empty()
            && i.bytes().all(|c| c.is_ascii_digit())
            && f.bytes().all(|c| c.is_ascii_digit())
    };
    let exp_ok = exp.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && e.bytes().all(|c| c.is_ascii_digit())
    });
    mant_ok && exp_ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn resolves_like_go_yaml_v2() {
        let v = to_json("a: yes\nb: 'yes'\nc: 0644\nd: 1_000\ne: ~\nf: 1.5\ng: 0x1F\nh: 2024-01-01\ni: on\nj: 1e3\n")
            .expect("parses");
        assert_eq!(
            v,
            json!({"a": true, "b": "yes", "c": 420, "d": 1000, "e": null, "f": 1.5, "g": 31,
                   "h": "2024-01-01", "i": true, "j": 1000.0})
        );
    }

    #[test]
    fn anchors_aliases_and_merge_keys() {
        let v = to_json("base: &b {p: 1, q: 2}\nother:\n  <<: *b\n  q: 3\nlist: [*b]\n")
            .expect("parses");
        assert_eq!(
            v,
            json!({"base": {"p": 1, "q": 2}, "other": {"p": 1, "q": 3}, "list": [{"p": 1, "q": 2}]})
        );
        // A plain `y` key is a boolean in YAML 1.1: go-yaml v2 and
        // sigs.k8s.io/yaml make it the key "true".
        assert_eq!(to_json("y: 1\n").expect("parses"), json!({"true": 1}));
    }

    #[test]
    fn a_tag_before_a_comma_is_refused_not_a_crash() {
        // libyaml-safer 0.3 panics on these; a fuzz run of 2.1 million
        // random documents found no other panic once they are refused.
        let e = to_json("a: [!!str, b]\n").expect_err("refused");
        assert!(
            e.message.contains("a tag followed directly by ','"),
            "{e:?}"
        );
        assert!(to_json("msg: Hello!, world\n").is_ok());
    }

    #[test]
    fn errors_name_the_line_as_go_yaml_does() {
        let e = to_json("a: 1\nb: %x\n").expect_err("bad token");
        assert_eq!(
            e,
            YamlError {
                line: 2,
                message: "found character that cannot start any token".into()
            }
        );
    }
}
