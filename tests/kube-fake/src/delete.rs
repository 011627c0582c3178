//! Deletion: finalizers, garbage collection of dependents and namespace cleanup.

use std::collections::HashSet;

use serde_json::{Value, json};

use crate::meta::{has_finalizers, meta, meta_mut, meta_str, owner_uids};
use crate::resources::ResourceInfo;
use crate::status::ApiError;
use crate::store::{EventType, Store, Stored};
use crate::util::now_rfc3339;
use crate::write::{Part, WriteOptions};

/// Options of a DELETE.
#[derive(Debug, Clone, Default)]
pub(crate) struct DeleteOptions {
    pub(crate) uid: Option<String>,
    pub(crate) resource_version: Option<String>,
    pub(crate) orphan: bool,
    pub(crate) dry_run: bool,
}

impl Store {
    /// DELETE of one object. Objects with finalizers only get a `deletionTimestamp`.
    pub(crate) fn delete(
        &mut self,
        info: &ResourceInfo,
        ns: &str,
        name: &str,
        opts: &DeleteOptions,
    ) -> Result<Value, ApiError> {
        let Some(old) = self.object(info, ns, name) else {
            return Err(ApiError::not_found(&info.qualified_name(), name));
        };
        if let Some(uid) = &opts.uid
            && Some(uid.as_str()) != meta_str(&old.value, "uid")
        {
            return Err(ApiError::conflict(format!(
                "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                meta_str(&old.value, "uid").unwrap_or_default()
            )));
        }
        if let Some(rv) = &opts.resource_version
            && Some(rv.as_str()) != meta_str(&old.value, "resourceVersion")
        {
            return Err(ApiError::conflict(format!(
                "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                meta_str(&old.value, "resourceVersion").unwrap_or_default()
            )));
        }
        if opts.dry_run {
            return Ok(old.value.clone());
        }
        let uid = meta_str(&old.value, "uid").unwrap_or_default().to_string();
        if opts.orphan {
            self.orphan_dependents(&uid);
        }
        Ok(self.delete_or_mark(info, ns, name).unwrap_or(Value::Null))
    }

    /// Removes an object now, or marks it for deletion when it has finalizers. Returns the object.
    fn delete_or_mark(&mut self, info: &ResourceInfo, ns: &str, name: &str) -> Option<Value> {
        let old = self.object(info, ns, name)?.clone();
        if !has_finalizers(&old.value) {
            return self.remove_object(info, ns, name, None);
        }
        if meta(&old.value).is_some_and(|m| m.contains_key("deletionTimestamp")) {
            return Some(old.value);
        }
        let mut new = old.value.clone();
        let rv = self.next_rv();
        let m = meta_mut(&mut new);
        m.insert("deletionTimestamp".into(), Value::String(now_rfc3339()));
        m.insert("deletionGracePeriodSeconds".into(), json!(0));
        m.insert("resourceVersion".into(), Value::String(rv.to_string()));
        self.put(
            info,
            ns,
            name,
            Stored {
                value: new.clone(),
                owners: old.owners,
            },
        );
        self.emit(EventType::Modified, info, ns, new.clone(), Some(old.value));
        Some(new)
    }

    /// Removes an object, emits DELETED with a new resource version and collects its dependents.
    /// `last` overrides the object's final content (used when the last finalizer is removed).
    pub(crate) fn remove_object(
        &mut self,
        info: &ResourceInfo,
        ns: &str,
        name: &str,
        last: Option<Value>,
    ) -> Option<Value> {
        let old = self.take(info, ns, name)?;
        let mut fin = last.unwrap_or_else(|| old.value.clone());
        let rv = self.next_rv();
        meta_mut(&mut fin).insert("resourceVersion".into(), Value::String(rv.to_string()));
        self.emit(EventType::Deleted, info, ns, fin.clone(), Some(old.value));
        if let Some(uid) = meta_str(&fin, "uid").map(str::to_string) {
            self.collect_garbage(&uid);
        }
        if info.group.is_empty() && info.plural == "namespaces" {
            self.delete_namespace_contents(name);
        }
        Some(fin)
    }

    fn all_uids(&self) -> HashSet<String> {
        self.objects
            .values()
            .flat_map(|m| m.values())
            .filter_map(|s| meta_str(&s.value, "uid").map(str::to_string))
            .collect()
    }

    /// (resource, namespace, name) of objects with an ownerReference to `uid`.
    fn dependents_of(&self, uid: &str) -> Vec<(ResourceInfo, String, String)> {
        let mut out = Vec::new();
        for (rk, objs) in &self.objects {
            let Some(info) = self.registry.get(&rk.group, &rk.version, &rk.plural) else {
                continue;
            };
            for ((ns, name), s) in objs {
                if owner_uids(&s.value).iter().any(|u| u == uid) {
                    out.push((info.clone(), ns.clone(), name.clone()));
                }
            }
        }
        out
    }

    /// Background garbage collection, done synchronously: dependents with no surviving owner are deleted;
    /// dependents with other owners lose their dangling ownerReferences.
    fn collect_garbage(&mut self, deleted_uid: &str) {
        for (info, ns, name) in self.dependents_of(deleted_uid) {
            let alive = self.all_uids();
            let Some(dep) = self.object(&info, &ns, &name) else {
                continue;
            };
            let surviving: Vec<String> = owner_uids(&dep.value)
                .into_iter()
                .filter(|u| alive.contains(u))
                .collect();
            if surviving.is_empty() {
                self.delete_or_mark(&info, &ns, &name);
            } else {
                self.drop_owner_refs(&info, &ns, &name, |u| !surviving.iter().any(|s| s == u));
            }
        }
    }

    /// `propagationPolicy: Orphan`: dependents lose their ownerReference to `uid`.
    fn orphan_dependents(&mut self, uid: &str) {
        for (info, ns, name) in self.dependents_of(uid) {
            self.drop_owner_refs(&info, &ns, &name, |u| u == uid);
        }
    }

    fn drop_owner_refs(
        &mut self,
        info: &ResourceInfo,
        ns: &str,
        name: &str,
        drop: impl Fn(&str) -> bool,
    ) {
        let Some(dep) = self.object(info, ns, name) else {
            return;
        };
        let mut new = dep.value.clone();
        if let Some(Value::Array(refs)) = meta_mut(&mut new).get_mut("ownerReferences") {
            refs.retain(|r| !r.get("uid").and_then(Value::as_str).is_some_and(&drop));
        }
        let opts = WriteOptions {
            field_manager: Some("garbage-collector".into()),
            ..Default::default()
        };
        // Cannot fail: the object exists.
        let _ = self.commit_update(info, ns, name, new, Part::Raw, &opts, None);
    }

    fn delete_namespace_contents(&mut self, namespace: &str) {
        let mut victims = Vec::new();
        for (rk, objs) in &self.objects {
            let Some(info) = self.registry.get(&rk.group, &rk.version, &rk.plural) else {
                continue;
            };
            if !info.namespaced {
                continue;
            }
            for (ns, name) in objs.keys() {
                if ns == namespace {
                    victims.push((info.clone(), name.clone()));
                }
            }
        }
        for (info, name) in victims {
            self.delete_or_mark(&info, namespace, &name);
        }
    }

    /// Test backdoor: deletes an object (with garbage collection).
    pub(crate) fn delete_direct(
        &mut self,
        info: &ResourceInfo,
        ns: &str,
        name: &str,
    ) -> Option<Value> {
        self.delete_or_mark(info, ns, name)
    }
}
