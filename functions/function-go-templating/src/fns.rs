//! function-go-templating's own template functions (v0.12.2
//! `function_maps.go`): `toYaml`, `fromYaml`, `include`,
//! `setResourceNameAnnotation`, `randomChoice`, `getResourceCondition`,
//! `getComposedResource`, `getCompositeResource`, `getExtraResources`,
//! `getExtraResourcesFromContext`, `getCredentialData`.

use crate::template::func::{Func, FuncMap, Param};
use base64::Engine as _;

use crate::template::value::{Elem, Struct, Value};

/// Upstream functions not ported yet.
pub const UNIMPLEMENTED: &[&str] = &[];

/// Adds upstream's functions to `m`.
pub fn add(m: &mut FuncMap) {
    use Param::{Any, MapAny, Str};
    m.insert(
        "setResourceNameAnnotation",
        Func::new(&[Str], |_, a| {
            Ok(Value::str(format!(
                "gotemplating.fn.crossplane.io/composition-resource-name: {}",
                str_arg(&a, 0)
            )))
        }),
    );
    m.insert(
        "include",
        Func::new(&[Str, Any], |env, a| {
            let data = a.get(1).cloned().unwrap_or(Value::Nil);
            env.execute_named(&str_arg(&a, 0), data).map(Value::str)
        }),
    );
    m.insert(
        "randomChoice",
        Func::variadic(&[], Str, |env, a| {
            if a.is_empty() {
                return Err("invalid argument to Intn".into());
            }
            let i = (env.random() % a.len() as u64) as usize;
            Ok(a[i].clone())
        }),
    );
    m.insert(
        "toYaml",
        Func::new(&[Any], |_, a| crate::yamlv3::marshal(&a[0]).map(Value::str)),
    );
    m.insert(
        "fromYaml",
        Func::new(&[Str], |_, a| crate::yamlv3::unmarshal(&str_arg(&a, 0))).any(),
    );
    m.insert(
        "getCompositeResource",
        Func::new(&[MapAny], |_, a| {
            Ok(
                get_value_into(&a[0], &["observed", "composite", "resource"])
                    .filter(is_map)
                    .unwrap_or_else(nil_map),
            )
        }),
    );
    m.insert(
        "getComposedResource",
        Func::new(&[MapAny, Str], |_, a| {
            let name = str_arg(&a, 1);
            Ok(
                get_value_into(&a[0], &["observed", "resources", &name, "resource"])
                    .filter(is_map)
                    .unwrap_or_else(nil_map),
            )
        }),
    );
    m.insert(
        "getExtraResources",
        Func::new(&[MapAny, Str], |_, a| {
            let name = str_arg(&a, 1);
            let found = get_value_into(&a[0], &["requiredResources", &name, "items"])
                .filter(is_list)
                .or_else(|| {
                    get_value_into(&a[0], &["extraResources", &name, "items"]).filter(is_list)
                });
            Ok(found.unwrap_or_else(|| Value::list(Vec::new())))
        }),
    );
    m.insert(
        "getExtraResourcesFromContext",
        Func::new(&[MapAny, Str], |_, a| {
            let name = str_arg(&a, 1);
            let found = get_value_into(
                &a[0],
                &[
                    "context",
                    "apiextensions.crossplane.io/extra-resources",
                    &name,
                    "items",
                ],
            )
            .filter(is_list);
            Ok(found.unwrap_or_else(|| Value::list(Vec::new())))
        }),
    );
    m.insert(
        "getCredentialData",
        Func::new(&[MapAny, Str], |_, a| {
            let name = str_arg(&a, 1);
            // Upstream reads the request back from the map: credential data is
            // base64 in protojson, a map[string][]byte in Go.
            let mut out = std::collections::BTreeMap::new();
            if let Some(Value::Map(data, _)) =
                path(&a[0], &["credentials", &name, "credentialData", "data"])
            {
                for (k, v) in data.borrow().iter() {
                    let Value::Str(s) = v else { continue };
                    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(s.as_bytes())
                    else {
                        return Ok(Value::Map(Default::default(), Elem::Bytes));
                    };
                    out.insert(k.clone(), Value::bytes(&bytes));
                }
            }
            Ok(Value::Map(
                std::rc::Rc::new(std::cell::RefCell::new(out)),
                Elem::Bytes,
            ))
        }),
    );
    m.insert(
        "getResourceCondition",
        Func::new(&[Str, MapAny], |_, a| {
            let ct = str_arg(&a, 0);
            let conds = path(&a[1], &["resource", "status", "conditions"])
                .or_else(|| path(&a[1], &["status", "conditions"]));
            let mut found = None;
            if let Some(Value::List(l, _)) = conds {
                for c in l.iter() {
                    if matches!(path(c, &["type"]), Some(Value::Str(t)) if *t == *ct) {
                        found = Some(c.clone());
                    }
                }
            }
            Ok(condition(&ct, found.as_ref()))
        }),
    );
}

fn str_arg(a: &[Value], i: usize) -> String {
    match a.get(i) {
        Some(Value::Str(s)) => s.to_string(),
        _ => String::new(),
    }
}

fn is_map(v: &Value) -> bool {
    matches!(v, Value::Map(..))
}

fn is_list(v: &Value) -> bool {
    matches!(v, Value::List(..))
}

fn nil_map() -> Value {
    Value::map(Default::default())
}

/// What crossplane-runtime's `GetValueInto` gives: the value through a JSON
/// round trip, so every number is a `float64`.
fn json_round_trip(v: Value) -> Value {
    match v {
        Value::Int(i, _) => Value::Float(i as f64),
        Value::List(l, e) => Value::List(
            std::rc::Rc::new(l.iter().cloned().map(json_round_trip).collect()),
            e,
        ),
        Value::Map(m, e) => Value::Map(
            std::rc::Rc::new(std::cell::RefCell::new(
                m.borrow()
                    .iter()
                    .map(|(k, v)| (k.clone(), json_round_trip(v.clone())))
                    .collect(),
            )),
            e,
        ),
        other => other,
    }
}

/// A value at `keys`, through JSON as upstream reads it.
fn get_value_into(v: &Value, keys: &[&str]) -> Option<Value> {
    path(v, keys).map(json_round_trip)
}

fn path(v: &Value, keys: &[&str]) -> Option<Value> {
    let mut cur = v.clone();
    for k in keys {
        let next = match &cur {
            Value::Map(m, _) => m.borrow().get(*k).cloned()?,
            _ => return None,
        };
        cur = next;
    }
    Some(cur)
}

/// An `xpv1.Condition`: the found one, or `Unknown` of the type asked for.
fn condition(ct: &str, found: Option<&Value>) -> Value {
    let field = |k: &str| -> Value {
        match found.and_then(|c| path(c, &[k])) {
            Some(Value::Str(s)) => Value::Str(s),
            _ => Value::str(""),
        }
    };
    let (typ, status) = match found {
        Some(_) => (field("type"), field("status")),
        None => (Value::str(ct), Value::str("Unknown")),
    };
    let generation = match found.and_then(|c| path(c, &["observedGeneration"])) {
        Some(Value::Int(i, _)) => Value::int64(i),
        _ => Value::int64(0),
    };
    Value::Struct(std::rc::Rc::new(Struct {
        type_name: "v1.Condition",
        fields: vec![
            ("Type", typ),
            ("Status", status),
            ("LastTransitionTime", field("lastTransitionTime")),
            ("Reason", field("reason")),
            ("Message", field("message")),
            ("ObservedGeneration", generation),
        ],
    }))
}
