//! The function run on whole requests, written as YAML the way
//! `crossplane render` and the Go SDK's tests show them, and compared
//! with whole responses (`assert_response_eq!` prints the fields that
//! differ and a diff).

use xfn_sdk::testing::{request_from_yaml, response_from_yaml};
use xfn_sdk::{Function, assert_response_eq};

use {{crate}}::{Func, Input};

fn run(request: &str) -> xfn_sdk::Response {
    let req = request_from_yaml(request).expect("the request fixture");
    Func::run(&req).expect("the function runs")
}

/// First call: nothing observed yet, no region in the input. The bucket
/// is composed (not ready), with a warning for the default region.
#[test]
fn composes_a_bucket_and_warns_of_the_default_region() {
    let want =
        response_from_yaml(include_str!("fixtures/response.yaml")).expect("the response fixture");
    assert_response_eq!(run(include_str!("fixtures/request.yaml")), want);
}

/// Later call: the provider reports the bucket Ready with its ARN. The
/// bucket is ready, and the ARN joins the status an earlier step wrote.
#[test]
fn a_ready_bucket_is_ready_and_its_arn_joins_the_xr_status() {
    let want = response_from_yaml(include_str!("fixtures/response-observed.yaml"))
        .expect("the response fixture");
    assert_response_eq!(run(include_str!("fixtures/request-observed.yaml")), want);
}

/// The input's CRD in package/input/ is the one the input type makes
/// (`make crd` rewrites it).
#[test]
fn the_packaged_input_crd_is_up_to_date() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("package/input")
        .join(xfn_sdk::crd::input_crd_file_name::<Input>());
    let packaged = std::fs::read_to_string(&path).unwrap_or_default();
    let generated = xfn_sdk::crd::input_crd_yaml::<Input>().expect("the CRD");
    assert!(
        packaged == generated,
        "{} is not the input's CRD: run `make crd`",
        path.display()
    );
}
