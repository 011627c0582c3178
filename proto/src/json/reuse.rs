//! Buffers kept between conversions, so that a steady stream of calls of
//! similar size stops allocating them: each thread's index of the map
//! entries that Struct → JSON sorts, and a [`TextPool`] of JSON text
//! buffers that a server gives back once a function has read them.
//!
//! What is kept is bounded: a buffer past a bound is dropped instead.

use std::cell::Cell;
use std::sync::Mutex;

use super::to_json::Entry;

/// Most bytes of sort index one thread keeps.
pub(super) const MAX_KEPT_INDEX_BYTES: usize = 1 << 20;

thread_local! {
    static INDEX: Cell<Vec<Entry>> = const { Cell::new(Vec::new()) };
}

/// This thread's sort index, empty (a new one if none is kept).
pub(super) fn take_index() -> Vec<Entry> {
    INDEX.try_with(Cell::take).unwrap_or_default()
}

/// Keeps `index` for this thread's next conversion, if it is within
/// [`MAX_KEPT_INDEX_BYTES`].
pub(super) fn keep_index(mut index: Vec<Entry>) {
    if index.capacity() * size_of::<Entry>() <= MAX_KEPT_INDEX_BYTES {
        index.clear();
        let _ = INDEX.try_with(|kept| kept.set(index));
    }
}

/// Entries this thread's kept sort index has room for.
#[cfg(test)]
pub(super) fn kept_index_capacity() -> usize {
    let index = take_index();
    let capacity = index.capacity();
    keep_index(index);
    capacity
}

/// Spare buffers for JSON text, shared by the threads that convert: text
/// written with [`JsonStruct::into_json_in`](super::JsonStruct::into_json_in)
/// goes into one, and [`TextPool::give_back`] returns it once read. A
/// server's calls may end on another thread than the one that converted
/// their request, so the pool is one for all threads, not one per thread.
#[derive(Debug)]
pub struct TextPool {
    max_bytes: usize,
    max_buffers: usize,
    spares: Mutex<Spares>,
}

/// Spare buffers, empty, and the sum of their capacities.
#[derive(Debug, Default)]
struct Spares {
    buffers: Vec<Vec<u8>>,
    bytes: usize,
}

impl TextPool {
    /// The bytes a [`TextPool::default`] keeps at most, over all its
    /// buffers: room for a few requests of several MiB.
    pub const DEFAULT_MAX_BYTES: usize = 16 << 20;

    /// The buffers a [`TextPool::default`] keeps at most.
    pub const DEFAULT_MAX_BUFFERS: usize = 256;

    /// A pool keeping at most `max_bytes` of buffers (the sum of their
    /// capacities), and at most `max_buffers` of them.
    pub fn new(max_bytes: usize, max_buffers: usize) -> TextPool {
        TextPool {
            max_bytes,
            max_buffers,
            spares: Mutex::new(Spares::default()),
        }
    }

    /// An empty buffer for JSON text of about `size` bytes: the smallest
    /// spare one that holds it, else the largest spare one, else a new one.
    pub(super) fn take(&self, size: usize) -> Vec<u8> {
        let spare = {
            let mut spares = self.lock();
            let fitting = (spares.buffers.iter().enumerate())
                .filter(|(_, b)| b.capacity() >= size)
                .min_by_key(|(_, b)| b.capacity());
            let pick = fitting
                .or_else(|| {
                    spares
                        .buffers
                        .iter()
                        .enumerate()
                        .max_by_key(|(_, b)| b.capacity())
                })
                .map(|(i, _)| i);
            pick.map(|i| {
                let buffer = spares.buffers.swap_remove(i);
                spares.bytes -= buffer.capacity();
                buffer
            })
        };
        let mut buffer = spare.unwrap_or_default();
        buffer.reserve(size);
        buffer
    }

    /// Keeps `text`'s buffer for the next conversion, unless that would
    /// pass the pool's bounds.
    pub fn give_back(&self, text: String) {
        let mut buffer = text.into_bytes();
        if buffer.capacity() == 0 {
            return;
        }
        buffer.clear();
        let mut spares = self.lock();
        let bytes = spares.bytes.saturating_add(buffer.capacity());
        if spares.buffers.len() < self.max_buffers && bytes <= self.max_bytes {
            spares.bytes = bytes;
            spares.buffers.push(buffer);
        }
    }

    /// The spare buffers kept now: the sum of their capacities in bytes,
    /// and how many there are.
    pub fn spare(&self) -> (usize, usize) {
        let spares = self.lock();
        (spares.bytes, spares.buffers.len())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Spares> {
        // The lock is held only to move buffers in and out of a list,
        // which leaves it consistent even if a thread panicked.
        self.spares.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Default for TextPool {
    fn default() -> TextPool {
        TextPool::new(Self::DEFAULT_MAX_BYTES, Self::DEFAULT_MAX_BUFFERS)
    }
}
