//! Getters and setters on a [`Resource`], after function-sdk-go's
//! `composed.Unstructured` and the Python SDK's `resource` module.
//!
//! Reads borrow from the resource: [`Resource::get_value`] returns a
//! reference, [`Resource::get_string`] a `&str`, and
//! [`Resource::get_value_into`] decodes straight from the borrowed value.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::fieldpath::{self, FieldPathError, MergeOptions};
use crate::{ConditionStatus, Error, Object, Resource};

impl Resource {
    /// An empty resource, like function-sdk-go's `composed.New()`.
    ///
    /// ```
    /// let mut bucket = xfn_sdk::Resource::new();
    /// bucket.set_api_version("s3.aws.upbound.io/v1beta1").set_kind("Bucket");
    /// assert_eq!(bucket.kind(), Some("Bucket"));
    /// ```
    pub fn new() -> Resource {
        Resource::from_object(Object::new())
    }

    /// A resource holding `object`, with no connection details and no
    /// opinion on readiness.
    ///
    /// ```
    /// let object = serde_json::json!({"kind": "Bucket"});
    /// let r = xfn_sdk::Resource::from_object(object.as_object().unwrap().clone());
    /// assert_eq!(r.kind(), Some("Bucket"));
    /// ```
    pub fn from_object(object: Object) -> Resource {
        Resource {
            resource: Some(object),
            ..Resource::default()
        }
    }

    /// A resource made from a typed value, like function-sdk-go's
    /// `composed.From` and `resource.AsStruct`.
    ///
    /// Fields that serialize to `null` (a `None` without
    /// `skip_serializing_if`) are left out of objects, so the function
    /// states only the fields it has an opinion about, as the Python SDK's
    /// `update` does with `exclude_unset`. `value` must serialize to an
    /// object.
    ///
    /// ```
    /// #[derive(serde::Serialize)]
    /// #[serde(rename_all = "camelCase")]
    /// struct Bucket { api_version: &'static str, kind: &'static str, spec: Spec }
    /// #[derive(serde::Serialize)]
    /// struct Spec { region: Option<String>, acl: Option<String> }
    ///
    /// let bucket = Bucket {
    ///     api_version: "s3.aws.upbound.io/v1beta1",
    ///     kind: "Bucket",
    ///     spec: Spec { region: Some("eu-west-1".into()), acl: None },
    /// };
    /// let r = xfn_sdk::Resource::from_typed(&bucket).unwrap();
    /// assert_eq!(r.get_string("spec.region").unwrap(), "eu-west-1");
    /// assert!(r.get_value("spec.acl").unwrap_err().is_not_found());
    /// ```
    pub fn from_typed<T: Serialize + ?Sized>(value: &T) -> Result<Resource, Error> {
        match serde_json::to_value(value) {
            Ok(Value::Object(mut object)) => {
                drop_null_fields(&mut object);
                Ok(Resource::from_object(object))
            }
            Ok(other) => Err(format!(
                "cannot make a resource from {}: want an object",
                fieldpath::go_type_name(&other)
            )
            .into()),
            Err(e) => Err(format!("cannot make a resource from a typed value: {e}").into()),
        }
    }

    /// The resource's object decoded as `T`, like function-sdk-go's
    /// `resource.AsObject`. The object is read in place, not copied; a
    /// decode error names the field that failed.
    ///
    /// ```
    /// #[derive(serde::Deserialize)]
    /// struct Bucket { spec: Spec }
    /// #[derive(serde::Deserialize)]
    /// struct Spec { region: String }
    ///
    /// let object = serde_json::json!({"spec": {"region": "eu-west-1"}});
    /// let r = xfn_sdk::Resource::from_object(object.as_object().unwrap().clone());
    /// let bucket: Bucket = r.to_typed().unwrap();
    /// assert_eq!(bucket.spec.region, "eu-west-1");
    ///
    /// let bad = serde_json::json!({"spec": {"region": 7}});
    /// let r = xfn_sdk::Resource::from_object(bad.as_object().unwrap().clone());
    /// let err = r.to_typed::<Bucket>().err().unwrap().to_string();
    /// assert!(err.contains("spec.region"), "{err}");
    /// ```
    pub fn to_typed<T: DeserializeOwned>(&self) -> Result<T, Error> {
        let object = self.resource.as_ref().unwrap_or(&EMPTY);
        crate::decode::from_map(object.iter())
            .map_err(|e| Error::from(format!("cannot decode resource: {e}")))
    }

    /// The resource's object, created empty if there is none.
    ///
    /// ```
    /// let mut r = xfn_sdk::Resource::default();
    /// r.object_mut().insert("kind".into(), "Bucket".into());
    /// assert_eq!(r.kind(), Some("Bucket"));
    /// ```
    pub fn object_mut(&mut self) -> &mut Object {
        self.resource.get_or_insert_with(Object::new)
    }

    /// Reads the value at a crossplane-runtime field path, such as
    /// `spec.forProvider.region`, borrowing it (Go's `GetValue`).
    ///
    /// ```
    /// let object = serde_json::json!({"spec": {"replicas": 3}});
    /// let r = xfn_sdk::Resource::from_object(object.as_object().unwrap().clone());
    /// assert_eq!(r.get_value("spec.replicas").unwrap(), 3);
    /// assert!(r.get_value("spec.missing").unwrap_err().is_not_found());
    /// ```
    pub fn get_value(&self, path: &str) -> Result<&Value, FieldPathError> {
        fieldpath::get_in(self.resource.as_ref().unwrap_or(&EMPTY), path)
    }

    /// Decodes the value at `path` as `T` (Go's `GetValueInto`), reading it
    /// in place.
    ///
    /// ```
    /// let object = serde_json::json!({"spec": {"ports": [80, 443]}});
    /// let r = xfn_sdk::Resource::from_object(object.as_object().unwrap().clone());
    /// let ports: Vec<u16> = r.get_value_into("spec.ports").unwrap();
    /// assert_eq!(ports, [80, 443]);
    /// ```
    pub fn get_value_into<T: DeserializeOwned>(&self, path: &str) -> Result<T, Error> {
        let value = self.get_value(path)?;
        crate::decode::from_value(value).map_err(|e| Error::from(format!("{path}: {e}")))
    }

    /// Reads a string (Go's `GetString`).
    ///
    /// ```
    /// let object = serde_json::json!({"spec": {"region": "eu-west-1"}});
    /// let r = xfn_sdk::Resource::from_object(object.as_object().unwrap().clone());
    /// assert_eq!(r.get_string("spec.region").unwrap(), "eu-west-1");
    /// ```
    pub fn get_string(&self, path: &str) -> Result<&str, FieldPathError> {
        match self.get_value(path)? {
            Value::String(s) => Ok(s),
            _ => Err(FieldPathError::invalid(format!("{path}: not a string"))),
        }
    }

    /// Reads a bool (Go's `GetBool`).
    ///
    /// ```
    /// let object = serde_json::json!({"spec": {"enabled": true}});
    /// let r = xfn_sdk::Resource::from_object(object.as_object().unwrap().clone());
    /// assert!(r.get_bool("spec.enabled").unwrap());
    /// ```
    pub fn get_bool(&self, path: &str) -> Result<bool, FieldPathError> {
        match self.get_value(path)? {
            Value::Bool(b) => Ok(*b),
            _ => Err(FieldPathError::invalid(format!("{path}: not a bool"))),
        }
    }

    /// Reads an integer (Go's `GetInteger`). As function-sdk-go's composed
    /// resources do, a float is accepted and truncated, since protobuf
    /// structs carry every number as a float.
    ///
    /// ```
    /// let object = serde_json::json!({"spec": {"replicas": 3, "ratio": 2.9}});
    /// let r = xfn_sdk::Resource::from_object(object.as_object().unwrap().clone());
    /// assert_eq!(r.get_integer("spec.replicas").unwrap(), 3);
    /// assert_eq!(r.get_integer("spec.ratio").unwrap(), 2);
    /// ```
    pub fn get_integer(&self, path: &str) -> Result<i64, FieldPathError> {
        let not_a_number = || FieldPathError::invalid(format!("{path}: not a (int64) number"));
        match self.get_value(path)? {
            Value::Number(n) => match n.as_i64() {
                Some(i) => Ok(i),
                // `as` saturates, as Go's conversion of an in-range float truncates.
                None => n.as_f64().map(|f| f as i64).ok_or_else(not_a_number),
            },
            _ => Err(not_a_number()),
        }
    }

    /// Reads an array of strings (Go's `GetStringArray`), borrowing them.
    ///
    /// ```
    /// let object = serde_json::json!({"spec": {"zones": ["a", "b"]}});
    /// let r = xfn_sdk::Resource::from_object(object.as_object().unwrap().clone());
    /// assert_eq!(r.get_string_array("spec.zones").unwrap(), ["a", "b"]);
    /// ```
    pub fn get_string_array(&self, path: &str) -> Result<Vec<&str>, FieldPathError> {
        let invalid = || FieldPathError::invalid(format!("{path}: not an array of strings"));
        let Value::Array(items) = self.get_value(path)? else {
            return Err(invalid());
        };
        items
            .iter()
            .map(|v| v.as_str().ok_or_else(invalid))
            .collect()
    }

    /// Reads an object of strings (Go's `GetStringObject`), borrowing them.
    ///
    /// ```
    /// let object = serde_json::json!({"data": {"a": "1"}});
    /// let r = xfn_sdk::Resource::from_object(object.as_object().unwrap().clone());
    /// assert_eq!(r.get_string_object("data").unwrap()["a"], "1");
    /// ```
    pub fn get_string_object(&self, path: &str) -> Result<BTreeMap<&str, &str>, FieldPathError> {
        let invalid =
            || FieldPathError::invalid(format!("{path}: not an object with string field values"));
        let Value::Object(fields) = self.get_value(path)? else {
            return Err(invalid());
        };
        fields
            .iter()
            .map(|(k, v)| Ok((k.as_str(), v.as_str().ok_or_else(invalid)?)))
            .collect()
    }

    /// Writes `value` at a field path, creating what is missing on the way
    /// (Go's `SetValue`).
    ///
    /// ```
    /// let mut r = xfn_sdk::Resource::new();
    /// r.set_value("spec.forProvider.region", "eu-west-1".into()).unwrap();
    /// assert_eq!(r.get_string("spec.forProvider.region").unwrap(), "eu-west-1");
    /// ```
    pub fn set_value(&mut self, path: &str, value: Value) -> Result<(), FieldPathError> {
        self.with_value(|object| fieldpath::set(object, path, value))
    }

    /// Writes a string (Go's `SetString`).
    ///
    /// ```
    /// let mut r = xfn_sdk::Resource::new();
    /// r.set_string("spec.region", "eu-west-1").unwrap();
    /// assert_eq!(r.get_string("spec.region").unwrap(), "eu-west-1");
    /// ```
    pub fn set_string(
        &mut self,
        path: &str,
        value: impl Into<String>,
    ) -> Result<(), FieldPathError> {
        self.set_value(path, Value::String(value.into()))
    }

    /// Writes a bool (Go's `SetBool`).
    ///
    /// ```
    /// let mut r = xfn_sdk::Resource::new();
    /// r.set_bool("spec.enabled", true).unwrap();
    /// assert!(r.get_bool("spec.enabled").unwrap());
    /// ```
    pub fn set_bool(&mut self, path: &str, value: bool) -> Result<(), FieldPathError> {
        self.set_value(path, Value::Bool(value))
    }

    /// Writes an integer (Go's `SetInteger`).
    ///
    /// ```
    /// let mut r = xfn_sdk::Resource::new();
    /// r.set_integer("spec.replicas", 3).unwrap();
    /// assert_eq!(r.get_integer("spec.replicas").unwrap(), 3);
    /// ```
    pub fn set_integer(&mut self, path: &str, value: i64) -> Result<(), FieldPathError> {
        self.set_value(path, Value::from(value))
    }

    /// Merges `value` into what is at `path` (crossplane-runtime's
    /// `Paved.MergeValue`; see [`fieldpath::merge_value`]).
    ///
    /// ```
    /// use xfn_sdk::fieldpath::MergeOptions;
    /// let object = serde_json::json!({"spec": {"tags": {"team": "a"}}});
    /// let mut r = xfn_sdk::Resource::from_object(object.as_object().unwrap().clone());
    /// let keep = MergeOptions { keep_map_values: true, ..MergeOptions::default() };
    /// r.merge_value("spec.tags", serde_json::json!({"team": "b", "env": "dev"}), Some(&keep))
    ///     .unwrap();
    /// assert_eq!(r.get_string("spec.tags.team").unwrap(), "a");
    /// assert_eq!(r.get_string("spec.tags.env").unwrap(), "dev");
    /// ```
    pub fn merge_value(
        &mut self,
        path: &str,
        value: Value,
        options: Option<&MergeOptions>,
    ) -> Result<(), FieldPathError> {
        self.with_value(|object| fieldpath::merge_value(object, path, value, options))
    }

    /// Deletes the value at `path`; deleting what is not there is no error
    /// (crossplane-runtime's `DeleteField`).
    ///
    /// ```
    /// let object = serde_json::json!({"spec": {"region": "eu-west-1"}});
    /// let mut r = xfn_sdk::Resource::from_object(object.as_object().unwrap().clone());
    /// r.delete_value("spec.region").unwrap();
    /// assert!(r.get_value("spec.region").unwrap_err().is_not_found());
    /// ```
    pub fn delete_value(&mut self, path: &str) -> Result<(), FieldPathError> {
        self.with_value(|object| fieldpath::delete(object, path))
    }

    /// Updates the object with `source`'s top-level fields, as a dict's
    /// `update` does: the Python SDK's `resource.update`. Fields of `source`
    /// replace the object's fields of the same name; others are kept. Use
    /// [`Resource::merge_value`] for a deep merge.
    ///
    /// ```
    /// let mut r = xfn_sdk::Resource::new();
    /// r.set_string("metadata.name", "demo").unwrap();
    /// let source = serde_json::json!({"spec": {"region": "eu-west-1"}});
    /// r.update(source.as_object().unwrap().clone());
    /// assert_eq!(r.name(), Some("demo"));
    /// assert_eq!(r.get_string("spec.region").unwrap(), "eu-west-1");
    /// ```
    pub fn update(&mut self, source: Object) -> &mut Self {
        self.object_mut().extend(source);
        self
    }

    /// Updates the object from a typed value: [`Resource::from_typed`], then
    /// [`Resource::update`] (the Python SDK's `update` with a model).
    ///
    /// ```
    /// #[derive(serde::Serialize)]
    /// struct Patch { spec: serde_json::Value }
    /// let mut r = xfn_sdk::Resource::new();
    /// r.update_typed(&Patch { spec: serde_json::json!({"size": 2}) }).unwrap();
    /// assert_eq!(r.get_integer("spec.size").unwrap(), 2);
    /// ```
    pub fn update_typed<T: Serialize + ?Sized>(&mut self, source: &T) -> Result<&mut Self, Error> {
        let source = Resource::from_typed(source)?.resource.unwrap_or_default();
        Ok(self.update(source))
    }

    /// Replaces `status` (the Python SDK's `update_status`).
    ///
    /// ```
    /// let mut r = xfn_sdk::Resource::new();
    /// r.update_status(serde_json::json!({"phase": "Ready"}));
    /// assert_eq!(r.get_string("status.phase").unwrap(), "Ready");
    /// ```
    pub fn update_status(&mut self, status: Value) -> &mut Self {
        self.object_mut().insert("status".to_owned(), status);
        self
    }

    fn with_value<R>(&mut self, f: impl FnOnce(&mut Value) -> R) -> R {
        // Moving the map into a `Value` and back copies nothing.
        let mut object = Value::Object(self.resource.take().unwrap_or_default());
        let outcome = f(&mut object);
        if let Value::Object(map) = object {
            self.resource = Some(map);
        }
        outcome
    }

    fn top_string(&self, key: &str) -> Option<&str> {
        self.resource.as_ref()?.get(key)?.as_str()
    }

    fn metadata_string(&self, key: &str) -> Option<&str> {
        self.resource.as_ref()?.get("metadata")?.get(key)?.as_str()
    }

    fn metadata_strings(&self, key: &str) -> BTreeMap<&str, &str> {
        let Some(Value::Object(map)) = self
            .resource
            .as_ref()
            .and_then(|o| o.get("metadata")?.get(key))
        else {
            return BTreeMap::new();
        };
        map.iter()
            .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)))
            .collect()
    }

    fn set_metadata(&mut self, key: &str, value: Value) -> &mut Self {
        let metadata = self
            .object_mut()
            .entry("metadata")
            .or_insert_with(|| Value::Object(Object::new()));
        if !metadata.is_object() {
            *metadata = Value::Object(Object::new());
        }
        if let Value::Object(m) = metadata {
            m.insert(key.to_owned(), value);
        }
        self
    }

    /// `apiVersion` (Go's `GetAPIVersion`).
    ///
    /// ```
    /// let mut r = xfn_sdk::Resource::new();
    /// r.set_api_version("v1");
    /// assert_eq!(r.api_version(), Some("v1"));
    /// ```
    pub fn api_version(&self) -> Option<&str> {
        self.top_string("apiVersion")
    }

    /// Sets `apiVersion` (Go's `SetAPIVersion`).
    ///
    /// ```
    /// let mut r = xfn_sdk::Resource::new();
    /// r.set_api_version("v1").set_kind("ConfigMap");
    /// assert_eq!(r.api_version(), Some("v1"));
    /// ```
    pub fn set_api_version(&mut self, api_version: impl Into<String>) -> &mut Self {
        let v = Value::String(api_version.into());
        self.object_mut().insert("apiVersion".to_owned(), v);
        self
    }

    /// `kind` (Go's `GetKind`).
    ///
    /// ```
    /// let mut r = xfn_sdk::Resource::new();
    /// r.set_kind("ConfigMap");
    /// assert_eq!(r.kind(), Some("ConfigMap"));
    /// ```
    pub fn kind(&self) -> Option<&str> {
        self.top_string("kind")
    }

    /// Sets `kind` (Go's `SetKind`).
    ///
    /// ```
    /// let mut r = xfn_sdk::Resource::new();
    /// r.set_kind("ConfigMap");
    /// assert_eq!(r.kind(), Some("ConfigMap"));
    /// ```
    pub fn set_kind(&mut self, kind: impl Into<String>) -> &mut Self {
        let v = Value::String(kind.into());
        self.object_mut().insert("kind".to_owned(), v);
        self
    }

    /// `metadata.name` (Go's `GetName`).
    ///
    /// ```
    /// let mut r = xfn_sdk::Resource::new();
    /// r.set_name("demo");
    /// assert_eq!(r.name(), Some("demo"));
    /// ```
    pub fn name(&self) -> Option<&str> {
        self.metadata_string("name")
    }

    /// Sets `metadata.name` (Go's `SetName`).
    ///
    /// ```
    /// let mut r = xfn_sdk::Resource::new();
    /// r.set_name("demo");
    /// assert_eq!(r.get_string("metadata.name").unwrap(), "demo");
    /// ```
    pub fn set_name(&mut self, name: impl Into<String>) -> &mut Self {
        self.set_metadata("name", Value::String(name.into()))
    }

    /// `metadata.namespace` (Go's `GetNamespace`).
    ///
    /// ```
    /// let mut r = xfn_sdk::Resource::new();
    /// r.set_namespace("team-a");
    /// assert_eq!(r.namespace(), Some("team-a"));
    /// ```
    pub fn namespace(&self) -> Option<&str> {
        self.metadata_string("namespace")
    }

    /// Sets `metadata.namespace` (Go's `SetNamespace`).
    ///
    /// ```
    /// let mut r = xfn_sdk::Resource::new();
    /// r.set_namespace("team-a");
    /// assert_eq!(r.get_string("metadata.namespace").unwrap(), "team-a");
    /// ```
    pub fn set_namespace(&mut self, namespace: impl Into<String>) -> &mut Self {
        self.set_metadata("namespace", Value::String(namespace.into()))
    }

    /// `metadata.labels`, borrowed; values that are not strings are skipped
    /// (Go's `GetLabels`).
    ///
    /// ```
    /// let mut r = xfn_sdk::Resource::new();
    /// r.set_labels([("app", "web")]);
    /// assert_eq!(r.labels()["app"], "web");
    /// ```
    pub fn labels(&self) -> BTreeMap<&str, &str> {
        self.metadata_strings("labels")
    }

    /// Replaces `metadata.labels` (Go's `SetLabels`).
    ///
    /// ```
    /// let mut r = xfn_sdk::Resource::new();
    /// r.set_labels([("app", "web"), ("tier", "front")]);
    /// assert_eq!(r.labels().len(), 2);
    /// ```
    pub fn set_labels<K: Into<String>, V: Into<String>>(
        &mut self,
        labels: impl IntoIterator<Item = (K, V)>,
    ) -> &mut Self {
        self.set_metadata("labels", string_map(labels))
    }

    /// `metadata.annotations`, borrowed; values that are not strings are
    /// skipped (Go's `GetAnnotations`).
    ///
    /// ```
    /// let mut r = xfn_sdk::Resource::new();
    /// r.set_annotations([("crossplane.io/external-name", "b-1")]);
    /// assert_eq!(r.annotations()["crossplane.io/external-name"], "b-1");
    /// ```
    pub fn annotations(&self) -> BTreeMap<&str, &str> {
        self.metadata_strings("annotations")
    }

    /// Replaces `metadata.annotations` (Go's `SetAnnotations`).
    ///
    /// ```
    /// let mut r = xfn_sdk::Resource::new();
    /// r.set_annotations([("a", "1")]);
    /// assert_eq!(r.annotations().len(), 1);
    /// ```
    pub fn set_annotations<K: Into<String>, V: Into<String>>(
        &mut self,
        annotations: impl IntoIterator<Item = (K, V)>,
    ) -> &mut Self {
        self.set_metadata("annotations", string_map(annotations))
    }

    /// The status condition of type `type`, borrowed from
    /// `status.conditions` (Go's `GetCondition`, Python's `get_condition`).
    /// A condition that is absent, or a resource with no conditions, reads as
    /// status Unknown, as in both SDKs.
    ///
    /// ```
    /// use xfn_sdk::ConditionStatus;
    /// let object = serde_json::json!({"status": {"conditions": [
    ///     {"type": "Ready", "status": "True", "reason": "Available"}
    /// ]}});
    /// let r = xfn_sdk::Resource::from_object(object.as_object().unwrap().clone());
    /// assert_eq!(r.get_condition("Ready").status, ConditionStatus::True);
    /// assert_eq!(r.get_condition("Synced").status, ConditionStatus::Unknown);
    /// ```
    pub fn get_condition<'a>(&'a self, r#type: &'a str) -> ResourceCondition<'a> {
        let found = self
            .get_value("status.conditions")
            .ok()
            .and_then(Value::as_array)
            .and_then(|all| {
                all.iter()
                    .find(|c| c.get("type").and_then(Value::as_str) == Some(r#type))
            });
        match found {
            Some(c) => ResourceCondition::read(r#type, c),
            None => ResourceCondition::unknown(r#type),
        }
    }
}

/// A status condition as a resource reports it (crossplane-runtime's
/// `xpv1.Condition`), borrowed from the resource.
///
/// ```
/// let object = serde_json::json!({"status": {"conditions": [
///     {"type": "Synced", "status": "False", "reason": "ReconcileError", "message": "boom"}
/// ]}});
/// let r = xfn_sdk::Resource::from_object(object.as_object().unwrap().clone());
/// let synced = r.get_condition("Synced");
/// assert_eq!((synced.reason, synced.message), ("ReconcileError", "boom"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResourceCondition<'a> {
    /// The condition type, such as `Ready`.
    pub r#type: &'a str,
    /// `True`, `False` or `Unknown` (anything else reads as Unknown).
    pub status: ConditionStatus,
    /// PascalCase reason; empty if unset.
    pub reason: &'a str,
    /// Human-readable message; empty if unset.
    pub message: &'a str,
    /// RFC 3339 time of the last transition, if set.
    pub last_transition_time: Option<&'a str>,
    /// The generation the condition was set for, if set.
    pub observed_generation: Option<i64>,
}

impl<'a> ResourceCondition<'a> {
    /// The condition reported when a resource has none of type `type`.
    ///
    /// ```
    /// let c = xfn_sdk::ResourceCondition::unknown("Ready");
    /// assert_eq!(c.status, xfn_sdk::ConditionStatus::Unknown);
    /// ```
    pub fn unknown(r#type: &'a str) -> ResourceCondition<'a> {
        ResourceCondition {
            r#type,
            status: ConditionStatus::Unknown,
            reason: "",
            message: "",
            last_transition_time: None,
            observed_generation: None,
        }
    }

    /// Whether the status is True.
    ///
    /// ```
    /// assert!(!xfn_sdk::ResourceCondition::unknown("Ready").is_true());
    /// ```
    pub fn is_true(&self) -> bool {
        self.status == ConditionStatus::True
    }

    fn read(r#type: &'a str, c: &'a Value) -> ResourceCondition<'a> {
        let text = |key: &str| c.get(key).and_then(Value::as_str);
        ResourceCondition {
            r#type,
            status: match text("status") {
                Some("True") => ConditionStatus::True,
                Some("False") => ConditionStatus::False,
                _ => ConditionStatus::Unknown,
            },
            reason: text("reason").unwrap_or(""),
            message: text("message").unwrap_or(""),
            last_transition_time: text("lastTransitionTime"),
            observed_generation: c.get("observedGeneration").and_then(Value::as_i64),
        }
    }
}

static EMPTY: LazyLock<Object> = LazyLock::new(Object::new);

fn string_map<K: Into<String>, V: Into<String>>(
    entries: impl IntoIterator<Item = (K, V)>,
) -> Value {
    Value::Object(
        entries
            .into_iter()
            .map(|(k, v)| (k.into(), Value::String(v.into())))
            .collect(),
    )
}

/// Removes `null` fields from objects, recursively (array elements stay).
fn drop_null_fields(object: &mut Object) {
    object.retain(|_, v| !v.is_null());
    for value in object.values_mut() {
        drop_nulls_below(value);
    }
}

fn drop_nulls_below(value: &mut Value) {
    match value {
        Value::Object(o) => drop_null_fields(o),
        Value::Array(items) => items.iter_mut().for_each(drop_nulls_below),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn resource(v: Value) -> Resource {
        match v {
            Value::Object(o) => Resource::from_object(o),
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn get_value_borrows_from_the_resource() {
        let r = resource(json!({"spec": {"a": [1, 2]}}));
        let got = r.get_value("spec.a[1]").expect("found");
        let inside = &r.resource.as_ref().expect("object")["spec"]["a"][1];
        assert!(std::ptr::eq(got, inside), "get_value must not copy");
    }

    #[test]
    fn getters_report_crossplane_runtime_errors() {
        let r = resource(json!({"spec": {"n": "x", "list": ["a", 1], "m": {"k": 1}}}));
        let e = |r: Result<_, FieldPathError>| r.map(|_: ()| ()).unwrap_err().to_string();
        assert_eq!(
            e(r.get_string("spec.missing").map(|_| ())),
            "spec.missing: no such field"
        );
        assert_eq!(
            e(r.get_integer("spec.n").map(|_| ())),
            "spec.n: not a (int64) number"
        );
        assert_eq!(e(r.get_bool("spec.n").map(|_| ())), "spec.n: not a bool");
        assert_eq!(
            e(r.get_string_array("spec.list").map(|_| ())),
            "spec.list: not an array of strings"
        );
        assert_eq!(
            e(r.get_string_object("spec.m").map(|_| ())),
            "spec.m: not an object with string field values"
        );
        assert_eq!(e(r.get_value("[0]").map(|_| ())), ": not an array");
        assert!(
            Resource::default()
                .get_value("a")
                .unwrap_err()
                .is_not_found()
        );
    }

    #[test]
    fn metadata_setters_replace_a_non_object_metadata() {
        let mut r = resource(json!({"metadata": "junk"}));
        r.set_name("n").set_namespace("ns").set_labels([("a", "1")]);
        assert_eq!(
            Value::Object(r.resource.clone().expect("object")),
            json!({"metadata": {"name": "n", "namespace": "ns", "labels": {"a": "1"}}})
        );
        assert_eq!(r.annotations().len(), 0);
    }

    #[test]
    fn missing_condition_reads_unknown_and_present_one_reads_fully() {
        let r = resource(json!({"status": {"conditions": [{
            "type": "Ready", "status": "False", "reason": "Creating",
            "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": 4
        }]}}));
        let ready = r.get_condition("Ready");
        assert_eq!(ready.status, ConditionStatus::False);
        assert_eq!(ready.reason, "Creating");
        assert_eq!(ready.last_transition_time, Some("2026-01-01T00:00:00Z"));
        assert_eq!(ready.observed_generation, Some(4));
        assert_eq!(
            r.get_condition("Synced"),
            ResourceCondition::unknown("Synced")
        );
        assert_eq!(
            Resource::default().get_condition("Ready"),
            ResourceCondition::unknown("Ready")
        );
    }

    #[test]
    fn from_typed_drops_null_fields_but_keeps_null_array_elements() {
        let r =
            Resource::from_typed(&json!({"a": null, "b": {"c": null, "d": [null, {"e": null}]}}))
                .expect("object");
        assert_eq!(
            Value::Object(r.resource.expect("object")),
            json!({"b": {"d": [null, {}]}})
        );
        let err = Resource::from_typed(&json!([1])).unwrap_err().to_string();
        assert_eq!(
            err,
            "cannot make a resource from []interface {}: want an object"
        );
    }

    #[test]
    fn update_replaces_top_level_fields_only() {
        let mut r = resource(json!({"spec": {"a": 1, "b": 2}, "kind": "K"}));
        r.update(
            json!({"spec": {"a": 3}})
                .as_object()
                .cloned()
                .expect("object"),
        );
        assert_eq!(
            Value::Object(r.resource.expect("object")),
            json!({"spec": {"a": 3}, "kind": "K"})
        );
    }
}
