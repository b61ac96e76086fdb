//! Token counts with tiktoken's o200k encoding: exact for OpenAI's current models and a close
//! estimate for the others, whose own `usage` is what gets billed and recorded.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{LazyLock, Mutex};
use tiktoken_rs::o200k_base_singleton;

/// Counted texts, by content. Most of a turn's context is the same text every turn
/// (standing corrections and preferences, tool schemas, goals, history), and encoding
/// costs ~1 µs per token while hashing costs ~1 ns per byte.
static COUNTS: LazyLock<Mutex<HashMap<(u64, usize), usize>>> = LazyLock::new(Default::default);

/// Far above one turn's distinct texts; past it the cache starts over rather than grow.
const COUNTS_MAX: usize = 50_000;

pub fn count(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    let mut h = DefaultHasher::new();
    text.hash(&mut h);
    let key = (h.finish(), text.len());
    if let Some(&n) = lock_counts().get(&key) {
        return n;
    }
    let n = o200k_base_singleton().encode_ordinary(text).len();
    let mut counts = lock_counts();
    if counts.len() >= COUNTS_MAX {
        counts.clear();
    }
    counts.insert(key, n);
    n
}

fn lock_counts() -> std::sync::MutexGuard<'static, HashMap<(u64, usize), usize>> {
    // A panic elsewhere while holding it leaves only plain counts behind.
    COUNTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Build the encoder ahead of the first turn (it takes ~100 ms), e.g. on a worker thread at startup.
pub fn warm_up() {
    let _ = count("warm up");
}

/// The longest prefix of `text` (cut at a line end when possible) that fits `budget` tokens.
pub fn truncate(text: &str, budget: usize) -> &str {
    if budget == 0 {
        return "";
    }
    let bpe = o200k_base_singleton();
    let tokens = bpe.encode_ordinary(text);
    if tokens.len() <= budget {
        return text;
    }
    let kept = bpe.decode(&tokens[..budget]).unwrap_or_default();
    // Decoding a prefix can end mid-character; fall back to the nearest char boundary.
    let mut end = kept.len().min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = &text[..end];
    match cut.rfind('\n') {
        Some(nl) if nl > end / 2 => &text[..nl + 1],
        _ => cut,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cached_count_is_the_encoders_count() {
        for text in [
            "fn main() {}",
            "Always answer in French",
            "日本語のテキスト 🦀",
            "fn main() {}",
        ] {
            let fresh = o200k_base_singleton().encode_ordinary(text).len();
            assert_eq!(count(text), fresh, "{text}");
            assert_eq!(count(text), fresh, "{text} (second time, from the cache)");
        }
        // Same length, different text: different counts, never each other's.
        assert_ne!(count("aaaaaaaa"), count("a b c d "));
    }
}
