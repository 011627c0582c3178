//! Patches (patches.go): single field path patches, combine patches, the
//! environment and composed patch dispatch, and patch set expansion.

use serde_json::Value;
use xfn_sdk::fieldpath::{self, FieldPathError, MergeOptions};

use crate::gofmt::sprintf;
use crate::input::{ComposedTemplate, Patch, PatchKind, PatchSet};
use crate::transforms::resolve_all;
use crate::value::GoValue;

/// A patch failure. `not_found` is Go's `fieldpath.IsNotFound(err)`: the
/// source (or a wildcard's parent) does not exist, which policies may excuse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchError {
    /// The message.
    pub message: String,
    /// Whether the cause is a missing field.
    pub not_found: bool,
}

impl PatchError {
    fn other(message: impl Into<String>) -> Self {
        PatchError {
            message: message.into(),
            not_found: false,
        }
    }
}

impl From<FieldPathError> for PatchError {
    fn from(e: FieldPathError) -> Self {
        PatchError {
            not_found: e.is_not_found(),
            message: e.to_string(),
        }
    }
}

impl std::fmt::Display for PatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PatchError {}

type Result<T = ()> = std::result::Result<T, PatchError>;

/// The merge options of a patch's `policy.toFieldPath` (`toMergeOption`).
pub fn merge_options(p: &Patch) -> Result<Option<MergeOptions>> {
    let Some(policy) = &p.policy else {
        return Ok(None);
    };
    let keep = |keep_map_values, append_slice| {
        Ok(Some(MergeOptions {
            keep_map_values,
            append_slice,
        }))
    };
    match policy.to_field_path_policy() {
        "Replace" => Ok(None),
        "MergeObjects" | "MergeObject" => keep(true, false),
        "MergeObjectsAppendArrays" => keep(true, true),
        "ForceMergeObjects" => keep(false, false),
        "ForceMergeObjectsAppendArrays" | "AppendArray" => keep(false, true),
        other => Err(PatchError::other(format!("invalid patch policy {other}"))),
    }
}

/// `ApplyFromFieldPathPatch`: reads `fromFieldPath` from `from`, runs the
/// transforms, and merges the result into `to` at `toFieldPath` (every
/// expansion of it if it contains `[*]`).
pub fn apply_from_field_path(p: &Patch, from: &Value, to: &mut Value) -> Result {
    let input = fieldpath::get(from, p.from_field_path())?;
    let out = resolve_all(&p.transforms, GoValue::from_json(input)).map_err(PatchError::other)?;
    let value = out
        .to_valid_json()
        .map_err(|e| PatchError::other(format!("cannot marshal value to JSON: {e}")))?;
    let mo = merge_options(p)?;
    let to_path = p.to_field_path();
    if to_path.contains("[*]") {
        let paths = fieldpath::expand_wildcards(to, to_path)?;
        if paths.is_empty() {
            return Err(PatchError::other(format!(
                "cannot expand ToFieldPath {to_path}"
            )));
        }
        for path in paths {
            fieldpath::merge_value(to, &path, value.clone(), mo.as_ref())?;
        }
        return Ok(());
    }
    fieldpath::merge_value(to, to_path, value, mo.as_ref())
        .map_err(|e| PatchError::from(e.wrap("cannot patch to object")))
}

/// `ApplyCombineFromVariablesPatch`: reads every variable (the first missing
/// one fails the patch), formats them with `combine.string.fmt`, runs the
/// transforms and merges the result into `to` (no wildcard expansion).
pub fn apply_combine(p: &Patch, from: &Value, to: &mut Value) -> Result {
    let Some(c) = &p.combine else {
        return Err(PatchError::other(format!(
            "Combine is required by type {}",
            p.patch_type()
        )));
    };
    let mut vars = Vec::with_capacity(c.variables.len());
    for path in &c.variables {
        vars.push(GoValue::from_json(fieldpath::get(from, path)?));
    }
    let combined = match (c.strategy.as_str(), &c.string_fmt) {
        ("string", Some(f)) => sprintf(f, &vars),
        ("string", None) => {
            return Err(PatchError::other(
                "given combine strategy string requires configuration",
            ));
        }
        (other, _) => {
            return Err(PatchError::other(format!(
                "combine strategy {other} is not supported"
            )));
        }
    };
    let out = resolve_all(&p.transforms, GoValue::String(combined)).map_err(PatchError::other)?;
    let mo = merge_options(p)?;
    // No JSON round trip here (unlike field path patches): the merge sees
    // the transform output as is; writing it normalises it.
    let value = out.to_json_exact().map_err(|e| {
        PatchError::other(format!(
            "cannot patch to object: cannot marshal value to JSON: {e}"
        ))
    })?;
    fieldpath::merge_value(to, p.to_field_path(), value, mo.as_ref())
        .map_err(|e| PatchError::from(e.wrap("cannot patch to object")))
}

/// `ApplyEnvironmentPatch`: patches to the environment read the observed XR;
/// patches from the environment write the desired XR.
pub fn apply_environment_patch(p: &Patch, env: &mut Value, oxr: &Value, dxr: &mut Value) -> Result {
    match p.patch_type() {
        "FromCompositeFieldPath" | "ToEnvironmentFieldPath" => apply_from_field_path(p, oxr, env),
        "CombineFromComposite" => apply_combine(p, oxr, env),
        "ToCompositeFieldPath" | "FromEnvironmentFieldPath" => apply_from_field_path(p, env, dxr),
        "CombineToComposite" => apply_combine(p, env, dxr),
        _ => Ok(()),
    }
}

/// Whether a composed patch writes to the composed resource (`ToComposedResource`).
pub fn to_composed_resource(p: &Patch) -> bool {
    matches!(
        p.patch_type(),
        "FromCompositeFieldPath"
            | "CombineFromComposite"
            | "FromEnvironmentFieldPath"
            | "CombineFromEnvironment"
    )
}

/// The objects a composed patch may read or write.
pub struct ComposedTargets<'a> {
    /// The observed composed resource, if it exists.
    pub ocd: Option<&'a Value>,
    /// The desired composed resource.
    pub dcd: &'a mut Value,
    /// The observed XR.
    pub oxr: &'a Value,
    /// The desired XR.
    pub dxr: &'a mut Value,
    /// The environment.
    pub env: &'a mut Value,
}

/// `ApplyComposedPatch`. Patches that read the observed composed resource
/// are a no-op while it does not exist.
pub fn apply_composed_patch(p: &Patch, t: &mut ComposedTargets<'_>) -> Result {
    if t.ocd.is_none() && !to_composed_resource(p) {
        return Ok(());
    }
    let missing = Value::Null;
    let ocd = t.ocd.unwrap_or(&missing);
    match p.patch_type() {
        "ToCompositeFieldPath" => apply_from_field_path(p, ocd, t.dxr),
        "CombineToComposite" => apply_combine(p, ocd, t.dxr),
        "ToEnvironmentFieldPath" => apply_from_field_path(p, ocd, t.env),
        "CombineToEnvironment" => apply_combine(p, ocd, t.env),
        "FromCompositeFieldPath" => apply_from_field_path(p, t.oxr, t.dcd),
        "CombineFromComposite" => apply_combine(p, t.oxr, t.dcd),
        "FromEnvironmentFieldPath" => apply_from_field_path(p, t.env, t.dcd),
        "CombineFromEnvironment" => apply_combine(p, t.env, t.dcd),
        _ => Ok(()),
    }
}

/// `ComposedTemplates`: the templates with `PatchSet` patches replaced, in
/// place, by the patches of the named set.
pub fn composed_templates(
    sets: &[PatchSet],
    templates: &[ComposedTemplate],
) -> std::result::Result<Vec<ComposedTemplate>, String> {
    let mut by_name: std::collections::HashMap<&str, Vec<Patch>> = std::collections::HashMap::new();
    for s in sets {
        if s.patches.iter().any(|p| p.patch_type() == "PatchSet") {
            return Err("a patch in a PatchSet cannot be of type PatchSet".into());
        }
        let patches = s
            .patches
            .iter()
            .map(|p| Patch {
                kind: PatchKind::Composed,
                ..p.clone()
            })
            .collect();
        by_name.insert(s.name.as_str(), patches);
    }
    templates
        .iter()
        .map(|t| {
            let mut patches = Vec::with_capacity(t.patches.len());
            for p in &t.patches {
                if p.patch_type() != "PatchSet" {
                    patches.push(p.clone());
                    continue;
                }
                let Some(name) = &p.patch_set_name else {
                    return Err("PatchSetName is required by type PatchSet".to_owned());
                };
                let Some(set) = by_name.get(name.as_str()) else {
                    return Err(format!("cannot find PatchSet by name {name}"));
                };
                patches.extend(set.iter().cloned());
            }
            Ok(ComposedTemplate {
                patches,
                ..t.clone()
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::input::{Combine, MathTransform, PatchPolicy, Transform};

    fn patch(from: &str, to: Option<&str>) -> Patch {
        Patch {
            from_field_path: Some(from.into()),
            to_field_path: to.map(Into::into),
            ..Patch::default()
        }
    }

    fn with_policy(mut p: Patch, to: &str) -> Patch {
        p.policy = Some(PatchPolicy {
            from_field_path: None,
            to_field_path: Some(to.into()),
        });
        p
    }

    #[test]
    fn from_field_path_basics() {
        let from = json!({"spec": {"widgets": "10", "n": 3.0, "nul": null}});
        let mut to = json!({});
        apply_from_field_path(
            &patch("spec.widgets", Some("spec.watchers")),
            &from,
            &mut to,
        )
        .unwrap();
        assert_eq!(to, json!({"spec": {"watchers": "10"}}));
        // toFieldPath defaults to fromFieldPath; numbers are normalised.
        apply_from_field_path(&patch("spec.n", None), &from, &mut to).unwrap();
        assert!(to["spec"]["n"].is_i64());
        // A null source is found and written as null.
        apply_from_field_path(&patch("spec.nul", Some("x")), &from, &mut to).unwrap();
        assert_eq!(to["x"], Value::Null);

        let err = apply_from_field_path(&patch("spec.missing", None), &from, &mut to).unwrap_err();
        assert!(err.not_found);
        assert_eq!(err.message, "spec.missing: no such field");
        let err =
            apply_from_field_path(&patch("spec.widgets[0]", None), &from, &mut to).unwrap_err();
        assert!(!err.not_found);
        assert_eq!(err.message, "spec.widgets: not an array");
        let err = apply_from_field_path(
            &patch("spec.widgets", Some("spec.watchers.deep")),
            &from,
            &mut to,
        )
        .unwrap_err();
        assert_eq!(
            err.message,
            "cannot patch to object: spec.watchers is not an object"
        );
    }

    #[test]
    fn from_field_path_with_transforms() {
        let from = json!({"spec": {"widgets": "10"}});
        let mut to = json!({});
        let mut p = patch("spec.widgets", Some("spec.watchers"));
        p.transforms = vec![
            Transform {
                r#type: "convert".into(),
                convert: Some(crate::input::ConvertTransform {
                    to_type: "int64".into(),
                    format: None,
                }),
                ..Transform::default()
            },
            Transform {
                r#type: "math".into(),
                math: Some(MathTransform {
                    r#type: "Multiply".into(),
                    multiply: Some(3),
                    ..MathTransform::default()
                }),
                ..Transform::default()
            },
        ];
        apply_from_field_path(&p, &from, &mut to).unwrap();
        assert_eq!(to, json!({"spec": {"watchers": 30}}));
    }

    #[test]
    fn wildcards() {
        let from = json!({"spec": {"parameters": {"allowedGroups": [12345678.0, 7891234.0]}}});
        let mut to = json!({"spec": {"forProvider": {"accessRules": [
            {"action": "Allow", "allowedGroups": [12345678]},
            {"action": "Deny", "allowedGroups": [12345678]}
        ]}}});
        let p = with_policy(
            patch(
                "spec.parameters.allowedGroups",
                Some("spec.forProvider.accessRules[*].allowedGroups"),
            ),
            "ForceMergeObjectsAppendArrays",
        );
        apply_from_field_path(&p, &from, &mut to).unwrap();
        assert_eq!(
            to["spec"]["forProvider"]["accessRules"],
            json!([
                {"action": "Allow", "allowedGroups": [12345678, 7891234]},
                {"action": "Deny", "allowedGroups": [12345678, 7891234]}
            ])
        );

        let from = json!({"metadata": {"labels": {"a": "b"}}});
        let mut to = json!({"metadata": {"ownerReferences": [{"name": "x"}]}});
        let before = to.clone();
        let p = patch(
            "metadata.labels",
            Some("metadata.ownerReferences[*].badField"),
        );
        let err = apply_from_field_path(&p, &from, &mut to).unwrap_err();
        assert_eq!(
            err.message,
            "cannot expand ToFieldPath metadata.ownerReferences[*].badField"
        );
        assert!(!err.not_found);
        assert_eq!(to, before);

        let mut to = json!({"spec": {"nul": null}});
        let err = apply_from_field_path(
            &patch("metadata.labels", Some("spec.nul[*].x")),
            &from,
            &mut to,
        )
        .unwrap_err();
        assert!(err.not_found);
    }

    #[test]
    fn merge_policies_from_patches() {
        let from = json!({"spec": {"sourceObject": {"me": "too"}}});
        let mut to = json!({"spec": {"targetObject": {"keep": "me"}}});
        let p = with_policy(
            patch("spec.sourceObject", Some("spec.targetObject")),
            "MergeObjects",
        );
        apply_from_field_path(&p, &from, &mut to).unwrap();
        assert_eq!(
            to,
            json!({"spec": {"targetObject": {"keep": "me", "me": "too"}}})
        );
        assert_eq!(
            merge_options(&with_policy(patch("a", None), "Replace")).unwrap(),
            None
        );
        assert_eq!(
            merge_options(&with_policy(patch("a", None), "AppendArray")).unwrap(),
            Some(MergeOptions {
                keep_map_values: false,
                append_slice: true
            })
        );
        assert_eq!(
            merge_options(&with_policy(patch("a", None), "MergeObject")).unwrap(),
            Some(MergeOptions {
                keep_map_values: true,
                append_slice: false
            })
        );
    }

    fn combine(vars: &[&str], fmt: &str, to: &str) -> Patch {
        Patch {
            r#type: "CombineFromComposite".into(),
            to_field_path: Some(to.into()),
            combine: Some(Combine {
                variables: vars.iter().map(|v| (*v).to_owned()).collect(),
                strategy: "string".into(),
                string_fmt: Some(fmt.into()),
            }),
            ..Patch::default()
        }
    }

    #[test]
    fn combine_patches() {
        let from =
            json!({"metadata": {"name": "xr", "labels": {"env": "dev"}}, "spec": {"n": 3.0}});
        let mut to = json!({});
        apply_combine(
            &combine(
                &["metadata.name", "metadata.labels.env", "spec.n"],
                "%s-%s-%v",
                "spec.id",
            ),
            &from,
            &mut to,
        )
        .unwrap();
        assert_eq!(to, json!({"spec": {"id": "xr-dev-3"}}));
        apply_combine(&combine(&["spec.n"], "%d", "spec.d"), &from, &mut to).unwrap();
        assert_eq!(to["spec"]["d"], json!("%!d(float64=3)"));
        let err = apply_combine(
            &combine(&["metadata.name", "spec.missing"], "%s-%s", "x"),
            &from,
            &mut to,
        )
        .unwrap_err();
        assert!(err.not_found);
        assert_eq!(err.message, "spec.missing: no such field");
        // Brackets with a star are a literal key for combine patches.
        apply_combine(
            &combine(&["metadata.name"], "%s", "spec.list[*]"),
            &from,
            &mut to,
        )
        .unwrap();
        assert_eq!(to["spec"]["list"]["*"], json!("xr"));
    }

    #[test]
    fn composed_patch_dispatch() {
        let oxr = json!({"spec": {"a": "from-xr"}});
        let ocd = json!({"status": {"id": "from-cd"}});
        let mut dcd = json!({});
        let mut dxr = json!({});
        let mut env = json!({"e": "from-env"});
        let mut to_composite = patch("status.id", Some("status.cdId"));
        to_composite.r#type = "ToCompositeFieldPath".into();
        let mut to_env = patch("status.id", Some("cd"));
        to_env.r#type = "ToEnvironmentFieldPath".into();
        let mut from_env = patch("e", Some("spec.e"));
        from_env.r#type = "FromEnvironmentFieldPath".into();
        let from_xr = patch("spec.a", None);

        let mut t = ComposedTargets {
            ocd: None,
            dcd: &mut dcd,
            oxr: &oxr,
            dxr: &mut dxr,
            env: &mut env,
        };
        // No observed composed resource: reading from it is a silent no-op.
        apply_composed_patch(&to_composite, &mut t).unwrap();
        apply_composed_patch(&from_xr, &mut t).unwrap();
        apply_composed_patch(&from_env, &mut t).unwrap();
        t.ocd = Some(&ocd);
        apply_composed_patch(&to_composite, &mut t).unwrap();
        apply_composed_patch(&to_env, &mut t).unwrap();
        assert_eq!(dcd, json!({"spec": {"a": "from-xr", "e": "from-env"}}));
        assert_eq!(dxr, json!({"status": {"cdId": "from-cd"}}));
        assert_eq!(env, json!({"e": "from-env", "cd": "from-cd"}));
        assert!(to_composed_resource(&from_xr));
        assert!(!to_composed_resource(&to_env));
    }

    #[test]
    fn environment_patch_dispatch() {
        let oxr = json!({"spec": {"watchers": 10.0}});
        let mut env = json!({});
        let mut dxr = json!({});
        apply_environment_patch(
            &patch("spec.watchers", Some("widgets")),
            &mut env,
            &oxr,
            &mut dxr,
        )
        .unwrap();
        assert_eq!(env, json!({"widgets": 10}));
        let mut to_xr = patch("widgets", Some("status.w"));
        to_xr.r#type = "ToCompositeFieldPath".into();
        apply_environment_patch(&to_xr, &mut env, &oxr, &mut dxr).unwrap();
        assert_eq!(dxr, json!({"status": {"w": 10}}));
    }

    #[test]
    fn patch_sets_expand_in_place() {
        let sets = vec![PatchSet {
            name: "common".into(),
            patches: vec![
                Patch {
                    kind: PatchKind::PatchSet,
                    ..patch("a", None)
                },
                patch("b", None),
            ],
        }];
        let mut ps = Patch {
            r#type: "PatchSet".into(),
            patch_set_name: Some("common".into()),
            ..Patch::default()
        };
        let t = ComposedTemplate {
            name: "t".into(),
            patches: vec![patch("x", None), ps.clone(), patch("y", None)],
            ..ComposedTemplate::default()
        };
        let out = composed_templates(&sets, std::slice::from_ref(&t)).unwrap();
        let paths: Vec<&str> = out[0].patches.iter().map(Patch::from_field_path).collect();
        assert_eq!(paths, ["x", "a", "b", "y"]);
        assert!(out[0].patches.iter().all(|p| p.kind == PatchKind::Composed));

        ps.patch_set_name = Some("nope".into());
        let t = ComposedTemplate {
            name: "t".into(),
            patches: vec![ps],
            ..ComposedTemplate::default()
        };
        assert_eq!(
            composed_templates(&sets, &[t]).unwrap_err(),
            "cannot find PatchSet by name nope"
        );
    }
}
