//! Operators, builtin functions and string methods.

use std::rc::Rc;

use crate::error::{Error, eval_err, unsupported};
use crate::eval::{Interp, unify};
use crate::stdlib;
use crate::value::{Map, Value, equal, float_str};

const BUILTINS: &[&str] = &[
    "print",
    "len",
    "str",
    "int",
    "float",
    "bool",
    "list",
    "dict",
    "abs",
    "max",
    "min",
    "sum",
    "sorted",
    "range",
    "typeof",
    "isunique",
    "zip",
    "any",
    "all",
    "any_true",
    "all_true",
    "pow",
    "hex",
    "oct",
    "bin",
    "round",
    "ord",
    "option",
    "multiplyof",
    "isnullish",
];

const STR_METHODS: &[&str] = &[
    "lower",
    "upper",
    "strip",
    "lstrip",
    "rstrip",
    "split",
    "rsplit",
    "join",
    "replace",
    "startswith",
    "endswith",
    "find",
    "rfind",
    "index",
    "rindex",
    "count",
    "format",
    "capitalize",
    "title",
    "isdigit",
    "isalpha",
    "isalnum",
    "islower",
    "isupper",
    "isspace",
    "removeprefix",
    "removesuffix",
    "splitlines",
    "istitle",
];

/// Whether `name` is a builtin function or a function of a standard module.
pub fn is_builtin(name: &str) -> bool {
    BUILTINS.contains(&name) || stdlib::is_module_function(name)
}

/// Whether `path` is a standard module this interpreter provides.
pub fn is_module(path: &str) -> bool {
    stdlib::MODULES.contains(&path)
}

/// A constant of a standard module (`math.pi`).
pub fn module_const(module: &str, name: &str) -> Option<Value> {
    stdlib::constant(module, name)
}

/// Whether `name` is a method of strings.
pub fn is_str_method(name: &str) -> bool {
    STR_METHODS.contains(&name)
}

/// Whether `name` is a method of dicts (KCL dicts have none).
pub fn is_dict_method(_name: &str) -> bool {
    false
}

/// Arguments with keywords, taken by position or name.
pub(crate) struct Args {
    pos: Vec<Value>,
    kw: Vec<(String, Value)>,
    func: String,
    line: u32,
}

impl Args {
    pub(crate) fn new(func: &str, pos: Vec<Value>, kw: Vec<(String, Value)>, line: u32) -> Args {
        Args {
            pos,
            kw,
            func: func.to_string(),
            line,
        }
    }

    /// The `i`th argument, named `name`, if given.
    pub(crate) fn opt(&self, i: usize, name: &str) -> Option<Value> {
        self.pos.get(i).cloned().or_else(|| {
            self.kw
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        })
    }

    pub(crate) fn req(&self, i: usize, name: &str) -> Result<Value, Error> {
        match self.opt(i, name) {
            Some(v) => Ok(v),
            None => eval_err(
                format!("{}() missing required argument '{name}'", self.func),
                self.line,
            ),
        }
    }

    pub(crate) fn str(&self, i: usize, name: &str) -> Result<Rc<str>, Error> {
        match self.req(i, name)? {
            Value::Str(s) => Ok(s),
            other => eval_err(
                format!(
                    "{}() expects a string for '{name}', got {}",
                    self.func,
                    other.type_name()
                ),
                self.line,
            ),
        }
    }

    pub(crate) fn opt_int(&self, i: usize, name: &str) -> Result<Option<i64>, Error> {
        match self.opt(i, name) {
            None | Some(Value::None) => Ok(None),
            Some(Value::Int(n)) => Ok(Some(n)),
            Some(other) => eval_err(
                format!(
                    "{}() expects an int for '{name}', got {}",
                    self.func,
                    other.type_name()
                ),
                self.line,
            ),
        }
    }

    pub(crate) fn flag(&self, i: usize, name: &str) -> bool {
        self.opt(i, name).is_some_and(|v| v.truthy())
    }

    pub(crate) fn len(&self) -> usize {
        self.pos.len()
    }
}

/// Calls the builtin `name` (bound to `recv` for methods).
pub fn call(
    it: &mut Interp,
    name: &str,
    recv: Option<&Value>,
    pos: Vec<Value>,
    kw: Vec<(String, Value)>,
    line: u32,
) -> Result<Value, Error> {
    if let Some(m) = name.strip_prefix("str.") {
        let Some(Value::Str(s)) = recv else {
            return eval_err("string method without a string", line);
        };
        return str_method(it, s, m, Args::new(m, pos, kw, line), line);
    }
    if name.contains('.') {
        return stdlib::call(it, name, Args::new(name, pos, kw, line), line);
    }
    let a = Args::new(name, pos, kw, line);
    Ok(match name {
        "print" => {
            for v in &a.pos {
                it.check_text(v, line)?;
            }
            let parts: Vec<String> = a.pos.iter().map(|v| v.to_kcl_string()).collect();
            it.printed.push_str(&parts.join(" "));
            it.printed.push('\n');
            Value::None
        }
        "len" => match a.req(0, "x")? {
            // KCL counts a string's bytes.
            Value::Str(s) => Value::Int(s.len() as i64),
            Value::List(l) => Value::Int(l.len() as i64),
            Value::Dict(d) => Value::Int(d.map.len() as i64),
            other => {
                return eval_err(
                    format!("object of type '{}' has no len()", other.type_name()),
                    line,
                );
            }
        },
        "str" => {
            let v = a.opt(0, "x").unwrap_or(Value::str(""));
            it.check_text(&v, line)?;
            Value::str(v.to_kcl_string())
        }
        "int" => {
            let base = a.opt_int(1, "base")?.unwrap_or(10);
            match a.opt(0, "x").unwrap_or(Value::Int(0)) {
                Value::Int(i) => Value::Int(i),
                Value::Unit(f, _) if f.abs() < 9.2e18 => Value::Int(f as i64),
                Value::Float(f) => {
                    if !f.is_finite() || f.abs() >= 9.2e18 {
                        return eval_err(format!("cannot convert {} to int", float_str(f)), line);
                    }
                    Value::Int(f.trunc() as i64)
                }
                Value::Bool(b) => Value::Int(b as i64),
                Value::Str(s) => {
                    // As KCL: decimal digits only (it refuses "ff" even in
                    // base 16), read in the base; no 0x/0o/0b prefix.
                    // A number with a unit suffix: `int("10Ki")` is 10240.
                    if let Some((suffix, factor)) = crate::lexer::MULTIPLIERS
                        .iter()
                        .filter(|(sfx, _)| s.ends_with(sfx))
                        .max_by_key(|(sfx, _)| sfx.len())
                        && let Ok(n) = s[..s.len() - suffix.len()].parse::<i64>()
                    {
                        let v = n as f64 * factor;
                        if v.abs() >= 9.2e18 {
                            return Err(overflow(line));
                        }
                        return Ok(Value::Int(v as i64));
                    }
                    let radix = u32::try_from(base).ok().filter(|b| (2..=36).contains(b));
                    let digits = s.strip_prefix(['-', '+']).unwrap_or(&s);
                    let decimal = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
                    match radix
                        .filter(|_| decimal)
                        .and_then(|r| i64::from_str_radix(&s, r).ok())
                    {
                        Some(n) => Value::Int(n),
                        None => {
                            return eval_err(
                                format!("invalid literal for int() with base {base}: '{s}'"),
                                line,
                            );
                        }
                    }
                }
                other => {
                    return eval_err(
                        format!(
                            "int() argument must be a string or a number, not '{}'",
                            other.type_name()
                        ),
                        line,
                    );
                }
            }
        }
        "float" => match a.opt(0, "x").unwrap_or(Value::Float(0.0)) {
            Value::Int(i) => Value::Float(i as f64),
            Value::Unit(f, _) => Value::Float(f),
            Value::Float(f) => Value::Float(f),
            Value::Bool(b) => Value::Float(b as i64 as f64),
            Value::Str(s) => match s.trim().parse::<f64>() {
                Ok(f) => Value::Float(f),
                Err(_) => {
                    return eval_err(format!("could not convert string to float: '{s}'"), line);
                }
            },
            other => {
                return eval_err(
                    format!(
                        "float() argument must be a string or a number, not '{}'",
                        other.type_name()
                    ),
                    line,
                );
            }
        },
        "bool" => Value::Bool(a.opt(0, "x").is_some_and(|v| v.truthy())),
        "list" => match a.opt(0, "x") {
            None => Value::list(vec![]),
            Some(Value::List(l)) => Value::List(l),
            Some(Value::Dict(d)) => {
                Value::list(d.map.keys().map(|k| Value::str(k.as_str())).collect())
            }
            Some(Value::Str(s)) => {
                Value::list(s.chars().map(|c| Value::str(c.to_string())).collect())
            }
            Some(other) => {
                return eval_err(
                    format!("'{}' object is not iterable", other.type_name()),
                    line,
                );
            }
        },
        "dict" => match a.opt(0, "x") {
            None => Value::dict(Map::new()),
            Some(Value::Dict(d)) => Value::dict(d.map.clone()),
            Some(other) => return unsupported(format!("dict() of {}", other.type_name()), line),
        },
        "abs" => match a.req(0, "x")? {
            Value::Int(i) => Value::Int(i.checked_abs().ok_or_else(|| overflow(line))?),
            Value::Float(f) => Value::Float(f.abs()),
            other => {
                return eval_err(
                    format!("bad operand type for abs(): '{}'", other.type_name()),
                    line,
                );
            }
        },
        "max" | "min" => {
            let items: Vec<Value> = if a.len() == 1 {
                match a.req(0, "x")? {
                    Value::List(l) => l.to_vec(),
                    Value::Dict(d) => d.map.keys().map(|k| Value::str(k.as_str())).collect(),
                    other => {
                        return eval_err(
                            format!("'{}' object is not iterable", other.type_name()),
                            line,
                        );
                    }
                }
            } else {
                a.pos.clone()
            };
            let mut best: Option<Value> = None;
            for v in items {
                best = Some(match best {
                    None => v,
                    Some(b) => {
                        let less = compare(&v, &b, line)? == std::cmp::Ordering::Less;
                        if (name == "min") == less { v } else { b }
                    }
                });
            }
            match best {
                Some(b) => b,
                None => return eval_err(format!("{name}() arg is an empty sequence"), line),
            }
        }
        "sum" => {
            let Value::List(l) = a.req(0, "iterable")? else {
                return eval_err("sum() expects a list", line);
            };
            let mut acc = a.opt(1, "start").unwrap_or(Value::Int(0));
            for v in l.iter() {
                acc = binary(it, "+", &acc, v, line)?;
            }
            acc
        }
        "sorted" => {
            let items: Vec<Value> = match a.req(0, "x")? {
                Value::List(l) => l.to_vec(),
                Value::Dict(d) => d.map.keys().map(|k| Value::str(k.as_str())).collect(),
                Value::Str(s) => s.chars().map(|c| Value::str(c.to_string())).collect(),
                other => {
                    return eval_err(
                        format!("'{}' object is not iterable", other.type_name()),
                        line,
                    );
                }
            };
            let reverse = a.flag(1, "reverse");
            let mut err = None;
            let mut items = items;
            items.sort_by(|x, y| match compare(x, y, line) {
                Ok(o) => o,
                Err(e) => {
                    err.get_or_insert(e);
                    std::cmp::Ordering::Equal
                }
            });
            if let Some(e) = err {
                return Err(e);
            }
            if reverse {
                items.reverse();
            }
            Value::list(items)
        }
        "range" => {
            let (start, stop, step) = match a.len() {
                1 => (0, a.opt_int(0, "stop")?.unwrap_or(0), 1),
                _ => (
                    a.opt_int(0, "start")?.unwrap_or(0),
                    a.opt_int(1, "stop")?.unwrap_or(0),
                    a.opt_int(2, "step")?.unwrap_or(1),
                ),
            };
            if step == 0 {
                return eval_err("range() step must not be zero", line);
            }
            let n = if step > 0 {
                (stop.saturating_sub(start).max(0) as u64).div_ceil(step as u64)
            } else {
                (start.saturating_sub(stop).max(0) as u64).div_ceil(step.unsigned_abs())
            };
            it.check_len(n as usize, line)?;
            let mut out = Vec::with_capacity(n as usize);
            let mut i = start;
            for _ in 0..n {
                out.push(Value::Int(i));
                i = i.wrapping_add(step);
            }
            Value::list(out)
        }
        "typeof" => Value::str(a.req(0, "x")?.type_name()),
        "isunique" => {
            let Value::List(l) = a.req(0, "x")? else {
                return eval_err("isunique() expects a list", line);
            };
            let mut unique = true;
            // Pairwise, as KCL compares: the work counts against the steps.
            it.charge(l.len().saturating_mul(l.len()), line)?;
            for (i, x) in l.iter().enumerate() {
                if l[..i]
                    .iter()
                    .any(|y| equal(x, y) && x.type_name() == y.type_name())
                {
                    unique = false;
                    break;
                }
            }
            Value::Bool(unique)
        }
        "zip" => {
            let mut lists = Vec::new();
            for v in &a.pos {
                match v {
                    Value::List(l) => lists.push(l.clone()),
                    other => {
                        return eval_err(
                            format!("zip() argument must be a list, not {}", other.type_name()),
                            line,
                        );
                    }
                }
            }
            let n = lists.iter().map(|l| l.len()).min().unwrap_or(0);
            Value::list(
                (0..n)
                    .map(|i| Value::list(lists.iter().map(|l| l[i].clone()).collect()))
                    .collect(),
            )
        }
        "any_true" | "all_true" => {
            let Value::List(l) = a.req(0, "x")? else {
                return eval_err(format!("{name}() expects a list"), line);
            };
            Value::Bool(if name == "any_true" {
                l.iter().any(|v| v.truthy())
            } else {
                l.iter().all(|v| v.truthy())
            })
        }
        "hex" | "oct" | "bin" => {
            let Value::Int(i) = a.req(0, "x")? else {
                return eval_err(format!("{name}() expects an int"), line);
            };
            let (sign, u) = if i < 0 {
                ("-", i.unsigned_abs())
            } else {
                ("", i as u64)
            };
            Value::str(match name {
                "hex" => format!("{sign}0x{u:x}"),
                "oct" => format!("{sign}0o{u:o}"),
                _ => format!("{sign}0b{u:b}"),
            })
        }
        "round" => {
            // As KCL's runtime: without ndigits an int, rounding halves away
            // from zero; with ndigits a float (also for an int), the scaled
            // value's halves rounded to even.
            let digits = a.opt_int(1, "ndigits")?;
            match (a.req(0, "number")?, digits) {
                (Value::Int(i), None) => Value::Int(i),
                (Value::Int(i), Some(_)) => Value::Float(i as f64),
                (Value::Float(f), None) => {
                    let r = f.round();
                    if !r.is_finite() || r.abs() >= 9.2e18 {
                        return eval_err("cannot round a float this large to an int", line);
                    }
                    Value::Int(r as i64)
                }
                (Value::Float(f), Some(0)) => Value::Float(f.round()),
                (Value::Float(f), Some(d)) => match round_digits(f, d) {
                    Some(r) => Value::Float(r),
                    None => Value::Undefined,
                },
                (other, _) => {
                    return eval_err(
                        format!("round() expects a number, got {}", other.type_name()),
                        line,
                    );
                }
            }
        }
        "ord" => {
            let s = a.str(0, "c")?;
            let mut cs = s.chars();
            match (cs.next(), cs.next()) {
                (Some(c), None) => Value::Int(c as i64),
                _ => return eval_err("ord() expects a character", line),
            }
        }
        "pow" => {
            let x = a.req(0, "x")?;
            let y = a.req(1, "y")?;
            binary(it, "**", &x, &y, line)?
        }
        "multiplyof" => {
            let (Some(x), Some(y)) = (a.opt_int(0, "a")?, a.opt_int(1, "b")?) else {
                return eval_err("multiplyof() expects two ints", line);
            };
            Value::Bool(y != 0 && x % y == 0)
        }
        "isnullish" => Value::Bool(a.req(0, "x")?.is_none_like()),
        "option" => {
            let key = a.str(0, "key")?;
            let required = a.flag(2, "required");
            match it.options.get(&*key) {
                Some(v) => v.clone(),
                None => {
                    if required && a.opt(3, "default").is_none() {
                        return eval_err(
                            format!(
                                "option('{key}') must be initialized, try '-D {key}=?' argument"
                            ),
                            line,
                        );
                    }
                    a.opt(3, "default").unwrap_or(Value::None)
                }
            }
        }
        other => return unsupported(format!("builtin {other}()"), line),
    })
}

/// `round(f, d)` for `d != 0`: the value scaled by 10^d (in two steps
/// past 10^22, as CPython and KCL do), its halves rounded to even, scaled
/// back; `None` when the result overflows.
fn round_digits(f: f64, d: i64) -> Option<f64> {
    let d = d.clamp(-400, 400) as i32;
    if d > 0 {
        let (p1, p2) = if d > 22 {
            (10f64.powi(d - 22), 1e22)
        } else {
            (10f64.powi(d), 1.0)
        };
        let y = f * p1 * p2;
        if !y.is_finite() {
            return Some(f);
        }
        let z = half_even(y) / p2 / p1;
        z.is_finite().then_some(z)
    } else {
        let p1 = 10f64.powi(-d);
        let z = half_even(f / p1) * p1;
        z.is_finite().then_some(z)
    }
}

fn half_even(y: f64) -> f64 {
    let z = y.round();
    if (y - z).abs() == 0.5 {
        2.0 * (y / 2.0).round()
    } else {
        z
    }
}

fn overflow(line: u32) -> Error {
    Error::Eval {
        line,
        msg: "integer overflow: the result does not fit in 64 bits".into(),
    }
}

fn str_method(it: &mut Interp, s: &Rc<str>, m: &str, a: Args, line: u32) -> Result<Value, Error> {
    let opt_chars = |a: &Args| -> Result<Option<Rc<str>>, Error> {
        match a.opt(0, "chars") {
            None | Some(Value::None) => Ok(None),
            Some(Value::Str(c)) => Ok(Some(c)),
            Some(o) => eval_err(
                format!("strip() expects a string, got {}", o.type_name()),
                line,
            ),
        }
    };
    Ok(match m {
        "lower" => Value::str(s.to_lowercase()),
        "upper" => Value::str(s.to_uppercase()),
        "capitalize" => {
            let mut cs = s.chars();
            Value::str(match cs.next() {
                Some(c) => c.to_uppercase().collect::<String>() + &cs.as_str().to_lowercase(),
                None => String::new(),
            })
        }
        "title" => {
            let mut out = String::new();
            let mut prev_alpha = false;
            for c in s.chars() {
                if prev_alpha {
                    out.extend(c.to_lowercase());
                } else {
                    out.extend(c.to_uppercase());
                }
                prev_alpha = c.is_alphabetic();
            }
            Value::str(out)
        }
        "strip" | "lstrip" | "rstrip" => {
            let chars = opt_chars(&a)?;
            let pred = |c: char| match &chars {
                Some(cs) => cs.contains(c),
                None => c.is_whitespace(),
            };
            Value::str(match m {
                "strip" => s.trim_matches(pred),
                "lstrip" => s.trim_start_matches(pred),
                _ => s.trim_end_matches(pred),
            })
        }
        "split" | "rsplit" => {
            let sep = match a.opt(0, "sep") {
                None | Some(Value::None) => None,
                Some(Value::Str(x)) => Some(x),
                Some(o) => {
                    return eval_err(
                        format!("split() expects a string separator, got {}", o.type_name()),
                        line,
                    );
                }
            };
            let maxsplit = a
                .opt_int(1, "maxsplit")?
                .filter(|n| *n >= 0)
                .map(|n| n as usize);
            let parts: Vec<String> = match (&sep, maxsplit) {
                (Some(sep), _) if sep.is_empty() => return eval_err("empty separator", line),
                (Some(sep), None) => s.split(&**sep).map(String::from).collect(),
                (Some(sep), Some(n)) if m == "split" => {
                    s.splitn(n + 1, &**sep).map(String::from).collect()
                }
                (Some(sep), Some(n)) => {
                    let mut v: Vec<String> = s.rsplitn(n + 1, &**sep).map(String::from).collect();
                    v.reverse();
                    v
                }
                (None, None) => s.split_whitespace().map(String::from).collect(),
                (None, Some(_)) => {
                    return unsupported("split() with maxsplit and no separator", line);
                }
            };
            Value::list(parts.into_iter().map(Value::str).collect())
        }
        "splitlines" => {
            // Python's line boundaries: \n, \r, \r\n and the other breaks.
            let mut lines = Vec::new();
            let mut cur = String::new();
            let mut chars = s.chars().peekable();
            while let Some(c) = chars.next() {
                match c {
                    '\r' | '\n' | '\x0b' | '\x0c' | '\x1c' | '\x1d' | '\x1e' | '\u{85}'
                    | '\u{2028}' | '\u{2029}' => {
                        if c == '\r' && chars.peek() == Some(&'\n') {
                            chars.next();
                        }
                        lines.push(Value::str(std::mem::take(&mut cur)));
                    }
                    _ => cur.push(c),
                }
            }
            if !cur.is_empty() {
                lines.push(Value::str(cur));
            }
            Value::list(lines)
        }
        "join" => {
            let items = match a.req(0, "iterable")? {
                Value::List(l) => l,
                other => {
                    return eval_err(
                        format!("join() expects a list, got {}", other.type_name()),
                        line,
                    );
                }
            };
            let total = items
                .iter()
                .map(|v| match v {
                    Value::Str(x) => x.len(),
                    _ => 0,
                })
                .fold(s.len().saturating_mul(items.len()), usize::saturating_add);
            if total > it.limits.max_str_len {
                return Err(Error::Limit {
                    line,
                    msg: format!("a string is longer than {} bytes", it.limits.max_str_len),
                });
            }
            let mut parts = Vec::with_capacity(items.len());
            for v in items.iter() {
                match v {
                    Value::Str(x) => parts.push(x.to_string()),
                    other => {
                        return eval_err(
                            format!(
                                "sequence item: expected str instance, {} found",
                                other.type_name()
                            ),
                            line,
                        );
                    }
                }
            }
            let out = parts.join(s);
            it.check_str(&out, line)?;
            Value::str(out)
        }
        "replace" => {
            let old = a.str(0, "old")?;
            let new = a.str(1, "new")?;
            let count = a.opt_int(2, "count")?;
            let estimate = s.len() + new.len().saturating_mul(s.len() + 1);
            if estimate > it.limits.max_str_len && !old.is_empty() {
                let n = s.matches(&*old).count();
                it.check_str(&"x".repeat(0), line)?;
                if s.len() - n * old.len() + n * new.len() > it.limits.max_str_len {
                    return Err(Error::Limit {
                        line,
                        msg: format!("a string is longer than {} bytes", it.limits.max_str_len),
                    });
                }
            }
            let out = match count {
                Some(n) if n >= 0 => s.replacen(&*old, &new, n as usize),
                _ => {
                    if old.is_empty() {
                        return unsupported("replace() of an empty string", line);
                    }
                    s.replace(&*old, &new)
                }
            };
            it.check_str(&out, line)?;
            Value::str(out)
        }
        "startswith" => Value::Bool(s.starts_with(&*a.str(0, "prefix")?)),
        "endswith" => Value::Bool(s.ends_with(&*a.str(0, "suffix")?)),
        "removeprefix" => {
            let p = a.str(0, "prefix")?;
            Value::str(s.strip_prefix(&*p).unwrap_or(s))
        }
        "removesuffix" => {
            let p = a.str(0, "suffix")?;
            Value::str(s.strip_suffix(&*p).unwrap_or(s))
        }
        "find" | "rfind" | "index" | "rindex" => {
            let sub = a.str(0, "sub")?;
            if a.len() > 1 {
                return unsupported(format!("{m}() with start/end"), line);
            }
            let pos = if m.starts_with('r') {
                s.rfind(&*sub)
            } else {
                s.find(&*sub)
            };
            match pos {
                Some(p) => Value::Int(s[..p].chars().count() as i64),
                None if m.ends_with("find") => Value::Int(-1),
                None => return eval_err("substring not found", line),
            }
        }
        "count" => {
            let sub = a.str(0, "sub")?;
            if sub.is_empty() {
                Value::Int(s.chars().count() as i64 + 1)
            } else {
                Value::Int(s.matches(&*sub).count() as i64)
            }
        }
        "format" => {
            for v in a.pos.iter().chain(a.kw.iter().map(|(_, v)| v)) {
                it.check_text(v, line)?;
            }
            let out = format_str(s, &a, line)?;
            it.check_str(&out, line)?;
            Value::str(out)
        }
        "isdigit" => Value::Bool(!s.is_empty() && s.chars().all(|c| c.is_ascii_digit())),
        "isalpha" => Value::Bool(!s.is_empty() && s.chars().all(char::is_alphabetic)),
        "isalnum" => Value::Bool(!s.is_empty() && s.chars().all(char::is_alphanumeric)),
        "isspace" => Value::Bool(!s.is_empty() && s.chars().all(char::is_whitespace)),
        "istitle" => {
            // Words start upper case and go on lower case; at least one cased letter.
            let (mut prev_cased, mut ok, mut any) = (false, true, false);
            for c in s.chars() {
                if c.is_uppercase() {
                    ok &= !prev_cased;
                    prev_cased = true;
                    any = true;
                } else if c.is_lowercase() {
                    ok &= prev_cased;
                    prev_cased = true;
                    any = true;
                } else {
                    prev_cased = false;
                }
            }
            Value::Bool(ok && any)
        }
        "islower" => {
            Value::Bool(s.chars().any(char::is_lowercase) && !s.chars().any(char::is_uppercase))
        }
        "isupper" => {
            Value::Bool(s.chars().any(char::is_uppercase) && !s.chars().any(char::is_lowercase))
        }
        other => return unsupported(format!("str.{other}()"), line),
    })
}

/// `"{} {name}".format(...)`: positional and named fields, no format specs.
fn format_str(s: &str, a: &Args, line: u32) -> Result<String, Error> {
    let mut out = String::new();
    let mut auto = 0;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '{' {
            if chars.peek() == Some(&'{') {
                chars.next();
                out.push('{');
                continue;
            }
            let mut field = String::new();
            for d in chars.by_ref() {
                if d == '}' {
                    break;
                }
                field.push(d);
            }
            // `{name!r:spec}`: KCL ignores the conversion.
            let (field, spec) = match field.split_once(':') {
                Some((f, sp)) => (f.to_string(), Some(sp.to_string())),
                None => (field, None),
            };
            let field = match field.split_once('!') {
                Some((f, _)) => f.to_string(),
                None => field,
            };
            let v = if field.is_empty() {
                auto += 1;
                a.pos.get(auto - 1).cloned()
            } else if let Ok(i) = field.parse::<usize>() {
                a.pos.get(i).cloned()
            } else {
                a.kw.iter()
                    .find(|(k, _)| *k == field)
                    .map(|(_, v)| v.clone())
            };
            match (v, spec) {
                (Some(v), Some(spec)) => out.push_str(&format_spec(&v, &spec, line)?),
                (Some(v), None) => out.push_str(&v.to_kcl_string()),
                (None, _) => {
                    return eval_err(format!("format(): no argument for field {{{field}}}"), line);
                }
            }
        } else if c == '}' {
            if chars.peek() == Some(&'}') {
                chars.next();
            }
            out.push('}');
        } else {
            out.push(c);
        }
    }
    Ok(out)
}

/// One field's format spec (`[[fill]align][sign][#][0][width][,][.prec][type]`),
/// as KCL applies it: to numbers; strings and bools print as they are.
fn format_spec(v: &Value, spec: &str, line: u32) -> Result<String, Error> {
    let bad = || Error::Eval {
        line,
        msg: format!("invalid format spec {spec:?}"),
    };
    let cs: Vec<char> = spec.chars().collect();
    let mut i = 0;
    let (mut fill, mut align) = (' ', None);
    if cs.len() >= 2 && "<>^=".contains(cs[1]) {
        fill = cs[0];
        align = Some(cs[1]);
        i = 2;
    } else if !cs.is_empty() && "<>^=".contains(cs[0]) {
        align = Some(cs[0]);
        i = 1;
    }
    let mut sign = '-';
    if i < cs.len() && "+- ".contains(cs[i]) {
        sign = cs[i];
        i += 1;
    }
    let alt = i < cs.len() && cs[i] == '#';
    if alt {
        i += 1;
    }
    if i < cs.len() && cs[i] == '0' {
        if align.is_none() {
            fill = '0';
            align = Some('=');
        }
        i += 1;
    }
    let mut width = 0usize;
    while i < cs.len() && cs[i].is_ascii_digit() {
        width = width
            .saturating_mul(10)
            .saturating_add(cs[i] as usize - '0' as usize);
        i += 1;
    }
    let group = i < cs.len() && (cs[i] == ',' || cs[i] == '_');
    let group_char = if group { cs[i] } else { ',' };
    if group {
        i += 1;
    }
    let mut prec = None;
    if i < cs.len() && cs[i] == '.' {
        i += 1;
        let mut p = 0usize;
        while i < cs.len() && cs[i].is_ascii_digit() {
            p = p
                .saturating_mul(10)
                .saturating_add(cs[i] as usize - '0' as usize);
            i += 1;
        }
        prec = Some(p.min(100));
    }
    let ty = cs.get(i).copied();
    if i + usize::from(ty.is_some()) != cs.len() || width > 4096 {
        return Err(bad());
    }
    let (neg, body) = match (v, ty) {
        (Value::Int(n), None | Some('d' | 'n')) => (
            *n < 0,
            group_digits(&n.unsigned_abs().to_string(), group, group_char),
        ),
        (Value::Int(n), Some(t @ ('x' | 'X' | 'o' | 'b'))) => {
            let u = n.unsigned_abs();
            let digits = match t {
                'x' => format!("{u:x}"),
                'X' => format!("{u:X}"),
                'o' => format!("{u:o}"),
                _ => format!("{u:b}"),
            };
            let prefix = if alt {
                format!("0{}", if t == 'X' { 'X' } else { t })
            } else {
                String::new()
            };
            (*n < 0, prefix + &digits)
        }
        (Value::Int(_) | Value::Float(_), Some(t @ ('f' | 'F' | 'e' | 'E' | '%'))) => {
            let f = match v {
                Value::Int(n) => *n as f64,
                Value::Float(f) => *f,
                _ => 0.0,
            };
            let p = prec.unwrap_or(6);
            let body = match t {
                'f' | 'F' => group_digits(&format!("{:.p$}", f.abs()), group, group_char),
                '%' => format!("{:.p$}%", f.abs() * 100.0),
                _ => {
                    let e = format!("{:.p$e}", f.abs());
                    let (m, x) = e.split_once('e').unwrap_or((&e, "0"));
                    let x: i32 = x.parse().unwrap_or(0);
                    let t = if t == 'E' { 'E' } else { 'e' };
                    format!("{m}{t}{}{:02}", if x < 0 { '-' } else { '+' }, x.abs())
                }
            };
            (f.is_sign_negative() && f != 0.0, body)
        }
        (Value::Float(f), None) => (f.is_sign_negative() && *f != 0.0, float_str(f.abs())),
        (Value::Int(_) | Value::Float(_), Some(t)) => {
            return unsupported(format!("format type {t:?} in str.format()"), line);
        }
        (other, _) => return Ok(other.to_kcl_string()),
    };
    let sign_text = match (neg, sign) {
        (true, _) => "-",
        (false, '+') => "+",
        (false, ' ') => " ",
        _ => "",
    };
    let len = sign_text.chars().count() + body.chars().count();
    let pad = width.saturating_sub(len);
    let fills = |n: usize| std::iter::repeat_n(fill, n).collect::<String>();
    Ok(match align.unwrap_or('>') {
        '<' => format!("{sign_text}{body}{}", fills(pad)),
        '^' => format!(
            "{}{sign_text}{body}{}",
            fills(pad / 2),
            fills(pad - pad / 2)
        ),
        '=' => format!("{sign_text}{}{body}", fills(pad)),
        _ => format!("{}{sign_text}{body}", fills(pad)),
    })
}

/// Digits with a separator every three places (before any fraction).
fn group_digits(digits: &str, group: bool, sep: char) -> String {
    if !group {
        return digits.to_string();
    }
    let (int, frac) = match digits.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (digits, None),
    };
    let mut out = String::new();
    for (k, c) in int.chars().enumerate() {
        if k > 0 && (int.len() - k) % 3 == 0 {
            out.push(sep);
        }
        out.push(c);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    out
}

/// Orders two values for `<`, `sorted`, `max`, `min`.
pub(crate) fn compare(a: &Value, b: &Value, line: u32) -> Result<std::cmp::Ordering, Error> {
    use std::cmp::Ordering;
    Ok(match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        // Bools order as the ints 0 and 1 beside numbers.
        (Value::Bool(x), Value::Int(_) | Value::Float(_)) => {
            return compare(&Value::Int(*x as i64), b, line);
        }
        (Value::Int(_) | Value::Float(_), Value::Bool(y)) => {
            return compare(a, &Value::Int(*y as i64), line);
        }
        (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
            let (x, y) = (as_f64(a), as_f64(b));
            x.partial_cmp(&y).unwrap_or(Ordering::Equal)
        }
        (Value::Str(x), Value::Str(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::List(x), Value::List(y)) => {
            for (p, q) in x.iter().zip(y.iter()) {
                let o = compare(p, q, line)?;
                if o != Ordering::Equal {
                    return Ok(o);
                }
            }
            x.len().cmp(&y.len())
        }
        _ => {
            return eval_err(
                format!(
                    "'<' not supported between instances of '{}' and '{}'",
                    a.type_name(),
                    b.type_name()
                ),
                line,
            );
        }
    })
}

fn as_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        _ => f64::NAN,
    }
}

/// A unary operator.
pub fn unary(op: &str, v: &Value, line: u32) -> Result<Value, Error> {
    Ok(match (op, v) {
        ("not", v) => Value::Bool(!v.truthy()),
        ("-", Value::Int(i)) => Value::Int(i.checked_neg().ok_or_else(|| overflow(line))?),
        ("-", Value::Float(f)) => Value::Float(-f),
        ("+", Value::Int(_) | Value::Float(_)) => v.clone(),
        ("~", Value::Int(i)) => Value::Int(!i),
        (op, v) => {
            return eval_err(
                format!("bad operand type for unary {op}: '{}'", v.type_name()),
                line,
            );
        }
    })
}

fn type_err<T>(op: &str, a: &Value, b: &Value, line: u32) -> Result<T, Error> {
    eval_err(
        format!(
            "unsupported operand type(s) for {op}: '{}' and '{}'",
            a.type_name(),
            b.type_name()
        ),
        line,
    )
}

/// A binary operator (not `and`/`or`, which short-circuit).
pub fn binary(it: &mut Interp, op: &str, a: &Value, b: &Value, line: u32) -> Result<Value, Error> {
    use Value::*;
    let ov = || overflow(line);
    Ok(match op {
        "==" => Bool(equal(a, b)),
        "!=" => Bool(!equal(a, b)),
        "<" => Bool(compare(a, b, line)?.is_lt()),
        "<=" => Bool(compare(a, b, line)?.is_le()),
        ">" => Bool(compare(a, b, line)?.is_gt()),
        ">=" => Bool(compare(a, b, line)?.is_ge()),
        "in" | "not in" => {
            let found = match b {
                List(l) => l.iter().any(|x| equal(x, a)),
                Dict(d) => match a {
                    Str(k) => d.map.contains_key(&**k),
                    _ => false,
                },
                Str(s) => match a {
                    Str(sub) => s.contains(&**sub),
                    // KCL: a value that is no string is not in a string.
                    _ => false,
                },
                None | Undefined => false,
                _ => return type_err(op, a, b, line),
            };
            Bool(found == (op == "in"))
        }
        "is" | "is not" => {
            let same = match (a, b) {
                (None, None) | (Undefined, Undefined) => true,
                (Bool(x), Bool(y)) => x == y,
                (Int(x), Int(y)) => x == y,
                (Str(x), Str(y)) => x == y,
                (Float(x), Float(y)) => x == y,
                _ => false,
            };
            Bool(same == (op == "is"))
        }
        "+" => match (a, b) {
            (Int(x), Int(y)) => Int(x.checked_add(*y).ok_or_else(ov)?),
            (Int(_) | Float(_), Int(_) | Float(_)) => Float(as_f64(a) + as_f64(b)),
            (Str(x), Str(y)) => {
                it.charge(x.len() + y.len(), line)?;
                let s = format!("{x}{y}");
                it.check_str(&s, line)?;
                Value::str(s)
            }
            (List(x), List(y)) => {
                it.check_len(x.len() + y.len(), line)?;
                it.charge(x.len() + y.len(), line)?;
                let mut l = (**x).clone();
                l.extend(y.iter().cloned());
                Value::list(l)
            }
            _ => return type_err(op, a, b, line),
        },
        "-" => match (a, b) {
            (Int(x), Int(y)) => Int(x.checked_sub(*y).ok_or_else(ov)?),
            (Int(_) | Float(_), Int(_) | Float(_)) => Float(as_f64(a) - as_f64(b)),
            _ => return type_err(op, a, b, line),
        },
        "*" => match (a, b) {
            (Int(x), Int(y)) => Int(x.checked_mul(*y).ok_or_else(ov)?),
            (Int(_) | Float(_), Int(_) | Float(_)) => Float(as_f64(a) * as_f64(b)),
            (Str(s), Int(n)) | (Int(n), Str(s)) => {
                let n = (*n).max(0) as usize;
                if s.len().saturating_mul(n) > it.limits.max_str_len {
                    return Err(Error::Limit {
                        line,
                        msg: format!("a string is longer than {} bytes", it.limits.max_str_len),
                    });
                }
                Value::str(s.repeat(n))
            }
            (List(l), Int(n)) | (Int(n), List(l)) => {
                let n = (*n).max(0) as usize;
                it.check_len(l.len().saturating_mul(n), line)?;
                let mut out = Vec::with_capacity(l.len() * n);
                for _ in 0..n {
                    out.extend(l.iter().cloned());
                }
                Value::list(out)
            }
            _ => return type_err(op, a, b, line),
        },
        "/" => match (a, b) {
            (Int(_) | Float(_), Int(_) | Float(_)) => {
                let d = as_f64(b);
                if d == 0.0 {
                    return eval_err("division by zero", line);
                }
                Float(as_f64(a) / d)
            }
            _ => return type_err(op, a, b, line),
        },
        "//" => match (a, b) {
            (Int(x), Int(y)) => {
                if *y == 0 {
                    return eval_err("integer division by zero", line);
                }
                if *x == i64::MIN && *y == -1 {
                    return Err(ov());
                }
                floor_div(*x, *y)
            }
            (Int(_) | Float(_), Int(_) | Float(_)) => {
                let d = as_f64(b);
                if d == 0.0 {
                    return eval_err("float division by zero", line);
                }
                Float((as_f64(a) / d).floor())
            }
            _ => return type_err(op, a, b, line),
        },
        "%" => match (a, b) {
            (Int(x), Int(y)) => {
                if *y == 0 {
                    return eval_err("integer modulo by zero", line);
                }
                let r = x.checked_rem(*y).ok_or_else(ov)?;
                Int(if r != 0 && ((r < 0) != (*y < 0)) {
                    r + y
                } else {
                    r
                })
            }
            (Int(_) | Float(_), Int(_) | Float(_)) => {
                let (x, y) = (as_f64(a), as_f64(b));
                if y == 0.0 {
                    return eval_err("float modulo by zero", line);
                }
                let r = x % y;
                Float(if r != 0.0 && ((r < 0.0) != (y < 0.0)) {
                    r + y
                } else {
                    r
                })
            }
            _ => return type_err(op, a, b, line),
        },
        "**" => match (a, b) {
            (Int(x), Int(y)) if *y >= 0 => {
                let e = u32::try_from(*y).map_err(|_| ov())?;
                Int(x.checked_pow(e).ok_or_else(ov)?)
            }
            (Int(_), Int(_)) => return unsupported("a negative integer exponent", line),
            (Int(_) | Float(_), Int(_) | Float(_)) => Float(as_f64(a).powf(as_f64(b))),
            _ => return type_err(op, a, b, line),
        },
        "<<" | ">>" | "&" | "^" if matches!((a, b), (Int(_), Int(_))) => {
            let (Int(x), Int(y)) = (a, b) else {
                return type_err(op, a, b, line);
            };
            match op {
                "<<" => {
                    let s = u32::try_from(*y).ok().filter(|s| *s < 64).ok_or_else(ov)?;
                    let r = x.checked_shl(s).ok_or_else(ov)?;
                    if (r >> s) != *x {
                        return Err(ov());
                    }
                    Int(r)
                }
                ">>" => Int(x >> (*y).clamp(0, 63)),
                "&" => Int(x & y),
                _ => Int(x ^ y),
            }
        }
        "|" => match (a, b) {
            (Int(x), Int(y)) => Int(x | y),
            (Dict(_), Dict(_)) => unify(a, b, "", line)?,
            (None | Undefined, _) => b.clone(),
            (_, None | Undefined) => a.clone(),
            // Element by element: dicts unify, other elements are replaced.
            (List(x), List(y)) => {
                let mut out = Vec::with_capacity(x.len().max(y.len()));
                for i in 0..x.len().max(y.len()) {
                    out.push(match (x.get(i), y.get(i)) {
                        (Some(p @ Dict(_)), Some(q @ Dict(_))) => {
                            unify(p, q, &format!("list[{i}]"), line)?
                        }
                        (_, Some(q)) => q.clone(),
                        (Some(p), Option::None) => p.clone(),
                        (Option::None, Option::None) => Value::None,
                    });
                }
                Value::list(out)
            }
            _ => return type_err(op, a, b, line),
        },
        _ => return type_err(op, a, b, line),
    })
}

/// Python's floor division of ints.
fn floor_div(x: i64, y: i64) -> Value {
    let q = x.wrapping_div(y);
    let r = x.wrapping_rem(y);
    Value::Int(if r != 0 && ((r < 0) != (y < 0)) {
        q - 1
    } else {
        q
    })
}

/// KCL's JSON text of a value (`json.encode`, `${x: #json}`): `", "` and
/// `": "` separators, or an indented form.
pub fn json_encode(v: &Value, indent: Option<usize>, line: u32) -> Result<String, Error> {
    let mut out = String::new();
    write_json(v, indent, 0, &mut out, line)?;
    Ok(out)
}

fn write_json(
    v: &Value,
    indent: Option<usize>,
    level: usize,
    out: &mut String,
    line: u32,
) -> Result<(), Error> {
    let nl = |out: &mut String, level: usize| {
        if let Some(n) = indent {
            out.push('\n');
            out.push_str(&" ".repeat(n * level));
        }
    };
    match v {
        Value::None | Value::Undefined => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Float(f) | Value::Unit(f, _) => {
            if !f.is_finite() {
                return unsupported("a non-finite float in JSON", line);
            }
            out.push_str(&float_str(*f))
        }
        Value::Str(s) => out.push_str(&serde_json::Value::String(s.to_string()).to_string()),
        Value::List(l) => {
            out.push('[');
            for (i, x) in l.iter().filter(|x| x.is_data()).enumerate() {
                if i > 0 {
                    out.push_str(if indent.is_some() { "," } else { ", " });
                }
                nl(out, level + 1);
                write_json(x, indent, level + 1, out, line)?;
            }
            if !l.is_empty() {
                nl(out, level);
            }
            out.push(']');
        }
        Value::Dict(d) => {
            out.push('{');
            let mut first = true;
            for (k, x) in d
                .map
                .iter()
                .filter(|(_, x)| x.is_data() && !matches!(x, Value::Undefined))
            {
                if !first {
                    out.push_str(if indent.is_some() { "," } else { ", " });
                }
                first = false;
                nl(out, level + 1);
                out.push_str(&serde_json::Value::String(k.clone()).to_string());
                out.push_str(": ");
                write_json(x, indent, level + 1, out, line)?;
            }
            if !first {
                nl(out, level);
            }
            out.push('}');
        }
        other => {
            return eval_err(
                format!("{} is not JSON serializable", other.type_name()),
                line,
            );
        }
    }
    Ok(())
}

/// `b[lo:hi:step]` of a list or string, Python's way.
pub fn slice(b: &Value, p: [Option<i64>; 3], line: u32) -> Result<Value, Error> {
    let step = p[2].unwrap_or(1);
    if step == 0 {
        return eval_err("slice step cannot be zero", line);
    }
    let pick = |len: usize| -> Vec<usize> {
        let len = len as i64;
        let norm = |i: i64, lo: i64, hi: i64| {
            let i = if i < 0 { i + len } else { i };
            i.clamp(lo, hi)
        };
        let mut out = Vec::new();
        if step > 0 {
            let start = p[0].map(|i| norm(i, 0, len)).unwrap_or(0);
            let stop = p[1].map(|i| norm(i, 0, len)).unwrap_or(len);
            let mut i = start;
            while i < stop {
                out.push(i as usize);
                i += step;
            }
        } else {
            let start = p[0].map(|i| norm(i, -1, len - 1)).unwrap_or(len - 1);
            let stop = p[1].map(|i| norm(i, -1, len - 1)).unwrap_or(-1);
            let mut i = start;
            while i > stop {
                out.push(i as usize);
                i += step;
            }
        }
        out
    };
    Ok(match b {
        Value::List(l) => Value::list(pick(l.len()).into_iter().map(|i| l[i].clone()).collect()),
        Value::Str(s) => {
            let cs: Vec<char> = s.chars().collect();
            Value::str(
                pick(cs.len())
                    .into_iter()
                    .map(|i| cs[i])
                    .collect::<String>(),
            )
        }
        other => {
            return eval_err(
                format!("'{}' object is not sliceable", other.type_name()),
                line,
            );
        }
    })
}
