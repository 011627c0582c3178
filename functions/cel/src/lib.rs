//! CEL over a composition function request, as the Go functions that use
//! cel-go see it, with the `cel` crate (cel-rust).
//!
//! The Go functions declare the request's parts as their protobuf types:
//! `observed` and `desired` are `apiextensions.fn.proto.v1.State` messages
//! and `context` a `google.protobuf.Struct`. Here they are CEL maps of the
//! same shape: a State is `{composite, resources}`, a Resource
//! `{resource, connection_details, ready}` (`ready` the enum's number:
//! 0 unspecified, 1 true, 2 false), and every number of a Kubernetes object
//! or of the context is a `double`, as in a `Struct`.
//!
//! What differs from cel-go (see [`evaluate_bool`]): cel-rust has no type
//! checker, so an expression cel-go refuses when it compiles (an unknown
//! field of a State, an operator on mismatched types, a result that is not
//! `bool` by its static type) fails here when it runs, with cel-rust's
//! message; parse errors are cel-rust's messages too. A missing map key
//! reads as cel-go's `no such key: K`.

use std::collections::HashMap;
use std::sync::Arc;

use cel::objects::{Key, Map};
use cel::{Context, Program, Value};
use xfn_sdk::{Ready, Request, Resource, State};

/// A JSON value as a CEL value, every number a `double` as in a protobuf
/// `Struct`.
///
/// ```
/// let v = xfn_cel::json_to_cel(&serde_json::json!({"n": 2}));
/// let cel::Value::Map(m) = v else { panic!() };
/// assert_eq!(m.map.get(&cel::objects::Key::from("n")), Some(&cel::Value::Float(2.0)));
/// ```
pub fn json_to_cel(v: &serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => Value::Float(n.as_f64().unwrap_or(0.0)),
        serde_json::Value::String(s) => Value::String(Arc::new(s.clone())),
        serde_json::Value::Array(a) => Value::List(Arc::new(a.iter().map(json_to_cel).collect())),
        serde_json::Value::Object(o) => object_to_cel(o),
    }
}

fn object_to_cel(o: &serde_json::Map<String, serde_json::Value>) -> Value {
    map(o.iter().map(|(k, v)| (k.as_str(), json_to_cel(v))))
}

fn map<'a>(entries: impl Iterator<Item = (&'a str, Value)>) -> Value {
    let map: HashMap<Key, Value> = entries.map(|(k, v)| (Key::from(k), v)).collect();
    Value::Map(Map { map: Arc::new(map) })
}

fn ready_number(ready: Ready) -> i64 {
    match ready {
        Ready::True => 1,
        Ready::False => 2,
        _ => 0,
    }
}

/// A `Resource` message as a CEL map.
pub fn resource_to_cel(r: &Resource) -> Value {
    let details = map(r
        .connection_details
        .iter()
        .map(|(k, v)| (k.as_str(), Value::Bytes(Arc::new(v.clone())))));
    let object = r
        .resource
        .as_ref()
        .map_or_else(|| map(std::iter::empty()), object_to_cel);
    map([
        ("resource", object),
        ("connection_details", details),
        ("ready", Value::Int(ready_number(r.ready))),
    ]
    .into_iter())
}

/// A `State` message as a CEL map (an unset state is an empty one, as a
/// protobuf message field reads).
pub fn state_to_cel(s: Option<&State>) -> Value {
    let empty = State::default();
    let s = s.unwrap_or(&empty);
    let composite = s
        .composite
        .as_ref()
        .map_or_else(|| resource_to_cel(&Resource::default()), resource_to_cel);
    let resources = map(s
        .resources
        .iter()
        .map(|(k, r)| (k.as_str(), resource_to_cel(r))));
    map([("composite", composite), ("resources", resources)].into_iter())
}

/// A CEL context with `observed`, `desired` and `context` of `req`.
pub fn request_context(req: &Request) -> Context<'static, 'static> {
    let mut ctx = Context::default();
    ctx.add_variable_from_value("observed", state_to_cel(req.observed.as_ref()));
    ctx.add_variable_from_value("desired", state_to_cel(req.desired.as_ref()));
    let context = req
        .context
        .as_ref()
        .map_or_else(|| map(std::iter::empty()), object_to_cel);
    ctx.add_variable_from_value("context", context);
    ctx
}

/// A CEL context with one variable per `(name, JSON value)`, numbers as
/// doubles.
///
/// ```
/// let object = serde_json::json!({"status": {"ready": true}});
/// let ctx = xfn_cel::json_context(&[("object", &object)]);
/// assert_eq!(xfn_cel::evaluate_bool(&ctx, "object.status.ready == true"), Ok(true));
/// ```
pub fn json_context(vars: &[(&str, &serde_json::Value)]) -> Context<'static, 'static> {
    let mut ctx = Context::default();
    for (name, value) in vars {
        ctx.add_variable_from_value(*name, json_to_cel(value));
    }
    ctx
}

/// Why an expression has no boolean value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CelError {
    /// The expression does not parse.
    Parse(String),
    /// Evaluating it failed.
    Eval(String),
    /// Its value is not a bool.
    NotBool(String),
}

/// Compiles and evaluates `expression` in `ctx` and wants a `bool`.
///
/// ```
/// let req: xfn_sdk::Request = serde_json::from_value(serde_json::json!({
///     "observed": {"composite": {"resource": {"spec": {"count": 2}}}}
/// })).unwrap();
/// let ctx = xfn_cel::request_context(&req);
/// assert_eq!(xfn_cel::evaluate_bool(&ctx, "observed.composite.resource.spec.count == 2.0"), Ok(true));
/// assert!(matches!(xfn_cel::evaluate_bool(&ctx, "1 +"), Err(xfn_cel::CelError::Parse(_))));
/// ```
pub fn evaluate_bool(ctx: &Context<'_, '_>, expression: &str) -> Result<bool, CelError> {
    let program = Program::compile(expression).map_err(|e| CelError::Parse(e.to_string()))?;
    match program.execute(ctx) {
        Ok(Value::Bool(b)) => Ok(b),
        Ok(other) => Err(CelError::NotBool(format!("{:?}", other.type_of()))),
        Err(e) => Err(CelError::Eval(eval_message(&e))),
    }
}

/// An evaluation error's text: cel-go's where both implementations have
/// the error (a missing map key is `no such key: K`), else cel-rust's.
///
/// ```
/// let req: xfn_sdk::Request = serde_json::from_value(serde_json::json!({
///     "observed": {"composite": {"resource": {"spec": {}}}}
/// })).unwrap();
/// let ctx = xfn_cel::request_context(&req);
/// assert_eq!(
///     xfn_cel::evaluate_bool(&ctx, "observed.composite.resource.spec.enabled == true"),
///     Err(xfn_cel::CelError::Eval("no such key: enabled".to_owned()))
/// );
/// ```
fn eval_message(e: &cel::ExecutionError) -> String {
    match e {
        cel::ExecutionError::NoSuchKey(key) => format!("no such key: {key}"),
        other => other.to_string(),
    }
}

/// What the expression's static type is, as far as a checker of cel-go's
/// rules can tell without declarations: `Some("bool")` when it is exactly
/// `bool`, `Some(name)` for another type known from the expression's form
/// (`dyn` for a field of a `Struct` or an index), `None` when it cannot be
/// told here.
///
/// ```
/// let t = |e: &str| xfn_cel::static_type(e).unwrap();
/// assert_eq!(t("observed.composite.resource.spec.x == 1"), Some("bool"));
/// assert_eq!(t("observed.composite.resource.spec.enabled"), Some("dyn"));
/// assert_eq!(t("'a'"), Some("string"));
/// assert_eq!(t("[1, 2].exists(x, x > 1)"), Some("bool"));
/// ```
pub fn static_type(expression: &str) -> Result<Option<&'static str>, CelError> {
    let program = Program::compile(expression).map_err(|e| CelError::Parse(e.to_string()))?;
    Ok(type_of(program.expression()))
}

fn type_of(e: &cel::IdedExpr) -> Option<&'static str> {
    use cel::common::ast::{Expr, LiteralValue};
    match &e.expr {
        Expr::Literal(l) => Some(match l {
            LiteralValue::Boolean(_) => "bool",
            LiteralValue::Int(_) => "int",
            LiteralValue::UInt(_) => "uint",
            LiteralValue::Double(_) => "double",
            LiteralValue::String(_) => "string",
            LiteralValue::Bytes(_) => "bytes",
            LiteralValue::Null => "null_type",
        }),
        Expr::Select(s) if s.test => Some("bool"),
        Expr::Select(_) | Expr::Ident(_) => Some("dyn"),
        Expr::Call(c) => match c.func_name.as_str() {
            "_&&_"
            | "_||_"
            | "!_"
            | "_==_"
            | "_!=_"
            | "_<_"
            | "_<=_"
            | "_>_"
            | "_>=_"
            | "@in"
            | "@not_strictly_false"
            | "startsWith"
            | "endsWith"
            | "contains"
            | "matches" => Some("bool"),
            "_[_]" => Some("dyn"),
            "_?_:_" => match (
                c.args.get(1).and_then(type_of),
                c.args.get(2).and_then(type_of),
            ) {
                (Some(a), Some(b)) if a == b => Some(a),
                _ => None,
            },
            _ => None,
        },
        Expr::Comprehension(c) => match &c.result.expr {
            Expr::Ident(name) if *name == c.accu_var => type_of(&c.accu_init),
            _ => type_of(&c.result),
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_equal_ints_as_in_cel_go() {
        let req: Request = serde_json::from_value(serde_json::json!({
            "observed": {"composite": {"resource": {"spec": {"watchers": 42}}}}
        }))
        .unwrap();
        let ctx = request_context(&req);
        assert_eq!(
            evaluate_bool(&ctx, "observed.composite.resource.spec.watchers == 42"),
            Ok(true)
        );
        assert_eq!(
            evaluate_bool(&ctx, "observed.composite.resource.spec.watchers == 88"),
            Ok(false)
        );
    }

    #[test]
    fn deep_nesting_is_a_parse_error_not_a_crash() {
        let deep = format!("{}1{} == 1", "(".repeat(5000), ")".repeat(5000));
        let ctx = json_context(&[]);
        assert!(matches!(
            evaluate_bool(&ctx, &deep),
            Err(CelError::Parse(_))
        ));
        assert!(matches!(static_type(&deep), Err(CelError::Parse(_))));
    }

    #[test]
    fn proto_shapes() {
        let req: Request = serde_json::from_value(serde_json::json!({
            "desired": {"resources": {"a": {"resource": {"kind": "K"}, "ready": "READY_TRUE"}}}
        }))
        .unwrap();
        let ctx = request_context(&req);
        assert_eq!(
            evaluate_bool(&ctx, "desired.resources['a'].ready == 1"),
            Ok(true)
        );
        assert_eq!(
            evaluate_bool(&ctx, "size(observed.resources) == 0"),
            Ok(true)
        );
        assert_eq!(
            evaluate_bool(&ctx, "desired.resources.a.resource.kind == 'K'"),
            Ok(true)
        );
    }
}
