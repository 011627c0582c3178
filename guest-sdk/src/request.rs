//! Getters on a [`Request`], after function-sdk-go's `request` package.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::de::DeserializeOwned;

use crate::{Capability, Error, Object, Request, Resource, Resources};

static NO_RESOURCES: BTreeMap<String, Resource> = BTreeMap::new();
static NO_INPUT: LazyLock<Object> = LazyLock::new(Object::new);

/// The required-resources key under which an Operation started by a
/// WatchOperation is sent the resource that changed.
pub const WATCHED_RESOURCE: &str = "ops.crossplane.io/watched-resource";

/// The context key under which Crossplane passes the composition
/// environment (function-sdk-go's `context.KeyEnvironment`).
///
/// ```
/// let req = xfn_sdk::Request::default();
/// assert!(req.context_key(xfn_sdk::CONTEXT_KEY_ENVIRONMENT).is_none());
/// ```
pub const CONTEXT_KEY_ENVIRONMENT: &str = "apiextensions.crossplane.io/environment";

/// A typed function input: its `apiVersion` and `kind`, checked by
/// [`Request::typed_input`] (the `metav1.TypeMeta` of a Go input type).
///
/// ```
/// #[derive(serde::Deserialize)]
/// struct Input {}
///
/// impl xfn_sdk::InputType for Input {
///     const API_VERSION: &'static str = "example.fn.xfn.dev/v1beta1";
///     const KIND: &'static str = "Input";
/// }
/// ```
pub trait InputType: DeserializeOwned {
    /// The `apiVersion` the input must have, such as `example.fn.xfn.dev/v1beta1`.
    const API_VERSION: &'static str;
    /// The `kind` the input must have.
    const KIND: &'static str;
}

/// An object's `apiVersion` and `kind`, borrowed (`metav1.TypeMeta`).
///
/// ```
/// let object = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap"});
/// let meta = xfn_sdk::TypeMeta::of(object.as_object().unwrap());
/// assert_eq!((meta.api_version, meta.kind), (Some("v1"), Some("ConfigMap")));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TypeMeta<'a> {
    /// `apiVersion`, if it is a string.
    pub api_version: Option<&'a str>,
    /// `kind`, if it is a string.
    pub kind: Option<&'a str>,
}

impl<'a> TypeMeta<'a> {
    /// Reads `apiVersion` and `kind` from `object`.
    ///
    /// ```
    /// let object = serde_json::json!({"kind": "Input"});
    /// let meta = xfn_sdk::TypeMeta::of(object.as_object().unwrap());
    /// assert_eq!(meta.api_version, None);
    /// ```
    pub fn of(object: &'a Object) -> TypeMeta<'a> {
        let text = |k: &str| object.get(k).and_then(serde_json::Value::as_str);
        TypeMeta {
            api_version: text("apiVersion"),
            kind: text("kind"),
        }
    }
}

impl Request {
    /// The request's tag (empty if unset).
    ///
    /// ```
    /// let req = xfn_sdk::Request::default();
    /// assert_eq!(req.tag(), "");
    /// ```
    pub fn tag(&self) -> &str {
        self.meta.as_ref().map_or("", |m| m.tag.as_str())
    }

    /// The step's input as a typed value, checking nothing but its shape.
    ///
    /// Decoding is as strict as `T` makes it: derive `Deserialize` with
    /// `#[serde(deny_unknown_fields)]` to reject unknown fields, as
    /// function-sdk-go does for typed inputs (`T` must then declare
    /// `apiVersion` and `kind`; [`Request::typed_input`] spares that). A
    /// missing input decodes from an empty object. Errors name the field.
    ///
    /// ```
    /// #[derive(serde::Deserialize)]
    /// struct Input { greeting: String }
    ///
    /// let input = serde_json::json!({"greeting": 7});
    /// let req = xfn_sdk::Request { input: input.as_object().cloned(), ..Default::default() };
    /// let err = req.input::<Input>().err().unwrap().to_string();
    /// assert!(err.contains("field greeting: invalid type"), "{err}");
    /// ```
    pub fn input<T: DeserializeOwned>(&self) -> Result<T, Error> {
        let object = self.input.as_ref().unwrap_or(&NO_INPUT);
        crate::decode::from_map(object.iter())
            .map_err(|e| Error::from(format!("cannot get function input: {e}")))
    }

    /// The step's input as a typed value whose `apiVersion` and `kind` are
    /// checked against [`InputType`], like a Go function's input type with
    /// `metav1.TypeMeta` built in.
    ///
    /// The input's `apiVersion` and `kind` must equal `T::API_VERSION` and
    /// `T::KIND`; the other fields decode into `T`, which need not declare
    /// them, so `#[serde(deny_unknown_fields)]` works as is. Errors name the
    /// field. A missing input decodes from an empty object.
    ///
    /// ```
    /// use xfn_sdk::{InputType, Request};
    ///
    /// #[derive(serde::Deserialize)]
    /// #[serde(deny_unknown_fields)]
    /// struct Input { greeting: String }
    ///
    /// impl InputType for Input {
    ///     const API_VERSION: &'static str = "hello.fn.xfn.dev/v1alpha1";
    ///     const KIND: &'static str = "Input";
    /// }
    ///
    /// let input = serde_json::json!({
    ///     "apiVersion": "hello.fn.xfn.dev/v1alpha1", "kind": "Input", "greeting": "Hi"
    /// });
    /// let req = Request { input: input.as_object().cloned(), ..Default::default() };
    /// assert_eq!(req.typed_input::<Input>().unwrap().greeting, "Hi");
    ///
    /// let wrong = serde_json::json!({"apiVersion": "other/v1", "kind": "Input", "greeting": "Hi"});
    /// let req = Request { input: wrong.as_object().cloned(), ..Default::default() };
    /// let err = req.typed_input::<Input>().err().unwrap().to_string();
    /// assert!(err.contains("apiVersion is \"other/v1\", want \"hello.fn.xfn.dev/v1alpha1\""), "{err}");
    /// ```
    pub fn typed_input<T: InputType>(&self) -> Result<T, Error> {
        let wanted = format!("{} {}", T::API_VERSION, T::KIND);
        let fail = |e: String| Error::from(format!("cannot get function input {wanted}: {e}"));
        let Some(object) = self.input.as_ref() else {
            return crate::decode::from_map(NO_INPUT.iter()).map_err(fail);
        };
        let meta = TypeMeta::of(object);
        for (field, got, want) in [
            ("apiVersion", meta.api_version, T::API_VERSION),
            ("kind", meta.kind, T::KIND),
        ] {
            match got {
                Some(got) if got == want => {}
                Some(got) => return Err(fail(format!("{field} is {got:?}, want {want:?}"))),
                None => return Err(fail(format!("{field} is missing, want {want:?}"))),
            }
        }
        crate::decode::from_map(
            object
                .iter()
                .filter(|(k, _)| k.as_str() != "apiVersion" && k.as_str() != "kind"),
        )
        .map_err(fail)
    }

    /// The `apiVersion` and `kind` of the step's input, borrowed.
    ///
    /// ```
    /// let input = serde_json::json!({"apiVersion": "example.org/v1", "kind": "Input"});
    /// let req = xfn_sdk::Request { input: input.as_object().cloned(), ..Default::default() };
    /// assert_eq!(req.input_type_meta().kind, Some("Input"));
    /// ```
    pub fn input_type_meta(&self) -> TypeMeta<'_> {
        self.input.as_ref().map(TypeMeta::of).unwrap_or_default()
    }

    /// The step's input as a JSON object, if there is one.
    ///
    /// ```
    /// let req: xfn_sdk::Request = serde_json::from_value(serde_json::json!({"input": {"size": 2}})).unwrap();
    /// assert_eq!(req.input_object().unwrap()["size"], 2);
    /// ```
    pub fn input_object(&self) -> Option<&Object> {
        self.input.as_ref()
    }

    /// The pipeline context, if there is one.
    ///
    /// ```
    /// let req = xfn_sdk::Request::default();
    /// assert!(req.context().is_none());
    /// ```
    pub fn context(&self) -> Option<&Object> {
        self.context.as_ref()
    }

    /// One key of the pipeline context.
    ///
    /// ```
    /// let req: xfn_sdk::Request = serde_json::from_value(serde_json::json!({"context": {"region": "eu"}})).unwrap();
    /// assert_eq!(req.context_key("region").unwrap(), "eu");
    /// ```
    pub fn context_key(&self, key: &str) -> Option<&serde_json::Value> {
        self.context.as_ref()?.get(key)
    }

    /// The observed composite resource (the XR), if any.
    ///
    /// ```
    /// let req: xfn_sdk::Request = serde_json::from_value(serde_json::json!({
    ///     "observed": {"composite": {"resource": {"metadata": {"name": "demo"}}}}
    /// })).unwrap();
    /// assert_eq!(req.observed_composite().and_then(|xr| xr.name()), Some("demo"));
    /// ```
    pub fn observed_composite(&self) -> Option<&Resource> {
        self.observed.as_ref()?.composite.as_ref()
    }

    /// The observed composed resources, by composition resource name.
    ///
    /// ```
    /// let req: xfn_sdk::Request = serde_json::from_value(serde_json::json!({
    ///     "observed": {"resources": {"bucket": {"resource": {"kind": "Bucket"}}}}
    /// })).unwrap();
    /// assert_eq!(req.observed_composed()["bucket"].kind(), Some("Bucket"));
    /// ```
    pub fn observed_composed(&self) -> &BTreeMap<String, Resource> {
        self.observed
            .as_ref()
            .map_or(&NO_RESOURCES, |s| &s.resources)
    }

    /// The desired composite resource accumulated so far, if any.
    ///
    /// ```
    /// let req = xfn_sdk::Request::default();
    /// assert!(req.desired_composite().is_none());
    /// ```
    pub fn desired_composite(&self) -> Option<&Resource> {
        self.desired.as_ref()?.composite.as_ref()
    }

    /// The desired composed resources accumulated so far.
    ///
    /// ```
    /// let req = xfn_sdk::Request::default();
    /// assert!(req.desired_composed().is_empty());
    /// ```
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
    ///
    /// ```
    /// let req: xfn_sdk::Request = serde_json::from_value(serde_json::json!({"requiredResources": {"vpcs": {}}})).unwrap();
    /// assert_eq!(req.required_resources("vpcs").map(<[_]>::len), Some(0));
    /// assert!(req.required_resources("subnets").is_none());
    /// ```
    pub fn required_resources(&self, name: &str) -> Option<&[Resource]> {
        self.required_resources
            .get(name)
            .or_else(|| self.extra_resources.get(name))
            .map(|r: &Resources| r.items.as_slice())
    }

    /// The first resource resolved for requirement `name`, for requirements
    /// that match one object (Python's `get_required_resource`).
    ///
    /// ```
    /// let req: xfn_sdk::Request = serde_json::from_value(serde_json::json!({
    ///     "requiredResources": {"vpc": {"items": [{"resource": {"kind": "VPC"}}]}}
    /// })).unwrap();
    /// assert_eq!(req.required_resource("vpc").and_then(|r| r.kind()), Some("VPC"));
    /// assert!(req.required_resource("subnet").is_none());
    /// ```
    pub fn required_resource(&self, name: &str) -> Option<&Resource> {
        self.required_resources(name)?.first()
    }

    /// The resource whose change started this Operation, when a
    /// WatchOperation created it: the first resource under
    /// [`WATCHED_RESOURCE`] (Python's `get_watched_resource`).
    ///
    /// ```
    /// let req: xfn_sdk::Request = serde_json::from_value(serde_json::json!({
    ///     "requiredResources": {"ops.crossplane.io/watched-resource": {"items": [
    ///         {"resource": {"kind": "ConfigMap", "metadata": {"name": "cfg"}}}
    ///     ]}}
    /// })).unwrap();
    /// assert_eq!(req.watched_resource().and_then(|r| r.name()), Some("cfg"));
    /// ```
    pub fn watched_resource(&self) -> Option<&Resource> {
        self.required_resource(WATCHED_RESOURCE)
    }

    /// The schema resolved for requirement `name`.
    ///
    /// `None` means not resolved; `Some(None)` means resolved, not found.
    ///
    /// ```
    /// let req: xfn_sdk::Request = serde_json::from_value(serde_json::json!({"requiredSchemas": {"bucket": {}}})).unwrap();
    /// assert_eq!(req.required_schema("bucket"), Some(None));
    /// ```
    pub fn required_schema(&self, name: &str) -> Option<Option<&Object>> {
        self.required_schemas
            .get(name)
            .map(|s| s.openapi_v3.as_ref())
    }

    /// The credential data named `name`, if the step was given it.
    ///
    /// ```
    /// let req: xfn_sdk::Request = serde_json::from_value(serde_json::json!({
    ///     "credentials": {"aws": {"credentialData": {"data": {"key": "aGk="}}}}
    /// })).unwrap();
    /// assert_eq!(req.credentials("aws").unwrap()["key"], b"hi");
    /// ```
    pub fn credentials(&self, name: &str) -> Option<&crate::Bytes> {
        self.credentials
            .get(name)?
            .credential_data
            .as_ref()
            .map(|d| &d.data)
    }

    /// Whether the caller advertises its capabilities at all. If it does, a
    /// capability it doesn't list is unsupported; if not, nothing is known.
    ///
    /// ```
    /// let req: xfn_sdk::Request = serde_json::from_value(serde_json::json!({
    ///     "meta": {"capabilities": ["CAPABILITY_CAPABILITIES"]}
    /// })).unwrap();
    /// assert!(req.advertises_capabilities());
    /// ```
    pub fn advertises_capabilities(&self) -> bool {
        self.has_capability(Capability::Capabilities)
    }

    /// Whether the caller lists `capability`.
    ///
    /// ```
    /// let req: xfn_sdk::Request = serde_json::from_value(serde_json::json!({
    ///     "meta": {"capabilities": ["CAPABILITY_CONDITIONS"]}
    /// })).unwrap();
    /// assert!(req.has_capability(xfn_sdk::Capability::Conditions));
    /// ```
    pub fn has_capability(&self, capability: Capability) -> bool {
        self.meta
            .as_ref()
            .is_some_and(|m| m.capabilities.contains(&capability))
    }
}
