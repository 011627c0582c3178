//! KCL's YAML text of a value (`yaml.encode`, `${x: #yaml}`): block
//! style, sequences not indented under their key, strings single-quoted
//! where a plain scalar would read as something else, multi-line strings
//! as literal blocks.

use crate::error::{Error, eval_err};
use crate::value::{Value, float_str};

/// Writes one YAML document (ending with a newline).
pub fn encode(v: &Value, line: u32) -> Result<String, Error> {
    let mut out = String::new();
    match v {
        Value::Dict(d) if !d.map.is_empty() => write_map(v, 0, &mut out, line)?,
        Value::List(l) if !l.is_empty() => write_seq(v, 0, &mut out, line)?,
        other => {
            write_scalar(other, 0, &mut out, line)?;
            out.push('\n');
        }
    }
    Ok(out)
}

fn entries(v: &Value) -> Vec<(&String, &Value)> {
    match v {
        Value::Dict(d) => d
            .map
            .iter()
            .filter(|(_, x)| x.is_data() && !matches!(x, Value::Undefined))
            .collect(),
        _ => vec![],
    }
}

fn items(v: &Value) -> Vec<&Value> {
    match v {
        Value::List(l) => l.iter().filter(|x| x.is_data()).collect(),
        _ => vec![],
    }
}

fn is_block(v: &Value) -> bool {
    match v {
        Value::Dict(_) => !entries(v).is_empty(),
        Value::List(_) => !items(v).is_empty(),
        _ => false,
    }
}

fn pad(out: &mut String, n: usize) {
    for _ in 0..n {
        out.push(' ');
    }
}

fn write_map(v: &Value, indent: usize, out: &mut String, line: u32) -> Result<(), Error> {
    for (i, (k, x)) in entries(v).into_iter().enumerate() {
        if i > 0 {
            pad(out, indent);
        }
        out.push_str(&quote(k));
        out.push(':');
        match x {
            Value::Dict(_) if is_block(x) => {
                out.push('\n');
                pad(out, indent + 2);
                write_map(x, indent + 2, out, line)?;
            }
            Value::List(_) if is_block(x) => {
                out.push('\n');
                pad(out, indent);
                write_seq(x, indent, out, line)?;
            }
            _ => {
                out.push(' ');
                write_scalar(x, indent + 2, out, line)?;
                out.push('\n');
            }
        }
    }
    Ok(())
}

fn write_seq(v: &Value, indent: usize, out: &mut String, line: u32) -> Result<(), Error> {
    for (i, x) in items(v).into_iter().enumerate() {
        if i > 0 {
            pad(out, indent);
        }
        out.push_str("- ");
        match x {
            Value::Dict(_) if is_block(x) => write_map(x, indent + 2, out, line)?,
            Value::List(_) if is_block(x) => write_seq(x, indent + 2, out, line)?,
            _ => {
                write_scalar(x, indent + 2, out, line)?;
                out.push('\n');
            }
        }
    }
    Ok(())
}

fn write_scalar(v: &Value, indent: usize, out: &mut String, line: u32) -> Result<(), Error> {
    match v {
        Value::None | Value::Undefined => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Float(f) | Value::Unit(f, _) => {
            if f.is_nan() {
                out.push_str(".nan");
            } else if f.is_infinite() {
                out.push_str(if *f > 0.0 { ".inf" } else { "-.inf" });
            } else {
                out.push_str(&float_str(*f));
            }
        }
        Value::Str(s) => {
            if s.contains('\n') && !s.chars().any(|c| c.is_control() && c != '\n') {
                // A literal block; the chomping indicator keeps the final newlines.
                let trailing = s.len() - s.trim_end_matches('\n').len();
                out.push_str(match trailing {
                    0 => "|-",
                    1 => "|",
                    _ => "|+",
                });
                let body = if trailing == 1 {
                    &s[..s.len() - 1]
                } else {
                    &s[..]
                };
                let body = body
                    .strip_suffix('\n')
                    .map(|b| if trailing > 1 { body } else { b })
                    .unwrap_or(body);
                for l in body.split('\n') {
                    out.push('\n');
                    if !l.is_empty() {
                        pad(out, indent);
                        out.push_str(l);
                    }
                }
            } else {
                out.push_str(&quote(s));
            }
        }
        Value::Dict(_) => out.push_str("{}"),
        Value::List(_) => out.push_str("[]"),
        other => {
            return eval_err(
                format!("{} is not YAML serializable", other.type_name()),
                line,
            );
        }
    }
    Ok(())
}

const SPECIAL_WORDS: &[&str] = &[
    "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false",
    "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", "null", "Null", "NULL", "~",
];

/// A string as a plain or quoted scalar.
fn quote(s: &str) -> String {
    let first = s.chars().next();
    let needs = s.is_empty()
        || SPECIAL_WORDS.contains(&s)
        || s.starts_with(' ')
        || s.ends_with(' ')
        || first.is_some_and(|c| {
            "-?:,[]{}#&*!|>'\"%@`".contains(c) || c.is_ascii_digit() || c == '.' || c == '+'
        })
        || s.contains(": ")
        || s.contains(" #")
        || s.ends_with(':');
    if s.chars().any(|c| c.is_control()) {
        return serde_json::Value::String(s.to_string()).to_string();
    }
    if needs {
        format!("'{}'", s.replace('\'', "''"))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Map;

    #[test]
    fn quoting_and_layout() {
        let v = Value::dict(Map::from_iter([
            (
                "c".to_string(),
                Value::list(vec![
                    Value::str("-c"),
                    Value::str("1x"),
                    Value::str("x#"),
                    Value::str("a\nb"),
                ]),
            ),
            (
                "d".to_string(),
                Value::dict(Map::from_iter([("e".to_string(), Value::Float(1.0))])),
            ),
        ]));
        assert_eq!(
            encode(&v, 1).unwrap(),
            "c:\n- '-c'\n- '1x'\n- x#\n- |-\n  a\n  b\nd:\n  e: 1.0\n"
        );
    }
}
