//! Writes to the store: create, replace, patch and server-side apply.

use serde_json::{Map, Value, json};

use crate::json_patch;
use crate::meta::{
    has_finalizers, meta, meta_mut, meta_str, spec_part, validate_body, validate_name,
};
use crate::ownership::FieldOwners;
use crate::patch::{merge_patch, strategic_merge};
use crate::resources::{ResourceInfo, ResourceKey};
use crate::status::ApiError;
use crate::store::{EventType, Store, Stored};
use crate::util::now_rfc3339;

/// The field manager recorded for writes that name none.
pub(crate) const DEFAULT_MANAGER: &str = "unknown";

/// Which part of an object a write may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// The main resource: `.status` is kept as stored when the kind has a status subresource.
    Main,
    /// The `/status` subresource: only `.status` changes.
    Status,
    /// Test backdoor: everything but server-managed metadata comes from the body.
    Raw,
}

/// The kinds of PATCH the fake understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// `application/merge-patch+json`
    Merge,
    /// `application/strategic-merge-patch+json`
    Strategic,
    /// `application/json-patch+json`
    Json,
    /// `application/apply-patch+yaml` (server-side apply)
    Apply,
}

impl PatchType {
    /// Maps a request content type to a patch type.
    pub fn from_content_type(ct: &str) -> Option<Self> {
        match ct.split(';').next().unwrap_or("").trim() {
            "application/merge-patch+json" => Some(Self::Merge),
            "application/strategic-merge-patch+json" => Some(Self::Strategic),
            "application/json-patch+json" => Some(Self::Json),
            "application/apply-patch+yaml"
            | "application/apply-patch+json"
            | "application/apply-patch+cbor" => Some(Self::Apply),
            _ => None,
        }
    }
}

/// Options common to writes.
#[derive(Debug, Clone, Default)]
pub(crate) struct WriteOptions {
    pub(crate) field_manager: Option<String>,
    pub(crate) force: bool,
    pub(crate) dry_run: bool,
}

impl WriteOptions {
    pub(crate) fn manager(&self) -> &str {
        self.field_manager.as_deref().unwrap_or(DEFAULT_MANAGER)
    }
}

/// The outcome of a write.
#[derive(Debug, Clone)]
pub(crate) struct Written {
    pub(crate) object: Value,
    pub(crate) created: bool,
}

impl Store {
    fn slot_key(info: &ResourceInfo, ns: &str, name: &str) -> (ResourceKey, (String, String)) {
        (info.key(), (ns.to_string(), name.to_string()))
    }

    pub(crate) fn put(&mut self, info: &ResourceInfo, ns: &str, name: &str, stored: Stored) {
        let (rk, ok) = Self::slot_key(info, ns, name);
        self.objects.entry(rk).or_default().insert(ok, stored);
    }

    pub(crate) fn take(&mut self, info: &ResourceInfo, ns: &str, name: &str) -> Option<Stored> {
        let (rk, ok) = Self::slot_key(info, ns, name);
        self.objects.get_mut(&rk).and_then(|m| m.remove(&ok))
    }

    /// Creates an object. `ns` is the namespace from the path ("" for cluster-scoped kinds).
    pub(crate) fn create(
        &mut self,
        info: &ResourceInfo,
        ns: &str,
        mut body: Value,
        part: Part,
        opts: &WriteOptions,
        applied: Option<&Value>,
    ) -> Result<Written, ApiError> {
        validate_body(info, &body)?;
        if info.namespaced {
            if ns.is_empty() {
                return Err(ApiError::bad_request(
                    "a namespace is required to create a namespaced object",
                ));
            }
            if let Some(body_ns) = meta_str(&body, "namespace").filter(|n| !n.is_empty())
                && body_ns != ns
            {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
        }
        let name = match meta_str(&body, "name").filter(|n| !n.is_empty()) {
            Some(n) => n.to_string(),
            None => match meta_str(&body, "generateName").filter(|n| !n.is_empty()) {
                Some(prefix) => {
                    let prefix = prefix.to_string();
                    let mut candidate;
                    loop {
                        let uid = self.next_uid().replace('-', "");
                        candidate = format!("{prefix}{}", &uid[uid.len() - 5..]);
                        if self.object(info, ns, &candidate).is_none() {
                            break;
                        }
                    }
                    candidate
                }
                None => {
                    return Err(ApiError::invalid(
                        "metadata.name: Required value: name or generateName is required",
                    ));
                }
            },
        };
        validate_name(&name)?;
        if self.object(info, ns, &name).is_some() {
            return Err(ApiError::already_exists(&info.qualified_name(), &name));
        }
        if info.status_subresource
            && part != Part::Raw
            && let Value::Object(m) = &mut body
        {
            m.remove("status");
        }
        if let Value::Object(m) = &mut body {
            m.insert("apiVersion".into(), Value::String(info.api_version()));
            m.insert("kind".into(), Value::String(info.kind.clone()));
        }
        let uid = self.next_uid();
        let rv = if opts.dry_run {
            self.rv + 1
        } else {
            self.next_rv()
        };
        let m = meta_mut(&mut body);
        m.insert("name".into(), Value::String(name.clone()));
        if info.namespaced {
            m.insert("namespace".into(), Value::String(ns.to_string()));
        } else {
            m.remove("namespace");
        }
        m.insert("uid".into(), Value::String(uid));
        m.insert("resourceVersion".into(), Value::String(rv.to_string()));
        m.insert("creationTimestamp".into(), Value::String(now_rfc3339()));
        m.insert("generation".into(), json!(1));
        for f in [
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "managedFields",
            "selfLink",
        ] {
            m.remove(f);
        }
        if opts.dry_run {
            return Ok(Written {
                object: body,
                created: true,
            });
        }
        let mut owners = FieldOwners::default();
        owners.record(opts.manager(), None, &body, applied);
        self.put(
            info,
            ns,
            &name,
            Stored {
                value: body.clone(),
                owners,
            },
        );
        self.emit(EventType::Added, info, ns, body.clone(), None);
        Ok(Written {
            object: body,
            created: true,
        })
    }

    /// Shapes a proposed new version of a stored object: keeps the parts the write may not change, keeps
    /// server-managed metadata and computes `generation`.
    fn shape_update(info: &ResourceInfo, old: &Value, mut new: Value, part: Part) -> Value {
        if info.status_subresource || part == Part::Status {
            match part {
                Part::Main => {
                    let status = old.get("status").cloned();
                    if let Value::Object(m) = &mut new {
                        match status {
                            Some(s) => m.insert("status".into(), s),
                            None => m.remove("status"),
                        };
                    }
                }
                Part::Status => {
                    let status = new.get("status").cloned();
                    new = old.clone();
                    if let Value::Object(m) = &mut new {
                        match status {
                            Some(s) => m.insert("status".into(), s),
                            None => m.remove("status"),
                        };
                    }
                }
                Part::Raw => {}
            }
        }
        if let Value::Object(m) = &mut new {
            m.insert("apiVersion".into(), Value::String(info.api_version()));
            m.insert("kind".into(), Value::String(info.kind.clone()));
        }
        let old_meta = meta(old).cloned().unwrap_or_default();
        let m = meta_mut(&mut new);
        for f in [
            "name",
            "namespace",
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
            "resourceVersion",
        ] {
            match old_meta.get(f) {
                Some(v) => m.insert(f.into(), v.clone()),
                None => m.remove(f),
            };
        }
        m.remove("managedFields");
        m.remove("selfLink");
        if spec_part(old) != spec_part(&new) {
            let generation = old_meta
                .get("generation")
                .and_then(Value::as_i64)
                .unwrap_or(0)
                + 1;
            meta_mut(&mut new).insert("generation".into(), json!(generation));
        }
        new
    }

    /// Commits a proposed new version of an existing object. No-ops leave the object, its resource version
    /// and the event log untouched.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn commit_update(
        &mut self,
        info: &ResourceInfo,
        ns: &str,
        name: &str,
        proposed: Value,
        part: Part,
        opts: &WriteOptions,
        applied: Option<&Value>,
    ) -> Result<Written, ApiError> {
        let Some(old) = self.object(info, ns, name).cloned() else {
            return Err(ApiError::not_found(&info.qualified_name(), name));
        };
        let mut new = Self::shape_update(info, &old.value, proposed, part);
        if new == old.value {
            if !opts.dry_run
                && let (Some(applied), Some(stored)) = (applied, self.stored_mut(info, ns, name))
            {
                stored
                    .owners
                    .record(opts.manager(), Some(&old.value), &new, Some(applied));
            }
            return Ok(Written {
                object: old.value,
                created: false,
            });
        }
        if meta(&new).is_some_and(|m| m.contains_key("deletionTimestamp")) && !has_finalizers(&new)
        {
            // The last finalizer is gone: the pending deletion completes.
            if opts.dry_run {
                return Ok(Written {
                    object: new,
                    created: false,
                });
            }
            let removed = self.remove_object(info, ns, name, Some(new));
            return Ok(Written {
                object: removed.unwrap_or(Value::Null),
                created: false,
            });
        }
        let rv = if opts.dry_run {
            self.rv + 1
        } else {
            self.next_rv()
        };
        meta_mut(&mut new).insert("resourceVersion".into(), Value::String(rv.to_string()));
        if opts.dry_run {
            return Ok(Written {
                object: new,
                created: false,
            });
        }
        let mut owners = old.owners.clone();
        owners.record(opts.manager(), Some(&old.value), &new, applied);
        self.put(
            info,
            ns,
            name,
            Stored {
                value: new.clone(),
                owners,
            },
        );
        self.emit(EventType::Modified, info, ns, new.clone(), Some(old.value));
        Ok(Written {
            object: new,
            created: false,
        })
    }

    pub(crate) fn stored_mut(
        &mut self,
        info: &ResourceInfo,
        ns: &str,
        name: &str,
    ) -> Option<&mut Stored> {
        self.objects
            .get_mut(&info.key())
            .and_then(|m| m.get_mut(&(ns.to_string(), name.to_string())))
    }

    /// PUT: replaces an object (or its status), failing with 409 on a stale `metadata.resourceVersion`.
    pub(crate) fn replace(
        &mut self,
        info: &ResourceInfo,
        ns: &str,
        name: &str,
        body: Value,
        part: Part,
        opts: &WriteOptions,
    ) -> Result<Written, ApiError> {
        validate_body(info, &body)?;
        if let Some(body_name) = meta_str(&body, "name").filter(|n| !n.is_empty())
            && body_name != name
        {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        let Some(old) = self.object(info, ns, name) else {
            return Err(ApiError::not_found(&info.qualified_name(), name));
        };
        if let Some(rv) = meta_str(&body, "resourceVersion").filter(|r| !r.is_empty())
            && Some(rv) != meta_str(&old.value, "resourceVersion")
        {
            return Err(stale(info, name));
        }
        self.commit_update(info, ns, name, body, part, opts, None)
    }

    /// PATCH of any type; server-side apply creates the object when absent.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn patch(
        &mut self,
        info: &ResourceInfo,
        ns: &str,
        name: &str,
        patch_type: PatchType,
        patch: Value,
        part: Part,
        opts: &WriteOptions,
    ) -> Result<Written, ApiError> {
        if patch_type == PatchType::Apply {
            return self.apply(info, ns, name, patch, part, opts);
        }
        if patch_type != PatchType::Json && !patch.is_object() {
            return Err(ApiError::bad_request("a merge patch must be a JSON object"));
        }
        let Some(old) = self.object(info, ns, name) else {
            return Err(ApiError::not_found(&info.qualified_name(), name));
        };
        let old_rv = meta_str(&old.value, "resourceVersion").map(str::to_string);
        let mut new = old.value.clone();
        match patch_type {
            PatchType::Merge => merge_patch(&mut new, &patch),
            PatchType::Strategic => strategic_merge(&mut new, &patch)?,
            PatchType::Json => json_patch::apply(&mut new, &patch)?,
            PatchType::Apply => unreachable!("handled above"),
        }
        validate_body(info, &new)?;
        if meta_str(&new, "resourceVersion").map(str::to_string) != old_rv {
            // A resourceVersion in a patch is a precondition.
            return Err(stale(info, name));
        }
        if meta_str(&new, "name") != Some(name) {
            return Err(ApiError::bad_request(
                "metadata.name may not be changed by a patch",
            ));
        }
        self.commit_update(info, ns, name, new, part, opts, None)
    }

    fn apply(
        &mut self,
        info: &ResourceInfo,
        ns: &str,
        name: &str,
        mut applied: Value,
        part: Part,
        opts: &WriteOptions,
    ) -> Result<Written, ApiError> {
        let Some(manager) = opts.field_manager.as_deref().filter(|m| !m.is_empty()) else {
            return Err(ApiError::bad_request(
                "PATCH with apply requires the fieldManager query parameter",
            ));
        };
        validate_body(info, &applied)?;
        if let Some(body_name) = meta_str(&applied, "name").filter(|n| !n.is_empty())
            && body_name != name
        {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        if info.namespaced
            && let Some(body_ns) = meta_str(&applied, "namespace").filter(|n| !n.is_empty())
            && body_ns != ns
        {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        let precondition = meta_str(&applied, "resourceVersion")
            .filter(|r| !r.is_empty())
            .map(str::to_string);
        {
            let m = meta_mut(&mut applied);
            for f in [
                "resourceVersion",
                "uid",
                "creationTimestamp",
                "generation",
                "managedFields",
            ] {
                m.remove(f);
            }
        }
        // Only the writable part of the applied object counts.
        if info.status_subresource
            && let Value::Object(m) = &mut applied
        {
            match part {
                Part::Main => {
                    m.remove("status");
                }
                Part::Status => m.retain(|k, _| {
                    matches!(k.as_str(), "status" | "apiVersion" | "kind" | "metadata")
                }),
                Part::Raw => {}
            }
        }
        let Some(old) = self.object(info, ns, name).cloned() else {
            if part == Part::Status {
                return Err(ApiError::not_found(&info.qualified_name(), name));
            }
            let mut body = Value::Object(Map::new());
            strategic_merge(&mut body, &applied)?;
            meta_mut(&mut body).insert("name".into(), Value::String(name.to_string()));
            let opts = WriteOptions {
                field_manager: Some(manager.to_string()),
                ..opts.clone()
            };
            return self.create(info, ns, body, part, &opts, Some(&applied));
        };
        if let Some(rv) = precondition
            && Some(rv.as_str()) != meta_str(&old.value, "resourceVersion")
        {
            return Err(stale(info, name));
        }
        if !opts.force {
            old.owners.check_apply(manager, &old.value, &applied)?;
        }
        let mut new = old.value.clone();
        strategic_merge(&mut new, &applied)?;
        self.commit_update(info, ns, name, new, part, opts, Some(&applied))
    }

    /// Test backdoor: creates or fully replaces an object, status included.
    pub(crate) fn insert(&mut self, obj: Value) -> Result<Value, ApiError> {
        let api_version = obj
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
        let info = self
            .registry
            .by_kind(api_version, kind)
            .cloned()
            .ok_or_else(|| ApiError::no_route(&format!("{api_version} {kind}")))?;
        let ns = if info.namespaced {
            meta_str(&obj, "namespace").unwrap_or("default").to_string()
        } else {
            String::new()
        };
        let opts = WriteOptions::default();
        let name = meta_str(&obj, "name").unwrap_or_default().to_string();
        if !name.is_empty() && self.object(&info, &ns, &name).is_some() {
            validate_body(&info, &obj)?;
            return Ok(self
                .commit_update(&info, &ns, &name, obj, Part::Raw, &opts, None)?
                .object);
        }
        Ok(self.create(&info, &ns, obj, Part::Raw, &opts, None)?.object)
    }
}

pub(crate) fn stale(info: &ResourceInfo, name: &str) -> ApiError {
    ApiError::conflict(format!(
        "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; please apply your changes to the latest version and try again",
        info.qualified_name()
    ))
}
