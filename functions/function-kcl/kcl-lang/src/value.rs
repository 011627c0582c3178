//! KCL values, their text forms, and conversion to and from JSON.

use std::fmt::Write as _;
use std::rc::Rc;

use indexmap::IndexMap;

use crate::ast::{Lambda, SchemaDef};

/// An ordered map from keys to values: KCL dicts keep insertion order.
pub type Map = IndexMap<String, Value>;

/// A value of a KCL program.
#[derive(Debug, Clone)]
pub enum Value {
    /// `Undefined`: an attribute without value; left out of output.
    Undefined,
    /// `None`.
    None,
    /// A bool.
    Bool(bool),
    /// A 64-bit integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A number multiplier (`1Ki`): its value and its literal text.
    Unit(f64, Rc<str>),
    /// A string.
    Str(Rc<str>),
    /// A list.
    List(Rc<Vec<Value>>),
    /// A dict, or a schema instance.
    Dict(Rc<Dict>),
    /// A function: a lambda or a builtin.
    Func(Rc<Func>),
    /// A schema type.
    Schema(Rc<SchemaType>),
    /// An imported module: a standard module by its name (`regex`), or
    /// a module of the program's packages by its key (`@...`, see
    /// `modules::Registry`).
    Module(Rc<str>),
}

/// A dict's entries, and the schema when it is a schema instance.
#[derive(Debug, Clone, Default)]
pub struct Dict {
    /// The entries.
    pub map: Map,
    /// The schema it is an instance of.
    pub schema: Option<Rc<SchemaType>>,
    /// The operators its config literal gave keys other than `:`
    /// (`=` override, `+=` insert), which a later union (`|`, `:`) obeys.
    pub ops: std::collections::BTreeMap<String, crate::ast::EntryOp>,
}

/// A schema type: its definition and what it was defined in.
#[derive(Debug)]
pub struct SchemaType {
    /// The definition.
    pub def: Rc<SchemaDef>,
    /// The parent schema, resolved.
    pub parent: Option<Rc<SchemaType>>,
    /// The mixins, resolved.
    pub mixins: Vec<Rc<SchemaType>>,
    /// The module it was defined in (whose globals its body sees).
    pub module: usize,
}

impl SchemaType {
    /// The schema's name.
    pub fn name(&self) -> &str {
        &self.def.name
    }

    /// Whether this schema is `other` or inherits from it.
    pub fn is_a(&self, name: &str) -> bool {
        self.def.name == name || self.parent.as_ref().is_some_and(|p| p.is_a(name))
    }
}

/// A function value.
#[derive(Debug)]
pub enum Func {
    /// A lambda with the local variables it closes over and the module
    /// it was defined in (whose globals its body sees).
    Lambda(Rc<Lambda>, Rc<Map>, usize),
    /// A builtin, by its qualified name, bound to a receiver for methods.
    Builtin(String, Option<Value>),
}

impl Value {
    /// A string value.
    pub fn str(s: impl Into<Rc<str>>) -> Value {
        Value::Str(s.into())
    }

    /// A list value.
    pub fn list(v: Vec<Value>) -> Value {
        Value::List(Rc::new(v))
    }

    /// A dict value.
    pub fn dict(map: Map) -> Value {
        Value::Dict(Rc::new(Dict {
            map,
            schema: None,
            ops: Default::default(),
        }))
    }

    /// KCL's type name of the value.
    pub fn type_name(&self) -> String {
        match self {
            Value::Undefined => "UndefinedType".into(),
            Value::None => "None".into(),
            Value::Bool(_) => "bool".into(),
            Value::Int(_) => "int".into(),
            Value::Float(_) => "float".into(),
            Value::Unit(_, t) => format!("number_multiplier({t})"),
            Value::Str(_) => "str".into(),
            Value::List(_) => "list".into(),
            Value::Dict(d) => match &d.schema {
                Some(s) => s.name().to_string(),
                None => "dict".into(),
            },
            Value::Func(_) => "function".into(),
            Value::Schema(_) => "schema".into(),
            Value::Module(_) => "module".into(),
        }
    }

    /// KCL truthiness.
    pub fn truthy(&self) -> bool {
        match self {
            Value::Undefined | Value::None => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::Float(f) | Value::Unit(f, _) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::List(l) => !l.is_empty(),
            Value::Dict(d) => !d.map.is_empty(),
            Value::Func(_) | Value::Schema(_) | Value::Module(_) => true,
        }
    }

    /// Whether the value is None or Undefined.
    pub fn is_none_like(&self) -> bool {
        matches!(self, Value::None | Value::Undefined)
    }

    /// `str(v)`: strings as they are, everything else in KCL's display form.
    pub fn to_kcl_string(&self) -> String {
        let mut s = String::new();
        self.write_display(&mut s, false);
        s
    }

    /// Writes the display form; `quote` quotes strings (as inside a dict).
    pub fn write_display(&self, out: &mut String, quote: bool) {
        match self {
            Value::Undefined => out.push_str("Undefined"),
            Value::None => out.push_str("None"),
            Value::Bool(true) => out.push_str("True"),
            Value::Bool(false) => out.push_str("False"),
            Value::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Value::Float(f) => out.push_str(&float_str(*f)),
            Value::Unit(_, t) => out.push_str(t),
            Value::Str(s) => {
                if quote {
                    out.push('\'');
                    out.push_str(s);
                    out.push('\'');
                } else {
                    out.push_str(s);
                }
            }
            Value::List(l) => {
                out.push('[');
                for (i, v) in l.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    v.write_display(out, false);
                }
                out.push(']');
            }
            Value::Dict(d) => {
                out.push('{');
                for (i, (k, v)) in d.map.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push('\'');
                    out.push_str(k);
                    out.push_str("': ");
                    v.write_display(out, true);
                }
                out.push('}');
            }
            Value::Func(_) => out.push_str("<function>"),
            Value::Schema(s) => {
                let _ = write!(out, "<schema {}>", s.name());
            }
            Value::Module(m) => {
                let _ = write!(out, "<module {m}>");
            }
        }
    }

    /// About how many bytes the value's text takes (strings, keys, and a
    /// few bytes per scalar and element), counted without recursion;
    /// stops counting past `limit`. Shared parts count each time they
    /// appear, as they do in the text.
    pub fn text_size(&self, limit: usize) -> usize {
        let mut total = 0usize;
        let mut stack = vec![self];
        while let Some(v) = stack.pop() {
            total = total.saturating_add(match v {
                Value::Str(s) => s.len() + 2,
                Value::List(l) => {
                    stack.extend(l.iter());
                    2 + l.len()
                }
                Value::Dict(d) => {
                    stack.extend(d.map.values());
                    2 + d.map.keys().map(|k| k.len() + 4).sum::<usize>()
                }
                _ => 8,
            });
            if total > limit {
                break;
            }
        }
        total
    }

    /// How deeply lists and dicts nest in the value, counted without
    /// recursion; stops counting past `limit`.
    pub fn depth(&self, limit: usize) -> usize {
        let mut max = 0;
        let mut stack = vec![(self, 0usize)];
        while let Some((v, d)) = stack.pop() {
            max = max.max(d);
            if max > limit {
                break;
            }
            match v {
                Value::List(l) => stack.extend(l.iter().map(|x| (x, d + 1))),
                Value::Dict(m) => stack.extend(m.map.values().map(|x| (x, d + 1))),
                _ => {}
            }
        }
        max
    }

    /// Whether the value is a plain datum (not a function, schema type or module).
    pub fn is_data(&self) -> bool {
        !matches!(self, Value::Func(_) | Value::Schema(_) | Value::Module(_))
    }

    /// Converts to JSON as KCL outputs it: Undefined entries, functions and
    /// `_`-prefixed (private) keys left out, ints
    /// and floats kept apart, non-finite floats as null.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match self {
            Value::Undefined
            | Value::None
            | Value::Func(_)
            | Value::Schema(_)
            | Value::Module(_) => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::Float(f) | Value::Unit(f, _) => serde_json::Number::from_f64(*f)
                .map(J::Number)
                .unwrap_or(J::Null),
            Value::Str(s) => J::String(s.to_string()),
            Value::List(l) => J::Array(
                l.iter()
                    .filter(|v| v.is_data() && !matches!(v, Value::Undefined))
                    .map(|v| v.to_json())
                    .collect(),
            ),
            Value::Dict(d) => {
                let mut m = serde_json::Map::new();
                for (k, v) in &d.map {
                    if v.is_data() && !matches!(v, Value::Undefined) && !k.starts_with('_') {
                        m.insert(k.clone(), v.to_json());
                    }
                }
                J::Object(m)
            }
        }
    }

    /// Converts from JSON, keeping the order of `serde_json`'s maps.
    pub fn from_json(j: &serde_json::Value) -> Value {
        use serde_json::Value as J;
        match j {
            J::Null => Value::None,
            J::Bool(b) => Value::Bool(*b),
            J::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            J::String(s) => Value::str(s.as_str()),
            J::Array(a) => Value::list(a.iter().map(Value::from_json).collect()),
            J::Object(o) => Value::dict(
                o.iter()
                    .map(|(k, v)| (k.clone(), Value::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// Parses JSON text, keeping the order of its objects' keys.
    pub fn from_json_text(text: &str) -> Result<Value, crate::Error> {
        let j: serde_json::Value = serde_json::from_str(text).map_err(|e| crate::Error::Eval {
            line: 0,
            msg: format!("invalid JSON: {e}"),
        })?;
        crate::stdlib::json_to_value_ordered(text, &j, 0)
    }

    /// A canonical text of the value for comparing results: dict order
    /// kept, ints and floats told apart (`1` and `1.0`), floats by their
    /// shortest round-trip digits, Undefined entries, functions and
    /// private (`_`) keys left out.
    pub fn canonical(&self) -> String {
        let mut s = String::new();
        self.write_canonical(&mut s);
        s
    }

    fn write_canonical(&self, out: &mut String) {
        match self {
            Value::Undefined
            | Value::None
            | Value::Func(_)
            | Value::Schema(_)
            | Value::Module(_) => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Value::Float(f) | Value::Unit(f, _) => out.push_str(&canonical_float(*f)),
            Value::Str(s) => out.push_str(&serde_json::Value::String(s.to_string()).to_string()),
            Value::List(l) => {
                out.push('[');
                let mut first = true;
                for v in l
                    .iter()
                    .filter(|v| v.is_data() && !matches!(v, Value::Undefined))
                {
                    if !first {
                        out.push(',');
                    }
                    first = false;
                    v.write_canonical(out);
                }
                out.push(']');
            }
            Value::Dict(d) => {
                out.push('{');
                let mut first = true;
                for (k, v) in d.map.iter().filter(|(k, v)| {
                    v.is_data() && !matches!(v, Value::Undefined) && !k.starts_with('_')
                }) {
                    if !first {
                        out.push(',');
                    }
                    first = false;
                    out.push_str(&serde_json::Value::String(k.clone()).to_string());
                    out.push(':');
                    v.write_canonical(out);
                }
                out.push('}');
            }
        }
    }
}

/// The canonical text of a float: `f:` and its shortest round-trip digits
/// in Rust's notation (`f:1e16`, `f:0.5`), `null` when not finite.
pub fn canonical_float(f: f64) -> String {
    if !f.is_finite() {
        return "null".into();
    }
    format!("f:{f:e}")
}

/// KCL's text of a float (`str(1.0)`, interpolation): Rust's shortest
/// decimal form, with `.0` when it is integral.
pub fn float_str(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let s = format!("{f}");
    if s.contains('.') || s.contains('e') {
        s
    } else {
        format!("{s}.0")
    }
}

/// Structural equality as KCL's `==` defines it (1 == 1.0).
pub fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Undefined, Value::Undefined) | (Value::None, Value::None) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Float(x), Value::Float(y)) | (Value::Unit(x, _), Value::Unit(y, _)) => x == y,
        (Value::Int(x), Value::Float(y)) | (Value::Float(y), Value::Int(x)) => (*x as f64) == *y,
        (Value::Str(x), Value::Str(y)) => Rc::ptr_eq(x, y) || x == y,
        (Value::List(x), Value::List(y)) if Rc::ptr_eq(x, y) => true,
        (Value::Dict(x), Value::Dict(y)) if Rc::ptr_eq(x, y) => true,
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(a, b)| equal(a, b))
        }
        (Value::Dict(x), Value::Dict(y)) => {
            x.map.len() == y.map.len()
                && x.map
                    .iter()
                    .all(|(k, v)| y.map.get(k).is_some_and(|w| equal(v, w)))
        }
        (Value::Func(x), Value::Func(y)) => Rc::ptr_eq(x, y),
        (Value::Schema(x), Value::Schema(y)) => Rc::ptr_eq(x, y),
        (Value::Module(x), Value::Module(y)) => x == y,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_forms() {
        let d = Value::dict(Map::from_iter([
            ("k".to_string(), Value::str("v")),
            (
                "n".to_string(),
                Value::list(vec![Value::Int(1), Value::str("x")]),
            ),
            ("f".to_string(), Value::Float(1.0)),
        ]));
        assert_eq!(d.to_kcl_string(), "{'k': 'v', 'n': [1, x], 'f': 1.0}");
        assert_eq!(float_str(1e20), "100000000000000000000.0");
        assert_eq!(float_str(1e-7), "0.0000001");
        assert_eq!(canonical_float(1e16), "f:1e16");
    }
}
