//! `RunFunction` (fn.go): the patch-and-transform algorithm.

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use xfn_sdk::{Object, Ready, Request, Resource, Response, State};

use crate::connection::{self, Details};
use crate::gofmt::quote;
use crate::input::{self, Resources};
use crate::patches::{
    ComposedTargets, apply_composed_patch, apply_environment_patch, composed_templates,
    to_composed_resource,
};
use crate::ready;
use crate::validate::validate_resources;
use crate::value::{floatify, preserve_ints};

/// The context key of the Composition environment.
pub const ENVIRONMENT_KEY: &str = "apiextensions.crossplane.io/environment";

/// Runs patch-and-transform on a request. Problems the user can fix are
/// results in the response (a fatal one stops the pipeline), never errors.
pub fn run(req: &Request) -> Response {
    let mut rsp = Response::to(req);
    if let Err(message) = compose(req, &mut rsp) {
        rsp.fatal(message);
    }
    rsp
}

/// An object of the request as a Go function sees it: numbers are float64.
fn request_object(o: Option<&Object>) -> Value {
    let mut v = Value::Object(o.cloned().unwrap_or_default());
    floatify(&mut v);
    v
}

fn string_field<'a>(o: &'a Value, key: &str) -> &'a str {
    o.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn metadata_string<'a>(o: &'a Value, key: &str) -> &'a str {
    o.get("metadata")
        .and_then(|m| m.get(key))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// `Unstructured.SetName` / `SetNamespace`: an empty value removes the key.
fn set_metadata_string(o: &mut Value, key: &str, value: &str) {
    let Value::Object(root) = o else { return };
    if value.is_empty() {
        if let Some(Value::Object(md)) = root.get_mut("metadata") {
            md.remove(key);
        }
        return;
    }
    // SetNestedField fails (silently) when metadata is not an object.
    if let Value::Object(md) = root
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()))
    {
        md.insert(key.to_owned(), Value::String(value.to_owned()));
    }
}

/// Decodes a base template as the Kubernetes JSON decoder does into an
/// `Unstructured`: it must be an object with a `kind`; integers become `int64`.
fn parse_base(base: &Value) -> Result<Value, String> {
    let Value::Object(m) = base else {
        let kind = match base {
            Value::Bool(_) => "bool",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            _ => "array",
        };
        return Err(format!(
            "json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
        ));
    };
    if m.get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .is_empty()
    {
        let mut raw = base.clone();
        floatify(&mut raw);
        return Err(format!(
            "Object 'Kind' is missing in '{}'",
            crate::gojson::protojson(&raw)
        ));
    }
    let mut v = base.clone();
    preserve_ints(&mut v);
    Ok(v)
}

/// Whether a GroupVersionKind built from the object is empty.
fn gvk_is_empty(o: &Value) -> bool {
    let api_version = string_field(o, "apiVersion");
    string_field(o, "kind").is_empty()
        && (api_version.is_empty() || api_version.matches('/').count() > 1)
}

fn compose(req: &Request, rsp: &mut Response) -> Result<(), String> {
    let empty = Object::new();
    let input: Resources = input::decode(req.input_object().unwrap_or(&empty)).map_err(|e| {
        format!(
            "cannot get Function input: cannot get function input *v1beta1.Resources from *v1.RunFunctionRequest: \
             cannot unmarshal JSON from *structpb.Struct into *v1beta1.Resources: {e}"
        )
    })?;
    validate_resources(&input).map_err(|e| format!("invalid Function input: {e}"))?;

    let oxr = request_object(req.observed_composite().and_then(|r| r.resource.as_ref()));
    let mut dxr = request_object(req.desired_composite().and_then(|r| r.resource.as_ref()));
    let mut dxr_details: Details = req
        .desired_composite()
        .map(|r| r.connection_details.clone())
        .unwrap_or_default();
    if let Value::Object(m) = &mut dxr {
        m.insert(
            "apiVersion".into(),
            Value::String(string_field(&oxr, "apiVersion").to_owned()),
        );
        m.insert(
            "kind".into(),
            Value::String(string_field(&oxr, "kind").to_owned()),
        );
    }

    let observed: BTreeMap<&str, (Value, &Details)> = req
        .observed_composed()
        .iter()
        .map(|(name, r)| {
            (
                name.as_str(),
                (request_object(r.resource.as_ref()), &r.connection_details),
            )
        })
        .collect();
    let mut desired: BTreeMap<String, (Value, Ready)> = req
        .desired_composed()
        .iter()
        .map(|(name, r)| (name.clone(), (request_object(r.resource.as_ref()), r.ready)))
        .collect();

    let templates = composed_templates(&input.patch_sets, &input.resources)
        .map_err(|e| format!("cannot resolve PatchSets: {e}"))?;

    let mut env = match req.context_key(ENVIRONMENT_KEY) {
        Some(Value::Object(m)) => {
            let mut v = Value::Object(m.clone());
            floatify(&mut v);
            v
        }
        _ => Value::Object(Map::new()),
    };
    if gvk_is_empty(&env)
        && let Value::Object(m) = &mut env
    {
        m.insert(
            "apiVersion".into(),
            Value::String("internal.crossplane.io/v1alpha1".into()),
        );
        m.insert("kind".into(), Value::String("Environment".into()));
    }

    if let Some(e) = &input.environment {
        for (i, p) in e.patches.iter().enumerate() {
            if let Err(err) = apply_environment_patch(p, &mut env, &oxr, &mut dxr) {
                if err.not_found && p.from_field_path_policy() == "Optional" {
                    continue;
                }
                return Err(format!(
                    "cannot apply the {} environment patch at index {i}: {err}",
                    quote(p.patch_type())
                ));
            }
        }
    }

    let mut skipped_any = false;
    for t in &templates {
        let name = quote(&t.name);
        let mut dcd = match &t.base {
            None => match desired.get(&t.name) {
                Some((o, _)) => o.clone(),
                None => {
                    return Err(format!(
                        "composed resource {name} has no base template, and was not produced by a previous Function in the pipeline"
                    ));
                }
            },
            Some(base) => parse_base(base).map_err(|e| {
                format!("cannot parse base template of composed resource {name}: {e}")
            })?,
        };
        let mut readiness = Ready::Unspecified;
        let ocd = observed.get(t.name.as_str());
        if let Some((o, secret)) = ocd {
            set_metadata_string(&mut dcd, "namespace", metadata_string(o, "namespace"));
            set_metadata_string(&mut dcd, "name", metadata_string(o, "name"));
            match connection::extract(o, secret, &t.connection_details) {
                Ok(details) => dxr_details.extend(details),
                Err(e) => {
                    rsp.warning(format!(
                        "cannot extract composite resource connection details from composed resource {name}: {e}"
                    ));
                }
            }
            match ready::is_ready(o, &t.readiness_checks) {
                Ok(true) => readiness = Ready::True,
                Ok(false) => {}
                Err(e) => {
                    rsp.warning(format!(
                        "cannot check readiness of composed resource {name}: {e}"
                    ));
                }
            }
        }

        let mut skip = false;
        for (i, p) in t.patches.iter().enumerate() {
            let mut targets = ComposedTargets {
                ocd: ocd.map(|(o, _)| o),
                dcd: &mut dcd,
                oxr: &oxr,
                dxr: &mut dxr,
                env: &mut env,
            };
            let Err(err) = apply_composed_patch(p, &mut targets) else {
                continue;
            };
            let patch_type = quote(p.patch_type());
            if !err.not_found {
                return Err(format!(
                    "cannot render composed resource {name} {patch_type} patch at index {i}: {err}"
                ));
            }
            if p.from_field_path_policy() == "Required" {
                if to_composed_resource(p) && ocd.is_none() {
                    rsp.warning(format!(
                        "not adding new composed resource {name} to desired state because {patch_type} patch at index {i} has 'policy.fromFieldPath: Required': {err}"
                    ));
                    skip = true;
                    break;
                }
                rsp.warning(format!(
                    "cannot render composed resource {name} {patch_type} patch at index {i}: ignoring 'policy.fromFieldPath: Required' because 'to' resource already exists: {err}"
                ));
            }
        }
        if skip {
            skipped_any = true;
            continue;
        }
        desired.insert(t.name.clone(), (dcd, readiness));
    }

    if connection::is_v2(&oxr) && !dxr_details.is_empty() {
        let (key, secret) = connection::compose_secret(
            &oxr,
            input.write_connection_secret_to_ref.as_ref(),
            &dxr_details,
        )
        .map_err(|e| format!("cannot compose connection secret: {e}"))?;
        desired.insert(key, (secret, Ready::True));
    }

    let into_object = |v: Value| match v {
        Value::Object(m) => m,
        _ => Object::new(),
    };
    let composite = Resource {
        resource: Some(into_object(dxr)),
        connection_details: dxr_details,
        ready: if skipped_any {
            Ready::False
        } else {
            Ready::Unspecified
        },
    };
    let resources = desired
        .into_iter()
        .map(|(name, (o, ready))| {
            (
                name,
                Resource {
                    resource: Some(into_object(o)),
                    connection_details: Details::new(),
                    ready,
                },
            )
        })
        .collect();
    rsp.desired = Some(State {
        composite: Some(composite),
        resources,
    });
    rsp.set_context_key(ENVIRONMENT_KEY, env);
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn base_templates() {
        assert_eq!(
            parse_base(&json!({"apiVersion": "v1", "spec": {"n": 1.0}})).unwrap_err(),
            "Object 'Kind' is missing in '{\"apiVersion\":\"v1\",\"spec\":{\"n\":1}}'"
        );
        assert_eq!(
            parse_base(&json!("x")).unwrap_err(),
            "json: cannot unmarshal string into Go value of type map[string]interface {}"
        );
        let v = parse_base(&json!({"kind": "K", "spec": {"n": 3.0, "f": 1.5}})).unwrap();
        assert!(v["spec"]["n"].is_i64());
        assert!(v["spec"]["f"].is_f64());
    }

    #[test]
    fn metadata_name_and_namespace() {
        let mut o = json!({"metadata": {"name": "base", "labels": {}}});
        set_metadata_string(&mut o, "namespace", "");
        set_metadata_string(&mut o, "name", "");
        assert_eq!(o, json!({"metadata": {"labels": {}}}));
        let mut o = json!({});
        set_metadata_string(&mut o, "name", "");
        assert_eq!(o, json!({}));
        set_metadata_string(&mut o, "name", "n");
        assert_eq!(o, json!({"metadata": {"name": "n"}}));
    }

    #[test]
    fn environment_gvk() {
        assert!(gvk_is_empty(&json!({})));
        assert!(gvk_is_empty(&json!({"apiVersion": "a/b/c"})));
        assert!(!gvk_is_empty(&json!({"apiVersion": "v1"})));
        assert!(!gvk_is_empty(&json!({"kind": "K"})));
    }
}
