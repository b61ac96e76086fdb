//! At most one completion in flight per document: a newer request supersedes the older one,
//! whose token is cancelled at once (its HTTP stream is dropped, its request answered empty).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

#[derive(Default)]
pub struct Flights {
    inner: Arc<Mutex<HashMap<String, (u64, CancellationToken)>>>,
    next: std::sync::atomic::AtomicU64,
}

/// A request's place in its document's flight; leaving it (drop) frees the place.
pub struct Ticket {
    doc: String,
    generation: u64,
    pub token: CancellationToken,
    inner: Arc<Mutex<HashMap<String, (u64, CancellationToken)>>>,
}

impl Flights {
    /// Take the document's place, cancelling whoever had it.
    pub fn begin(&self, doc: &str) -> Ticket {
        let generation = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let token = CancellationToken::new();
        let previous = self
            .inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(doc.to_string(), (generation, token.clone()));
        if let Some((_, old)) = previous {
            old.cancel();
        }
        Ticket {
            doc: doc.to_string(),
            generation,
            token,
            inner: self.inner.clone(),
        }
    }

    /// Requests in flight now (for tests and status).
    pub fn len(&self) -> usize {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut map = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if map
            .get(&self.doc)
            .is_some_and(|(g, _)| *g == self.generation)
        {
            map.remove(&self.doc);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newer_request_cancels_the_older_one_only_in_its_document() {
        let f = Flights::default();
        let a = f.begin("x");
        let other = f.begin("y");
        let b = f.begin("x");
        assert!(a.token.is_cancelled());
        assert!(!b.token.is_cancelled() && !other.token.is_cancelled());
        drop(a);
        assert_eq!(
            f.len(),
            2,
            "the old ticket must not free the new one's place"
        );
        drop(b);
        drop(other);
        assert!(f.is_empty());
    }
}
