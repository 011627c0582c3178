//! `gopkg.in/yaml.v3`'s `Marshal` and `Unmarshal` into `interface {}`, as
//! upstream's `toYaml` and `fromYaml` call them: four-space indentation,
//! sequences indented under their key, keys in go-yaml's natural order,
//! strings quoted when they would read back as another type (double
//! quotes) or cannot be plain (single quotes), literal blocks for
//! multi-line strings, no folding.

use std::collections::BTreeMap;

use crate::template::value::{Elem, Value};

const INDENT: usize = 4;
/// The deepest value `toYaml` prints.
const MAX_DEPTH: usize = 500;

/// `yaml.Marshal(v)`.
pub fn marshal(v: &Value) -> Result<String, String> {
    let mut out = String::new();
    match v {
        Value::Map(m, _) if m.borrow().is_empty() => out.push_str("{}\n"),
        Value::List(l, _) if l.is_empty() => out.push_str("[]\n"),
        Value::Map(..) | Value::List(..) => block(&mut out, v, 0, 0)?,
        Value::Struct(st) => match &st.yaml {
            Some(fields) => struct_block(&mut out, fields, 0, 0)?,
            None => return Err("toYaml of a struct is not supported by xfn's port".into()),
        },
        scalar => {
            let s = scalar_text(scalar, INDENT);
            out.push_str(&s);
            out.push('\n');
        }
    }
    Ok(out)
}

fn sorted_keys(m: &BTreeMap<String, Value>) -> Vec<String> {
    let mut keys: Vec<String> = m.keys().cloned().collect();
    keys.sort_by(|a, b| {
        if natural_less(a, b) {
            std::cmp::Ordering::Less
        } else if natural_less(b, a) {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    });
    keys
}

/// go-yaml's `keyList.Less` for two strings.
fn natural_less(a: &str, b: &str) -> bool {
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    let mut digits = false;
    let mut i = 0;
    while i < ar.len() && i < br.len() {
        if ar[i] == br[i] {
            digits = ar[i].is_ascii_digit();
            i += 1;
            continue;
        }
        let al = ar[i].is_alphabetic();
        let bl = br[i].is_alphabetic();
        if al && bl {
            return ar[i] < br[i];
        }
        if al || bl {
            return if digits { al } else { bl };
        }
        let (mut an, mut bn) = (0i64, 0i64);
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && ar[j - 1].is_ascii_digit() {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && ar[ai].is_ascii_digit() {
            an = an
                .wrapping_mul(10)
                .wrapping_add(i64::from(ar[ai] as u8 - b'0'));
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && br[bi].is_ascii_digit() {
            bn = bn
                .wrapping_mul(10)
                .wrapping_add(i64::from(br[bi] as u8 - b'0'));
            bi += 1;
        }
        if an != bn {
            return an < bn;
        }
        if ai != bi {
            return ai < bi;
        }
        return ar[i] < br[i];
    }
    ar.len() < br.len()
}

/// A struct as yaml.v3 writes it: its fields in declaration order.
fn struct_block(
    out: &mut String,
    fields: &[(&'static str, Value)],
    indent: usize,
    depth: usize,
) -> Result<(), String> {
    for (i, (k, v)) in fields.iter().enumerate() {
        if i > 0 {
            pad(out, indent);
        }
        out.push_str(&key_text(k)?);
        out.push(':');
        value_after(out, v, indent, depth, false)?;
    }
    Ok(())
}

fn pad(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

/// A block collection at `indent`; the first line's indentation is already
/// written when `first_inline` columns are taken (after `- `).
fn block(out: &mut String, v: &Value, indent: usize, depth: usize) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!("value nests deeper than {MAX_DEPTH} levels"));
    }
    let mut first = true;
    match v {
        Value::Map(m, _) => {
            let m = m.borrow();
            for k in sorted_keys(&m) {
                if !first {
                    pad(out, indent);
                }
                first = false;
                let val = &m[&k];
                out.push_str(&key_text(&k)?);
                out.push(':');
                value_after(out, val, indent, depth, false)?;
            }
        }
        Value::List(l, _) => {
            for e in l.iter() {
                if !first {
                    pad(out, indent);
                }
                first = false;
                out.push('-');
                value_after(out, e, indent, depth, true)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Writes a value after `key:` or `-`.
/// yaml.v3's indentation step: into a sequence item, past its `- `;
/// anywhere else, to the next multiple of four.
fn next_indent(indent: usize, in_seq: bool) -> usize {
    if in_seq {
        indent + 2
    } else {
        INDENT * ((indent + INDENT) / INDENT)
    }
}

fn value_after(
    out: &mut String,
    v: &Value,
    indent: usize,
    depth: usize,
    in_seq: bool,
) -> Result<(), String> {
    let child = next_indent(indent, in_seq);
    let nonempty = match v {
        Value::Map(m, _) => !m.borrow().is_empty(),
        Value::List(l, _) => !l.is_empty(),
        _ => false,
    };
    match v {
        Value::Map(..) | Value::List(..) if nonempty => {
            if in_seq {
                out.push(' ');
            } else {
                out.push('\n');
                pad(out, child);
            }
            block(out, v, child, depth + 1)
        }
        Value::Map(..) => {
            out.push_str(" {}\n");
            Ok(())
        }
        Value::List(..) => {
            out.push_str(" []\n");
            Ok(())
        }
        Value::Struct(st) => match &st.yaml {
            Some(fields) => {
                let child = next_indent(indent, in_seq);
                if in_seq {
                    out.push(' ');
                } else {
                    out.push('\n');
                    pad(out, child);
                }
                struct_block(out, fields, child, depth + 1)
            }
            None => Err("toYaml of a struct is not supported by xfn's port".into()),
        },
        scalar => {
            out.push(' ');
            out.push_str(&scalar_text(scalar, child));
            out.push('\n');
            Ok(())
        }
    }
}

fn key_text(k: &str) -> Result<String, String> {
    // go-yaml writes such a key as a complex key (`? ...`).
    if k.contains(['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}']) {
        return Err("toYaml: a map key with a line break is not supported by xfn's port".into());
    }
    Ok(string_text(k, 0, true))
}

fn scalar_text(v: &Value, indent: usize) -> String {
    match v {
        Value::Invalid | Value::Nil => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i, _) => i.to_string(),
        Value::Float(f) => {
            if f.is_nan() {
                ".nan".into()
            } else if f.is_infinite() {
                if *f > 0.0 {
                    ".inf".into()
                } else {
                    "-.inf".into()
                }
            } else {
                xfn_gocompat::gofmt::format_float(*f, b'g', -1)
            }
        }
        Value::Str(s) => string_text(s, indent, false),
        // yaml.v3 writes a time.Time as plain RFC 3339.
        Value::Time(t) => crate::gotime::rfc3339_nano(*t),
        _ => String::new(),
    }
}

fn string_text(s: &str, indent: usize, is_key: bool) -> String {
    let can_plain = resolves_to_str(s) && !is_old_bool(s) && !is_base60_float(s);
    if s.contains('\n') && !is_key {
        if let Some(b) = literal(s, indent) {
            return b;
        }
        return double_quoted(s);
    }
    if !can_plain {
        return double_quoted(s);
    }
    let a = analyze(s);
    if a.plain {
        s.to_string()
    } else if a.single {
        format!("'{}'", s.replace('\'', "''"))
    } else {
        double_quoted(s)
    }
}

struct Analysis {
    plain: bool,
    single: bool,
}

/// libyaml's `yaml_emitter_analyze_scalar`, for block context.
fn analyze(s: &str) -> Analysis {
    if s.is_empty() {
        return Analysis {
            plain: false,
            single: true,
        };
    }
    let chars: Vec<char> = s.chars().collect();
    let mut block_ind = false;
    let mut special = false;
    let mut leading_space = false;
    let mut trailing_space = false;
    if s.starts_with("---") || s.starts_with("...") {
        block_ind = true;
    }
    let mut preceded_ws = true;
    for (i, &c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
        let followed_ws = matches!(next, None | Some(' ' | '\t' | '\r' | '\n'));
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => {
                    block_ind = true;
                }
                '?' | ':' => {
                    if followed_ws {
                        block_ind = true;
                    }
                }
                '-' if followed_ws => {
                    block_ind = true;
                }
                _ => {}
            }
        } else {
            match c {
                ':' => {
                    if followed_ws {
                        block_ind = true;
                    }
                }
                '#' if preceded_ws => {
                    block_ind = true;
                }
                _ => {}
            }
        }
        let printable = ('\u{20}'..='\u{7e}').contains(&c)
            || ('\u{a0}'..='\u{d7ff}').contains(&c)
            || (('\u{e000}'..='\u{fffd}').contains(&c) && c != '\u{feff}')
            || c == '\n'
            || c == '\t';
        if !printable || (!c.is_ascii() && false) {
            special = true;
        }
        if c == ' ' {
            if i == 0 {
                leading_space = true;
            }
            if i == chars.len() - 1 {
                trailing_space = true;
            }
        }
        if c == '\t' {
            special = true;
        }
        preceded_ws = matches!(c, ' ' | '\t' | '\r' | '\n');
    }
    let plain = !(leading_space || trailing_space || block_ind || special);
    let single = !special;
    Analysis { plain, single }
}

fn literal(s: &str, indent: usize) -> Option<String> {
    // Leading spaces or special characters need an indentation indicator or
    // double quotes; trailing spaces on a line cannot be literal.
    if s.chars().any(|c| (c < ' ' && c != '\n') || c == '\u{7f}') {
        return None;
    }
    if s.lines().any(|l| l.ends_with(' ')) {
        return None;
    }
    let chomp = if !s.ends_with('\n') {
        "-"
    } else if s.ends_with("\n\n") || s == "\n" {
        "+"
    } else {
        ""
    };
    let ind = if s.starts_with(' ') || s.starts_with('\n') {
        format!("{INDENT}")
    } else {
        String::new()
    };
    let mut out = format!("|{ind}{chomp}\n");
    let body = s.strip_suffix('\n').unwrap_or(s);
    for (i, line) in body.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if !line.is_empty() {
            pad(&mut out, indent);
            out.push_str(line);
        }
    }
    Some(out)
}

/// go-yaml's double-quoted style: escapes for breaks, quotes, backslashes
/// and characters it does not print (outside its printable ranges, which
/// leave out U+0085 and everything past the BMP).
fn double_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        let printable = c == '\n'
            || (' '..='~').contains(&c)
            || ('\u{a0}'..='\u{d7ff}').contains(&c)
            || (('\u{e000}'..='\u{fffd}').contains(&c) && c != '\u{feff}');
        let special = !printable
            || matches!(
                c,
                '"' | '\\' | '\u{feff}' | '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}'
            );
        if !special {
            out.push(c);
            continue;
        }
        match c {
            '\0' => out.push_str("\\0"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{b}' => out.push_str("\\v"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '\u{1b}' => out.push_str("\\e"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{85}' => out.push_str("\\N"),
            '\u{a0}' => out.push_str("\\_"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            c if (c as u32) <= 0xff => out.push_str(&format!("\\x{:02X}", c as u32)),
            c if (c as u32) <= 0xffff => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push_str(&format!("\\U{:08X}", c as u32)),
        }
    }
    out.push('"');
    out
}

fn is_old_bool(s: &str) -> bool {
    matches!(
        s,
        "y" | "Y"
            | "yes"
            | "Yes"
            | "YES"
            | "on"
            | "On"
            | "ON"
            | "n"
            | "N"
            | "no"
            | "No"
            | "NO"
            | "off"
            | "Off"
            | "OFF"
    )
}

fn is_base60_float(s: &str) -> bool {
    // ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$
    let b = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (head, frac) = match b.split_once('.') {
        Some((h, f)) => (h, Some(f)),
        None => (b, None),
    };
    if let Some(f) = frac
        && !f.chars().all(|c| c.is_ascii_digit() || c == '_')
    {
        return false;
    }
    let mut parts = head.split(':');
    let Some(first) = parts.next() else {
        return false;
    };
    if first.is_empty()
        || !first.starts_with(|c: char| c.is_ascii_digit())
        || !first.chars().all(|c| c.is_ascii_digit() || c == '_')
    {
        return false;
    }
    let mut n = 0;
    for p in parts {
        n += 1;
        let ok = match p.len() {
            1 => p.as_bytes()[0].is_ascii_digit(),
            2 => (b'0'..=b'5').contains(&p.as_bytes()[0]) && p.as_bytes()[1].is_ascii_digit(),
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    n > 0
}

/// Whether yaml.v3's `resolve` reads the plain scalar as a string.
fn resolves_to_str(s: &str) -> bool {
    if s.is_empty() {
        return false;
    }
    if matches!(
        s,
        "~" | "null"
            | "Null"
            | "NULL"
            | "true"
            | "True"
            | "TRUE"
            | "false"
            | "False"
            | "FALSE"
            | ".inf"
            | ".Inf"
            | ".INF"
            | "+.inf"
            | "+.Inf"
            | "+.INF"
            | "-.inf"
            | "-.Inf"
            | "-.INF"
            | ".nan"
            | ".NaN"
            | ".NAN"
            | "<<"
    ) {
        return false;
    }
    let c = s.as_bytes()[0];
    if c.is_ascii_digit() || matches!(c, b'+' | b'-' | b'.') {
        let plain = s.replace('_', "");
        if parse_go_int(&plain) {
            return false;
        }
        if is_yaml_float(s) {
            return false;
        }
        if c.is_ascii_digit() && is_timestamp(s) {
            return false;
        }
        if let Some(rest) = plain
            .strip_prefix("0b")
            .or_else(|| plain.strip_prefix("-0b"))
            && !rest.is_empty()
            && rest.chars().all(|c| c == '0' || c == '1')
        {
            return false;
        }
        if let Some(rest) = plain
            .strip_prefix("0o")
            .or_else(|| plain.strip_prefix("-0o"))
            && !rest.is_empty()
            && rest.chars().all(|c| ('0'..='7').contains(&c))
        {
            return false;
        }
    }
    true
}

fn parse_go_int(s: &str) -> bool {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    if body.is_empty() {
        return false;
    }
    if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        return !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit());
    }
    if body.len() > 1 && body.starts_with('0') {
        return body.chars().all(|c| ('0'..='7').contains(&c));
    }
    body.chars().all(|c| c.is_ascii_digit())
}

fn is_yaml_float(s: &str) -> bool {
    // ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
    let b = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (mant, exp) = match b.find(['e', 'E']) {
        Some(i) => (&b[..i], Some(&b[i + 1..])),
        None => (b, None),
    };
    let mant_ok = if let Some(f) = mant.strip_prefix('.') {
        !f.is_empty() && f.chars().all(|c| c.is_ascii_digit())
    } else {
        let (i, f) = mant.split_once('.').unwrap_or((mant, ""));
        !i.is_empty()
            && i.chars().all(|c| c.is_ascii_digit())
            && f.chars().all(|c| c.is_ascii_digit())
    };
    let exp_ok = match exp {
        None => true,
        Some(e) => {
            let e = e.strip_prefix(['-', '+']).unwrap_or(e);
            !e.is_empty() && e.chars().all(|c| c.is_ascii_digit())
        }
    };
    mant_ok && exp_ok
}

/// Whether yaml.v3 reads a plain scalar as a timestamp.
pub fn is_timestamp(s: &str) -> bool {
    // yaml.v3 accepts: 2006-1-2T15:4:5.999999999Z07:00, 2006-1-2t15:4:5..., "2006-1-2 15:4:5...", 2006-1-2
    let b = s.as_bytes();
    if b.len() < 8 {
        return false;
    }
    let date_end = s.find(['T', 't', ' ']).unwrap_or(s.len());
    let date = &s[..date_end];
    let parts: Vec<&str> = date.split('-').collect();
    if parts.len() != 3
        || parts[0].len() != 4
        || !parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 2 || p.len() == 4)
        || !parts.iter().all(|p| p.chars().all(|c| c.is_ascii_digit()))
    {
        return false;
    }
    if date_end == s.len() {
        return true;
    }
    // A time part: accept when it looks like h:m:s.
    let rest = &s[date_end + 1..];
    let time_part = rest.split(['Z', '+', '-', ' ']).next().unwrap_or("");
    let t: Vec<&str> = time_part.split(':').collect();
    t.len() == 3
        && t.iter()
            .take(2)
            .all(|p| !p.is_empty() && p.len() <= 2 && p.chars().all(|c| c.is_ascii_digit()))
}

/// `yaml.Unmarshal` into `interface {}`: the text's first document, with
/// yaml.v3's resolution (integers are Go `int`).
pub fn unmarshal(text: &str) -> Result<Value, String> {
    let j = crate::yamlv2::to_json_with(text, crate::yamlv2::Schema::V3).map_err(|e| {
        if e.line > 0 {
            format!("yaml: line {}: {}", e.line, e.message)
        } else {
            e.message
        }
    })?;
    Ok(from_json_v3(&j))
}

fn from_json_v3(j: &serde_json::Value) -> Value {
    use serde_json::Value as J;
    match j {
        J::Number(n) => match n.as_i64() {
            Some(i) if !n.is_f64() => Value::int(i),
            _ => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        J::Array(a) => Value::list(a.iter().map(from_json_v3).collect()),
        J::Object(o) => Value::map(
            o.iter()
                .map(|(k, v)| (k.clone(), from_json_v3(v)))
                .collect(),
        ),
        other => Value::from_json(other),
    }
}

#[allow(dead_code)]
fn elem_any() -> Elem {
    Elem::Any
}
