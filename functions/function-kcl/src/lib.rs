//! `function-kcl`: crossplane-contrib/function-kcl's contract (v0.12.2) on
//! xfn-kcl, xfn's KCL interpreter.
//!
//! A step's `KCLInput` gives an inline KCL program (`spec.source`), extra
//! `spec.params` and a `spec.target`. The program sees the request as
//! `option("params")` (`oxr`, `dxr`, `ocds`, `dcds`, `ctx`,
//! `extraResources`, `requiredResources` and the input's params) and
//! returns resources as its `items` (or, without `items`, as its whole
//! output). They become the response as function-kcl makes them: the
//! `krm.kcl.dev/composition-resource-name` and `krm.kcl.dev/ready`
//! annotations, the XR's status, and the special kinds of
//! `meta.krm.kcl.dev/v1alpha1` (connection details, extra and required
//! resources, conditions, events, context).
//!
//! Programs from a registry (`oci://`), package dependencies and embedded
//! functions' directories are fetched by `xfn render` on the host and
//! handed over in the input (`xfn.dev/kcl`); without them an `oci://`
//! source is refused, and the KCL settings that need files always are,
//! with a fatal result naming them.

mod input;
mod params;
mod process;

use xfn_sdk::{Function, Request, Response};

pub use input::KclInput;

/// The function.
pub struct FunctionKcl;

impl Function for FunctionKcl {
    fn run(req: &Request) -> Result<Response, xfn_sdk::Error> {
        let mut rsp = Response::to(req);
        if let Err(msg) = run(req, &mut rsp) {
            rsp.fatal(msg);
        }
        Ok(rsp)
    }
}

xfn_sdk::export!(FunctionKcl);

/// Runs one request; an `Err` is the message of a fatal result.
fn run(req: &Request, rsp: &mut Response) -> Result<(), String> {
    let mut input: KclInput = req
        .input()
        .map_err(|e| format!("cannot get Function input from *v1.RunFunctionRequest: {e}"))?;
    input
        .validate()
        .map_err(|e| format!("invalid function input: {e}"))?;
    input.check_supported()?;
    let options = params::options(req, &input)?;
    let host = input.host_files.take().unwrap_or_default();
    let packages = xfn_kcl::Packages {
        main: host.main.clone().unwrap_or_default(),
        external: host.packages,
    };
    let opts = xfn_kcl::RunOptions {
        options,
        limits: xfn_kcl::Limits::default(),
        packages: std::sync::Arc::new(packages),
    };
    // A package the host fetched (an `oci://` program or an embedded
    // function's directory) runs as `kcl run` runs a package directory.
    let out = match host.main {
        Some(_) => xfn_kcl::run_package(&opts),
        None => xfn_kcl::run(&input.spec.source, &opts),
    }
    .map_err(|e| format!("failed to run kcl function pipelines: {e}"))?;
    let data = process::data_resources(out.values, out.stream, &input.spec.config)?;
    process::process(req, rsp, &input, data)
}
