//! Discovery documents: `/version`, `/api`, `/apis`, `/api/v1` and `/apis/{group}/{version}`.

use serde_json::{Value, json};

use crate::resources::Registry;

/// `/version`.
pub(crate) fn version_info() -> Value {
    json!({
        "major": "1",
        "minor": "33",
        "gitVersion": "v1.33.0-xfn-kube-fake",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2025-01-01T00:00:00Z",
        "goVersion": "go1.24.0",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

/// `/api`.
pub(crate) fn core_versions() -> Value {
    json!({"kind": "APIVersions", "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]})
}

/// `/apis`.
pub(crate) fn group_list(registry: &Registry) -> Value {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for info in registry.all().filter(|i| !i.group.is_empty()) {
        match groups.iter_mut().find(|(g, _)| *g == info.group) {
            Some((_, versions)) if !versions.contains(&info.version) => {
                versions.push(info.version.clone())
            }
            Some(_) => {}
            None => groups.push((info.group.clone(), vec![info.version.clone()])),
        }
    }
    let groups: Vec<Value> = groups
        .into_iter()
        .map(|(g, versions)| {
            let vs: Vec<Value> = versions
                .iter()
                .map(|v| json!({"groupVersion": format!("{g}/{v}"), "version": v}))
                .collect();
            json!({"name": g, "versions": vs, "preferredVersion": vs.first()})
        })
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/api/v1` or `/apis/{group}/{version}`; `None` if nothing is served there.
pub(crate) fn resource_list(registry: &Registry, group: &str, version: &str) -> Option<Value> {
    let infos = registry.in_group_version(group, version);
    if infos.is_empty() {
        return None;
    }
    let verbs = [
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    ];
    let mut resources = Vec::new();
    for i in infos {
        resources.push(
            json!({"name": i.plural, "singularName": i.kind.to_ascii_lowercase(),
            "namespaced": i.namespaced, "kind": i.kind, "verbs": verbs}),
        );
        if i.status_subresource {
            resources.push(
                json!({"name": format!("{}/status", i.plural), "singularName": "",
                "namespaced": i.namespaced, "kind": i.kind, "verbs": ["get", "patch", "update"]}),
            );
        }
    }
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}),
    )
}
