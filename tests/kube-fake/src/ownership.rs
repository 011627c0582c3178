//! A small model of server-side-apply field ownership.
//!
//! Each leaf field of an object (lists that merge by key are descended into by item key; other lists are
//! leaves) is owned by at most one field manager: the last one that set or changed it. A non-forced apply
//! that would change a field owned by a different manager is a 409 Conflict. This is enough for
//! kube-lease-manager's lock (a non-forced apply of `spec.holderIdentity`), not a full SSA implementation:
//! there is no shared ownership and applied-but-omitted fields are not removed.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::patch::{ListStrategy, item_key, list_strategy};
use crate::status::ApiError;

/// Field path → owning manager, for one object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FieldOwners {
    owners: BTreeMap<String, String>,
}

/// Flattens an object into (path, value) leaves, skipping server-managed metadata.
pub(crate) fn leaves(obj: &Value) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    if let Value::Object(map) = obj {
        for (k, v) in map {
            match k.as_str() {
                "apiVersion" | "kind" => {}
                "metadata" => {
                    for sub in ["labels", "annotations", "finalizers", "ownerReferences"] {
                        if let Some(v) = v.get(sub) {
                            walk(&format!(".metadata.{sub}"), sub, v, &mut out);
                        }
                    }
                }
                _ => walk(&format!(".{k}"), k, v, &mut out),
            }
        }
    }
    out
}

fn walk(path: &str, field: &str, v: &Value, out: &mut BTreeMap<String, Value>) {
    match v {
        Value::Object(map) if !map.is_empty() => {
            for (k, sub) in map {
                walk(&format!("{path}.{k}"), k, sub, out);
            }
        }
        Value::Array(items) => {
            let strategy = list_strategy(field);
            let keyed: Option<Vec<_>> = match strategy {
                ListStrategy::Atomic => None,
                ListStrategy::Set => Some(
                    items
                        .iter()
                        .map(|i| (format!("{path}[={i}]"), None))
                        .collect(),
                ),
                _ => items
                    .iter()
                    .map(|i| {
                        item_key(strategy, i).map(|(k, kv)| (format!("{path}[{k}={kv}]"), Some(i)))
                    })
                    .collect(),
            };
            match keyed {
                Some(keyed) if !items.is_empty() => {
                    for (p, item) in keyed {
                        match item {
                            Some(i) => walk(&p, "", i, out),
                            None => {
                                out.insert(p, Value::Bool(true));
                            }
                        }
                    }
                }
                _ => {
                    out.insert(path.to_string(), v.clone());
                }
            }
        }
        _ => {
            out.insert(path.to_string(), v.clone());
        }
    }
}

impl FieldOwners {
    /// Fails with 409 if a non-forced apply by `manager` of `applied` onto `current` changes a field
    /// another manager owns.
    pub(crate) fn check_apply(
        &self,
        manager: &str,
        current: &Value,
        applied: &Value,
    ) -> Result<(), ApiError> {
        let current = leaves(current);
        let mut conflicts = Vec::new();
        for (path, value) in leaves(applied) {
            let Some(owner) = self.owners.get(&path) else {
                continue;
            };
            if owner != manager && current.get(&path).is_some_and(|c| *c != value) {
                conflicts.push(format!("conflict with \"{owner}\": {path}"));
            }
        }
        if conflicts.is_empty() {
            Ok(())
        } else {
            Err(ApiError::conflict(format!(
                "Apply failed with {} conflict{}: {}",
                conflicts.len(),
                if conflicts.len() == 1 { "" } else { "s" },
                conflicts.join("; ")
            )))
        }
    }

    /// Records a successful write by `manager`: it owns every field it changed and, for an apply, every
    /// field it applied. Fields no longer present lose their owner.
    pub(crate) fn record(
        &mut self,
        manager: &str,
        old: Option<&Value>,
        new: &Value,
        applied: Option<&Value>,
    ) {
        let old = old.map(leaves).unwrap_or_default();
        let new = leaves(new);
        self.owners.retain(|path, _| new.contains_key(path));
        for (path, value) in &new {
            if old.get(path) != Some(value) {
                self.owners.insert(path.clone(), manager.to_string());
            }
        }
        if let Some(applied) = applied {
            for path in leaves(applied).into_keys() {
                if new.contains_key(&path) {
                    self.owners.insert(path, manager.to_string());
                }
            }
        }
    }

    /// The manager owning a field path such as `.spec.holderIdentity`.
    #[cfg(test)]
    pub(crate) fn owner(&self, path: &str) -> Option<&str> {
        self.owners.get(path).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn leaves_descend_into_keyed_lists() {
        let l = leaves(&json!({
            "apiVersion": "v1", "kind": "X",
            "metadata": {"name": "n", "labels": {"a": "b"}},
            "spec": {"h": "x", "args": ["1"]},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}
        }));
        let keys: Vec<_> = l.keys().cloned().collect();
        assert_eq!(
            keys,
            vec![
                ".metadata.labels.a",
                ".spec.args",
                ".spec.h",
                ".status.conditions[type=\"Ready\"].status",
                ".status.conditions[type=\"Ready\"].type",
            ]
        );
    }

    #[test]
    fn apply_conflicts_only_on_changed_fields_of_other_managers() {
        let mut o = FieldOwners::default();
        let v1 = json!({"spec": {"holderIdentity": "a", "renewTime": "t1"}});
        o.record("mgr-a", None, &v1, Some(&v1));
        assert_eq!(o.owner(".spec.holderIdentity"), Some("mgr-a"));
        // Same value from another manager: fine.
        assert!(
            o.check_apply("mgr-b", &v1, &json!({"spec": {"holderIdentity": "a"}}))
                .is_ok()
        );
        // Different value: conflict.
        let err = o
            .check_apply("mgr-b", &v1, &json!({"spec": {"holderIdentity": "b"}}))
            .expect_err("conflict");
        assert_eq!((err.code, err.reason.as_str()), (409, "Conflict"));
        // The owner itself may change it.
        assert!(
            o.check_apply("mgr-a", &v1, &json!({"spec": {"holderIdentity": "z"}}))
                .is_ok()
        );
        // Once removed, the field is free.
        let v2 = json!({"spec": {"renewTime": "t1"}});
        o.record("mgr-b", Some(&v1), &v2, None);
        assert_eq!(o.owner(".spec.holderIdentity"), None);
        assert!(
            o.check_apply("mgr-b", &v2, &json!({"spec": {"holderIdentity": "b"}}))
                .is_ok()
        );
    }
}
