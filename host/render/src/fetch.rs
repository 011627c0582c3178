//! Resolving what functions require from the files given to render, as
//! classic `crossplane render`'s in-memory fetchers do, or as the engine's
//! fake client answers (namespaces matched exactly).

use serde_json::Value;

use super::object::{name, str_at, value_at};
use xfn_runtime::pipeline::Resolver;
use xfn_runtime::protocol::{
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
                    let flat = inline_refs(schema, schemas).map_err(|reason| {
                        format!(
                            "the schema of {} {}: {reason}",
                            selector.api_version, selector.kind
                        )
                    })?;
                    return Ok(Schema {
                        openapi_v3: Some(flat.to_string()),
                    });
                }
            }
        }
        Ok(Schema { openapi_v3: None })
    }
}

/// How many `$ref`s deep a schema is inlined; deeper ones stay references.
const MAX_INLINE_DEPTH: usize = 32;

/// Most JSON values an inlined schema may have: 1,048,576 (tens of MiB of
/// JSON). Kubernetes' own `JSONSchemaProps` refers to itself a dozen
/// times, so inlining it 32 levels deep would take gigabytes.
pub const MAX_INLINED_VALUES: usize = 1 << 20;

/// Replaces `$ref: "#/components/schemas/X"` with the schema it names, to
/// a bounded depth: a reference to a schema already being inlined around
/// it (a recursive schema) stays a reference, as do references past
/// [`MAX_INLINE_DEPTH`]. A schema that still inlines to more than
/// [`MAX_INLINED_VALUES`] values is refused.
fn inline_refs(schema: &Value, schemas: &serde_json::Map<String, Value>) -> Result<Value, String> {
    let mut inliner = Inliner {
        schemas,
        open: Vec::new(),
        values: 0,
    };
    inliner.inline(schema)
}

/// The state of [`inline_refs`].
struct Inliner<'a> {
    schemas: &'a serde_json::Map<String, Value>,
    /// The schemas being inlined, outermost first.
    open: Vec<&'a str>,
    /// Values produced so far.
    values: usize,
}

impl<'a> Inliner<'a> {
    fn inline(&mut self, schema: &'a Value) -> Result<Value, String> {
        self.values += 1;
        if self.values > MAX_INLINED_VALUES {
            return Err(format!(
                "the schema inlines to more than {MAX_INLINED_VALUES} values through its $refs"
            ));
        }
        match schema {
            Value::Object(map) => {
                if let Some((name, named)) = map
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|target| target.strip_prefix("#/components/schemas/"))
                    .and_then(|name| self.schemas.get_key_value(name))
                    && self.open.len() < MAX_INLINE_DEPTH
                    && !self.open.contains(&name.as_str())
                {
                    self.open.push(name);
                    let inlined = self.inline(named);
                    self.open.pop();
                    return inlined;
                }
                let mut out = serde_json::Map::new();
                for (key, value) in map {
                    out.insert(key.clone(), self.inline(value)?);
                }
                Ok(Value::Object(out))
            }
            Value::Array(items) => items
                .iter()
                .map(|item| self.inline(item))
                .collect::<Result<_, _>>()
                .map(Value::Array),
            other => Ok(other.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use xfn_runtime::protocol::MatchLabels;

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

    fn openapi(schemas: Value) -> FileResolver {
        FileResolver::new(
            Vec::new(),
            vec![json!({"components": {"schemas": schemas}})],
        )
    }

    fn xr_schema(resolver: &FileResolver) -> Result<Value, String> {
        let got = resolver.schema(&SchemaSelector {
            api_version: "example.io/v1".into(),
            kind: "XR".into(),
        })?;
        Ok(serde_json::from_str(got.openapi_v3.as_deref().unwrap_or("null")).expect("json"))
    }

    const GVK: &str = "x-kubernetes-group-version-kind";

    /// The attack round's M2: a 2.8 KB schema shaped like Kubernetes'
    /// `JSONSchemaProps` (which refers to itself) took render past 4 GB,
    /// inlined 32 levels deep. A recursive reference now stays one.
    #[test]
    fn recursive_references_stay_references() {
        let props = |n: usize| -> Value {
            (0..n)
                .map(|i| {
                    (
                        format!("p{i}"),
                        json!({"$ref": "#/components/schemas/Props"}),
                    )
                })
                .collect::<serde_json::Map<_, _>>()
                .into()
        };
        let resolver = openapi(json!({
            "XR": {"type": "object", "properties": {"spec": {"$ref": "#/components/schemas/Props"}},
                   GVK: [{"group": "example.io", "version": "v1", "kind": "XR"}]},
            "Props": {"type": "object", "properties": props(12)}
        }));
        let schema = xr_schema(&resolver).expect("inlined");
        assert_eq!(
            schema["properties"]["spec"]["properties"]["p3"],
            json!({"$ref": "#/components/schemas/Props"})
        );
    }

    /// A schema that branches without recursing is inlined whole, unless
    /// it grows past the bound.
    #[test]
    fn exponential_inlining_is_refused() {
        let mut schemas = serde_json::Map::new();
        schemas.insert(
            "XR".into(),
            json!({"$ref": "#/components/schemas/L0", GVK: [{"group": "example.io", "version": "v1", "kind": "XR"}]}),
        );
        for level in 0..30 {
            let next = format!("#/components/schemas/L{}", level + 1);
            schemas.insert(
                format!("L{level}"),
                json!({"properties": {"a": {"$ref": next}, "b": {"$ref": next}}}),
            );
        }
        schemas.insert("L30".into(), json!({"type": "string"}));
        let err = xr_schema(&openapi(Value::Object(schemas.clone()))).expect_err("refused");
        assert_eq!(
            err,
            "the schema of example.io/v1 XR: the schema inlines to more than 1048576 values through its $refs"
        );
        // Ten levels (2^10 leaves) are fine.
        schemas.insert("L10".into(), json!({"type": "string"}));
        let schema = xr_schema(&openapi(Value::Object(schemas))).expect("inlined");
        assert_eq!(
            schema["properties"]["a"]["properties"]["b"]["properties"]["a"]["properties"]["a"]["properties"]
                ["b"]["properties"]["a"]["properties"]["a"]["properties"]["a"]["properties"]["b"]["properties"]
                ["b"],
            json!({"type": "string"})
        );
    }
}
