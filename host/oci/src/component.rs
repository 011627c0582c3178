//! Reading what a wasm component imports and exports, and refusing a
//! component that imports anything the host doesn't provide, before any of
//! it is compiled.

use std::fmt;

use crate::memories::{MAX_MEMORIES, MemoryCounter};
use wasmparser::{ComponentExternalKind, ComponentTypeRef, Encoding, Parser, Payload, TypeBounds};

/// The interfaces a function component may import. Everything else is
/// refused before the component is compiled.
///
/// A pattern is `namespace:package/interface@version`, where the interface
/// may be `*` (any interface of the package) and the version may end in `*`
/// (any version with that prefix). The `wasi:*@0.2.x` packages are the ones
/// a Rust `wasm32-wasip2` component imports; the host links them but grants
/// nothing through them (no files, no network, no environment).
pub const ALLOWED_IMPORTS: &[&str] = &[
    "xfn:function/log@0.1.0",
    "xfn:function/types@0.1.0",
    "wasi:cli/*@0.2.*",
    "wasi:clocks/*@0.2.*",
    "wasi:filesystem/*@0.2.*",
    "wasi:io/*@0.2.*",
    "wasi:random/*@0.2.*",
    "wasi:sockets/*@0.2.*",
];

/// The WIT world every function component targets.
pub const FUNCTION_WORLD: &str = "xfn:function/function@0.1.0";

/// The export the host calls.
pub const RUN_FUNCTION_EXPORT: &str = "run-function";

/// What kind of item a component imports or exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    /// An interface (an instance).
    Interface,
    /// A function.
    Func,
    /// A type equal to one the component already has (no requirement
    /// on the host).
    Type,
    /// An abstract resource type the host must provide.
    Resource,
    /// A value.
    Value,
    /// A core module.
    Module,
    /// A component.
    Component,
}

impl fmt::Display for ItemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ItemKind::Interface => "interface",
            ItemKind::Func => "func",
            ItemKind::Type => "type",
            ItemKind::Resource => "resource",
            ItemKind::Value => "value",
            ItemKind::Module => "module",
            ItemKind::Component => "component",
        })
    }
}

/// One import or export of a component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// The name, e.g. `wasi:io/streams@0.2.6` or `run-function`.
    pub name: String,
    /// What it is.
    pub kind: ItemKind,
}

/// The top-level imports and exports of a component.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ComponentInfo {
    /// What the component needs from the host.
    pub imports: Vec<Item>,
    /// What the component provides.
    pub exports: Vec<Item>,
    /// How many linear memories one instance creates (an upper bound).
    pub memories: u64,
}

impl ComponentInfo {
    /// Reads the top-level imports and exports of a component binary.
    /// A core module, or bytes that are not wasm, are an error.
    pub fn read(bytes: &[u8]) -> Result<ComponentInfo, String> {
        let mut info = ComponentInfo::default();
        let mut depth = 0usize;
        let mut memories = MemoryCounter::default();
        for payload in Parser::new(0).parse_all(bytes) {
            let payload = payload.map_err(|e| format!("malformed wasm: {e}"))?;
            memories.payload(&payload)?;
            match payload {
                Payload::Version { encoding, .. } => {
                    if depth == 0 && encoding != Encoding::Component {
                        return Err(String::from(
                            "this is a core wasm module, not a component: build it for wasm32-wasip2 \
                             (`cargo build --target wasm32-wasip2`), not wasm32-wasip1 or wasm32-unknown-unknown",
                        ));
                    }
                    depth += 1;
                }
                Payload::End(_) => depth = depth.saturating_sub(1),
                Payload::ComponentImportSection(reader) if depth == 1 => {
                    for import in reader {
                        let import = import.map_err(|e| format!("malformed import: {e}"))?;
                        let name = import.name.implements.unwrap_or(import.name.name);
                        info.imports.push(Item {
                            name: name.to_owned(),
                            kind: type_ref_kind(import.ty),
                        });
                    }
                }
                Payload::ComponentExportSection(reader) if depth == 1 => {
                    for export in reader {
                        let export = export.map_err(|e| format!("malformed export: {e}"))?;
                        info.exports.push(Item {
                            name: export.name.name.to_owned(),
                            kind: external_kind(export.kind),
                        });
                    }
                }
                _ => {}
            }
        }
        if depth != 0 {
            return Err(String::from("truncated wasm"));
        }
        info.memories = memories.total();
        Ok(info)
    }

    /// The imports the host must provide: everything but type aliases.
    pub fn requirements(&self) -> impl Iterator<Item = &Item> {
        self.imports.iter().filter(|i| i.kind != ItemKind::Type)
    }

    /// The requirements no pattern of [`ALLOWED_IMPORTS`] admits.
    pub fn forbidden_imports(&self) -> Vec<String> {
        self.requirements()
            .filter(|i| !is_allowed_import(&i.name))
            .map(|i| i.name.clone())
            .collect()
    }

    /// Why the sandbox would refuse to run the component, if it would: it
    /// creates more linear memories than one call may have. (The memory
    /// limit is shared by all of a call's memories; this bounds how many
    /// there are to account for.)
    pub fn sandbox_problem(&self) -> Option<String> {
        (self.memories > MAX_MEMORIES).then(|| {
            format!(
                "it creates {} linear memories when instantiated; a function may have at most {MAX_MEMORIES}",
                self.memories
            )
        })
    }

    /// Refuses, as a package at `reference`, a component the host would not
    /// run: one with imports outside xfn's world, or too many memories.
    pub fn check_runnable(&self, reference: &str) -> crate::Result<()> {
        let forbidden = self.forbidden_imports();
        if !forbidden.is_empty() {
            return Err(crate::Error::ForbiddenImports {
                reference: reference.to_owned(),
                imports: forbidden,
            });
        }
        if let Some(reason) = self.sandbox_problem() {
            return Err(crate::Error::InvalidComponent {
                reference: reference.to_owned(),
                reason,
            });
        }
        Ok(())
    }

    /// Why the component is not an xfn function, if it isn't: it lacks
    /// the export the host calls, as when a crate never calls
    /// `xfn_sdk::export!`.
    pub fn function_problem(&self) -> Option<String> {
        (!self.exports_run_function()).then(|| {
            format!(
                "it has no `{RUN_FUNCTION_EXPORT}` export, so it is not an xfn function \
                 (world {FUNCTION_WORLD}): did you forget `xfn_sdk::export!(YourFunction);` in the crate's lib.rs?"
            )
        })
    }

    /// Whether the component exports the function the host calls.
    pub fn exports_run_function(&self) -> bool {
        self.exports
            .iter()
            .any(|e| e.name == RUN_FUNCTION_EXPORT && e.kind == ItemKind::Func)
    }
}

/// Whether [`ALLOWED_IMPORTS`] admits the import `name`.
pub fn is_allowed_import(name: &str) -> bool {
    ALLOWED_IMPORTS.iter().any(|p| pattern_matches(p, name))
}

fn pattern_matches(pattern: &str, name: &str) -> bool {
    let (Some((p_iface, p_version)), Some((iface, version))) =
        (pattern.split_once('@'), name.split_once('@'))
    else {
        return false;
    };
    let iface_ok = match p_iface.strip_suffix('*') {
        Some(package) => iface
            .strip_prefix(package)
            .is_some_and(|rest| !rest.is_empty() && !rest.contains(['/', '@', ':'])),
        None => iface == p_iface,
    };
    let version_ok = match p_version.strip_suffix('*') {
        Some(prefix) => version
            .strip_prefix(prefix)
            .is_some_and(|rest| !rest.is_empty()),
        None => version == p_version,
    };
    iface_ok && version_ok
}

fn type_ref_kind(ty: ComponentTypeRef) -> ItemKind {
    match ty {
        ComponentTypeRef::Module(_) => ItemKind::Module,
        ComponentTypeRef::Func(_) => ItemKind::Func,
        ComponentTypeRef::Value(_) => ItemKind::Value,
        ComponentTypeRef::Type(TypeBounds::Eq(_)) => ItemKind::Type,
        ComponentTypeRef::Type(TypeBounds::SubResource) => ItemKind::Resource,
        ComponentTypeRef::Instance(_) => ItemKind::Interface,
        ComponentTypeRef::Component(_) => ItemKind::Component,
    }
}

fn external_kind(kind: ComponentExternalKind) -> ItemKind {
    match kind {
        ComponentExternalKind::Module => ItemKind::Module,
        ComponentExternalKind::Func => ItemKind::Func,
        ComponentExternalKind::Value => ItemKind::Value,
        ComponentExternalKind::Type => ItemKind::Type,
        ComponentExternalKind::Instance => ItemKind::Interface,
        ComponentExternalKind::Component => ItemKind::Component,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use wasm_encoder::{
        Component, ComponentExportKind, ComponentExportSection, ComponentImportSection,
        ComponentTypeRef as EncRef, ComponentTypeSection, InstanceType,
    };

    /// A component that imports an empty instance under each of `imports`.
    pub(crate) fn component_importing(imports: &[&str]) -> Vec<u8> {
        let mut component = Component::new();
        let mut types = ComponentTypeSection::new();
        types.instance(&InstanceType::new());
        component.section(&types);
        let mut section = ComponentImportSection::new();
        for name in imports {
            section.import(*name, EncRef::Instance(0));
        }
        component.section(&section);
        if !imports.is_empty() {
            let mut exports = ComponentExportSection::new();
            exports.export("again", ComponentExportKind::Instance, 0, None);
            component.section(&exports);
        }
        component.finish()
    }

    #[test]
    fn reads_imports_and_exports() {
        let bytes = component_importing(&["wasi:io/streams@0.2.6", "xfn:function/log@0.1.0"]);
        let info = ComponentInfo::read(&bytes).unwrap();
        let names: Vec<_> = info.imports.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, ["wasi:io/streams@0.2.6", "xfn:function/log@0.1.0"]);
        assert!(info.imports.iter().all(|i| i.kind == ItemKind::Interface));
        assert_eq!(info.exports[0].name, "again");
        assert!(info.forbidden_imports().is_empty());
        assert!(!info.exports_run_function());
    }

    #[test]
    fn flags_imports_outside_the_world() {
        let bytes = component_importing(&[
            "wasi:http/outgoing-handler@0.2.0",
            "wasi:cli/environment@0.2.3",
            "xfn:function/log@0.2.0",
            "wasi:io/streams@0.3.0",
        ]);
        let info = ComponentInfo::read(&bytes).unwrap();
        assert_eq!(
            info.forbidden_imports(),
            [
                "wasi:http/outgoing-handler@0.2.0",
                "xfn:function/log@0.2.0",
                "wasi:io/streams@0.3.0"
            ]
        );
    }

    #[test]
    fn type_aliases_are_not_requirements() {
        let mut component = Component::new();
        let mut types = ComponentTypeSection::new();
        types
            .defined_type()
            .primitive(wasm_encoder::PrimitiveValType::String);
        component.section(&types);
        let mut section = ComponentImportSection::new();
        section.import("request", EncRef::Type(wasm_encoder::TypeBounds::Eq(0)));
        section.import(
            "handle",
            EncRef::Type(wasm_encoder::TypeBounds::SubResource),
        );
        component.section(&section);
        let info = ComponentInfo::read(&component.finish()).unwrap();
        assert_eq!(info.imports.len(), 2);
        assert_eq!(info.imports[0].kind, ItemKind::Type);
        assert_eq!(info.imports[1].kind, ItemKind::Resource);
        assert_eq!(info.forbidden_imports(), ["handle"]);
    }

    #[test]
    fn patterns() {
        assert!(is_allowed_import("wasi:cli/terminal-stdout@0.2.6"));
        assert!(is_allowed_import("xfn:function/types@0.1.0"));
        assert!(!is_allowed_import("wasi:cli@0.2.6"));
        assert!(!is_allowed_import("wasi:cli/a/b@0.2.6"));
        assert!(!is_allowed_import("wasi:cli/exit@0.2."));
        assert!(!is_allowed_import("wasi:cli/exit"));
        assert!(!is_allowed_import("wasi:clix/exit@0.2.0"));
        assert!(!is_allowed_import("log"));
    }

    #[test]
    fn refuses_components_with_too_many_memories() {
        use crate::memories::tests::component_with_modules;
        let many = component_with_modules(&[1; 8], &[0, 1, 2, 3, 4, 5, 6, 7]).finish();
        let info = ComponentInfo::read(&many).unwrap();
        assert_eq!(info.memories, 8);
        let err = info.check_runnable("reg.example/fn:v1").unwrap_err();
        assert!(
            err.to_string().contains(
                "reg.example/fn:v1: not a usable wasm component: it creates 8 linear memories"
            ),
            "{err}"
        );
        // Pushing refuses it the same way, before anything is uploaded.
        let reference = crate::ImageRef::parse("reg.example/fn:v1").unwrap();
        let pushed = crate::build_artifact(&reference, many, &crate::PushMetadata::default());
        assert!(
            matches!(&pushed, Err(crate::Error::InvalidComponent { reason, .. }) if reason.contains("8 linear memories")),
            "{:?}",
            pushed.err()
        );
        let few = component_with_modules(&[1, 1], &[0, 1]).finish();
        assert!(
            ComponentInfo::read(&few)
                .unwrap()
                .check_runnable("r")
                .is_ok()
        );
    }

    #[test]
    fn refuses_core_modules_and_garbage() {
        let module = wasm_encoder::Module::new().finish();
        assert!(
            ComponentInfo::read(&module)
                .unwrap_err()
                .contains("core wasm module")
        );
        assert!(ComponentInfo::read(b"not wasm").is_err());
        let mut truncated = component_importing(&["wasi:io/streams@0.2.6"]);
        truncated.truncate(truncated.len() - 3);
        assert!(ComponentInfo::read(&truncated).is_err());
    }
}
