//! function-extra-resources, ported to Rust for xfn.
//!
//! A port of crossplane-contrib/function-extra-resources v0.3.0: it asks
//! Crossplane for the resources its input names or selects (one
//! requirement per entry, named by the entry's `into`), and once they
//! arrive in `requiredResources` checks and sorts them and puts them in the
//! context key `apiextensions.crossplane.io/extra-resources`, as lists by
//! `into`. Differences from the Go function are listed in the README.

pub mod input;

use serde_json::{Map, Value};
use xfn_sdk::{MatchLabels, Request, Requirements, ResourceMatch, ResourceSelector, Response};
use xfn_select::goquote::quote;
use xfn_select::input::Policy;
use xfn_select::labels::match_labels;
use xfn_select::sort::{TypeNaming, sort_by_field_path};

use crate::input::{Input, ResourceSource};

/// The context key the selected resources are put under.
pub const CONTEXT_KEY_EXTRA_RESOURCES: &str = "apiextensions.crossplane.io/extra-resources";

/// The function, for [`xfn_sdk::export!`].
pub struct ExtraResources;

impl xfn_sdk::Function for ExtraResources {
    fn run(request: &Request) -> Result<Response, xfn_sdk::Error> {
        Ok(run(request))
    }
}

xfn_sdk::export!(ExtraResources);

/// Runs the function on one request (Go's `RunFunction`).
pub fn run(req: &Request) -> Response {
    let mut rsp = Response::to(req);
    let input: Input = match xfn_select::input::decode(req, "*v1beta1.Input") {
        Ok(input) => input,
        Err(e) => {
            rsp.fatal(format!(
                "cannot get Function input from *v1.RunFunctionRequest: {e}"
            ));
            return rsp;
        }
    };
    let spec = input.spec.unwrap_or_default();
    let sources = spec.extra_resources.unwrap_or_default();

    let xr = Value::Object(
        req.observed_composite()
            .and_then(|r| r.resource.clone())
            .unwrap_or_default(),
    );
    match build_requirements(&sources, &xr) {
        Ok(requirements) => rsp.requirements = Some(requirements),
        Err(e) => {
            rsp.fatal(format!("could not build extra resource requirements: {e}"));
            return rsp;
        }
    }

    // Go tests `req.RequiredResources == nil`: an empty map on the wire is nil.
    if req.required_resources.is_empty() {
        return rsp;
    }

    match verify_and_sort(&sources, Policy::is_optional(spec.policy.as_ref()), req) {
        Ok(extras) => {
            rsp.set_context_key(CONTEXT_KEY_EXTRA_RESOURCES, Value::Object(extras));
        }
        Err(e) => {
            rsp.fatal(format!("verifying and sorting extra resources: {e}"));
        }
    }
    rsp
}

/// What `extraResources` asks Crossplane for (Go's `buildRequirements`).
///
/// Go crashes on a `Reference` without `ref` and a `Selector` without
/// `selector`; these are errors here.
fn build_requirements(sources: &[ResourceSource], xr: &Value) -> Result<Requirements, String> {
    let mut requirements = Requirements::default();
    for (i, source) in sources.iter().enumerate() {
        let into = source.into.clone().unwrap_or_default();
        let selector = |m: ResourceMatch| ResourceSelector {
            api_version: source.api_version.clone().unwrap_or_default(),
            kind: source.kind.clone().unwrap_or_default(),
            r#match: Some(m),
            namespace: source.namespace.clone(),
        };
        match source.raw_type() {
            "Reference" | "" => {
                let reference = source.reference.as_ref().ok_or_else(|| {
                    format!("extraResources[{i}] is of type Reference but has no ref")
                })?;
                let name = reference.name.clone().unwrap_or_default();
                requirements
                    .resources
                    .insert(into, selector(ResourceMatch::MatchName(name)));
            }
            "Selector" => {
                let sel = source.selector.as_ref().ok_or_else(|| {
                    format!("extraResources[{i}] is of type Selector but has no selector")
                })?;
                let labels = match_labels(sel.match_labels.as_deref().unwrap_or_default(), xr)
                    .map_err(|e| e.to_string())?;
                if labels.is_empty() {
                    continue;
                }
                requirements.resources.insert(
                    into,
                    selector(ResourceMatch::MatchLabels(MatchLabels { labels })),
                );
            }
            // Go's switch has no default: another type asks for nothing.
            _ => {}
        }
    }
    Ok(requirements)
}

/// The resources of every entry, checked, sorted and cut, as lists by
/// `into` (Go's `verifyAndSortExtras`, v0.3.0).
///
/// As in v0.3.0, an entry whose `into` has no resources at all in the
/// request is an error (even an optional selector that was not required),
/// and an entry with nothing selected adds no key.
fn verify_and_sort(
    sources: &[ResourceSource],
    optional: bool,
    req: &Request,
) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    for source in sources {
        let into = source.into.clone().unwrap_or_default();
        let Some(resources) = req.required_resources.get(&into) else {
            return Err(format!(
                "cannot find expected extra resource {}",
                quote(&into)
            ));
        };
        let mut objects: Vec<Map<String, Value>> = resources
            .items
            .iter()
            .map(|r| r.resource.clone().unwrap_or_default())
            .collect();
        let kept = match source.source_type() {
            "Reference" => match objects.len() {
                0 if optional => continue,
                0 => {
                    return Err(format!(
                        "Required extra resource {} not found",
                        quote(&into)
                    ));
                }
                1 => objects,
                n => {
                    return Err(format!(
                        "expected exactly one extra resource {}, got {n}",
                        quote(&into)
                    ));
                }
            },
            "Selector" => {
                let selector = source.selector.as_ref();
                if let Some(min) = selector.and_then(|s| s.min_match)
                    && (objects.len() as u64) < min
                {
                    return Err(format!(
                        "expected at least {min} extra resources {}, got {}",
                        quote(&into),
                        objects.len()
                    ));
                }
                let path = selector.map_or("metadata.name", |s| s.sort_by_field_path());
                sort_by_field_path(&mut objects, |o| Some(o), path, TypeNaming::GoType)
                    .map_err(|e| e.to_string())?;
                if let Some(max) = selector.and_then(|s| s.max_match) {
                    objects.truncate(usize::try_from(max).unwrap_or(usize::MAX));
                }
                objects
            }
            _ => continue,
        };
        if kept.is_empty() {
            continue;
        }
        let list = out.entry(into).or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(list) = list {
            list.extend(kept.into_iter().map(Value::Object));
        }
    }
    Ok(out)
}
