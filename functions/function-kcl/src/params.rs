//! The `option()` values a program sees: `params` (the request as
//! function-kcl shows it), `items` and `resource_list`.

use std::collections::HashMap;

use base64::Engine as _;
use serde_json::{Map, Value as J, json};
use xfn_kcl::Value;
use xfn_sdk::{Ready, Request, Resource};

use crate::input::KclInput;

/// The JSON of a KCL value, as Go's `encoding/json` writes an object:
/// keys sorted, integral numbers as integers.
pub fn to_kcl(j: &J) -> Value {
    match j {
        J::Null => Value::None,
        J::Bool(b) => Value::Bool(*b),
        J::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => {
                let f = n.as_f64().unwrap_or(f64::NAN);
                // The protocol carries numbers as doubles; Go prints an
                // integral double below 1e21 without a fraction, which KCL
                // reads as an int.
                if f.fract() == 0.0 && f.abs() < 9.2e18 {
                    Value::Int(f as i64)
                } else {
                    Value::Float(f)
                }
            }
        },
        J::String(s) => Value::str(s.as_str()),
        J::Array(a) => Value::list(a.iter().map(to_kcl).collect()),
        J::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            Value::dict(
                keys.into_iter()
                    .map(|k| (k.clone(), to_kcl(&o[k])))
                    .collect(),
            )
        }
    }
}

fn object(r: Option<&Resource>) -> Map<String, J> {
    r.and_then(|r| r.resource.clone()).unwrap_or_default()
}

fn ready_text(r: Ready) -> &'static str {
    match r {
        Ready::True => "True",
        Ready::False => "False",
        Ready::Unspecified => "Unspecified",
    }
}

fn connection_details(r: &Resource) -> J {
    if r.connection_details.is_empty() {
        return J::Null;
    }
    J::Object(
        r.connection_details
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    J::String(base64::engine::general_purpose::STANDARD.encode(v)),
                )
            })
            .collect(),
    )
}

/// The desired composite function-kcl works on: the request's, with the
/// observed composite's apiVersion and kind.
pub fn desired_composite(req: &Request) -> Map<String, J> {
    let oxr = object(req.observed.as_ref().and_then(|s| s.composite.as_ref()));
    let mut dxr = object(req.desired.as_ref().and_then(|s| s.composite.as_ref()));
    for k in ["apiVersion", "kind"] {
        dxr.insert(
            k.into(),
            oxr.get(k)
                .cloned()
                .unwrap_or_else(|| J::String(String::new())),
        );
    }
    dxr
}

/// The `option()` values for a run.
pub fn options(req: &Request, input: &KclInput) -> Result<HashMap<String, Value>, String> {
    let mut params: Map<String, J> = input
        .spec
        .params
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    params.insert(
        "oxr".into(),
        J::Object(object(
            req.observed.as_ref().and_then(|s| s.composite.as_ref()),
        )),
    );
    params.insert("dxr".into(), J::Object(desired_composite(req)));
    let dcds: Map<String, J> = req
        .desired
        .as_ref()
        .map(|s| {
            s.resources
                .iter()
                .map(|(n, r)| (n.clone(), json!({"Resource": J::Object(object(Some(r))), "Ready": ready_text(r.ready)})))
                .collect()
        })
        .unwrap_or_default();
    params.insert("dcds".into(), J::Object(dcds));
    let ocds: Map<String, J> = req
        .observed
        .as_ref()
        .map(|s| {
            s.resources
                .iter()
                .map(|(n, r)| (n.clone(), json!({"Resource": J::Object(object(Some(r))), "ConnectionDetails": connection_details(r)})))
                .collect()
        })
        .unwrap_or_default();
    params.insert("ocds".into(), J::Object(ocds));
    params.insert(
        "ctx".into(),
        J::Object(req.context.clone().unwrap_or_default()),
    );
    let listed = |m: &std::collections::BTreeMap<String, xfn_sdk::Resources>| -> J {
        J::Object(
            m.iter()
                .map(|(n, rs)| {
                    (
                        n.clone(),
                        J::Array(
                            rs.items
                                .iter()
                                .map(|r| json!({"Resource": J::Object(object(Some(r)))}))
                                .collect(),
                        ),
                    )
                })
                .collect(),
        )
    };
    params.insert("extraResources".into(), listed(&req.extra_resources));
    params.insert("requiredResources".into(), listed(&req.required_resources));

    let function_config = req.input.clone().map(J::Object).unwrap_or(J::Null);
    let mut resource_list = xfn_kcl::Map::new();
    resource_list.insert("apiVersion".into(), Value::str("config.kubernetes.io/v1"));
    resource_list.insert("kind".into(), Value::str("ResourceList"));
    resource_list.insert("items".into(), Value::list(vec![]));
    resource_list.insert("functionConfig".into(), to_kcl(&function_config));

    let mut out = HashMap::new();
    out.insert("params".to_string(), to_kcl(&J::Object(params)));
    out.insert("items".to_string(), Value::list(vec![]));
    out.insert("resource_list".to_string(), Value::dict(resource_list));
    // The sandbox has no environment.
    out.insert("env".to_string(), Value::dict(xfn_kcl::Map::new()));
    out.insert("PATH".to_string(), Value::str(""));
    Ok(out)
}
