//! An example function whose composed resource is a provider's own type:
//! `bucket.rs` is what kopium generates from the provider's CRD
//! (`crds/s3.aws.upbound.io_buckets.yaml`), so a misspelled field of the
//! Bucket is a compile error, and a value of the wrong type too.
//!
//! For each XR it composes one S3 bucket in the XR's region with its
//! tags, marks it ready when the provider reports it `Ready`, and writes
//! the bucket's ARN to the XR's status. Regenerate the types with
//! `make typed-resources-types` (needs kopium; see README.md).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use xfn_sdk::{Function, Ready, Request, Resource, Response};

#[allow(missing_docs, clippy::all)]
pub mod bucket;

use bucket::{BucketForProvider, BucketSpec, BucketStatus};

/// The name of the composed bucket in the desired state.
pub const BUCKET: &str = "bucket";

/// A resource of a provider's kind: its generated spec (and, observed,
/// status) with the type's `apiVersion` and `kind`. kopium's `--hide-kube`
/// output has the spec and status structs; this puts them in an object.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Typed<Spec, Status> {
    /// The provider's API version.
    pub api_version: String,
    /// The kind.
    pub kind: String,
    /// What the function asks for.
    pub spec: Spec,
    /// What the provider reports (observed resources only; missing is
    /// `None`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
}

/// An S3 bucket of the Upbound AWS provider.
pub type Bucket = Typed<BucketSpec, BucketStatus>;

/// The part of the XR the function reads.
#[derive(Debug, Deserialize)]
struct Xr {
    spec: XrSpec,
}

/// The XR's spec.
#[derive(Debug, Deserialize)]
struct XrSpec {
    region: String,
    #[serde(default)]
    tags: BTreeMap<String, String>,
}

/// What the function writes to the XR's status.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct XrStatus {
    bucket_arn: String,
}

/// The function.
pub struct Func;

impl Function for Func {
    fn run(req: &Request) -> Result<Response, xfn_sdk::Error> {
        let mut rsp = Response::to(req);
        let Some(xr) = req.observed_composite() else {
            rsp.fatal("the request has no observed composite resource");
            return Ok(rsp);
        };
        let spec = match xr.to_typed::<Xr>() {
            Ok(xr) => xr.spec,
            Err(e) => {
                rsp.fatal(format!("cannot read the XR: {e}"))
                    .reason("InvalidXR");
                return Ok(rsp);
            }
        };
        let mut tags = spec.tags;
        if let Some(name) = xr.name() {
            tags.insert("crossplane.io/composite".to_owned(), name.to_owned());
        }
        let bucket = Bucket {
            api_version: "s3.aws.upbound.io/v1beta1".to_owned(),
            kind: "Bucket".to_owned(),
            spec: BucketSpec {
                for_provider: BucketForProvider {
                    region: spec.region,
                    tags: Some(tags),
                    force_destroy: Some(true),
                    object_lock_enabled: None,
                },
                deletion_policy: None,
                management_policies: None,
                provider_config_ref: None,
                write_connection_secret_to_ref: None,
            },
            status: None,
        };
        let mut desired = Resource::from_typed(&bucket)?;

        // The observed bucket, read through the same generated types.
        if let Some(observed) = req.observed_composed().get(BUCKET) {
            match observed.to_typed::<Bucket>() {
                Ok(Bucket {
                    status: Some(status),
                    ..
                }) => {
                    if is_ready(&status) {
                        desired.ready = Ready::True;
                    }
                    if let Some(arn) = status.at_provider.and_then(|p| p.arn) {
                        rsp.merge_desired_composite_status(&XrStatus { bucket_arn: arn })?;
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    rsp.warning(format!("cannot read the observed bucket: {e}"))
                        .reason("UnexpectedBucket");
                }
            }
        }
        rsp.set_desired_composed(BUCKET, desired);
        Ok(rsp)
    }
}

/// Whether the provider reports the bucket `Ready`.
fn is_ready(status: &BucketStatus) -> bool {
    status
        .conditions
        .iter()
        .flatten()
        .any(|c| c.r#type == "Ready" && c.status == "True")
}

xfn_sdk::export!(Func);

#[cfg(test)]
mod tests {
    use super::*;

    const OBSERVED: &str = include_str!("../example/observed.yaml");

    #[test]
    fn the_observed_bucket_reads_as_the_generated_type() {
        let resource = xfn_sdk::testing::resource_from_yaml(OBSERVED).expect("YAML");
        let bucket: Bucket = resource.to_typed().expect("a Bucket");
        assert_eq!(bucket.spec.for_provider.region, "eu-west-3");
        let status = bucket.status.expect("a status");
        assert!(is_ready(&status));
        assert_eq!(
            status.at_provider.and_then(|p| p.arn).as_deref(),
            Some("arn:aws:s3:::typed-storage-abcde")
        );
    }

    #[test]
    fn a_field_of_the_wrong_type_is_an_error_naming_it() {
        let wrong = OBSERVED.replace("region: eu-west-3", "region: [eu-west-3]");
        let resource = xfn_sdk::testing::resource_from_yaml(&wrong).expect("YAML");
        let err = resource.to_typed::<Bucket>().unwrap_err().to_string();
        assert!(err.contains("expected a string"), "{err}");
    }
}
