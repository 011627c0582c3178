//! HTTP routing: turns Kubernetes REST and watch requests into store operations.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Limited};
use serde_json::{Value, json};

use crate::Shared;
use crate::body::FakeBody;
use crate::delete::DeleteOptions;
use crate::discovery;
use crate::hooks::RequestRecord;
use crate::resources::ResourceInfo;
use crate::selector::{FieldSelector, LabelSelector};
use crate::status::ApiError;
use crate::store::{ListOptions, WatchStart};
use crate::util::{Query, percent_decode};
use crate::watch::{self, WatchGuard, WatchRequest};
use crate::write::{Part, PatchType, WriteOptions};

/// A clonable `tower::Service` answering Kubernetes API requests from the fake's store.
///
/// Hand it to `kube::Client::new(service, "default")` (inside a tokio runtime).
#[derive(Clone)]
pub struct FakeService {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for FakeService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeService").finish_non_exhaustive()
    }
}

impl<B> tower::Service<Request<B>> for FakeService
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = Response<FakeBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<FakeBody>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let shared = self.shared.clone();
        Box::pin(async move { Ok(handle(shared, req).await) })
    }
}

fn json_response(code: StatusCode, value: &Value) -> Response<FakeBody> {
    let body = serde_json::to_vec(value).unwrap_or_default();
    let mut res = Response::new(FakeBody::full(body));
    *res.status_mut() = code;
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    res
}

fn error_response(err: &ApiError) -> Response<FakeBody> {
    json_response(err.status_code(), &err.to_status())
}

/// Handles one request.
pub(crate) async fn handle<B>(shared: Arc<Shared>, req: Request<B>) -> Response<FakeBody>
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (parts, body) = req.into_parts();
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let record = RequestRecord {
        method: parts.method.to_string(),
        path: parts.uri.path().to_string(),
        query: parts.uri.query().unwrap_or_default().to_string(),
        content_type: content_type.clone(),
    };
    shared.hooks.log(record.clone());
    if *shared.shutdown.borrow() {
        return error_response(&ApiError::new(
            503,
            "ServiceUnavailable",
            "the fake API server is shut down",
        ));
    }
    if let Some(rule) = shared.hooks.take(&record) {
        if let Some(delay) = rule.delay {
            tokio::time::sleep(delay).await;
        }
        if let Some(err) = rule.error {
            return error_response(&err);
        }
    }
    let limit = shared.config.max_body_bytes;
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limit) {
        return error_response(&too_large(limit));
    }
    let bytes = match Limited::new(body, limit).collect().await {
        Ok(c) => c.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            return error_response(&too_large(limit));
        }
        Err(e) => {
            return error_response(&ApiError::bad_request(format!(
                "failed to read the request body: {e}"
            )));
        }
    };
    let ctx = Ctx {
        method: parts.method,
        query: Query::parse(parts.uri.query()),
        content_type,
        body: bytes,
    };
    let res = match route(&shared, parts.uri.path(), &ctx) {
        Ok(res) => res,
        Err(err) => error_response(&err),
    };
    tracing::debug!(
        method = %record.method,
        path = %record.path,
        query = %record.query,
        status = res.status().as_u16(),
        "fake api request"
    );
    res
}

fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        413,
        "RequestEntityTooLarge",
        format!("the request body is larger than {limit} bytes"),
    )
}

struct Ctx {
    method: Method,
    query: Query,
    content_type: Option<String>,
    body: Bytes,
}

impl Ctx {
    fn json_body(&self) -> Result<Value, ApiError> {
        if self.body.is_empty() {
            return Err(ApiError::bad_request("the request body is empty"));
        }
        serde_json::from_slice(&self.body)
            .map_err(|e| ApiError::bad_request(format!("the request body is not valid JSON: {e}")))
    }

    /// Apply bodies are YAML, of which JSON is a subset.
    fn apply_body(&self) -> Result<Value, ApiError> {
        if let Ok(v) = serde_json::from_slice::<Value>(&self.body) {
            return Ok(v);
        }
        serde_yaml_ng::from_slice::<Value>(&self.body).map_err(|e| {
            ApiError::bad_request(format!("the apply body is neither JSON nor YAML: {e}"))
        })
    }

    fn write_options(&self) -> WriteOptions {
        WriteOptions {
            field_manager: self
                .query
                .get("fieldManager")
                .filter(|m| !m.is_empty())
                .map(str::to_string),
            force: self.query.flag("force"),
            dry_run: self.query.get("dryRun").is_some_and(|d| d == "All"),
        }
    }
}

/// A resolved resource path.
struct Target {
    info: ResourceInfo,
    /// Namespace from the path; `None` for cluster-scoped kinds or all-namespace collections.
    namespace: Option<String>,
    name: Option<String>,
    status: bool,
}

impl Target {
    fn ns(&self) -> &str {
        self.namespace.as_deref().unwrap_or("")
    }
}

fn route(shared: &Shared, path: &str, ctx: &Ctx) -> Result<Response<FakeBody>, ApiError> {
    let segs: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(percent_decode)
        .collect();
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    let (group, version, rest) = match segs.as_slice() {
        ["version"] => {
            return get_only(ctx, || {
                json_response(StatusCode::OK, &discovery::version_info())
            });
        }
        ["api"] => {
            return get_only(ctx, || {
                json_response(StatusCode::OK, &discovery::core_versions())
            });
        }
        ["apis"] => {
            let groups = discovery::group_list(&shared.lock().registry);
            return get_only(ctx, || json_response(StatusCode::OK, &groups));
        }
        ["api", "v1", rest @ ..] => ("", "v1", rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return Err(ApiError::no_route(path)),
    };
    if rest.is_empty() {
        let list = discovery::resource_list(&shared.lock().registry, group, version);
        return match list {
            Some(list) => get_only(ctx, || json_response(StatusCode::OK, &list)),
            None => Err(ApiError::no_route(path)),
        };
    }
    let target = resolve(shared, group, version, rest).ok_or_else(|| ApiError::no_route(path))?;
    match (&ctx.method, target.name.is_some()) {
        (&Method::GET, false) if ctx.query.flag("watch") => start_watch(shared, &target, ctx),
        (&Method::GET, false) => list(shared, &target, ctx),
        (&Method::GET, true) => get(shared, &target),
        (&Method::POST, false) => create(shared, &target, ctx),
        (&Method::PUT, true) => replace(shared, &target, ctx),
        (&Method::PATCH, true) => patch(shared, &target, ctx),
        (&Method::DELETE, true) => delete(shared, &target, ctx),
        (&Method::DELETE, false) => delete_collection(shared, &target, ctx),
        (m, _) => Err(ApiError::method_not_allowed(m.as_str())),
    }
}

fn get_only(
    ctx: &Ctx,
    f: impl FnOnce() -> Response<FakeBody>,
) -> Result<Response<FakeBody>, ApiError> {
    if ctx.method == Method::GET {
        Ok(f())
    } else {
        Err(ApiError::method_not_allowed(ctx.method.as_str()))
    }
}

fn resolve(shared: &Shared, group: &str, version: &str, rest: &[&str]) -> Option<Target> {
    let store = shared.lock();
    if let ["namespaces", ns, plural, tail @ ..] = rest
        && let Some(info) = store
            .resource(group, version, plural)
            .filter(|i| i.namespaced)
    {
        return target(info, Some(ns.to_string()), tail);
    }
    let (plural, tail) = rest.split_first()?;
    let info = store.resource(group, version, plural)?;
    if info.namespaced && !tail.is_empty() {
        return None;
    }
    target(info, None, tail)
}

fn target(info: ResourceInfo, namespace: Option<String>, tail: &[&str]) -> Option<Target> {
    let (name, status) = match tail {
        [] => (None, false),
        [name] => (Some(name.to_string()), false),
        [name, "status"] if info.status_subresource => (Some(name.to_string()), true),
        _ => return None,
    };
    Some(Target {
        info,
        namespace,
        name,
        status,
    })
}

fn list_options(ctx: &Ctx) -> Result<ListOptions, ApiError> {
    Ok(ListOptions {
        labels: LabelSelector::parse(ctx.query.get("labelSelector").unwrap_or(""))?,
        fields: FieldSelector::parse(ctx.query.get("fieldSelector").unwrap_or(""))?,
        limit: match ctx.query.get("limit").filter(|l| !l.is_empty()) {
            Some(l) => Some(
                l.parse()
                    .map_err(|_| ApiError::bad_request(format!("invalid limit {l:?}")))?,
            ),
            None => None,
        },
        continue_token: ctx.query.get("continue").map(str::to_string),
    })
}

fn get(shared: &Shared, t: &Target) -> Result<Response<FakeBody>, ApiError> {
    let name = t.name.as_deref().unwrap_or_default();
    let obj = shared.lock().get(&t.info, t.ns(), name)?;
    Ok(json_response(StatusCode::OK, &obj))
}

fn list(shared: &Shared, t: &Target, ctx: &Ctx) -> Result<Response<FakeBody>, ApiError> {
    let opts = list_options(ctx)?;
    let list = shared.lock().list(&t.info, t.namespace.as_deref(), &opts)?;
    Ok(json_response(StatusCode::OK, &list))
}

fn require_namespace(t: &Target, method: &Method) -> Result<(), ApiError> {
    if t.info.namespaced && t.namespace.is_none() {
        return Err(ApiError::method_not_allowed(method.as_str()));
    }
    Ok(())
}

fn create(shared: &Shared, t: &Target, ctx: &Ctx) -> Result<Response<FakeBody>, ApiError> {
    require_namespace(t, &ctx.method)?;
    let body = ctx.json_body()?;
    let written = shared.lock().create(
        &t.info,
        t.ns(),
        body,
        Part::Main,
        &ctx.write_options(),
        None,
    )?;
    Ok(json_response(StatusCode::CREATED, &written.object))
}

fn part(t: &Target) -> Part {
    if t.status { Part::Status } else { Part::Main }
}

fn replace(shared: &Shared, t: &Target, ctx: &Ctx) -> Result<Response<FakeBody>, ApiError> {
    let body = ctx.json_body()?;
    let name = t.name.as_deref().unwrap_or_default();
    let written =
        shared
            .lock()
            .replace(&t.info, t.ns(), name, body, part(t), &ctx.write_options())?;
    Ok(json_response(StatusCode::OK, &written.object))
}

fn patch(shared: &Shared, t: &Target, ctx: &Ctx) -> Result<Response<FakeBody>, ApiError> {
    let ct = ctx.content_type.as_deref().unwrap_or("");
    let Some(patch_type) = PatchType::from_content_type(ct) else {
        return Err(ApiError::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format ({ct:?}); accepted: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml"
            ),
        ));
    };
    let body = if patch_type == PatchType::Apply {
        ctx.apply_body()?
    } else {
        ctx.json_body()?
    };
    let name = t.name.as_deref().unwrap_or_default();
    let written = shared.lock().patch(
        &t.info,
        t.ns(),
        name,
        patch_type,
        body,
        part(t),
        &ctx.write_options(),
    )?;
    let code = if written.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(json_response(code, &written.object))
}

fn delete_options(ctx: &Ctx) -> Result<DeleteOptions, ApiError> {
    let body = if ctx.body.is_empty() {
        Value::Null
    } else {
        ctx.json_body()?
    };
    let policy = ctx
        .query
        .get("propagationPolicy")
        .map(str::to_string)
        .or_else(|| {
            body.get("propagationPolicy")
                .and_then(Value::as_str)
                .map(str::to_string)
        });
    let orphan = match policy.as_deref() {
        None | Some("Background" | "Foreground") => false,
        Some("Orphan") => true,
        Some(p) => {
            return Err(ApiError::bad_request(format!(
                "unknown propagationPolicy {p:?}"
            )));
        }
    };
    let pre = |f: &str| {
        body.pointer(&format!("/preconditions/{f}"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let dry_run = ctx.query.get("dryRun").is_some_and(|d| d == "All")
        || body
            .get("dryRun")
            .and_then(Value::as_array)
            .is_some_and(|d| d.iter().any(|x| x == "All"));
    Ok(DeleteOptions {
        uid: pre("uid"),
        resource_version: pre("resourceVersion"),
        orphan,
        dry_run,
    })
}

fn delete(shared: &Shared, t: &Target, ctx: &Ctx) -> Result<Response<FakeBody>, ApiError> {
    if t.status {
        return Err(ApiError::method_not_allowed("DELETE"));
    }
    let opts = delete_options(ctx)?;
    let name = t.name.as_deref().unwrap_or_default();
    let mut store = shared.lock();
    let obj = store.delete(&t.info, t.ns(), name, &opts)?;
    let still_there = !opts.dry_run && store.object(&t.info, t.ns(), name).is_some();
    let code = if still_there {
        StatusCode::ACCEPTED
    } else {
        StatusCode::OK
    };
    Ok(json_response(code, &obj))
}

fn delete_collection(
    shared: &Shared,
    t: &Target,
    ctx: &Ctx,
) -> Result<Response<FakeBody>, ApiError> {
    require_namespace(t, &ctx.method)?;
    let mut opts = list_options(ctx)?;
    opts.limit = None;
    opts.continue_token = None;
    let dopts = delete_options(ctx)?;
    let mut store = shared.lock();
    let list = store.list(&t.info, t.namespace.as_deref(), &opts)?;
    let mut deleted = Vec::new();
    for item in list
        .get("items")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = item
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let ns = item
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default();
        // An object already removed by garbage collection of an earlier one is skipped.
        if let Ok(obj) = store.delete(&t.info, ns, name, &dopts) {
            deleted.push(obj);
        }
    }
    Ok(json_response(
        StatusCode::OK,
        &json!({
            "apiVersion": t.info.api_version(),
            "kind": format!("{}List", t.info.kind),
            "metadata": {"resourceVersion": store.rv.to_string()},
            "items": deleted,
        }),
    ))
}

fn start_watch(shared: &Shared, t: &Target, ctx: &Ctx) -> Result<Response<FakeBody>, ApiError> {
    let opts = list_options(ctx)?;
    let send_initial = ctx.query.flag("sendInitialEvents");
    let rv = ctx.query.get("resourceVersion").unwrap_or("");
    let start = if send_initial || rv.is_empty() || rv == "0" {
        WatchStart::Current
    } else {
        WatchStart::After(
            rv.parse()
                .map_err(|_| ApiError::bad_request(format!("invalid resourceVersion {rv:?}")))?,
        )
    };
    let max = shared.config.max_watch_duration;
    let timeout = match ctx.query.get("timeoutSeconds").filter(|s| !s.is_empty()) {
        Some(s) => {
            let secs: u64 = s
                .parse()
                .map_err(|_| ApiError::bad_request(format!("invalid timeoutSeconds {s:?}")))?;
            if secs == 0 {
                max
            } else {
                Duration::from_secs(secs).min(max)
            }
        }
        None => max,
    };
    let active = shared.active_watches.fetch_add(1, Ordering::SeqCst) + 1;
    let guard = WatchGuard(shared.active_watches.clone());
    if active > shared.config.max_watches {
        return Err(ApiError::new(
            429,
            "TooManyRequests",
            format!(
                "too many concurrent watches (limit {})",
                shared.config.max_watches
            ),
        ));
    }
    let req = WatchRequest {
        info: t.info.clone(),
        namespace: t.namespace.clone(),
        labels: opts.labels,
        fields: opts.fields,
        bookmarks: ctx.query.flag("allowWatchBookmarks"),
        initial_events_end: send_initial,
        timeout,
        bookmark_interval: shared.config.bookmark_interval,
        from_rv: match start {
            WatchStart::After(rv) => Some(rv),
            WatchStart::Current => None,
        },
    };
    let sub = shared
        .lock()
        .subscribe(&t.info, t.namespace.as_deref(), start);
    let body = match sub {
        Ok(sub) => watch::spawn(req, sub, shared.close_watches.subscribe(), guard),
        // Like the real server: 200, one ERROR event, end of stream.
        Err(err) if err.code == 410 => watch::error_body(&err),
        Err(err) => return Err(err),
    };
    let mut res = Response::new(body);
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Ok(res)
}
