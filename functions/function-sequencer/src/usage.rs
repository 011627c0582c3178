//! The Usages that keep a sequence's deletion order (Go's
//! `GenerateUsage`, `GenerateName`, `isUsage`).

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

/// The reason every generated Usage gives.
pub const DEPENDENCY_REASON: &str = "dependency";
/// Crossplane v2's Usage group and version.
pub const PROTECTION_GROUP_VERSION: &str = "protection.crossplane.io/v1beta1";
/// Crossplane v1's Usage group and version.
pub const PROTECTION_V1_GROUP_VERSION: &str = "apiextensions.crossplane.io/v1beta1";
/// The suffix of a generated Usage's name.
pub const USAGE_NAME_SUFFIX: &str = "dependency";

const MAX_NAME_LENGTH: usize = 63;
const HASH_LENGTH: usize = 6;

/// A name of at most 63 bytes: `name-<6 hex of sha256(name)>-suffix`, with
/// `name` cut (and ended with `-`) when it is too long.
///
/// ```
/// let name = function_sequencer::usage::generate_name("mr-cool-mr-xr-cool-xr", "dependency");
/// assert_eq!(name, "mr-cool-mr-xr-cool-xr-d9f469-dependency");
/// ```
pub fn generate_name(name: &str, suffix: &str) -> String {
    let hash = Sha256::digest(name.as_bytes());
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    let full_suffix = format!("{}-{suffix}", &hex[..HASH_LENGTH]);
    let full = format!("{name}-{full_suffix}");
    if full.len() <= MAX_NAME_LENGTH {
        return full;
    }
    let keep = MAX_NAME_LENGTH.saturating_sub(full_suffix.len() + 1);
    // Go slices bytes; a cut inside a UTF-8 character keeps its first bytes
    // there, which cannot be a Kubernetes name anyway. Cut at a boundary.
    let mut end = keep.min(name.len());
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    let mut truncated = name[..end].to_owned();
    if !truncated.ends_with('-') {
        truncated.push('-');
    }
    truncated + &full_suffix
}

fn text<'a>(object: &'a Map<String, Value>, path: &[&str]) -> &'a str {
    let mut it: Option<&Value> = object.get(path[0]);
    for p in &path[1..] {
        it = it.and_then(|v| v.get(*p));
    }
    it.and_then(Value::as_str).unwrap_or("")
}

fn reference(object: &Map<String, Value>) -> Value {
    json!({
        "apiVersion": text(object, &["apiVersion"]),
        "kind": text(object, &["kind"]),
        "resourceRef": {"name": text(object, &["metadata", "name"])},
    })
}

/// The Usage that keeps `of` until `by` is gone: an apiextensions `Usage`
/// for `usage_version` `v1`, else a protection `Usage` (namespaced `of`) or
/// `ClusterUsage`.
pub fn generate_usage(
    of: &Map<String, Value>,
    by: &Map<String, Value>,
    replay_deletion: bool,
    usage_version: &str,
) -> Map<String, Value> {
    let name = format!(
        "{}-{}-{}-{}",
        text(by, &["kind"]),
        text(by, &["metadata", "name"]),
        text(of, &["kind"]),
        text(of, &["metadata", "name"])
    )
    .to_lowercase();
    let mut metadata = Map::new();
    metadata.insert(
        "name".into(),
        generate_name(&name, USAGE_NAME_SUFFIX).into(),
    );
    let (api_version, kind) = if usage_version == "v1" {
        (PROTECTION_V1_GROUP_VERSION, "Usage")
    } else {
        let namespace = text(of, &["metadata", "namespace"]);
        if namespace.is_empty() {
            (PROTECTION_GROUP_VERSION, "ClusterUsage")
        } else {
            metadata.insert("namespace".into(), namespace.into());
            (PROTECTION_GROUP_VERSION, "Usage")
        }
    };
    let usage = json!({
        "apiVersion": api_version,
        "kind": kind,
        "metadata": metadata,
        "spec": {
            "by": reference(by),
            "of": reference(of),
            "reason": DEPENDENCY_REASON,
            "replayDeletion": replay_deletion,
        },
    });
    match usage {
        Value::Object(o) => o,
        _ => Map::new(),
    }
}

/// Whether an observed resource is a Usage of the version in use.
pub fn is_usage(object: &Map<String, Value>, usage_version: &str) -> bool {
    let api_version = text(object, &["apiVersion"]);
    let kind = text(object, &["kind"]);
    if usage_version == "v1" {
        api_version == PROTECTION_V1_GROUP_VERSION && kind == "Usage"
    } else {
        api_version == PROTECTION_GROUP_VERSION && (kind == "ClusterUsage" || kind == "Usage")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_cut_to_63_bytes_and_end_in_a_dash_before_the_hash() {
        let name = "a".repeat(80);
        let got = generate_name(&name, "dependency");
        assert_eq!(got.len(), 63);
        assert!(got.starts_with(&"a".repeat(45)));
        assert!(got.ends_with("-dependency"));
        assert_eq!(&got[45..46], "-");
    }

    #[test]
    fn upstream_usage_names() {
        // fn_test.go's u2v1: MR cool-mr used by MR cool-mr.
        assert_eq!(
            generate_name("mr-cool-mr-mr-cool-mr", "dependency"),
            "mr-cool-mr-mr-cool-mr-91201d-dependency"
        );
    }
}
