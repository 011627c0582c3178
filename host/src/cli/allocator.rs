//! The binary's allocator: mimalloc, without transparent huge pages (which
//! would round an idle process's memory up to 2 MiB pages).
//!
//! Large requests allocate and free buffers of many MiB per call. glibc's
//! allocator maps and unmaps each one, faulting every page in again; with
//! mimalloc the cost of a call grows in proportion to its size.

use libmimalloc_sys as sys;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Hands memory freed by a burst of work (compiling functions) back to the
/// OS now, instead of keeping it for reuse.
pub fn release_free_memory() {
    // SAFETY: collecting is always sound; `force` makes it thorough.
    #[allow(unsafe_code)]
    unsafe {
        sys::mi_collect(true)
    };
}
