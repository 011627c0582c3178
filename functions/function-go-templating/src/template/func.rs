//! Template functions: their Go signatures (which decide how arguments are
//! checked and converted, with Go's errors) and their implementations.

use std::collections::HashMap;

use super::value::{Elem, IntKind, Value};

/// A parameter's Go type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    /// `interface {}`
    Any,
    /// `reflect.Value` (builtins such as `eq`, `index`): the value as is.
    Value,
    /// `string`
    Str,
    /// `int`
    Int,
    /// `int64`
    Int64,
    /// `float64`
    Float64,
    /// `bool`
    Bool,
    /// `[]interface {}`
    ListAny,
    /// `[]string`
    ListStr,
    /// `map[string]interface {}`
    MapAny,
    /// `time.Time`
    Time,
}

impl Param {
    /// The Go type's name, as errors print it.
    pub fn type_name(self) -> &'static str {
        match self {
            Param::Any => "interface {}",
            Param::Value => "reflect.Value",
            Param::Str => "string",
            Param::Int => "int",
            Param::Int64 => "int64",
            Param::Float64 => "float64",
            Param::Bool => "bool",
            Param::ListAny => "[]interface {}",
            Param::ListStr => "[]string",
            Param::MapAny => "map[string]interface {}",
            Param::Time => "time.Time",
        }
    }

    /// Go's `canBeNil` for this type.
    pub fn can_be_nil(self) -> bool {
        matches!(
            self,
            Param::Any | Param::Value | Param::ListAny | Param::ListStr | Param::MapAny
        )
    }

    /// The zero value of this type, for a missing argument value.
    pub fn zero(self) -> Option<Value> {
        Some(match self {
            Param::Any => Value::Nil,
            Param::Value => Value::Invalid,
            Param::ListAny => Value::list(Vec::new()),
            Param::ListStr => Value::List(Default::default(), Elem::Str),
            Param::MapAny => Value::map(Default::default()),
            _ => return None,
        })
    }

    /// Whether a value of this dynamic type is assignable to the parameter.
    pub fn accepts(self, v: &Value) -> bool {
        match self {
            Param::Any | Param::Value => true,
            Param::Str => matches!(v, Value::Str(_)),
            Param::Int => matches!(v, Value::Int(_, IntKind::Int)),
            Param::Int64 => matches!(v, Value::Int(_, IntKind::Int64)),
            Param::Float64 => matches!(v, Value::Float(_)),
            Param::Bool => matches!(v, Value::Bool(_)),
            Param::ListAny => matches!(v, Value::List(_, Elem::Any)),
            Param::ListStr => matches!(v, Value::List(_, Elem::Str)),
            Param::MapAny => matches!(v, Value::Map(_, Elem::Any)),
            Param::Time => matches!(v, Value::Time(_)),
        }
    }
}

/// What a function can ask of the template running it.
pub trait Env {
    /// Executes the named template on `data` into a string (`include`).
    fn execute_named(&mut self, name: &str, data: Value) -> Result<String, String>;
    /// Parses and executes a template text on `data` (sprig's `tpl`).
    fn execute_text(&mut self, text: &str, data: Value) -> Result<String, String>;
    /// A source of randomness (the random functions).
    fn random(&mut self) -> u64;
    /// The current time as Unix nanoseconds.
    fn now_nanos(&mut self) -> i128;
}

/// A function's implementation: its converted arguments in, a value or an
/// error out (`error calling NAME: ...`).
pub type Impl = fn(&mut dyn Env, Vec<Value>) -> Result<Value, String>;

/// A template function.
#[derive(Clone, Copy)]
pub struct Func {
    /// The fixed parameters.
    pub params: &'static [Param],
    /// The variadic parameter's element type, if any.
    pub variadic: Option<Param>,
    /// Whether its result is an `interface {}` (a nil result is then no value
    /// at the end of a pipeline command).
    pub returns_any: bool,
    /// The implementation.
    pub call: Impl,
}

impl Func {
    /// A function with fixed parameters.
    pub const fn new(params: &'static [Param], call: Impl) -> Func {
        Func {
            params,
            variadic: None,
            returns_any: false,
            call,
        }
    }

    /// A function with fixed parameters then a variadic one.
    pub const fn variadic(params: &'static [Param], rest: Param, call: Impl) -> Func {
        Func {
            params,
            variadic: Some(rest),
            returns_any: false,
            call,
        }
    }

    /// Marks the result as `interface {}`.
    pub const fn any(mut self) -> Func {
        self.returns_any = true;
        self
    }
}

/// Functions by name.
pub type FuncMap = HashMap<&'static str, Func>;

/// An implementation that refuses: a function xfn does not implement yet
/// fails naming itself rather than giving a wrong result.
pub fn unimplemented(name: &str) -> String {
    format!("function {name:?} is not implemented by xfn's port of function-go-templating")
}
