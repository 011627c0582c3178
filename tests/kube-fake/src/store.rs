//! The in-memory object store: objects, the resource version counter and the event log.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use serde_json::{Map, Value, json};
use tokio::sync::broadcast;

use crate::ownership::FieldOwners;
use crate::resources::{Registry, ResourceInfo, ResourceKey};
use crate::selector::{FieldSelector, LabelSelector};
use crate::status::ApiError;

/// The type of a watch event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// An object was created.
    Added,
    /// An object was changed.
    Modified,
    /// An object was removed.
    Deleted,
}

impl EventType {
    /// The wire name (`ADDED`, `MODIFIED`, `DELETED`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
        }
    }
}

/// One change in the store, as logged and broadcast to watches.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    /// The resource version the change produced.
    pub(crate) rv: u64,
    pub(crate) resource: ResourceKey,
    /// Namespace of the object; empty for cluster-scoped objects.
    pub(crate) namespace: String,
    pub(crate) kind: EventType,
    pub(crate) object: Value,
    /// The object before a modification, to notice selector transitions.
    pub(crate) old: Option<Value>,
}

/// An object and its field ownership.
#[derive(Debug, Clone)]
pub(crate) struct Stored {
    pub(crate) value: Value,
    pub(crate) owners: FieldOwners,
}

/// Key of an object within one resource: (namespace or "", name).
pub(crate) type ObjKey = (String, String);

/// Where a watch starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WatchStart {
    /// Replay events after this resource version.
    After(u64),
    /// Send the current objects as ADDED first.
    Current,
}

/// What a new watch begins with.
pub(crate) struct Subscription {
    /// Events to send before live ones.
    pub(crate) initial: Vec<Arc<Event>>,
    /// Live events.
    pub(crate) live: broadcast::Receiver<Arc<Event>>,
    /// The resource version the initial events bring the watcher to.
    pub(crate) rv: u64,
}

/// Parameters of a list request.
#[derive(Debug, Clone, Default)]
pub(crate) struct ListOptions {
    pub(crate) labels: LabelSelector,
    pub(crate) fields: FieldSelector,
    pub(crate) limit: Option<usize>,
    pub(crate) continue_token: Option<String>,
}

/// All mutable state of a fake API server.
pub(crate) struct Store {
    pub(crate) registry: Registry,
    pub(crate) objects: BTreeMap<ResourceKey, BTreeMap<ObjKey, Stored>>,
    pub(crate) rv: u64,
    uid_counter: u64,
    uid_seed: u64,
    log: VecDeque<Arc<Event>>,
    log_capacity: usize,
    /// Every event with a resource version above this one is still in `log`.
    log_start: u64,
    events: broadcast::Sender<Arc<Event>>,
}

impl Store {
    pub(crate) fn new(registry: Registry, log_capacity: usize, broadcast_capacity: usize) -> Self {
        let (events, _) = broadcast::channel(broadcast_capacity.max(1));
        let uid_seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
            ^ (&events as *const _ as u64);
        Self {
            registry,
            objects: BTreeMap::new(),
            rv: 0,
            uid_counter: 0,
            uid_seed,
            log: VecDeque::new(),
            log_capacity: log_capacity.max(1),
            log_start: 0,
            events,
        }
    }

    /// Looks up a resource by path components.
    pub(crate) fn resource(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Option<ResourceInfo> {
        self.registry.get(group, version, plural).cloned()
    }

    /// A new unique uid in the UUID text format.
    pub(crate) fn next_uid(&mut self) -> String {
        self.uid_counter += 1;
        let mix = self
            .uid_seed
            .wrapping_add(self.uid_counter.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        format!(
            "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
            (mix >> 32) as u32,
            (mix >> 16) as u16,
            (mix & 0xfff) as u16,
            (self.uid_counter >> 48) as u16 & 0xfff,
            self.uid_counter & 0xffff_ffff_ffff
        )
    }

    /// Advances and returns the global resource version.
    pub(crate) fn next_rv(&mut self) -> u64 {
        self.rv += 1;
        self.rv
    }

    /// Logs and broadcasts an event for the change that produced resource version `self.rv`.
    pub(crate) fn emit(
        &mut self,
        kind: EventType,
        info: &ResourceInfo,
        namespace: &str,
        object: Value,
        old: Option<Value>,
    ) {
        let ev = Arc::new(Event {
            rv: self.rv,
            resource: info.key(),
            namespace: namespace.to_string(),
            kind,
            object,
            old,
        });
        self.log.push_back(ev.clone());
        while self.log.len() > self.log_capacity {
            if let Some(dropped) = self.log.pop_front() {
                self.log_start = dropped.rv;
            }
        }
        // No receivers is fine.
        let _ = self.events.send(ev);
    }

    /// Drops the whole event history: watches from older resource versions get 410 Expired.
    pub(crate) fn compact(&mut self) {
        self.log.clear();
        self.log_start = self.rv;
    }

    pub(crate) fn object(&self, info: &ResourceInfo, ns: &str, name: &str) -> Option<&Stored> {
        self.objects
            .get(&info.key())
            .and_then(|m| m.get(&(ns.to_string(), name.to_string())))
    }

    /// GET of one object.
    pub(crate) fn get(&self, info: &ResourceInfo, ns: &str, name: &str) -> Result<Value, ApiError> {
        self.object(info, ns, name)
            .map(|s| s.value.clone())
            .ok_or_else(|| ApiError::not_found(&info.qualified_name(), name))
    }

    /// Objects of a resource, optionally in one namespace, in (namespace, name) order.
    pub(crate) fn objects_of<'a>(
        &'a self,
        info: &ResourceInfo,
        ns: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Value> + 'a {
        self.objects
            .get(&info.key())
            .into_iter()
            .flat_map(|m| m.iter())
            .filter(move |((o_ns, _), _)| ns.is_none_or(|n| n == o_ns))
            .map(|(_, s)| &s.value)
    }

    /// GET of a collection, with selectors and paging.
    pub(crate) fn list(
        &self,
        info: &ResourceInfo,
        ns: Option<&str>,
        opts: &ListOptions,
    ) -> Result<Value, ApiError> {
        let (list_rv, offset) = match opts.continue_token.as_deref().filter(|t| !t.is_empty()) {
            Some(token) => parse_continue(token)?,
            None => (self.rv, 0),
        };
        let matching: Vec<&Value> = self
            .objects_of(info, ns)
            .filter(|o| opts.labels.matches(o) && opts.fields.matches(o))
            .collect();
        let limit = opts.limit.filter(|l| *l > 0).unwrap_or(usize::MAX);
        let end = offset.saturating_add(limit).min(matching.len());
        let items: Vec<Value> = matching
            .get(offset.min(end)..end)
            .unwrap_or_default()
            .iter()
            .map(|v| (*v).clone())
            .collect();
        let mut metadata = Map::new();
        metadata.insert("resourceVersion".into(), Value::String(list_rv.to_string()));
        if end < matching.len() {
            metadata.insert("continue".into(), Value::String(format!("{list_rv}:{end}")));
            metadata.insert("remainingItemCount".into(), json!(matching.len() - end));
        }
        Ok(json!({
            "apiVersion": info.api_version(),
            "kind": format!("{}List", info.kind),
            "metadata": metadata,
            "items": items,
        }))
    }

    /// Starts a watch: the events to replay and a live receiver, taken atomically.
    pub(crate) fn subscribe(
        &self,
        info: &ResourceInfo,
        ns: Option<&str>,
        start: WatchStart,
    ) -> Result<Subscription, ApiError> {
        let live = self.events.subscribe();
        let key = info.key();
        let initial = match start {
            WatchStart::After(rv) => {
                if rv < self.log_start {
                    return Err(ApiError::expired(format!(
                        "too old resource version: {rv} ({})",
                        self.log_start + 1
                    )));
                }
                self.log
                    .iter()
                    .filter(|e| {
                        e.rv > rv && e.resource == key && ns.is_none_or(|n| n == e.namespace)
                    })
                    .cloned()
                    .collect()
            }
            WatchStart::Current => self
                .objects_of(info, ns)
                .map(|o| {
                    Arc::new(Event {
                        rv: self.rv,
                        resource: key.clone(),
                        namespace: o
                            .pointer("/metadata/namespace")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                        kind: EventType::Added,
                        object: o.clone(),
                        old: None,
                    })
                })
                .collect(),
        };
        Ok(Subscription {
            initial,
            live,
            rv: self.rv,
        })
    }
}

fn parse_continue(token: &str) -> Result<(u64, usize), ApiError> {
    let bad = || ApiError::bad_request(format!("invalid continue token {token:?}"));
    let (rv, offset) = token.split_once(':').ok_or_else(bad)?;
    Ok((
        rv.parse().map_err(|_| bad())?,
        offset.parse().map_err(|_| bad())?,
    ))
}
