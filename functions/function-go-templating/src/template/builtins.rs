//! Go's predefined template functions (`text/template/funcs.go`, Go 1.19):
//! `and or not len index slice print printf println eq ne lt le gt ge html
//! urlquery js`. `call` has no functions to call in a template's data and
//! fails naming itself.

use super::func::{Env, Func, FuncMap, Param};
use super::value::{Elem, IntKind, Value, sprint, sprintf, sprintln};

const BAD_TYPE: &str = "invalid type for comparison";
const BAD_CMP: &str = "incompatible types for comparison";

/// Adds the builtins to `m`.
pub fn add(m: &mut FuncMap) {
    use Param::{Any, Str, Value as V};
    // and/or are evaluated lazily by the executor; these bodies are not run.
    m.insert(
        "and",
        Func::variadic(&[V], V, |_, a| {
            Ok(a.into_iter().last().unwrap_or(Value::Invalid))
        }),
    );
    m.insert(
        "or",
        Func::variadic(&[V], V, |_, a| {
            Ok(a.into_iter().last().unwrap_or(Value::Invalid))
        }),
    );
    m.insert(
        "not",
        Func::new(&[V], |_, a| Ok(Value::Bool(!arg(&a, 0).indirect().truth()))),
    );
    m.insert("len", Func::new(&[V], length));
    m.insert("index", Func::variadic(&[V], V, index));
    m.insert("slice", Func::variadic(&[V], V, slice));
    m.insert(
        "print",
        Func::variadic(&[], Any, |_, a| Ok(Value::str(sprint(&a)))),
    );
    m.insert(
        "println",
        Func::variadic(&[], Any, |_, a| Ok(Value::str(sprintln(&a)))),
    );
    m.insert(
        "printf",
        Func::variadic(&[Str], Any, |_, a| {
            let f = match a.first() {
                Some(Value::Str(s)) => s.to_string(),
                _ => String::new(),
            };
            Ok(Value::str(sprintf(&f, &a[1..])))
        }),
    );
    m.insert(
        "eq",
        Func::variadic(&[V], V, |_, a| eq(&a[0], &a[1..]).map(Value::Bool)),
    );
    m.insert(
        "ne",
        Func::new(&[V, V], |_, a| eq(&a[0], &a[1..2]).map(|b| Value::Bool(!b))),
    );
    m.insert(
        "lt",
        Func::new(&[V, V], |_, a| lt(&a[0], &a[1]).map(Value::Bool)),
    );
    m.insert(
        "le",
        Func::new(&[V, V], |_, a| le(&a[0], &a[1]).map(Value::Bool)),
    );
    m.insert(
        "gt",
        Func::new(&[V, V], |_, a| le(&a[0], &a[1]).map(|b| Value::Bool(!b))),
    );
    m.insert(
        "ge",
        Func::new(&[V, V], |_, a| lt(&a[0], &a[1]).map(|b| Value::Bool(!b))),
    );
    m.insert(
        "html",
        Func::variadic(&[], Any, |_, a| Ok(Value::str(html_escape(&eval_args(&a))))),
    );
    m.insert(
        "urlquery",
        Func::variadic(&[], Any, |_, a| {
            Ok(Value::str(query_escape(&eval_args(&a))))
        }),
    );
    m.insert(
        "js",
        Func::variadic(&[], Any, |_, a| Ok(Value::str(js_escape(&eval_args(&a))))),
    );
    m.insert(
        "call",
        Func::variadic(&[V], V, |_, _| {
            Err(
                "call of a function value is not supported: template data holds no functions"
                    .into(),
            )
        }),
    );
}

fn arg(a: &[Value], i: usize) -> Value {
    a.get(i).cloned().unwrap_or(Value::Invalid)
}

/// Go's `evalArgs`: one string as is, else `fmt.Sprint` with no value
/// printed as `<no value>`.
fn eval_args(a: &[Value]) -> String {
    if let [Value::Str(s)] = a {
        return s.to_string();
    }
    let printable: Vec<Value> = a
        .iter()
        .map(|v| {
            if v.is_valid() {
                v.clone()
            } else {
                Value::str("<no value>")
            }
        })
        .collect();
    sprint(&printable)
}

fn length(_: &mut dyn Env, a: Vec<Value>) -> Result<Value, String> {
    let n = match arg(&a, 0) {
        Value::Nil => return Err("len of nil pointer".into()),
        Value::Invalid => return Err("reflect: call of reflect.Value.Type on zero Value".into()),
        Value::Str(s) => s.len(),
        Value::List(l, _) => l.len(),
        Value::Map(m, _) => m.borrow().len(),
        other => return Err(format!("len of type {}", other.type_name())),
    };
    Ok(Value::int(n as i64))
}

fn index_arg(index: &Value, cap: usize) -> Result<usize, String> {
    let x = match index {
        Value::Int(i, _) => *i,
        Value::Invalid | Value::Nil => return Err("cannot index slice/array with nil".into()),
        other => {
            return Err(format!(
                "cannot index slice/array with type {}",
                other.type_name()
            ));
        }
    };
    if x < 0 || x as u64 > cap as u64 {
        return Err(format!("index out of range: {x}"));
    }
    Ok(x as usize)
}

fn index(_: &mut dyn Env, a: Vec<Value>) -> Result<Value, String> {
    let mut item = arg(&a, 0).indirect();
    if let Value::Invalid = item {
        return Err("index of untyped nil".into());
    }
    for idx in &a[1..] {
        let idx = idx.clone().indirect();
        item = match &item {
            Value::Nil => return Err("index of nil pointer".into()),
            Value::List(l, _) => {
                let x = index_arg(&idx, l.len())?;
                l.get(x)
                    .cloned()
                    .ok_or_else(|| "reflect: slice index out of range".to_string())?
            }
            Value::Str(s) => {
                let x = index_arg(&idx, s.len())?;
                match s.as_bytes().get(x) {
                    Some(b) => Value::Int(i64::from(*b), IntKind::Int),
                    None => return Err("reflect: string index out of range".into()),
                }
            }
            Value::Map(m, elem) => {
                let key = match &idx {
                    Value::Str(k) => k.to_string(),
                    Value::Invalid => return Err("value is nil; should be of type string".into()),
                    other => {
                        return Err(format!(
                            "value has type {}; should be string",
                            other.type_name()
                        ));
                    }
                };
                let got = m.borrow().get(&key).cloned();
                match got {
                    Some(v) => v,
                    None => match elem {
                        Elem::Any => Value::Nil,
                        Elem::Str => Value::str(""),
                        Elem::Int | Elem::Byte => Value::int(0),
                        Elem::Bytes => Value::bytes(&[]),
                        Elem::List => Value::list(Vec::new()),
                    },
                }
            }
            Value::Invalid => return Err("index of untyped nil".into()),
            other => return Err(format!("can't index item of type {}", other.type_name())),
        };
    }
    Ok(item)
}

fn slice(_: &mut dyn Env, a: Vec<Value>) -> Result<Value, String> {
    let item = arg(&a, 0).indirect();
    if let Value::Invalid = item {
        return Err("slice of untyped nil".into());
    }
    let indexes = &a[1..];
    if indexes.len() > 3 {
        return Err(format!("too many slice indexes: {}", indexes.len()));
    }
    let (len, is_str) = match &item {
        Value::Str(s) => {
            if indexes.len() == 3 {
                return Err("cannot 3-index slice a string".into());
            }
            (s.len(), true)
        }
        Value::List(l, _) => (l.len(), false),
        other => return Err(format!("can't slice item of type {}", other.type_name())),
    };
    let mut idx = [0usize, len, len];
    for (i, x) in indexes.iter().enumerate() {
        idx[i] = index_arg(&x.clone().indirect(), len)?;
    }
    if idx[0] > idx[1] {
        return Err(format!("invalid slice index: {} > {}", idx[0], idx[1]));
    }
    if indexes.len() == 3 && idx[1] > idx[2] {
        return Err(format!("invalid slice index: {} > {}", idx[1], idx[2]));
    }
    Ok(match item {
        Value::Str(s) if is_str => {
            let b = &s.as_bytes()[idx[0]..idx[1]];
            Value::str(xfn_gocompat::value::go_lossy_utf8(b))
        }
        Value::List(l, e) => Value::List(std::rc::Rc::new(l[idx[0]..idx[1]].to_vec()), e),
        _ => Value::Invalid,
    })
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum Kind {
    Invalid,
    Bool,
    Int,
    Float,
    Str,
}

fn basic_kind(v: &Value) -> Kind {
    match v {
        Value::Bool(_) => Kind::Bool,
        Value::Int(..) => Kind::Int,
        Value::Float(_) => Kind::Float,
        Value::Str(_) => Kind::Str,
        _ => Kind::Invalid,
    }
}

/// Go's `eq` of template values.
pub fn eq(arg1: &Value, rest: &[Value]) -> Result<bool, String> {
    let a = arg1.clone().indirect();
    if rest.is_empty() {
        return Err("missing argument for comparison".into());
    }
    let k1 = basic_kind(&a);
    for b in rest {
        let b = b.clone().indirect();
        let k2 = basic_kind(&b);
        let truth = if k1 != k2 {
            if a.is_valid() && b.is_valid() {
                return Err(BAD_CMP.into());
            }
            false
        } else {
            match (&a, &b) {
                (Value::Bool(x), Value::Bool(y)) => x == y,
                (Value::Int(x, _), Value::Int(y, _)) => x == y,
                (Value::Float(x), Value::Float(y)) => x == y,
                (Value::Str(x), Value::Str(y)) => x == y,
                _ => {
                    let same_kind = std::mem::discriminant(&a) == std::mem::discriminant(&b);
                    if !same_kind && a.is_valid() && b.is_valid() {
                        return Err(format!(
                            "non-comparable types {}: {}, {}: {}",
                            sprintf("%s", std::slice::from_ref(&a)),
                            a.type_name(),
                            b.type_name(),
                            sprintf("%v", std::slice::from_ref(&b))
                        ));
                    }
                    if !a.is_valid() || !b.is_valid() {
                        !a.is_valid() && !b.is_valid()
                    } else if let (Value::Struct(x), Value::Struct(y)) = (&a, &b) {
                        x == y
                    } else if let (Value::Time(x), Value::Time(y)) = (&a, &b) {
                        x == y
                    } else {
                        return Err(format!(
                            "non-comparable type {}: {}",
                            sprintf("%s", std::slice::from_ref(&b)),
                            b.type_name()
                        ));
                    }
                }
            }
        };
        if truth {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Go's `lt`.
pub fn lt(a: &Value, b: &Value) -> Result<bool, String> {
    let a = a.clone().indirect();
    let b = b.clone().indirect();
    let k1 = basic_kind(&a);
    let k2 = basic_kind(&b);
    if k1 == Kind::Invalid || k2 == Kind::Invalid {
        return Err(BAD_TYPE.into());
    }
    if k1 != k2 {
        return Err(BAD_CMP.into());
    }
    Ok(match (&a, &b) {
        (Value::Int(x, _), Value::Int(y, _)) => x < y,
        (Value::Float(x), Value::Float(y)) => x < y,
        (Value::Str(x), Value::Str(y)) => x.as_bytes() < y.as_bytes(),
        _ => return Err(BAD_TYPE.into()),
    })
}

fn le(a: &Value, b: &Value) -> Result<bool, String> {
    if lt(a, b)? {
        return Ok(true);
    }
    eq(a, std::slice::from_ref(b))
}

/// Go's `HTMLEscapeString`.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\0' => out.push('\u{FFFD}'),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// Go's `url.QueryEscape`.
pub fn query_escape(s: &str) -> String {
    let mut out = String::new();
    for &b in s.as_bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Go's `JSEscapeString`.
pub fn js_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u00{:02X}", c as u32)),
            c if !c.is_ascii() && !xfn_gocompat::gofmt::is_print(c) => {
                out.push_str(&format!("\\u{:04X}", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}
