//! Label and field selectors as used in list and watch queries.

use serde_json::Value;

use crate::status::ApiError;

/// One requirement of a label selector.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    Exists(String),
    NotExists(String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
}

/// A parsed label selector; all requirements must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
}

impl LabelSelector {
    /// Parses the `labelSelector` query syntax.
    pub fn parse(input: &str) -> Result<Self, ApiError> {
        let mut requirements = Vec::new();
        for term in split_top_level(input)? {
            let term = term.trim();
            if term.is_empty() {
                continue;
            }
            requirements.push(parse_requirement(term)?);
        }
        Ok(Self { requirements })
    }

    /// Whether an object's `metadata.labels` satisfy the selector.
    pub fn matches(&self, obj: &Value) -> bool {
        let labels = obj.pointer("/metadata/labels");
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.requirements.iter().all(|r| match r {
            Requirement::Equals(k, v) => get(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::NotExists(k) => get(k).is_none(),
            Requirement::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::NotIn(k, vs) => get(k).is_none_or(|x| vs.iter().all(|v| v != x)),
        })
    }
}

/// Splits on commas that are not inside parentheses.
fn split_top_level(input: &str) -> Result<Vec<&str>, ApiError> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in input.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.checked_sub(1).ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "unable to parse label selector {input:?}: unbalanced ')'"
                    ))
                })?
            }
            ',' if depth == 0 => {
                out.push(&input[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(ApiError::bad_request(format!(
            "unable to parse label selector {input:?}: unbalanced '('"
        )));
    }
    out.push(&input[start..]);
    Ok(out)
}

fn parse_requirement(term: &str) -> Result<Requirement, ApiError> {
    let bad =
        |why: &str| ApiError::bad_request(format!("unable to parse requirement {term:?}: {why}"));
    if let Some(rest) = term.strip_prefix('!') {
        let key = valid_key(rest.trim()).ok_or_else(|| bad("invalid label key"))?;
        return Ok(Requirement::NotExists(key));
    }
    if let Some((k, v)) = term.split_once("!=") {
        let key = valid_key(k.trim()).ok_or_else(|| bad("invalid label key"))?;
        return Ok(Requirement::NotEquals(
            key,
            valid_value(v.trim()).ok_or_else(|| bad("invalid label value"))?,
        ));
    }
    if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
        let key = valid_key(k.trim()).ok_or_else(|| bad("invalid label key"))?;
        return Ok(Requirement::Equals(
            key,
            valid_value(v.trim()).ok_or_else(|| bad("invalid label value"))?,
        ));
    }
    if let Some(open) = term.find('(') {
        let close = term
            .rfind(')')
            .filter(|c| *c > open)
            .ok_or_else(|| bad("missing ')'"))?;
        if !term[close + 1..].trim().is_empty() {
            return Err(bad("trailing characters after ')'"));
        }
        let head: Vec<&str> = term[..open].split_whitespace().collect();
        let [key, op] = head.as_slice() else {
            return Err(bad("expected `key in (...)` or `key notin (...)`"));
        };
        let key = valid_key(key).ok_or_else(|| bad("invalid label key"))?;
        let mut values = Vec::new();
        for v in term[open + 1..close].split(',') {
            let v = v.trim();
            if v.is_empty() {
                continue;
            }
            values.push(valid_value(v).ok_or_else(|| bad("invalid label value"))?);
        }
        return match *op {
            "in" => Ok(Requirement::In(key, values)),
            "notin" => Ok(Requirement::NotIn(key, values)),
            _ => Err(bad("unknown set operator")),
        };
    }
    let key = valid_key(term).ok_or_else(|| bad("invalid label key"))?;
    Ok(Requirement::Exists(key))
}

fn valid_key(k: &str) -> Option<String> {
    let ok = !k.is_empty()
        && k.len() <= 317
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
    ok.then(|| k.to_string())
}

fn valid_value(v: &str) -> Option<String> {
    let ok = v.len() <= 63
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    ok.then(|| v.to_string())
}

/// One requirement of a field selector.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FieldRequirement {
    path: Vec<String>,
    value: String,
    negate: bool,
}

/// A parsed field selector: `metadata.name=x,metadata.namespace!=y`, and other dotted paths compared as strings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector {
    requirements: Vec<FieldRequirement>,
}

impl FieldSelector {
    /// Parses the `fieldSelector` query syntax.
    pub fn parse(input: &str) -> Result<Self, ApiError> {
        let mut requirements = Vec::new();
        for term in input.split(',') {
            let term = term.trim();
            if term.is_empty() {
                continue;
            }
            let (field, value, negate) = if let Some((f, v)) = term.split_once("!=") {
                (f, v, true)
            } else if let Some((f, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
                (f, v, false)
            } else {
                return Err(ApiError::bad_request(format!(
                    "invalid field selector requirement {term:?}: expected field=value or field!=value"
                )));
            };
            let field = field.trim();
            if field.is_empty() || field.split('.').any(str::is_empty) {
                return Err(ApiError::bad_request(format!(
                    "invalid field name in {term:?}"
                )));
            }
            requirements.push(FieldRequirement {
                path: field.split('.').map(str::to_string).collect(),
                value: value.trim().to_string(),
                negate,
            });
        }
        Ok(Self { requirements })
    }

    /// Whether the object satisfies every requirement. Missing fields compare as the empty string.
    pub fn matches(&self, obj: &Value) -> bool {
        self.requirements.iter().all(|r| {
            let mut cur = Some(obj);
            for seg in &r.path {
                cur = cur.and_then(|c| c.get(seg));
            }
            let actual = match cur {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            (actual == r.value) != r.negate
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(labels: Value) -> Value {
        json!({"metadata": {"name": "n1", "namespace": "ns", "labels": labels}})
    }

    #[test]
    fn label_operators() {
        let o = obj(json!({"app": "web", "tier": "front"}));
        let m = |s: &str| LabelSelector::parse(s).expect("parse").matches(&o);
        assert!(m("app=web"));
        assert!(m("app==web"));
        assert!(!m("app=db"));
        assert!(m("app!=db"));
        assert!(m("tier"));
        assert!(!m("!tier"));
        assert!(m("!missing"));
        assert!(m("app in (db, web)"));
        assert!(!m("app notin (web)"));
        assert!(m("missing notin (web)"));
        assert!(m("app in (web),tier=front"));
        assert!(!m("app in (web),tier=back"));
        assert!(m(""));
    }

    #[test]
    fn bad_label_selectors_are_rejected() {
        for s in ["app in (web", "app)", "a b (c)", "x=(y", "=v"] {
            assert!(LabelSelector::parse(s).is_err(), "{s} should fail");
        }
    }

    #[test]
    fn field_selectors() {
        let o = obj(json!({}));
        let m = |s: &str| FieldSelector::parse(s).expect("parse").matches(&o);
        assert!(m("metadata.name=n1"));
        assert!(m("metadata.namespace==ns,metadata.name!=n2"));
        assert!(!m("metadata.name=n2"));
        assert!(FieldSelector::parse("metadata.name").is_err());
    }
}
