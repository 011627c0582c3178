//! `{{name}}`: a Crossplane composition function, built as a wasm
//! component for xfn.
//!
//! For every composite resource (XR) it composes one S3 bucket (a typed
//! [`Bucket`]), marks it ready when the provider reports it `Ready`, and
//! writes the bucket's ARN back to the XR's status. It shows the parts of
//! `xfn_sdk` most functions use; `cargo doc --open` documents them all.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use xfn_sdk::{Function, InputType, Ready, Request, Resource, Response};

// The function's input, the `input` of its pipeline step. `make crd`
// writes its CustomResourceDefinition to `package/input/`, with the doc
// comments (`///`) as descriptions. `Request::typed_input` checks
// `apiVersion` and `kind` against `InputType` and decodes the other
// fields, so an unknown field (a typo) is an error naming it.

/// The input of {{name}}: the bucket it composes for each XR.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Input {
    /// The AWS region of the bucket; us-east-1 (with a warning) if unset.
    #[serde(default)]
    pub region: Option<String>,
    /// Tags to set on the bucket.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

impl InputType for Input {
    const API_VERSION: &'static str = "{{name}}.fn.example.org/v1alpha1";
    const KIND: &'static str = "Input";
}

/// The region used when the input gives none.
pub const DEFAULT_REGION: &str = "us-east-1";

/// The name of the composed bucket in the Composition's desired state.
pub const BUCKET: &str = "bucket";

/// A composed resource as a typed struct: an S3 bucket of the Upbound AWS
/// provider. A typo in a field name is a compile error here, where it
/// would be a silent mistake in a `json!` literal. (`kopium` turns a
/// provider's CRD into such structs; see xfn's docs/writing-functions.md.)
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Bucket {
    /// `s3.aws.upbound.io/v1beta1`.
    pub api_version: &'static str,
    /// `Bucket`.
    pub kind: &'static str,
    /// The bucket's spec.
    pub spec: BucketSpec,
}

/// A bucket's `spec`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BucketSpec {
    /// What the provider creates.
    pub for_provider: BucketParameters,
}

/// A bucket's `spec.forProvider`.
#[derive(Debug, Serialize)]
pub struct BucketParameters {
    /// The AWS region.
    pub region: String,
    /// Tags on the bucket.
    pub tags: BTreeMap<String, String>,
}

/// What the function writes to the XR's status.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct XrStatus {
    /// The bucket's ARN, once the provider has reported it.
    pub bucket_arn: Option<String>,
}

/// The function.
pub struct Func;

impl Function for Func {
    fn run(req: &Request) -> Result<Response, xfn_sdk::Error> {
        // Pass the desired state and context on to the next step.
        let mut rsp = Response::to(req);

        // A bad input is the user's to fix: a fatal result, not an Err.
        let input: Input = match req.typed_input() {
            Ok(input) => input,
            Err(e) => {
                rsp.fatal(e.to_string()).reason("InvalidInput");
                return Ok(rsp);
            }
        };
        let Some(xr) = req.observed_composite() else {
            rsp.fatal("the request has no observed composite resource");
            return Ok(rsp);
        };
        let xr_name = xr.name().unwrap_or("unnamed");
        xfn_sdk::debug!("composing a bucket for {xr_name}");

        let region = match input.region {
            Some(region) => region,
            None => {
                rsp.warning(format!("input sets no region: using {DEFAULT_REGION}"))
                    .reason("DefaultRegion");
                DEFAULT_REGION.to_owned()
            }
        };
        let mut tags = input.tags;
        tags.insert("crossplane.io/composite".to_owned(), xr_name.to_owned());
        let bucket = Bucket {
            api_version: "s3.aws.upbound.io/v1beta1",
            kind: "Bucket",
            spec: BucketSpec {
                for_provider: BucketParameters { region, tags },
            },
        };
        let mut desired = Resource::from_typed(&bucket)?;

        // What the provider reports about the bucket it made: readiness
        // from its Ready condition, and its ARN for the XR's status.
        if let Some(observed) = req.observed_composed().get(BUCKET) {
            if observed.get_condition("Ready").is_true() {
                desired.ready = Ready::True;
            }
            if let Ok(arn) = observed.get_string("status.atProvider.arn") {
                // A deep merge: status fields earlier steps wrote stay.
                rsp.merge_desired_composite_status(&XrStatus {
                    bucket_arn: Some(arn.to_owned()),
                })?;
            }
        }
        rsp.set_desired_composed(BUCKET, desired);
        rsp.normal(format!("composed a bucket for {xr_name}"))
            .reason("Composed");
        Ok(rsp)
    }
}

xfn_sdk::export!(Func);

#[cfg(test)]
mod tests {
    use super::*;
    use xfn_sdk::Severity;

    /// A unit test with the request built in code; tests/function.rs
    /// reads whole requests and responses from YAML fixtures.
    #[test]
    fn a_typo_in_the_input_is_fatal_and_named() {
        let req = xfn_sdk::testing::request_from_yaml(&format!(
            "input: {{ apiVersion: {}, kind: {}, regoin: eu-west-1 }}",
            Input::API_VERSION,
            Input::KIND
        ))
        .expect("a request");
        let rsp = Func::run(&req).expect("runs");
        assert_eq!(rsp.results[0].severity, Severity::Fatal);
        assert!(
            rsp.results[0].message.contains("regoin"),
            "{}",
            rsp.results[0].message
        );
    }

    #[test]
    fn the_input_crd_names_the_input() {
        let crd = xfn_sdk::crd::input_crd::<Input>().expect("a CRD");
        assert_eq!(crd["spec"]["names"]["kind"], Input::KIND);
        let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
        assert_eq!(schema["properties"]["region"]["type"], "string");
    }
}
