//! A counting semaphore in front of the instance pool: at most as many
//! calls run at once as the pool has instance slots, and the rest wait
//! for one instead of failing.

use std::sync::{Condvar, Mutex, PoisonError};

/// Call slots; cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct Slots {
    free: Mutex<u32>,
    freed: Condvar,
}

/// A held slot, given back when dropped.
pub struct Slot<'a>(&'a Slots);

impl Slots {
    /// `count` slots (at least one).
    pub fn new(count: u32) -> Slots {
        Slots {
            free: Mutex::new(count.max(1)),
            freed: Condvar::new(),
        }
    }

    /// Waits for a free slot.
    pub fn acquire(&self) -> Slot<'_> {
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        while *free == 0 {
            free = self
                .freed
                .wait(free)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *free -= 1;
        Slot(self)
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut free = self.0.free.lock().unwrap_or_else(PoisonError::into_inner);
        *free += 1;
        self.0.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn never_more_holders_than_slots() {
        let slots = Arc::new(Slots::new(2));
        let running = Arc::new(AtomicU32::new(0));
        let peak = Arc::new(AtomicU32::new(0));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (slots, running, peak) = (slots.clone(), running.clone(), peak.clone());
                std::thread::spawn(move || {
                    let _slot = slots.acquire();
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    running.fetch_sub(1, Ordering::SeqCst);
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        assert_eq!(peak.load(Ordering::SeqCst), 2);
    }
}
