//! Connection details (connection.go): extraction from observed composed
//! resources, and the composed connection Secret of v2 XRs.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use xfn_sdk::fieldpath;

use crate::goconv::base64_encode;
use crate::gojson;
use crate::input::{ConnectionDetail, WriteConnectionSecretToRef};
use crate::patches::{apply_combine, apply_from_field_path};
use crate::validate::validate_connection_detail;
use crate::value::GoValue;

/// Connection details: key to raw bytes.
pub type Details = BTreeMap<String, Vec<u8>>;

/// `ExtractConnectionDetails`: the details a template asks for from its
/// observed composed resource. Missing secret keys and unreadable field
/// paths are skipped; an invalid entry fails the whole template (`invalid: ...`).
pub fn extract(
    observed: &Value,
    secret: &Details,
    cfgs: &[ConnectionDetail],
) -> Result<Details, String> {
    let mut out = Details::new();
    for cfg in cfgs {
        validate_connection_detail(cfg).map_err(|e| format!("invalid: {e}"))?;
        match cfg.r#type.as_str() {
            "FromValue" => {
                out.insert(
                    cfg.name.clone(),
                    cfg.value.clone().unwrap_or_default().into_bytes(),
                );
            }
            "FromConnectionSecretKey" => {
                let key = cfg
                    .from_connection_secret_key
                    .as_deref()
                    .unwrap_or_default();
                if let Some(v) = secret.get(key) {
                    out.insert(cfg.name.clone(), v.clone());
                }
            }
            "FromFieldPath" => {
                let path = cfg.from_field_path.as_deref().unwrap_or_default();
                if let Some(b) = from_field_path(observed, path) {
                    out.insert(cfg.name.clone(), b);
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

/// A string's bytes, or any other value's JSON encoding.
fn from_field_path(o: &Value, path: &str) -> Option<Vec<u8>> {
    if let Ok(s) = fieldpath::get_string(o, path) {
        return Some(s.as_bytes().to_vec());
    }
    let v = fieldpath::get(o, path).ok()?;
    gojson::marshal(&GoValue::from_json(v))
        .ok()
        .map(String::into_bytes)
}

/// Whether an XR is a Crossplane v2 XR (it has `spec.crossplane`), whose
/// connection details Crossplane does not write itself.
pub fn is_v2(xr: &Value) -> bool {
    // `fieldpath::get(xr, "spec.crossplane").is_ok()`, without building the
    // error a v1 XR would get on every call.
    xr.get("spec")
        .and_then(Value::as_object)
        .is_some_and(|spec| spec.contains_key("crossplane"))
}

/// The composed Secret holding a v2 XR's connection details, with its
/// composition resource name (`<xr name>-connection-secret`).
///
/// The Secret's name and namespace come from the XR's
/// `spec.writeConnectionSecretToRef`, else the input's
/// `writeConnectionSecretToRef` (if it names something), else
/// `<xr name>-connection` in the XR's namespace; then the input's patches
/// apply, reading the observed XR.
pub fn compose_secret(
    oxr: &Value,
    input_ref: Option<&WriteConnectionSecretToRef>,
    details: &Details,
) -> Result<(String, Value), String> {
    let (name, namespace) = secret_ref(oxr, input_ref)
        .map_err(|e| format!("cannot generate connection secret reference: {e}"))?;
    let mut metadata = Map::new();
    if !name.is_empty() {
        metadata.insert("name".into(), Value::String(name));
    }
    if !namespace.is_empty() {
        metadata.insert("namespace".into(), Value::String(namespace));
    }
    let data: Map<String, Value> = details
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(base64_encode(v))))
        .collect();
    let mut secret = json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "data": data,
        "type": "connection.crossplane.io/v1alpha1",
    });
    if !metadata.is_empty() {
        secret["metadata"] = Value::Object(metadata);
    }
    let xr_name = nested_string(oxr, "metadata", "name");
    Ok((format!("{xr_name}-connection-secret"), secret))
}

fn nested_string(o: &Value, a: &str, b: &str) -> String {
    o.get(a)
        .and_then(|m| m.get(b))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn secret_ref(
    oxr: &Value,
    input_ref: Option<&WriteConnectionSecretToRef>,
) -> Result<(String, String), String> {
    let from_xr = match oxr
        .get("spec")
        .and_then(|s| s.get("writeConnectionSecretToRef"))
    {
        Some(Value::Object(m)) => {
            let field = |k: &str| match m.get(k) {
                None | Some(Value::Null) => Some(String::new()),
                Some(Value::String(s)) => Some(s.clone()),
                Some(_) => None,
            };
            match (field("name"), field("namespace")) {
                (Some(n), Some(ns)) => Some((n, ns)),
                _ => None,
            }
        }
        Some(Value::Null) => Some((String::new(), String::new())),
        _ => None,
    };
    let (name, namespace) = match (from_xr, input_ref) {
        (Some(r), _) => r,
        (None, Some(r)) if !r.name.is_empty() || !r.namespace.is_empty() => {
            (r.name.clone(), r.namespace.clone())
        }
        _ => (
            format!("{}-connection", nested_string(oxr, "metadata", "name")),
            nested_string(oxr, "metadata", "namespace"),
        ),
    };
    let Some(r) = input_ref.filter(|r| !r.patches.is_empty()) else {
        return Ok((name, namespace));
    };
    let mut obj = json!({"apiVersion": "v1", "kind": "SecretReference", "name": name, "namespace": namespace});
    for (i, p) in r.patches.iter().enumerate() {
        let t = p.patch_type();
        let result = match t {
            "FromCompositeFieldPath" => match apply_from_field_path(p, oxr, &mut obj) {
                Err(_) if p.from_field_path_policy() == "Optional" => Ok(()),
                other => other,
            },
            "CombineFromComposite" => apply_combine(p, oxr, &mut obj),
            other => {
                return Err(format!(
                    "cannot apply connection secret patches: unsupported patch type {other} at index {i}"
                ));
            }
        };
        result.map_err(|e| format!("cannot apply connection secret patches: cannot apply patch type {t} at index {i}: {e}"))?;
    }
    let take = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_owned);
    Ok((
        take("name").unwrap_or(name),
        take("namespace").unwrap_or(namespace),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{Combine, Patch, PatchPolicy};

    fn cd(t: &str, name: &str) -> ConnectionDetail {
        ConnectionDetail {
            name: name.into(),
            r#type: t.into(),
            ..ConnectionDetail::default()
        }
    }

    #[test]
    fn extracts_each_type() {
        let o = json!({"status": {"endpoint": "db.example", "port": 5432.0, "obj": {"a": "b"}, "nul": null}});
        let mut secret = Details::new();
        secret.insert("password".into(), b"s3cret".to_vec());
        let cfgs = vec![
            ConnectionDetail {
                value: Some("fixed".into()),
                ..cd("FromValue", "v")
            },
            ConnectionDetail {
                from_connection_secret_key: Some("password".into()),
                ..cd("FromConnectionSecretKey", "pw")
            },
            ConnectionDetail {
                from_connection_secret_key: Some("missing".into()),
                ..cd("FromConnectionSecretKey", "gone")
            },
            ConnectionDetail {
                from_field_path: Some("status.endpoint".into()),
                ..cd("FromFieldPath", "ep")
            },
            ConnectionDetail {
                from_field_path: Some("status.port".into()),
                ..cd("FromFieldPath", "port")
            },
            ConnectionDetail {
                from_field_path: Some("status.obj".into()),
                ..cd("FromFieldPath", "obj")
            },
            ConnectionDetail {
                from_field_path: Some("status.nul".into()),
                ..cd("FromFieldPath", "nul")
            },
            ConnectionDetail {
                from_field_path: Some("status.missing".into()),
                ..cd("FromFieldPath", "missing")
            },
            ConnectionDetail {
                from_field_path: Some("status..bad".into()),
                ..cd("FromFieldPath", "bad")
            },
        ];
        let out = extract(&o, &secret, &cfgs).unwrap();
        let s = |k: &str| String::from_utf8(out[k].clone()).unwrap();
        assert_eq!(s("v"), "fixed");
        assert_eq!(s("pw"), "s3cret");
        assert_eq!(s("ep"), "db.example");
        assert_eq!(s("port"), "5432");
        assert_eq!(s("obj"), "{\"a\":\"b\"}");
        assert_eq!(s("nul"), "null");
        assert_eq!(out.len(), 6);
    }

    #[test]
    fn invalid_entries_fail_the_template() {
        let err = extract(&json!({}), &Details::new(), &[cd("FromValue", "v")]).unwrap_err();
        assert_eq!(
            err,
            "invalid: value: Required value: value connection detail requires a value"
        );
        let err = extract(&json!({}), &Details::new(), &[cd("Nope", "v")]).unwrap_err();
        assert_eq!(
            err,
            "invalid: type: Invalid value: \"Nope\": unknown connection detail type"
        );
    }

    fn details() -> Details {
        let mut d = Details::new();
        d.insert("existing".into(), b"supersecretvalue".to_vec());
        d.insert("very".into(), b"secret".to_vec());
        d
    }

    #[test]
    fn an_xr_is_v2_exactly_when_spec_crossplane_can_be_read() {
        for (xr, v2) in [
            (json!({"spec": {"crossplane": {}}}), true),
            (json!({"spec": {"crossplane": null}}), true),
            (json!({"spec": {"foo": "bar"}}), false),
            (json!({"spec": null}), false),
            (json!({"spec": "crossplane"}), false),
            (json!({"metadata": {"name": "x"}}), false),
            (json!(["spec"]), false),
        ] {
            assert_eq!(is_v2(&xr), v2, "{xr}");
            // The field-path reading it stands in for agrees.
            assert_eq!(fieldpath::get(&xr, "spec.crossplane").is_ok(), v2, "{xr}");
        }
    }

    #[test]
    fn secret_from_input_ref() {
        let oxr = json!({"metadata": {"namespace": "default", "name": "cool-xr-42"}, "spec": {"foo": "bar", "crossplane": {}}});
        assert!(is_v2(&oxr));
        let r = WriteConnectionSecretToRef {
            name: "cool-conn-secret".into(),
            ..Default::default()
        };
        let (key, secret) = compose_secret(&oxr, Some(&r), &details()).unwrap();
        assert_eq!(key, "cool-xr-42-connection-secret");
        assert_eq!(
            secret,
            json!({
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "cool-conn-secret"},
                "data": {"existing": "c3VwZXJzZWNyZXR2YWx1ZQ==", "very": "c2VjcmV0"},
                "type": "connection.crossplane.io/v1alpha1"
            })
        );
    }

    #[test]
    fn secret_ref_precedence() {
        let oxr =
            json!({"metadata": {"namespace": "ns", "name": "xr"}, "spec": {"crossplane": {}}});
        // Default: <xr>-connection in the XR's namespace.
        let (_, s) = compose_secret(&oxr, None, &details()).unwrap();
        assert_eq!(
            s["metadata"],
            json!({"name": "xr-connection", "namespace": "ns"})
        );
        // An input ref without name or namespace does not count.
        let (_, s) = compose_secret(
            &oxr,
            Some(&WriteConnectionSecretToRef::default()),
            &details(),
        )
        .unwrap();
        assert_eq!(
            s["metadata"],
            json!({"name": "xr-connection", "namespace": "ns"})
        );
        // The XR's own ref wins, even when empty.
        let oxr2 = json!({"metadata": {"name": "xr"}, "spec": {"crossplane": {}, "writeConnectionSecretToRef": {}}});
        let r = WriteConnectionSecretToRef {
            name: "in".into(),
            ..Default::default()
        };
        let (_, s) = compose_secret(&oxr2, Some(&r), &details()).unwrap();
        assert_eq!(s.get("metadata"), None);
        let oxr3 = json!({"metadata": {"name": "xr"}, "spec": {"writeConnectionSecretToRef": {"name": "own", "namespace": "x"}}});
        let (_, s) = compose_secret(&oxr3, Some(&r), &details()).unwrap();
        assert_eq!(s["metadata"], json!({"name": "own", "namespace": "x"}));
    }

    #[test]
    fn secret_ref_patches() {
        let oxr = json!({"metadata": {"name": "xr", "namespace": "ns"}, "spec": {"crossplane": {}, "id": "abc"}});
        let from = |from: &str, to: &str, required: bool| Patch {
            from_field_path: Some(from.into()),
            to_field_path: Some(to.into()),
            policy: required.then(|| PatchPolicy {
                from_field_path: Some("Required".into()),
                to_field_path: None,
            }),
            ..Patch::default()
        };
        let combine = Patch {
            r#type: "CombineFromComposite".into(),
            to_field_path: Some("name".into()),
            combine: Some(Combine {
                variables: vec!["spec.id".into()],
                strategy: "string".into(),
                string_fmt: Some("%s-secret".into()),
            }),
            ..Patch::default()
        };
        let r = WriteConnectionSecretToRef {
            patches: vec![from("spec.missing", "namespace", false), combine],
            ..Default::default()
        };
        let (_, s) = compose_secret(&oxr, Some(&r), &details()).unwrap();
        assert_eq!(
            s["metadata"],
            json!({"name": "abc-secret", "namespace": "ns"})
        );

        let r = WriteConnectionSecretToRef {
            patches: vec![from("spec.missing", "namespace", true)],
            ..Default::default()
        };
        assert_eq!(
            compose_secret(&oxr, Some(&r), &details()).unwrap_err(),
            "cannot generate connection secret reference: cannot apply connection secret patches: cannot apply patch type FromCompositeFieldPath at index 0: spec.missing: no such field"
        );
        let bad = Patch {
            r#type: "ToCompositeFieldPath".into(),
            ..from("a", "b", false)
        };
        let r = WriteConnectionSecretToRef {
            patches: vec![bad],
            ..Default::default()
        };
        assert_eq!(
            compose_secret(&oxr, Some(&r), &details()).unwrap_err(),
            "cannot generate connection secret reference: cannot apply connection secret patches: unsupported patch type ToCompositeFieldPath at index 0"
        );
    }
}
