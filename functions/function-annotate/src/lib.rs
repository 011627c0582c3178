//! `function-annotate`: an operation function that annotates and labels
//! the resources an Operation requires.
//!
//! Its natural home is a WatchOperation: Crossplane gives every step of the
//! Operation it creates the watched object under the requirement
//! `ops.crossplane.io/watched-resource`, and this function stamps that
//! object, for example with the value of one of its fields:
//!
//! ```yaml
//! input:
//!   apiVersion: annotate.fn.xfn.dev/v1alpha1
//!   kind: Input
//!   annotations:
//!     example.org/reviewed: "true"
//!   fromFieldPaths:
//!     example.org/seen-generation: metadata.generation
//! ```
//!
//! For every resource of the requirement it returns a desired resource that
//! holds only the object's identity and the new metadata, so that
//! Crossplane's server-side apply changes those fields and nothing else. The
//! step's `output` lists what it annotated, which `xfn operation render` and
//! Crossplane show in the Operation's `status.pipeline`.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value, json};
use xfn_sdk::{Function, Request, Resource, Response, fieldpath};

/// The requirement a WatchOperation fills with the watched resource.
pub const WATCHED_RESOURCE: &str = "ops.crossplane.io/watched-resource";

/// The function's input (`annotate.fn.xfn.dev/v1alpha1`, kind `Input`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Input {
    #[serde(rename = "apiVersion", default)]
    _api_version: Option<String>,
    #[serde(rename = "kind", default)]
    _kind: Option<String>,
    /// The requirement whose resources to annotate (default: the watched resource).
    #[serde(default)]
    pub requirement: Option<String>,
    /// Annotations to set, as they are.
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
    /// Labels to set, as they are.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Annotations to set from a field of each resource: annotation key to
    /// field path (`metadata.generation`, `spec.replicas`, `data[key]`).
    #[serde(default)]
    pub from_field_paths: BTreeMap<String, String>,
}

impl Input {
    fn requirement(&self) -> &str {
        self.requirement.as_deref().unwrap_or(WATCHED_RESOURCE)
    }

    fn is_empty(&self) -> bool {
        self.annotations.is_empty() && self.labels.is_empty() && self.from_field_paths.is_empty()
    }
}

/// The annotate function.
pub struct Annotate;

impl Function for Annotate {
    fn run(req: &Request) -> Result<Response, xfn_sdk::Error> {
        let mut rsp = Response::to(req);
        let input: Input = match req.input() {
            Ok(input) => input,
            Err(e) => {
                rsp.fatal(format!("invalid input: {e}"));
                return Ok(rsp);
            }
        };
        if input.is_empty() {
            rsp.fatal("nothing to do: the input sets no annotations, labels or fromFieldPaths");
            return Ok(rsp);
        }
        let requirement = input.requirement();
        let Some(resources) = req.required_resources(requirement) else {
            rsp.fatal(format!(
                "this step was given no resources under the requirement {requirement:?}: \
                 add a requiredResources entry with that requirementName to the step's \
                 requirements (a WatchOperation adds {WATCHED_RESOURCE:?} itself), or set \
                 the input's `requirement`"
            ));
            return Ok(rsp);
        };

        let mut annotated = Vec::new();
        for resource in resources {
            let Some(object) = resource.resource.as_ref() else {
                continue;
            };
            let object = Value::Object(object.clone());
            let identity = Identity::of(&object);
            let mut annotations = input.annotations.clone();
            for (key, path) in &input.from_field_paths {
                match fieldpath::get(&object, path) {
                    Ok(value) => {
                        annotations.insert(key.clone(), annotation_text(value));
                    }
                    Err(e) => {
                        rsp.warning(format!(
                            "{identity}: annotation {key:?} not set: cannot read {path:?}: {}",
                            e.message()
                        ));
                    }
                }
            }
            let key = identity.key();
            let earlier = rsp
                .desired
                .as_ref()
                .and_then(|d| d.resources.get(&key))
                .and_then(|r| r.resource.clone());
            let patch = identity.patch(earlier, &annotations, &input.labels);
            rsp.set_desired_composed(key, patch);
            annotated.push(Value::String(identity.to_string()));
        }

        let count = annotated.len();
        rsp.normal(match count {
            1 => "annotated 1 resource".to_owned(),
            n => format!("annotated {n} resources"),
        })
        .reason("Annotated");
        let output = json!({ "annotated": annotated, "count": count });
        if let Value::Object(output) = output {
            rsp.set_output(output);
        }
        Ok(rsp)
    }
}

xfn_sdk::export!(Annotate);

/// A field's value as annotation text: strings as they are, anything else
/// as JSON (`3`, `true`, `{"a":1}`).
fn annotation_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// What names one Kubernetes object.
struct Identity {
    api_version: String,
    kind: String,
    namespace: Option<String>,
    name: String,
}

impl Identity {
    fn of(object: &Value) -> Identity {
        let text = |path: &str| {
            fieldpath::get_string(object, path)
                .map(str::to_owned)
                .unwrap_or_default()
        };
        let namespace = text("metadata.namespace");
        Identity {
            api_version: text("apiVersion"),
            kind: text("kind"),
            namespace: (!namespace.is_empty()).then_some(namespace),
            name: text("metadata.name"),
        }
    }

    /// The desired resource's key: unique per object.
    fn key(&self) -> String {
        format!(
            "{}/{}/{}/{}",
            self.api_version,
            self.kind,
            self.namespace.as_deref().unwrap_or(""),
            self.name
        )
    }

    /// The object to apply: its identity and the new metadata, merged over
    /// what an earlier step already asked for the same object.
    fn patch(
        &self,
        earlier: Option<Map<String, Value>>,
        annotations: &BTreeMap<String, String>,
        labels: &BTreeMap<String, String>,
    ) -> Resource {
        let mut object = earlier.unwrap_or_default();
        object.insert("apiVersion".into(), self.api_version.clone().into());
        object.insert("kind".into(), self.kind.clone().into());
        let metadata = object_entry(&mut object, "metadata");
        metadata.insert("name".into(), self.name.clone().into());
        if let Some(namespace) = &self.namespace {
            metadata.insert("namespace".into(), namespace.clone().into());
        }
        for (field, values) in [("annotations", annotations), ("labels", labels)] {
            if values.is_empty() {
                continue;
            }
            let entries = object_entry(metadata, field);
            for (k, v) in values {
                entries.insert(k.clone(), v.clone().into());
            }
        }
        Resource::from_object(object)
    }
}

impl std::fmt::Display for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {ns}/{}", self.kind, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// The object at `key`, made one if it is missing or not an object.
fn object_entry<'a>(object: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let entry = object
        .entry(key)
        .or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    entry
        .as_object_mut()
        .expect("the entry was made an object above")
}

#[cfg(test)]
mod tests;
