//! Resolving what functions require from the files given to render, as
//! classic `crossplane render`'s in-memory fetchers do, or as the engine's
//! fake client answers (namespaces matched exactly).

use serde_json::Value;

use super::object::{name, str_at, value_at};
use crate::pipeline::Resolver;
use crate::protocol::{
    ResourceMatch, ResourceObject, ResourceSelector, Resources, Schema, SchemaSelector,
};

/// Resolves requirements against resources and OpenAPI documents from files.
#[derive(Debug, Default)]
pub struct FileResolver {
    resources: Vec<Value>,
    openapi: Vec<Value>,
    exact_namespace: bool,
}

impl FileResolver {
    /// A resolver over `resources` (sorted by name here) and OpenAPI v3 documents.
    pub fn new(mut resources: Vec<Value>, openapi: Vec<Value>) -> FileResolver {
        resources.sort_by(|a, b| name(a).cmp(name(b)));
        FileResolver {
            resources,
            openapi,
            exact_namespace: false,
        }
    }

    /// A resolver as the engine's client answers: a name matches in the
    /// selector's namespace only (none: cluster-scoped), labels match in
    /// the selector's namespace (none: every namespace), and matches are
    /// sorted by namespace, then name (`ExistingRequiredResourcesFetcher`).
    pub fn exact(mut resources: Vec<Value>, openapi: Vec<Value>) -> FileResolver {
        let namespace = |r: &Value| str_at(r, &["metadata", "namespace"]).to_owned();
        resources.sort_by(|a, b| (namespace(a), name(a)).cmp(&(namespace(b), name(b))));
        FileResolver {
            resources,
            openapi,
            exact_namespace: true,
        }
    }

    fn engine_resources(&self, selector: &ResourceSelector) -> Resources {
        let wanted_namespace = selector.namespace.as_deref().unwrap_or("");
        let mut items = Vec::new();
        for resource in &self.resources {
            if str_at(resource, &["apiVersion"]) != selector.api_version
                || str_at(resource, &["kind"]) != selector.kind
            {
                continue;
            }
            let namespace = str_at(resource, &["metadata", "namespace"]);
            match &selector.match_ {
                Some(ResourceMatch::MatchName(n)) => {
                    if n == name(resource) && namespace == wanted_namespace {
                        return Resources {
                            items: vec![ResourceObject::from_json(resource)],
                        };
                    }
                }
                Some(ResourceMatch::MatchLabels(labels)) => {
                    let in_namespace = wanted_namespace.is_empty() || namespace == wanted_namespace;
                    let matches = labels.labels.iter().all(|(k, v)| {
                        value_at(resource, &["metadata", "labels", k]).and_then(Value::as_str)
                            == Some(v.as_str())
                    });
                    if in_namespace && matches {
                        items.push(ResourceObject::from_json(resource));
                    }
                }
                None => {}
            }
        }
        Resources { items }
    }
}

impl Resolver for FileResolver {
    fn resources(&self, selector: &ResourceSelector) -> Result<Resources, String> {
        if self.exact_namespace {
            return Ok(self.engine_resources(selector));
        }
        let mut items = Vec::new();
        for resource in &self.resources {
            if str_at(resource, &["apiVersion"]) != selector.api_version
                || str_at(resource, &["kind"]) != selector.kind
            {
                continue;
            }
            // As classic render does, a name match ignores the namespace and
            // wins outright.
            let wanted_name = match &selector.match_ {
                Some(ResourceMatch::MatchName(n)) => n.as_str(),
                _ => "",
            };
            if wanted_name == name(resource) {
                return Ok(Resources {
                    items: vec![ResourceObject::from_json(resource)],
                });
            }
            if let Some(ResourceMatch::MatchLabels(labels)) = &selector.match_ {
                let matches = labels.labels.iter().all(|(k, v)| {
                    value_at(resource, &["metadata", "labels", k]).and_then(Value::as_str)
                        == Some(v.as_str())
                });
                if matches {
                    items.push(ResourceObject::from_json(resource));
                }
            }
        }
        Ok(Resources { items })
    }

    fn schema(&self, selector: &SchemaSelector) -> Result<Schema, String> {
        let (group, version) = match selector.api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", selector.api_version.as_str()),
        };
        for document in &self.openapi {
            let Some(schemas) =
                value_at(document, &["components", "schemas"]).and_then(Value::as_object)
            else {
                continue;
            };
            for schema in schemas.values() {
                let gvks = schema
                    .get("x-kubernetes-group-version-kind")
                    .and_then(Value::as_array);
                let [gvk] = gvks.map(Vec::as_slice).unwrap_or_default() else {
                    continue;
                };
                if str_at(gvk, &["group"]) == group
                    && str_at(gvk, &["version"]) == version
                    && str_at(gvk, &["kind"]) == selector.kind
                {
                    let flat = inline_refs(schema, schemas, 0);
                    return Ok(Schema {
                        openapi_v3: Some(flat.to_string()),
                    });
                }
            }
        }
        Ok(Schema { openapi_v3: None })
    }
}

/// Replaces `$ref: "#/components/schemas/X"` with the schema it names,
/// to a bounded depth (recursive schemas stay as references past it).
fn inline_refs(schema: &Value, schemas: &serde_json::Map<String, Value>, depth: usize) -> Value {
    const MAX_DEPTH: usize = 32;
    match schema {
        Value::Object(map) => {
            if let Some(target) = map.get("$ref").and_then(Value::as_str)
                && let Some(named) = target
                    .strip_prefix("#/components/schemas/")
                    .and_then(|n| schemas.get(n))
                && depth < MAX_DEPTH
            {
                return inline_refs(named, schemas, depth + 1);
            }
            Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), inline_refs(v, schemas, depth)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| inline_refs(v, schemas, depth))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::MatchLabels;
    use serde_json::json;

    fn resolver() -> FileResolver {
        FileResolver::new(
            vec![
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b", "labels": {"app": "x"}}}),
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "labels": {"app": "x"}}}),
                json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "a"}}),
            ],
            vec![json!({"components": {"schemas": {
                "io.example.v1.XR": {"type": "object", "properties": {"spec": {"$ref": "#/components/schemas/Spec"}},
                                      "x-kubernetes-group-version-kind": [{"group": "example.io", "version": "v1", "kind": "XR"}]},
                "Spec": {"type": "object"}
            }}})],
        )
    }

    fn names(resources: &Resources) -> Vec<String> {
        resources
            .items
            .iter()
            .map(|r| {
                let v: Value =
                    serde_json::from_str(r.resource.as_deref().unwrap_or("{}")).unwrap_or_default();
                name(&v).to_owned()
            })
            .collect()
    }

    fn selector(kind: &str, m: Option<ResourceMatch>) -> ResourceSelector {
        ResourceSelector {
            api_version: "v1".into(),
            kind: kind.into(),
            match_: m,
            namespace: None,
        }
    }

    #[test]
    fn matches_by_name_and_kind() {
        let got = resolver()
            .resources(&selector(
                "Secret",
                Some(ResourceMatch::MatchName("a".into())),
            ))
            .expect("ok");
        assert_eq!(names(&got), ["a"]);
        let got = resolver()
            .resources(&selector(
                "Secret",
                Some(ResourceMatch::MatchName("z".into())),
            ))
            .expect("ok");
        assert!(got.items.is_empty());
    }

    #[test]
    fn matches_by_labels_in_name_order() {
        let labels = MatchLabels {
            labels: vec![("app".into(), "x".into())],
        };
        let got = resolver()
            .resources(&selector(
                "ConfigMap",
                Some(ResourceMatch::MatchLabels(labels)),
            ))
            .expect("ok");
        assert_eq!(names(&got), ["a", "b"]);
    }

    #[test]
    fn finds_schemas_by_group_version_kind_and_inlines_references() {
        let got = resolver()
            .schema(&SchemaSelector {
                api_version: "example.io/v1".into(),
                kind: "XR".into(),
            })
            .expect("ok");
        let schema: Value =
            serde_json::from_str(got.openapi_v3.as_deref().unwrap_or("null")).expect("json");
        assert_eq!(schema["properties"]["spec"], json!({"type": "object"}));
        let missing = resolver().schema(&SchemaSelector {
            api_version: "example.io/v1".into(),
            kind: "Nope".into(),
        });
        assert_eq!(missing, Ok(Schema { openapi_v3: None }));
    }
}
