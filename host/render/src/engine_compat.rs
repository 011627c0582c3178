//! What the Crossplane engine (`crossplane internal render`, core at
//! 2d040d2) does to the inputs before it runs the pipeline: it picks the
//! XR's schema from the XRD's scope, gives the XR an identity, checks the
//! observed resources, and stores the XR as its reconciler has it when the
//! functions are called.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::Inputs;
use super::RenderError;
use super::object::{name, object_at, str_at, value_at};
use super::output::{COMPOSITE_LABEL, COMPOSITION_RESOURCE_NAME, condition, set_conditions};

/// Where the XR keeps Crossplane's fields (`internal/render/composite/render.go`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schema {
    /// `spec.resourceRefs`, `spec.compositionRef`: an XRD of scope
    /// `LegacyCluster` (a v1 XRD's default).
    Legacy,
    /// `spec.crossplane.resourceRefs`, `spec.crossplane.compositionRef`.
    Modern,
}

impl Schema {
    /// The path of a Crossplane field such as `resourceRefs`.
    pub fn path(self, field: &'static str) -> Vec<&'static str> {
        match self {
            Schema::Legacy => vec!["spec", field],
            Schema::Modern => vec!["spec", "crossplane", field],
        }
    }
}

/// The XR as the engine prepares it.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The schema its fields follow.
    pub schema: Schema,
    /// Its UID: the input's, else a UUIDv5 of its identity.
    pub uid: String,
    /// The XR the functions observe.
    pub observed_xr: Value,
    /// Observed composed resources, by composition resource name.
    pub observed: BTreeMap<String, Value>,
}

/// The schema: Legacy only for an XRD of scope `LegacyCluster`, which must
/// define the XR's group and kind.
pub fn schema(xr: &Value, xrd: Option<&Value>) -> Result<Schema, RenderError> {
    let Some(xrd) = xrd else {
        return Ok(Schema::Modern);
    };
    let group = str_at(xr, &["apiVersion"])
        .rsplit_once('/')
        .map_or("", |(g, _)| g);
    let (xrd_group, xrd_kind) = (
        str_at(xrd, &["spec", "group"]),
        str_at(xrd, &["spec", "names", "kind"]),
    );
    if xrd_group != group || xrd_kind != str_at(xr, &["kind"]) {
        return Err(RenderError::Invalid(format!(
            "XRD {:?} defines {xrd_kind}.{xrd_group}, not the XR's kind {}.{group}",
            name(xrd),
            str_at(xr, &["kind"]),
        )));
    }
    let scope = match str_at(xrd, &["spec", "scope"]) {
        "" if str_at(xrd, &["apiVersion"]) == "apiextensions.crossplane.io/v1" => "LegacyCluster",
        "" => "Namespaced",
        scope => scope,
    };
    Ok(if scope == "LegacyCluster" {
        Schema::Legacy
    } else {
        Schema::Modern
    })
}

/// The UID the engine gives an XR without one: UUIDv5 in the nil
/// namespace of `<group/version, Kind=Kind>\0<namespace>\0<name>`.
pub fn fake_uid(xr: &Value) -> String {
    let api_version = str_at(xr, &["apiVersion"]);
    let identity = format!(
        "{api_version}, Kind={}\0{}\0{}",
        str_at(xr, &["kind"]),
        str_at(xr, &["metadata", "namespace"]),
        name(xr)
    );
    uuid::Uuid::new_v5(&uuid::Uuid::nil(), identity.as_bytes()).to_string()
}

/// Prepares the XR and checks the observed resources as the engine does.
pub fn prepare(inputs: &Inputs) -> Result<Prepared, RenderError> {
    let schema = schema(&inputs.composite, inputs.xrd.as_ref())?;
    let xr = &inputs.composite;
    let uid = match str_at(xr, &["metadata", "uid"]) {
        "" => fake_uid(xr),
        uid => uid.to_owned(),
    };
    let xr_namespace = str_at(xr, &["metadata", "namespace"]);
    let mut observed = BTreeMap::new();
    for resource in &inputs.observed {
        let resource_name = str_at(
            resource,
            &["metadata", "annotations", COMPOSITION_RESOURCE_NAME],
        );
        if resource_name.is_empty() {
            return Err(RenderError::Invalid(format!(
                "cannot render composite resource: cannot compose resources: encountered composed resource {:?} without required {COMPOSITION_RESOURCE_NAME:?} annotation",
                name(resource)
            )));
        }
        if let Some(controller) = controller_of(resource)
            && str_at(controller, &["uid"]) != uid
        {
            return Err(RenderError::Invalid(format!(
                "observed resource {resource_name:?} is controlled by {} {} (UID {}), not by the XR (UID {uid})",
                str_at(controller, &["kind"]),
                str_at(controller, &["name"]),
                str_at(controller, &["uid"]),
            )));
        }
        let namespace = str_at(resource, &["metadata", "namespace"]);
        if !xr_namespace.is_empty() && namespace != xr_namespace {
            return Err(RenderError::Invalid(format!(
                "observed resource {resource_name:?} is in namespace {namespace:?}, not in the XR's namespace {xr_namespace:?}"
            )));
        }
        observed.insert(resource_name.to_owned(), resource.clone());
    }

    let mut observed_xr = xr.clone();
    let metadata = object_at(&mut observed_xr, &["metadata"]);
    metadata.insert("uid".into(), json!(uid));
    metadata.insert("resourceVersion".into(), json!("999"));
    let labels = object_at(&mut observed_xr, &["metadata", "labels"]);
    if labels
        .get(COMPOSITE_LABEL)
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        labels.insert(COMPOSITE_LABEL.into(), json!(name(xr)));
    }
    set_at(
        &mut observed_xr,
        &schema.path("compositionRef"),
        json!({"name": name(&inputs.composition)}),
    );
    // Without observed resources the engine leaves the XR's refs alone.
    if !inputs.observed.is_empty() {
        let refs = injected_resource_refs(inputs.observed.iter(), xr_namespace.is_empty());
        set_at(&mut observed_xr, &schema.path("resourceRefs"), refs);
    }
    set_conditions(
        &mut observed_xr,
        &[condition("Responsive", "True", "WatchCircuitClosed", "")],
    );
    Ok(Prepared {
        schema,
        uid,
        observed_xr,
        observed,
    })
}

/// The controller reference of an object, if it has one.
pub fn controller_of(object: &Value) -> Option<&Value> {
    value_at(object, &["metadata", "ownerReferences"])
        .and_then(Value::as_array)?
        .iter()
        .find(|r| r.get("controller") == Some(&Value::Bool(true)))
}

/// References to `resources` in the order core's `UpdateResourceRefs`
/// (`internal/controller/apiextensions/composite/composition_functions.go`)
/// leaves them: sorted by the concatenation apiVersion + kind + name +
/// namespace, compared byte for byte, so `BucketACL` sorts before `Bucket`
/// when the names start with a lower-case letter. A namespace only for a
/// cluster-scoped XR (core e1c698028). Core's sort isn't stable and its
/// input is in Go map order; refs whose concatenations are equal (kinds and
/// names that split the same text differently) keep the field order here.
pub fn resource_refs<'a>(
    resources: impl Iterator<Item = &'a Value>,
    cluster_scoped_xr: bool,
) -> Value {
    let mut refs: Vec<ObjectRef> = resources
        .map(|r| ObjectRef::of(r, cluster_scoped_xr))
        .collect();
    refs.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()).then_with(|| a.cmp(b)));
    Value::Array(refs.into_iter().map(ObjectRef::into_value).collect())
}

/// References to the observed resources as the engine injects them before
/// the reconcile (`InjectResourceRefs` in `internal/render/composite`): in
/// the order they were given, unsorted.
pub fn injected_resource_refs<'a>(
    resources: impl Iterator<Item = &'a Value>,
    cluster_scoped_xr: bool,
) -> Value {
    Value::Array(
        resources
            .map(|r| ObjectRef::of(r, cluster_scoped_xr).into_value())
            .collect(),
    )
}

/// An XR's reference to a composed resource.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct ObjectRef {
    api_version: String,
    kind: String,
    name: String,
    namespace: String,
}

impl ObjectRef {
    fn of(resource: &Value, cluster_scoped_xr: bool) -> ObjectRef {
        ObjectRef {
            api_version: str_at(resource, &["apiVersion"]).to_owned(),
            kind: str_at(resource, &["kind"]).to_owned(),
            name: name(resource).to_owned(),
            namespace: if cluster_scoped_xr {
                str_at(resource, &["metadata", "namespace"]).to_owned()
            } else {
                String::new()
            },
        }
    }

    /// Core's sort key: the four fields run together.
    fn sort_key(&self) -> String {
        [
            self.api_version.as_str(),
            &self.kind,
            &self.name,
            &self.namespace,
        ]
        .concat()
    }

    fn into_value(self) -> Value {
        let mut r = json!({"apiVersion": self.api_version, "kind": self.kind, "name": self.name});
        if !self.namespace.is_empty() {
            r["namespace"] = json!(self.namespace);
        }
        r
    }
}

/// Sets the value at a path of object keys, creating objects on the way.
pub fn set_at(object: &mut Value, path: &[&str], value: Value) {
    if let Some((last, parents)) = path.split_last() {
        object_at(object, parents).insert((*last).to_owned(), value);
    }
}

/// crossplane's `ChildName`: `generateName` (with one trailing `-`) and the
/// first 12 hex digits of sha256(owner UID + resource name), the parent cut
/// so the whole is at most 63 characters.
pub fn child_name(generate_name: &str, owner_uid: &str, resource_name: &str) -> String {
    use sha2::Digest as _;
    const MAX: usize = 63;
    const HASH: usize = 12;
    let digest = sha2::Sha256::digest(format!("{owner_uid}{resource_name}").as_bytes());
    let hash: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    let mut parent = generate_name.trim_end_matches('-').to_owned();
    let room = MAX - HASH - 1;
    if parent.len() > room {
        let mut cut = room;
        while !parent.is_char_boundary(cut) {
            cut -= 1;
        }
        parent.truncate(cut);
    }
    format!("{parent}-{}", &hash[..HASH])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fake_uid_and_child_names_are_the_engines() {
        let xr = json!({"apiVersion": "nop.example.org/v1alpha1", "kind": "XNopResource", "metadata": {"name": "test-render"}});
        let uid = fake_uid(&xr);
        assert_eq!(uid, "60aa46dc-5505-53e4-a362-4d602bb8f73e");
        assert_eq!(
            child_name("test-render-", &uid, "a-cool-resource"),
            "test-render-938725372794"
        );
        assert_eq!(
            child_name("test-render-", &uid, "b-cool-resource"),
            "test-render-c59170cd0135"
        );
        let long = child_name(&format!("{}-", "x".repeat(70)), &uid, "r");
        assert_eq!(long.len(), 63);
        assert!(long.starts_with(&"x".repeat(50)), "{long}");
    }

    fn composed(kind: &str, name: &str) -> Value {
        json!({"apiVersion": "s3.aws.upbound.io/v1beta1", "kind": kind,
               "metadata": {"name": name, "namespace": "ns"}})
    }

    fn ref_kinds(refs: &Value) -> Vec<&str> {
        refs.as_array()
            .into_iter()
            .flatten()
            .map(|r| str_at(r, &["kind"]))
            .collect()
    }

    #[test]
    fn refs_sort_by_the_concatenated_key_as_core_does() {
        // After the common "Bucket", the keys go on with 'A' (0x41), 'P'
        // (0x50) and the name's 'm' (0x6d): BucketACL, BucketPolicy, Bucket.
        // A (kind, name) tuple would put Bucket first.
        let resources = [
            composed("Bucket", "my-xr-1d2c3b4a5f6e"),
            composed("BucketPolicy", "my-xr-0a1b2c3d4e5f"),
            composed("BucketACL", "my-xr-9f8e7d6c5b4a"),
        ];
        let refs = resource_refs(resources.iter(), false);
        assert_eq!(ref_kinds(&refs), ["BucketACL", "BucketPolicy", "Bucket"]);
        assert_eq!(
            refs[0],
            json!({"apiVersion": "s3.aws.upbound.io/v1beta1", "kind": "BucketACL", "name": "my-xr-9f8e7d6c5b4a"})
        );
        // A cluster-scoped XR's refs carry the namespace, last in the key.
        let refs = resource_refs(resources.iter(), true);
        assert_eq!(refs[2]["namespace"], json!("ns"));
        // A name that starts with a digit ('0' is 0x30) sorts before the
        // longer kind's "ACL".
        let resources = [composed("BucketACL", "a"), composed("Bucket", "0-bucket")];
        let refs = resource_refs(resources.iter(), false);
        assert_eq!(ref_kinds(&refs), ["Bucket", "BucketACL"]);
    }

    #[test]
    fn observed_refs_keep_the_input_order_and_none_leave_the_xrs_own() {
        let xr = json!({"apiVersion": "nop.example.org/v1alpha1", "kind": "XNopResource",
                        "metadata": {"name": "x", "uid": "u"},
                        "spec": {"crossplane": {"resourceRefs": [{"apiVersion": "v1", "kind": "Secret", "name": "kept"}]}}});
        let observed = |kind: &str, resource: &str| {
            let mut o = composed(kind, &format!("x-{resource}"));
            o["metadata"]["annotations"] = json!({COMPOSITION_RESOURCE_NAME: resource});
            if let Some(metadata) = o["metadata"].as_object_mut() {
                metadata.remove("namespace");
            }
            o
        };
        let inputs = Inputs {
            composite: xr.clone(),
            observed: vec![observed("BucketPolicy", "b"), observed("Bucket", "a")],
            ..Inputs::default()
        };
        let prepared = prepare(&inputs).expect("prepared");
        let refs = value_at(
            &prepared.observed_xr,
            &["spec", "crossplane", "resourceRefs"],
        )
        .cloned()
        .unwrap_or_default();
        assert_eq!(ref_kinds(&refs), ["BucketPolicy", "Bucket"]);

        let inputs = Inputs {
            composite: xr,
            ..Inputs::default()
        };
        let prepared = prepare(&inputs).expect("prepared");
        assert_eq!(
            prepared.observed_xr["spec"]["crossplane"]["resourceRefs"],
            json!([{"apiVersion": "v1", "kind": "Secret", "name": "kept"}])
        );
    }

    #[test]
    fn the_schema_follows_the_xrds_scope() {
        let xr = json!({"apiVersion": "example.org/v1", "kind": "XB", "metadata": {"name": "b"}});
        let xrd = |api: &str, scope: Option<&str>| {
            let mut x = json!({"apiVersion": api, "metadata": {"name": "xbs.example.org"},
                               "spec": {"group": "example.org", "names": {"kind": "XB"}}});
            if let Some(s) = scope {
                x["spec"]["scope"] = json!(s);
            }
            x
        };
        assert_eq!(schema(&xr, None).ok(), Some(Schema::Modern));
        let v1 = xrd("apiextensions.crossplane.io/v1", None);
        assert_eq!(schema(&xr, Some(&v1)).ok(), Some(Schema::Legacy));
        let v2 = xrd("apiextensions.crossplane.io/v2", None);
        assert_eq!(schema(&xr, Some(&v2)).ok(), Some(Schema::Modern));
        let legacy = xrd("apiextensions.crossplane.io/v2", Some("LegacyCluster"));
        assert_eq!(schema(&xr, Some(&legacy)).ok(), Some(Schema::Legacy));
        let other = json!({"apiVersion": "example.org/v1", "kind": "XOther"});
        assert!(schema(&other, Some(&v1)).is_err());
    }
}
