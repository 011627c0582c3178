//! What a replica should serve, decided from what it sees: pure functions
//! of the cluster's objects and of what the replica serves now, with no
//! API server and no async runtime, so each rule is tested on its own.
//! [`serving`](crate::serving) watches the cluster and acts on the plans.
//!
//! * [`wanted`]: the functions to serve, one per Service of xfn's that an
//!   Active revision owns;
//! * [`function_changes`]: which of those to load (and whether a moved tag
//!   must be pulled again) and which loaded ones to drop;
//! * [`cert_changes`]: the client CA and the certificates to set or remove.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Secret, Service};
use kube::ResourceExt;

use crate::crd::{FunctionRevision, LABEL_PACKAGE};
use xfn_catalog::annotations::TLS_NAMES;

/// The objects a replica reads.
#[derive(Debug, Clone, Copy)]
pub struct Cluster<'a> {
    /// Every FunctionRevision.
    pub revisions: &'a [Arc<FunctionRevision>],
    /// The Services xfn made.
    pub services: &'a [Arc<Service>],
    /// The TLS Secrets xfn made.
    pub secrets: &'a [Arc<Secret>],
    /// `crossplane-root-ca`'s `tls.crt`, if there is one.
    pub root_ca: Option<&'a [u8]>,
}

/// What to serve under one name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    /// The package's image (the revision's resolved image).
    pub image: String,
    /// The revision.
    pub revision: String,
    /// The revision's package pull secrets.
    pub pull_secrets: Vec<String>,
}

/// The functions to serve: each Service that selects exactly xfn's pods
/// (`pod_labels`), owned by an Active revision with an image.
pub fn wanted(
    cluster: Cluster<'_>,
    pod_labels: &BTreeMap<String, String>,
) -> BTreeMap<String, Wanted> {
    let mut wanted = BTreeMap::new();
    for service in cluster.services {
        let selects_us = service
            .spec
            .as_ref()
            .and_then(|s| s.selector.as_ref())
            .is_some_and(|s| s == pod_labels);
        if !selects_us {
            continue;
        }
        let Some(revision) = active_revision(cluster, service) else {
            continue;
        };
        let Some(image) = revision.image() else {
            continue;
        };
        let pull_secrets = revision
            .spec
            .package_pull_secrets
            .iter()
            .flatten()
            .map(|s| s.name.clone())
            .collect();
        wanted.insert(
            service.name_any(),
            Wanted {
                image: image.to_owned(),
                revision: revision.name_any(),
                pull_secrets,
            },
        );
    }
    wanted
}

/// The Active revision a Service of xfn's is for: the Active one among its
/// owners (during an upgrade the old and the new one may both own it), else
/// the Active revision of the same package. The latter covers the moment
/// in an upgrade when Crossplane has made the old revision Inactive and
/// the leader hasn't yet added the new one as an owner: the function stays
/// routed, to the new revision.
fn active_revision(cluster: Cluster<'_>, service: &Service) -> Option<Arc<FunctionRevision>> {
    let named = |name: &str| cluster.revisions.iter().find(|r| r.name_any() == name);
    let owners: Vec<&Arc<FunctionRevision>> = service
        .owner_references()
        .iter()
        .filter(|o| o.kind == "FunctionRevision")
        .filter_map(|o| {
            let revision = named(&o.name)?;
            (revision.uid().as_deref() == Some(o.uid.as_str())).then_some(revision)
        })
        .collect();
    if let Some(active) = owners.iter().find(|r| r.is_active()) {
        return Some(Arc::clone(active));
    }
    let packages: BTreeSet<&String> = owners
        .iter()
        .filter_map(|r| r.labels().get(LABEL_PACKAGE))
        .collect();
    cluster
        .revisions
        .iter()
        .find(|r| {
            r.is_active()
                && r.labels()
                    .get(LABEL_PACKAGE)
                    .is_some_and(|p| packages.contains(p))
        })
        .cloned()
}

/// What a replica serves under a name now: the image and revision it
/// loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    /// The image it was loaded from.
    pub image: String,
    /// The revision it was loaded for.
    pub revision: String,
}

/// A function to load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Load {
    /// The name it is served under.
    pub name: String,
    /// What to load.
    pub wanted: Wanted,
    /// The same tag for a new revision: the tag has moved, so the image is
    /// pulled again even if the cache has it.
    pub moved: bool,
}

/// What to change in the functions a replica serves.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FunctionChanges {
    /// Functions to load (new, or for another revision or image).
    pub load: Vec<Load>,
    /// Functions served now that no longer are wanted.
    pub drop: Vec<String>,
}

/// The changes that take what is `served` to what is `wanted`. A function
/// served for the same image and revision is kept as it is.
pub fn function_changes(
    wanted: &BTreeMap<String, Wanted>,
    served: &BTreeMap<String, Served>,
) -> FunctionChanges {
    let load = wanted
        .iter()
        .filter_map(|(name, want)| {
            let now = served.get(name);
            if now.is_some_and(|s| s.revision == want.revision && s.image == want.image) {
                return None;
            }
            let moved = now.is_some_and(|s| s.image == want.image) && !want.image.contains('@');
            Some(Load {
                name: name.clone(),
                wanted: want.clone(),
                moved,
            })
        })
        .collect();
    let drop = served
        .keys()
        .filter(|name| !wanted.contains_key(*name))
        .cloned()
        .collect();
    FunctionChanges { load, drop }
}

/// A certificate and key, for the server names it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Certificate {
    /// The names, as the Secret's annotation lists them (comma-separated).
    pub listed: String,
    /// The PEM certificate chain.
    pub cert: Vec<u8>,
    /// The PEM key.
    pub key: Vec<u8>,
}

impl Certificate {
    /// The server names it covers.
    pub fn names(&self) -> Vec<String> {
        self.listed.split(',').map(str::to_owned).collect()
    }
}

/// What a replica's TLS serves now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsServed {
    /// The client CA, as set.
    pub client_ca: Option<Vec<u8>>,
    /// The certificates, by the names they list.
    pub certs: BTreeMap<String, Certificate>,
}

/// What to change in a replica's TLS.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CertChanges {
    /// The client CA changed to this (`None`: there is none now).
    pub client_ca: Option<Option<Vec<u8>>>,
    /// Certificates to set (new, or changed).
    pub set: Vec<Certificate>,
    /// Server names no Secret lists any more.
    pub remove: Vec<String>,
}

/// The changes that take a replica's TLS from `served` to what the
/// cluster's Secrets hold. `serving_names` are the names the TLS serves
/// certificates for now.
pub fn cert_changes(
    cluster: Cluster<'_>,
    served: &TlsServed,
    serving_names: &[String],
) -> CertChanges {
    let ca = cluster.root_ca.map(<[u8]>::to_vec);
    let client_ca = (ca != served.client_ca).then_some(ca);
    let mut names = BTreeSet::new();
    let mut set = Vec::new();
    for secret in cluster.secrets {
        let Some(listed) = secret.annotations().get(TLS_NAMES) else {
            continue;
        };
        let (Some(cert), Some(key)) = (
            secret_data(secret, "tls.crt"),
            secret_data(secret, "tls.key"),
        ) else {
            continue;
        };
        let certificate = Certificate {
            listed: listed.clone(),
            cert,
            key,
        };
        names.extend(certificate.names());
        if served.certs.get(listed) != Some(&certificate) {
            set.push(certificate);
        }
    }
    let remove = serving_names
        .iter()
        .filter(|n| !names.contains(*n))
        .cloned()
        .collect();
    CertChanges {
        client_ca,
        set,
        remove,
    }
}

/// The non-empty value of `key` in a Secret's data.
pub fn secret_data(secret: &Secret, key: &str) -> Option<Vec<u8>> {
    secret
        .data
        .as_ref()?
        .get(key)
        .map(|v| v.0.clone())
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const POD_LABELS: [(&str, &str); 1] = [("app.kubernetes.io/name", "xfn")];

    fn pod_labels() -> BTreeMap<String, String> {
        POD_LABELS
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn revision(name: &str, package: &str, image: &str, state: &str) -> Arc<FunctionRevision> {
        Arc::new(
            serde_json::from_value(json!({
                "apiVersion": "pkg.crossplane.io/v1", "kind": "FunctionRevision",
                "metadata": {"name": name, "uid": format!("{name}-uid"),
                             "labels": {"pkg.crossplane.io/package": package}},
                "spec": {"desiredState": state, "image": image, "revision": 1,
                         "packagePullSecrets": [{"name": "regcred"}]},
                "status": {"resolvedImage": image},
            }))
            .expect("a FunctionRevision"),
        )
    }

    fn service(name: &str, owners: &[&str], selector: serde_json::Value) -> Arc<Service> {
        let owners: Vec<_> = owners
            .iter()
            .map(|o| {
                json!({"apiVersion": "pkg.crossplane.io/v1", "kind": "FunctionRevision",
                            "name": o, "uid": format!("{o}-uid")})
            })
            .collect();
        Arc::new(
            serde_json::from_value(json!({
                "apiVersion": "v1", "kind": "Service",
                "metadata": {"name": name, "ownerReferences": owners},
                "spec": {"selector": selector},
            }))
            .expect("a Service"),
        )
    }

    fn ours() -> serde_json::Value {
        json!({"app.kubernetes.io/name": "xfn"})
    }

    fn tls_secret(listed: &str, cert: &str) -> Arc<Secret> {
        use base64::Engine as _;
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        Arc::new(
            serde_json::from_value(json!({
                "apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": format!("{listed}-tls"),
                             "annotations": {TLS_NAMES: listed}},
                "data": {"tls.crt": b64(cert), "tls.key": b64("key")},
            }))
            .expect("a Secret"),
        )
    }

    fn cluster<'a>(
        revisions: &'a [Arc<FunctionRevision>],
        services: &'a [Arc<Service>],
    ) -> Cluster<'a> {
        Cluster {
            revisions,
            services,
            secrets: &[],
            root_ca: None,
        }
    }

    #[test]
    fn a_service_selecting_xfns_pods_and_owned_by_an_active_revision_is_wanted() {
        let revisions = [
            revision("fn-a-1", "fn-a", "reg.example/fn-a:v1", "Active"),
            revision("fn-b-1", "fn-b", "reg.example/fn-b:v1", "Inactive"),
        ];
        let services = [
            service("fn-a", &["fn-a-1"], ours()),
            service("fn-b", &["fn-b-1"], ours()),
            service("other", &["fn-a-1"], json!({"app": "someone-else"})),
        ];
        let wanted = wanted(cluster(&revisions, &services), &pod_labels());
        assert_eq!(
            wanted,
            BTreeMap::from([(
                "fn-a".to_owned(),
                Wanted {
                    image: "reg.example/fn-a:v1".into(),
                    revision: "fn-a-1".into(),
                    pull_secrets: vec!["regcred".into()],
                }
            )])
        );
    }

    #[test]
    fn an_owner_with_another_uid_is_not_the_owner() {
        let revisions = [revision("fn-a-1", "fn-a", "reg.example/fn-a:v1", "Active")];
        let mut stale = (*service("fn-a", &["fn-a-1"], ours())).clone();
        stale.metadata.owner_references.as_mut().expect("owners")[0].uid = "old".into();
        let services = [Arc::new(stale)];
        assert!(wanted(cluster(&revisions, &services), &pod_labels()).is_empty());
    }

    /// During an upgrade Crossplane makes the old revision Inactive before
    /// the leader adds the new one as an owner: the function stays routed,
    /// to the new revision of the same package.
    #[test]
    fn mid_upgrade_the_active_revision_of_the_same_package_is_served() {
        let revisions = [
            revision("fn-a-1", "fn-a", "reg.example/fn-a:v1", "Inactive"),
            revision("fn-a-2", "fn-a", "reg.example/fn-a:v2", "Active"),
        ];
        let services = [service("fn-a", &["fn-a-1"], ours())];
        let wanted = wanted(cluster(&revisions, &services), &pod_labels());
        assert_eq!(wanted["fn-a"].revision, "fn-a-2");
        assert_eq!(wanted["fn-a"].image, "reg.example/fn-a:v2");
    }

    fn want(image: &str, revision: &str) -> Wanted {
        Wanted {
            image: image.into(),
            revision: revision.into(),
            pull_secrets: Vec::new(),
        }
    }

    fn served(image: &str, revision: &str) -> Served {
        Served {
            image: image.into(),
            revision: revision.into(),
        }
    }

    #[test]
    fn loads_what_is_new_or_changed_and_drops_what_is_gone() {
        let wanted = BTreeMap::from([
            ("same".to_owned(), want("reg/a:v1", "a-1")),
            ("new".to_owned(), want("reg/b:v1", "b-1")),
            ("moved-tag".to_owned(), want("reg/c:v1", "c-2")),
            ("new-image".to_owned(), want("reg/d:v2", "d-2")),
            ("digest".to_owned(), want("reg/e@sha256:1", "e-2")),
        ]);
        let now = BTreeMap::from([
            ("same".to_owned(), served("reg/a:v1", "a-1")),
            ("moved-tag".to_owned(), served("reg/c:v1", "c-1")),
            ("new-image".to_owned(), served("reg/d:v1", "d-1")),
            ("digest".to_owned(), served("reg/e@sha256:1", "e-1")),
            ("gone".to_owned(), served("reg/f:v1", "f-1")),
        ]);
        let changes = function_changes(&wanted, &now);
        let loads: Vec<(&str, bool)> = changes
            .load
            .iter()
            .map(|l| (l.name.as_str(), l.moved))
            .collect();
        assert_eq!(
            loads,
            [
                ("digest", false),
                ("moved-tag", true),
                ("new", false),
                ("new-image", false)
            ]
        );
        assert_eq!(changes.drop, ["gone"]);
        assert_eq!(
            function_changes(&wanted, &BTreeMap::new()).load.len(),
            wanted.len()
        );
    }

    #[test]
    fn certificates_follow_their_secrets() {
        let secrets = [tls_secret("fn-a,fn-a.ns", "A2"), tls_secret("fn-b", "B1")];
        let mut served = TlsServed::default();
        served.certs.insert(
            "fn-b".into(),
            Certificate {
                listed: "fn-b".into(),
                cert: b"B1".to_vec(),
                key: b"key".to_vec(),
            },
        );
        let cluster = Cluster {
            revisions: &[],
            services: &[],
            secrets: &secrets,
            root_ca: Some(b"CA"),
        };
        let serving = ["fn-b".to_owned(), "fn-gone".to_owned()];
        let changes = cert_changes(cluster, &served, &serving);
        assert_eq!(changes.client_ca, Some(Some(b"CA".to_vec())));
        assert_eq!(changes.set.len(), 1, "{changes:?}");
        assert_eq!(changes.set[0].names(), ["fn-a", "fn-a.ns"]);
        assert_eq!(changes.remove, ["fn-gone"]);

        served.client_ca = Some(b"CA".to_vec());
        let changes = cert_changes(cluster, &served, &serving);
        assert_eq!(changes.client_ca, None, "the same CA is not set again");
        let gone = Cluster {
            root_ca: None,
            ..cluster
        };
        assert_eq!(cert_changes(gone, &served, &[]).client_ca, Some(None));
    }

    #[test]
    fn a_secret_without_both_keys_or_names_is_skipped() {
        let mut no_key = (*tls_secret("fn-a", "A1")).clone();
        no_key.data.as_mut().expect("data").remove("tls.key");
        let mut unnamed = (*tls_secret("fn-b", "B1")).clone();
        unnamed.metadata.annotations = None;
        let secrets = [Arc::new(no_key), Arc::new(unnamed)];
        let cluster = Cluster {
            revisions: &[],
            services: &[],
            secrets: &secrets,
            root_ca: None,
        };
        let changes = cert_changes(cluster, &TlsServed::default(), &["fn-a".to_owned()]);
        assert!(changes.set.is_empty());
        assert_eq!(changes.remove, ["fn-a"]);
    }
}
