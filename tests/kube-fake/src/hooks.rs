//! Test hooks: the request log and injected failures or delays.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use crate::status::ApiError;

/// One request as seen by the fake, for assertions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRecord {
    /// HTTP method, e.g. `PATCH`.
    pub method: String,
    /// Path without the query.
    pub path: String,
    /// Raw query string (may start with `&`, as kube writes it).
    pub query: String,
    /// `Content-Type` header, if any.
    pub content_type: Option<String>,
}

impl RequestRecord {
    /// Whether the raw query contains `needle` (e.g. `watch=true`).
    pub fn query_has(&self, needle: &str) -> bool {
        self.query.contains(needle)
    }
}

/// A fault to inject into matching requests: a delay before serving, an error `Status` instead of
/// serving, or both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureRule {
    /// Only requests with this method match (any if `None`).
    pub method: Option<String>,
    /// Only requests whose path contains this string match.
    pub path_contains: String,
    /// Only requests whose raw query contains this string match (any if `None`).
    pub query_contains: Option<String>,
    /// Wait this long before going on with the request.
    pub delay: Option<Duration>,
    /// Answer this error instead of serving the request.
    pub error: Option<ApiError>,
    /// How many matching requests are affected before the rule is used up.
    pub times: usize,
}

impl FailureRule {
    /// Fails the next request whose path contains `path_contains` with `code` (reason `InternalError`
    /// unless changed with [`FailureRule::reason`]).
    pub fn new(path_contains: impl Into<String>, code: u16) -> Self {
        Self {
            method: None,
            path_contains: path_contains.into(),
            query_contains: None,
            delay: None,
            error: Some(ApiError::new(code, "InternalError", "injected failure")),
            times: 1,
        }
    }

    /// Delays the next request whose path contains `path_contains` by `delay`, then serves it normally.
    /// The request sees the store as it is after the delay.
    pub fn delay(path_contains: impl Into<String>, delay: Duration) -> Self {
        Self {
            delay: Some(delay),
            error: None,
            ..Self::new(path_contains, 500)
        }
    }

    /// Restricts the rule to one HTTP method.
    pub fn method(mut self, method: impl Into<String>) -> Self {
        self.method = Some(method.into().to_ascii_uppercase());
        self
    }

    /// Restricts the rule to requests whose raw query contains `needle`, e.g. `watch=true`.
    pub fn query_contains(mut self, needle: impl Into<String>) -> Self {
        self.query_contains = Some(needle.into());
        self
    }

    /// Sets the `reason` of the answered Status (if the rule answers an error).
    pub fn reason(mut self, reason: impl Into<String>) -> Self {
        if let Some(e) = &mut self.error {
            e.reason = reason.into();
        }
        self
    }

    /// Sets the `message` of the answered Status (if the rule answers an error).
    pub fn message(mut self, message: impl Into<String>) -> Self {
        if let Some(e) = &mut self.error {
            e.message = message.into();
        }
        self
    }

    /// Affects this many matching requests.
    pub fn times(mut self, times: usize) -> Self {
        self.times = times;
        self
    }

    fn matches(&self, r: &RequestRecord) -> bool {
        self.times > 0
            && self.method.as_ref().is_none_or(|m| *m == r.method)
            && r.path.contains(&self.path_contains)
            && self
                .query_contains
                .as_ref()
                .is_none_or(|q| r.query.contains(q.as_str()))
    }
}

/// The request log and the fault rules of one server.
pub(crate) struct Hooks {
    capacity: usize,
    requests: Mutex<VecDeque<RequestRecord>>,
    rules: Mutex<Vec<FailureRule>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Hooks {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            capacity,
            requests: Mutex::new(VecDeque::new()),
            rules: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn log(&self, record: RequestRecord) {
        let mut log = lock(&self.requests);
        log.push_back(record);
        while log.len() > self.capacity {
            log.pop_front();
        }
    }

    pub(crate) fn requests(&self) -> Vec<RequestRecord> {
        lock(&self.requests).iter().cloned().collect()
    }

    pub(crate) fn clear_requests(&self) {
        lock(&self.requests).clear();
    }

    pub(crate) fn add_rule(&self, rule: FailureRule) {
        lock(&self.rules).push(rule);
    }

    /// The first rule matching this request, if any; uses up one of its times.
    pub(crate) fn take(&self, r: &RequestRecord) -> Option<FailureRule> {
        let mut rules = lock(&self.rules);
        let idx = rules.iter().position(|rule| rule.matches(r))?;
        rules[idx].times -= 1;
        let rule = rules[idx].clone();
        if rules[idx].times == 0 {
            rules.remove(idx);
        }
        Some(rule)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(method: &str, path: &str, query: &str) -> RequestRecord {
        RequestRecord {
            method: method.into(),
            path: path.into(),
            query: query.into(),
            content_type: None,
        }
    }

    #[test]
    fn rules_match_and_get_used_up() {
        let hooks = Hooks::new(2);
        hooks.add_rule(
            FailureRule::new("/leases", 503)
                .method("patch")
                .query_contains("fieldManager=b")
                .times(2),
        );
        assert!(
            hooks
                .take(&rec("GET", "/leases/x", "fieldManager=b"))
                .is_none()
        );
        assert!(
            hooks
                .take(&rec("PATCH", "/leases/x", "fieldManager=a"))
                .is_none()
        );
        let hit = hooks
            .take(&rec("PATCH", "/leases/x", "&fieldManager=b"))
            .expect("match");
        assert_eq!(hit.error.map(|e| e.code), Some(503));
        assert!(
            hooks
                .take(&rec("PATCH", "/leases/x", "fieldManager=b"))
                .is_some()
        );
        assert!(
            hooks
                .take(&rec("PATCH", "/leases/x", "fieldManager=b"))
                .is_none(),
            "used up"
        );
        for i in 0..3 {
            hooks.log(rec("GET", &format!("/{i}"), ""));
        }
        let paths: Vec<_> = hooks.requests().into_iter().map(|r| r.path).collect();
        assert_eq!(paths, ["/1", "/2"], "the log is bounded");
    }
}
