//! Getters on a [`Request`], after function-sdk-go's `request` package.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;

use crate::{Capability, Error, Object, Request, Resource, Resources};

static NO_RESOURCES: BTreeMap<String, Resource> = BTreeMap::new();

impl Request {
    /// The request's tag (empty if unset).
    pub fn tag(&self) -> &str {
        self.meta.as_ref().map_or("", |m| m.tag.as_str())
    }

    /// The step's input as a typed value.
    ///
    /// Decoding is as strict as `T` makes it: derive `Deserialize` with
    /// `#[serde(deny_unknown_fields)]` to reject unknown fields, as
    /// function-sdk-go does for typed inputs. A missing input decodes from
    /// an empty object.
    pub fn input<T: DeserializeOwned>(&self) -> Result<T, Error> {
        let object = self.input.clone().unwrap_or_default();
        serde_json::from_value(serde_json::Value::Object(object))
            .map_err(|e| Error::from(format!("cannot get function input: {e}")))
    }

    /// The step's input as a JSON object, if there is one.
    pub fn input_object(&self) -> Option<&Object> {
        self.input.as_ref()
    }

    /// The pipeline context, if there is one.
    pub fn context(&self) -> Option<&Object> {
        self.context.as_ref()
    }

    /// One key of the pipeline context.
    pub fn context_key(&self, key: &str) -> Option<&serde_json::Value> {
        self.context.as_ref()?.get(key)
    }

    /// The observed composite resource (the XR), if any.
    pub fn observed_composite(&self) -> Option<&Resource> {
        self.observed.as_ref()?.composite.as_ref()
    }

    /// The observed composed resources, by composition resource name.
    pub fn observed_composed(&self) -> &BTreeMap<String, Resource> {
        self.observed
            .as_ref()
            .map_or(&NO_RESOURCES, |s| &s.resources)
    }

    /// The desired composite resource accumulated so far, if any.
    pub fn desired_composite(&self) -> Option<&Resource> {
        self.desired.as_ref()?.composite.as_ref()
    }

    /// The desired composed resources accumulated so far.
    pub fn desired_composed(&self) -> &BTreeMap<String, Resource> {
        self.desired
            .as_ref()
            .map_or(&NO_RESOURCES, |s| &s.resources)
    }

    /// The resources resolved for requirement `name`.
    ///
    /// `None` means the requirement was not resolved (yet); `Some(&[])` means
    /// it was resolved and nothing matched. Falls back to the deprecated
    /// `extra_resources` for callers that still use them.
    pub fn required_resources(&self, name: &str) -> Option<&[Resource]> {
        self.required_resources
            .get(name)
            .or_else(|| self.extra_resources.get(name))
            .map(|r: &Resources| r.items.as_slice())
    }

    /// The schema resolved for requirement `name`.
    ///
    /// `None` means not resolved; `Some(None)` means resolved, not found.
    pub fn required_schema(&self, name: &str) -> Option<Option<&Object>> {
        self.required_schemas
            .get(name)
            .map(|s| s.openapi_v3.as_ref())
    }

    /// The credential data named `name`, if the step was given it.
    pub fn credentials(&self, name: &str) -> Option<&crate::Bytes> {
        self.credentials
            .get(name)?
            .credential_data
            .as_ref()
            .map(|d| &d.data)
    }

    /// Whether the caller advertises its capabilities at all. If it does, a
    /// capability it doesn't list is unsupported; if not, nothing is known.
    pub fn advertises_capabilities(&self) -> bool {
        self.has_capability(Capability::Capabilities)
    }

    /// Whether the caller lists `capability`.
    pub fn has_capability(&self, capability: Capability) -> bool {
        self.meta
            .as_ref()
            .is_some_and(|m| m.capabilities.contains(&capability))
    }
}
