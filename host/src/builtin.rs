//! The functions that ship inside the xfn binary, found by package name.
//!
//! A Function whose `spec.package` names one of them (by the last segment
//! of its repository, e.g.
//! `xpkg.crossplane.io/crossplane-contrib/function-patch-and-transform:v0.8.2`)
//! can run with no registry and no network.

/// Built-in functions: (name, component bytes if this binary was built with them).
const BUILTINS: &[(&str, Option<&[u8]>)] = include!(concat!(env!("OUT_DIR"), "/builtins.rs"));

/// A function that ships with xfn.
#[derive(Debug, Clone, Copy)]
pub struct Builtin {
    /// Its name, e.g. `function-patch-and-transform`.
    pub name: &'static str,
    /// Its component, if this binary was built with it.
    pub component: Option<&'static [u8]>,
    /// The capabilities its package declares (its `crossplane.yaml`).
    pub capabilities: &'static [&'static str],
}

/// The capabilities a built-in function's package declares: `operation`
/// for the operation function, Crossplane's default `composition` for the
/// rest (their packages don't list any).
fn capabilities_of(name: &str) -> &'static [&'static str] {
    match name {
        "function-annotate" => &["operation"],
        _ => &["composition"],
    }
}

/// The names of every built-in function.
pub fn names() -> impl Iterator<Item = &'static str> {
    BUILTINS.iter().map(|(name, _)| *name)
}

/// The built-in function an OCI package reference names, if any.
pub fn for_package(package: &str) -> Option<Builtin> {
    let name = repository_name(package);
    BUILTINS
        .iter()
        .find(|(builtin, _)| *builtin == name)
        .map(|(name, component)| Builtin {
            name,
            component: *component,
            capabilities: capabilities_of(name),
        })
}

/// The last path segment of a package reference, without tag or digest.
fn repository_name(package: &str) -> &str {
    let without_digest = package.split('@').next().unwrap_or(package);
    let last = without_digest.rsplit('/').next().unwrap_or(without_digest);
    last.split(':').next().unwrap_or(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_builtins_by_repository_name() {
        let pt = "xpkg.crossplane.io/crossplane-contrib/function-patch-and-transform:v0.8.2";
        assert_eq!(
            for_package(pt).map(|b| b.name),
            Some("function-patch-and-transform")
        );
        let digest = "xpkg.upbound.io/crossplane-contrib/function-auto-ready@sha256:abcd";
        assert_eq!(
            for_package(digest).map(|b| b.name),
            Some("function-auto-ready")
        );
        assert_eq!(
            for_package("localhost:5000/function-auto-ready:v1").map(|b| b.name),
            Some("function-auto-ready")
        );
        assert!(
            for_package("xpkg.crossplane.io/crossplane-contrib/function-go-templating:v0.9.0")
                .is_none()
        );
    }
}
