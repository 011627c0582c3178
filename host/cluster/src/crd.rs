//! The parts of Crossplane's package objects the controller reads.
//!
//! Only the fields xfn reads are modelled, and these objects are never
//! written whole: the controller changes a revision's status with a
//! server-side apply of the two fields it owns (`status.endpoint` and the
//! `RuntimeHealthy` condition), so Crossplane's fields are never dropped.
//! Field names and meanings follow Crossplane's `apis/pkg/v1`
//! (`function_types.go`, `revision_types.go`, `package_runtime_types.go`)
//! and `apis/pkg/v1beta1/deployment_runtime_config_types.go`.

use std::borrow::Cow;

use k8s_openapi::api::core::v1::LocalObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::CustomResource;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The label Crossplane puts on a revision naming its package (the Function).
pub const LABEL_PACKAGE: &str = "pkg.crossplane.io/package";
/// The label Crossplane's runtime puts on a function's pods: the revision.
pub const LABEL_REVISION: &str = "pkg.crossplane.io/revision";
/// The label Crossplane's runtime puts on a function's pods: the function.
pub const LABEL_FUNCTION: &str = "pkg.crossplane.io/function";

/// `spec.desiredState` of the revision Crossplane calls.
pub const ACTIVE: &str = "Active";

/// A `pkg.crossplane.io/v1` Function: the package and how to run it.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "pkg.crossplane.io",
    version = "v1",
    kind = "Function",
    schema = "disabled"
)]
#[serde(rename_all = "camelCase")]
pub struct FunctionSpec {
    /// The package's OCI reference.
    #[serde(default)]
    pub package: Option<String>,
    /// Pull policy of the package image (`IfNotPresent`, `Always`, `Never`).
    #[serde(default)]
    pub package_pull_policy: Option<String>,
    /// Secrets to pull the package with.
    #[serde(default)]
    pub package_pull_secrets: Option<Vec<LocalObjectReference>>,
    /// The DeploymentRuntimeConfig to run it with (default `default`).
    #[serde(default)]
    pub runtime_config_ref: Option<RuntimeConfigReference>,
}

/// A reference to a DeploymentRuntimeConfig.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeConfigReference {
    /// Its name.
    pub name: String,
}

/// A `pkg.crossplane.io/v1` FunctionRevision: one version of a Function's
/// package. Crossplane calls the Active revision at `status.endpoint`.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "pkg.crossplane.io",
    version = "v1",
    kind = "FunctionRevision",
    status = "RevisionStatus",
    schema = "disabled"
)]
#[serde(rename_all = "camelCase")]
pub struct FunctionRevisionSpec {
    /// `Active` or `Inactive`.
    #[serde(default)]
    pub desired_state: String,
    /// The package image of this revision.
    #[serde(default)]
    pub image: Option<String>,
    /// Pull policy of the image.
    #[serde(default)]
    pub package_pull_policy: Option<String>,
    /// Secrets to pull the image with.
    #[serde(default)]
    pub package_pull_secrets: Option<Vec<LocalObjectReference>>,
    /// The revision number.
    #[serde(default)]
    pub revision: Option<i64>,
}

/// The status of a package revision, as far as xfn reads or writes it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RevisionStatus {
    /// Where Crossplane dials the function.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// Conditions, among them `RevisionHealthy` and `RuntimeHealthy`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The image after ImageConfig rewriting, if Crossplane resolved one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_image: Option<String>,
    /// The capabilities of the package (`composition`, `operation`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<String>,
}

/// A condition of a Crossplane object (crossplane-runtime's `Condition`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// e.g. `RuntimeHealthy`.
    #[serde(rename = "type", default)]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[serde(default)]
    pub status: String,
    /// When the status last changed (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
    /// A CamelCase reason.
    #[serde(default)]
    pub reason: String,
    /// A human-readable message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The generation the condition was set for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

impl FunctionRevision {
    /// Whether Crossplane calls this revision.
    pub fn is_active(&self) -> bool {
        self.spec.desired_state == ACTIVE
    }

    /// The Function this revision belongs to (its package label).
    pub fn function_name(&self) -> Option<&str> {
        self.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(LABEL_PACKAGE))
            .map(String::as_str)
    }

    /// The image to run: Crossplane's resolved image, else `spec.image`.
    pub fn image(&self) -> Option<&str> {
        self.status
            .as_ref()
            .and_then(|s| s.resolved_image.as_deref())
            .or(self.spec.image.as_deref())
    }

    /// The condition of type `type_`, if set.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.status
            .as_ref()?
            .conditions
            .iter()
            .find(|c| c.type_ == type_)
    }
}

/// A `pkg.crossplane.io/v1beta1` DeploymentRuntimeConfig: templates that
/// Crossplane's runtime (and so xfn, for container functions) starts from.
///
/// Written by hand rather than derived: Crossplane's CRD does not require
/// `spec`, and a config without one (or with `spec: null`) is read as an
/// empty one.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct DeploymentRuntimeConfig {
    /// Its metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Its templates, each optional.
    #[serde(default, deserialize_with = "null_as_default")]
    pub spec: DeploymentRuntimeConfigSpec,
}

fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

impl kube::Resource for DeploymentRuntimeConfig {
    type DynamicType = ();
    type Scope = kube::core::ClusterResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        "DeploymentRuntimeConfig".into()
    }

    fn group(_: &()) -> Cow<'_, str> {
        "pkg.crossplane.io".into()
    }

    fn version(_: &()) -> Cow<'_, str> {
        "v1beta1".into()
    }

    fn plural(_: &()) -> Cow<'_, str> {
        "deploymentruntimeconfigs".into()
    }

    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// The templates of a DeploymentRuntimeConfig.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentRuntimeConfigSpec {
    /// The base of the function's Deployment.
    #[serde(default)]
    pub deployment_template: Option<DeploymentTemplate>,
    /// The base of its Service's metadata.
    #[serde(default)]
    pub service_template: Option<ObjectTemplate>,
    /// The base of its ServiceAccount's metadata.
    #[serde(default)]
    pub service_account_template: Option<ObjectTemplate>,
}

/// Template metadata: name, labels, annotations.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TemplateMeta {
    /// A name that replaces the default.
    #[serde(default)]
    pub name: Option<String>,
    /// Labels to add.
    #[serde(default)]
    pub labels: Option<BTreeMap<String, String>>,
    /// Annotations to add.
    #[serde(default)]
    pub annotations: Option<BTreeMap<String, String>>,
}

/// A template with metadata only.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ObjectTemplate {
    /// Its metadata.
    #[serde(default)]
    pub metadata: Option<TemplateMeta>,
}

/// The Deployment template of a DeploymentRuntimeConfig.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentTemplate {
    /// Its metadata.
    #[serde(default)]
    pub metadata: Option<TemplateMeta>,
    /// The Deployment spec to start from (kept as JSON: a template may
    /// leave out fields a Deployment requires, such as its selector).
    #[serde(default)]
    pub spec: Option<serde_json::Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_runtime_config_may_have_no_spec_and_fields_xfn_does_not_know() {
        let meta = json!({"name": "default", "uid": "u"});
        for spec in [None, Some(json!(null)), Some(json!({"later": {"x": 1}}))] {
            let mut object = json!({"apiVersion": "pkg.crossplane.io/v1beta1",
                "kind": "DeploymentRuntimeConfig", "metadata": meta, "status": {"y": 2}});
            if let Some(spec) = spec {
                object["spec"] = spec;
            }
            let config: DeploymentRuntimeConfig = serde_json::from_value(object).unwrap();
            assert_eq!(config.metadata.name.as_deref(), Some("default"));
            assert_eq!(config.spec, DeploymentRuntimeConfigSpec::default());
        }
        assert_eq!(
            <DeploymentRuntimeConfig as kube::Resource>::url_path(&(), None),
            "/apis/pkg.crossplane.io/v1beta1/deploymentruntimeconfigs"
        );
    }

    #[test]
    fn a_revision_may_leave_out_what_its_crd_does_not_require() {
        let revision: FunctionRevision = serde_json::from_value(json!({
            "apiVersion": "pkg.crossplane.io/v1", "kind": "FunctionRevision",
            "metadata": {"name": "r"},
            "spec": {"desiredState": "Active", "image": "i", "future": true},
            "status": {"conditions": [{"type": "RevisionHealthy", "extra": 1}]},
        }))
        .unwrap();
        assert!(revision.is_active());
        assert_eq!(revision.condition("RevisionHealthy").unwrap().status, "");
    }
}
