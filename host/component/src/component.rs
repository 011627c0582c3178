//! Reading what a wasm component imports and exports, and refusing a
//! component that imports anything the host doesn't provide, before any of
//! it is compiled.

use std::fmt;

use crate::memories::{Counted, MAX_MEMORIES, MAX_TABLES, MemoryCounter};
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

/// Most functions a component's core modules may define together: 100,000.
/// Compiling costs memory for every function, whatever its size: measured
/// with wasmtime 50, 100,000 empty functions take 536 MB and 2.5 s to
/// compile, 300,000 take 1.6 GB (a million took every host past 4 GB). A
/// real function component defines a few thousand
/// (function-patch-and-transform 1,895, in 1.4 MB of code).
pub const MAX_FUNCTIONS: u64 = 100_000;

/// Most bytes of code a component's core modules may hold together: 32 MiB.
/// Compiling costs memory in proportion to the code; a real function
/// component holds a few MiB at most.
pub const MAX_CODE_BYTES: u64 = 32 << 20;

/// The largest component file xfn reads: 256 MiB, as much as a pulled
/// package may unpack to.
pub const MAX_COMPONENT_BYTES: u64 = 256 << 20;

/// Why the host would not run a component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotRunnable {
    /// It imports these interfaces, which are outside [`ALLOWED_IMPORTS`].
    ForbiddenImports(Vec<String>),
    /// It needs more than the sandbox gives (memories, tables, functions or
    /// code); the text says what.
    TooLarge(String),
}

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
    /// How many tables one instance creates (an upper bound).
    pub tables: u64,
    /// How many functions its core modules define, in all.
    pub functions: u64,
    /// How many bytes of code its core modules hold, in all.
    pub code_bytes: u64,
}

impl ComponentInfo {
    /// Reads the top-level imports and exports of a component binary.
    /// A core module, or bytes that are not wasm, are an error.
    pub fn read(bytes: &[u8]) -> Result<ComponentInfo, String> {
        let mut info = ComponentInfo::default();
        let mut depth = 0usize;
        let mut memories = MemoryCounter::new(Counted::Memories);
        let mut tables = MemoryCounter::new(Counted::Tables);
        for payload in Parser::new(0).parse_all(bytes) {
            let payload = payload.map_err(|e| format!("malformed wasm: {e}"))?;
            memories.payload(&payload)?;
            tables.payload(&payload)?;
            match payload {
                Payload::FunctionSection(reader) => {
                    info.functions = info.functions.saturating_add(u64::from(reader.count()));
                }
                Payload::CodeSectionStart { size, .. } => {
                    info.code_bytes = info.code_bytes.saturating_add(u64::from(size));
                }
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
        info.tables = tables.total();
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
    ///
    /// It also refuses a component too large to compile within bounded
    /// memory: more than [`MAX_FUNCTIONS`] functions or [`MAX_CODE_BYTES`]
    /// of code. `push`, `pull` and every host apply the same check, so a
    /// package `push` accepts is one every host can load.
    pub fn sandbox_problem(&self) -> Option<String> {
        if self.memories > MAX_MEMORIES {
            return Some(format!(
                "it creates {} linear memories when instantiated; a function may have at most {MAX_MEMORIES}",
                self.memories
            ));
        }
        if self.tables > MAX_TABLES {
            return Some(format!(
                "it creates {} tables when instantiated; a function may have at most {MAX_TABLES}",
                self.tables
            ));
        }
        if self.functions > MAX_FUNCTIONS {
            return Some(format!(
                "its core modules define {} functions; xfn compiles at most {MAX_FUNCTIONS}, \
                 since compiling costs memory for every function",
                self.functions
            ));
        }
        if self.code_bytes > MAX_CODE_BYTES {
            return Some(format!(
                "its core modules hold {} bytes of code; xfn compiles at most {MAX_CODE_BYTES} ({} MiB)",
                self.code_bytes,
                MAX_CODE_BYTES >> 20
            ));
        }
        None
    }

    /// Why the host would not run this component, if it wouldn't: imports
    /// outside xfn's world, or more than the sandbox allows.
    pub fn not_runnable(&self) -> Option<NotRunnable> {
        let forbidden = self.forbidden_imports();
        if !forbidden.is_empty() {
            return Some(NotRunnable::ForbiddenImports(forbidden));
        }
        self.sandbox_problem().map(NotRunnable::TooLarge)
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

/// The WASI 0.2 interfaces the host links, by package (wasmtime-wasi's
/// `p2` world; `wasi:cli/run` is an export, and `wasi:clocks/timezone` is
/// not linked).
const WASI_INTERFACES: &[(&str, &[&str])] = &[
    (
        "wasi:cli",
        &[
            "environment",
            "exit",
            "stdin",
            "stdout",
            "stderr",
            "terminal-input",
            "terminal-output",
            "terminal-stdin",
            "terminal-stdout",
            "terminal-stderr",
        ],
    ),
    ("wasi:clocks", &["monotonic-clock", "wall-clock"]),
    ("wasi:filesystem", &["types", "preopens"]),
    ("wasi:io", &["error", "poll", "streams"]),
    ("wasi:random", &["random", "insecure", "insecure-seed"]),
    (
        "wasi:sockets",
        &[
            "network",
            "instance-network",
            "ip-name-lookup",
            "tcp",
            "tcp-create-socket",
            "udp",
            "udp-create-socket",
        ],
    ),
];

/// The newest WASI 0.2 release the host links (0.2.12): an import of a
/// later one can't be linked, and one of an earlier one can.
const WASI_LATEST_PATCH: u64 = 12;

/// Whether [`ALLOWED_IMPORTS`] admits the import `name` and the host links
/// it: a WASI import must name an interface the host has, at a version no
/// newer than its own.
pub fn is_allowed_import(name: &str) -> bool {
    ALLOWED_IMPORTS.iter().any(|p| pattern_matches(p, name))
        && (!name.starts_with("wasi:") || wasi_is_linked(name))
}

fn wasi_is_linked(name: &str) -> bool {
    let Some((path, version)) = name.split_once('@') else {
        return false;
    };
    let Some((package, interface)) = path.split_once('/') else {
        return false;
    };
    let known = WASI_INTERFACES
        .iter()
        .any(|(p, interfaces)| *p == package && interfaces.contains(&interface));
    let patch = version
        .strip_prefix("0.2.")
        .and_then(|patch| patch.parse::<u64>().ok());
    known && patch.is_some_and(|patch| patch <= WASI_LATEST_PATCH)
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

    /// The attack round's low finding: `wasi:cli/evil@0.2.0` matched
    /// `wasi:cli/*@0.2.*`, so push and inspect accepted a component no
    /// host can link.
    #[test]
    fn wasi_imports_must_name_an_interface_the_host_links() {
        assert!(!is_allowed_import("wasi:cli/evil@0.2.0"));
        assert!(!is_allowed_import("wasi:cli/run@0.2.0"));
        assert!(!is_allowed_import("wasi:clocks/timezone@0.2.6"));
        assert!(!is_allowed_import("wasi:io/streams@0.2.13"));
        assert!(!is_allowed_import("wasi:io/streams@0.2.x"));
        assert!(is_allowed_import("wasi:io/streams@0.2.0"));
        assert!(is_allowed_import("wasi:io/streams@0.2.12"));
        assert!(is_allowed_import("wasi:sockets/tcp-create-socket@0.2.3"));
        let info = ComponentInfo::read(&component_importing(&["wasi:cli/evil@0.2.0"])).unwrap();
        assert_eq!(
            info.not_runnable(),
            Some(NotRunnable::ForbiddenImports(vec![
                "wasi:cli/evil@0.2.0".into()
            ]))
        );
    }

    use crate::testing::component_with_functions;

    /// The attack round's H3: a component of a million empty functions
    /// passed push and pull, and compiling it took every host past 4 GB.
    #[test]
    fn components_too_large_to_compile_are_refused_before_compiling() {
        let info = ComponentInfo::read(&component_with_functions(3, 0)).unwrap();
        assert_eq!((info.functions, info.code_bytes), (3, 9));
        assert_eq!(info.sandbox_problem(), None);

        let at_limit = component_with_functions(MAX_FUNCTIONS as u32, 0);
        let info = ComponentInfo::read(&at_limit).unwrap();
        assert_eq!(info.functions, MAX_FUNCTIONS);
        assert_eq!(info.sandbox_problem(), None);

        let over = component_with_functions(MAX_FUNCTIONS as u32 + 1, 0);
        let info = ComponentInfo::read(&over).unwrap();
        let problem = info.sandbox_problem().unwrap_or_default();
        assert!(
            problem.contains("define 100001 functions; xfn compiles at most 100000"),
            "{problem}"
        );
        assert_eq!(info.not_runnable(), Some(NotRunnable::TooLarge(problem)));

        let info = ComponentInfo {
            code_bytes: MAX_CODE_BYTES + 1,
            ..ComponentInfo::default()
        };
        assert!(
            info.sandbox_problem()
                .is_some_and(|p| p.contains("xfn compiles at most 33554432 (32 MiB)"))
        );
    }

    /// The attack round's low finding: a module with 2 tables passed push
    /// and inspect but was refused at load. Tables are now counted as
    /// memories are, and the host's pool takes up to the cap per module.
    #[test]
    fn tables_are_counted_and_capped() {
        let info = ComponentInfo::read(&component_with_functions(1, 2)).unwrap();
        assert_eq!(info.tables, 2);
        assert_eq!(info.sandbox_problem(), None);
        let info = ComponentInfo::read(&component_with_functions(1, 17)).unwrap();
        assert!(
            info.sandbox_problem()
                .is_some_and(|p| p.contains("creates 17 tables")),
            "{:?}",
            info.sandbox_problem()
        );
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
        use crate::testing::component_with_modules;
        let many = component_with_modules(&[1; 8], &[0, 1, 2, 3, 4, 5, 6, 7]).finish();
        let info = ComponentInfo::read(&many).unwrap();
        assert_eq!(info.memories, 8);
        assert!(
            matches!(info.not_runnable(), Some(NotRunnable::TooLarge(reason)) if reason.contains("it creates 8 linear memories")),
            "{:?}",
            info.not_runnable()
        );
        let few = component_with_modules(&[1, 1], &[0, 1]).finish();
        assert!(ComponentInfo::read(&few).unwrap().not_runnable().is_none());
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
