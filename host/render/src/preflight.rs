//! The pre-flight checks of `crossplane render`, with its error texts.

use serde_json::Value;

use super::RenderError;
use super::object::{name, str_at, value_at};
use super::pipeline_check::type_name;

/// Checks that the Composition fits the XR and is a pipeline.
pub fn composition_fits(xr: &Value, composition: &Value) -> Result<(), RenderError> {
    let (want_kind, xr_kind) = (
        str_at(composition, &["spec", "compositeTypeRef", "kind"]),
        str_at(xr, &["kind"]),
    );
    if want_kind != xr_kind {
        return Err(RenderError::Invalid(format!(
            "composition's compositeTypeRef.kind ({want_kind}) does not match XR's kind ({xr_kind})"
        )));
    }
    let want_api = str_at(composition, &["spec", "compositeTypeRef", "apiVersion"]);
    let xr_api = str_at(xr, &["apiVersion"]);
    if want_api != xr_api {
        return Err(RenderError::Invalid(format!(
            "composition's compositeTypeRef.apiVersion ({want_api}) does not match XR's apiVersion ({xr_api})"
        )));
    }
    let selector = value_at(
        xr,
        &["spec", "crossplane", "compositionSelector", "matchLabels"],
    )
    .or_else(|| value_at(xr, &["spec", "compositionSelector", "matchLabels"]))
    .and_then(Value::as_object);
    for (key, want) in selector.into_iter().flatten() {
        let want = want.as_str().unwrap_or_default();
        match value_at(composition, &["metadata", "labels", key]).and_then(Value::as_str) {
            None => {
                return Err(RenderError::Invalid(format!(
                    "composition {:?} is missing required label {key:?}",
                    name(composition)
                )));
            }
            Some(got) if got != want => {
                return Err(RenderError::Invalid(format!(
                    "composition {:?} has incorrect value for label {key:?}: want {want:?}, got {got:?}",
                    name(composition)
                )));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Refuses a claim given in place of the XR, saying how to convert it.
/// Crossplane v2's render takes XRs only (crossplane/crossplane#6649); a
/// claim that the `--xrd` offers was converted before this check (see
/// [`crate::claim`]). An input is taken for a claim when it is namespaced,
/// of the compositeTypeRef's group, and of another kind.
pub fn refuse_claim(input: &Value, composition: &Value) -> Result<(), RenderError> {
    let type_api = str_at(composition, &["spec", "compositeTypeRef", "apiVersion"]);
    let type_kind = str_at(composition, &["spec", "compositeTypeRef", "kind"]);
    let kind = str_at(input, &["kind"]);
    if kind == type_kind {
        return Ok(());
    }
    let group = |api: &str| api.rsplit_once('/').map_or("", |(g, _)| g).to_owned();
    let namespace = str_at(input, &["metadata", "namespace"]);
    if group(str_at(input, &["apiVersion"])) != group(type_api) || namespace.is_empty() {
        return Ok(());
    }
    let claim_name = name(input);
    Err(RenderError::Invalid(format!(
        "{kind} {namespace}/{claim_name} is a claim, and render takes the composite resource (XR) itself, as Crossplane v2 does. \
         Convert the claim to its XR: set apiVersion: {type_api} and kind: {type_kind} (the Composition's compositeTypeRef), \
         remove metadata.namespace (a claim's XR is cluster-scoped), keep metadata.name and spec, \
         and add the labels crossplane.io/claim-name: {claim_name} and crossplane.io/claim-namespace: {namespace}, \
         which Crossplane sets on a claim's XR and copies to its composed resources"
    )))
}

/// Whether the Composition uses `mode: Pipeline` (literally; no defaulting).
pub fn is_pipeline(composition: &Value) -> bool {
    str_at(composition, &["spec", "mode"]) == "Pipeline"
}

/// The error for a Composition that is not a pipeline.
pub fn not_a_pipeline(composition: &Value) -> RenderError {
    RenderError::Invalid(format!(
        "render only supports Composition Function pipelines: Composition {:?} must use spec.mode: Pipeline",
        name(composition)
    ))
}

/// Checks that an object is a Composition.
pub fn is_composition(object: &Value) -> Result<(), String> {
    let (api, kind) = (str_at(object, &["apiVersion"]), str_at(object, &["kind"]));
    if api == "apiextensions.crossplane.io/v1" && kind == "Composition" {
        Ok(())
    } else {
        Err(format!("not a composition: {kind}/{}", name(object)))
    }
}

/// Checks that an object is a Function (`pkg.crossplane.io/v1` or `v1beta1`).
pub fn is_function(object: &Value) -> Result<(), String> {
    let (api, kind) = (str_at(object, &["apiVersion"]), str_at(object, &["kind"]));
    if !(matches!(api, "pkg.crossplane.io/v1" | "pkg.crossplane.io/v1beta1") && kind == "Function")
    {
        return Err(format!("not a function: {kind}/{}", name(object)));
    }
    annotations_are_strings(object)
}

/// Kubernetes annotations are strings: a value of another type (a list
/// for the module annotation, say) is an error, not an absent annotation.
fn annotations_are_strings(object: &Value) -> Result<(), String> {
    let annotations = match value_at(object, &["metadata", "annotations"]) {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Object(annotations)) => annotations,
        Some(other) => {
            return Err(format!(
                "function {:?}: metadata.annotations: Invalid type: expected an object, got {}",
                name(object),
                type_name(other)
            ));
        }
    };
    for (key, value) in annotations {
        if !value.is_string() {
            return Err(format!(
                "function {:?}: metadata.annotations[{key:?}]: Invalid type: expected a string, got {}",
                name(object),
                type_name(value)
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn composition(labels: Value) -> Value {
        json!({"metadata": {"name": "c", "labels": labels},
               "spec": {"compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XR"}, "mode": "Pipeline"}})
    }

    #[test]
    fn kind_and_api_version_must_match() {
        let xr = json!({"apiVersion": "example.org/v1", "kind": "Other"});
        let err = composition_fits(&xr, &composition(json!({}))).expect_err("kind");
        assert_eq!(
            err.to_string(),
            "composition's compositeTypeRef.kind (XR) does not match XR's kind (Other)"
        );
        let xr = json!({"apiVersion": "example.org/v2", "kind": "XR"});
        let err = composition_fits(&xr, &composition(json!({}))).expect_err("api");
        assert_eq!(
            err.to_string(),
            "composition's compositeTypeRef.apiVersion (example.org/v1) does not match XR's apiVersion (example.org/v2)"
        );
    }

    #[test]
    fn selector_labels_must_be_on_the_composition() {
        let xr = json!({"apiVersion": "example.org/v1", "kind": "XR",
                        "spec": {"crossplane": {"compositionSelector": {"matchLabels": {"tier": "gold"}}}}});
        let err = composition_fits(&xr, &composition(json!({}))).expect_err("missing");
        assert_eq!(
            err.to_string(),
            r#"composition "c" is missing required label "tier""#
        );
        let err =
            composition_fits(&xr, &composition(json!({"tier": "silver"}))).expect_err("wrong");
        assert_eq!(
            err.to_string(),
            r#"composition "c" has incorrect value for label "tier": want "gold", got "silver""#
        );
        composition_fits(&xr, &composition(json!({"tier": "gold"}))).expect("matches");
    }

    #[test]
    fn functions_and_compositions_are_recognised_by_kind() {
        assert!(
            is_function(&json!({"apiVersion": "pkg.crossplane.io/v1beta1", "kind": "Function"}))
                .is_ok()
        );
        let err = is_function(
            &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}),
        );
        assert_eq!(err, Err("not a function: ConfigMap/x".into()));
        assert_eq!(
            is_composition(&json!({"kind": "XR", "metadata": {"name": "y"}})),
            Err("not a composition: XR/y".into())
        );
    }
}
