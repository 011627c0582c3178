//! `RunFunction` of function-go-templating v0.12.2 (`fn.go`): read the
//! `GoTemplate` input, render the template on the request, parse the
//! documents it produced and turn them into desired composed resources, an
//! updated composite (status, readiness), connection details, context,
//! claim conditions and extra-resource requirements, with upstream's
//! messages.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde::Deserialize;
use serde_json::{Map, Value as J};
use xfn_sdk::{
    Condition, ConditionStatus, MatchLabels, Ready, Request, Requirements, Resource, ResourceMatch,
    ResourceSelector, Response, Target,
};

use crate::manifests::{self, Doc};
use crate::render::{RenderError, Renderer, SeededEnv};
use crate::template::{Env, Value};

/// The annotation naming a composed resource.
pub const ANNOTATION_RESOURCE_NAME: &str =
    "gotemplating.fn.crossplane.io/composition-resource-name";
/// The annotation setting a resource's readiness.
pub const ANNOTATION_READY: &str = "gotemplating.fn.crossplane.io/ready";
/// The apiVersion of the documents that are instructions, not resources.
pub const META_API_VERSION: &str = "meta.gotemplating.fn.crossplane.io/v1alpha1";
/// The context key of the environment.
pub const ENVIRONMENT_KEY: &str = "apiextensions.crossplane.io/environment";
/// The context key extra resources are copied to.
pub const EXTRA_RESOURCES_KEY: &str = "apiextensions.crossplane.io/extra-resources";

/// The `GoTemplate` input (`gotemplating.fn.crossplane.io/v1beta1`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoTemplate {
    /// `Inline`, `FileSystem` or `Environment`.
    #[serde(default)]
    pub source: String,
    /// The inline template(s).
    #[serde(default)]
    pub inline: Option<Inline>,
    /// A directory of templates.
    #[serde(default)]
    pub file_system: Option<FileSystem>,
    /// A key of the environment holding the template.
    #[serde(default)]
    pub environment: Option<EnvironmentSource>,
    /// Custom delimiters.
    #[serde(default)]
    pub delims: Option<Delims>,
    /// `text/template` options such as `missingkey=error`.
    #[serde(default)]
    pub options: Option<Vec<String>>,
}

/// `inline`.
#[derive(Debug, Default, Deserialize)]
pub struct Inline {
    /// One template.
    #[serde(default)]
    pub template: String,
    /// Several templates, joined by `---` lines.
    #[serde(default)]
    pub templates: Vec<String>,
}

/// The key of `fileSystem` where `xfn render` puts the templates it read
/// from `dirPath` on its host (the sandbox has no file system).
pub const HOST_TEMPLATES_KEY: &str = "xfn.dev/templates";
/// The key of `fileSystem` where `xfn render` puts why it could not read
/// `dirPath`, worded as upstream's error.
pub const HOST_READ_ERROR_KEY: &str = "xfn.dev/readError";

/// `fileSystem`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileSystem {
    /// The directory.
    #[serde(default)]
    pub dir_path: String,
    /// The templates `xfn render` read from the directory, joined as
    /// upstream joins them ([`HOST_TEMPLATES_KEY`]).
    #[serde(default, rename = "xfn.dev/templates")]
    pub host_templates: Option<String>,
    /// Why `xfn render` could not read the directory
    /// ([`HOST_READ_ERROR_KEY`]).
    #[serde(default, rename = "xfn.dev/readError")]
    pub host_read_error: Option<String>,
}

/// `environment`.
#[derive(Debug, Default, Deserialize)]
pub struct EnvironmentSource {
    /// The key.
    #[serde(default)]
    pub key: String,
}

/// `delims`.
#[derive(Debug, Default, Deserialize)]
pub struct Delims {
    /// Left delimiter.
    pub left: Option<String>,
    /// Right delimiter.
    pub right: Option<String>,
}

/// Runs the function with randomness from the system.
pub fn run(req: &Request) -> Response {
    run_with(req, &mut SeededEnv::from_system())
}

/// Runs the function with the given source of randomness and time.
pub fn run_with(req: &Request, env: &mut dyn Env) -> Response {
    let mut rsp = Response::to(req);
    match compose(req, &mut rsp, env) {
        Ok(()) => {}
        Err(msg) => {
            rsp.fatal(msg);
        }
    }
    rsp
}

fn input(req: &Request) -> Result<GoTemplate, String> {
    let Some(obj) = &req.input else {
        return Ok(GoTemplate::default());
    };
    serde_json::from_value(J::Object(obj.clone()))
        .map_err(|e| format!("cannot get Function input from *v1.RunFunctionRequest: {e}"))
}

fn template_text(req: &Request, input: &GoTemplate) -> Result<String, String> {
    match input.source.as_str() {
        "Inline" => {
            let inline = input.inline.as_ref();
            match inline {
                Some(i) if !i.template.is_empty() => Ok(i.template.clone()),
                Some(i) if !i.templates.is_empty() => Ok(i.templates.join("\n---\n")),
                _ => Err("inline.template or inline.templates should be provided".into()),
            }
        }
        "FileSystem" => {
            let fs = input.file_system.as_ref();
            let dir = fs.map(|f| f.dir_path.as_str()).unwrap_or("");
            if dir.is_empty() {
                return Err("fileSystem.dirPath should be provided".into());
            }
            match fs.map(|f| (&f.host_templates, &f.host_read_error)) {
                Some((_, Some(error))) => Err(format!(
                    "cannot read tmpl from the folder {{{dir}}}: {error}"
                )),
                Some((Some(templates), None)) => Ok(templates.clone()),
                _ => Err(format!(
                    "cannot read tmpl from the folder {{{dir}}}: xfn's function-go-templating runs in a wasm \
                     sandbox with no file system and cannot read the directory {dir}; `xfn render` reads it \
                     on its host for the built-in function, but here (a served function: xfn serve, xfn \
                     controller) nothing does: put the templates in the Composition instead (source: Inline, \
                     with inline.template or inline.templates)"
                )),
            }
        }
        "Environment" => {
            let key = input
                .environment
                .as_ref()
                .map(|e| e.key.as_str())
                .unwrap_or("");
            if key.is_empty() {
                return Err("environment.key should be provided".into());
            }
            let env = req
                .context
                .as_ref()
                .and_then(|c| c.get(ENVIRONMENT_KEY))
                .and_then(J::as_object);
            let Some(env) = env else {
                return Err(format!(
                    "cannot read tmpl from the environment: {ENVIRONMENT_KEY} key does not exist in context"
                ));
            };
            match env.get(key) {
                None => Err(format!(
                    "cannot read tmpl from the environment: key: {key} does not exist"
                )),
                Some(J::String(s)) => Ok(s.clone()),
                Some(_) => Err(format!(
                    "cannot read tmpl from the environment: key: {key} value is not a string"
                )),
            }
        }
        "" => Err("source is required".into()),
        other => Err(format!("invalid source: {other}")),
    }
}

/// The template data: the request as protojson, decoded as Kubernetes'
/// JSON decoder does, with `extraResources` defaulting to `requiredResources`.
pub fn request_data(req: &Request) -> Value {
    let mut j = serde_json::to_value(req).unwrap_or(J::Null);
    // What `xfn render` added to the input is not upstream's request.
    if let Some(fs) = j
        .pointer_mut("/input/fileSystem")
        .and_then(J::as_object_mut)
    {
        fs.remove(HOST_TEMPLATES_KEY);
        fs.remove(HOST_READ_ERROR_KEY);
    }
    integral_numbers(&mut j);
    if let J::Object(m) = &mut j
        && !m.contains_key("extraResources")
        && let Some(r) = m.get("requiredResources").cloned()
    {
        m.insert("extraResources".into(), r);
    }
    Value::from_json(&j)
}

/// Protojson prints integral doubles below 1e21 without a fraction, which
/// Kubernetes' decoder reads back as `int64`.
fn integral_numbers(v: &mut J) {
    match v {
        J::Number(n) => {
            if let Some(f) = n.as_f64().filter(|_| n.is_f64())
                && f.fract() == 0.0
                && f.abs() < 9.2e18
            {
                *v = J::from(f as i64);
            }
        }
        J::Array(a) => a.iter_mut().for_each(integral_numbers),
        J::Object(o) => o.values_mut().for_each(integral_numbers),
        _ => {}
    }
}

fn compose(req: &Request, rsp: &mut Response, env: &mut dyn Env) -> Result<(), String> {
    let input = input(req)?;
    let text = template_text(req, &input).map_err(|e| format!("invalid function input: {e}"))?;
    let delims = input
        .delims
        .as_ref()
        .and_then(|d| match (&d.left, &d.right) {
            (Some(l), Some(r)) => Some((l.as_str(), r.as_str())),
            _ => None,
        });
    let renderer = Renderer::new();
    let options = input.options.clone().unwrap_or_default();
    let rendered = match renderer.render(&text, request_data(req), delims, &options, env) {
        Ok(s) => s,
        Err(RenderError::Parse(e)) => {
            return Err(format!(
                "invalid function input: cannot parse the provided templates: {e}"
            ));
        }
        Err(RenderError::Option(e)) => {
            return Err(format!(
                "cannot apply template options: panic occurred while applying template options: {e}"
            ));
        }
        Err(RenderError::Exec(e)) => return Err(format!("cannot execute template: {e}")),
    };
    let docs = manifests::decode(&rendered).map_err(|e| format!("cannot decode manifest: {e}"))?;
    for d in &docs {
        check_annotations(d)?;
    }

    let observed_xr = req
        .observed
        .as_ref()
        .and_then(|s| s.composite.as_ref())
        .and_then(|r| r.resource.clone());
    let (xr_api, xr_kind) = observed_xr
        .as_ref()
        .map(|o| (str_field(o, "apiVersion"), str_field(o, "kind")))
        .unwrap_or_default();
    let mut desired = req.desired.clone().unwrap_or_default();
    let mut dxr = desired.composite.clone().unwrap_or_default();
    let mut dxr_obj = dxr.resource.clone().unwrap_or_default();
    // function-sdk-go reads the desired composite without its readiness and
    // the desired composed resources without their connection details, and
    // writes them back so.
    dxr.ready = Ready::Unspecified;
    let mut composed = desired.resources.clone();
    for r in composed.values_mut() {
        r.connection_details.clear();
    }
    let mut requirements = Requirements::default();

    for doc in docs {
        let mut obj = doc.object;
        let api = str_field(&obj, "apiVersion");
        let kind = str_field(&obj, "kind");
        let mut ready = None;
        if api != META_API_VERSION
            && let Some(v) = annotation(&obj, ANNOTATION_READY)
        {
            ready = Some(match v.as_str() {
                "True" => Ready::True,
                "False" => Ready::False,
                "Unspecified" => Ready::Unspecified,
                other => {
                    return Err(format!(
                        "invalid function input: invalid \"{ANNOTATION_READY}\" annotation value \"{other}\": \
                             must be True, False, or Unspecified"
                    ));
                }
            });
            remove_annotation(&mut obj, ANNOTATION_READY);
        }
        let name = annotation(&obj, ANNOTATION_RESOURCE_NAME);
        if api == xr_api && kind == xr_kind && name.is_none() {
            let src = obj.get("status").cloned();
            let dst = dxr_obj.get("status").cloned();
            if src.is_some() || dst.is_some() {
                let mut merged = match dst {
                    Some(J::Object(m)) => m,
                    _ => Map::new(),
                };
                if let Some(J::Object(s)) = src {
                    merge_override(&mut merged, s);
                }
                dxr_obj.insert("status".into(), J::Object(merged));
            }
            if let Some(r) = ready {
                dxr.ready = r;
            }
            continue;
        }
        if api == META_API_VERSION {
            match kind.as_str() {
                "CompositeConnectionDetails" => {
                    if let Some(J::Object(data)) = obj.get("data") {
                        for (k, v) in data {
                            if let J::String(s) = v {
                                let bytes = base64::engine::general_purpose::STANDARD
                                    .decode(s)
                                    .unwrap_or_default();
                                dxr.connection_details.insert(k.clone(), bytes);
                            }
                        }
                    }
                }
                "ClaimConditions" => claim_conditions(rsp, &obj)?,
                "Context" => {
                    let data = match obj.get("data") {
                        None | Some(J::Null) => Map::new(),
                        Some(J::Object(m)) => m.clone(),
                        Some(other) => {
                            return Err(format!(
                                "cannot get Contexts from input: cannot unmarshal value from JSON: json: cannot unmarshal {} into Go value of type \
                                 map[string]interface {{}}",
                                json_type(other)
                            ));
                        }
                    };
                    let mut merged = req.context.clone().unwrap_or_default();
                    if !data.is_empty() {
                        merge_override(&mut merged, data);
                    }
                    for (k, v) in merged {
                        rsp.set_context_key(k, v);
                    }
                }
                "ExtraResources" => extra_resources(&obj, &mut requirements)?,
                other => {
                    return Err(format!(
                        "invalid kind \"{other}\" for apiVersion \"{META_API_VERSION}\" - must be one of \
                         CompositeConnectionDetails, Context or ExtraResources"
                    ));
                }
            }
            continue;
        }
        remove_annotation(&mut obj, ANNOTATION_RESOURCE_NAME);
        let Some(name) = name else {
            return Err(format!(
                "\"{kind}\" template is missing required \"{ANNOTATION_RESOURCE_NAME}\" annotation"
            ));
        };
        composed.insert(
            name,
            Resource {
                resource: Some(obj),
                connection_details: BTreeMap::new(),
                ready: ready.unwrap_or_default(),
            },
        );
    }

    dxr.resource = Some(dxr_obj);
    desired.composite = Some(dxr);
    desired.resources = composed;
    rsp.desired = Some(desired);
    if !requirements.extra_resources.is_empty() || !requirements.resources.is_empty() {
        rsp.requirements = Some(requirements);
    }
    if !req.extra_resources.is_empty() {
        merge_into_context(req, rsp, &req.extra_resources);
    }
    if !req.required_resources.is_empty() {
        merge_into_context(req, rsp, &req.required_resources);
    }
    Ok(())
}

fn json_type(v: &J) -> &'static str {
    match v {
        J::Null => "null",
        J::Bool(_) => "bool",
        J::Number(_) => "number",
        J::String(_) => "string",
        J::Array(_) => "array",
        J::Object(_) => "object",
    }
}

fn str_field(o: &Map<String, J>, k: &str) -> String {
    o.get(k).and_then(J::as_str).unwrap_or_default().to_string()
}

fn annotation(o: &Map<String, J>, key: &str) -> Option<String> {
    o.get("metadata")?
        .get("annotations")?
        .get(key)?
        .as_str()
        .map(str::to_string)
}

fn remove_annotation(o: &mut Map<String, J>, key: &str) {
    if let Some(J::Object(a)) = o.get_mut("metadata").and_then(|m| m.get_mut("annotations")) {
        a.remove(key);
    }
}

/// mergo's `Merge(&dst, src, WithOverride)` on JSON maps: maps merge deeply,
/// anything else from `src` replaces.
fn merge_override(dst: &mut Map<String, J>, src: Map<String, J>) {
    for (k, v) in src {
        match (dst.get_mut(&k), v) {
            (Some(J::Object(d)), J::Object(s)) => merge_override(d, s),
            (_, v) => {
                dst.insert(k, v);
            }
        }
    }
}

/// Annotations must be strings (`unstructured.NestedStringMap`).
fn check_annotations(doc: &Doc) -> Result<(), String> {
    let Some(ann) = doc
        .object
        .get("metadata")
        .and_then(|m| m.get("annotations"))
    else {
        return Ok(());
    };
    let err = match ann {
        J::Object(m) => m.iter().find(|(_, v)| !v.is_string()).map(|(k, v)| {
            let (shown, ty) = go_value_and_type(v);
            format!(
                ".metadata.annotations accessor error: contains non-string value in the map under key \"{k}\": \
                 {shown} is of the type {ty}, expected string"
            )
        }),
        J::Null => None,
        other => {
            let (shown, ty) = go_value_and_type(other);
            Some(format!(
                ".metadata.annotations accessor error: {shown} is of the type {ty}, expected map[string]interface{{}}"
            ))
        }
    };
    let Some(err) = err else { return Ok(()) };
    let api = str_field(&doc.object, "apiVersion");
    let kind = str_field(&doc.object, "kind");
    let (group, version) = match api.rsplit_once('/') {
        Some((g, v)) => (g.to_string(), v.to_string()),
        None => (String::new(), api.clone()),
    };
    let name = match ann {
        J::Object(m) => match m.get(ANNOTATION_RESOURCE_NAME) {
            Some(J::String(s)) => s.clone(),
            Some(v) => go_value_and_type(v).0,
            None => "<nil>".into(),
        },
        _ => "<nil>".into(),
    };
    Err(format!(
        "invalid annotations in resource '{group}/{version}, Kind={kind} resource-name={name}': {err}"
    ))
}

fn go_value_and_type(v: &J) -> (String, &'static str) {
    let g = crate::template::Value::from_json(v);
    let ty = match &g {
        Value::Nil => "<nil>",
        other => other.type_name(),
    };
    (crate::template::value::sprint_v(&g), ty)
}

#[derive(Deserialize)]
struct TargetedCondition {
    #[serde(default, rename = "type")]
    typ: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    target: String,
}

fn claim_conditions(rsp: &mut Response, obj: &Map<String, J>) -> Result<(), String> {
    let conds: Vec<TargetedCondition> = match obj.get("conditions") {
        None | Some(J::Null) => Vec::new(),
        Some(v) => serde_json::from_value(v.clone())
            .map_err(|e| format!("cannot get Conditions from input: {e}"))?,
    };
    for c in conds {
        if matches!(
            c.typ.as_str(),
            "Ready" | "Synced" | "Healthy" | "Responsive"
        ) {
            return Err(format!(
                "cannot set ClaimCondition type: {} is a reserved Crossplane Condition",
                c.typ
            ));
        }
        rsp.conditions.push(Condition {
            r#type: c.typ,
            status: match c.status.as_str() {
                "True" => ConditionStatus::True,
                "False" => ConditionStatus::False,
                _ => ConditionStatus::Unknown,
            },
            reason: c.reason,
            message: (!c.message.is_empty()).then_some(c.message),
            target: Some(if c.target == "CompositeAndClaim" {
                Target::CompositeAndClaim
            } else {
                Target::Composite
            }),
        });
    }
    Ok(())
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExtraResourcesRequirement {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    match_labels: BTreeMap<String, String>,
    #[serde(default)]
    match_name: String,
    #[serde(default)]
    namespace: String,
}

fn extra_resources(obj: &Map<String, J>, req: &mut Requirements) -> Result<(), String> {
    let ers: BTreeMap<String, ExtraResourcesRequirement> = match obj.get("requirements") {
        None | Some(J::Null) => BTreeMap::new(),
        Some(v) => serde_json::from_value(v.clone())
            .map_err(|e| format!("cannot get extra resources requirements: {e}"))?,
    };
    for (k, v) in ers {
        if req.extra_resources.contains_key(&k) {
            return Err(format!("duplicate extra resource key \"{k}\""));
        }
        let sel = ResourceSelector {
            api_version: v.api_version.clone(),
            kind: v.kind.clone(),
            r#match: Some(if v.match_name.is_empty() {
                ResourceMatch::MatchLabels(MatchLabels {
                    labels: v.match_labels.clone(),
                })
            } else {
                ResourceMatch::MatchName(v.match_name.clone())
            }),
            namespace: (!v.match_name.is_empty() && !v.namespace.is_empty())
                .then(|| v.namespace.clone()),
        };
        req.resources.insert(k.clone(), sel.clone());
        if v.namespace.is_empty() {
            req.extra_resources.insert(k, sel);
        }
    }
    Ok(())
}

/// Copies the request's extra (or required) resources into the context, as
/// upstream does: Go's `encoding/json` of the protobuf messages (field names
/// `items`, `resource`, `connection_details`, `ready` as a number), merged
/// over what the context already holds under the key.
fn merge_into_context(
    req: &Request,
    rsp: &mut Response,
    resources: &BTreeMap<String, xfn_sdk::Resources>,
) {
    let mut s = Map::new();
    for (name, rs) in resources {
        let items: Vec<J> = rs.items.iter().map(go_json_resource).collect();
        let mut m = Map::new();
        if !items.is_empty() {
            m.insert("items".into(), J::Array(items));
        }
        s.insert(name.clone(), J::Object(m));
    }
    let mut merged = match req
        .context
        .as_ref()
        .and_then(|c| c.get(EXTRA_RESOURCES_KEY))
    {
        Some(J::Object(existing)) => existing.clone(),
        _ => Map::new(),
    };
    for (k, v) in s {
        merged.insert(k, v);
    }
    rsp.set_context_key(EXTRA_RESOURCES_KEY, J::Object(merged));
}

fn go_json_resource(r: &Resource) -> J {
    let mut m = Map::new();
    if let Some(o) = &r.resource {
        // structpb.Struct marshals itself as plain JSON.
        m.insert("resource".into(), J::Object(o.clone()));
    }
    if !r.connection_details.is_empty() {
        let cd: Map<String, J> = r
            .connection_details
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    J::String(base64::engine::general_purpose::STANDARD.encode(v)),
                )
            })
            .collect();
        m.insert("connection_details".into(), J::Object(cd));
    }
    let ready = match r.ready {
        Ready::Unspecified => 0,
        Ready::True => 1,
        Ready::False => 2,
    };
    if ready != 0 {
        m.insert("ready".into(), J::from(ready));
    }
    J::Object(m)
}
