//! The functions that ship inside the `xfn` binary, found by package name.
//!
//! A Function whose `spec.package` names one of them (by the last segment
//! of its repository, e.g.
//! `xpkg.crossplane.io/crossplane-contrib/function-patch-and-transform:v0.8.2`)
//! can run with no registry and no network. The binary embeds their
//! components and hands the table in ([`Builtins::new`]); a library user
//! without them uses [`Builtins::NONE`].

/// A function that ships with xfn.
#[derive(Debug, Clone, Copy)]
pub struct Builtin {
    /// Its name, e.g. `function-patch-and-transform`.
    pub name: &'static str,
    /// Its component, if this binary was built with it.
    pub component: Option<&'static [u8]>,
    /// The capabilities its package declares (its `crossplane.yaml`;
    /// Crossplane's default `composition` when it lists none).
    pub capabilities: &'static [&'static str],
}

/// The table of built-in functions a binary ships.
#[derive(Debug, Clone, Copy, Default)]
pub struct Builtins(&'static [Builtin]);

impl Builtins {
    /// No built-in functions.
    pub const NONE: Builtins = Builtins(&[]);

    /// The functions in `table`.
    pub const fn new(table: &'static [Builtin]) -> Builtins {
        Builtins(table)
    }

    /// The names of every built-in function.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + use<> {
        self.0.iter().map(|builtin| builtin.name)
    }

    /// The built-in function an OCI package reference names, if any.
    pub fn for_package(&self, package: &str) -> Option<Builtin> {
        let name = repository_name(package);
        self.0.iter().find(|builtin| builtin.name == name).copied()
    }
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

    const TABLE: &[Builtin] = &[
        Builtin {
            name: "function-patch-and-transform",
            component: Some(b"pt"),
            capabilities: &["composition"],
        },
        Builtin {
            name: "function-auto-ready",
            component: None,
            capabilities: &["composition"],
        },
    ];

    #[test]
    fn finds_builtins_by_repository_name() {
        let builtins = Builtins::new(TABLE);
        let pt = "xpkg.crossplane.io/crossplane-contrib/function-patch-and-transform:v0.8.2";
        assert_eq!(
            builtins.for_package(pt).map(|b| b.name),
            Some("function-patch-and-transform")
        );
        let digest = "xpkg.upbound.io/crossplane-contrib/function-auto-ready@sha256:abcd";
        assert_eq!(
            builtins.for_package(digest).map(|b| b.name),
            Some("function-auto-ready")
        );
        assert_eq!(
            builtins
                .for_package("localhost:5000/function-auto-ready:v1")
                .map(|b| b.name),
            Some("function-auto-ready")
        );
        assert!(
            builtins
                .for_package("xpkg.crossplane.io/crossplane-contrib/function-go-templating:v0.9.0")
                .is_none()
        );
        assert!(Builtins::NONE.for_package(pt).is_none());
    }
}
