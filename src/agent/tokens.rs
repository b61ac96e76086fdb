//! Token counts with tiktoken's o200k encoding: exact for OpenAI's current models and a close
//! estimate for the others, whose own `usage` is what gets billed and recorded.

use tiktoken_rs::o200k_base_singleton;

pub fn count(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    o200k_base_singleton().encode_ordinary(text).len()
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
