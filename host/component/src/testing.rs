//! Small components built in memory, for tests here and in the crates
//! that check components (`xfn-oci`'s push and pull).

use wasm_encoder::{
    Component, InstanceSection, MemorySection, MemoryType, Module, ModuleArg, ModuleSection,
};

fn module_with_memories(n: u32) -> Module {
    let mut memories = MemorySection::new();
    for _ in 0..n {
        memories.memory(MemoryType {
            minimum: 1,
            maximum: None,
            memory64: false,
            shared: false,
            page_size_log2: None,
        });
    }
    let mut module = Module::new();
    module.section(&memories);
    module
}

/// A component that embeds `modules` (each with that many memories) and
/// instantiates module `i` as many times as `instantiate` names it.
pub fn component_with_modules(modules: &[u32], instantiate: &[u32]) -> Component {
    let mut component = Component::new();
    for n in modules {
        component.section(&ModuleSection(&module_with_memories(*n)));
    }
    let mut instances = InstanceSection::new();
    for i in instantiate {
        instances.instantiate(*i, Vec::<(&str, ModuleArg)>::new());
    }
    component.section(&instances);
    component
}

/// A component of one core module with `functions` empty functions and
/// `tables` tables, instantiated once.
pub fn component_with_functions(functions: u32, tables: u32) -> Vec<u8> {
    use wasm_encoder::{
        CodeSection, Function, FunctionSection, Module, ModuleSection, RefType, TableSection,
        TableType, TypeSection,
    };
    let mut module = Module::new();
    let mut types = TypeSection::new();
    types.ty().function([], []);
    module.section(&types);
    let mut section = FunctionSection::new();
    for _ in 0..functions {
        section.function(0);
    }
    module.section(&section);
    let mut table_section = TableSection::new();
    for _ in 0..tables {
        table_section.table(TableType {
            element_type: RefType::FUNCREF,
            table64: false,
            minimum: 1,
            maximum: None,
            shared: false,
        });
    }
    module.section(&table_section);
    let mut code = CodeSection::new();
    for _ in 0..functions {
        let mut body = Function::new([]);
        body.instructions().end();
        code.function(&body);
    }
    module.section(&code);
    let mut component = Component::new();
    component.section(&ModuleSection(&module));
    let mut instances = wasm_encoder::InstanceSection::new();
    instances.instantiate(0, Vec::<(&str, wasm_encoder::ModuleArg)>::new());
    component.section(&instances);
    component.finish()
}
