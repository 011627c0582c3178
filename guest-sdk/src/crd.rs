//! The CustomResourceDefinition of a function's typed input (feature
//! `schema`), from its [`schemars::JsonSchema`]: what `go generate` and
//! controller-gen give a Go function's input type. Crossplane installs
//! the CRDs a package carries (`package/input/*.yaml`), and tools validate
//! a Composition's inputs against them.
//!
//! ```
//! use xfn_sdk::InputType;
//!
//! /// The input of function-greet.
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Input {
//!     /// Who to greet.
//!     name: String,
//! }
//! impl InputType for Input {
//!     const API_VERSION: &'static str = "greet.fn.example.org/v1beta1";
//!     const KIND: &'static str = "Input";
//! }
//!
//! let crd = xfn_sdk::crd::input_crd::<Input>().unwrap();
//! assert_eq!(crd["metadata"]["name"], "inputs.greet.fn.example.org");
//! let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
//! assert_eq!(schema["properties"]["name"]["description"], "Who to greet.");
//! assert_eq!(xfn_sdk::crd::input_crd_file_name::<Input>(), "greet.fn.example.org_inputs.yaml");
//! ```

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Value, json};

use crate::{Error, InputType};

/// The group and version of `T::API_VERSION` (`group/version`).
fn group_version<T: InputType>() -> Result<(&'static str, &'static str), Error> {
    match T::API_VERSION.split_once('/') {
        Some((group, version))
            if !group.is_empty() && !version.is_empty() && !version.contains('/') =>
        {
            Ok((group, version))
        }
        _ => Err(format!(
            "cannot make a CRD for input {}: its apiVersion must be group/version",
            T::API_VERSION
        )
        .into()),
    }
}

/// The plural of a kind, lowercase, as Kubernetes names resources:
/// `Input` → `inputs`, `Policy` → `policies`, `Class` → `classes`.
pub fn plural(kind: &str) -> String {
    let lower = kind.to_lowercase();
    let before_y = lower.strip_suffix('y');
    match before_y {
        Some(stem) if !stem.ends_with(['a', 'e', 'i', 'o', 'u']) => format!("{stem}ies"),
        _ if ["s", "x", "z", "ch", "sh"]
            .iter()
            .any(|end| lower.ends_with(end)) =>
        {
            format!("{lower}es")
        }
        _ => format!("{lower}s"),
    }
}

/// Where a package keeps `T`'s CRD, by controller-gen's convention:
/// `<group>_<plural>.yaml` (in `package/input/`).
pub fn input_crd_file_name<T: InputType>() -> String {
    let group = T::API_VERSION
        .split_once('/')
        .map_or(T::API_VERSION, |(g, _)| g);
    format!("{group}_{}.yaml", plural(T::KIND))
}

/// `T`'s OpenAPI v3 schema as a CRD takes it: every subschema inlined,
/// with `apiVersion`, `kind` and `metadata` as every object has them.
fn open_api_schema<T: InputType + JsonSchema>() -> Result<Value, Error> {
    let generator = SchemaSettings::openapi3()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    let text = schema.to_string();
    if text.contains("\"$ref\"") {
        return Err(format!(
            "cannot make a CRD for input {} {}: its type refers to itself, and a CRD's schema cannot",
            T::API_VERSION,
            T::KIND
        )
        .into());
    }
    make_structural(&mut schema);
    let Some(object) = schema.as_object_mut() else {
        return Err(format!(
            "cannot make a CRD for input {}: its schema is not an object",
            T::KIND
        )
        .into());
    };
    for key in ["$schema", "title", "components", "definitions", "$defs"] {
        object.remove(key);
    }
    if object.get("type").and_then(Value::as_str) != Some("object") {
        return Err(format!(
            "cannot make a CRD for input {} {}: it must be a struct (a schema of type object)",
            T::API_VERSION,
            T::KIND
        )
        .into());
    }
    let properties = object.entry("properties").or_insert_with(|| json!({}));
    if let Some(properties) = properties.as_object_mut() {
        properties.insert(
            "apiVersion".to_owned(),
            json!({"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."}),
        );
        properties.insert(
            "kind".to_owned(),
            json!({"type": "string", "description": "Kind is a string value representing the REST resource this object represents."}),
        );
        properties.insert("metadata".to_owned(), json!({"type": "object"}));
    }
    Ok(schema)
}

/// Rewrites what JSON Schema allows but a CRD's structural schema does
/// not: `additionalProperties: false` beside `properties` (from
/// `deny_unknown_fields`; the API server prunes unknown fields anyway)
/// and `default: null` (from `#[serde(default)]` on an `Option`). The
/// schema is the input type's, so as deep as that type.
fn make_structural(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    if object.contains_key("properties")
        && object.get("additionalProperties") == Some(&Value::Bool(false))
    {
        object.remove("additionalProperties");
    }
    if object.get("default") == Some(&Value::Null) {
        object.remove("default");
    }
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        properties.values_mut().for_each(make_structural);
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(inner) = object.get_mut(key) {
            make_structural(inner);
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(schemas)) = object.get_mut(key) {
            schemas.iter_mut().for_each(make_structural);
        }
    }
}

/// The CustomResourceDefinition of input type `T`: group, version and
/// kind from [`InputType`], the schema from [`JsonSchema`] (doc comments
/// become descriptions). Like controller-gen's for a Go input, it is
/// namespaced, in the `crossplane` category, served and stored.
///
/// A type that refers to itself, or is not a struct, is an error: a CRD's
/// schema is a tree of objects.
pub fn input_crd<T: InputType + JsonSchema>() -> Result<Value, Error> {
    let (group, version) = group_version::<T>()?;
    let plural = plural(T::KIND);
    Ok(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{group}")},
        "spec": {
            "group": group,
            "names": {
                "categories": ["crossplane"],
                "kind": T::KIND,
                "listKind": format!("{}List", T::KIND),
                "plural": plural,
                "singular": T::KIND.to_lowercase(),
            },
            "scope": "Namespaced",
            "versions": [{
                "name": version,
                "schema": {"openAPIV3Schema": open_api_schema::<T>()?},
                "served": true,
                "storage": true,
            }],
        },
    }))
}

/// [`input_crd`] as YAML, with a header saying how it was made (native
/// builds only).
#[cfg(not(target_arch = "wasm32"))]
pub fn input_crd_yaml<T: InputType + JsonSchema>() -> Result<String, Error> {
    let crd = input_crd::<T>()?;
    let yaml = serde_yaml_ng::to_string(&crd)
        .map_err(|e| Error::from(format!("cannot write the CRD as YAML: {e}")))?;
    Ok(format!(
        "# Generated from the input type's JSON schema by xfn_sdk::crd::input_crd_yaml; do not edit.\n---\n{yaml}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals_follow_kubernetes() {
        for (kind, want) in [
            ("Input", "inputs"),
            ("Policy", "policies"),
            ("Key", "keys"),
            ("Class", "classes"),
            ("Box", "boxes"),
            ("Patch", "patches"),
        ] {
            assert_eq!(plural(kind), want, "{kind}");
        }
    }

    #[derive(serde::Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Tree {
        children: Vec<Tree>,
    }
    impl InputType for Tree {
        const API_VERSION: &'static str = "tree.fn.example.org/v1";
        const KIND: &'static str = "Tree";
    }

    #[test]
    fn a_recursive_input_is_refused_with_the_reason() {
        let err = input_crd::<Tree>()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("refers to itself"), "{err}");
    }

    #[derive(serde::Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Bare {
        /// Nested settings.
        nested: Option<Nested>,
        #[serde(default)]
        tags: std::collections::BTreeMap<String, String>,
    }
    #[derive(serde::Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Nested {
        size: u32,
    }
    impl InputType for Bare {
        const API_VERSION: &'static str = "nogroup";
        const KIND: &'static str = "Bare";
    }

    #[test]
    fn an_api_version_without_a_group_is_refused() {
        let err = input_crd::<Bare>()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("must be group/version"), "{err}");
    }

    #[test]
    fn nested_types_are_inlined_for_kubernetes() {
        let schema = open_api_schema::<Bare>().expect("a schema");
        let text = schema.to_string();
        assert!(
            !text.contains("$ref") && !text.contains("$schema"),
            "{text}"
        );
        assert_eq!(
            schema["properties"]["nested"]["properties"]["size"]["type"],
            "integer"
        );
        assert_eq!(schema["properties"]["nested"]["nullable"], true);
        assert_eq!(
            schema["properties"]["tags"]["additionalProperties"]["type"],
            "string"
        );
        assert_eq!(schema["properties"]["kind"]["type"], "string");
    }

    #[derive(serde::Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Strict {
        #[serde(default)]
        region: Option<String>,
        inner: StrictInner,
    }
    #[derive(serde::Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct StrictInner {
        size: u32,
    }
    impl InputType for Strict {
        const API_VERSION: &'static str = "strict.fn.example.org/v1";
        const KIND: &'static str = "Strict";
    }

    /// Kubernetes refuses `additionalProperties` beside `properties`, and
    /// a `null` default: neither is left, at any depth.
    #[test]
    fn deny_unknown_fields_and_null_defaults_become_structural() {
        let schema = open_api_schema::<Strict>().expect("a schema");
        let text = schema.to_string();
        assert!(!text.contains("additionalProperties"), "{text}");
        assert!(!text.contains("\"default\":null"), "{text}");
        assert_eq!(schema["properties"]["region"]["nullable"], true);
        assert_eq!(schema["properties"]["inner"]["required"], json!(["size"]));
    }
}
