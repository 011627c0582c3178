//! The values a template works on, typed as Go types them: what the
//! request's JSON decodes to (`map[string]interface {}`, `[]interface {}`,
//! `int64`, `float64`, `string`, `bool`, nil) plus what functions return
//! (`int`, `[]string`, `map[string]string`, structs).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use xfn_gocompat::value::GoValue;

/// The Go integer type of an [`Value::Int`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntKind {
    /// `int` (64 bits, as on the platforms Crossplane runs on)
    Int,
    /// `int64`
    Int64,
}

/// The element type of a slice or map value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    /// `interface {}`
    Any,
    /// `string`
    Str,
    /// `int`
    Int,
    /// `uint8` (a `[]byte`'s elements)
    Byte,
    /// `[]uint8` (a map of byte slices' elements)
    Bytes,
    /// `[]interface {}` (sprig's `chunk`)
    List,
}

/// A struct value (e.g. the `Condition` `getResourceCondition` returns):
/// its Go type name and its fields in declaration order.
#[derive(Debug, Clone, PartialEq)]
pub struct Struct {
    /// The type as `%T` prints it, e.g. `v1.Condition`.
    pub type_name: &'static str,
    /// The exported fields.
    pub fields: Vec<(&'static str, Value)>,
    /// How yaml.v3 marshals it, when the port knows: keys in field order
    /// (lower-cased field names) and values.
    pub yaml: Option<Vec<(&'static str, Value)>>,
}

/// A Go value as `reflect.Value` carries it through a template.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// The zero `reflect.Value`: a missing map key, `<no value>`.
    Invalid,
    /// A nil `interface {}` held in a container or returned by a function.
    Nil,
    /// `bool`
    Bool(bool),
    /// `int` or `int64`
    Int(i64, IntKind),
    /// `float64`
    Float(f64),
    /// `string`
    Str(Rc<str>),
    /// A slice with its element type.
    List(Rc<Vec<Value>>, Elem),
    /// A map with string keys, with its element type. Go's maps are
    /// references: `set` changes the map every holder sees.
    Map(Rc<RefCell<BTreeMap<String, Value>>>, Elem),
    /// A struct.
    Struct(Rc<Struct>),
    /// A `time.Time` (UTC).
    Time(crate::gotime::Time),
}

impl Value {
    /// A `string`.
    pub fn str(s: impl Into<Rc<str>>) -> Value {
        Value::Str(s.into())
    }

    /// An `int`.
    pub fn int(i: i64) -> Value {
        Value::Int(i, IntKind::Int)
    }

    /// An `int64`.
    pub fn int64(i: i64) -> Value {
        Value::Int(i, IntKind::Int64)
    }

    /// A `[]interface {}`.
    pub fn list(v: Vec<Value>) -> Value {
        Value::List(Rc::new(v), Elem::Any)
    }

    /// A `map[string]interface {}`.
    pub fn map(m: BTreeMap<String, Value>) -> Value {
        Value::Map(Rc::new(RefCell::new(m)), Elem::Any)
    }

    /// A `[]byte`.
    pub fn bytes(b: &[u8]) -> Value {
        Value::List(
            Rc::new(b.iter().map(|&x| Value::int(i64::from(x))).collect()),
            Elem::Byte,
        )
    }

    /// A `map[string]string`.
    pub fn str_map(m: BTreeMap<String, Value>) -> Value {
        Value::Map(Rc::new(RefCell::new(m)), Elem::Str)
    }

    /// The Go type name (`%T`); a nil interface is `interface {}`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Invalid => "<invalid>",
            Value::Nil => "interface {}",
            Value::Bool(_) => "bool",
            Value::Int(_, IntKind::Int) => "int",
            Value::Int(_, IntKind::Int64) => "int64",
            Value::Float(_) => "float64",
            Value::Str(_) => "string",
            Value::List(_, Elem::Any) => "[]interface {}",
            Value::List(_, Elem::Str) => "[]string",
            Value::List(_, Elem::Int) => "[]int",
            Value::List(_, Elem::Byte) => "[]uint8",
            Value::List(_, Elem::Bytes) => "[][]uint8",
            Value::List(_, Elem::List) => "[][]interface {}",
            Value::Map(_, Elem::Any) => "map[string]interface {}",
            Value::Map(_, Elem::Str) => "map[string]string",
            Value::Map(_, Elem::Int) => "map[string]int",
            Value::Map(_, Elem::Byte) => "map[string]uint8",
            Value::Map(_, Elem::Bytes) => "map[string][]uint8",
            Value::Map(_, Elem::List) => "map[string][]interface {}",
            Value::Struct(s) => s.type_name,
            Value::Time(_) => "time.Time",
        }
    }

    /// Go's `reflect.Kind` name, as sprig's `kindOf` prints it.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Invalid | Value::Nil => "invalid",
            Value::Bool(_) => "bool",
            Value::Int(_, IntKind::Int) => "int",
            Value::Int(_, IntKind::Int64) => "int64",
            Value::Float(_) => "float64",
            Value::Str(_) => "string",
            Value::List(..) => "slice",
            Value::Map(..) => "map",
            Value::Struct(_) | Value::Time(_) => "struct",
        }
    }

    /// Go's `indirectInterface`: a nil interface becomes no value.
    pub fn indirect(self) -> Value {
        match self {
            Value::Nil => Value::Invalid,
            v => v,
        }
    }

    /// Whether this is a valid, non-nil value.
    pub fn is_valid(&self) -> bool {
        !matches!(self, Value::Invalid | Value::Nil)
    }

    /// Converts JSON as upstream's template data is decoded (Kubernetes'
    /// JSON decoder): integral numbers are `int64`, others `float64`.
    pub fn from_json(v: &serde_json::Value) -> Value {
        use serde_json::Value as J;
        match v {
            J::Null => Value::Nil,
            J::Bool(b) => Value::Bool(*b),
            J::Number(n) => match n.as_i64() {
                Some(i) => Value::int64(i),
                None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            J::String(s) => Value::str(s.as_str()),
            J::Array(a) => Value::list(a.iter().map(Value::from_json).collect()),
            J::Object(o) => Value::map(
                o.iter()
                    .map(|(k, v)| (k.clone(), Value::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// Converts to JSON (as `encoding/json` marshals the value); NaN and
    /// infinities cannot be encoded.
    pub fn to_json(&self) -> Result<serde_json::Value, String> {
        self.to_json_depth(0)
    }

    fn to_json_depth(&self, depth: usize) -> Result<serde_json::Value, String> {
        use serde_json::Value as J;
        if depth > MAX_DEPTH {
            return Err(format!("value nests deeper than {MAX_DEPTH} levels"));
        }
        let d = depth + 1;
        Ok(match self {
            Value::Invalid | Value::Nil => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i, _) => J::from(*i),
            Value::Float(f) => {
                serde_json::Number::from_f64(*f)
                    .map(J::Number)
                    .ok_or_else(|| {
                        format!(
                            "json: unsupported value: {}",
                            xfn_gocompat::gofmt::format_float(*f, b'g', -1)
                        )
                    })?
            }
            Value::Str(s) => J::String(s.to_string()),
            Value::List(l, _) => J::Array(
                l.iter()
                    .map(|v| v.to_json_depth(d))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Map(m, _) => J::Object(
                m.borrow()
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), v.to_json_depth(d)?)))
                    .collect::<Result<_, String>>()?,
            ),
            Value::Time(t) => J::String(crate::gotime::rfc3339_nano(*t)),
            // Go marshals structs by their json tags, which the port does
            // not model: refused, not guessed.
            Value::Struct(s) => {
                return Err(format!(
                    "JSON of a {} is not supported by xfn's port",
                    s.type_name
                ));
            }
        })
    }

    /// The value as Go's `fmt` sees it, for formatting.
    pub fn to_go(&self) -> GoValue {
        self.to_go_depth(0)
    }

    fn to_go_depth(&self, depth: usize) -> GoValue {
        if depth > MAX_DEPTH {
            return GoValue::String("...".into());
        }
        let d = depth + 1;
        match self {
            Value::Invalid | Value::Nil => GoValue::Nil,
            Value::Bool(b) => GoValue::Bool(*b),
            Value::Int(i, _) => GoValue::Int(*i),
            Value::Float(f) => GoValue::Float(*f),
            Value::Str(s) => GoValue::String(s.to_string()),
            Value::List(l, _) => GoValue::Slice(l.iter().map(|v| v.to_go_depth(d)).collect()),
            Value::Map(m, _) => GoValue::Map(
                m.borrow()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_go_depth(d)))
                    .collect(),
            ),
            Value::Time(t) => GoValue::String(crate::gotime::string(*t)),
            // `%v` of a struct: its fields' `%v` in braces.
            Value::Struct(s) => GoValue::String(format!(
                "{{{}}}",
                s.fields
                    .iter()
                    .map(|(_, v)| sprint_v(v))
                    .collect::<Vec<_>>()
                    .join(" ")
            )),
        }
    }

    /// Go's `isTrue` (template truth): false for no value, zero numbers,
    /// false and empty strings, slices and maps; structs are true.
    pub fn truth(&self) -> bool {
        match self {
            Value::Invalid | Value::Nil => false,
            Value::Bool(b) => *b,
            Value::Int(i, _) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::List(l, _) => !l.is_empty(),
            Value::Map(m, _) => !m.borrow().is_empty(),
            Value::Struct(_) | Value::Time(_) => true,
        }
    }
}

/// The deepest value printed or encoded (maps may hold themselves).
pub const MAX_DEPTH: usize = 500;

/// `fmt.Sprint(v)` of one value.
pub fn sprint_v(v: &Value) -> String {
    match v {
        Value::Str(s) => s.to_string(),
        Value::Time(t) => crate::gotime::string(*t),
        Value::Struct(_) => match v.to_go() {
            GoValue::String(s) => s,
            _ => String::new(),
        },
        other => xfn_gocompat::gofmt::sprint_v(&other.to_go()),
    }
}

/// `fmt.Sprint(args...)`: spaces between operands when neither is a string.
pub fn sprint(args: &[Value]) -> String {
    let mut out = String::new();
    for (i, a) in args.iter().enumerate() {
        if i > 0 && !matches!(a, Value::Str(_)) && !matches!(args[i - 1], Value::Str(_)) {
            out.push(' ');
        }
        out.push_str(&sprint_v(a));
    }
    out
}

/// `fmt.Sprintln(args...)`: always spaces, and a newline.
pub fn sprintln(args: &[Value]) -> String {
    let parts: Vec<String> = args.iter().map(sprint_v).collect();
    let mut s = parts.join(" ");
    s.push('\n');
    s
}

/// `fmt.Sprintf(format, args...)`.
pub fn sprintf(format: &str, args: &[Value]) -> String {
    let go: Vec<GoValue> = args.iter().map(Value::to_go).collect();
    xfn_gocompat::gofmt::sprintf(format, &go)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_like_go() {
        let m: BTreeMap<String, Value> = [
            ("b".to_string(), Value::int64(2)),
            ("a".to_string(), Value::Float(1e6)),
        ]
        .into_iter()
        .collect();
        assert_eq!(sprint_v(&Value::map(m)), "map[a:1e+06 b:2]");
        assert_eq!(
            sprint(&[Value::int(1), Value::int(2), Value::str("x"), Value::int(3)]),
            "1 2x3"
        );
        assert_eq!(
            sprint_v(&Value::list(vec![Value::Nil, Value::Bool(true)])),
            "[<nil> true]"
        );
    }
}
