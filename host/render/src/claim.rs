//! A claim given in place of the XR, with an `--xrd` that offers it:
//! converted to the XR Crossplane's claim controller would create for it,
//! which render then renders like any other XR.
//!
//! What is copied follows the server-side claim syncer, Crossplane's
//! default (`internal/controller/apiextensions/claim/syncer_ssa.go`, core
//! at 2d040d2, and the field lists of crossplane-runtime's `pkg/xcrd`):
//!
//! * the XR is of the XRD's group, referenceable version and kind, and
//!   cluster-scoped (only a v1 XRD of scope `LegacyCluster` offers claims);
//! * its name is the claim's `spec.resourceRef.name` if the claim is bound;
//!   otherwise `metadata.generateName` is `<claim name>-` and the name that
//!   plus five characters (see [`generated_name`]);
//! * labels and annotations are the claim's, less the reserved
//!   `*kubernetes.io` and `*k8s.io` ones, and the labels
//!   `crossplane.io/claim-name` and `crossplane.io/claim-namespace`;
//! * `spec` is the claim's less the fields only a claim has
//!   (`compositeDeletePolicy`, `resourceRef`, `writeConnectionSecretToRef`)
//!   and those only the XR controller sets (`resourceRefs`, `claimRef`,
//!   `compositionRevisionRef`; also `compositionRef` when the XRD has an
//!   `enforcedCompositionRef`); then `spec.claimRef` names the claim.
//!
//! The XR is a new one, as render always simulates the first reconcile, so
//! `compositionRevisionRef` (copied only while the existing XR's update
//! policy is `Manual`) is never copied.

use serde_json::{Map, Value, json};

use super::object::{name, str_at, value_at};

/// The label naming a claim's XR's claim.
pub const CLAIM_NAME_LABEL: &str = "crossplane.io/claim-name";
/// The label naming the namespace of a claim's XR's claim.
pub const CLAIM_NAMESPACE_LABEL: &str = "crossplane.io/claim-namespace";

/// Spec fields of a claim that its XR never gets: the union of a claim's
/// and a `LegacyCluster` XR's Crossplane fields, less the four the claim
/// syncer propagates (`xcrd.PropagateSpecProps`).
const NOT_PROPAGATED: [&str; 6] = [
    "compositeDeletePolicy",
    "resourceRef",
    "writeConnectionSecretToRef",
    "resourceRefs",
    "claimRef",
    "compositionRevisionRef",
];

/// The characters and length of the API server's `generateName` suffix
/// (`k8s.io/apiserver/pkg/storage/names`), and how long the prefix may be.
const SUFFIX_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
const SUFFIX_LENGTH: usize = 5;
const MAX_PREFIX_LENGTH: usize = 63 - SUFFIX_LENGTH;

/// Why a claim could not be converted.
#[derive(Debug, thiserror::Error)]
pub enum ClaimError {
    /// The XRD can't offer claims in Crossplane.
    #[error(
        "XRD {xrd:?} names {kind} as its claim, but Crossplane offers claims only from an \
         apiextensions.crossplane.io/v1 XRD of scope LegacyCluster (this one is {api_version}, scope {scope})"
    )]
    NotOffered {
        /// The XRD's name.
        xrd: String,
        /// The claim's kind.
        kind: String,
        /// The XRD's apiVersion.
        api_version: String,
        /// The XRD's scope, as defaulted.
        scope: String,
    },
    /// The claim's version isn't one of the XRD's.
    #[error("XRD {xrd:?} has no version {api_version:?} (want one of: {versions})")]
    NoSuchVersion {
        /// The XRD's name.
        xrd: String,
        /// The claim's apiVersion.
        api_version: String,
        /// The versions the XRD defines.
        versions: String,
    },
    /// No version of the XRD is referenceable, so it has no XR version.
    #[error(
        "XRD {0:?} has no referenceable version, so Crossplane would create no XR for its claims"
    )]
    NoReferenceableVersion(String),
    /// A claim lives in a namespace, and the XR's labels name it.
    #[error(
        "claim {kind} {name:?} has no metadata.namespace: set the namespace the claim would be created in"
    )]
    NoNamespace {
        /// The claim's kind.
        kind: String,
        /// The claim's name.
        name: String,
    },
    /// The claim has no name to derive the XR's from.
    #[error("claim {0} has no metadata.name")]
    NoName(String),
    /// The claim's spec is missing or not an object (core's
    /// `errUnsupportedClaimSpec`, wrapped as its reconciler wraps it).
    #[error("cannot bind and sync claim with composite resource: claim spec was not an object")]
    Spec,
}

/// Whether `xrd` names `input` as its claim: `spec.claimNames.kind` is the
/// input's kind and `spec.group` its group.
pub fn offered_by(input: &Value, xrd: &Value) -> bool {
    let kind = str_at(input, &["kind"]);
    !kind.is_empty()
        && str_at(xrd, &["spec", "claimNames", "kind"]) == kind
        && str_at(xrd, &["spec", "group"]) == group(str_at(input, &["apiVersion"]))
}

/// The XR Crossplane's claim controller would create for `claim`, which
/// `xrd` offers ([`offered_by`]).
pub fn to_xr(claim: &Value, xrd: &Value) -> Result<Value, ClaimError> {
    let kind = str_at(claim, &["kind"]);
    let xrd_name = name(xrd).to_owned();
    check_offers_claims(xrd, kind)?;
    let xrd_group = str_at(xrd, &["spec", "group"]);
    let versions: Vec<&Value> = value_at(xrd, &["spec", "versions"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    let claim_api = str_at(claim, &["apiVersion"]);
    if !versions
        .iter()
        .any(|v| format!("{xrd_group}/{}", str_at(v, &["name"])) == claim_api)
    {
        return Err(ClaimError::NoSuchVersion {
            xrd: xrd_name,
            api_version: claim_api.to_owned(),
            versions: versions
                .iter()
                .map(|v| format!("{xrd_group}/{}", str_at(v, &["name"])))
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    // Both controllers read and write at the last referenceable version
    // (`GetCompositeGroupVersionKind`, `GetClaimGroupVersionKind`).
    let version = versions
        .iter()
        .rev()
        .find(|v| v.get("referenceable") == Some(&Value::Bool(true)))
        .map(|v| str_at(v, &["name"]))
        .ok_or_else(|| ClaimError::NoReferenceableVersion(xrd_name.clone()))?;
    let api_version = format!("{xrd_group}/{version}");

    let claim_name = name(claim);
    if claim_name.is_empty() {
        return Err(ClaimError::NoName(kind.to_owned()));
    }
    let namespace = str_at(claim, &["metadata", "namespace"]);
    if namespace.is_empty() {
        return Err(ClaimError::NoNamespace {
            kind: kind.to_owned(),
            name: claim_name.to_owned(),
        });
    }
    let Some(Value::Object(claim_spec)) = claim.get("spec") else {
        return Err(ClaimError::Spec);
    };

    let mut metadata = Map::new();
    match str_at(claim, &["spec", "resourceRef", "name"]) {
        "" => {
            let prefix = format!("{claim_name}-");
            metadata.insert("name".into(), json!(generated_name(&prefix, namespace)));
            metadata.insert("generateName".into(), json!(prefix));
        }
        bound => {
            metadata.insert("name".into(), json!(bound));
        }
    }
    let mut labels = without_reserved(value_at(claim, &["metadata", "labels"]));
    labels.insert(CLAIM_NAME_LABEL.into(), json!(claim_name));
    labels.insert(CLAIM_NAMESPACE_LABEL.into(), json!(namespace));
    metadata.insert("labels".into(), Value::Object(labels));
    let annotations = without_reserved(value_at(claim, &["metadata", "annotations"]));
    if !annotations.is_empty() {
        metadata.insert("annotations".into(), Value::Object(annotations));
    }

    let enforced = value_at(xrd, &["spec", "enforcedCompositionRef"]).is_some_and(|r| !r.is_null());
    let mut spec: Map<String, Value> = claim_spec
        .iter()
        .filter(|(key, _)| {
            !NOT_PROPAGATED.contains(&key.as_str())
                && !(enforced && key.as_str() == "compositionRef")
        })
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    spec.insert(
        "claimRef".into(),
        json!({"apiVersion": api_version, "kind": kind, "name": claim_name, "namespace": namespace}),
    );

    Ok(json!({
        "apiVersion": api_version,
        "kind": str_at(xrd, &["spec", "names", "kind"]),
        "metadata": metadata,
        "spec": spec,
    }))
}

/// Checks that Crossplane would offer claims from `xrd`: a v1 XRD whose
/// scope (default `LegacyCluster`) is `LegacyCluster`; v2 XRDs have none.
fn check_offers_claims(xrd: &Value, kind: &str) -> Result<(), ClaimError> {
    let api_version = str_at(xrd, &["apiVersion"]);
    let scope = match str_at(xrd, &["spec", "scope"]) {
        "" if api_version == "apiextensions.crossplane.io/v1" => "LegacyCluster",
        "" => "Namespaced",
        scope => scope,
    };
    if api_version == "apiextensions.crossplane.io/v1" && scope == "LegacyCluster" {
        return Ok(());
    }
    Err(ClaimError::NotOffered {
        xrd: name(xrd).to_owned(),
        kind: kind.to_owned(),
        api_version: api_version.to_owned(),
        scope: scope.to_owned(),
    })
}

/// The name of a new XR with `generateName` `prefix`. Crossplane appends
/// five random characters of the API server's alphabet to the prefix (cut
/// to 58 characters); xfn takes them from a SHA-256 of the claim's
/// namespace and prefix instead, so that a render can be repeated.
pub fn generated_name(prefix: &str, namespace: &str) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(format!("{namespace}/{prefix}").as_bytes());
    let suffix: String = digest
        .iter()
        .take(SUFFIX_LENGTH)
        .map(|b| char::from(SUFFIX_ALPHABET[usize::from(*b) % SUFFIX_ALPHABET.len()]))
        .collect();
    let mut cut = prefix.len().min(MAX_PREFIX_LENGTH);
    while !prefix.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}{suffix}", &prefix[..cut])
}

/// A label or annotation map less the keys Crossplane doesn't propagate:
/// those whose part before the first `/` ends with `kubernetes.io` or
/// `k8s.io` (`withoutReservedK8sEntries`). Values that aren't strings are
/// dropped, as a Kubernetes object can't have them.
fn without_reserved(entries: Option<&Value>) -> Map<String, Value> {
    entries
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(key, value)| {
            let prefix = key.split('/').next().unwrap_or_default();
            value.is_string() && !prefix.ends_with("kubernetes.io") && !prefix.ends_with("k8s.io")
        })
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
}

/// The group of an apiVersion (`""` for the core group).
fn group(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xrd() -> Value {
        json!({"apiVersion": "apiextensions.crossplane.io/v1", "kind": "CompositeResourceDefinition",
               "metadata": {"name": "xbuckets.example.org"},
               "spec": {"group": "example.org", "names": {"kind": "XBucket", "plural": "xbuckets"},
                        "claimNames": {"kind": "Bucket", "plural": "buckets"},
                        "versions": [{"name": "v1alpha1", "served": true, "referenceable": false},
                                     {"name": "v1", "served": true, "referenceable": true}]}})
    }

    fn claim() -> Value {
        json!({"apiVersion": "example.org/v1alpha1", "kind": "Bucket",
               "metadata": {"name": "my-bucket", "namespace": "team-a", "uid": "claim-uid",
                            "labels": {"team": "a", "app.kubernetes.io/name": "x", "k8s.io/y": "z"},
                            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}", "note": "kept"}},
               "spec": {"region": "eu", "compositionSelector": {"matchLabels": {"tier": "gold"}},
                        "compositionUpdatePolicy": "Manual", "compositionRevisionRef": {"name": "r1"},
                        "compositeDeletePolicy": "Foreground", "writeConnectionSecretToRef": {"name": "s"},
                        "resourceRefs": [{"apiVersion": "v1", "kind": "Secret", "name": "smuggled"}],
                        "claimRef": {"name": "other"}, "compositionRef": {"name": "c"}},
               "status": {"ready": true}})
    }

    #[test]
    fn an_xrd_offers_its_claim_kind_in_its_group() {
        assert!(offered_by(&claim(), &xrd()));
        assert!(!offered_by(
            &json!({"apiVersion": "other.org/v1", "kind": "Bucket"}),
            &xrd()
        ));
        assert!(!offered_by(
            &json!({"apiVersion": "example.org/v1", "kind": "XBucket"}),
            &xrd()
        ));
        assert!(!offered_by(&json!({}), &json!({})));
    }

    #[test]
    fn a_claim_becomes_the_xr_the_claim_controller_creates() {
        let xr = to_xr(&claim(), &xrd()).expect("converted");
        let name = generated_name("my-bucket-", "team-a");
        assert_eq!(
            xr,
            json!({"apiVersion": "example.org/v1", "kind": "XBucket",
                   "metadata": {"name": name, "generateName": "my-bucket-",
                                "labels": {"team": "a", "crossplane.io/claim-name": "my-bucket",
                                           "crossplane.io/claim-namespace": "team-a"},
                                "annotations": {"note": "kept"}},
                   "spec": {"region": "eu", "compositionSelector": {"matchLabels": {"tier": "gold"}},
                            "compositionUpdatePolicy": "Manual", "compositionRef": {"name": "c"},
                            "claimRef": {"apiVersion": "example.org/v1", "kind": "Bucket",
                                         "name": "my-bucket", "namespace": "team-a"}}})
        );
    }

    #[test]
    fn a_bound_claim_names_its_xr() {
        let mut bound = claim();
        bound["spec"]["resourceRef"] =
            json!({"apiVersion": "example.org/v1", "kind": "XBucket", "name": "my-bucket-x7k2p"});
        let xr = to_xr(&bound, &xrd()).expect("converted");
        assert_eq!(xr["metadata"]["name"], json!("my-bucket-x7k2p"));
        assert!(xr["metadata"].get("generateName").is_none());
        assert!(xr["spec"].get("resourceRef").is_none());
    }

    #[test]
    fn an_enforced_composition_is_not_taken_from_the_claim() {
        let mut enforced = xrd();
        enforced["spec"]["enforcedCompositionRef"] = json!({"name": "only"});
        let xr = to_xr(&claim(), &enforced).expect("converted");
        assert!(xr["spec"].get("compositionRef").is_none());
    }

    #[test]
    fn generated_names_look_like_the_api_servers() {
        let name = generated_name("my-bucket-", "team-a");
        assert_eq!(name.len(), "my-bucket-".len() + 5);
        assert!(
            name[10..].bytes().all(|b| SUFFIX_ALPHABET.contains(&b)),
            "{name}"
        );
        assert_eq!(name, generated_name("my-bucket-", "team-a"));
        assert_ne!(name, generated_name("my-bucket-", "team-b"));
        let long = generated_name(&format!("{}-", "a".repeat(70)), "ns");
        assert_eq!(long.len(), 63);
    }

    #[test]
    fn claims_are_offered_only_by_legacy_v1_xrds() {
        let mut v2 = xrd();
        v2["apiVersion"] = json!("apiextensions.crossplane.io/v2");
        let err = to_xr(&claim(), &v2).expect_err("v2");
        assert_eq!(
            err.to_string(),
            "XRD \"xbuckets.example.org\" names Bucket as its claim, but Crossplane offers claims only from an \
             apiextensions.crossplane.io/v1 XRD of scope LegacyCluster (this one is apiextensions.crossplane.io/v2, scope Namespaced)"
        );
        let mut cluster = xrd();
        cluster["spec"]["scope"] = json!("Cluster");
        assert!(matches!(
            to_xr(&claim(), &cluster),
            Err(ClaimError::NotOffered { .. })
        ));
    }

    #[test]
    fn claims_the_controller_could_not_sync_are_errors() {
        let mut no_ns = claim();
        if let Some(metadata) = no_ns["metadata"].as_object_mut() {
            metadata.remove("namespace");
        }
        assert!(matches!(
            to_xr(&no_ns, &xrd()),
            Err(ClaimError::NoNamespace { .. })
        ));
        let mut no_spec = claim();
        no_spec["spec"] = json!("text");
        assert_eq!(
            to_xr(&no_spec, &xrd()).expect_err("spec").to_string(),
            "cannot bind and sync claim with composite resource: claim spec was not an object"
        );
        let mut other_version = claim();
        other_version["apiVersion"] = json!("example.org/v9");
        assert_eq!(
            to_xr(&other_version, &xrd())
                .expect_err("version")
                .to_string(),
            "XRD \"xbuckets.example.org\" has no version \"example.org/v9\" (want one of: example.org/v1alpha1, example.org/v1)"
        );
        let mut none_referenceable = xrd();
        none_referenceable["spec"]["versions"][1]["referenceable"] = json!(false);
        assert!(matches!(
            to_xr(&claim(), &none_referenceable),
            Err(ClaimError::NoReferenceableVersion(_))
        ));
    }
}
