//! Deep merges into a resource, so that a step adds to what earlier steps
//! of the pipeline wrote (the desired XR's status above all) instead of
//! replacing it.
//!
//! Objects merge key by key, recursively; any other value (a string, a
//! number, a list, `null`) replaces what was there. The recursion follows
//! the patch, which the function builds, so it is as deep as the patch.

use serde::Serialize;
use serde_json::Value;

use crate::{Error, Object, Resource, Response};

/// Merges `patch` into `target`: objects key by key, recursively; any
/// other value replaces the one in `target`.
///
/// ```
/// use serde_json::json;
/// let mut target = json!({"status": {"a": 1, "nested": {"x": 1}}}).as_object().unwrap().clone();
/// let patch = json!({"status": {"b": 2, "nested": {"y": 2}}}).as_object().unwrap().clone();
/// xfn_sdk::merge::merge_objects(&mut target, patch);
/// assert_eq!(json!(target), json!({"status": {"a": 1, "b": 2, "nested": {"x": 1, "y": 2}}}));
/// ```
pub fn merge_objects(target: &mut Object, patch: Object) {
    for (key, value) in patch {
        match (target.get_mut(&key), value) {
            (Some(Value::Object(existing)), Value::Object(inner)) => merge_objects(existing, inner),
            (_, value) => {
                target.insert(key, value);
            }
        }
    }
}

/// `value` as an object without its `null` fields (at any depth), or an
/// error naming what it serialized to.
fn typed_object<T: Serialize + ?Sized>(value: &T, what: &str) -> Result<Object, Error> {
    let object = Resource::from_typed(value)
        .map_err(|e| Error::from(format!("cannot merge {what}: {e}")))?;
    Ok(object.resource.unwrap_or_default())
}

impl Resource {
    /// Deep-merges `patch` into the object (see [`merge_objects`]): the
    /// fields `patch` doesn't name keep their values, where
    /// [`Resource::update`] would replace a whole top-level field.
    ///
    /// ```
    /// use serde_json::json;
    /// let mut xr = xfn_sdk::Resource::new();
    /// xr.set_string("status.endpoint", "db.example.org").unwrap();
    /// xr.merge(json!({"status": {"port": 5432}}).as_object().unwrap().clone());
    /// assert_eq!(xr.get_string("status.endpoint").unwrap(), "db.example.org");
    /// assert_eq!(xr.get_integer("status.port").unwrap(), 5432);
    /// ```
    pub fn merge(&mut self, patch: Object) -> &mut Self {
        merge_objects(self.object_mut(), patch);
        self
    }

    /// Deep-merges a typed value (see [`Resource::merge`]). Fields that
    /// serialize to `null` are left out, so an `Option` that is `None`
    /// keeps what was there. `patch` must serialize to an object.
    ///
    /// ```
    /// #[derive(serde::Serialize)]
    /// struct Status { port: Option<u16>, endpoint: Option<String> }
    /// #[derive(serde::Serialize)]
    /// struct Patch { status: Status }
    ///
    /// let mut xr = xfn_sdk::Resource::new();
    /// xr.set_string("status.endpoint", "db.example.org").unwrap();
    /// xr.merge_typed(&Patch { status: Status { port: Some(5432), endpoint: None } }).unwrap();
    /// assert_eq!(xr.get_string("status.endpoint").unwrap(), "db.example.org");
    /// assert_eq!(xr.get_integer("status.port").unwrap(), 5432);
    /// ```
    pub fn merge_typed<T: Serialize + ?Sized>(&mut self, patch: &T) -> Result<&mut Self, Error> {
        let patch = typed_object(patch, "a typed value into a resource")?;
        Ok(self.merge(patch))
    }
}

impl Response {
    /// Deep-merges `patch` into the desired composite resource (the XR),
    /// creating it if no step has desired one yet. What earlier steps of
    /// the pipeline wrote, and [`Response::to`] carried over, stays unless
    /// `patch` names it. Where function-sdk-go reads the desired XR, sets
    /// fields and calls `SetDesiredCompositeResource`, this is one call.
    ///
    /// ```
    /// use serde_json::json;
    /// let req = xfn_sdk::testing::request_from_yaml("
    /// desired:
    ///   composite:
    ///     resource: {status: {endpoint: db.example.org}}
    /// ").unwrap();
    /// let mut rsp = xfn_sdk::Response::to(&req);
    /// rsp.merge_desired_composite(json!({"status": {"port": 5432}}).as_object().unwrap().clone());
    /// let xr = rsp.desired.unwrap().composite.unwrap();
    /// assert_eq!(xr.get_string("status.endpoint").unwrap(), "db.example.org");
    /// assert_eq!(xr.get_integer("status.port").unwrap(), 5432);
    /// ```
    pub fn merge_desired_composite(&mut self, patch: Object) -> &mut Self {
        self.desired_mut()
            .composite
            .get_or_insert_with(Resource::new)
            .merge(patch);
        self
    }

    /// Deep-merges `status` into the desired composite resource's
    /// `status` (see [`Response::merge_desired_composite`]): the status
    /// fields earlier steps wrote stay. `status` is a typed value (or a
    /// `serde_json` object) that serializes to an object; its `null`
    /// fields are left out, so an `Option` that is `None` changes nothing.
    ///
    /// ```
    /// #[derive(serde::Serialize)]
    /// #[serde(rename_all = "camelCase")]
    /// struct Status { bucket_arn: Option<String> }
    ///
    /// let req = xfn_sdk::testing::request_from_yaml("
    /// desired:
    ///   composite:
    ///     resource: {status: {endpoint: db.example.org}}
    /// ").unwrap();
    /// let mut rsp = xfn_sdk::Response::to(&req);
    /// rsp.merge_desired_composite_status(&Status { bucket_arn: Some("arn:aws:s3:::b".into()) }).unwrap();
    /// let xr = rsp.desired.unwrap().composite.unwrap();
    /// assert_eq!(xr.get_string("status.endpoint").unwrap(), "db.example.org");
    /// assert_eq!(xr.get_string("status.bucketArn").unwrap(), "arn:aws:s3:::b");
    /// ```
    pub fn merge_desired_composite_status<T: Serialize + ?Sized>(
        &mut self,
        status: &T,
    ) -> Result<&mut Self, Error> {
        let status = typed_object(status, "the desired composite's status")?;
        let mut patch = Object::new();
        patch.insert("status".to_owned(), Value::Object(status));
        Ok(self.merge_desired_composite(patch))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Object {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn lists_and_scalars_replace_objects_merge() {
        let mut target = object(json!({"a": [1, 2], "b": "x", "c": {"d": 1}, "e": {"f": 1}}));
        merge_objects(
            &mut target,
            object(
                json!({"a": [3], "b": {"now": "an object"}, "c": "now a string", "e": {"g": null}}),
            ),
        );
        assert_eq!(
            Value::Object(target),
            json!({"a": [3], "b": {"now": "an object"}, "c": "now a string", "e": {"f": 1, "g": null}})
        );
    }

    #[test]
    fn a_status_that_is_not_an_object_is_an_error() {
        let mut rsp = Response::default();
        let err = rsp
            .merge_desired_composite_status(&"ready")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("cannot merge the desired composite's status"),
            "{err}"
        );
        assert!(rsp.desired.is_none(), "nothing was written");
    }

    #[test]
    fn the_composite_is_created_when_no_step_desired_one() {
        let mut rsp = Response::default();
        rsp.merge_desired_composite_status(&json!({"phase": "Creating"}))
            .expect("an object");
        let xr = rsp.desired.and_then(|d| d.composite).expect("a composite");
        assert_eq!(xr.get_string("status.phase").ok(), Some("Creating"));
    }

    #[test]
    fn earlier_steps_status_and_spec_stay() {
        let mut xr = Resource::from_object(object(json!({
            "spec": {"size": 3},
            "status": {"endpoint": "e", "conditions": [{"type": "Synced"}]},
        })));
        xr.merge(object(json!({"status": {"port": 1}})));
        assert_eq!(
            xr.resource.map(Value::Object),
            Some(json!({
                "spec": {"size": 3},
                "status": {"endpoint": "e", "conditions": [{"type": "Synced"}], "port": 1},
            }))
        );
    }
}
