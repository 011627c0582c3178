//! CEL health-check customizations (upstream's `cel` package and the first
//! pass of `RunFunction`), behind the `CELHealthcheckCustomizations`
//! feature gate, off by default as upstream's.
//!
//! Rules are CEL expressions over `object` (the observed resource) by
//! `<group>_<version>_<kind>`, from the input's
//! `celHealthCheckCustomization` over those at the context path
//! `celHealthCheckCustomizationFrom`. A rule's result sets the desired
//! resource `READY_TRUE` or `READY_FALSE`; a rule that fails is a warning.
//! CEL is cel-rust through [`xfn_cel`] (see its differences from cel-go).

use std::collections::BTreeMap;

use serde_json::Value;
use xfn_cel::CelError;
use xfn_sdk::{Object, Ready, Request, Response};

use crate::input::Input;

/// The feature gates the function knows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Features {
    /// `CELHealthcheckCustomizations` (alpha, off by default).
    pub cel_healthcheck_customizations: bool,
}

/// The environment variable a host sets to the Go function's
/// `--feature-gates` value (`CELHealthcheckCustomizations=true`).
pub const FEATURE_GATES_ENV: &str = "FEATURE_GATES";

/// Go's `strconv.ParseBool`.
fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

impl Features {
    /// Parses a `--feature-gates` value (`Key=bool,...`); an unknown gate
    /// or a value that is not a bool is an error, as Go refuses it at
    /// start-up.
    ///
    /// ```
    /// use function_auto_ready::cel_checks::Features;
    /// assert!(Features::parse("CELHealthcheckCustomizations=true").unwrap().cel_healthcheck_customizations);
    /// assert!(Features::parse("Other=true").is_err());
    /// ```
    pub fn parse(gates: &str) -> Result<Features, String> {
        let mut f = Features::default();
        for pair in gates.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = pair
                .split_once('=')
                .ok_or_else(|| format!("missing bool value for {pair}"))?;
            let v = parse_bool(v.trim())
                .ok_or_else(|| format!("invalid value of {k}={v}, err: strconv.ParseBool"))?;
            match k.trim() {
                "CELHealthcheckCustomizations" => f.cel_healthcheck_customizations = v,
                other => return Err(format!("unrecognized feature gate: {other}")),
            }
        }
        Ok(f)
    }

    /// The gates the host set in [`FEATURE_GATES_ENV`] (none if unset).
    pub fn from_env() -> Result<Features, String> {
        match feature_gates_env() {
            Some(v) => Features::parse(&v),
            None => Ok(Features::default()),
        }
    }
}

/// [`FEATURE_GATES_ENV`]'s value. In a wasm guest it is read through the
/// `wasi:cli/environment` import directly: wasi-libc's `getenv` (behind
/// `std::env::var`) trapped with an out-of-bounds access in this component
/// whenever the environment was not empty.
#[cfg(target_family = "wasm")]
fn feature_gates_env() -> Option<String> {
    wasip2::cli::environment::get_environment()
        .into_iter()
        .find_map(|(key, value)| (key == FEATURE_GATES_ENV).then_some(value))
}

/// [`FEATURE_GATES_ENV`]'s value.
#[cfg(not(target_family = "wasm"))]
fn feature_gates_env() -> Option<String> {
    std::env::var(FEATURE_GATES_ENV).ok()
}

/// Go's `ParseNestedKey`: `a.b`, `[a.b].c`.
fn parse_nested_key(key: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let b = key.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'[' {
            if let Some(end) = key[i + 1..].find(['[', ']']).map(|e| e + i + 1)
                && b[end] == b']'
                && end > i + 1
            {
                parts.push(key[i + 1..end].to_owned());
                i = end + 1;
                continue;
            }
            i += 1;
            continue;
        }
        if matches!(b[i], b'.' | b']') {
            i += 1;
            continue;
        }
        let end = key[i..].find(['.', '[', ']']).map_or(key.len(), |e| e + i);
        parts.push(key[i..end].to_owned());
        i = end;
    }
    parts
}

/// Go's `GetNestedMap`: the string entries of the object at `key` of the
/// context, or `None`.
fn nested_map(context: Option<&Object>, key: &str) -> Option<BTreeMap<String, String>> {
    let parts = parse_nested_key(key);
    if parts.is_empty() {
        return None;
    }
    let mut it = context?;
    let (last, init) = parts.split_last()?;
    for p in init {
        it = it.get(p)?.as_object()?;
    }
    let out = it.get(last)?.as_object()?;
    Some(
        out.iter()
            .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())))
            .collect(),
    )
}

/// `<group>_<version>_<kind>` of an object, as Go's `GroupVersionKind()`
/// gives them (an unparsable apiVersion makes all three empty).
fn gvk_key(object: &Object) -> String {
    let text = |k: &str| object.get(k).and_then(Value::as_str).unwrap_or("");
    let api_version = text("apiVersion");
    let (group, version, kind) = match api_version.matches('/').count() {
        0 => ("", api_version, text("kind")),
        1 => {
            let (g, v) = api_version.split_once('/').unwrap_or(("", ""));
            (g, v, text("kind"))
        }
        _ => ("", "", ""),
    };
    format!("{group}_{version}_{kind}")
}

/// Go's `HealthDeriveFromCelQuery`.
fn derive(query: &str, object: &Object) -> Result<Ready, String> {
    match xfn_cel::static_type(query) {
        Err(CelError::Parse(e)) => return Err(format!("failed to compile query: {e}")),
        Ok(Some("bool")) | Ok(None) | Err(_) => {}
        Ok(Some(_)) => return Err("celQuery does not return a bool type".to_owned()),
    }
    let object = Value::Object(object.clone());
    let ctx = xfn_cel::json_context(&[("object", &object)]);
    match xfn_cel::evaluate_bool(&ctx, query) {
        Ok(true) => Ok(Ready::True),
        Ok(false) => Ok(Ready::False),
        Err(CelError::Parse(e)) => Err(format!("failed to compile query: {e}")),
        Err(CelError::Eval(e)) => Err(format!("failed to eval the program: {e}")),
        Err(CelError::NotBool(_)) => Err("celQuery does not return a bool type".to_owned()),
    }
}

/// The CEL pass: sets the readiness of desired resources whose kind has a
/// rule. `Err` where the Go function crashes (a context path that is not
/// there together with inline rules: Go writes to a nil map).
pub fn apply(req: &Request, input: &Input, rsp: &mut Response) -> Result<(), String> {
    let mut rules: Option<BTreeMap<String, String>> = Some(BTreeMap::new());
    if let Some(from) = input.cel_health_check_customization_from.as_deref() {
        rules = nested_map(req.context(), from);
    }
    if let Some(inline) = &input.cel_health_check_customization {
        let Some(r) = rules.as_mut() else {
            return Err(format!(
                "celHealthCheckCustomizationFrom {from:?} is not in the context and celHealthCheckCustomization is set \
                 (function-auto-ready v0.7.0 crashes here: it writes to a nil map)",
                from = input
                    .cel_health_check_customization_from
                    .as_deref()
                    .unwrap_or("")
            ));
        };
        r.extend(inline.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    let rules = rules.unwrap_or_default();
    if rules.is_empty() {
        return Ok(());
    }
    let observed = req.observed_composed();
    let mut warnings = Vec::new();
    for (name, desired) in &mut rsp.desired_mut().resources {
        if desired.ready != Ready::Unspecified {
            continue;
        }
        let Some(object) = observed.get(name).and_then(|o| o.resource.as_ref()) else {
            continue;
        };
        let Some(query) = rules.get(&gvk_key(object)) else {
            continue;
        };
        match derive(query, object) {
            Ok(ready) => desired.ready = ready,
            Err(e) => warnings.push(e),
        }
    }
    for w in warnings {
        rsp.warning(w);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_keys_in_dot_and_bracket_notation() {
        assert_eq!(
            parse_nested_key("[apiextensions.crossplane.io/environment].rules"),
            ["apiextensions.crossplane.io/environment", "rules"]
        );
        assert_eq!(parse_nested_key("a.b[c]"), ["a", "b", "c"]);
    }

    #[test]
    fn gvk_keys() {
        let o = serde_json::json!({"apiVersion": "pkg.crossplane.io/v1", "kind": "Configuration"});
        assert_eq!(
            gvk_key(o.as_object().unwrap()),
            "pkg.crossplane.io_v1_Configuration"
        );
        let core = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap"});
        assert_eq!(gvk_key(core.as_object().unwrap()), "_v1_ConfigMap");
    }

    #[test]
    fn rules_need_exactly_bool() {
        let o = serde_json::json!({"status": {"phase": "Bound", "n": 2}});
        let o = o.as_object().unwrap();
        assert_eq!(derive("object.status.phase == 'Bound'", o), Ok(Ready::True));
        assert_eq!(derive("object.status.n > 3", o), Ok(Ready::False));
        assert_eq!(
            derive("object.status.phase", o),
            Err("celQuery does not return a bool type".into())
        );
        assert!(
            derive("object.status.missing == 1", o)
                .unwrap_err()
                .starts_with("failed to eval the program: ")
        );
    }
}
