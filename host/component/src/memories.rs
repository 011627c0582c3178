//! Counting the linear memories a component creates when it is
//! instantiated, without compiling it.
//!
//! A component may embed several core modules, each with a memory of its
//! own, and may instantiate a module (or a nested component) more than once.
//! The host caps a call's memories ([`MAX_MEMORIES`]) and refuses a component
//! over the cap before it is published or run. The count here is an upper
//! bound: a module or component whose memory count can't be known from the
//! binary alone counts as the largest one in scope.

use wasmparser::{
    ComponentAlias, ComponentExternalKind, ComponentInstance, ComponentOuterAliasKind,
    ComponentTypeRef, Encoding, Instance, Payload,
};

/// Most linear memories one instance of a function component may create.
/// A Rust `wasm32-wasip2` component has one; an adapter may add one more.
pub const MAX_MEMORIES: u64 = 4;

/// One level of nesting: a component, or a core module inside one.
#[derive(Default)]
struct Level {
    /// Memories a module defines (for a module level).
    defined: u64,
    /// Memories each module in this component's module index space creates,
    /// or `None` where the binary doesn't say (imports, instance exports).
    modules: Vec<Option<u64>>,
    /// The same for the component index space.
    components: Vec<Option<u64>>,
    /// Memories this component's instantiations create.
    created: u64,
    is_module: bool,
}

impl Level {
    fn worst_module(&self) -> u64 {
        self.modules.iter().flatten().copied().max().unwrap_or(0)
    }

    fn worst_component(&self) -> u64 {
        self.components.iter().flatten().copied().max().unwrap_or(0)
    }
}

/// Most tables one instance of a function component may create (the
/// host's pool holds as many for every call).
pub const MAX_TABLES: u64 = 16;

/// What a [`MemoryCounter`] counts: the items a core module defines in one
/// kind of section.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Counted {
    /// Linear memories (the memory section).
    #[default]
    Memories,
    /// Tables (the table section).
    Tables,
}

/// Walks a component's payloads (from `Parser::parse_all`) and adds up the
/// memories (or tables) its instantiation creates.
#[derive(Default)]
pub(crate) struct MemoryCounter {
    counted: Counted,
    levels: Vec<Level>,
    total: u64,
}

impl MemoryCounter {
    /// A counter of `counted`.
    pub(crate) fn new(counted: Counted) -> MemoryCounter {
        MemoryCounter {
            counted,
            ..MemoryCounter::default()
        }
    }

    /// Memories the whole component creates, once every payload was seen.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// Takes in one payload.
    pub(crate) fn payload(&mut self, payload: &Payload<'_>) -> Result<(), String> {
        match payload {
            Payload::Version { encoding, .. } => self.levels.push(Level {
                is_module: *encoding == Encoding::Module,
                ..Level::default()
            }),
            Payload::End(_) => self.end(),
            Payload::MemorySection(reader) if self.counted == Counted::Memories => {
                self.define(reader.count());
            }
            Payload::TableSection(reader) if self.counted == Counted::Tables => {
                self.define(reader.count());
            }
            Payload::ComponentImportSection(reader) => {
                for import in reader.clone() {
                    let import = import.map_err(|e| format!("malformed import: {e}"))?;
                    match import.ty {
                        ComponentTypeRef::Module(_) => self.current()?.modules.push(None),
                        ComponentTypeRef::Component(_) => self.current()?.components.push(None),
                        _ => {}
                    }
                }
            }
            Payload::ComponentAliasSection(reader) => {
                for alias in reader.clone() {
                    let alias = alias.map_err(|e| format!("malformed alias: {e}"))?;
                    self.alias(alias)?;
                }
            }
            Payload::InstanceSection(reader) => {
                for instance in reader.clone() {
                    let instance = instance.map_err(|e| format!("malformed instance: {e}"))?;
                    if let Instance::Instantiate { module_index, .. } = instance {
                        let level = self.current()?;
                        let memories = lookup(&level.modules, module_index)
                            .unwrap_or_else(|| level.worst_module());
                        level.created = level.created.saturating_add(memories);
                    }
                }
            }
            Payload::ComponentInstanceSection(reader) => {
                for instance in reader.clone() {
                    let instance = instance.map_err(|e| format!("malformed instance: {e}"))?;
                    if let ComponentInstance::Instantiate {
                        component_index, ..
                    } = instance
                    {
                        let level = self.current()?;
                        let memories = lookup(&level.components, component_index)
                            .unwrap_or_else(|| level.worst_component());
                        level.created = level.created.saturating_add(memories);
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Adds `count` items the module being read defines.
    fn define(&mut self, count: u32) {
        if let Some(level) = self.levels.last_mut() {
            level.defined = level.defined.saturating_add(u64::from(count));
        }
    }

    /// The innermost component being read.
    fn current(&mut self) -> Result<&mut Level, String> {
        self.levels
            .last_mut()
            .filter(|l| !l.is_module)
            .ok_or_else(|| String::from("malformed wasm: a component section outside a component"))
    }

    fn alias(&mut self, alias: ComponentAlias<'_>) -> Result<(), String> {
        match alias {
            ComponentAlias::Outer { kind, count, index } => {
                let depth = self.levels.len();
                let outer = usize::try_from(count)
                    .ok()
                    .and_then(|c| depth.checked_sub(c + 1))
                    .and_then(|i| self.levels.get(i));
                let resolved = match kind {
                    ComponentOuterAliasKind::CoreModule => {
                        Some(outer.and_then(|l| lookup(&l.modules, index)))
                    }
                    ComponentOuterAliasKind::Component => {
                        Some(outer.and_then(|l| lookup(&l.components, index)))
                    }
                    _ => None,
                };
                if let Some(memories) = resolved {
                    let level = self.current()?;
                    match kind {
                        ComponentOuterAliasKind::CoreModule => level.modules.push(memories),
                        _ => level.components.push(memories),
                    }
                }
            }
            ComponentAlias::InstanceExport { kind, .. } => match kind {
                ComponentExternalKind::Module => self.current()?.modules.push(None),
                ComponentExternalKind::Component => self.current()?.components.push(None),
                _ => {}
            },
            ComponentAlias::CoreInstanceExport { .. } => {}
        }
        Ok(())
    }

    /// Closes the innermost level and records what it creates in its parent.
    fn end(&mut self) {
        let Some(level) = self.levels.pop() else {
            return;
        };
        let memories = if level.is_module {
            level.defined
        } else {
            level.created
        };
        match self.levels.last_mut() {
            Some(parent) if level.is_module => parent.modules.push(Some(memories)),
            Some(parent) => parent.components.push(Some(memories)),
            // A lone core module, read as the top level, creates its own.
            None => self.total = memories,
        }
    }
}

fn lookup(space: &[Option<u64>], index: u32) -> Option<u64> {
    usize::try_from(index)
        .ok()
        .and_then(|i| space.get(i))
        .copied()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::component_with_modules;
    use wasm_encoder::{Component, NestedComponentSection};

    fn count(bytes: &[u8]) -> u64 {
        let mut counter = MemoryCounter::default();
        for payload in wasmparser::Parser::new(0).parse_all(bytes) {
            counter.payload(&payload.unwrap()).unwrap();
        }
        counter.total()
    }

    #[test]
    fn counts_memories_of_each_instantiation() {
        assert_eq!(count(&component_with_modules(&[1], &[0]).finish()), 1);
        assert_eq!(
            count(&component_with_modules(&[1, 0, 2], &[0, 1, 2]).finish()),
            3
        );
        // A module instantiated again creates its memories again.
        assert_eq!(
            count(&component_with_modules(&[1], &[0, 0, 0, 0, 0]).finish()),
            5
        );
        // A module that is never instantiated creates none.
        assert_eq!(count(&component_with_modules(&[3], &[]).finish()), 0);
    }

    #[test]
    fn counts_nested_components_per_instantiation() {
        let inner = component_with_modules(&[2], &[0]);
        let mut outer = Component::new();
        outer.section(&NestedComponentSection(&inner));
        let mut instances = wasm_encoder::ComponentInstanceSection::new();
        for _ in 0..3 {
            instances.instantiate(
                0,
                Vec::<(&str, wasm_encoder::ComponentExportKind, u32)>::new(),
            );
        }
        outer.section(&instances);
        assert_eq!(count(&outer.finish()), 6);
    }

    #[test]
    fn unknown_modules_count_as_the_largest_in_scope() {
        // Index 5 doesn't exist: the bound assumes the worst module (2).
        assert_eq!(count(&component_with_modules(&[1, 2], &[5]).finish()), 2);
    }
}
