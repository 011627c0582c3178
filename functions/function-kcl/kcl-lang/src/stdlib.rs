//! KCL's standard modules the corpus imports: `regex`, `base64`, `json`,
//! `yaml`, `crypto`, `math`.

use base64::Engine as _;
use sha1::Digest as _;

use crate::builtins::{Args, json_encode};
use crate::error::{Error, eval_err, unsupported};
use crate::eval::Interp;
use crate::value::{Map, Value, float_str};

/// KCL's system modules, those of [`MODULES`] and those this interpreter does
/// not provide (importing one of these is an unsupported feature, never a
/// lookup in the program's packages).
pub const SYSTEM_MODULES: &[&str] = &[
    "base64",
    "collection",
    "crypto",
    "datetime",
    "file",
    "json",
    "manifests",
    "math",
    "net",
    "regex",
    "runtime",
    "template",
    "units",
    "uuid",
    "yaml",
];

/// The modules this interpreter provides.
pub const MODULES: &[&str] = &["regex", "base64", "json", "yaml", "crypto", "math", "units"];

const FUNCTIONS: &[&str] = &[
    "regex.match",
    "regex.replace",
    "regex.compile",
    "regex.findall",
    "regex.search",
    "regex.split",
    "base64.encode",
    "base64.decode",
    "json.encode",
    "json.decode",
    "json.validate",
    "yaml.encode",
    "yaml.decode",
    "yaml.decode_all",
    "yaml.encode_all",
    "yaml.validate",
    "crypto.sha1",
    "crypto.sha224",
    "crypto.sha256",
    "crypto.sha384",
    "crypto.sha512",
    "math.ceil",
    "math.floor",
    "math.exp",
    "math.expm1",
    "math.factorial",
    "math.gcd",
    "math.isfinite",
    "math.isinf",
    "math.isnan",
    "math.log",
    "math.log1p",
    "math.log2",
    "math.log10",
    "math.pow",
    "math.sqrt",
    "math.modf",
    "units.to_n",
    "units.to_u",
    "units.to_m",
    "units.to_K",
    "units.to_M",
    "units.to_G",
    "units.to_T",
    "units.to_P",
    "units.to_Ki",
    "units.to_Mi",
    "units.to_Gi",
    "units.to_Ti",
    "units.to_Pi",
];

/// The longest regular expression accepted, in bytes.
const MAX_PATTERN: usize = 64 << 10;

/// Whether `name` (`module.function`) is a function of a provided module.
pub fn is_module_function(name: &str) -> bool {
    FUNCTIONS.contains(&name)
}

/// A constant of a module.
pub fn constant(module: &str, name: &str) -> Option<Value> {
    match (module, name) {
        ("math", "pi") => Some(Value::Float(std::f64::consts::PI)),
        ("math", "e") => Some(Value::Float(std::f64::consts::E)),
        ("math", "inf") => Some(Value::Float(f64::INFINITY)),
        ("math", "nan") => Some(Value::Float(f64::NAN)),
        _ => None,
    }
}

fn compile(pattern: &str, line: u32) -> Result<regex::Regex, Error> {
    if pattern.len() > MAX_PATTERN {
        return Err(Error::Limit {
            line,
            msg: format!("a regular expression is longer than {MAX_PATTERN} bytes"),
        });
    }
    regex::RegexBuilder::new(pattern)
        .size_limit(8 << 20)
        .build()
        .or_else(|e| {
            if pattern.contains("(?=")
                || pattern.contains("(?!")
                || pattern.contains("(?<=")
                || pattern.contains("(?<!")
                || pattern.contains("\\1")
            {
                unsupported(
                    "regular expressions with lookaround or backreferences",
                    line,
                )
            } else {
                eval_err(format!("invalid regular expression {pattern:?}: {e}"), line)
            }
        })
}

/// Calls `module.function`.
pub fn call(it: &mut Interp, name: &str, a: Args, line: u32) -> Result<Value, Error> {
    Ok(match name {
        "regex.match" => {
            let s = a.str(0, "string")?;
            // KCL's regex.match finds the pattern anywhere, as search does.
            let re = compile(&a.str(1, "pattern")?, line)?;
            Value::Bool(re.is_match(&s))
        }
        "regex.search" => {
            let s = a.str(0, "string")?;
            Value::Bool(compile(&a.str(1, "pattern")?, line)?.is_match(&s))
        }
        "regex.compile" => Value::Bool(compile(&a.str(0, "pattern")?, line).is_ok()),
        "regex.findall" => {
            let s = a.str(0, "string")?;
            let re = compile(&a.str(1, "pattern")?, line)?;
            if re.captures_len() > 1 {
                return unsupported("regex.findall with groups", line);
            }
            Value::list(re.find_iter(&s).map(|m| Value::str(m.as_str())).collect())
        }
        "regex.replace" => {
            let s = a.str(0, "string")?;
            let re = compile(&a.str(1, "pattern")?, line)?;
            let rep = a.str(2, "replace")?;
            let count = a.opt_int(3, "count")?.unwrap_or(0).max(0) as usize;
            if rep.contains('\\') || rep.contains('$') {
                return unsupported("group references in regex.replace", line);
            }
            let out = re.replacen(&s, count, regex::NoExpand(&rep)).into_owned();
            it.check_str(&out, line)?;
            Value::str(out)
        }
        "regex.split" => {
            let s = a.str(0, "string")?;
            let re = compile(&a.str(1, "pattern")?, line)?;
            let max = a.opt_int(2, "maxsplit")?.unwrap_or(0);
            let parts: Vec<Value> = if max > 0 {
                re.splitn(&s, max as usize + 1).map(Value::str).collect()
            } else {
                re.split(&s).map(Value::str).collect()
            };
            Value::list(parts)
        }
        "base64.encode" => {
            let s = a.str(0, "value")?;
            Value::str(base64::engine::general_purpose::STANDARD.encode(s.as_bytes()))
        }
        "base64.decode" => {
            let s = a.str(0, "value")?;
            let bytes = match base64::engine::general_purpose::STANDARD.decode(s.as_bytes()) {
                Ok(b) => b,
                Err(e) => return eval_err(format!("base64.decode: {e}"), line),
            };
            match String::from_utf8(bytes) {
                Ok(t) => Value::str(t),
                Err(_) => return eval_err("base64.decode: the decoded bytes are not UTF-8", line),
            }
        }
        "json.encode" => {
            if a.flag(1, "sort_keys") || a.flag(3, "ignore_private") || a.flag(4, "ignore_none") {
                return unsupported(
                    "json.encode options sort_keys/ignore_private/ignore_none",
                    line,
                );
            }
            let indent = a.opt_int(2, "indent")?.map(|n| n.clamp(0, 64) as usize);
            let data = a.req(0, "data")?;
            it.check_text(&data, line)?;
            let out = json_encode(&data, indent, line)?;
            it.check_str(&out, line)?;
            Value::str(out)
        }
        "json.decode" => {
            let s = a.str(0, "value")?;
            it.check_str(&s, line)?;
            match serde_json::from_str::<serde_json::Value>(&s) {
                Ok(j) => json_to_value_ordered(&s, &j, line)?,
                Err(e) => return eval_err(format!("json.decode: {e}"), line),
            }
        }
        "json.validate" => {
            Value::Bool(serde_json::from_str::<serde_json::Value>(&a.str(0, "value")?).is_ok())
        }
        "yaml.decode" => {
            let s = a.str(0, "value")?;
            it.check_str(&s, line)?;
            match serde_yaml_ng::from_str::<serde_yaml_ng::Value>(&s) {
                Ok(y) => yaml_to_value(&y, line, 0)?,
                Err(e) => return eval_err(format!("yaml.decode: {e}"), line),
            }
        }
        "yaml.decode_all" => {
            let s = a.str(0, "value")?;
            it.check_str(&s, line)?;
            let mut out = Vec::new();
            for doc in serde_yaml_ng::Deserializer::from_str(&s) {
                let y = match <serde_yaml_ng::Value as serde::Deserialize>::deserialize(doc) {
                    Ok(y) => y,
                    Err(e) => return eval_err(format!("yaml.decode_all: {e}"), line),
                };
                out.push(yaml_to_value(&y, line, 0)?);
                it.check_len(out.len(), line)?;
            }
            Value::list(out)
        }
        "yaml.validate" => Value::Bool(
            serde_yaml_ng::from_str::<serde_yaml_ng::Value>(&a.str(0, "value")?).is_ok(),
        ),
        "yaml.encode" | "yaml.encode_all" => {
            if a.flag(1, "sort_keys") || a.flag(2, "ignore_private") || a.flag(3, "ignore_none") {
                return unsupported(
                    "yaml.encode options sort_keys/ignore_private/ignore_none",
                    line,
                );
            }
            let data = a.req(0, "data")?;
            it.check_text(&data, line)?;
            let docs: Vec<Value> = if name == "yaml.encode_all" {
                match data {
                    Value::List(l) => l.to_vec(),
                    other => {
                        return eval_err(
                            format!("yaml.encode_all expects a list, got {}", other.type_name()),
                            line,
                        );
                    }
                }
            } else {
                vec![data]
            };
            let mut out = String::new();
            for (i, d) in docs.iter().enumerate() {
                if i > 0 {
                    out.push_str("\n---\n");
                }
                out.push_str(&crate::yaml::encode(d, line)?);
            }
            it.check_str(&out, line)?;
            Value::str(out)
        }
        "crypto.sha1" | "crypto.sha224" | "crypto.sha256" | "crypto.sha384" | "crypto.sha512" => {
            if a.opt(1, "encoding").is_some() {
                return unsupported("crypto hashes with an encoding", line);
            }
            let s = a.str(0, "value")?;
            let digest: Vec<u8> = match name {
                "crypto.sha1" => sha1::Sha1::digest(s.as_bytes()).to_vec(),
                "crypto.sha224" => sha2::Sha224::digest(s.as_bytes()).to_vec(),
                "crypto.sha256" => sha2::Sha256::digest(s.as_bytes()).to_vec(),
                "crypto.sha384" => sha2::Sha384::digest(s.as_bytes()).to_vec(),
                _ => sha2::Sha512::digest(s.as_bytes()).to_vec(),
            };
            Value::str(
                digest
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>(),
            )
        }
        _ if name.starts_with("math.") => math(name, &a, line)?,
        _ if name.starts_with("units.to_") => {
            // The number in the unit, truncated, and the unit's suffix.
            let suffix = &name["units.to_".len()..];
            let factor = crate::lexer::MULTIPLIERS
                .iter()
                .find(|(s, _)| *s == suffix)
                .map(|(_, f)| *f)
                .unwrap_or(1.0);
            let n = match a.req(0, "num")? {
                Value::Int(i) => i as f64,
                Value::Float(f) => f,
                other => {
                    return eval_err(
                        format!("{name}() expects a number, got {}", other.type_name()),
                        line,
                    );
                }
            };
            let q = (n / factor).trunc();
            if !q.is_finite() || q.abs() >= 9.2e18 {
                return eval_err(
                    format!("{name}(): the result does not fit in 64 bits"),
                    line,
                );
            }
            Value::str(format!("{}{suffix}", q as i64))
        }
        other => return unsupported(other, line),
    })
}

fn num(v: Value, line: u32) -> Result<f64, Error> {
    match v {
        Value::Int(i) => Ok(i as f64),
        Value::Float(f) => Ok(f),
        Value::Bool(b) => Ok(b as i64 as f64),
        other => eval_err(
            format!("expected a number, got {}", other.type_name()),
            line,
        ),
    }
}

fn math(name: &str, a: &Args, line: u32) -> Result<Value, Error> {
    let x = a.req(0, "x")?;
    Ok(match name {
        "math.ceil" | "math.floor" => match x {
            Value::Int(i) => Value::Int(i),
            other => {
                let f = num(other, line)?;
                let r = if name == "math.ceil" {
                    f.ceil()
                } else {
                    f.floor()
                };
                if !r.is_finite() || r.abs() >= 9.2e18 {
                    return eval_err(format!("cannot convert {} to int", float_str(r)), line);
                }
                Value::Int(r as i64)
            }
        },
        "math.factorial" => {
            let Value::Int(n) = x else {
                return eval_err("math.factorial expects an int", line);
            };
            if n < 0 {
                return eval_err("factorial() not defined for negative values", line);
            }
            let mut acc: i64 = 1;
            for k in 2..=n {
                acc = acc.checked_mul(k).ok_or_else(|| Error::Eval {
                    line,
                    msg: "integer overflow in math.factorial".into(),
                })?;
            }
            Value::Int(acc)
        }
        "math.gcd" => {
            let (Value::Int(mut p), Some(Value::Int(mut q))) = (x, a.opt(1, "b")) else {
                return eval_err("math.gcd expects two ints", line);
            };
            p = p.checked_abs().unwrap_or(i64::MAX);
            q = q.checked_abs().unwrap_or(i64::MAX);
            while q != 0 {
                let t = p % q;
                p = q;
                q = t;
            }
            Value::Int(p)
        }
        "math.isfinite" => Value::Bool(num(x, line)?.is_finite()),
        "math.isinf" => Value::Bool(num(x, line)?.is_infinite()),
        "math.isnan" => Value::Bool(num(x, line)?.is_nan()),
        "math.pow" => {
            let y = a.req(1, "y")?;
            if let (Value::Int(b), Value::Int(e)) = (&x, &y)
                && *e >= 0
            {
                let e = u32::try_from(*e).ok();
                return match e.and_then(|e| b.checked_pow(e)) {
                    Some(r) => Ok(Value::Int(r)),
                    None => eval_err("integer overflow in math.pow", line),
                };
            }
            let y = num(y, line)?;
            Value::Float(num(x, line)?.powf(y))
        }
        "math.log" => {
            let f = num(x, line)?;
            match a.opt(1, "base") {
                Some(b) => Value::Float(f.ln() / num(b, line)?.ln()),
                None => Value::Float(f.ln()),
            }
        }
        "math.modf" => return unsupported("math.modf", line),
        _ => {
            let f = num(x, line)?;
            Value::Float(match name {
                "math.exp" => f.exp(),
                "math.expm1" => f.exp_m1(),
                "math.log1p" => f.ln_1p(),
                "math.log2" => f.log2(),
                "math.log10" => f.log10(),
                "math.sqrt" => f.sqrt(),
                other => return unsupported(other, line),
            })
        }
    })
}

/// Converts decoded JSON, keeping the key order of the source text
/// (`serde_json` maps here are sorted, so the order is read again).
pub(crate) fn json_to_value_ordered(
    src: &str,
    _j: &serde_json::Value,
    line: u32,
) -> Result<Value, Error> {
    // Reading JSON as YAML keeps the order: JSON is YAML.
    match serde_yaml_ng::from_str::<serde_yaml_ng::Value>(src) {
        Ok(y) => yaml_to_value(&y, line, 0),
        Err(e) => eval_err(format!("json.decode: {e}"), line),
    }
}

fn yaml_to_value(y: &serde_yaml_ng::Value, line: u32, depth: u32) -> Result<Value, Error> {
    use serde_yaml_ng::Value as Y;
    if depth > 500 {
        return Err(Error::Limit {
            line,
            msg: "decoded data nests deeper than 500 levels".into(),
        });
    }
    Ok(match y {
        Y::Null => Value::None,
        Y::Bool(b) => Value::Bool(*b),
        Y::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Y::String(s) => Value::str(s.as_str()),
        Y::Sequence(s) => {
            let mut out = Vec::with_capacity(s.len());
            for x in s {
                out.push(yaml_to_value(x, line, depth + 1)?);
            }
            Value::list(out)
        }
        Y::Mapping(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                let key = match k {
                    Y::String(s) => s.clone(),
                    Y::Number(n) => n.to_string(),
                    Y::Bool(b) => b.to_string(),
                    _ => return unsupported("a YAML mapping key that is not a scalar", line),
                };
                out.insert(key, yaml_to_value(v, line, depth + 1)?);
            }
            Value::dict(out)
        }
        Y::Tagged(t) => yaml_to_value(&t.value, line, depth + 1)?,
    })
}
