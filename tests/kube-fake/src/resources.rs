//! The registry of resource kinds the fake serves.

use std::collections::BTreeMap;

/// One kind of resource: where it is served and how it behaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceInfo {
    /// API group; empty for the core group.
    pub group: String,
    /// API version, e.g. `v1`.
    pub version: String,
    /// Plural resource name used in paths, e.g. `services`.
    pub plural: String,
    /// Kind, e.g. `Service`.
    pub kind: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Whether `/status` is a separate subresource.
    pub status_subresource: bool,
}

impl ResourceInfo {
    /// Describes a resource. `group_version` is `v1` for the core group or `group/version`.
    pub fn new(group_version: &str, plural: &str, kind: &str, namespaced: bool) -> Self {
        let (group, version) = split_group_version(group_version);
        Self {
            group: group.to_string(),
            version: version.to_string(),
            plural: plural.to_string(),
            kind: kind.to_string(),
            namespaced,
            status_subresource: false,
        }
    }

    /// Marks the resource as having a status subresource.
    pub fn with_status(mut self) -> Self {
        self.status_subresource = true;
        self
    }

    /// `apiVersion` of objects of this kind (`v1` or `group/version`).
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The key identifying this resource in the registry and the store.
    pub fn key(&self) -> ResourceKey {
        ResourceKey {
            group: self.group.clone(),
            version: self.version.clone(),
            plural: self.plural.clone(),
        }
    }

    /// `plural.group` as used in Kubernetes error messages.
    pub fn qualified_name(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }
}

/// (group, version, plural): identifies a resource.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ResourceKey {
    /// API group; empty for core.
    pub group: String,
    /// API version.
    pub version: String,
    /// Plural name.
    pub plural: String,
}

/// Splits `v1` into `("", "v1")` and `apps/v1` into `("apps", "v1")`.
pub fn split_group_version(gv: &str) -> (&str, &str) {
    match gv.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", gv),
    }
}

/// Known resources, looked up by path or by apiVersion + kind.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    by_key: BTreeMap<ResourceKey, ResourceInfo>,
}

impl Registry {
    /// An empty registry.
    pub fn empty() -> Self {
        Self::default()
    }

    /// The registry with the kinds xfn's controller and its tests use.
    pub fn with_defaults() -> Self {
        let mut r = Self::empty();
        for (gv, plural, kind, namespaced, status) in [
            ("v1", "services", "Service", true, true),
            ("v1", "secrets", "Secret", true, false),
            ("v1", "serviceaccounts", "ServiceAccount", true, false),
            ("v1", "configmaps", "ConfigMap", true, false),
            ("v1", "events", "Event", true, false),
            ("v1", "pods", "Pod", true, true),
            ("v1", "namespaces", "Namespace", false, true),
            ("apps/v1", "deployments", "Deployment", true, true),
            (
                "policy/v1",
                "poddisruptionbudgets",
                "PodDisruptionBudget",
                true,
                true,
            ),
            (
                "discovery.k8s.io/v1",
                "endpointslices",
                "EndpointSlice",
                true,
                false,
            ),
            ("coordination.k8s.io/v1", "leases", "Lease", true, false),
            ("events.k8s.io/v1", "events", "Event", true, false),
            ("pkg.crossplane.io/v1", "functions", "Function", false, true),
            (
                "pkg.crossplane.io/v1",
                "functionrevisions",
                "FunctionRevision",
                false,
                true,
            ),
            (
                "pkg.crossplane.io/v1beta1",
                "deploymentruntimeconfigs",
                "DeploymentRuntimeConfig",
                false,
                false,
            ),
            (
                "pkg.crossplane.io/v1beta1",
                "imageconfigs",
                "ImageConfig",
                false,
                false,
            ),
        ] {
            let mut info = ResourceInfo::new(gv, plural, kind, namespaced);
            info.status_subresource = status;
            r.register(info);
        }
        r
    }

    /// Adds or replaces a resource.
    pub fn register(&mut self, info: ResourceInfo) {
        self.by_key.insert(info.key(), info);
    }

    /// Looks a resource up by group, version and plural.
    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<&ResourceInfo> {
        self.by_key.get(&ResourceKey {
            group: group.to_string(),
            version: version.to_string(),
            plural: plural.to_string(),
        })
    }

    /// Looks a resource up by `apiVersion` and `kind`.
    pub fn by_kind(&self, api_version: &str, kind: &str) -> Option<&ResourceInfo> {
        let (group, version) = split_group_version(api_version);
        self.by_key
            .values()
            .find(|i| i.group == group && i.version == version && i.kind == kind)
    }

    /// All resources of one group/version.
    pub fn in_group_version(&self, group: &str, version: &str) -> Vec<&ResourceInfo> {
        self.by_key
            .values()
            .filter(|i| i.group == group && i.version == version)
            .collect()
    }

    /// All registered resources.
    pub fn all(&self) -> impl Iterator<Item = &ResourceInfo> {
        self.by_key.values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_cover_core_and_crossplane() {
        let r = Registry::with_defaults();
        let svc = r.get("", "v1", "services").expect("services");
        assert!(svc.namespaced);
        assert_eq!(svc.api_version(), "v1");
        let ns = r.get("", "v1", "namespaces").expect("namespaces");
        assert!(!ns.namespaced);
        let fr = r
            .by_kind("pkg.crossplane.io/v1", "FunctionRevision")
            .expect("fr");
        assert!(!fr.namespaced && fr.status_subresource);
        assert!(
            r.get("apps", "v1", "deployments")
                .expect("d")
                .status_subresource
        );
        assert!(r.get("nope", "v1", "things").is_none());
    }
}
