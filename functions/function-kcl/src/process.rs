//! The program's output as function-kcl turns it into a response
//! (`ProcessResources` and what follows it in `RunFunction`).

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::{Map, Value as J};
use xfn_sdk::{
    Condition, ConditionStatus, FunctionResult, MatchLabels, Ready, Request, Requirements,
    Resource, ResourceMatch, ResourceSelector, Response, Severity, Target,
};

use crate::input::{ConfigSpec, KclInput};
use crate::params::desired_composite;

const ANNOTATION_READY: &str = "krm.kcl.dev/ready";
const ANNOTATION_NAME: &str = "krm.kcl.dev/composition-resource-name";
const META_API_VERSION: &str = "meta.krm.kcl.dev/v1alpha1";

type Object = Map<String, J>;

/// The resources of a program's output: the elements of its `items`, or,
/// without `items`, the output itself.
pub fn data_resources(
    values: xfn_kcl::Map,
    stream: Option<Vec<xfn_kcl::Value>>,
    config: &ConfigSpec,
) -> Result<Vec<Object>, String> {
    // Several documents are wrapped as the items of one (krm-kcl's WrapResources).
    let mut doc = match stream {
        Some(docs) if docs.len() == 1 => docs[0].to_json(),
        Some(docs) => {
            serde_json::json!({"items": docs.iter().map(xfn_kcl::Value::to_json).collect::<Vec<_>>()})
        }
        None => xfn_kcl::Value::dict(values).to_json(),
    };
    if config.disable_none {
        drop_nulls(&mut doc);
    }
    let J::Object(doc) = doc else {
        return Ok(vec![]);
    };
    if doc.is_empty() {
        return Ok(vec![]);
    }
    let Some(items) = doc.get("items") else {
        return Ok(vec![doc]);
    };
    let items = match items {
        J::Array(a) => a.clone(),
        J::Null => vec![],
        other => {
            return Err(format!(
                "cannot parse data resources from the pipeline output in *v1.RunFunctionResponse: items is a {}, not a list",
                json_type(other)
            ));
        }
    };
    let mut out = Vec::new();
    for it in items {
        match it {
            J::Object(o) => out.push(o),
            J::Null => {}
            other => {
                return Err(format!(
                    "cannot parse data resources from the pipeline output in *v1.RunFunctionResponse: an item is a {}, not an object",
                    json_type(&other)
                ));
            }
        }
    }
    Ok(out)
}

fn json_type(v: &J) -> &'static str {
    match v {
        J::Null => "null",
        J::Bool(_) => "bool",
        J::Number(_) => "number",
        J::String(_) => "string",
        J::Array(_) => "list",
        J::Object(_) => "object",
    }
}

fn drop_nulls(v: &mut J) {
    match v {
        J::Object(o) => {
            o.retain(|_, x| !x.is_null());
            o.values_mut().for_each(drop_nulls);
        }
        J::Array(a) => {
            a.retain(|x| !x.is_null());
            a.iter_mut().for_each(drop_nulls);
        }
        _ => {}
    }
}

fn str_at<'a>(o: &'a Object, key: &str) -> &'a str {
    o.get(key).and_then(J::as_str).unwrap_or("")
}

fn name_of(o: &Object) -> &str {
    o.get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(J::as_str)
        .unwrap_or("")
}

fn annotation(o: &Object, key: &str) -> Option<String> {
    o.get("metadata")?.get("annotations")?.get(key).map(|v| {
        v.as_str()
            .map(str::to_string)
            .unwrap_or_else(|| v.to_string())
    })
}

fn remove_annotation(o: &mut Object, key: &str) {
    if let Some(J::Object(a)) = o.get_mut("metadata").and_then(|m| m.get_mut("annotations")) {
        a.remove(key);
    }
}

/// function-kcl's `GetResourceName`: the name annotation (removed) or metadata.name.
fn resource_name(o: &mut Object) -> String {
    let name = annotation(o, ANNOTATION_NAME).unwrap_or_else(|| name_of(o).to_string());
    remove_annotation(o, ANNOTATION_NAME);
    name
}

/// Reads and removes the ready annotation.
fn take_ready(o: &mut Object) -> Result<Option<Ready>, String> {
    let Some(v) = annotation(o, ANNOTATION_READY) else {
        return Ok(None);
    };
    let ready = match v.as_str() {
        "True" => Ready::True,
        "False" => Ready::False,
        "Unspecified" => Ready::Unspecified,
        _ => {
            return Err(format!(
                "invalid function input: invalid \"{ANNOTATION_READY}\" annotation value \"{v}\": must be True, False, or Unspecified"
            ));
        }
    };
    remove_annotation(o, ANNOTATION_READY);
    Ok(Some(ready))
}

/// Names already returned, for the duplicate check.
#[derive(Default)]
struct Names(BTreeMap<String, String>);

impl Names {
    fn check(&mut self, o: &Object, name: &str) -> Result<(), String> {
        let kind_and_name = format!("{}/{}", str_at(o, "kind"), name_of(o));
        if let Some(first) = self.0.get(name) {
            return Err(format!(
                "multiple composed resources with name \"{name}\" returned: {first} and {kind_and_name}. Set different metadata.name or metadata.annotations.\"{ANNOTATION_NAME}\" to distinguish them."
            ));
        }
        self.0.insert(name.to_string(), kind_and_name);
        Ok(())
    }
}

/// What the special kinds ask for.
#[derive(Default)]
struct Specials {
    extra: BTreeMap<String, ResourceSelector>,
    required: BTreeMap<String, ResourceSelector>,
    conditions: Vec<J>,
    events: Vec<J>,
    context: Object,
}

/// Turns the output's resources into the response.
pub fn process(
    req: &Request,
    rsp: &mut Response,
    input: &KclInput,
    data: Vec<Object>,
) -> Result<(), String> {
    let oxr = req
        .observed
        .as_ref()
        .and_then(|s| s.composite.as_ref())
        .and_then(|r| r.resource.clone())
        .unwrap_or_default();
    let mut dxr = Resource {
        resource: Some(desired_composite(req)),
        connection_details: req
            .desired
            .as_ref()
            .and_then(|s| s.composite.as_ref())
            .map(|r| r.connection_details.clone())
            .unwrap_or_default(),
        ready: req
            .desired
            .as_ref()
            .and_then(|s| s.composite.as_ref())
            .map(|r| r.ready)
            .unwrap_or_default(),
    };
    let mut desired: BTreeMap<String, Resource> = req
        .desired
        .as_ref()
        .map(|s| s.resources.clone())
        .unwrap_or_default();
    let mut specials = Specials::default();
    let wrap = |e: String| {
        format!(
            "cannot process xr and state with the pipeline output in *v1.RunFunctionResponse: {e}"
        )
    };
    match input.spec.target.as_str() {
        "XR" => {
            let obj = dxr.resource.get_or_insert_with(Object::new);
            for d in &data {
                set_data(&J::Object(d.clone()), &mut Vec::new(), obj, false)
                    .map_err(|e| wrap(format!("cannot set data on xr: {e}")))?;
            }
        }
        "PatchDesired" | "PatchResources" => {
            if input.spec.target == "PatchResources" {
                for r in &input.spec.resources {
                    desired.insert(
                        r.name.clone(),
                        Resource {
                            resource: r.base.clone(),
                            ..Resource::default()
                        },
                    );
                }
            }
            let mut matched = Vec::new();
            for d in &data {
                let mut d = d.clone();
                let name = resource_name(&mut d);
                if desired.contains_key(&name) {
                    matched.push((name, d));
                }
            }
            if matched.len() != data.len() {
                return Err(wrap(format!(
                    "failed to match all resources, found {} / {} patches",
                    matched.len(),
                    data.len()
                )));
            }
            for (name, d) in matched {
                if let Some(r) = desired.get_mut(&name) {
                    let obj = r.resource.get_or_insert_with(Object::new);
                    set_data(&J::Object(d), &mut Vec::new(), obj, true).map_err(|e| {
                        wrap(format!(
                            "cannot set data existing desired composed object: {e}"
                        ))
                    })?;
                }
            }
            ready_annotations(&mut desired).map_err(wrap)?;
        }
        "Resources" => {
            let mut names = Names::default();
            for d in &data {
                let mut d = d.clone();
                let name = resource_name(&mut d);
                names.check(&d, &name).map_err(wrap)?;
                let merged = match desired.get(&name).and_then(|r| r.resource.clone()) {
                    Some(mut existing) => {
                        for (k, v) in d {
                            existing.insert(k, v);
                        }
                        existing
                    }
                    None => d,
                };
                desired.insert(
                    name,
                    Resource {
                        resource: Some(merged),
                        ..Resource::default()
                    },
                );
            }
            ready_annotations(&mut desired).map_err(wrap)?;
        }
        _ => {
            let mut names = Names::default();
            for d in data {
                let mut d = d;
                if str_at(&d, "apiVersion") == str_at(&oxr, "apiVersion")
                    && str_at(&d, "kind") == str_at(&oxr, "kind")
                {
                    // The XR: its status is merged into the desired XR's.
                    let obj = dxr.resource.get_or_insert_with(Object::new);
                    let mut dst = match obj.get("status") {
                        Some(J::Object(s)) => s.clone(),
                        _ => Object::new(),
                    };
                    if let Some(J::Object(src)) = d.get("status") {
                        merge_override(&mut dst, src);
                    }
                    obj.insert("status".into(), J::Object(dst));
                    continue;
                }
                if str_at(&d, "apiVersion") == META_API_VERSION {
                    special(&d, &mut dxr, &mut specials).map_err(wrap)?;
                    continue;
                }
                let ready = take_ready(&mut d).map_err(wrap)?;
                let name = resource_name(&mut d);
                names.check(&d, &name).map_err(wrap)?;
                desired.insert(
                    name,
                    Resource {
                        resource: Some(d),
                        connection_details: Default::default(),
                        ready: ready.unwrap_or_default(),
                    },
                );
            }
        }
    }
    if !specials.extra.is_empty() || !specials.required.is_empty() {
        rsp.requirements = Some(Requirements {
            extra_resources: specials.extra,
            resources: specials.required,
            ..Requirements::default()
        });
    }
    if !specials.conditions.is_empty() {
        let mut set = std::collections::HashSet::new();
        for c in &specials.conditions {
            let ty = c
                .pointer("/condition/type")
                .and_then(J::as_str)
                .unwrap_or("")
                .to_string();
            if matches!(ty.as_str(), "Ready" | "Synced" | "Healthy") {
                rsp.fatal(format!(
                    "cannot set ClaimCondition type: {ty} is a reserved Crossplane Condition"
                ));
                return Ok(());
            }
            let force = c.get("force").and_then(J::as_bool).unwrap_or(false);
            if set.contains(&ty) && !force {
                continue;
            }
            rsp.conditions.push(Condition {
                r#type: ty.clone(),
                status: match c.pointer("/condition/status").and_then(J::as_str) {
                    Some("True") => ConditionStatus::True,
                    Some("False") => ConditionStatus::False,
                    _ => ConditionStatus::Unknown,
                },
                reason: c
                    .pointer("/condition/reason")
                    .and_then(J::as_str)
                    .unwrap_or("")
                    .to_string(),
                message: c
                    .pointer("/condition/message")
                    .and_then(J::as_str)
                    .map(str::to_string),
                target: Some(binding_target(c)),
            });
            set.insert(ty);
        }
    }
    for e in &specials.events {
        let severity = match e.pointer("/event/type").and_then(J::as_str) {
            None | Some("Normal") => Severity::Normal,
            Some("Warning") => Severity::Warning,
            Some(other) => {
                rsp.fatal(format!(
                    "invalid type {other}, must be one of [Normal, Warning]"
                ));
                return Ok(());
            }
        };
        rsp.results.push(FunctionResult {
            severity,
            message: e
                .pointer("/event/message")
                .and_then(J::as_str)
                .unwrap_or("")
                .to_string(),
            reason: e
                .pointer("/event/reason")
                .and_then(J::as_str)
                .map(str::to_string),
            target: Some(binding_target(e)),
        });
    }
    if !specials.context.is_empty() {
        let mut merged = req.context.clone().unwrap_or_default();
        merge_override(&mut merged, &specials.context);
        for (k, v) in merged {
            rsp.set_context_key(k, v);
        }
    }
    rsp.set_desired_composite(dxr);
    rsp.desired_mut().resources = desired;
    Ok(())
}

fn binding_target(v: &J) -> Target {
    match v.get("target").and_then(J::as_str) {
        Some("CompositeAndClaim") => Target::CompositeAndClaim,
        _ => Target::Composite,
    }
}

fn ready_annotations(desired: &mut BTreeMap<String, Resource>) -> Result<(), String> {
    for r in desired.values_mut() {
        if let Some(obj) = r.resource.as_mut()
            && let Some(ready) = take_ready(obj)?
        {
            r.ready = ready;
        }
    }
    Ok(())
}

/// A `meta.krm.kcl.dev/v1alpha1` object.
fn special(d: &Object, dxr: &mut Resource, s: &mut Specials) -> Result<(), String> {
    match str_at(d, "kind") {
        "CompositeConnectionDetails" => {
            if let Some(J::Object(data)) = d.get("data") {
                for (k, v) in data {
                    let Some(text) = v.as_str() else { continue };
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(text)
                        .unwrap_or_default();
                    dxr.connection_details.insert(k.clone(), bytes);
                }
            }
        }
        kind @ ("ExtraResources" | "RequiredResources") => {
            let extra = kind == "ExtraResources";
            let reqs = match d.get("requirements") {
                Some(J::Object(r)) => r.clone(),
                None | Some(J::Null) => Object::new(),
                Some(_) => {
                    return Err(format!(
                        "cannot get {} resources requirements: requirements is not an object",
                        if extra { "extra" } else { "required" }
                    ));
                }
            };
            for (k, v) in reqs {
                let target = if extra { &mut s.extra } else { &mut s.required };
                if target.contains_key(&k) {
                    return Err(format!(
                        "duplicate {} resource key \"{k}\"",
                        if extra { "extra" } else { "required" }
                    ));
                }
                let field = |n: &str| v.get(n).and_then(J::as_str).unwrap_or("").to_string();
                let (name, namespace) = if extra {
                    (field("matchName"), field("matchNamespace"))
                } else {
                    (field("name"), field("namespace"))
                };
                let labels: BTreeMap<String, String> = v
                    .get("matchLabels")
                    .and_then(J::as_object)
                    .map(|m| {
                        m.iter()
                            .map(|(a, b)| (a.clone(), b.as_str().unwrap_or("").to_string()))
                            .collect()
                    })
                    .unwrap_or_default();
                target.insert(
                    k,
                    ResourceSelector {
                        api_version: field("apiVersion"),
                        kind: field("kind"),
                        r#match: Some(if name.is_empty() {
                            ResourceMatch::MatchLabels(MatchLabels { labels })
                        } else {
                            ResourceMatch::MatchName(name)
                        }),
                        namespace: (!namespace.is_empty()).then_some(namespace),
                    },
                );
            }
        }
        "Conditions" => {
            s.conditions = match d.get("conditions") {
                Some(J::Array(a)) => a.clone(),
                _ => vec![],
            };
        }
        "Events" => {
            s.events = match d.get("events") {
                Some(J::Array(a)) => a.clone(),
                _ => vec![],
            };
        }
        "Context" => {
            if let Some(J::Object(data)) = d.get("data") {
                for (k, v) in data {
                    s.context.insert(k.clone(), v.clone());
                }
            }
        }
        other => {
            return Err(format!(
                "invalid kind \"{other}\" for apiVersion \"{META_API_VERSION}\" - must be CompositeConnectionDetails or ExtraResources"
            ));
        }
    }
    Ok(())
}

fn is_empty(v: &J) -> bool {
    match v {
        J::Null => true,
        J::Bool(b) => !b,
        J::Number(n) => n.as_f64() == Some(0.0),
        J::String(s) => s.is_empty(),
        J::Array(a) => a.is_empty(),
        J::Object(o) => o.is_empty(),
    }
}

/// mergo's `Merge` with `WithOverride` on maps: maps merge key by key,
/// other non-empty values replace.
fn merge_override(dst: &mut Object, src: &Object) {
    for (k, v) in src {
        match (dst.get_mut(k), v) {
            (Some(J::Object(d)), J::Object(s)) => merge_override(d, s),
            (Some(_), v) if is_empty(v) => {}
            _ => {
                dst.insert(k.clone(), v.clone());
            }
        }
    }
}

#[derive(Clone)]
enum Seg {
    Key(String),
    Index(usize),
}

/// function-kcl's `SetData`: every leaf of `data` set at its path in `obj`
/// (for composed resources, not apiVersion, kind or metadata.name).
fn set_data(data: &J, path: &mut Vec<Seg>, obj: &mut Object, composed: bool) -> Result<(), String> {
    match data {
        J::Object(m) => {
            for (k, v) in m {
                path.push(Seg::Key(k.clone()));
                set_data(v, path, obj, composed)?;
                path.pop();
            }
        }
        J::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                path.push(Seg::Index(i));
                set_data(v, path, obj, composed)?;
                path.pop();
            }
        }
        leaf => {
            if composed {
                let top: Vec<&str> = path
                    .iter()
                    .map(|s| match s {
                        Seg::Key(k) => k.as_str(),
                        Seg::Index(_) => "[]",
                    })
                    .collect();
                if top == ["apiVersion"] || top == ["kind"] || top == ["metadata", "name"] {
                    return Ok(());
                }
            }
            let Some((Seg::Key(first), rest)) = path.split_first() else {
                return Err("cannot set a value at the root of an object".into());
            };
            let slot = obj.entry(first.clone()).or_insert(J::Null);
            set_at(slot, rest, leaf.clone())?;
        }
    }
    Ok(())
}

fn set_at(slot: &mut J, path: &[Seg], v: J) -> Result<(), String> {
    let Some((seg, rest)) = path.split_first() else {
        *slot = v;
        return Ok(());
    };
    match seg {
        Seg::Key(k) => {
            if !slot.is_object() {
                *slot = J::Object(Object::new());
            }
            let J::Object(o) = slot else {
                return Err("internal: not an object".into());
            };
            set_at(o.entry(k.clone()).or_insert(J::Null), rest, v)
        }
        Seg::Index(i) => {
            if !slot.is_array() {
                *slot = J::Array(vec![]);
            }
            let J::Array(a) = slot else {
                return Err("internal: not a list".into());
            };
            if a.len() <= *i {
                a.resize(*i + 1, J::Null);
            }
            set_at(&mut a[*i], rest, v)
        }
    }
}
