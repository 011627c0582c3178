//! More of sprig v3: hashes, encodings, JSON variants, float rounding, paths,
//! strings, list `must*` variants, map merging with overwrite, and random
//! strings. Split from [`crate::sprig`] to keep modules small.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use sha1::Digest as _;

use crate::sprig::{empty, strval, to_float64, to_int64};
use crate::template::func::{Env, Func, FuncMap, Param};
use crate::template::value::{Elem, Value};

fn s(a: &[Value], i: usize) -> String {
    match a.get(i) {
        Some(Value::Str(s)) => s.to_string(),
        _ => String::new(),
    }
}

fn int(a: &[Value], i: usize) -> i64 {
    match a.get(i) {
        Some(Value::Int(n, _)) => *n,
        _ => 0,
    }
}

/// `encoding/json` into `interface {}`: every number a `float64`.
fn json_floats(v: &serde_json::Value) -> Value {
    use serde_json::Value as J;
    match v {
        J::Number(n) => Value::Float(n.as_f64().unwrap_or(0.0)),
        J::Array(a) => Value::list(a.iter().map(json_floats).collect()),
        J::Object(o) => Value::map(o.iter().map(|(k, v)| (k.clone(), json_floats(v))).collect()),
        other => Value::from_json(other),
    }
}

/// Go's `math.Max` (NaN wins; +0 over -0).
fn go_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == b && a == 0.0 {
        if a.is_sign_positive() { a } else { b }
    } else {
        a.max(b)
    }
}

/// Go's `math.Min` (NaN wins; -0 over +0).
fn go_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a == b && a == 0.0 {
        if a.is_sign_negative() { a } else { b }
    } else {
        a.min(b)
    }
}

fn until_step(start: i64, stop: i64, step: i64) -> Result<Value, String> {
    crate::sprig::until_step(start, stop, step)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `encoding/json` with `SetEscapeHTML(false)` (sprig's `toRawJson`).
fn raw_json(v: &Value) -> Result<String, String> {
    let j = v.to_json()?;
    let mut out = String::new();
    write_json(&j, &mut out, None, 0, false);
    Ok(out)
}

/// `json.MarshalIndent(v, "", "  ")` (sprig's `toPrettyJson`).
fn pretty_json(v: &Value) -> Result<String, String> {
    let j = v.to_json()?;
    let mut out = String::new();
    write_json(&j, &mut out, Some("  "), 0, true);
    Ok(out)
}

fn write_str(out: &mut String, s: &str, escape_html: bool) {
    let mut buf = String::new();
    xfn_gocompat::gojson::encode_string(&mut buf, s);
    if !escape_html {
        buf = buf
            .replace("\\u003c", "<")
            .replace("\\u003e", ">")
            .replace("\\u0026", "&");
    }
    out.push_str(&buf);
}

fn newline(out: &mut String, indent: Option<&str>, level: usize) {
    if let Some(ind) = indent {
        out.push('\n');
        for _ in 0..level {
            out.push_str(ind);
        }
    }
}

fn write_json(
    v: &serde_json::Value,
    out: &mut String,
    indent: Option<&str>,
    level: usize,
    html: bool,
) {
    use serde_json::Value as J;
    match v {
        J::Null => out.push_str("null"),
        J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        J::Number(n) => {
            if let Some(i) = n.as_i64() {
                out.push_str(&i.to_string());
            } else if let Some(u) = n.as_u64() {
                out.push_str(&u.to_string());
            } else {
                let f = n.as_f64().unwrap_or(0.0);
                out.push_str(&xfn_gocompat::gojson::encode_float(f).unwrap_or_default());
            }
        }
        J::String(s) => write_str(out, s, html),
        J::Array(a) => {
            if a.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, e) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, indent, level + 1);
                write_json(e, out, indent, level + 1, html);
            }
            newline(out, indent, level);
            out.push(']');
        }
        J::Object(o) => {
            if o.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push('{');
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, indent, level + 1);
                write_str(out, k, html);
                out.push(':');
                if indent.is_some() {
                    out.push(' ');
                }
                write_json(&o[k], out, indent, level + 1, html);
            }
            newline(out, indent, level);
            out.push('}');
        }
    }
}

/// Go's `path.Clean`.
pub fn path_clean(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if matches!(parts.last(), Some(&l) if l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            s => parts.push(s),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

fn path_dir(p: &str) -> String {
    let dir = match p.rfind('/') {
        Some(i) => &p[..=i],
        None => "",
    };
    path_clean(dir)
}

fn path_ext(p: &str) -> String {
    let b = p.as_bytes();
    for i in (0..b.len()).rev() {
        if b[i] == b'/' {
            break;
        }
        if b[i] == b'.' {
            return p[i..].to_string();
        }
    }
    String::new()
}

fn base32_encode(data: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut out = String::new();
    for chunk in data.chunks(5) {
        let mut buf = [0u8; 5];
        buf[..chunk.len()].copy_from_slice(chunk);
        let n = u64::from_be_bytes([0, 0, 0, buf[0], buf[1], buf[2], buf[3], buf[4]]);
        let chars = match chunk.len() {
            1 => 2,
            2 => 4,
            3 => 5,
            4 => 7,
            _ => 8,
        };
        for i in 0..8 {
            if i < chars {
                out.push(A[((n >> (35 - 5 * i)) & 31) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn base32_decode(s: &str) -> Result<Vec<u8>, String> {
    let b = s.as_bytes();
    if !b.len().is_multiple_of(8) {
        return Err(format!(
            "illegal base32 data at input byte {}",
            b.len() / 8 * 8
        ));
    }
    let mut out = Vec::new();
    for (ci, chunk) in b.chunks(8).enumerate() {
        let mut n: u64 = 0;
        let mut count = 0;
        for (i, &c) in chunk.iter().enumerate() {
            let v = match c {
                b'A'..=b'Z' => c - b'A',
                b'2'..=b'7' => c - b'2' + 26,
                b'=' => {
                    if chunk[i..].iter().any(|&x| x != b'=') || ci != b.len() / 8 - 1 {
                        return Err(format!("illegal base32 data at input byte {}", ci * 8 + i));
                    }
                    break;
                }
                _ => return Err(format!("illegal base32 data at input byte {}", ci * 8 + i)),
            };
            n = (n << 5) | u64::from(v);
            count += 1;
        }
        n <<= 5 * (8 - count);
        let bytes = match count {
            8 => 5,
            7 => 4,
            5 => 3,
            4 => 2,
            2 => 1,
            0 => 0,
            _ => {
                return Err(format!(
                    "illegal base32 data at input byte {}",
                    ci * 8 + count
                ));
            }
        };
        let all = n.to_be_bytes();
        out.extend_from_slice(&all[3..3 + bytes]);
    }
    Ok(out)
}

/// mergo's `Merge(..., WithOverride)`: source values that are not empty
/// replace, maps merge deeply.
fn merge_overwrite(dst: &mut BTreeMap<String, Value>, src: &BTreeMap<String, Value>) {
    for (k, sv) in src {
        match dst.get_mut(k) {
            Some(Value::Map(dm, _)) if matches!(sv, Value::Map(..)) => {
                if let Value::Map(sm, _) = sv
                    && !Rc::ptr_eq(dm, sm)
                {
                    let src = sm.borrow().clone();
                    merge_overwrite(&mut dm.borrow_mut(), &src);
                }
            }
            Some(dv) => {
                if !empty(sv) {
                    *dv = sv.clone();
                }
            }
            None => {
                dst.insert(k.clone(), sv.clone());
            }
        }
    }
}

fn deep_copy(v: &Value) -> Value {
    match v {
        Value::Map(m, e) => Value::Map(
            Rc::new(RefCell::new(
                m.borrow()
                    .iter()
                    .map(|(k, v)| (k.clone(), deep_copy(v)))
                    .collect(),
            )),
            *e,
        ),
        Value::List(l, e) => Value::List(Rc::new(l.iter().map(deep_copy).collect()), *e),
        other => other.clone(),
    }
}

fn rand_from(env: &mut dyn Env, n: i64, chars: &[u8]) -> Result<String, String> {
    crate::sprig::check_rand_len(n)?;
    Ok((0..n.max(0))
        .map(|_| chars[(env.random() % chars.len() as u64) as usize] as char)
        .collect())
}

/// Go's `strings.Title`: the first letter of each word upper-cased.
fn title(s: &str) -> String {
    let mut prev = ' ';
    s.chars()
        .map(|c| {
            let sep = !(prev.is_alphanumeric() || prev == '_');
            prev = c;
            if sep {
                let mut up: Vec<char> = c.to_uppercase().collect();
                if up.len() == 1 {
                    up.pop().unwrap_or(c)
                } else {
                    c
                }
            } else {
                c
            }
        })
        .collect()
}

/// Adds the functions to `m`.
pub fn add(m: &mut FuncMap) {
    use Param::{Any, Int, MapAny, Str};
    m.insert(
        "kebabcase",
        Func::new(&[Str], |_, a| {
            Ok(Value::str(crate::xstrings::to_lower_case(&s(&a, 0), '-')))
        }),
    );
    m.insert(
        "snakecase",
        Func::new(&[Str], |_, a| {
            Ok(Value::str(crate::xstrings::to_lower_case(&s(&a, 0), '_')))
        }),
    );
    m.insert(
        "camelcase",
        Func::new(&[Str], |_, a| {
            Ok(Value::str(crate::xstrings::to_camel_case(&s(&a, 0))))
        }),
    );
    m.insert(
        "swapcase",
        Func::new(&[Str], |_, a| {
            Ok(Value::str(crate::xstrings::swap_case(&s(&a, 0))))
        }),
    );
    // Added in sprig 3.3.0 (upstream's version; Debian's 3.2.3 lacks it).
    m.insert(
        "sha512sum",
        Func::new(&[Str], |_, a| {
            Ok(Value::str(hex(&sha2::Sha512::digest(s(&a, 0).as_bytes()))))
        }),
    );
    m.insert(
        "sha256sum",
        Func::new(&[Str], |_, a| {
            Ok(Value::str(hex(&sha2::Sha256::digest(s(&a, 0).as_bytes()))))
        }),
    );
    m.insert(
        "sha1sum",
        Func::new(&[Str], |_, a| {
            Ok(Value::str(hex(&sha1::Sha1::digest(s(&a, 0).as_bytes()))))
        }),
    );
    m.insert(
        "adler32sum",
        Func::new(&[Str], |_, a| {
            let (mut x, mut y) = (1u32, 0u32);
            for &b in s(&a, 0).as_bytes() {
                x = (x + u32::from(b)) % 65521;
                y = (y + x) % 65521;
            }
            Ok(Value::str(((y << 16) | x).to_string()))
        }),
    );
    m.insert(
        "toRawJson",
        Func::new(&[Any], |_, a| raw_json(&a[0]).map(Value::str)),
    );
    m.insert(
        "mustToRawJson",
        Func::new(&[Any], |_, a| raw_json(&a[0]).map(Value::str)),
    );
    m.insert(
        "toPrettyJson",
        Func::new(&[Any], |_, a| match pretty_json(&a[0]) {
            Ok(j) => Ok(Value::str(j)),
            Err(e) if crate::sprig::is_refusal(&e) => Err(e),
            Err(_) => Ok(Value::str("")),
        }),
    );
    m.insert(
        "mustToPrettyJson",
        Func::new(&[Any], |_, a| pretty_json(&a[0]).map(Value::str)),
    );
    m.insert(
        "mustToJson",
        Func::new(&[Any], |_, a| {
            crate::sprig::to_json_string(&a[0]).map(Value::str)
        }),
    );
    m.insert(
        "floor",
        Func::new(&[Any], |_, a| Ok(Value::Float(to_float64(&a[0]).floor()))),
    );
    m.insert(
        "ceil",
        Func::new(&[Any], |_, a| Ok(Value::Float(to_float64(&a[0]).ceil()))),
    );
    m.insert(
        "round",
        Func::variadic(&[Any, Int], Param::Float64, |_, a| {
            let round_on = match a.get(2) {
                Some(Value::Float(f)) => *f,
                _ => 0.5,
            };
            let val = to_float64(&a[0]);
            let pow = 10f64.powf(int(&a, 1) as f64);
            let digit = pow * val;
            let frac = digit.fract();
            let r = if frac >= round_on {
                digit.ceil()
            } else {
                digit.floor()
            };
            Ok(Value::Float(r / pow))
        }),
    );
    m.insert(
        "b32enc",
        Func::new(&[Str], |_, a| {
            Ok(Value::str(base32_encode(s(&a, 0).as_bytes())))
        }),
    );
    m.insert(
        "b32dec",
        Func::new(&[Str], |_, a| {
            Ok(Value::str(match base32_decode(&s(&a, 0)) {
                Ok(b) => xfn_gocompat::value::go_lossy_utf8(&b),
                Err(e) => e,
            }))
        }),
    );
    m.insert(
        "clean",
        Func::new(&[Str], |_, a| Ok(Value::str(path_clean(&s(&a, 0))))),
    );
    m.insert(
        "dir",
        Func::new(&[Str], |_, a| Ok(Value::str(path_dir(&s(&a, 0))))),
    );
    m.insert(
        "ext",
        Func::new(&[Str], |_, a| Ok(Value::str(path_ext(&s(&a, 0))))),
    );
    m.insert(
        "isAbs",
        Func::new(&[Str], |_, a| Ok(Value::Bool(s(&a, 0).starts_with('/')))),
    );
    m.insert(
        "all",
        Func::variadic(&[], Any, |_, a| {
            Ok(Value::Bool(a.iter().all(|v| !empty(v))))
        }),
    );
    m.insert(
        "any",
        Func::variadic(&[], Any, |_, a| {
            Ok(Value::Bool(a.iter().any(|v| !empty(v))))
        }),
    );
    m.insert(
        "title",
        Func::new(&[Str], |_, a| Ok(Value::str(title(&s(&a, 0))))),
    );
    m.insert(
        "nospace",
        Func::new(&[Str], |_, a| {
            let st = s(&a, 0);
            // goutils walks bytes, each taken as a Latin-1 rune.
            let kept: String = st
                .bytes()
                .map(char::from)
                .filter(|c| !c.is_whitespace())
                .collect();
            let removed = st.bytes().map(char::from).any(char::is_whitespace);
            Ok(Value::str(if removed { kept } else { st }))
        }),
    );
    for name in ["trimAll", "trimall"] {
        m.insert(
            name,
            Func::new(&[Str, Str], |_, a| {
                let cut: Vec<char> = s(&a, 0).chars().collect();
                Ok(Value::str(s(&a, 1).trim_matches(|c| cut.contains(&c))))
            }),
        );
    }
    m.insert(
        "plural",
        Func::new(&[Str, Str, Int], |_, a| {
            Ok(Value::str(if int(&a, 2) == 1 {
                s(&a, 0)
            } else {
                s(&a, 1)
            }))
        }),
    );
    m.insert(
        "typeIsLike",
        Func::new(&[Str, Any], |_, a| {
            let t = match &a[1] {
                Value::Invalid | Value::Nil => "<nil>".to_string(),
                v => v.type_name().to_string(),
            };
            let target = s(&a, 0);
            Ok(Value::Bool(target == t || format!("*{target}") == t))
        }),
    );
    m.insert(
        "deepEqual",
        Func::new(&[Any, Any], |_, a| Ok(Value::Bool(a[0] == a[1]))),
    );
    m.insert(
        "deepCopy",
        Func::new(&[Any], |_, a| Ok(deep_copy(&a[0]))).any(),
    );
    m.insert(
        "mustDeepCopy",
        Func::new(&[Any], |_, a| Ok(deep_copy(&a[0]))).any(),
    );
    for name in ["mergeOverwrite", "mustMergeOverwrite"] {
        m.insert(
            name,
            Func::variadic(&[MapAny], MapAny, |_, a| {
                let dst = match &a[0] {
                    Value::Map(m, _) => m.clone(),
                    _ => Rc::default(),
                };
                for src in &a[1..] {
                    if let Value::Map(sm, _) = src
                        && !Rc::ptr_eq(&dst, sm)
                    {
                        let src = sm.borrow().clone();
                        merge_overwrite(&mut dst.borrow_mut(), &src);
                    }
                }
                Ok(Value::Map(dst, Elem::Any))
            })
            .any(),
        );
    }
    m.insert(
        "pluck",
        Func::variadic(&[Str], MapAny, |_, a| {
            let key = s(&a, 0);
            let found = a[1..].iter().filter_map(|d| match d {
                Value::Map(m, _) => m.borrow().get(&key).cloned(),
                _ => None,
            });
            Ok(Value::list(found.collect()))
        }),
    );
    m.insert(
        "splitn",
        Func::new(&[Str, Int, Str], |_, a| {
            let (sep, n, st) = (s(&a, 0), int(&a, 1), s(&a, 2));
            let parts: Vec<String> = if n == 0 {
                Vec::new()
            } else if sep.is_empty() {
                let chars: Vec<String> = st.chars().map(String::from).collect();
                if n > 0 && chars.len() as i64 > n {
                    let mut head: Vec<String> = chars[..(n - 1) as usize].to_vec();
                    head.push(chars[(n - 1) as usize..].concat());
                    head
                } else {
                    chars
                }
            } else if n < 0 {
                st.split(sep.as_str()).map(str::to_string).collect()
            } else {
                st.splitn(n as usize, sep.as_str())
                    .map(str::to_string)
                    .collect()
            };
            Ok(Value::str_map(
                parts
                    .into_iter()
                    .enumerate()
                    .map(|(i, p)| (format!("_{i}"), Value::str(p)))
                    .collect(),
            ))
        }),
    );
    m.insert(
        "toDecimal",
        Func::new(&[Any], |_, a| {
            let text = crate::template::value::sprint_v(&a[0]);
            let t = text.strip_prefix('+').unwrap_or(&text);
            Ok(Value::int64(
                i64::from_str_radix(t, 8)
                    .ok()
                    .filter(|_| !text.starts_with("+-"))
                    .unwrap_or(0),
            ))
        }),
    );
    m.insert(
        "randAlpha",
        Func::new(&[Int], |env, a| {
            Ok(Value::str(rand_from(
                env,
                int(&a, 0),
                b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
            )?))
        }),
    );
    m.insert(
        "randNumeric",
        Func::new(&[Int], |env, a| {
            Ok(Value::str(rand_from(env, int(&a, 0), b"0123456789")?))
        }),
    );
    m.insert(
        "randAscii",
        Func::new(&[Int], |env, a| {
            let chars: Vec<u8> = (32u8..=126).collect();
            Ok(Value::str(rand_from(env, int(&a, 0), &chars)?))
        }),
    );
    m.insert(
        "randInt",
        Func::new(&[Int, Int], |env, a| {
            let (lo, hi) = (int(&a, 0), int(&a, 1));
            if hi <= lo {
                return Err("invalid argument to Intn".into());
            }
            Ok(Value::int(lo + (env.random() % (hi - lo) as u64) as i64))
        }),
    );
    // The `must` list variants return sprig's errors rather than panicking
    // with them: the same text reaches the template either way.
    for (must, plain) in [
        ("mustFirst", "first"),
        ("mustLast", "last"),
        ("mustRest", "rest"),
        ("mustInitial", "initial"),
        ("mustReverse", "reverse"),
        ("mustUniq", "uniq"),
        ("mustWithout", "without"),
        ("mustHas", "has"),
        ("mustCompact", "compact"),
        ("mustAppend", "append"),
        ("mustPush", "push"),
        ("mustPrepend", "prepend"),
        ("mustSlice", "slice"),
        ("mustMerge", "merge"),
    ] {
        if let Some(f) = m.get(plain).copied() {
            m.insert(must, f);
        }
    }
    m.insert(
        "mustFromJson",
        Func::new(&[Str], |_, a| {
            let j: serde_json::Value =
                serde_json::from_str(&s(&a, 0)).map_err(|e| format!("invalid JSON: {e}"))?;
            Ok(json_floats(&j))
        })
        .any(),
    );
    m.insert("hello", Func::new(&[], |_, _| Ok(Value::str("Hello!"))));
    if let Some(max) = m.get("max").copied() {
        m.insert("biggest", max);
    }
    for (os, plain) in [
        ("osBase", "base"),
        ("osClean", "clean"),
        ("osDir", "dir"),
        ("osExt", "ext"),
        ("osIsAbs", "isAbs"),
    ] {
        // filepath on Linux is path.
        if let Some(f) = m.get(plain).copied() {
            m.insert(os, f);
        }
    }
    m.insert(
        "maxf",
        Func::variadic(&[Any], Any, |_, a| {
            Ok(Value::Float(
                a.iter().map(to_float64).fold(f64::NEG_INFINITY, go_max),
            ))
        }),
    );
    m.insert(
        "minf",
        Func::variadic(&[Any], Any, |_, a| {
            Ok(Value::Float(
                a.iter().map(to_float64).fold(f64::INFINITY, go_min),
            ))
        }),
    );
    m.insert(
        "untilStep",
        Func::new(&[Int, Int, Int], |_, a| {
            until_step(int(&a, 0), int(&a, 1), int(&a, 2))
        }),
    );
    m.insert(
        "seq",
        Func::variadic(&[], Int, |_, a| {
            let p: Vec<i64> = a
                .iter()
                .map(|v| if let Value::Int(i, _) = v { *i } else { 0 })
                .collect();
            let (start, end, step) = match p.as_slice() {
                [end] => (1, *end, if *end < 1 { -1 } else { 1 }),
                [start, end] => (*start, *end, if end < start { -1 } else { 1 }),
                [start, step, end] => {
                    if end < start && *step > 0 {
                        return Ok(Value::str(""));
                    }
                    (*start, *end, *step)
                }
                _ => return Ok(Value::str("")),
            };
            let inc = if end < start { -1 } else { 1 };
            let Value::List(l, _) = until_step(start, end + inc, step)? else {
                return Ok(Value::str(""));
            };
            let parts: Vec<String> = l.iter().map(crate::template::value::sprint_v).collect();
            Ok(Value::str(parts.join(" ")))
        }),
    );
    let _ = (to_int64, strval);
}

#[cfg(test)]
mod tests {
    use crate::render::{Renderer, SeededEnv};
    use crate::template::Value;

    #[test]
    fn sha512sum_of_sprig_3_3() {
        let out = Renderer::new()
            .render(
                "{{ sha512sum \"hello\" }}",
                Value::Invalid,
                None,
                &[],
                &mut SeededEnv::new(1, 0),
            )
            .expect("renders");
        assert_eq!(
            out,
            "9b71d224bd62f3785d96d46ad3ea3d73319bfbc2890caadae2dff72519673ca72323c3d99ba5c11d7c7acc6e14b8c5da0c4663475c2e5c3adef46f73bcdec043"
        );
    }
}
