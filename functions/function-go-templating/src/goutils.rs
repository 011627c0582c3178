//! Masterminds/goutils' string helpers as sprig calls them (`abbrev
//! abbrevboth initials untitle wrap wrapWith`), plus sprig's `shuffle`,
//! `chunk` and `randBytes`. goutils works on bytes; so does this port (a cut inside a
//! multi-byte character gives U+FFFD where Go would give the raw byte).

use std::rc::Rc;

use crate::template::func::{Func, FuncMap, Param};
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

fn lossy(b: &[u8]) -> String {
    xfn_gocompat::value::go_lossy_utf8(b)
}

/// goutils' `WrapCustom`.
fn wrap_custom(s: &str, len: i64, newline: &str, long_words: bool) -> String {
    if s.is_empty() {
        return String::new();
    }
    let newline = if newline.is_empty() { "\n" } else { newline }.as_bytes();
    let wl = len.max(1) as usize;
    let b = s.as_bytes();
    let mut out: Vec<u8> = Vec::new();
    let mut off = 0usize;
    while b.len() - off > wl {
        if b[off] == b' ' {
            off += 1;
            continue;
        }
        let end = wl + off + 1;
        match b[off..end].iter().rposition(|&c| c == b' ') {
            Some(i) => {
                let at = off + i;
                out.extend_from_slice(&b[off..at]);
                out.extend_from_slice(newline);
                off = at + 1;
            }
            None => {
                let end = wl + off;
                if long_words {
                    out.extend_from_slice(&b[off..end]);
                    out.extend_from_slice(newline);
                    off += wl;
                } else {
                    match b[end..].iter().position(|&c| c == b' ') {
                        None => {
                            out.extend_from_slice(&b[off..]);
                            off = b.len();
                        }
                        Some(i) => {
                            let at = end + i;
                            out.extend_from_slice(&b[off..at]);
                            out.extend_from_slice(newline);
                            off = at + 1;
                        }
                    }
                }
            }
        }
    }
    out.extend_from_slice(&b[off..]);
    lossy(&out)
}

/// goutils' `AbbreviateFull` (its errors give "" in sprig).
fn abbreviate_full(s: &str, offset: i64, max: i64) -> String {
    let b = s.as_bytes();
    let len = b.len() as i64;
    if s.is_empty() || max < 4 {
        return String::new();
    }
    if len <= max {
        return s.to_string();
    }
    let mut offset = offset.min(len);
    if len - offset < max - 3 {
        offset = len - (max - 3);
    }
    if offset <= 4 {
        return format!("{}...", lossy(&b[..(max - 3) as usize]));
    }
    if max < 7 {
        return String::new();
    }
    if offset + max - 3 < len {
        return format!(
            "...{}",
            abbreviate_full(&lossy(&b[offset as usize..]), 0, max - 3)
        );
    }
    format!("...{}", lossy(&b[(len - (max - 3)) as usize..]))
}

/// Adds the functions to `m`.
pub fn add_functions(m: &mut FuncMap) {
    use Param::{Any, Int, Str};
    m.insert(
        "wrap",
        Func::new(&[Int, Str], |_, a| {
            Ok(Value::str(wrap_custom(&s(&a, 1), int(&a, 0), "", false)))
        }),
    );
    m.insert(
        "wrapWith",
        Func::new(&[Int, Str, Str], |_, a| {
            Ok(Value::str(wrap_custom(
                &s(&a, 2),
                int(&a, 0),
                &s(&a, 1),
                true,
            )))
        }),
    );
    m.insert(
        "abbrev",
        Func::new(&[Int, Str], |_, a| {
            let (w, st) = (int(&a, 0), s(&a, 1));
            Ok(Value::str(if w < 4 {
                st
            } else {
                abbreviate_full(&st, 0, w)
            }))
        }),
    );
    m.insert(
        "abbrevboth",
        Func::new(&[Int, Int, Str], |_, a| {
            let (l, r, st) = (int(&a, 0), int(&a, 1), s(&a, 2));
            Ok(Value::str(if r < 4 || (l > 0 && r < 7) {
                st
            } else {
                abbreviate_full(&st, l, r)
            }))
        }),
    );
    m.insert(
        "untitle",
        Func::new(&[Str], |_, a| {
            let mut next = true;
            let out: String = s(&a, 0)
                .chars()
                .map(|c| {
                    if c.is_whitespace() {
                        next = true;
                        c
                    } else if next {
                        next = false;
                        let mut l = c.to_lowercase();
                        match (l.next(), l.next()) {
                            (Some(x), None) => x,
                            _ => c,
                        }
                    } else {
                        c
                    }
                })
                .collect();
            Ok(Value::str(out))
        }),
    );
    m.insert(
        "initials",
        Func::new(&[Str], |_, a| {
            // goutils takes each byte as a rune (Latin-1).
            let mut gap = true;
            let mut out = String::new();
            for c in s(&a, 0).bytes().map(char::from) {
                if c.is_whitespace() {
                    gap = true;
                } else if gap {
                    out.push(c);
                    gap = false;
                }
            }
            Ok(Value::str(out))
        }),
    );
    m.insert(
        "shuffle",
        Func::new(&[Str], |env, a| {
            let mut chars: Vec<char> = s(&a, 0).chars().collect();
            for i in (1..chars.len()).rev() {
                let j = (env.random() % (i as u64 + 1)) as usize;
                chars.swap(i, j);
            }
            Ok(Value::str(chars.into_iter().collect::<String>()))
        }),
    );
    m.insert(
        "randBytes",
        Func::new(&[Int], |env, a| {
            use base64::Engine as _;
            let n = int(&a, 0);
            if n < 0 {
                return Err("runtime error: makeslice: len out of range".into());
            }
            crate::sprig::check_rand_len(n.saturating_mul(2))?;
            let bytes: Vec<u8> = (0..n).map(|_| env.random() as u8).collect();
            Ok(Value::str(
                base64::engine::general_purpose::STANDARD.encode(bytes),
            ))
        }),
    );
    for name in ["chunk", "mustChunk"] {
        m.insert(
            name,
            Func::new(&[Int, Any], |_, a| {
                let size = int(&a, 0);
                let items = match &a[1] {
                    Value::List(l, _) => l.clone(),
                    Value::Invalid | Value::Nil => {
                        return Err(
                            "runtime error: invalid memory address or nil pointer dereference"
                                .into(),
                        );
                    }
                    other => return Err(format!("Cannot chunk type {}", other.kind_name())),
                };
                let l = items.len() as i64;
                if size <= 0 {
                    return Err("runtime error: integer divide by zero".into());
                }
                let cs = ((l - 1) as f64 / size as f64).floor() as i64 + 1;
                let mut out = Vec::new();
                for i in 0..cs.max(0) {
                    let mut clen = size;
                    if i == cs - 1 {
                        clen = l % size;
                        if clen == 0 {
                            clen = size;
                        }
                    }
                    let start = (i * size) as usize;
                    let end = (start + clen as usize).min(items.len());
                    out.push(Value::list(items[start.min(end)..end].to_vec()));
                }
                Ok(Value::List(Rc::new(out), Elem::List))
            }),
        );
    }
}
