//! function-status-transformer, ported to Rust for xfn.
//!
//! A port of crossplane-contrib/function-status-transformer v0.5.1: each
//! status-condition hook matches conditions of observed composed resources
//! (and optionally of the composite and of the extra resources
//! function-extra-resources put in the context), and when all its matchers
//! match it sets conditions and creates events (results) on the composite,
//! their messages Go templates of the groups the message regular
//! expressions captured. The function's own `StatusTransformationSuccess`
//! condition reports failures. Differences are listed in the README.

pub mod conditions;
pub mod input;
pub mod template;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};
use xfn_gocompat::goregex::{GoRegex, subexp_names};
use xfn_sdk::{Condition, ConditionStatus, FunctionResult, Request, Response, Severity, Target};

use crate::conditions::get_condition;
use crate::input::{ConditionMatcher, CreateEvent, Matcher, SetCondition, StatusTransformation};

/// The function's own condition type.
pub const TYPE_FUNCTION_SUCCESS: &str = "StatusTransformationSuccess";
/// The key under which the composite is matched as a resource.
pub const COMPOSITE_RESOURCE_KEY: &str =
    "function-status-transformer.reserved-keys.composite-resource";
/// The context key function-extra-resources fills.
pub const EXTRA_RESOURCES_KEY: &str = "apiextensions.crossplane.io/extra-resources";

/// The function, for [`xfn_sdk::export!`].
pub struct StatusTransformer;

impl xfn_sdk::Function for StatusTransformer {
    fn run(request: &Request) -> Result<Response, xfn_sdk::Error> {
        Ok(run(request))
    }
}

xfn_sdk::export!(StatusTransformer);

type Groups = BTreeMap<String, String>;
type Object = Map<String, Value>;

fn fail(rsp: &mut Response, reason: &str, message: String) {
    rsp.condition_false(TYPE_FUNCTION_SUCCESS, reason)
        .message(message);
}

/// Runs the function on one request (Go's `RunFunction`).
pub fn run(req: &Request) -> Response {
    let mut rsp = Response::to(req);
    let input: StatusTransformation =
        match xfn_select::input::decode(req, "*v1beta1.StatusTransformation") {
            Ok(input) => input,
            Err(e) => {
                fail(
                    &mut rsp,
                    "InputFailure",
                    format!("cannot get Function input from *v1.RunFunctionRequest: {e}"),
                );
                return rsp;
            }
        };
    let xr: Object = req
        .observed_composite()
        .and_then(|r| r.resource.clone())
        .unwrap_or_default();
    let observed: BTreeMap<&str, Object> = req
        .observed_composed()
        .iter()
        .map(|(k, r)| (k.as_str(), r.resource.clone().unwrap_or_default()))
        .collect();

    let mut errored = false;
    let mut set_types: BTreeSet<String> = BTreeSet::new();
    let mut extra: Option<Vec<(String, Object)>> = None;
    for (shi, hook) in input
        .status_condition_hooks
        .as_deref()
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        let mut groups = Groups::new();
        let mut all_matched = false;
        for (mci, mc) in hook
            .matchers
            .as_deref()
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            if mc.include_extra_resources.unwrap_or(false) && extra.is_none() {
                match extra_resources(req) {
                    Ok(e) => extra = Some(e),
                    Err(e) => {
                        fail(
                            &mut rsp,
                            "InputFailure",
                            format!("cannot load extra-resources: {e}"),
                        );
                        return rsp;
                    }
                }
            }
            let result = match_resources(mc, &observed, &xr, extra.as_deref().unwrap_or_default());
            let matched = match result {
                Ok((matched, g)) => {
                    if matched {
                        groups.extend(g);
                    }
                    matched
                }
                Err(e) => {
                    fail(
                        &mut rsp,
                        "MatchFailure",
                        format!(
                            "cannot match resources, statusConditionHookIndex: {shi}, matchConditionIndex: {mci}: {e}"
                        ),
                    );
                    errored = true;
                    false
                }
            };
            if !matched {
                all_matched = false;
                break;
            }
            all_matched = true;
        }
        if !all_matched {
            continue;
        }

        for (sci, sc) in hook
            .set_conditions
            .as_deref()
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            let ty = sc
                .condition
                .as_ref()
                .and_then(|c| c.type_.clone())
                .unwrap_or_default();
            if set_types.contains(&ty) && !sc.force.unwrap_or(false) {
                continue;
            }
            match transform_condition(sc, &groups) {
                Ok(c) => {
                    rsp.conditions.push(c);
                    set_types.insert(ty);
                }
                Err(e) => {
                    fail(
                        &mut rsp,
                        "SetConditionFailure",
                        format!(
                            "cannot set condition, statusConditionHookIndex: {shi}, setConditionIndex: {sci}: {e}"
                        ),
                    );
                    errored = true;
                }
            }
        }
        for (cei, ce) in hook
            .create_events
            .as_deref()
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            match transform_event(ce, &groups) {
                Ok(r) => rsp.results.push(r),
                Err(e) => {
                    fail(
                        &mut rsp,
                        "SetConditionFailure",
                        format!(
                            "cannot create event, statusConditionHookIndex: {shi}, createEventIndex: {cei}: {e}"
                        ),
                    );
                    errored = true;
                }
            }
        }
    }
    if !errored {
        rsp.condition_true(TYPE_FUNCTION_SUCCESS, "Available");
    }
    rsp
}

/// The resources a matcher looks at, by key, and whether they match
/// (Go's `matchResources`). Go walks the resources in its random map order;
/// here they are walked by key.
fn match_resources(
    mc: &Matcher,
    observed: &BTreeMap<&str, Object>,
    xr: &Object,
    extra: &[(String, Object)],
) -> Result<(bool, Groups), String> {
    let include_extra = mc.include_extra_resources.unwrap_or(false);
    let mut rs: BTreeMap<String, &Object> = BTreeMap::new();
    for (i, r) in mc
        .resources
        .as_deref()
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        let re = GoRegex::compile(r.name.as_deref().unwrap_or(""))
            .map_err(|e| format!("cannot compile resource key regex, resourcesIndex: {i}: {e}"))?;
        for (k, o) in observed {
            if re.is_match(k) {
                rs.insert((*k).to_owned(), o);
            }
        }
        if !include_extra {
            continue;
        }
        for (into, o) in extra {
            let key = extra_resource_key(into, o);
            if re.is_match(&key) {
                rs.insert(key, o);
            }
        }
    }
    if mc.include_composite_as_resource.unwrap_or(false) {
        rs.insert(COMPOSITE_RESOURCE_KEY.to_owned(), xr);
    }
    let cms = mc.conditions.as_deref().unwrap_or_default();
    if rs.is_empty() || cms.is_empty() {
        return Ok((false, Groups::new()));
    }
    let resources: Vec<&Object> = rs.values().copied().collect();
    match mc
        .type_
        .as_deref()
        .unwrap_or("AllResourcesMatchAllConditions")
    {
        "AnyResourceMatchesAnyCondition" => {
            for r in &resources {
                for cm in cms {
                    if let Some(g) = match_one(cm, r)? {
                        return Ok((true, g));
                    }
                }
            }
            Ok((false, Groups::new()))
        }
        "AnyResourceMatchesAllConditions" => {
            let mut captured = Groups::new();
            for r in &resources {
                let mut matched = 0;
                for cm in cms {
                    let Some(g) = match_one(cm, r)? else {
                        break;
                    };
                    matched += 1;
                    captured.extend(g);
                }
                if matched == cms.len() {
                    return Ok((true, captured));
                }
            }
            Ok((false, Groups::new()))
        }
        "AllResourcesMatchAnyCondition" => {
            let mut captured = Groups::new();
            for r in &resources {
                let mut matched = 0;
                for cm in cms {
                    if let Some(g) = match_one(cm, r)? {
                        matched += 1;
                        captured.extend(g);
                    }
                }
                if matched == 0 {
                    return Ok((false, Groups::new()));
                }
            }
            Ok((true, captured))
        }
        _ => {
            let mut captured = Groups::new();
            for r in &resources {
                for cm in cms {
                    let Some(g) = match_one(cm, r)? else {
                        return Ok((false, Groups::new()));
                    };
                    captured.extend(g);
                }
            }
            Ok((true, captured))
        }
    }
}

/// Whether `object` has the condition `cm` describes, and the groups its
/// message captured (Go's `match`).
fn match_one(cm: &ConditionMatcher, object: &Object) -> Result<Option<Groups>, String> {
    let c = get_condition(object, cm.type_.as_deref().unwrap_or(""));
    if cm.reason.as_ref().is_some_and(|r| *r != c.reason) {
        return Ok(None);
    }
    if cm.status.as_ref().is_some_and(|s| *s != c.status) {
        return Ok(None);
    }
    let Some(pattern) = cm.message.as_deref() else {
        return Ok(Some(Groups::new()));
    };
    let re = GoRegex::compile(pattern).map_err(|e| format!("cannot compile message regex: {e}"))?;
    let Some(matches) = re.find_submatch(&c.message) else {
        return Ok(None);
    };
    let names = subexp_names(pattern);
    let mut groups = Groups::new();
    for (i, m) in matches.into_iter().enumerate().skip(1) {
        groups.insert(names.get(i).cloned().unwrap_or_default(), m);
    }
    Ok(Some(groups))
}

fn target(t: &Option<String>) -> Target {
    if t.as_deref() == Some("CompositeAndClaim") {
        Target::CompositeAndClaim
    } else {
        Target::Composite
    }
}

/// Go's `templateMessage`: the message as it is without captured groups.
fn template_message(message: Option<&str>, groups: &Groups) -> Result<Option<String>, String> {
    match message {
        None => Ok(None),
        Some(m) if groups.is_empty() => Ok(Some(m.to_owned())),
        Some(m) => template::render(m, groups).map(Some),
    }
}

fn transform_condition(sc: &SetCondition, groups: &Groups) -> Result<Condition, String> {
    let c = sc.condition.as_ref();
    let text = |f: fn(&input::Condition) -> &Option<String>| {
        c.and_then(|c| f(c).clone()).unwrap_or_default()
    };
    let status = match text(|c| &c.status).as_str() {
        "True" => ConditionStatus::True,
        "False" => ConditionStatus::False,
        _ => ConditionStatus::Unknown,
    };
    let message = template_message(c.and_then(|c| c.message.as_deref()), groups)?;
    Ok(Condition {
        r#type: text(|c| &c.type_),
        status,
        reason: text(|c| &c.reason),
        message,
        target: Some(target(&sc.target)),
    })
}

fn transform_event(ce: &CreateEvent, groups: &Groups) -> Result<FunctionResult, String> {
    let event = ce.event.as_ref();
    let severity = match event.and_then(|e| e.type_.as_deref()).unwrap_or("Normal") {
        "Normal" => Severity::Normal,
        "Warning" => Severity::Warning,
        other => {
            return Err(format!(
                "invalid type {other}, must be one of [Normal, Warning]"
            ));
        }
    };
    let message = event.and_then(|e| e.message.clone()).unwrap_or_default();
    let message = template_message(Some(&message), groups)?.unwrap_or_default();
    Ok(FunctionResult {
        severity,
        message,
        reason: event.and_then(|e| e.reason.clone()),
        target: Some(target(&ce.target)),
    })
}

/// `extra-resource.<into>.<group>.<kind>.<namespace>.<name>`.
fn extra_resource_key(into: &str, o: &Object) -> String {
    let text = |k: &str| o.get(k).and_then(Value::as_str).unwrap_or("");
    let meta = |k: &str| {
        o.get("metadata")
            .and_then(|m| m.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let api_version = text("apiVersion");
    // schema.ParseGroupVersion; on an error the whole GVK is empty.
    let (group, kind) = match api_version.matches('/').count() {
        0 => ("", text("kind")),
        1 => (
            api_version.split_once('/').map_or("", |(g, _)| g),
            text("kind"),
        ),
        _ => ("", ""),
    };
    [
        "extra-resource",
        into,
        group,
        kind,
        meta("namespace"),
        meta("name"),
    ]
    .join(".")
}

/// Go's `%T` of a JSON value as `structpb.Struct.AsMap` gives it.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// The objects function-extra-resources put in the context, with their
/// `into` (Go's `getExtraResources`; Go walks the keys in random order,
/// here sorted).
fn extra_resources(req: &Request) -> Result<Vec<(String, Object)>, String> {
    let Some(value) = req.context_key(EXTRA_RESOURCES_KEY) else {
        return Ok(Vec::new());
    };
    let Value::Object(by_into) = value else {
        return Err(format!(
            "unexpected extra-resources type: {}",
            go_type(value)
        ));
    };
    let mut out = Vec::new();
    for (k, v) in by_into {
        let Value::Array(items) = v else {
            return Err(format!(
                "unexpected extra-resources value type for {k}: {}",
                go_type(v)
            ));
        };
        for (i, item) in items.iter().enumerate() {
            let Value::Object(o) = item else {
                return Err(format!(
                    "unexpected extra-resources value type for {k} [{i}]: {}",
                    go_type(item)
                ));
            };
            out.push((k.clone(), o.clone()));
        }
    }
    Ok(out)
}
