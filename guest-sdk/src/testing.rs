//! Test helpers (native builds only): requests and responses written as YAML
//! or JSON, and [`assert_response_eq!`](crate::assert_response_eq), which
//! fails with the differing fields and a line diff, like `cmp.Diff` with
//! `protocmp` in a Go function's tests.
//!
//! ```
//! use xfn_sdk::testing;
//! use xfn_sdk::{Function, Request, Response};
//!
//! struct Noop;
//! impl Function for Noop {
//!     fn run(req: &Request) -> Result<Response, xfn_sdk::Error> {
//!         Ok(Response::to(req))
//!     }
//! }
//!
//! let req = testing::request_from_yaml("
//! meta: {tag: t}
//! observed:
//!   composite:
//!     resource: {apiVersion: example.org/v1, kind: XThing}
//! ").unwrap();
//! let want = testing::response_from_yaml("meta: {tag: t, ttl: 60s}").unwrap();
//! xfn_sdk::assert_response_eq!(Noop::run(&req).unwrap(), want);
//! ```

use std::fmt::Write as _;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::fieldpath::{Segment, Segments};
use crate::{Error, Request, Resource, Response};

/// At most this many differing fields are listed before the line diff.
pub const MAX_LISTED_DIFFERENCES: usize = 20;

/// A request written as YAML, in protojson's field names (`observed`,
/// `desired`, `input`, `requiredResources`, ...).
///
/// ```
/// let req = xfn_sdk::testing::request_from_yaml("input: {greeting: Hi}").unwrap();
/// assert_eq!(req.input_object().unwrap()["greeting"], "Hi");
/// ```
pub fn request_from_yaml(text: &str) -> Result<Request, Error> {
    from_yaml(text, "request")
}

/// A request written as JSON, in protojson's field names.
///
/// ```
/// let req = xfn_sdk::testing::request_from_json(r#"{"meta": {"tag": "t"}}"#).unwrap();
/// assert_eq!(req.tag(), "t");
/// ```
pub fn request_from_json(text: &str) -> Result<Request, Error> {
    from_json(text, "request")
}

/// A response written as YAML, in protojson's field and enum names.
///
/// ```
/// let rsp = xfn_sdk::testing::response_from_yaml("
/// results:
/// - {severity: SEVERITY_NORMAL, message: hi}
/// ").unwrap();
/// assert_eq!(rsp.results[0].message, "hi");
/// ```
pub fn response_from_yaml(text: &str) -> Result<Response, Error> {
    from_yaml(text, "response")
}

/// A response written as JSON, in protojson's field and enum names.
///
/// ```
/// let rsp = xfn_sdk::testing::response_from_json(r#"{"meta": {"ttl": "60s"}}"#).unwrap();
/// assert_eq!(rsp.meta.unwrap().ttl, Some(xfn_sdk::DEFAULT_TTL));
/// ```
pub fn response_from_json(text: &str) -> Result<Response, Error> {
    from_json(text, "response")
}

/// A resource holding the Kubernetes object written as YAML.
///
/// ```
/// let xr = xfn_sdk::testing::resource_from_yaml("
/// apiVersion: example.org/v1
/// kind: XBucket
/// metadata: {name: demo}
/// ").unwrap();
/// assert_eq!(xr.name(), Some("demo"));
/// ```
pub fn resource_from_yaml(text: &str) -> Result<Resource, Error> {
    let object: crate::Object = from_yaml(text, "resource")?;
    Ok(Resource::from_object(object))
}

fn from_yaml<T: DeserializeOwned>(text: &str, what: &str) -> Result<T, Error> {
    let value: Value = serde_yaml_ng::from_str(text)
        .map_err(|e| Error::from(format!("cannot parse {what} YAML: {e}")))?;
    crate::decode::from_value(&value).map_err(|e| Error::from(format!("invalid {what}: {e}")))
}

fn from_json<T: DeserializeOwned>(text: &str, what: &str) -> Result<T, Error> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| Error::from(format!("cannot parse {what} JSON: {e}")))?;
    crate::decode::from_value(&value).map_err(|e| Error::from(format!("invalid {what}: {e}")))
}

/// The difference between `want` and `got` as their JSON forms, or `None`
/// if they are equal: the differing fields by path, then a line diff of
/// the pretty-printed JSON (`-` want, `+` got).
///
/// ```
/// use xfn_sdk::Response;
/// let mut got = Response::default();
/// got.normal("hello");
/// let mut want = Response::default();
/// want.normal("hallo");
/// let diff = xfn_sdk::testing::diff(&want, &got).unwrap();
/// assert!(diff.contains("results[0].message: want \"hallo\", got \"hello\""), "{diff}");
/// assert!(xfn_sdk::testing::diff(&want, &want).is_none());
/// ```
pub fn diff<T: Serialize + ?Sized>(want: &T, got: &T) -> Option<String> {
    let (want, got) = match (serde_json::to_value(want), serde_json::to_value(got)) {
        (Ok(w), Ok(g)) => (w, g),
        (Err(e), _) | (_, Err(e)) => return Some(format!("cannot serialize to JSON: {e}")),
    };
    if want == got {
        return None;
    }
    let mut out = String::new();
    let mut differences = Vec::new();
    collect_differences(&want, &got, &mut Vec::new(), &mut differences);
    for line in differences.iter().take(MAX_LISTED_DIFFERENCES) {
        let _ = writeln!(out, "  {line}");
    }
    if differences.len() > MAX_LISTED_DIFFERENCES {
        let more = differences.len() - MAX_LISTED_DIFFERENCES;
        let _ = writeln!(out, "  ... and {more} more");
    }
    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_else(|e| e.to_string());
    let (want, got) = (pretty(&want) + "\n", pretty(&got) + "\n");
    let lines = similar::TextDiff::from_lines(&want, &got);
    let _ = write!(
        out,
        "{}",
        lines.unified_diff().context_radius(3).header("want", "got")
    );
    Some(out)
}

/// Appends one line per differing leaf: `path: want X, got Y`.
fn collect_differences(want: &Value, got: &Value, path: &mut Vec<Segment>, out: &mut Vec<String>) {
    if out.len() > MAX_LISTED_DIFFERENCES {
        return;
    }
    let at = |path: &[Segment]| match Segments(path.to_vec()).to_string() {
        p if p.is_empty() => "(top level)".to_owned(),
        p => p,
    };
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            let keys: std::collections::BTreeSet<&String> = w.keys().chain(g.keys()).collect();
            for key in keys {
                path.push(Segment::Field(key.clone()));
                match (w.get(key), g.get(key)) {
                    (Some(w), Some(g)) => collect_differences(w, g, path, out),
                    (Some(w), None) => out.push(format!("{}: want {w}, got nothing", at(path))),
                    (None, Some(g)) => out.push(format!("{}: want nothing, got {g}", at(path))),
                    (None, None) => {}
                }
                path.pop();
            }
        }
        (Value::Array(w), Value::Array(g)) => {
            for i in 0..w.len().max(g.len()) {
                path.push(Segment::Index(u32::try_from(i).unwrap_or(u32::MAX)));
                match (w.get(i), g.get(i)) {
                    (Some(w), Some(g)) => collect_differences(w, g, path, out),
                    (Some(w), None) => out.push(format!("{}: want {w}, got nothing", at(path))),
                    (None, Some(g)) => out.push(format!("{}: want nothing, got {g}", at(path))),
                    (None, None) => {}
                }
                path.pop();
            }
        }
        (w, g) if w != g => out.push(format!("{}: want {w}, got {g}", at(path))),
        _ => {}
    }
}

/// Asserts that two responses (or requests, or resources: anything
/// `Serialize`) are equal as JSON; if not, panics with the differing fields
/// and a line diff (`-want +got`), as `cmp.Diff` does in Go tests.
///
/// ```should_panic
/// use xfn_sdk::Response;
/// let mut got = Response::default();
/// got.set_context_key("region", "us-east-1".into());
/// let mut want = Response::default();
/// want.set_context_key("region", "eu-west-1".into());
/// // Panics: "context.region: want "eu-west-1", got "us-east-1"" and a diff.
/// xfn_sdk::assert_response_eq!(got, want);
/// ```
#[macro_export]
macro_rules! assert_response_eq {
    ($got:expr, $want:expr $(,)?) => {
        if let ::core::option::Option::Some(diff) = $crate::testing::diff(&$want, &$got) {
            ::core::panic!(
                "{} != {} (-want +got):\n{}",
                ::core::stringify!($got),
                ::core::stringify!($want),
                diff
            );
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    const REQUEST: &str = "
meta: {tag: abc}
observed:
  composite:
    resource:
      apiVersion: example.org/v1
      kind: XBucket
      metadata: {name: demo}
input: {apiVersion: example.fn.xfn.dev/v1, kind: Input, size: 3}
";

    #[test]
    fn yaml_and_json_requests_read_the_same() {
        let yaml = request_from_yaml(REQUEST).expect("yaml");
        let json = serde_json::to_string(&yaml).expect("json");
        assert_eq!(request_from_json(&json).expect("parses"), yaml);
        assert_eq!(yaml.tag(), "abc");
        assert_eq!(
            yaml.observed_composite().and_then(Resource::name),
            Some("demo")
        );
    }

    #[test]
    fn bad_text_names_what_and_where() {
        let err = request_from_yaml("meta: {tag: [1]}")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("invalid request: field meta.tag: invalid type"),
            "{err}"
        );
        let err = response_from_json("{").unwrap_err().to_string();
        assert!(err.starts_with("cannot parse response JSON"), "{err}");
    }

    #[test]
    fn mismatch_panics_with_a_diff_naming_the_field() {
        let want = response_from_yaml(
            "desired: {resources: {bucket: {resource: {spec: {region: eu-west-1}}}}}",
        )
        .expect("want");
        let got = response_from_yaml(
            "desired: {resources: {bucket: {resource: {spec: {region: us-east-1}}}}}",
        )
        .expect("got");
        let panic = std::panic::catch_unwind(|| crate::assert_response_eq!(got, want))
            .expect_err("must panic");
        let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(
            message.contains(
                "desired.resources.bucket.resource.spec.region: want \"eu-west-1\", got \"us-east-1\""
            ),
            "{message}"
        );
        let line = |sign: char, value: &str| {
            message
                .lines()
                .any(|l| l.starts_with(sign) && l.trim_start_matches(sign).trim() == value)
        };
        assert!(line('-', "\"region\": \"eu-west-1\""), "{message}");
        assert!(line('+', "\"region\": \"us-east-1\""), "{message}");
        assert!(message.contains("(-want +got)"), "{message}");
    }

    #[test]
    fn equal_responses_pass_and_missing_fields_are_listed() {
        let rsp =
            response_from_yaml("results: [{severity: SEVERITY_NORMAL, message: hi}]").expect("rsp");
        crate::assert_response_eq!(rsp.clone(), rsp);
        let diff = diff(&Response::default(), &rsp).expect("differs");
        assert!(
            diff.contains("results: want nothing, got [{\"message\":\"hi\""),
            "{diff}"
        );
        let keyed = serde_json::json!({"metadata": {"annotations": {"a.b/c": "1"}}});
        let diff = super::diff(&serde_json::json!({}), &keyed).expect("differs");
        assert!(diff.contains("metadata: want nothing"), "{diff}");
        let inner = super::diff(
            &serde_json::json!({"metadata": {"annotations": {}}}),
            &keyed,
        )
        .expect("differs");
        assert!(
            inner.contains("metadata.annotations[a.b/c]: want nothing, got \"1\""),
            "{inner}"
        );
    }
}
