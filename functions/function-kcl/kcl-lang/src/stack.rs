//! A guard on how much native stack the interpreter uses: recursion in
//! the parser and evaluator follows the program's nesting, and a wasm
//! guest has a fixed stack (1 MiB by default), so the depth is bounded by
//! the bytes used rather than by a count of levels alone.

/// The stack the parser and evaluator may use, in bytes: 512 KiB of a wasm
/// guest's 1 MiB in optimised builds; unoptimised builds use frames many
/// times larger, so they get 6 MiB (run them on a thread with a stack of
/// 8 MiB or more, as the tests do).
pub const DEFAULT_STACK_BUDGET: usize = if cfg!(debug_assertions) {
    6 << 20
} else {
    512 << 10
};

/// An approximation of the current stack pointer.
#[inline(never)]
pub fn here() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// Bytes of stack used since `base` (stacks grow downward natively and in wasm).
pub fn used_since(base: usize) -> usize {
    base.saturating_sub(here())
}
