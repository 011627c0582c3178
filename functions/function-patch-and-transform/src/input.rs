//! The function's input, `pt.fn.crossplane.io/v1beta1` `Resources`, and its
//! strict decoding.
//!
//! function-sdk-go decodes typed inputs with `go-json-experiment/json` and
//! `RejectUnknownMembers(true)`: names are case-sensitive, an unknown member
//! anywhere in the typed parts is an error, `null` means "unset", and integer
//! fields reject fractions. The decoder here does the same, visiting members
//! in protojson's (sorted) order so the first error is the one Go reports,
//! with json v2's error texts (e.g. `json: cannot unmarshal JSON string into
//! Go v1beta1.ComposedTemplate: unknown object member name "bsae" within
//! "/resources/0"`). Free-form parts (`base`, `map` values, `result`,
//! `fallbackValue`) are kept as JSON. No defaults are applied.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use serde_json::{Map, Value};

/// The function input.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resources {
    /// Named sets of patches templates can include.
    pub patch_sets: Vec<PatchSet>,
    /// Patches between the XR and the environment.
    pub environment: Option<Environment>,
    /// Composed resource templates.
    pub resources: Vec<ComposedTemplate>,
    /// Where to write the XR's connection secret (v2 XRs).
    pub write_connection_secret_to_ref: Option<WriteConnectionSecretToRef>,
}

/// A named set of patches.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PatchSet {
    /// The set's name.
    pub name: String,
    /// Its patches.
    pub patches: Vec<Patch>,
}

/// Environment patches.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Environment {
    /// The patches, run before any template.
    pub patches: Vec<Patch>,
}

/// The input's connection secret reference.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WriteConnectionSecretToRef {
    /// Secret name.
    pub name: String,
    /// Secret namespace.
    pub namespace: String,
    /// Patches from the observed XR onto `{name, namespace}`.
    pub patches: Vec<Patch>,
}

/// A composed resource template.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ComposedTemplate {
    /// The composition resource name.
    pub name: String,
    /// The base object, if any.
    pub base: Option<Value>,
    /// Patches to and from the resource.
    pub patches: Vec<Patch>,
    /// Connection details to extract.
    pub connection_details: Vec<ConnectionDetail>,
    /// Readiness checks (none: the Ready condition must be True).
    pub readiness_checks: Vec<ReadinessCheck>,
}

/// Which Go struct a patch was decoded as.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PatchKind {
    /// `ComposedPatch` (in a template).
    #[default]
    Composed,
    /// `PatchSetPatch` (in a patch set).
    PatchSet,
    /// `EnvironmentPatch`.
    Environment,
    /// `ConnectionSecretPatch`.
    ConnectionSecret,
}

impl PatchKind {
    /// The Go type name, as `%T` of a pointer prints it.
    pub fn go_pointer_type(self) -> &'static str {
        match self {
            PatchKind::Composed => "*v1beta1.ComposedPatch",
            PatchKind::PatchSet => "*v1beta1.PatchSetPatch",
            PatchKind::Environment => "*v1beta1.EnvironmentPatch",
            PatchKind::ConnectionSecret => "*v1beta1.ConnectionSecretPatch",
        }
    }

    fn go_type(self) -> &'static str {
        &self.go_pointer_type()[1..]
    }
}

/// A patch of any kind.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Patch {
    /// Which Go struct this is.
    pub kind: PatchKind,
    /// The type as written (empty: `FromCompositeFieldPath`).
    pub r#type: String,
    /// Source path.
    pub from_field_path: Option<String>,
    /// Destination path (default: `from_field_path`).
    pub to_field_path: Option<String>,
    /// Combine configuration.
    pub combine: Option<Combine>,
    /// Patch set to include (type `PatchSet`).
    pub patch_set_name: Option<String>,
    /// Transforms, in order.
    pub transforms: Vec<Transform>,
    /// Policy.
    pub policy: Option<PatchPolicy>,
}

impl Patch {
    /// The type, defaulted to `FromCompositeFieldPath`.
    pub fn patch_type(&self) -> &str {
        if self.r#type.is_empty() {
            "FromCompositeFieldPath"
        } else {
            &self.r#type
        }
    }

    /// `fromFieldPath`, or `""`.
    pub fn from_field_path(&self) -> &str {
        self.from_field_path.as_deref().unwrap_or("")
    }

    /// `toFieldPath`, defaulting to `fromFieldPath`.
    pub fn to_field_path(&self) -> &str {
        match &self.to_field_path {
            Some(p) => p,
            None => self.from_field_path(),
        }
    }

    /// `policy.fromFieldPath`, defaulting to `Optional`.
    pub fn from_field_path_policy(&self) -> &str {
        self.policy
            .as_ref()
            .and_then(|p| p.from_field_path.as_deref())
            .unwrap_or("Optional")
    }
}

/// `policy`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PatchPolicy {
    /// `Optional` or `Required`.
    pub from_field_path: Option<String>,
    /// `Replace`, `MergeObjects`, ...
    pub to_field_path: Option<String>,
}

impl PatchPolicy {
    /// `toFieldPath`, defaulting to `Replace`.
    pub fn to_field_path_policy(&self) -> &str {
        self.to_field_path.as_deref().unwrap_or("Replace")
    }

    /// `fromFieldPath`, defaulting to `Optional`.
    pub fn from_field_path_policy(&self) -> &str {
        self.from_field_path.as_deref().unwrap_or("Optional")
    }
}

/// `combine`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Combine {
    /// The variables' source paths.
    pub variables: Vec<String>,
    /// `string` (the only strategy).
    pub strategy: String,
    /// `string.fmt`, if `string` is set.
    pub string_fmt: Option<String>,
}

/// A transform.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Transform {
    /// `map`, `match`, `math`, `string` or `convert`.
    pub r#type: String,
    /// `math`.
    pub math: Option<MathTransform>,
    /// `map`: key to raw JSON (`None` for a JSON null).
    pub map: Option<BTreeMap<String, Option<Value>>>,
    /// `match`.
    pub r#match: Option<MatchTransform>,
    /// `string`.
    pub string: Option<StringTransform>,
    /// `convert`.
    pub convert: Option<ConvertTransform>,
}

/// `math`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MathTransform {
    /// `Multiply`, `ClampMin` or `ClampMax`.
    pub r#type: String,
    /// Factor.
    pub multiply: Option<i64>,
    /// Lower bound.
    pub clamp_min: Option<i64>,
    /// Upper bound.
    pub clamp_max: Option<i64>,
}

/// `match`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MatchTransform {
    /// Patterns, tried in order.
    pub patterns: Vec<MatchPattern>,
    /// Fallback value (`None`: unset or null).
    pub fallback_value: Option<Value>,
    /// `Value` or `Input` (empty: `Value`).
    pub fallback_to: String,
}

/// A match pattern.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MatchPattern {
    /// `literal` or `regexp` (no default at run time).
    pub r#type: String,
    /// Literal to compare with.
    pub literal: Option<String>,
    /// Regexp to match.
    pub regexp: Option<String>,
    /// Result (`None`: unset or null).
    pub result: Option<Value>,
}

/// `string`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StringTransform {
    /// `Format`, `Convert`, `TrimPrefix`, `TrimSuffix`, `Regexp`, `Join`, `Replace`.
    pub r#type: String,
    /// `fmt`.
    pub fmt: Option<String>,
    /// `convert`.
    pub convert: Option<String>,
    /// `trim`.
    pub trim: Option<String>,
    /// `regexp`.
    pub regexp: Option<StringRegexp>,
    /// `join.separator`, if `join` is set.
    pub join: Option<String>,
    /// `replace`.
    pub replace: Option<StringReplace>,
}

/// `string.regexp`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StringRegexp {
    /// The expression.
    pub r#match: String,
    /// Group number (default 0).
    pub group: Option<i64>,
}

/// `string.replace`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StringReplace {
    /// What to look for.
    pub search: String,
    /// What to put instead.
    pub replace: String,
}

/// `convert`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConvertTransform {
    /// Target type.
    pub to_type: String,
    /// `none`, `quantity` or `json` (`None`: `none`).
    pub format: Option<String>,
}

impl ConvertTransform {
    /// The format, defaulting to `none`.
    pub fn format(&self) -> &str {
        self.format.as_deref().unwrap_or("none")
    }
}

/// A connection detail.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConnectionDetail {
    /// Key in the XR's connection details.
    pub name: String,
    /// `FromConnectionSecretKey`, `FromFieldPath` or `FromValue`.
    pub r#type: String,
    /// Source key.
    pub from_connection_secret_key: Option<String>,
    /// Source path.
    pub from_field_path: Option<String>,
    /// Fixed value.
    pub value: Option<String>,
}

/// A readiness check.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReadinessCheck {
    /// Check type.
    pub r#type: String,
    /// Path to check.
    pub field_path: Option<String>,
    /// For `MatchString`.
    pub match_string: Option<String>,
    /// For `MatchInteger`.
    pub match_integer: Option<i64>,
    /// For `MatchCondition`.
    pub match_condition: Option<MatchCondition>,
}

/// `matchCondition`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MatchCondition {
    /// Condition type.
    pub r#type: String,
    /// Condition status.
    pub status: String,
}

// ---------------------------------------------------------------------------
// Decoding

/// Decodes the input object strictly. The error is json v2's message.
pub fn decode(input: &Map<String, Value>) -> Result<Resources, String> {
    decode_resources(object_members(input, &Pointer::Root))
}

/// Where a value sits in the input: a JSON pointer, written out only when
/// an error names it.
#[derive(Debug, Clone, Copy)]
enum Pointer<'a> {
    /// The input object itself.
    Root,
    /// A member of an object.
    Member(&'a Pointer<'a>, &'a str),
    /// An element of an array.
    Index(&'a Pointer<'a>, usize),
}

impl fmt::Display for Pointer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pointer::Root => Ok(()),
            Pointer::Member(parent, name) => {
                write!(f, "{parent}/")?;
                // RFC 6901 escapes `~` and `/` in a reference token.
                for c in name.chars() {
                    match c {
                        '~' => f.write_str("~0")?,
                        '/' => f.write_str("~1")?,
                        c => f.write_char(c)?,
                    }
                }
                Ok(())
            }
            Pointer::Index(parent, i) => write!(f, "{parent}/{i}"),
        }
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "JSON null",
        Value::Bool(_) => "JSON boolean",
        Value::Number(_) => "JSON number",
        Value::String(_) => "JSON string",
        Value::Array(_) => "JSON array",
        Value::Object(_) => "JSON object",
    }
}

fn within(ptr: &Pointer<'_>) -> String {
    match ptr {
        Pointer::Root => String::new(),
        _ => format!(" within {}", crate::gofmt::quote(&ptr.to_string())),
    }
}

fn mismatch(v: &Value, go_type: &str, ptr: &Pointer<'_>) -> String {
    format!(
        "json: cannot unmarshal {} into Go {go_type}{}",
        kind(v),
        within(ptr)
    )
}

thread_local! {
    /// While [`unknown_members`] decodes: the unknown members seen so far,
    /// each the pointer of the object that has it and its name. Otherwise
    /// `None`, and an unknown member is an error.
    static SKIPPED: RefCell<Option<Vec<(String, String)>>> = const { RefCell::new(None) };
}

/// An unknown member of the object at `ptr`: json v2's error, or, while
/// [`unknown_members`] decodes, noted and skipped.
fn unknown_member(go_type: &str, ptr: &Pointer<'_>, name: &str) -> Result<(), String> {
    SKIPPED.with_borrow_mut(|skipped| match skipped {
        Some(seen) => {
            seen.push((ptr.to_string(), name.to_owned()));
            Ok(())
        }
        None => Err(unknown(go_type, ptr, name)),
    })
}

/// The members of an input that [`decode`] doesn't know, which versions of
/// the Go function before v0.4.0 ignored (function-sdk-go v0.1.0 decoded
/// without `RejectUnknownMembers`): each as the JSON pointer (RFC 6901) of
/// the object that has it and its name, in the order decoding meets them.
/// Decoding stops at the first other error, so members after it aren't
/// looked at; that error is the function's to report.
pub fn unknown_members(input: &Map<String, Value>) -> Vec<(String, String)> {
    /// Turns collecting off however decoding ends.
    struct Collecting;
    impl Drop for Collecting {
        fn drop(&mut self) {
            SKIPPED.set(None);
        }
    }
    SKIPPED.set(Some(Vec::new()));
    let guard = Collecting;
    let _ = decode(input);
    let seen = SKIPPED.take().unwrap_or_default();
    drop(guard);
    seen
}

/// Removes the members [`unknown_members`] finds from `input` and returns
/// the JSON pointer of each one removed.
pub fn drop_unknown_members(input: &mut Value) -> Vec<String> {
    let Some(object) = input.as_object() else {
        return Vec::new();
    };
    let mut dropped = Vec::new();
    for (parent, name) in unknown_members(object) {
        let removed = input
            .pointer_mut(&parent)
            .and_then(Value::as_object_mut)
            .and_then(|o| o.remove(&name));
        if removed.is_some() {
            dropped.push(format!(
                "{parent}{}",
                Pointer::Member(&Pointer::Root, &name)
            ));
        }
    }
    dropped
}

fn unknown(go_type: &str, ptr: &Pointer<'_>, name: &str) -> String {
    format!(
        "json: cannot unmarshal JSON string into Go {go_type}: unknown object member name {}{}",
        crate::gofmt::quote(name),
        within(ptr)
    )
}

/// A member's name, value, and pointer.
type Member<'a> = (&'a str, &'a Value, Pointer<'a>);

/// The members of an object in protojson's order (sorted), or none for null.
fn members<'a>(
    v: &'a Value,
    go_type: &str,
    ptr: &'a Pointer<'a>,
) -> Result<Vec<Member<'a>>, String> {
    match v {
        Value::Null => Ok(Vec::new()),
        Value::Object(m) => Ok(object_members(m, ptr)),
        other => Err(mismatch(other, go_type, ptr)),
    }
}

/// The members of `m` in sorted order.
fn object_members<'a>(m: &'a Map<String, Value>, ptr: &'a Pointer<'a>) -> Vec<Member<'a>> {
    let mut members: Vec<Member<'a>> = m
        .iter()
        .map(|(k, v)| (k.as_str(), v, Pointer::Member(ptr, k)))
        .collect();
    // A `Map` is sorted already unless serde_json keeps insertion order.
    if !members.is_sorted_by(|a, b| a.0 <= b.0) {
        members.sort_unstable_by(|a, b| a.0.cmp(b.0));
    }
    members
}

fn string(v: &Value, ptr: &Pointer<'_>) -> Result<Option<String>, String> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        other => Err(mismatch(other, "string", ptr)),
    }
}

fn plain_string(v: &Value, ptr: &Pointer<'_>) -> Result<String, String> {
    Ok(string(v, ptr)?.unwrap_or_default())
}

fn integer(v: &Value, go_type: &str, ptr: &Pointer<'_>) -> Result<Option<i64>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Number(n) => {
            if let (false, Some(i)) = (n.is_f64(), n.as_i64()) {
                return Ok(Some(i));
            }
            let f = n.as_f64().unwrap_or(f64::NAN);
            // protojson writes the double; json v2 parses that text.
            let text = crate::gojson::encode_float(f).unwrap_or_else(|_| f.to_string());
            // Go's int is 64 bits wide on the platforms the function ships for.
            if let Some(i) = xfn_sdk::fieldpath::integral_f64_as_i64(f) {
                return Ok(Some(i));
            }
            let integral = f.is_finite() && f.trunc() == f && !text.contains(['e', 'E', '.']);
            let why = if integral {
                "value out of range"
            } else {
                "invalid syntax"
            };
            Err(format!(
                "{}: cannot parse {} as signed integer: {why}",
                mismatch(v, go_type, ptr),
                crate::gofmt::quote(&text)
            ))
        }
        other => Err(mismatch(other, go_type, ptr)),
    }
}

fn list<T>(
    v: &Value,
    go_type: &str,
    ptr: &Pointer<'_>,
    mut item: impl FnMut(&Value, &Pointer<'_>) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    match v {
        Value::Null => Ok(Vec::new()),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .map(|(i, x)| item(x, &Pointer::Index(ptr, i)))
            .collect(),
        other => Err(mismatch(other, go_type, ptr)),
    }
}

/// Free-form JSON (`extv1.JSON`): `null` means unset.
fn raw(v: &Value) -> Option<Value> {
    if v.is_null() { None } else { Some(v.clone()) }
}

fn decode_resources(members: Vec<Member<'_>>) -> Result<Resources, String> {
    const T: &str = "v1beta1.Resources";
    let ptr = &Pointer::Root;
    let mut r = Resources::default();
    for (k, fv, fp) in members {
        match k {
            "apiVersion" | "kind" => {
                string(fv, &fp)?;
            }
            "metadata" => decode_object_meta(fv, &fp)?,
            "patchSets" => r.patch_sets = list(fv, "[]v1beta1.PatchSet", &fp, decode_patch_set)?,
            "environment" => {
                r.environment = if fv.is_null() {
                    None
                } else {
                    Some(decode_environment(fv, &fp)?)
                };
            }
            "resources" => {
                r.resources = list(fv, "[]v1beta1.ComposedTemplate", &fp, decode_template)?
            }
            "writeConnectionSecretToRef" => {
                r.write_connection_secret_to_ref = if fv.is_null() {
                    None
                } else {
                    Some(decode_connection_ref(fv, &fp)?)
                };
            }
            other => unknown_member(T, ptr, other)?,
        }
    }
    Ok(r)
}

fn decode_object_meta(v: &Value, ptr: &Pointer<'_>) -> Result<(), String> {
    const T: &str = "v1.ObjectMeta";
    for (k, fv, fp) in members(v, T, ptr)? {
        match k {
            "name" | "generateName" | "namespace" | "selfLink" | "uid" | "resourceVersion"
            | "creationTimestamp" | "deletionTimestamp" => {
                string(fv, &fp)?;
            }
            "generation" | "deletionGracePeriodSeconds" => {
                integer(fv, "int64", &fp)?;
            }
            "labels" | "annotations" => {
                for (_, lv, lp) in members(fv, "map[string]string", &fp)? {
                    string(lv, &lp)?;
                }
            }
            "finalizers" => {
                list(fv, "[]string", &fp, string)?;
            }
            "ownerReferences" | "managedFields" => {
                list(fv, "[]v1.OwnerReference", &fp, |x, p| {
                    members(x, "v1.OwnerReference", p).map(|_| ())
                })?;
            }
            other => unknown_member(T, ptr, other)?,
        }
    }
    Ok(())
}

fn decode_patch_set(v: &Value, ptr: &Pointer<'_>) -> Result<PatchSet, String> {
    const T: &str = "v1beta1.PatchSet";
    let mut s = PatchSet::default();
    for (k, fv, fp) in members(v, T, ptr)? {
        match k {
            "name" => s.name = plain_string(fv, &fp)?,
            "patches" => {
                s.patches = list(fv, "[]v1beta1.PatchSetPatch", &fp, |x, p| {
                    decode_patch(x, p, PatchKind::PatchSet)
                })?;
            }
            other => unknown_member(T, ptr, other)?,
        }
    }
    Ok(s)
}

fn decode_environment(v: &Value, ptr: &Pointer<'_>) -> Result<Environment, String> {
    const T: &str = "v1beta1.Environment";
    let mut e = Environment::default();
    for (k, fv, fp) in members(v, T, ptr)? {
        match k {
            "patches" => {
                e.patches = list(fv, "[]v1beta1.EnvironmentPatch", &fp, |x, p| {
                    decode_patch(x, p, PatchKind::Environment)
                })?;
            }
            other => unknown_member(T, ptr, other)?,
        }
    }
    Ok(e)
}

fn decode_connection_ref(
    v: &Value,
    ptr: &Pointer<'_>,
) -> Result<WriteConnectionSecretToRef, String> {
    const T: &str = "v1beta1.WriteConnectionSecretToRef";
    let mut r = WriteConnectionSecretToRef::default();
    for (k, fv, fp) in members(v, T, ptr)? {
        match k {
            "name" => r.name = plain_string(fv, &fp)?,
            "namespace" => r.namespace = plain_string(fv, &fp)?,
            "patches" => {
                r.patches = list(fv, "[]v1beta1.ConnectionSecretPatch", &fp, |x, p| {
                    decode_patch(x, p, PatchKind::ConnectionSecret)
                })?;
            }
            other => unknown_member(T, ptr, other)?,
        }
    }
    Ok(r)
}

fn decode_template(v: &Value, ptr: &Pointer<'_>) -> Result<ComposedTemplate, String> {
    const T: &str = "v1beta1.ComposedTemplate";
    let mut t = ComposedTemplate::default();
    for (k, fv, fp) in members(v, T, ptr)? {
        match k {
            "name" => t.name = plain_string(fv, &fp)?,
            "base" => t.base = raw(fv),
            "patches" => {
                t.patches = list(fv, "[]v1beta1.ComposedPatch", &fp, |x, p| {
                    decode_patch(x, p, PatchKind::Composed)
                })?;
            }
            "connectionDetails" => {
                t.connection_details = list(
                    fv,
                    "[]v1beta1.ConnectionDetail",
                    &fp,
                    decode_connection_detail,
                )?;
            }
            "readinessChecks" => {
                t.readiness_checks =
                    list(fv, "[]v1beta1.ReadinessCheck", &fp, decode_readiness_check)?;
            }
            other => unknown_member(T, ptr, other)?,
        }
    }
    Ok(t)
}

fn decode_patch(v: &Value, ptr: &Pointer<'_>, kind: PatchKind) -> Result<Patch, String> {
    let t = kind.go_type();
    let mut p = Patch {
        kind,
        ..Patch::default()
    };
    for (k, fv, fp) in members(v, t, ptr)? {
        match k {
            "type" => p.r#type = plain_string(fv, &fp)?,
            "fromFieldPath" => p.from_field_path = string(fv, &fp)?,
            "toFieldPath" => p.to_field_path = string(fv, &fp)?,
            "patchSetName" if kind == PatchKind::Composed => p.patch_set_name = string(fv, &fp)?,
            "combine" => {
                p.combine = if fv.is_null() {
                    None
                } else {
                    Some(decode_combine(fv, &fp)?)
                }
            }
            "transforms" => p.transforms = list(fv, "[]v1beta1.Transform", &fp, decode_transform)?,
            "policy" => {
                p.policy = if fv.is_null() {
                    None
                } else {
                    Some(decode_policy(fv, &fp)?)
                }
            }
            other => unknown_member(t, ptr, other)?,
        }
    }
    Ok(p)
}

fn decode_policy(v: &Value, ptr: &Pointer<'_>) -> Result<PatchPolicy, String> {
    const T: &str = "v1beta1.PatchPolicy";
    let mut p = PatchPolicy::default();
    for (k, fv, fp) in members(v, T, ptr)? {
        match k {
            "fromFieldPath" => p.from_field_path = string(fv, &fp)?,
            "toFieldPath" => p.to_field_path = string(fv, &fp)?,
            other => unknown_member(T, ptr, other)?,
        }
    }
    Ok(p)
}

fn decode_combine(v: &Value, ptr: &Pointer<'_>) -> Result<Combine, String> {
    const T: &str = "v1beta1.Combine";
    let mut c = Combine::default();
    for (k, fv, fp) in members(v, T, ptr)? {
        match k {
            "variables" => {
                c.variables = list(fv, "[]v1beta1.CombineVariable", &fp, |x, p| {
                    let mut path = String::new();
                    for (k, fv, fp) in members(x, "v1beta1.CombineVariable", p)? {
                        match k {
                            "fromFieldPath" => path = plain_string(fv, &fp)?,
                            other => unknown_member("v1beta1.CombineVariable", p, other)?,
                        }
                    }
                    Ok(path)
                })?;
            }
            "strategy" => c.strategy = plain_string(fv, &fp)?,
            "string" => {
                if !fv.is_null() {
                    let mut f = String::new();
                    for (k, sv, sp) in members(fv, "v1beta1.StringCombine", &fp)? {
                        match k {
                            "fmt" => f = plain_string(sv, &sp)?,
                            other => unknown_member("v1beta1.StringCombine", &fp, other)?,
                        }
                    }
                    c.string_fmt = Some(f);
                }
            }
            other => unknown_member(T, ptr, other)?,
        }
    }
    Ok(c)
}

fn decode_transform(v: &Value, ptr: &Pointer<'_>) -> Result<Transform, String> {
    const T: &str = "v1beta1.Transform";
    let mut t = Transform::default();
    for (k, fv, fp) in members(v, T, ptr)? {
        match k {
            "type" => t.r#type = plain_string(fv, &fp)?,
            "math" => {
                t.math = if fv.is_null() {
                    None
                } else {
                    Some(decode_math(fv, &fp)?)
                }
            }
            "map" => {
                t.map = match fv {
                    Value::Null => None,
                    Value::Object(m) => Some(m.iter().map(|(k, v)| (k.clone(), raw(v))).collect()),
                    other => {
                        return Err(format!(
                            "{}: json: cannot unmarshal {} into Go value of type map[string]v1.JSON",
                            mismatch(other, "v1beta1.MapTransform", &fp),
                            match other {
                                Value::Bool(_) => "bool",
                                Value::Number(_) => "number",
                                Value::String(_) => "string",
                                _ => "array",
                            }
                        ));
                    }
                };
            }
            "match" => {
                t.r#match = if fv.is_null() {
                    None
                } else {
                    Some(decode_match(fv, &fp)?)
                }
            }
            "string" => {
                t.string = if fv.is_null() {
                    None
                } else {
                    Some(decode_string(fv, &fp)?)
                }
            }
            "convert" => {
                t.convert = if fv.is_null() {
                    None
                } else {
                    Some(decode_convert(fv, &fp)?)
                }
            }
            other => unknown_member(T, ptr, other)?,
        }
    }
    Ok(t)
}

fn decode_math(v: &Value, ptr: &Pointer<'_>) -> Result<MathTransform, String> {
    const T: &str = "v1beta1.MathTransform";
    let mut m = MathTransform::default();
    for (k, fv, fp) in members(v, T, ptr)? {
        match k {
            "type" => m.r#type = plain_string(fv, &fp)?,
            "multiply" => m.multiply = integer(fv, "int64", &fp)?,
            "clampMin" => m.clamp_min = integer(fv, "int64", &fp)?,
            "clampMax" => m.clamp_max = integer(fv, "int64", &fp)?,
            other => unknown_member(T, ptr, other)?,
        }
    }
    Ok(m)
}

fn decode_match(v: &Value, ptr: &Pointer<'_>) -> Result<MatchTransform, String> {
    const T: &str = "v1beta1.MatchTransform";
    let mut m = MatchTransform::default();
    for (k, fv, fp) in members(v, T, ptr)? {
        match k {
            "patterns" => {
                m.patterns = list(fv, "[]v1beta1.MatchTransformPattern", &fp, |x, p| {
                    const P: &str = "v1beta1.MatchTransformPattern";
                    let mut pat = MatchPattern::default();
                    for (k, pv, pp) in members(x, P, p)? {
                        match k {
                            "type" => pat.r#type = plain_string(pv, &pp)?,
                            "literal" => pat.literal = string(pv, &pp)?,
                            "regexp" => pat.regexp = string(pv, &pp)?,
                            "result" => pat.result = raw(pv),
                            other => unknown_member(P, p, other)?,
                        }
                    }
                    Ok(pat)
                })?;
            }
            "fallbackValue" => m.fallback_value = raw(fv),
            "fallbackTo" => m.fallback_to = plain_string(fv, &fp)?,
            other => unknown_member(T, ptr, other)?,
        }
    }
    Ok(m)
}

fn decode_string(v: &Value, ptr: &Pointer<'_>) -> Result<StringTransform, String> {
    const T: &str = "v1beta1.StringTransform";
    let mut s = StringTransform::default();
    for (k, fv, fp) in members(v, T, ptr)? {
        match k {
            "type" => s.r#type = plain_string(fv, &fp)?,
            "fmt" => s.fmt = string(fv, &fp)?,
            "convert" => s.convert = string(fv, &fp)?,
            "trim" => s.trim = string(fv, &fp)?,
            "regexp" => {
                if !fv.is_null() {
                    const R: &str = "v1beta1.StringTransformRegexp";
                    let mut r = StringRegexp::default();
                    for (k, rv, rp) in members(fv, R, &fp)? {
                        match k {
                            "match" => r.r#match = plain_string(rv, &rp)?,
                            "group" => r.group = integer(rv, "int", &rp)?,
                            other => unknown_member(R, &fp, other)?,
                        }
                    }
                    s.regexp = Some(r);
                }
            }
            "join" => {
                if !fv.is_null() {
                    const J: &str = "v1beta1.StringTransformJoin";
                    let mut sep = String::new();
                    for (k, jv, jp) in members(fv, J, &fp)? {
                        match k {
                            "separator" => sep = plain_string(jv, &jp)?,
                            other => unknown_member(J, &fp, other)?,
                        }
                    }
                    s.join = Some(sep);
                }
            }
            "replace" => {
                if !fv.is_null() {
                    const R: &str = "v1beta1.StringTransformReplace";
                    let mut r = StringReplace::default();
                    for (k, rv, rp) in members(fv, R, &fp)? {
                        match k {
                            "search" => r.search = plain_string(rv, &rp)?,
                            "replace" => r.replace = plain_string(rv, &rp)?,
                            other => unknown_member(R, &fp, other)?,
                        }
                    }
                    s.replace = Some(r);
                }
            }
            other => unknown_member(T, ptr, other)?,
        }
    }
    Ok(s)
}

fn decode_convert(v: &Value, ptr: &Pointer<'_>) -> Result<ConvertTransform, String> {
    const T: &str = "v1beta1.ConvertTransform";
    let mut c = ConvertTransform::default();
    for (k, fv, fp) in members(v, T, ptr)? {
        match k {
            "toType" => c.to_type = plain_string(fv, &fp)?,
            "format" => c.format = string(fv, &fp)?,
            other => unknown_member(T, ptr, other)?,
        }
    }
    Ok(c)
}

fn decode_connection_detail(v: &Value, ptr: &Pointer<'_>) -> Result<ConnectionDetail, String> {
    const T: &str = "v1beta1.ConnectionDetail";
    let mut c = ConnectionDetail::default();
    for (k, fv, fp) in members(v, T, ptr)? {
        match k {
            "name" => c.name = plain_string(fv, &fp)?,
            "type" => c.r#type = plain_string(fv, &fp)?,
            "fromConnectionSecretKey" => c.from_connection_secret_key = string(fv, &fp)?,
            "fromFieldPath" => c.from_field_path = string(fv, &fp)?,
            "value" => c.value = string(fv, &fp)?,
            other => unknown_member(T, ptr, other)?,
        }
    }
    Ok(c)
}

fn decode_readiness_check(v: &Value, ptr: &Pointer<'_>) -> Result<ReadinessCheck, String> {
    const T: &str = "v1beta1.ReadinessCheck";
    let mut r = ReadinessCheck::default();
    for (k, fv, fp) in members(v, T, ptr)? {
        match k {
            "type" => r.r#type = plain_string(fv, &fp)?,
            "fieldPath" => r.field_path = string(fv, &fp)?,
            "matchString" => r.match_string = string(fv, &fp)?,
            "matchInteger" => r.match_integer = integer(fv, "int64", &fp)?,
            "matchCondition" => {
                if !fv.is_null() {
                    const M: &str = "v1beta1.MatchConditionReadinessCheck";
                    let mut m = MatchCondition::default();
                    for (k, mv, mp) in members(fv, M, &fp)? {
                        match k {
                            "type" => m.r#type = plain_string(mv, &mp)?,
                            "status" => m.status = plain_string(mv, &mp)?,
                            other => unknown_member(M, &fp, other)?,
                        }
                    }
                    r.match_condition = Some(m);
                }
            }
            other => unknown_member(T, ptr, other)?,
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn dec(v: Value) -> Result<Resources, String> {
        let Value::Object(m) = v else { panic!() };
        decode(&m)
    }

    #[test]
    fn decodes_a_full_input() {
        let r = dec(json!({
            "apiVersion": "pt.fn.crossplane.io/v1beta1",
            "kind": "Resources",
            "patchSets": [{"name": "common", "patches": [{"fromFieldPath": "a"}]}],
            "environment": {"patches": [{"type": "ToCompositeFieldPath", "fromFieldPath": "x"}]},
            "resources": [{
                "name": "bucket",
                "base": {"apiVersion": "v1", "kind": "Thing"},
                "patches": [{
                    "type": "FromCompositeFieldPath",
                    "fromFieldPath": "spec.a",
                    "toFieldPath": "spec.b",
                    "transforms": [
                        {"type": "math", "math": {"type": "Multiply", "multiply": 3.0}},
                        {"type": "map", "map": {"a": "b", "n": null}},
                        {"type": "string", "string": {"type": "Regexp", "regexp": {"match": "x", "group": 1.0}}}
                    ],
                    "policy": {"fromFieldPath": "Required", "toFieldPath": "MergeObjects"}
                }],
                "connectionDetails": [{"name": "n", "type": "FromValue", "value": "v"}],
                "readinessChecks": [{"type": "MatchInteger", "fieldPath": "a", "matchInteger": 4.0}]
            }],
            "writeConnectionSecretToRef": {"name": "s", "patches": [{"type": "FromCompositeFieldPath", "fromFieldPath": "a"}]}
        }))
        .unwrap();
        let t = &r.resources[0];
        assert_eq!(t.base, Some(json!({"apiVersion": "v1", "kind": "Thing"})));
        let p = &t.patches[0];
        assert_eq!(p.transforms[0].math.as_ref().unwrap().multiply, Some(3));
        let map = p.transforms[1].map.as_ref().unwrap();
        assert_eq!(map["a"], Some(json!("b")));
        assert_eq!(map["n"], None);
        assert_eq!(
            p.transforms[2]
                .string
                .as_ref()
                .unwrap()
                .regexp
                .as_ref()
                .unwrap()
                .group,
            Some(1)
        );
        assert_eq!(t.readiness_checks[0].match_integer, Some(4));
        assert_eq!(r.patch_sets[0].patches[0].kind, PatchKind::PatchSet);
        assert_eq!(r.patch_sets[0].patches[0].to_field_path(), "a");
        assert_eq!(
            r.write_connection_secret_to_ref.unwrap().patches[0].kind,
            PatchKind::ConnectionSecret
        );
    }

    #[test]
    fn unknown_members_are_errors() {
        assert_eq!(
            dec(json!({"resources": [], "bogus": 1})).unwrap_err(),
            "json: cannot unmarshal JSON string into Go v1beta1.Resources: unknown object member name \"bogus\""
        );
        assert_eq!(
            dec(json!({"resources": [{"name": "a", "bsae": {}}]})).unwrap_err(),
            "json: cannot unmarshal JSON string into Go v1beta1.ComposedTemplate: unknown object member name \"bsae\" within \"/resources/0\""
        );
        // Old-style merge options are unknown now.
        assert_eq!(
            dec(json!({"resources": [{"name": "a", "patches": [{"fromFieldPath": "a", "policy": {"mergeOptions": {}}}]}]}))
                .unwrap_err(),
            "json: cannot unmarshal JSON string into Go v1beta1.PatchPolicy: unknown object member name \"mergeOptions\" within \"/resources/0/patches/0/policy\""
        );
        // Names are case-sensitive.
        assert!(dec(json!({"Resources": []})).is_err());
        // patchSetName is not a member of a patch set's patches.
        assert_eq!(
            dec(json!({"patchSets": [{"name": "s", "patches": [{"patchSetName": "x"}]}]}))
                .unwrap_err(),
            "json: cannot unmarshal JSON string into Go v1beta1.PatchSetPatch: unknown object member name \"patchSetName\" within \"/patchSets/0/patches/0\""
        );
        // The first error in sorted order wins.
        assert!(
            dec(json!({"zzz": 1, "resources": [{"aaa": 1}]}))
                .unwrap_err()
                .contains("\"aaa\"")
        );
    }

    #[test]
    fn unknown_members_are_found_everywhere_and_dropped() {
        let mut input = json!({
            "apiVersion": "pt.fn.crossplane.io/v1beta1", "kind": "Resources",
            "metadata": {"name": "x", "nmae": "typo"},
            "extra": true,
            "resources": [
                {"name": "a", "base": {"anything": "goes"}, "readinessCheck": [],
                 "patches": [{"fromFieldPath": "spec.a", "toFieldPath": "spec.a",
                              "transforms": [{"type": "string", "string": {"fmt": "%s", "type": "Format", "old": 1}}],
                              "combine": {"variables": [{"fromFieldPath": "x", "x/y~": 1}], "strategy": "string",
                                          "string": {"fmt": "%s", "sep": "-"}}}]}]});
        let before = input.clone();
        let dropped = drop_unknown_members(&mut input);
        assert_eq!(
            dropped,
            [
                "/extra",
                "/metadata/nmae",
                "/resources/0/patches/0/combine/string/sep",
                "/resources/0/patches/0/combine/variables/0/x~1y~0",
                "/resources/0/patches/0/transforms/0/string/old",
                "/resources/0/readinessCheck",
            ]
        );
        assert!(dec(input.clone()).is_ok(), "{input}");
        // Only the unknown members went; free-form `base` is untouched.
        assert_eq!(
            input["resources"][0]["base"],
            before["resources"][0]["base"]
        );
        assert_eq!(
            input["resources"][0]["patches"][0]["combine"]["string"],
            json!({"fmt": "%s"})
        );
        // Strict decoding is back on afterwards.
        assert!(dec(before).is_err());
    }

    #[test]
    fn unknown_members_stop_at_another_error() {
        let input = json!({"a": 1, "resources": "not a list", "z": 2});
        let Value::Object(map) = input else {
            unreachable!()
        };
        assert_eq!(unknown_members(&map), [(String::new(), "a".to_owned())]);
        assert!(drop_unknown_members(&mut json!("text")).is_empty());
    }

    #[test]
    fn object_meta_is_strict() {
        assert!(
            dec(json!({"metadata": {"name": "x", "labels": {"a": "b"}}, "resources": []})).is_ok()
        );
        assert_eq!(
            dec(json!({"metadata": {"nmae": "x"}})).unwrap_err(),
            "json: cannot unmarshal JSON string into Go v1.ObjectMeta: unknown object member name \"nmae\" within \"/metadata\""
        );
        assert_eq!(
            dec(json!({"metadata": {"labels": {"a": 1}}})).unwrap_err(),
            "json: cannot unmarshal JSON number into Go string within \"/metadata/labels/a\""
        );
        // A pointer escapes `~` and `/` in member names (RFC 6901).
        assert_eq!(
            dec(json!({"metadata": {"labels": {"x.io/a~b": 1}}})).unwrap_err(),
            "json: cannot unmarshal JSON number into Go string within \"/metadata/labels/x.io~1a~0b\""
        );
    }

    #[test]
    fn type_errors() {
        assert_eq!(
            dec(json!({"resources": [{"name": 5}]})).unwrap_err(),
            "json: cannot unmarshal JSON number into Go string within \"/resources/0/name\""
        );
        assert_eq!(
            dec(json!({"resources": {"name": "a"}})).unwrap_err(),
            "json: cannot unmarshal JSON object into Go []v1beta1.ComposedTemplate within \"/resources\""
        );
        assert_eq!(
            dec(json!({"resources": [{"name": "a", "patches": [{"transforms": [{"type": "math", "math": {"multiply": 1.5}}]}]}]}))
                .unwrap_err(),
            "json: cannot unmarshal JSON number into Go int64 within \"/resources/0/patches/0/transforms/0/math/multiply\": cannot parse \"1.5\" as signed integer: invalid syntax"
        );
        assert!(
            dec(json!({"resources": [{"name": "a", "readinessChecks": [{"matchInteger": 1e19}]}]}))
                .unwrap_err()
                .ends_with(
                    "cannot parse \"10000000000000000000\" as signed integer: value out of range"
                )
        );
    }

    #[test]
    fn nulls_are_unset() {
        let r = dec(json!({"resources": [{"name": "a", "base": null, "patches": [{"toFieldPath": null, "fromFieldPath": "x"}]}], "environment": null}))
            .unwrap();
        assert_eq!(r.resources[0].base, None);
        assert_eq!(r.resources[0].patches[0].to_field_path(), "x");
        assert!(r.environment.is_none());
    }
}
