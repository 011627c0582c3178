//! function-environment-configs, ported to Rust for xfn.
//!
//! A port of crossplane-contrib/function-environment-configs v0.7.1: it
//! asks Crossplane for the EnvironmentConfigs its input names or selects
//! (requirements `environment-config-<index>`), and once they arrive in
//! `requiredResources` merges their `data` into the composition
//! environment, the context key `apiextensions.crossplane.io/environment`:
//! the configs' data over the environment already in the context, over the
//! input's `defaultData`. Differences from the Go function are listed in
//! the README.

pub mod environment;
pub mod input;

use serde_json::{Map, Value};
use xfn_sdk::{
    CONTEXT_KEY_ENVIRONMENT, MatchLabels, Request, Requirements, ResourceMatch, ResourceSelector,
    Response,
};
use xfn_select::goquote::quote;
use xfn_select::input::Policy;
use xfn_select::labels::match_labels;
use xfn_select::sort::{TypeNaming, sort_by_field_path};

use crate::environment::{config_data, default_gvk, merge_maps};
use crate::input::{EnvironmentSource, Input};

/// A Kubernetes object.
type Object = Map<String, Value>;

/// The `apiVersion` of the EnvironmentConfigs the function requires.
pub const ENVIRONMENT_CONFIG_API_VERSION: &str = "apiextensions.crossplane.io/v1beta1";
/// The `kind` of the EnvironmentConfigs the function requires.
pub const ENVIRONMENT_CONFIG_KIND: &str = "EnvironmentConfig";

/// The requirement name of the `index`th entry of `environmentConfigs`.
///
/// ```
/// assert_eq!(function_environment_configs::requirement_name(2), "environment-config-2");
/// ```
pub fn requirement_name(index: usize) -> String {
    format!("environment-config-{index}")
}

/// The function, for [`xfn_sdk::export!`].
pub struct EnvironmentConfigs;

impl xfn_sdk::Function for EnvironmentConfigs {
    fn run(request: &Request) -> Result<Response, xfn_sdk::Error> {
        Ok(run(request))
    }
}

xfn_sdk::export!(EnvironmentConfigs);

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
    let Some(configs) = spec.environment_configs.as_deref() else {
        return rsp;
    };

    let xr = Value::Object(
        req.observed_composite()
            .and_then(|r| r.resource.clone())
            .unwrap_or_default(),
    );
    match build_requirements(configs, &xr) {
        Ok(requirements) => rsp.requirements = Some(requirements),
        Err(e) => {
            rsp.fatal(format!("cannot build requirements: {e}"));
            return rsp;
        }
    }

    // Go tests `req.RequiredResources == nil`: an empty map on the wire is nil.
    if req.required_resources.is_empty() {
        return rsp;
    }

    // A context value that is not an object reads as an empty environment.
    let input_env = req.context_key(CONTEXT_KEY_ENVIRONMENT).map(|v| match v {
        Value::Object(o) => o.clone(),
        _ => Map::new(),
    });

    let selected = match selected_configs(configs, Policy::is_optional(spec.policy.as_ref()), req) {
        Ok(selected) => selected,
        Err(e) => {
            rsp.fatal(format!("cannot get selected environment configs: {e}"));
            return rsp;
        }
    };

    let mut merged = Map::new();
    for (to_field_path, configs) in &selected {
        for config in configs {
            match config_data(config, to_field_path) {
                Ok(data) => merged = merge_maps(merged, &data),
                Err(e) => {
                    rsp.fatal(format!("cannot merge environment data: {e}"));
                    return rsp;
                }
            }
        }
    }
    if let Some(input_env) = input_env {
        merged = merge_maps(input_env, &merged);
    }
    if let Some(default_data) = spec.default_data {
        merged = merge_maps(default_data.into_iter().collect(), &merged);
    }
    default_gvk(&mut merged);
    rsp.set_context_key(CONTEXT_KEY_ENVIRONMENT, Value::Object(merged));
    rsp
}

/// What `environmentConfigs` asks Crossplane for (Go's `buildRequirements`).
///
/// Go crashes on a `Reference` without `ref`, a `Selector` without
/// `selector` and a label matcher without its value or field path; these
/// are errors here.
fn build_requirements(configs: &[EnvironmentSource], xr: &Value) -> Result<Requirements, String> {
    let mut requirements = Requirements::default();
    for (i, config) in configs.iter().enumerate() {
        let selector = |m: ResourceMatch| ResourceSelector {
            api_version: ENVIRONMENT_CONFIG_API_VERSION.into(),
            kind: ENVIRONMENT_CONFIG_KIND.into(),
            r#match: Some(m),
            namespace: None,
        };
        match config.raw_type() {
            "Reference" | "" => {
                let reference = config.reference.as_ref().ok_or_else(|| {
                    format!("environmentConfigs[{i}] is of type Reference but has no ref")
                })?;
                let name = reference.name.clone().unwrap_or_default();
                requirements.resources.insert(
                    requirement_name(i),
                    selector(ResourceMatch::MatchName(name)),
                );
            }
            "Selector" => {
                let sel = config.selector.as_ref().ok_or_else(|| {
                    format!("environmentConfigs[{i}] is of type Selector but has no selector")
                })?;
                let labels = match_labels(sel.match_labels.as_deref().unwrap_or_default(), xr)
                    .map_err(|e| e.to_string())?;
                if labels.is_empty() {
                    continue;
                }
                requirements.resources.insert(
                    requirement_name(i),
                    selector(ResourceMatch::MatchLabels(MatchLabels { labels })),
                );
            }
            // Go's switch has no default: another type asks for nothing.
            _ => {}
        }
    }
    Ok(requirements)
}

/// The selected EnvironmentConfigs by `toFieldPath`, each path in the order
/// it first appears (Go's `getSelectedEnvConfigs`; Go keeps them in a map
/// and merges the paths in random order).
fn selected_configs(
    configs: &[EnvironmentSource],
    optional: bool,
    req: &Request,
) -> Result<Vec<(String, Vec<Object>)>, String> {
    let mut out: Vec<(String, Vec<Object>)> = Vec::new();
    for (i, config) in configs.iter().enumerate() {
        let name = requirement_name(i);
        let Some(resources) = req.required_resources.get(&name) else {
            continue;
        };
        let mut objects: Vec<Object> = resources
            .items
            .iter()
            .map(|r| r.resource.clone().unwrap_or_default())
            .collect();
        let to_field_path = config.to_field_path.clone().unwrap_or_default();
        let chosen = match config.source_type() {
            "Reference" => {
                let ref_name = config
                    .reference
                    .as_ref()
                    .and_then(|r| r.name.clone())
                    .unwrap_or_default();
                by_reference(&ref_name, optional, objects).map_err(|e| {
                    format!(
                        "cannot process environment config {} by reference, {}: {e}",
                        quote(&ref_name),
                        quote(&name)
                    )
                })?
            }
            "Selector" => {
                let selector = config.selector.as_ref();
                let mode = selector.map_or("Single", |s| s.mode());
                let wrap = |e: String| {
                    format!(
                        "cannot process environment config {} by selector: {e}",
                        quote(&name)
                    )
                };
                match mode {
                    "Single" => {
                        if objects.len() != 1 {
                            return Err(wrap(format!(
                                "expected exactly one required resource, got {}",
                                objects.len()
                            )));
                        }
                        objects
                    }
                    "Multiple" => {
                        let min = selector.and_then(|s| s.min_match);
                        let max = selector.and_then(|s| s.max_match);
                        if let Some(min) = min
                            && (objects.len() as u64) < min
                        {
                            return Err(wrap(format!(
                                "expected at least {min} required resources, got {}",
                                objects.len()
                            )));
                        }
                        let path = selector.map_or("metadata.name", |s| s.sort_by_field_path());
                        sort_by_field_path(&mut objects, |o| Some(o), path, TypeNaming::GoKind)
                            .map_err(|e| wrap(e.to_string()))?;
                        if let Some(max) = max {
                            objects.truncate(usize::try_from(max).unwrap_or(usize::MAX));
                        }
                        objects
                    }
                    other => return Err(wrap(format!("unknown selector mode {}", quote(other)))),
                }
            }
            _ => continue,
        };
        if chosen.is_empty() {
            continue;
        }
        match out.iter_mut().find(|(p, _)| *p == to_field_path) {
            Some((_, list)) => list.extend(chosen),
            None => out.push((to_field_path, chosen)),
        }
    }
    Ok(out)
}

/// The one EnvironmentConfig a reference resolved to, or none if the policy
/// allows it (Go's `processSourceByReference`).
fn by_reference(name: &str, optional: bool, objects: Vec<Object>) -> Result<Vec<Object>, String> {
    match objects.len() {
        0 if optional => Ok(Vec::new()),
        0 => Err(format!(
            "Required environment config {} not found",
            quote(name)
        )),
        1 => Ok(objects),
        n => Err(format!(
            "expected exactly one required resource {}, got {n}",
            quote(name)
        )),
    }
}
