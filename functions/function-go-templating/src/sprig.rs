//! Sprig v3's functions as function-go-templating exposes them (`env` and
//! `expandenv` removed), ported from their Go behaviour: argument types,
//! conversions (spf13/cast), results' Go types and errors (a panic inside a
//! sprig function surfaces as the call's error, as `text/template` recovers
//! it). Functions not ported yet are listed in [`UNIMPLEMENTED`]: a template
//! may name them, and calling one fails naming it.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use base64::Engine as _;
use xfn_gocompat::goregex::GoRegex;

use crate::template::func::{Env, Func, FuncMap, Param};
use crate::template::value::{Elem, IntKind, Value, sprint_v, sprintf};

/// Sprig functions a template may name that this port does not implement.
pub const UNIMPLEMENTED: &[&str] = &[
    "getHostByName",
    "bcrypt",
    "htpasswd",
    "genPrivateKey",
    "derivePassword",
    "buildCustomCert",
    "genCA",
    "genCAWithKey",
    "genSelfSignedCert",
    "genSelfSignedCertWithKey",
    "genSignedCert",
    "genSignedCertWithKey",
    "encryptAES",
    "decryptAES",
    "semver",
    "semverCompare",
    "urlParse",
    "urlJoin",
];

fn arg(a: &[Value], i: usize) -> Value {
    a.get(i).cloned().unwrap_or(Value::Nil)
}

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

/// A `map[string]interface {}` argument (shared, as Go's maps are).
fn map_arg(a: &[Value], i: usize) -> Rc<RefCell<BTreeMap<String, Value>>> {
    match a.get(i) {
        Some(Value::Map(m, _)) => m.clone(),
        _ => Rc::default(),
    }
}

fn string_list(v: Vec<String>) -> Value {
    Value::List(Rc::new(v.into_iter().map(Value::str).collect()), Elem::Str)
}

/// Sprig's `strval`: strings as they are, anything else `%v`.
pub fn strval(v: &Value) -> String {
    match v {
        Value::Str(s) => s.to_string(),
        Value::List(l, Elem::Byte) => {
            let b: Vec<u8> = l
                .iter()
                .map(|x| {
                    if let Value::Int(i, _) = x {
                        *i as u8
                    } else {
                        0
                    }
                })
                .collect();
            xfn_gocompat::value::go_lossy_utf8(&b)
        }
        v => sprint_v(v),
    }
}

/// Sprig's `empty`.
pub fn empty(v: &Value) -> bool {
    !v.truth()
}

/// spf13/cast's `ToInt64` (0 when it cannot convert).
pub fn to_int64(v: &Value) -> i64 {
    match v {
        Value::Int(i, _) => *i,
        Value::Float(f) => go_f64_to_i64(*f),
        Value::Bool(b) => i64::from(*b),
        Value::Str(s) => parse_int_base0(&trim_zero_decimal(s)).unwrap_or(0),
        _ => 0,
    }
}

/// spf13/cast's `ToFloat64` (0 when it cannot convert).
pub fn to_float64(v: &Value) -> f64 {
    match v {
        Value::Int(i, _) => *i as f64,
        Value::Float(f) => *f,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Str(s) => s
            .parse::<f64>()
            .ok()
            .filter(|_| go_float_syntax(s))
            .unwrap_or(0.0),
        _ => 0.0,
    }
}

fn go_float_syntax(s: &str) -> bool {
    let l = s.to_ascii_lowercase();
    !(l.contains("infinity") && !matches!(l.trim_start_matches(['+', '-']), "inf" | "infinity"))
        && !l.contains('_')
}

/// Go's `int64(f)` on amd64: out of range (and NaN) gives the minimum.
fn go_f64_to_i64(f: f64) -> i64 {
    if f.is_nan() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f) {
        i64::MIN
    } else {
        f as i64
    }
}

fn trim_zero_decimal(s: &str) -> String {
    let b = s.as_bytes();
    let mut found_zero = false;
    for i in (1..=b.len()).rev() {
        match b[i - 1] {
            b'.' => {
                if found_zero {
                    return s[..i - 1].to_string();
                }
            }
            b'0' => found_zero = true,
            _ => return s.to_string(),
        }
    }
    s.to_string()
}

fn parse_int_base0(s: &str) -> Option<i64> {
    let (neg, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (base, digits) =
        if let Some(r) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
            (16, r)
        } else if let Some(r) = body.strip_prefix("0b").or_else(|| body.strip_prefix("0B")) {
            (2, r)
        } else if let Some(r) = body.strip_prefix("0o").or_else(|| body.strip_prefix("0O")) {
            (8, r)
        } else if body.len() > 1 && body.starts_with('0') {
            (8, &body[1..])
        } else {
            (10, body)
        };
    if digits.is_empty() || digits.starts_with(['+', '-']) || digits.contains('_') {
        return None;
    }
    let mag = u64::from_str_radix(digits, base).ok()?;
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

fn reflect_kind(v: &Value) -> &'static str {
    match v {
        Value::Invalid | Value::Nil => "invalid",
        other => other.kind_name(),
    }
}

/// The elements of a slice as `[]interface {}`, or sprig's error for another kind.
fn list_items(v: &Value, what: &str) -> Result<Vec<Value>, String> {
    match v {
        Value::List(l, _) => Ok(l.iter().cloned().collect()),
        Value::Invalid | Value::Nil => {
            Err("runtime error: invalid memory address or nil pointer dereference".into())
        }
        other => Err(format!("Cannot {what} on type {}", reflect_kind(other))),
    }
}

/// Whether an error is the port refusing something it does not support.
pub fn is_refusal(e: &str) -> bool {
    e.contains("not supported by xfn")
}

/// `encoding/json.Marshal` of a template value.
pub fn to_json_string(v: &Value) -> Result<String, String> {
    json_encode(v)
}

fn json_encode(v: &Value) -> Result<String, String> {
    let j = v.to_json()?;
    let mut out = String::new();
    write_go_json(&j, &mut out)?;
    Ok(out)
}

/// `encoding/json.Marshal` of decoded JSON: sorted keys, HTML-escaped strings.
fn write_go_json(v: &serde_json::Value, out: &mut String) -> Result<(), String> {
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
                out.push_str(&xfn_gocompat::gojson::encode_float(
                    n.as_f64().unwrap_or(0.0),
                )?);
            }
        }
        J::String(s) => xfn_gocompat::gojson::encode_string(out, s),
        J::Array(a) => {
            out.push('[');
            for (i, e) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_json(e, out)?;
            }
            out.push(']');
        }
        J::Object(o) => {
            out.push('{');
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                xfn_gocompat::gojson::encode_string(out, k);
                out.push(':');
                write_go_json(&o[k], out)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

/// `encoding/json.Unmarshal` into `interface {}`: every number a `float64`.
fn from_json_go(text: &str) -> Result<Value, String> {
    let j: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("invalid JSON: {e}"))?;
    Ok(floats(&j))
}

fn floats(v: &serde_json::Value) -> Value {
    use serde_json::Value as J;
    match v {
        J::Number(n) => Value::Float(n.as_f64().unwrap_or(0.0)),
        J::Array(a) => Value::list(a.iter().map(floats).collect()),
        J::Object(o) => Value::map(o.iter().map(|(k, v)| (k.clone(), floats(v))).collect()),
        other => Value::from_json(other),
    }
}

/// mergo's `Merge` (no overwrite) of `src` into `dst`, deep into maps.
fn merge_into(dst: &mut BTreeMap<String, Value>, src: &BTreeMap<String, Value>) {
    for (k, sv) in src {
        match dst.get_mut(k) {
            None => {
                dst.insert(k.clone(), sv.clone());
            }
            Some(dv) => {
                if let (Value::Map(dm, _), Value::Map(sm, _)) = (&*dv, sv) {
                    if !Rc::ptr_eq(dm, sm) {
                        let src = sm.borrow().clone();
                        merge_into(&mut dm.borrow_mut(), &src);
                    }
                } else if empty(dv) && !matches!(dv, Value::Map(..) | Value::List(..)) {
                    // An empty destination value takes the source's.
                    *dv = sv.clone();
                }
            }
        }
    }
}

fn uuid4(env: &mut dyn Env) -> String {
    let mut b = [0u8; 16];
    for chunk in b.chunks_mut(8) {
        chunk.copy_from_slice(&env.random().to_le_bytes()[..chunk.len()]);
    }
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

fn rand_alnum(env: &mut dyn Env, n: i64) -> Result<String, String> {
    check_rand_len(n)?;
    const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    Ok((0..n.max(0))
        .map(|_| CHARS[(env.random() % CHARS.len() as u64) as usize] as char)
        .collect())
}

/// Adds sprig's functions to `m`.
pub fn add(m: &mut FuncMap) {
    use Param::{Any, Int, ListStr, MapAny, Str};
    // Strings.
    m.insert(
        "trim",
        Func::new(&[Str], |_, a| {
            Ok(Value::str(s(&a, 0).trim_matches(is_go_space)))
        }),
    );
    m.insert(
        "upper",
        Func::new(&[Str], |_, a| Ok(Value::str(simple_case(&s(&a, 0), true)))),
    );
    m.insert(
        "lower",
        Func::new(&[Str], |_, a| Ok(Value::str(simple_case(&s(&a, 0), false)))),
    );
    m.insert(
        "trunc",
        Func::new(&[Int, Str], |_, a| {
            let (c, st) = (int(&a, 0), s(&a, 1));
            let len = st.len() as i64;
            let b = st.as_bytes();
            let out = if c < 0 && len + c > 0 {
                &b[(len + c) as usize..]
            } else if c >= 0 && len > c {
                &b[..c as usize]
            } else {
                b
            };
            Ok(Value::str(xfn_gocompat::value::go_lossy_utf8(out)))
        }),
    );
    m.insert(
        "substr",
        Func::new(&[Int, Int, Str], |_, a| {
            let (start, end, st) = (int(&a, 0), int(&a, 1), s(&a, 2));
            let b = st.as_bytes();
            let len = b.len() as i64;
            let oob = |x: i64| format!("runtime error: slice bounds out of range [{x}:{len}]");
            let out = if start < 0 {
                if end < 0 || end > len {
                    return Err(format!(
                        "runtime error: slice bounds out of range [:{end}] with length {len}"
                    ));
                }
                &b[..end as usize]
            } else if end < 0 || end > len {
                if start > len {
                    return Err(oob(start));
                }
                &b[start as usize..]
            } else {
                if start > end {
                    return Err(format!(
                        "runtime error: slice bounds out of range [{start}:{end}]"
                    ));
                }
                &b[start as usize..end as usize]
            };
            Ok(Value::str(xfn_gocompat::value::go_lossy_utf8(out)))
        }),
    );
    m.insert(
        "repeat",
        Func::new(&[Int, Str], |_, a| {
            let n = int(&a, 0);
            if n < 0 {
                return Err("strings: negative Repeat count".into());
            }
            let st = s(&a, 1);
            if (st.len() as u64).saturating_mul(n as u64) > 64 << 20 {
                return Err("strings: Repeat output length overflow".into());
            }
            Ok(Value::str(st.repeat(n as usize)))
        }),
    );
    m.insert(
        "trimSuffix",
        Func::new(&[Str, Str], |_, a| {
            let (suf, st) = (s(&a, 0), s(&a, 1));
            Ok(Value::str(st.strip_suffix(suf.as_str()).unwrap_or(&st)))
        }),
    );
    m.insert(
        "trimPrefix",
        Func::new(&[Str, Str], |_, a| {
            let (pre, st) = (s(&a, 0), s(&a, 1));
            Ok(Value::str(st.strip_prefix(pre.as_str()).unwrap_or(&st)))
        }),
    );
    m.insert(
        "contains",
        Func::new(&[Str, Str], |_, a| {
            Ok(Value::Bool(s(&a, 1).contains(s(&a, 0).as_str())))
        }),
    );
    m.insert(
        "hasPrefix",
        Func::new(&[Str, Str], |_, a| {
            Ok(Value::Bool(s(&a, 1).starts_with(s(&a, 0).as_str())))
        }),
    );
    m.insert(
        "hasSuffix",
        Func::new(&[Str, Str], |_, a| {
            Ok(Value::Bool(s(&a, 1).ends_with(s(&a, 0).as_str())))
        }),
    );
    m.insert(
        "quote",
        Func::variadic(&[], Any, |_, a| {
            let parts: Vec<String> = a
                .iter()
                .filter(|v| v.is_valid())
                .map(|v| xfn_gocompat::gofmt::quote(&strval(v)))
                .collect();
            Ok(Value::str(parts.join(" ")))
        }),
    );
    m.insert(
        "squote",
        Func::variadic(&[], Any, |_, a| {
            let parts: Vec<String> = a
                .iter()
                .filter(|v| v.is_valid())
                .map(|v| format!("'{}'", sprint_v(v)))
                .collect();
            Ok(Value::str(parts.join(" ")))
        }),
    );
    m.insert(
        "cat",
        Func::variadic(&[], Any, |_, a| {
            let parts: Vec<String> = a.iter().filter(|v| v.is_valid()).map(sprint_v).collect();
            Ok(Value::str(parts.join(" ")))
        }),
    );
    m.insert(
        "indent",
        Func::new(&[Int, Str], |_, a| {
            Ok(Value::str(indent(int(&a, 0), &s(&a, 1))?))
        }),
    );
    m.insert(
        "nindent",
        Func::new(&[Int, Str], |_, a| {
            Ok(Value::str(format!("\n{}", indent(int(&a, 0), &s(&a, 1))?)))
        }),
    );
    m.insert(
        "slice",
        Func::variadic(&[Any], Any, |_, a| {
            let list = &a[0];
            let (items, elem) = match list {
                Value::List(l, e) => (l.clone(), *e),
                Value::Invalid | Value::Nil => {
                    return Err(
                        "runtime error: invalid memory address or nil pointer dereference".into(),
                    );
                }
                other => {
                    return Err(format!(
                        "list should be type of slice or array but {}",
                        reflect_kind(other)
                    ));
                }
            };
            let len = items.len() as i64;
            if len == 0 {
                return Ok(Value::Nil);
            }
            let start = a.get(1).map_or(0, to_int64);
            let end = a.get(2).map_or(len, to_int64);
            if start < 0 || end < start || end > len {
                return Err("reflect: slice index out of range".into());
            }
            Ok(Value::List(
                Rc::new(items[start as usize..end as usize].to_vec()),
                elem,
            ))
        })
        .any(),
    );
    m.insert(
        "replace",
        Func::new(&[Str, Str, Str], |_, a| {
            Ok(Value::str(go_replace(&s(&a, 2), &s(&a, 0), &s(&a, 1))))
        }),
    );
    m.insert(
        "toString",
        Func::new(&[Any], |_, a| Ok(Value::str(strval(&arg(&a, 0))))),
    );
    m.insert(
        "atoi",
        Func::new(&[Str], |_, a| {
            let st = s(&a, 0);
            let t = st.strip_prefix('+').unwrap_or(&st);
            Ok(Value::int(
                if t.starts_with(['+', '-']) && st.starts_with('+') {
                    0
                } else {
                    st.parse::<i64>().unwrap_or(0)
                },
            ))
        }),
    );
    m.insert(
        "int64",
        Func::new(&[Any], |_, a| Ok(Value::int64(to_int64(&arg(&a, 0))))),
    );
    m.insert(
        "int",
        Func::new(&[Any], |_, a| Ok(Value::int(to_int64(&arg(&a, 0))))),
    );
    m.insert(
        "float64",
        Func::new(&[Any], |_, a| Ok(Value::Float(to_float64(&arg(&a, 0))))),
    );
    m.insert(
        "split",
        Func::new(&[Str, Str], |_, a| {
            let parts = go_split(&s(&a, 1), &s(&a, 0));
            let m: BTreeMap<String, Value> = parts
                .into_iter()
                .enumerate()
                .map(|(i, p)| (format!("_{i}"), Value::str(p)))
                .collect();
            Ok(Value::str_map(m))
        }),
    );
    m.insert(
        "splitList",
        Func::new(&[Str, Str], |_, a| {
            Ok(string_list(go_split(&s(&a, 1), &s(&a, 0))))
        }),
    );
    m.insert(
        "toStrings",
        Func::new(&[Any], |_, a| Ok(string_list(strslice(&arg(&a, 0))))),
    );
    m.insert(
        "join",
        Func::new(&[Str, Any], |_, a| {
            Ok(Value::str(strslice(&arg(&a, 1)).join(&s(&a, 0))))
        }),
    );
    m.insert(
        "sortAlpha",
        Func::new(&[Any], |_, a| {
            let v = arg(&a, 0);
            let mut out = match &v {
                Value::List(..) => strslice(&v),
                other => vec![strval(other)],
            };
            out.sort();
            Ok(string_list(out))
        }),
    );
    m.insert(
        "b64enc",
        Func::new(&[Str], |_, a| {
            Ok(Value::str(
                base64::engine::general_purpose::STANDARD.encode(s(&a, 0)),
            ))
        }),
    );
    m.insert(
        "b64dec",
        Func::new(&[Str], |_, a| {
            Ok(Value::str(
                match base64::engine::general_purpose::STANDARD.decode(s(&a, 0)) {
                    Ok(b) => xfn_gocompat::value::go_lossy_utf8(&b),
                    Err(e) => go_base64_error(&e),
                },
            ))
        }),
    );
    m.insert(
        "base",
        Func::new(&[Str], |_, a| Ok(Value::str(path_base(&s(&a, 0))))),
    );
    m.insert("fail", Func::new(&[Str], |_, a| Err(s(&a, 0))));
    m.insert(
        "randAlphaNum",
        Func::new(&[Int], |env, a| {
            Ok(Value::str(rand_alnum(env, int(&a, 0))?))
        }),
    );
    m.insert(
        "uuidv4",
        Func::new(&[], |env, _| Ok(Value::str(uuid4(env)))),
    );
    // Numbers.
    m.insert(
        "add1",
        Func::new(&[Any], |_, a| {
            Ok(Value::int64(to_int64(&arg(&a, 0)).wrapping_add(1)))
        }),
    );
    m.insert(
        "add",
        Func::variadic(&[], Any, |_, a| {
            Ok(Value::int64(
                a.iter().fold(0i64, |s, v| s.wrapping_add(to_int64(v))),
            ))
        }),
    );
    m.insert(
        "sub",
        Func::new(&[Any, Any], |_, a| {
            Ok(Value::int64(to_int64(&a[0]).wrapping_sub(to_int64(&a[1]))))
        }),
    );
    m.insert(
        "mul",
        Func::variadic(&[Any], Any, |_, a| {
            Ok(Value::int64(
                a.iter().fold(1i64, |s, v| s.wrapping_mul(to_int64(v))),
            ))
        }),
    );
    m.insert(
        "div",
        Func::new(&[Any, Any], |_, a| {
            let d = to_int64(&a[1]);
            if d == 0 {
                return Err("runtime error: integer divide by zero".into());
            }
            Ok(Value::int64(to_int64(&a[0]).wrapping_div(d)))
        }),
    );
    m.insert(
        "mod",
        Func::new(&[Any, Any], |_, a| {
            let d = to_int64(&a[1]);
            if d == 0 {
                return Err("runtime error: integer divide by zero".into());
            }
            Ok(Value::int64(to_int64(&a[0]).wrapping_rem(d)))
        }),
    );
    m.insert(
        "max",
        Func::variadic(&[Any], Any, |_, a| {
            Ok(Value::int64(a.iter().map(to_int64).max().unwrap_or(0)))
        }),
    );
    m.insert(
        "min",
        Func::variadic(&[Any], Any, |_, a| {
            Ok(Value::int64(a.iter().map(to_int64).min().unwrap_or(0)))
        }),
    );
    m.insert(
        "until",
        Func::new(&[Int], |_, a| {
            until_step(0, int(&a, 0), if int(&a, 0) < 0 { -1 } else { 1 })
        }),
    );
    // Defaults and flow.
    m.insert(
        "default",
        Func::variadic(&[Any], Any, |_, a| {
            let d = arg(&a, 0);
            match a.get(1) {
                Some(g) if !empty(g) => Ok(g.clone()),
                _ => Ok(d),
            }
        })
        .any(),
    );
    m.insert(
        "empty",
        Func::new(&[Any], |_, a| Ok(Value::Bool(empty(&arg(&a, 0))))),
    );
    m.insert(
        "coalesce",
        Func::variadic(&[], Any, |_, a| {
            Ok(a.into_iter().find(|v| !empty(v)).unwrap_or(Value::Nil))
        })
        .any(),
    );
    m.insert(
        "ternary",
        Func::new(&[Any, Any, Param::Bool], |_, a| {
            Ok(if matches!(a[2], Value::Bool(true)) {
                a[0].clone()
            } else {
                a[1].clone()
            })
        })
        .any(),
    );
    m.insert(
        "toJson",
        Func::new(&[Any], |_, a| {
            // Go's toJson gives "" when marshalling fails; what the port
            // refuses stays an error.
            match json_encode(&arg(&a, 0)) {
                Ok(j) => Ok(Value::str(j)),
                Err(e) if is_refusal(&e) => Err(e),
                Err(_) => Ok(Value::str("")),
            }
        }),
    );
    m.insert(
        "fromJson",
        Func::new(&[Str], |_, a| {
            Ok(from_json_go(&s(&a, 0)).unwrap_or(Value::Nil))
        })
        .any(),
    );
    m.insert(
        "typeOf",
        Func::new(&[Any], |_, a| Ok(Value::str(type_of(&arg(&a, 0))))),
    );
    m.insert(
        "typeIs",
        Func::new(&[Str, Any], |_, a| {
            Ok(Value::Bool(s(&a, 0) == type_of(&arg(&a, 1))))
        }),
    );
    m.insert(
        "kindOf",
        Func::new(&[Any], |_, a| Ok(Value::str(reflect_kind(&arg(&a, 0))))),
    );
    m.insert(
        "kindIs",
        Func::new(&[Str, Any], |_, a| {
            Ok(Value::Bool(s(&a, 0) == reflect_kind(&arg(&a, 1))))
        }),
    );
    // Dictionaries.
    m.insert(
        "dict",
        Func::variadic(&[], Any, |_, a| {
            let mut d = BTreeMap::new();
            let mut i = 0;
            while i < a.len() {
                let k = strval(&a[i]);
                d.insert(k, a.get(i + 1).cloned().unwrap_or_else(|| Value::str("")));
                i += 2;
            }
            Ok(Value::map(d))
        }),
    );
    m.insert(
        "get",
        Func::new(&[MapAny, Str], |_, a| {
            Ok(map_arg(&a, 0)
                .borrow()
                .get(&s(&a, 1))
                .cloned()
                .unwrap_or_else(|| Value::str("")))
        })
        .any(),
    );
    m.insert(
        "set",
        Func::new(&[MapAny, Str, Any], |_, a| {
            // Go's maps are references: the dictionary is changed in place.
            let d = map_arg(&a, 0);
            d.borrow_mut().insert(s(&a, 1), arg(&a, 2));
            Ok(Value::Map(d, Elem::Any))
        }),
    );
    m.insert(
        "unset",
        Func::new(&[MapAny, Str], |_, a| {
            let d = map_arg(&a, 0);
            d.borrow_mut().remove(&s(&a, 1));
            Ok(Value::Map(d, Elem::Any))
        }),
    );
    m.insert(
        "hasKey",
        Func::new(&[MapAny, Str], |_, a| {
            Ok(Value::Bool(map_arg(&a, 0).borrow().contains_key(&s(&a, 1))))
        }),
    );
    m.insert(
        "keys",
        Func::variadic(&[], MapAny, |_, a| {
            // Go's map order is random; sorted here (templates sort keys anyway).
            let mut k = Vec::new();
            for d in &a {
                if let Value::Map(m, _) = d {
                    k.extend(m.borrow().keys().cloned());
                }
            }
            Ok(string_list(k))
        }),
    );
    m.insert(
        "values",
        Func::new(&[MapAny], |_, a| {
            Ok(Value::list(
                map_arg(&a, 0).borrow().values().cloned().collect(),
            ))
        }),
    );
    m.insert(
        "pick",
        Func::variadic(&[MapAny], Str, |_, a| {
            let d = map_arg(&a, 0);
            let d = d.borrow();
            let out = a[1..].iter().filter_map(|k| match k {
                Value::Str(k) => d.get(k.as_ref()).map(|v| (k.to_string(), v.clone())),
                _ => None,
            });
            Ok(Value::map(out.collect()))
        }),
    );
    m.insert(
        "omit",
        Func::variadic(&[MapAny], Str, |_, a| {
            let d = map_arg(&a, 0);
            let d = d.borrow();
            let drop: Vec<String> = a[1..].iter().map(strval).collect();
            Ok(Value::map(
                d.iter()
                    .filter(|(k, _)| !drop.contains(k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ))
        }),
    );
    m.insert(
        "merge",
        Func::variadic(&[MapAny], MapAny, |_, a| {
            // mergo changes the destination in place.
            let dst = map_arg(&a, 0);
            for src in &a[1..] {
                if let Value::Map(sm, _) = src
                    && !Rc::ptr_eq(&dst, sm)
                {
                    let src = sm.borrow().clone();
                    merge_into(&mut dst.borrow_mut(), &src);
                }
            }
            Ok(Value::Map(dst, Elem::Any))
        })
        .any(),
    );
    m.insert("dig", Func::variadic(&[], Any, |_, a| {
        if a.len() < 3 {
            return Err("dig needs at least three arguments".into());
        }
        let Value::Map(mut d, _) = a[a.len() - 1].clone() else {
            return Err(format!("interface conversion: interface {{}} is {}, not map[string]interface {{}}", nil_name(&a[a.len() - 1])));
        };
        let def = a[a.len() - 2].clone();
        let keys = &a[..a.len() - 2];
        for (i, k) in keys.iter().enumerate() {
            let Value::Str(k) = k else {
                return Err(format!("interface conversion: interface {{}} is {}, not string", nil_name(k)));
            };
            let got = d.borrow().get(k.as_ref()).cloned();
            let Some(step) = got else {
                return Ok(def);
            };
            if i == keys.len() - 1 {
                return Ok(step);
            }
            match step {
                Value::Map(m, Elem::Any) => d = m,
                other => return Err(format!("interface conversion: interface {{}} is {}, not map[string]interface {{}}", nil_name(&other))),
            }
        }
        Ok(def)
    }).any());
    // Lists.
    m.insert("list", Func::variadic(&[], Any, |_, a| Ok(Value::list(a))));
    m.insert("tuple", Func::variadic(&[], Any, |_, a| Ok(Value::list(a))));
    for name in ["append", "push"] {
        m.insert(
            name,
            Func::new(&[Any, Any], |_, a| {
                let mut l = list_items(&a[0], "push")?;
                l.push(a[1].clone());
                Ok(Value::list(l))
            }),
        );
    }
    m.insert(
        "prepend",
        Func::new(&[Any, Any], |_, a| {
            let mut l = list_items(&a[0], "prepend")?;
            l.insert(0, a[1].clone());
            Ok(Value::list(l))
        }),
    );
    m.insert(
        "first",
        Func::new(&[Any], |_, a| {
            Ok(list_items(&a[0], "find first")?
                .into_iter()
                .next()
                .unwrap_or(Value::Nil))
        })
        .any(),
    );
    m.insert(
        "last",
        Func::new(&[Any], |_, a| {
            Ok(list_items(&a[0], "find last")?.pop().unwrap_or(Value::Nil))
        })
        .any(),
    );
    m.insert(
        "rest",
        Func::new(&[Any], |_, a| {
            let l = list_items(&a[0], "find rest")?;
            Ok(Value::list(l.into_iter().skip(1).collect()))
        }),
    );
    m.insert(
        "initial",
        Func::new(&[Any], |_, a| {
            let mut l = list_items(&a[0], "find initial")?;
            l.pop();
            Ok(Value::list(l))
        }),
    );
    m.insert(
        "reverse",
        Func::new(&[Any], |_, a| {
            let mut l = list_items(&a[0], "find reverse")?;
            l.reverse();
            Ok(Value::list(l))
        }),
    );
    m.insert(
        "compact",
        Func::new(&[Any], |_, a| {
            Ok(Value::list(
                list_items(&a[0], "compact")?
                    .into_iter()
                    .filter(|v| !empty(v))
                    .collect(),
            ))
        }),
    );
    m.insert(
        "uniq",
        Func::new(&[Any], |_, a| {
            let mut out: Vec<Value> = Vec::new();
            for v in list_items(&a[0], "find uniq")? {
                if !out.contains(&v) {
                    out.push(v);
                }
            }
            Ok(Value::list(out))
        }),
    );
    m.insert(
        "without",
        Func::variadic(&[Any], Any, |_, a| {
            let omit = &a[1..];
            Ok(Value::list(
                list_items(&a[0], "find without")?
                    .into_iter()
                    .filter(|v| !omit.contains(v))
                    .collect(),
            ))
        }),
    );
    m.insert(
        "has",
        Func::new(&[Any, Any], |_, a| {
            if !a[1].is_valid() {
                return Ok(Value::Bool(false));
            }
            Ok(Value::Bool(list_items(&a[1], "find has")?.contains(&a[0])))
        }),
    );
    m.insert(
        "concat",
        Func::variadic(&[], Any, |_, a| {
            let mut out = Vec::new();
            for l in &a {
                match l {
                    Value::List(l, _) => out.extend(l.iter().cloned()),
                    Value::Invalid | Value::Nil => {
                        return Err(
                            "runtime error: invalid memory address or nil pointer dereference"
                                .into(),
                        );
                    }
                    other => {
                        return Err(format!(
                            "Cannot concat type {} as list",
                            reflect_kind(other)
                        ));
                    }
                }
            }
            Ok(if out.is_empty() {
                Value::Nil
            } else {
                Value::list(out)
            })
        })
        .any(),
    );
    let _ = ListStr;
    regex_functions(m);
}

/// `regexp.MustCompile`'s panic text, or the compiled expression.
fn must_compile(pattern: &str) -> Result<GoRegex, String> {
    GoRegex::compile(pattern).map_err(|e| {
        let q = if pattern.contains('`') || pattern.chars().any(|c| c.is_control() && c != '\t') {
            xfn_gocompat::gofmt::quote(pattern)
        } else {
            format!("`{pattern}`")
        };
        format!("regexp: Compile({q}): {e}")
    })
}

/// Go's `FindAllStringIndex(s, n)`.
fn find_all(re: &GoRegex, s: &str, n: i64) -> Vec<(usize, usize)> {
    if n == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for m in re.regex().find_iter(s) {
        if n > 0 && out.len() as i64 >= n {
            break;
        }
        out.push((m.start(), m.end()));
    }
    out
}

/// Go's `Regexp.Split`.
fn regex_split(re: &GoRegex, s: &str, n: i64) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    if !re.regex().as_str().is_empty() && s.is_empty() {
        return vec![String::new()];
    }
    let matches = find_all(re, s, n);
    let mut out = Vec::new();
    let (mut beg, mut end) = (0, 0);
    for (a, b) in matches {
        if n > 0 && out.len() as i64 == n - 1 {
            break;
        }
        end = a;
        if b != 0 {
            out.push(s[beg..end].to_string());
        }
        beg = b;
    }
    if end != s.len() {
        out.push(s[beg..].to_string());
    }
    out
}

fn regex_functions(m: &mut FuncMap) {
    use Param::{Int, Str};
    m.insert(
        "regexMatch",
        Func::new(&[Str, Str], |_, a| {
            Ok(Value::Bool(
                GoRegex::compile(&s(&a, 0))
                    .map(|r| r.is_match(&s(&a, 1)))
                    .unwrap_or(false),
            ))
        }),
    );
    m.insert(
        "mustRegexMatch",
        Func::new(&[Str, Str], |_, a| {
            Ok(Value::Bool(
                GoRegex::compile(&s(&a, 0))?.is_match(&s(&a, 1)),
            ))
        }),
    );
    fn find_all_impl(a: &[Value], must: bool) -> Result<Value, String> {
        let re = if must {
            GoRegex::compile(&s(a, 0))?
        } else {
            must_compile(&s(a, 0))?
        };
        let st = s(a, 1);
        let found: Vec<String> = find_all(&re, &st, int(a, 2))
            .into_iter()
            .map(|(x, y)| st[x..y].to_string())
            .collect();
        Ok(string_list(found))
    }
    m.insert(
        "regexFindAll",
        Func::new(&[Str, Str, Int], |_, a| find_all_impl(&a, false)),
    );
    m.insert(
        "mustRegexFindAll",
        Func::new(&[Str, Str, Int], |_, a| find_all_impl(&a, true)),
    );
    fn find_impl(a: &[Value], must: bool) -> Result<Value, String> {
        let re = if must {
            GoRegex::compile(&s(a, 0))?
        } else {
            must_compile(&s(a, 0))?
        };
        let st = s(a, 1);
        Ok(Value::str(re.regex().find(&st).map_or("", |m| m.as_str())))
    }
    m.insert(
        "regexFind",
        Func::new(&[Str, Str], |_, a| find_impl(&a, false)),
    );
    m.insert(
        "mustRegexFind",
        Func::new(&[Str, Str], |_, a| find_impl(&a, true)),
    );
    fn replace_impl(a: &[Value], must: bool, literal: bool) -> Result<Value, String> {
        let re = if must {
            GoRegex::compile(&s(a, 0))?
        } else {
            must_compile(&s(a, 0))?
        };
        let (st, repl) = (s(a, 1), s(a, 2));
        Ok(Value::str(if literal {
            re.regex()
                .replace_all(&st, regex::NoExpand(&repl))
                .into_owned()
        } else {
            re.regex().replace_all(&st, repl.as_str()).into_owned()
        }))
    }
    m.insert(
        "regexReplaceAll",
        Func::new(&[Str, Str, Str], |_, a| replace_impl(&a, false, false)),
    );
    m.insert(
        "mustRegexReplaceAll",
        Func::new(&[Str, Str, Str], |_, a| replace_impl(&a, true, false)),
    );
    m.insert(
        "regexReplaceAllLiteral",
        Func::new(&[Str, Str, Str], |_, a| replace_impl(&a, false, true)),
    );
    m.insert(
        "mustRegexReplaceAllLiteral",
        Func::new(&[Str, Str, Str], |_, a| replace_impl(&a, true, true)),
    );
    fn split_impl(a: &[Value], must: bool) -> Result<Value, String> {
        let re = if must {
            GoRegex::compile(&s(a, 0))?
        } else {
            must_compile(&s(a, 0))?
        };
        Ok(string_list(regex_split(&re, &s(a, 1), int(a, 2))))
    }
    m.insert(
        "regexSplit",
        Func::new(&[Str, Str, Int], |_, a| split_impl(&a, false)),
    );
    m.insert(
        "mustRegexSplit",
        Func::new(&[Str, Str, Int], |_, a| split_impl(&a, true)),
    );
    m.insert(
        "regexQuoteMeta",
        Func::new(&[Str], |_, a| {
            let mut out = String::new();
            for c in s(&a, 0).chars() {
                if "\\.+*?()|[]{}^$".contains(c) {
                    out.push('\\');
                }
                out.push(c);
            }
            Ok(Value::str(out))
        }),
    );
}

fn nil_name(v: &Value) -> &'static str {
    match v {
        Value::Invalid | Value::Nil => "nil",
        other => other.type_name(),
    }
}

fn type_of(v: &Value) -> String {
    match v {
        Value::Invalid | Value::Nil => "<nil>".to_string(),
        other => other.type_name().to_string(),
    }
}

/// Sprig's `untilStep` (bounded to a million elements).
pub fn until_step(start: i64, stop: i64, step: i64) -> Result<Value, String> {
    let mut v = Vec::new();
    let limit = 1_000_000;
    let mut i = start;
    if stop < start {
        if step < 0 {
            while i > stop {
                v.push(Value::int(i));
                i += step;
                if v.len() > limit {
                    return Err(format!("until: more than {limit} elements"));
                }
            }
        }
    } else if step > 0 {
        while i < stop {
            v.push(Value::int(i));
            i += step;
            if v.len() > limit {
                return Err(format!("until: more than {limit} elements"));
            }
        }
    }
    Ok(Value::List(Rc::new(v), Elem::Int))
}

fn is_go_space(c: char) -> bool {
    c.is_whitespace()
}

fn indent(n: i64, v: &str) -> Result<String, String> {
    if n < 0 {
        return Err("strings: negative Repeat count".into());
    }
    if n > 1 << 20 {
        return Err(format!("indent: more than {} spaces", 1 << 20));
    }
    let lines = v.matches('\n').count() as u64 + 1;
    if (n as u64)
        .saturating_mul(lines)
        .saturating_add(v.len() as u64)
        > MAX_RESULT
    {
        return Err(format!(
            "indent: the result would be larger than {MAX_RESULT} bytes"
        ));
    }
    let pad = " ".repeat(n as usize);
    Ok(format!("{pad}{}", v.replace('\n', &format!("\n{pad}"))))
}

/// The largest string a function builds (the engine's output bound).
pub const MAX_RESULT: u64 = crate::template::exec::MAX_OUTPUT as u64;

/// Refuses a random string longer than [`MAX_RESULT`] before building it.
pub fn check_rand_len(n: i64) -> Result<(), String> {
    if n > 0 && n as u64 > MAX_RESULT {
        return Err(format!(
            "a random string of {n} characters is larger than {MAX_RESULT} bytes"
        ));
    }
    Ok(())
}

/// Go's `strings.ToUpper`/`ToLower`: one rune for one rune (no special
/// casing such as `ß` to `SS`).
fn simple_case(s: &str, upper: bool) -> String {
    s.chars()
        .map(|c| {
            let mut m: Vec<char> = if upper {
                c.to_uppercase().collect()
            } else {
                c.to_lowercase().collect()
            };
            if m.len() == 1 {
                m.pop().unwrap_or(c)
            } else {
                c
            }
        })
        .collect()
}

/// Go's `strings.Replace(s, old, new, -1)` (an empty `old` inserts between runes).
fn go_replace(s: &str, old: &str, new: &str) -> String {
    if old.is_empty() {
        let mut out = String::from(new);
        for c in s.chars() {
            out.push(c);
            out.push_str(new);
        }
        return out;
    }
    s.replace(old, new)
}

/// Go's `strings.Split` (an empty separator splits into runes).
fn go_split(s: &str, sep: &str) -> Vec<String> {
    if sep.is_empty() {
        return s.chars().map(String::from).collect();
    }
    s.split(sep).map(str::to_string).collect()
}

/// Sprig's `strslice`.
fn strslice(v: &Value) -> Vec<String> {
    match v {
        Value::List(l, _) => l.iter().filter(|e| e.is_valid()).map(strval).collect(),
        Value::Invalid | Value::Nil => Vec::new(),
        other => vec![strval(other)],
    }
}

/// Go's `path.Base`.
fn path_base(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        return "/".into();
    }
    t.rsplit('/').next().unwrap_or(t).to_string()
}

fn go_base64_error(e: &base64::DecodeError) -> String {
    let offset = match e {
        base64::DecodeError::InvalidByte(o, _) => *o,
        base64::DecodeError::InvalidLength(o) => *o / 4 * 4,
        base64::DecodeError::InvalidLastSymbol(o, _) => *o,
        base64::DecodeError::InvalidPadding => 0,
    };
    format!("illegal base64 data at input byte {offset}")
}

#[allow(dead_code)]
fn debug_sprintf(f: &str, a: &[Value]) -> String {
    sprintf(f, a)
}

#[allow(dead_code)]
fn int_kind(v: &Value) -> Option<IntKind> {
    match v {
        Value::Int(_, k) => Some(*k),
        _ => None,
    }
}
