//! Checking the controller's API requests against the RBAC rules it is
//! installed with (`deploy/rbac.yaml`), as the API server would.

use std::path::Path;

use serde_json::Value;

/// One RBAC rule: groups, resources (`res` or `res/sub`), verbs.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The namespace of its Role, or `None` for a ClusterRole.
    pub namespace: Option<String>,
    groups: Vec<String>,
    resources: Vec<String>,
    verbs: Vec<String>,
}

/// What a request asks the API server to allow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// The API group (`""` for core).
    pub group: String,
    /// `resource` or `resource/subresource`.
    pub resource: String,
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`.
    pub verb: String,
    /// The namespace, for namespaced requests.
    pub namespace: Option<String>,
}

/// The rules of every Role and ClusterRole in a YAML file.
pub fn rules(file: &Path) -> Vec<Rule> {
    let text = std::fs::read_to_string(file).expect("read the RBAC file");
    let mut rules = Vec::new();
    for document in text.split("\n---\n") {
        let object: Value = serde_yaml_ng::from_str(document).expect("YAML");
        let namespace = match object["kind"].as_str() {
            Some("ClusterRole") => None,
            Some("Role") => Some(
                object["metadata"]["namespace"]
                    .as_str()
                    .expect("a Role's namespace")
                    .to_owned(),
            ),
            _ => continue,
        };
        let strings = |v: &Value| -> Vec<String> {
            v.as_array()
                .into_iter()
                .flatten()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        };
        for rule in object["rules"].as_array().into_iter().flatten() {
            rules.push(Rule {
                namespace: namespace.clone(),
                groups: strings(&rule["apiGroups"]),
                resources: strings(&rule["resources"]),
                verbs: strings(&rule["verbs"]),
            });
        }
    }
    rules
}

/// What a request (method, path, query) needs, or `None` for a path that
/// isn't a resource request.
pub fn access(method: &str, path: &str, query: &str) -> Option<Access> {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let rest = match parts.as_slice() {
        ["api", "v1", rest @ ..] => ("", rest),
        ["apis", group, _version, rest @ ..] => (*group, rest),
        _ => return None,
    };
    let (group, rest) = rest;
    let (namespace, rest) = match rest {
        ["namespaces", ns, rest @ ..] if !rest.is_empty() => (Some((*ns).to_owned()), rest),
        rest => (None, rest),
    };
    let (resource, named) = match rest {
        [resource] => ((*resource).to_owned(), false),
        [resource, _name] => ((*resource).to_owned(), true),
        [resource, _name, sub] => (format!("{resource}/{sub}"), true),
        _ => return None,
    };
    let watching = query
        .split('&')
        .any(|kv| kv == "watch=true" || kv == "watch=1");
    let verb = match (method, named) {
        ("GET", true) => "get",
        ("GET", false) if watching => "watch",
        ("GET", false) => "list",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", true) => "delete",
        ("DELETE", false) => "deletecollection",
        _ => return None,
    };
    Some(Access {
        group: group.to_owned(),
        resource,
        verb: verb.to_owned(),
        namespace,
    })
}

/// Whether `rules` allow `access`. A namespaced request is allowed by a
/// ClusterRole (bound cluster-wide) or a Role of its namespace; a
/// cluster-wide one only by a ClusterRole.
pub fn allows(rules: &[Rule], access: &Access) -> bool {
    rules.iter().any(|rule| {
        let scope = match (&rule.namespace, &access.namespace) {
            (None, _) => true,
            (Some(role), Some(request)) => role == request,
            (Some(_), None) => false,
        };
        scope
            && rule.groups.iter().any(|g| g == &access.group || g == "*")
            && rule
                .resources
                .iter()
                .any(|r| r == &access.resource || r == "*")
            && rule.verbs.iter().any(|v| v == &access.verb || v == "*")
    })
}

/// Asserts that `deploy/rbac.yaml` allows every request of `requests`
/// (method, path and query, as the fake API server records them) that
/// needs a permission.
#[track_caller]
pub fn assert_deploy_rbac_allows<'a>(
    requests: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>,
) {
    let rbac = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/rbac.yaml");
    let rules = rules(&rbac);
    for (method, path, query) in requests {
        let Some(access) = access(method, path, query) else {
            continue;
        };
        assert!(
            allows(&rules, &access),
            "deploy/rbac.yaml does not allow {access:?} ({method} {path}?{query})"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_map_to_rbac_verbs() {
        let a = |m, p, q| access(m, p, q).unwrap();
        assert_eq!(
            a(
                "PATCH",
                "/apis/pkg.crossplane.io/v1/functionrevisions/fr/status",
                "&force=true"
            ),
            Access {
                group: "pkg.crossplane.io".into(),
                resource: "functionrevisions/status".into(),
                verb: "patch".into(),
                namespace: None
            }
        );
        let watch = a(
            "GET",
            "/api/v1/namespaces/ns/secrets",
            "&watch=true&resourceVersion=1",
        );
        assert_eq!(
            (watch.verb.as_str(), watch.namespace.as_deref()),
            ("watch", Some("ns"))
        );
        assert_eq!(
            a("GET", "/api/v1/namespaces/ns/secrets", "limit=500").verb,
            "list"
        );
        assert_eq!(a("GET", "/api/v1/namespaces/ns/secrets/s", "").verb, "get");
        assert_eq!(access("GET", "/version", ""), None);
        let rules = vec![Rule {
            namespace: Some("ns".into()),
            groups: vec!["".into()],
            resources: vec!["secrets".into()],
            verbs: vec!["get".into()],
        }];
        assert!(allows(
            &rules,
            &a("GET", "/api/v1/namespaces/ns/secrets/s", "")
        ));
        assert!(!allows(
            &rules,
            &a("GET", "/api/v1/namespaces/other/secrets/s", "")
        ));
        assert!(!allows(
            &rules,
            &a("GET", "/api/v1/namespaces/ns/secrets", "")
        ));
    }
}
