//! How much source the crawl's parsers hold at once. A parse tree costs about 60× its source
//! (a 900 KB generated Go file: 60 MB while it is parsed and walked), so the crawl's peak
//! memory follows the bytes being parsed at one moment, not the number of files. With one
//! parser per core and nothing else, 16 threads on a folder of generated 1 MB files peaked at
//! 520 MB where 2 threads peaked at 300 MB. The budget admits a file while its bytes fit; a
//! file larger than the whole budget goes alone, so no file waits forever.

use std::sync::{Condvar, Mutex};

/// Source bytes parsed at once, at most: two files at the default `index.max_file_bytes`
/// (1 MiB), so two parsers never wait for each other and more threads add parallelism only
/// where files are small, which is where the time goes.
pub(crate) const PARSE_BYTES: u64 = 2 << 20;

pub(crate) struct SourceBudget {
    cap: u64,
    used: Mutex<u64>,
    freed: Condvar,
}

/// Room for one file's parse; given back when dropped.
pub(crate) struct Ticket<'a> {
    budget: &'a SourceBudget,
    bytes: u64,
}

impl SourceBudget {
    pub const fn new(cap: u64) -> Self {
        SourceBudget {
            cap,
            used: Mutex::new(0),
            freed: Condvar::new(),
        }
    }

    /// Waits until `bytes` fit beside the files being parsed (at once when none is).
    pub fn take(&self, bytes: u64) -> Ticket<'_> {
        let bytes = bytes.min(self.cap);
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        while *used > 0 && *used + bytes > self.cap {
            used = self.freed.wait(used).unwrap_or_else(|e| e.into_inner());
        }
        *used += bytes;
        Ticket {
            budget: self,
            bytes,
        }
    }

    #[cfg(test)]
    fn used(&self) -> u64 {
        *self.used.lock().unwrap()
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        let mut used = self.budget.used.lock().unwrap_or_else(|e| e.into_inner());
        *used -= self.bytes;
        drop(used);
        self.budget.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    #[test]
    fn a_file_larger_than_the_budget_goes_alone_and_small_ones_share() {
        let b = SourceBudget::new(100);
        let big = b.take(1_000);
        assert_eq!(b.used(), 100, "a file past the cap takes the whole budget");
        drop(big);
        let t1 = b.take(40);
        let t2 = b.take(60);
        assert_eq!(b.used(), 100);
        drop((t1, t2));
        assert_eq!(b.used(), 0);
    }

    /// Sixteen threads taking random sizes never hold more than the cap between them, and
    /// every one of them finishes.
    #[test]
    fn many_threads_never_hold_more_than_the_cap() {
        let b = SourceBudget::new(1_000);
        let held = AtomicU64::new(0);
        let peak = AtomicU64::new(0);
        std::thread::scope(|s| {
            for t in 0..16u64 {
                let (b, held, peak) = (&b, &held, &peak);
                s.spawn(move || {
                    let mut x = t * 7919 + 1;
                    for _ in 0..200 {
                        x = x
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        let size = (x >> 33) % 1_500;
                        let ticket = b.take(size);
                        let now = held.fetch_add(ticket.bytes, Ordering::SeqCst) + ticket.bytes;
                        peak.fetch_max(now, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_micros(50));
                        held.fetch_sub(ticket.bytes, Ordering::SeqCst);
                    }
                });
            }
        });
        assert!(peak.load(Ordering::SeqCst) <= 1_000, "peak {peak:?}");
        assert!(peak.load(Ordering::SeqCst) > 0);
        assert_eq!(b.used(), 0);
    }
}
