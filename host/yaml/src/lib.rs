//! Go-compatible YAML emission, and the guard every YAML input passes
//! before it is parsed ([`check`]).
//!
//! Prints a [`serde_json::Value`] byte for byte as `sigs.k8s.io/yaml.JSONToYAML`
//! (the go-yaml v2 emitter) does: sorted keys in go-yaml's natural order,
//! two-space indentation, sequences not indented under their key, YAML 1.1
//! quoting, literal blocks for multi-line strings and folding of long scalars
//! after column 80.
//!
//! Numbers follow the Go pipeline `crossplane render` runs: a float goes
//! through `encoding/json` and back through go-yaml's resolver, so `9001.0`
//! prints as `9001` and `1e-7` as `1e-07`.
//!
//! Where Go's behaviour changed between releases (timestamp parsing, which
//! decides whether a string like `2024-01-01T00:00:00Z` is quoted), this
//! follows current Go (1.20 and later). Two known gaps: go-yaml's key order is
//! not transitive for some key sets (`v1alpha1 < v2 < v10 < v1alpha1`), where
//! Go's own output depends on its random map order; and outside ASCII,
//! "letter" is approximated with Rust's alphabetic property.

#![forbid(unsafe_code)]

mod chars;
pub mod duplicates;
mod emitter;
pub mod guard;
mod keys;
mod number;
mod resolve;
mod scalar;
mod strconv;
mod style;
mod timestamp;
mod walk;

use serde_json::Value;

pub use duplicates::{DuplicateKey, Duplicates, duplicate_keys};
pub use guard::{Refusal, check};
pub use number::format_go_float;

/// Appends `value` to `out` as one YAML document, without a leading `---`,
/// ending with a newline.
pub fn write_document(out: &mut String, value: &Value) {
    walk::write_document(out, value);
}

/// Prints `value` as `JSONToYAML` does: one document, no leading `---`,
/// ending with a newline (`{}` prints `{}\n`).
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    write_document(&mut out, value);
    out
}

/// Prints documents as `crossplane render` frames them: each one preceded by
/// a `---` line.
pub fn to_yaml_stream<'a>(docs: impl IntoIterator<Item = &'a Value>) -> String {
    let mut out = String::new();
    for doc in docs {
        out.push_str("---\n");
        write_document(&mut out, doc);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_collections() {
        assert_eq!(to_yaml(&json!({})), "{}\n");
        assert_eq!(to_yaml(&json!([])), "[]\n");
        assert_eq!(to_yaml(&json!({"a": {}, "b": []})), "a: {}\nb: []\n");
    }

    #[test]
    fn block_layout() {
        let value = json!({"spec": {"items": ["a", {"b": 1, "a": [true, null]}]}, "kind": "X"});
        let want = "kind: X\nspec:\n  items:\n  - a\n  - a:\n    - true\n    - null\n    b: 1\n";
        assert_eq!(to_yaml(&value), want);
    }

    #[test]
    fn nested_sequences() {
        assert_eq!(to_yaml(&json!([[1, 2], [[]]])), "- - 1\n  - 2\n- - []\n");
    }

    #[test]
    fn scalars_at_root() {
        assert_eq!(to_yaml(&json!("true")), "\"true\"\n");
        assert_eq!(to_yaml(&json!("a\nb")), "|-\n  a\n  b\n");
        assert_eq!(to_yaml(&json!(9001.0)), "9001\n");
        assert_eq!(to_yaml(&json!(null)), "null\n");
    }

    #[test]
    fn stream_framing() {
        let docs = [json!({"a": 1}), json!("x")];
        assert_eq!(to_yaml_stream(&docs), "---\na: 1\n---\nx\n");
    }
}
