//! A bump allocator for guests that live for one call.
//!
//! xfn gives every call a fresh instance and throws its memory away when
//! the call returns, so a guest gains nothing from a free list: freeing is
//! work whose result is discarded. [`CallArena`] hands out memory by
//! bumping a pointer through large chunks, and gives back only the most
//! recent block (which lets growing strings and vectors stay in place).
//!
//! Chunks come from the C allocator (the [`System`] allocator), so the
//! arena shares linear memory with wasi-libc instead of fighting over it.
//! The first chunk is sized to the heap space the linker left in the
//! initial memory, so a call that fits there never grows memory: growing
//! costs the host two page-protection changes per call.
//!
//! With the default `call-arena` feature, the SDK installs the arena as
//! the global allocator of wasm builds. A function that keeps one instance
//! for many calls (not something xfn does) should turn the feature off.
//!
//! [`System`]: std::alloc::System

use core::alloc::{GlobalAlloc, Layout};
use core::cell::Cell;
use core::ptr;
use core::sync::atomic::{Ordering, compiler_fence};

/// The smallest chunk after the first.
///
/// ```
/// assert!(xfn_sdk::arena::MIN_CHUNK <= xfn_sdk::arena::MAX_CHUNK);
/// ```
pub const MIN_CHUNK: usize = 256 << 10;

/// The largest chunk taken for small blocks: chunks double up to this, so
/// the arena wastes at most this much near a memory limit.
///
/// ```
/// assert_eq!(xfn_sdk::arena::MAX_CHUNK, 16 << 20);
/// ```
pub const MAX_CHUNK: usize = 16 << 20;

/// Room left in the initial heap for wasi-libc's own allocations.
///
/// Less than a page: wasi-libc's allocator writes a header after the
/// arena's first chunk and a footer at the end of the heap, and with
/// under a page between them both land on one page, so a call faults in
/// one page fewer. The Rust code of a guest allocates from the arena;
/// what libc itself asks for beyond this grows memory.
///
/// ```
/// assert!(xfn_sdk::arena::LIBC_HEADROOM < 4096);
/// ```
pub const LIBC_HEADROOM: usize = 2 << 10;

/// Where the arena gets its chunks.
///
/// ```
/// use std::alloc::{GlobalAlloc, Layout, System};
/// use xfn_sdk::arena::{CallArena, ChunkSource};
///
/// /// Chunks from the system allocator, with no initial heap.
/// struct FromSystem;
///
/// impl ChunkSource for FromSystem {
///     fn initial_heap(&self) -> usize {
///         0
///     }
///     fn chunk(&self, bytes: usize) -> *mut u8 {
///         let layout = Layout::from_size_align(bytes, 16).unwrap();
///         unsafe { System.alloc(layout) }
///     }
/// }
///
/// let arena = CallArena::new(FromSystem);
/// let block = unsafe { arena.alloc(Layout::new::<u64>()) };
/// assert!(!block.is_null());
/// ```
pub trait ChunkSource {
    /// Bytes of heap the first chunk should take, if known.
    fn initial_heap(&self) -> usize;

    /// A block of `bytes` bytes aligned to 16, or null.
    fn chunk(&self, bytes: usize) -> *mut u8;
}

/// Chunks from the C allocator, sized by the linker's heap symbols
/// (wasm builds only).
///
/// ```
/// # #[cfg(target_arch = "wasm32")]
/// static ALLOCATOR: xfn_sdk::arena::CallArena<xfn_sdk::arena::SystemChunks> =
///     xfn_sdk::arena::CallArena::new(xfn_sdk::arena::SystemChunks);
/// ```
#[cfg(target_arch = "wasm32")]
pub struct SystemChunks;

#[cfg(target_arch = "wasm32")]
unsafe extern "C" {
    safe static __heap_base: u8;
    safe static __heap_end: u8;
}

#[cfg(target_arch = "wasm32")]
impl ChunkSource for SystemChunks {
    fn initial_heap(&self) -> usize {
        // The linker defines both symbols; only their addresses are used.
        let base = ptr::addr_of!(__heap_base) as usize;
        let end = ptr::addr_of!(__heap_end) as usize;
        end.saturating_sub(base)
    }

    fn chunk(&self, bytes: usize) -> *mut u8 {
        match Layout::from_size_align(bytes, 16) {
            // SAFETY: the layout has a non-zero size (the arena never asks
            // for an empty chunk).
            Ok(layout) => unsafe { std::alloc::System.alloc(layout) },
            Err(_) => ptr::null_mut(),
        }
    }
}

/// A bump allocator over chunks from `S`. With the `call-arena` feature
/// off, install it yourself:
///
/// ```
/// #[cfg(target_arch = "wasm32")]
/// #[global_allocator]
/// static ALLOCATOR: xfn_sdk::arena::CallArena<xfn_sdk::arena::SystemChunks> =
///     xfn_sdk::arena::CallArena::new(xfn_sdk::arena::SystemChunks);
/// ```
pub struct CallArena<S> {
    source: S,
    /// The next free byte of the current chunk.
    top: Cell<usize>,
    /// The end of the current chunk.
    end: Cell<usize>,
    /// The size of the last chunk taken (0 before the first).
    last_chunk: Cell<usize>,
    /// Written before the arena reads its state, so that its page is
    /// mapped writable from the first touch (see `CallArena::touch`).
    first_touch: Cell<bool>,
}

// SAFETY: guests are single-threaded (wasm32-wasip2 has no threads), so
// the cells are never touched from two threads.
unsafe impl<S: Sync> Sync for CallArena<S> {}

impl<S> CallArena<S> {
    /// An empty arena; it takes its first chunk on first use.
    ///
    /// ```
    /// use xfn_sdk::arena::{CallArena, ChunkSource};
    ///
    /// /// A source that has no memory to give.
    /// struct Empty;
    ///
    /// impl ChunkSource for Empty {
    ///     fn initial_heap(&self) -> usize {
    ///         0
    ///     }
    ///     fn chunk(&self, _bytes: usize) -> *mut u8 {
    ///         std::ptr::null_mut()
    ///     }
    /// }
    ///
    /// let arena = CallArena::new(Empty);
    /// let block = unsafe { std::alloc::GlobalAlloc::alloc(&arena, std::alloc::Layout::new::<u8>()) };
    /// assert!(block.is_null());
    /// ```
    pub const fn new(source: S) -> CallArena<S> {
        CallArena {
            source,
            top: Cell::new(0),
            end: Cell::new(0),
            last_chunk: Cell::new(0),
            first_touch: Cell::new(false),
        }
    }
}

impl<S: ChunkSource> CallArena<S> {
    /// Starts a new chunk with room for at least `bytes` bytes.
    fn refill(&self, bytes: usize) -> bool {
        let preferred = match self.last_chunk.get() {
            0 => self.source.initial_heap().saturating_sub(LIBC_HEADROOM),
            // Double each time (up to MAX_CHUNK), so a call takes few
            // chunks however much it allocates, and wastes little of each.
            last => last.saturating_mul(2).min(MAX_CHUNK),
        }
        .max(MIN_CHUNK)
        .max(bytes);
        // Near the memory limit, settle for less than the preferred size.
        for size in [preferred, bytes.max(MIN_CHUNK), bytes] {
            let start = self.source.chunk(size);
            if !start.is_null() {
                self.top.set(start as usize);
                self.end.set(start as usize + size);
                self.last_chunk.set(size);
                return true;
            }
        }
        false
    }

    /// Writes to the arena's own page before anything reads it.
    ///
    /// The arena's state lies in the memory image, on a page it may share
    /// with other state (wasi-libc's allocator's, in xfn's functions). A
    /// fresh instance maps that page in on first touch: a read maps it
    /// read-only, and the write after it makes the kernel copy the page and
    /// flush the TLB of every core that runs the host's threads (an
    /// interrupt to each). A write first maps a private copy at once, with
    /// no flush.
    fn touch(&self) {
        // SAFETY: a valid, aligned pointer to this arena's own cell.
        unsafe { ptr::write_volatile(self.first_touch.as_ptr(), true) };
        // Keeps the compiler from moving the reads of the state above it.
        compiler_fence(Ordering::SeqCst);
    }

    /// The aligned start of a block of `layout` at the top, if it fits.
    fn fit(&self, layout: Layout) -> Option<usize> {
        // An alignment is a power of two, so rounding up is a mask, not a
        // division.
        let mask = layout.align() - 1;
        let start = self.top.get().checked_add(mask)? & !mask;
        let end = start.checked_add(layout.size())?;
        (end <= self.end.get()).then_some(start)
    }
}

// SAFETY: blocks never overlap: each starts at or after `top`, `top` only
// moves back over the most recent block when it is freed or shrunk, and
// chunks from the source are disjoint.
unsafe impl<S: ChunkSource> GlobalAlloc for CallArena<S> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.touch();
        let start = match self.fit(layout) {
            Some(start) => start,
            None => {
                let room = layout.size().saturating_add(layout.align());
                match self.refill(room).then(|| self.fit(layout)).flatten() {
                    Some(start) => start,
                    None => return ptr::null_mut(),
                }
            }
        };
        self.top.set(start + layout.size());
        start as *mut u8
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        if block as usize + layout.size() == self.top.get() {
            self.top.set(block as usize);
        }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let at = block as usize;
        if at + layout.size() == self.top.get() {
            // The most recent block grows or shrinks in place while it
            // stays inside its chunk.
            if let Some(new_end) = at.checked_add(new_size)
                && new_end <= self.end.get()
            {
                self.top.set(new_end);
                return block;
            }
        } else if new_size <= layout.size() {
            return block;
        }
        // SAFETY: the caller guarantees `new_size` with `layout`'s
        // alignment is a valid, non-empty layout.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: as above.
        let moved = unsafe { self.alloc(new_layout) };
        if !moved.is_null() {
            // SAFETY: both blocks are live, distinct, and at least this long.
            unsafe { ptr::copy_nonoverlapping(block, moved, layout.size().min(new_size)) };
        }
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::alloc::{alloc, dealloc};
    use std::cell::RefCell;

    /// Chunks from the test's allocator, up to `budget` bytes in all,
    /// freed when the source is dropped.
    struct TestChunks {
        initial_heap: usize,
        budget: Cell<usize>,
        taken: RefCell<Vec<(*mut u8, Layout)>>,
    }

    impl TestChunks {
        fn new(initial_heap: usize, budget: usize) -> TestChunks {
            TestChunks {
                initial_heap,
                budget: Cell::new(budget),
                taken: RefCell::new(Vec::new()),
            }
        }

        fn sizes(&self) -> Vec<usize> {
            self.taken.borrow().iter().map(|(_, l)| l.size()).collect()
        }
    }

    impl ChunkSource for TestChunks {
        fn initial_heap(&self) -> usize {
            self.initial_heap
        }

        fn chunk(&self, bytes: usize) -> *mut u8 {
            if bytes > self.budget.get() {
                return ptr::null_mut();
            }
            self.budget.set(self.budget.get() - bytes);
            let layout = Layout::from_size_align(bytes, 16).unwrap();
            // SAFETY: the arena never asks for an empty chunk.
            let block = unsafe { alloc(layout) };
            self.taken.borrow_mut().push((block, layout));
            block
        }
    }

    impl Drop for TestChunks {
        fn drop(&mut self) {
            for (block, layout) in self.taken.borrow_mut().drain(..) {
                // SAFETY: allocated with this layout in `chunk`.
                unsafe { dealloc(block, layout) };
            }
        }
    }

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).unwrap()
    }

    #[test]
    fn blocks_are_aligned_and_disjoint() {
        let arena = CallArena::new(TestChunks::new(0, usize::MAX));
        unsafe {
            let a = arena.alloc(layout(3, 1));
            let b = arena.alloc(layout(8, 8));
            let c = arena.alloc(layout(100, 64));
            assert_eq!(b as usize % 8, 0);
            assert_eq!(c as usize % 64, 0);
            assert!(a as usize + 3 <= b as usize);
            assert!(b as usize + 8 <= c as usize);
            ptr::write_bytes(c, 0xab, 100);
            assert_eq!(*c.add(99), 0xab);
        }
        assert_eq!(arena.source.sizes(), [MIN_CHUNK]);
    }

    #[test]
    fn the_first_chunk_takes_the_initial_heap_less_libc_headroom() {
        let heap = 4 * MIN_CHUNK;
        let arena = CallArena::new(TestChunks::new(heap, usize::MAX));
        unsafe { arena.alloc(layout(8, 8)) };
        assert_eq!(arena.source.sizes(), [heap - LIBC_HEADROOM]);
    }

    #[test]
    fn the_latest_block_is_reused_and_resized_in_place() {
        let arena = CallArena::new(TestChunks::new(0, usize::MAX));
        unsafe {
            let a = arena.alloc(layout(16, 8));
            arena.dealloc(a, layout(16, 8));
            let b = arena.alloc(layout(16, 8));
            assert_eq!(a, b, "a freed top block is handed out again");
            let grown = arena.realloc(b, layout(16, 8), 4096);
            assert_eq!(grown, b, "the top block grows in place");
            let shrunk = arena.realloc(grown, layout(4096, 8), 32);
            assert_eq!(shrunk, b, "and shrinks in place");
            let next = arena.alloc(layout(8, 8));
            assert_eq!(next as usize, b as usize + 32, "giving the space back");
        }
    }

    #[test]
    fn blocks_below_the_top_move_with_their_contents() {
        let arena = CallArena::new(TestChunks::new(0, usize::MAX));
        unsafe {
            let a = arena.alloc(layout(4096, 8));
            ptr::write_bytes(a, 7, 4096);
            let _above = arena.alloc(layout(8, 8));
            let moved = arena.realloc(a, layout(4096, 8), 8192);
            assert_ne!(moved, a);
            assert_eq!(*moved.add(4095), 7);
            assert_eq!(arena.realloc(moved, layout(8192, 8), 10), moved);
        }
    }

    #[test]
    fn a_block_outgrowing_its_chunk_moves_to_a_bigger_one() {
        let arena = CallArena::new(TestChunks::new(0, usize::MAX));
        unsafe {
            let a = arena.alloc(layout(1000, 8));
            ptr::write_bytes(a, 3, 1000);
            let grown = arena.realloc(a, layout(1000, 8), 3 * MIN_CHUNK);
            assert_ne!(grown, a);
            assert_eq!(*grown.add(999), 3);
            ptr::write_bytes(grown, 1, 3 * MIN_CHUNK);
        }
        let sizes = arena.source.sizes();
        assert_eq!(sizes.len(), 2);
        assert!(sizes[1] >= 3 * MIN_CHUNK);
    }

    #[test]
    fn chunks_double() {
        let arena = CallArena::new(TestChunks::new(0, usize::MAX));
        unsafe {
            for _ in 0..4 {
                arena.alloc(layout(MIN_CHUNK - 64, 8));
            }
        }
        assert_eq!(
            arena.source.sizes(),
            [MIN_CHUNK, 2 * MIN_CHUNK, 4 * MIN_CHUNK]
        );
    }

    #[test]
    fn chunks_stop_doubling_at_the_cap() {
        let arena = CallArena::new(TestChunks::new(0, usize::MAX));
        unsafe {
            for _ in 0..4 {
                assert!(!arena.alloc(layout(MAX_CHUNK / 2, 8)).is_null());
            }
        }
        let sizes = arena.source.sizes();
        assert!(sizes.iter().all(|&s| s <= MAX_CHUNK), "{sizes:?}");
        assert!(sizes.contains(&MAX_CHUNK), "{sizes:?}");
    }

    #[test]
    fn near_the_limit_a_smaller_chunk_will_do() {
        // Room for a first chunk and a little more, not for a doubled one.
        let arena = CallArena::new(TestChunks::new(0, MIN_CHUNK + 8 * 1024));
        unsafe {
            assert!(!arena.alloc(layout(MIN_CHUNK - 64, 8)).is_null());
            assert!(!arena.alloc(layout(1024, 8)).is_null());
        }
        assert_eq!(arena.source.sizes(), [MIN_CHUNK, 1024 + 8]);
    }

    #[test]
    fn exhaustion_is_a_null_pointer_not_a_crash() {
        let arena = CallArena::new(TestChunks::new(0, 2 * MIN_CHUNK));
        unsafe {
            assert!(!arena.alloc(layout(MIN_CHUNK, 8)).is_null());
            assert!(arena.alloc(layout(4 * MIN_CHUNK, 8)).is_null());
            assert!(arena.alloc(layout(isize::MAX as usize - 64, 8)).is_null());
        }
    }
}
