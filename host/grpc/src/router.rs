//! Which function a request is for.
//!
//! Crossplane dials each function at its own Service name
//! (`dns:///<function>.<namespace>:9443`), so one server can serve many
//! functions on one port by reading the `:authority` of each request:
//! `<function>`, `<function>.<namespace>`, `<function>.<namespace>.svc` or
//! `<function>.<namespace>.svc.<cluster-domain>`, with any port.
//!
//! Clients that can't set the authority use a port of its own for the
//! function: every request on that port goes to it. A request whose
//! authority is an IP address or `localhost` goes to the only function, if
//! the server has exactly one.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::task::{Context, Poll};

use tonic::Status;

use xfn_runtime::Function;

/// The functions a server serves, by name.
#[derive(Clone, Default)]
pub struct FunctionTable {
    functions: BTreeMap<Arc<str>, Arc<dyn Function>>,
}

impl std::fmt::Debug for FunctionTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.functions.keys()).finish()
    }
}

impl<F: Function + 'static> FromIterator<(String, Arc<F>)> for FunctionTable {
    fn from_iter<I: IntoIterator<Item = (String, Arc<F>)>>(functions: I) -> FunctionTable {
        let mut table = FunctionTable::new();
        for (name, function) in functions {
            table.insert(name, function);
        }
        table
    }
}

impl FunctionTable {
    /// An empty table.
    pub fn new() -> FunctionTable {
        FunctionTable::default()
    }

    /// Adds (or replaces) function `name`.
    pub fn insert(&mut self, name: impl Into<Arc<str>>, function: Arc<dyn Function>) {
        self.functions.insert(name.into(), function);
    }

    /// The function called `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Function>> {
        self.functions.get(name)
    }

    /// Function `name` and its name as the table holds it (a clone costs
    /// no allocation).
    fn get_named(&self, name: &str) -> Option<(Arc<str>, Arc<dyn Function>)> {
        self.functions
            .get_key_value(name)
            .map(|(name, function)| (name.clone(), function.clone()))
    }

    /// The functions' names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.functions.keys().map(|name| &**name)
    }

    /// How many functions there are.
    pub fn len(&self) -> usize {
        self.functions.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.functions.is_empty()
    }
}

/// What the transport knows about a request that routing needs; put into
/// the request's extensions by [`RouteLayer`].
#[derive(Debug, Clone)]
pub(crate) struct RouteInfo {
    /// The `:authority` (or `Host`) the client sent.
    pub authority: Option<String>,
    /// The function this request's listener is dedicated to, if any.
    pub pinned: Option<Arc<str>>,
}

/// Finds the function for a request.
pub(crate) fn route(
    table: &FunctionTable,
    namespace: Option<&str>,
    info: &RouteInfo,
) -> Result<(Arc<str>, Arc<dyn Function>), Status> {
    if let Some(name) = &info.pinned {
        return table
            .get(name)
            .map(|f| (name.clone(), f.clone()))
            .ok_or_else(|| {
                Status::not_found(format!(
                    "function {name:?}, which this port is dedicated to, is not served"
                ))
            });
    }
    let authority = info.authority.as_deref().unwrap_or("");
    let host = host_of(authority);
    let name = if is_address(&host) {
        match table.len() {
            1 => table.names().next(),
            _ => None,
        }
    } else {
        function_name(&host, namespace)
    };
    name.and_then(|n| table.get_named(n))
        .ok_or_else(|| not_found(authority, namespace, table))
}

/// The annotation that gives a served function a port of its own
/// (`xfn_catalog::annotations::SERVE_PORT`, which this crate doesn't
/// depend on).
const SERVE_PORT: &str = "xfn.dev/serve-port";

fn not_found(authority: &str, namespace: Option<&str>, table: &FunctionTable) -> Status {
    let served: Vec<&str> = table.names().collect();
    let ns = namespace.unwrap_or("<namespace>");
    Status::not_found(format!(
        "no function is served at authority {authority:?}; dial <function>.{ns}:<port> \
         or the function's own port (served: {}). A render's Development runtime dials a server of \
         several functions by address: serve the function on a port of its own (xfn serve \
         --function-port NAME=PORT, or the annotation {SERVE_PORT}) and point the annotation \
         render.crossplane.io/runtime-development-target at that port",
        if served.is_empty() {
            "none".to_owned()
        } else {
            served.join(", ")
        }
    ))
}

/// The host of an authority, without port, lower case, without a trailing
/// dot; borrowed unless it had upper case.
fn host_of(authority: &str) -> Cow<'_, str> {
    // Drop any userinfo; then the port, unless the host is a bracketed IPv6.
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    let host = if let Some(rest) = authority.strip_prefix('[') {
        rest.split(']').next().unwrap_or(rest)
    } else {
        authority.split(':').next().unwrap_or(authority)
    };
    let host = host.trim_end_matches('.');
    if host.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(host.to_ascii_lowercase())
    } else {
        Cow::Borrowed(host)
    }
}

fn is_address(host: &str) -> bool {
    host.is_empty() || host == "localhost" || host.parse::<IpAddr>().is_ok()
}

/// The function a Service host name names: its first label, if the rest is
/// `[<namespace>[.svc[.<cluster-domain>]]]`. If `namespace` is given, the
/// namespace label must match it.
fn function_name<'a>(host: &'a str, namespace: Option<&str>) -> Option<&'a str> {
    let mut labels = host.split('.');
    let name = labels.next().filter(|n| !n.is_empty())?;
    if let Some(ns) = labels.next() {
        if namespace.is_some_and(|want| want != ns) || ns.is_empty() {
            return None;
        }
        if let Some(svc) = labels.next()
            && svc != "svc"
        {
            return None;
        }
        if labels.any(str::is_empty) {
            return None;
        }
    }
    Some(name)
}

/// A tower layer that records each request's [`RouteInfo`].
#[derive(Debug, Clone, Default)]
pub(crate) struct RouteLayer {
    pinned: Option<Arc<str>>,
}

impl RouteLayer {
    /// A layer for a listener dedicated to `pinned`, or shared if `None`.
    pub fn new(pinned: Option<Arc<str>>) -> RouteLayer {
        RouteLayer { pinned }
    }
}

impl<S> tower::Layer<S> for RouteLayer {
    type Service = RouteService<S>;

    fn layer(&self, inner: S) -> RouteService<S> {
        RouteService {
            inner,
            pinned: self.pinned.clone(),
        }
    }
}

/// The service of [`RouteLayer`].
#[derive(Debug, Clone)]
pub(crate) struct RouteService<S> {
    inner: S,
    pinned: Option<Arc<str>>,
}

impl<S, B> tower::Service<http::Request<B>> for RouteService<S>
where
    S: tower::Service<http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<B>) -> Self::Future {
        let authority = request
            .uri()
            .authority()
            .map(|a| a.as_str().to_owned())
            .or_else(|| {
                request
                    .headers()
                    .get(http::header::HOST)
                    .and_then(|h| h.to_str().ok())
                    .map(str::to_owned)
            });
        request.extensions_mut().insert(RouteInfo {
            authority,
            pinned: self.pinned.clone(),
        });
        self.inner.call(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xfn_runtime::CallError;
    use xfn_runtime::protocol::{RunFunctionRequest, RunFunctionResponse};

    struct Named(&'static str);

    #[async_trait::async_trait]
    impl Function for Named {
        fn name(&self) -> &str {
            self.0
        }

        async fn call(
            &self,
            _: &RunFunctionRequest,
            _: Option<std::time::Duration>,
        ) -> Result<RunFunctionResponse, CallError> {
            Ok(RunFunctionResponse::default())
        }
    }

    fn table(names: &[&'static str]) -> FunctionTable {
        let mut t = FunctionTable::new();
        for n in names {
            t.insert(*n, Arc::new(Named(n)));
        }
        t
    }

    fn info(authority: &str) -> RouteInfo {
        RouteInfo {
            authority: Some(authority.to_owned()),
            pinned: None,
        }
    }

    fn routed(t: &FunctionTable, ns: Option<&str>, authority: &str) -> Result<String, Status> {
        route(t, ns, &info(authority)).map(|(name, f)| {
            assert_eq!(f.name(), &*name);
            name.to_string()
        })
    }

    #[test]
    fn routes_every_service_name_form() {
        let t = table(&["function-a", "function-b"]);
        let ns = Some("crossplane-system");
        for authority in [
            "function-a",
            "function-a:9443",
            "function-a.crossplane-system:9443",
            "function-a.crossplane-system.svc:9443",
            "function-a.crossplane-system.svc.cluster.local:9443",
            "Function-A.Crossplane-System.svc.example.org.",
        ] {
            assert_eq!(
                routed(&t, ns, authority).as_deref().ok(),
                Some("function-a"),
                "{authority}"
            );
        }
        assert_eq!(
            routed(&t, ns, "function-b.crossplane-system:9443").ok(),
            Some("function-b".to_owned())
        );
    }

    #[test]
    fn refuses_other_namespaces_and_shapes() {
        let t = table(&["function-a", "function-b"]);
        let ns = Some("crossplane-system");
        for authority in [
            "function-a.other-ns:9443",
            "function-a.crossplane-system.pod:9443",
            "function-c.crossplane-system:9443",
            "127.0.0.1:9443",
            "localhost:9443",
            "[::1]:9443",
            "",
        ] {
            let status = routed(&t, ns, authority).expect_err(authority);
            assert_eq!(status.code(), tonic::Code::NotFound, "{authority}");
            assert!(
                status.message().contains(&format!("{authority:?}")),
                "names the authority: {}",
                status.message()
            );
            assert!(status.message().contains("function-a, function-b"));
        }
        // Without a configured namespace, any namespace is accepted.
        assert!(routed(&t, None, "function-a.other-ns:9443").is_ok());
    }

    #[test]
    fn an_address_reaches_the_only_function() {
        let t = table(&["only"]);
        assert_eq!(routed(&t, None, "127.0.0.1:9443").ok(), Some("only".into()));
        assert_eq!(routed(&t, None, "[::1]:1").ok(), Some("only".into()));
        assert_eq!(routed(&t, None, "localhost:9443").ok(), Some("only".into()));
        assert!(routed(&t, None, "other:9443").is_err());
    }

    #[test]
    fn a_host_is_lower_cased_without_port_or_trailing_dot_and_copied_only_to_lower_case() {
        assert!(matches!(
            host_of("function-a.ns:9443"),
            Cow::Borrowed("function-a.ns")
        ));
        assert!(matches!(host_of("user@[::1]:1"), Cow::Borrowed("::1")));
        assert!(matches!(
            host_of("function-a.ns."),
            Cow::Borrowed("function-a.ns")
        ));
        assert_eq!(host_of("Function-A.NS.:9443"), "function-a.ns");
        assert!(matches!(host_of("Function-A"), Cow::Owned(_)));
    }

    #[test]
    fn a_dedicated_port_wins_over_the_authority() {
        let t = table(&["function-a", "function-b"]);
        let pinned = RouteInfo {
            authority: Some("function-a:9443".into()),
            pinned: Some(Arc::from("function-b")),
        };
        assert_eq!(
            route(&t, None, &pinned).map(|r| r.0).ok(),
            Some("function-b".into())
        );
        let gone = RouteInfo {
            authority: None,
            pinned: Some(Arc::from("function-c")),
        };
        let status = route(&t, None, &gone).err().map(|s| s.code());
        assert_eq!(status, Some(tonic::Code::NotFound));
    }
}
