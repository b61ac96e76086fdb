//! Recent completions, so re-typing or backspacing is instant and costs nothing: an entry
//! answers a later request whose text before the cursor is the entry's prefix plus the start
//! of its completion (the user typed what was suggested), or the same prefix again (backspace
//! and retype), with the same text after the cursor.

use std::collections::VecDeque;

/// How much of each side identifies a place: enough to be unambiguous in practice, small
/// enough to compare in microseconds.
const ANCHOR_BYTES: usize = 512;
const SUFFIX_BYTES: usize = 256;
const ENTRIES: usize = 64;

struct Entry {
    doc: String,
    anchor: String,
    suffix: String,
    completion: String,
}

#[derive(Default)]
pub struct Cache {
    entries: VecDeque<Entry>,
}

fn tail(s: &str, bytes: usize) -> &str {
    let mut i = s.len().saturating_sub(bytes);
    while !s.is_char_boundary(i) {
        i += 1;
    }
    &s[i..]
}

fn head(s: &str, bytes: usize) -> &str {
    let mut i = bytes.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    &s[..i]
}

impl Cache {
    pub fn put(&mut self, doc: &str, prefix: &str, suffix: &str, completion: &str) {
        if completion.is_empty() {
            return;
        }
        if self.entries.len() == ENTRIES {
            self.entries.pop_back();
        }
        self.entries.push_front(Entry {
            doc: doc.to_string(),
            anchor: tail(prefix, ANCHOR_BYTES).to_string(),
            suffix: head(suffix, SUFFIX_BYTES).to_string(),
            completion: completion.to_string(),
        });
    }

    /// The rest of a cached completion that fits this place, if any (never empty).
    pub fn get(&self, doc: &str, prefix: &str, suffix: &str) -> Option<String> {
        let suffix = head(suffix, SUFFIX_BYTES);
        self.entries.iter().find_map(|e| {
            if e.doc != doc || e.suffix != suffix {
                return None;
            }
            // k: how much of the completion the user has typed since (largest that fits).
            e.completion
                .char_indices()
                .map(|(i, _)| i)
                .rev()
                .find(|k| {
                    prefix.ends_with(&e.completion[..*k])
                        && prefix[..prefix.len() - k].ends_with(&e.anchor)
                })
                .map(|k| e.completion[k..].to_string())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_through_and_retyped_prefixes_hit() {
        let mut c = Cache::default();
        c.put("a", "fn main() {\n    let x", "\n}", " = compute(1);");
        assert_eq!(
            c.get("a", "fn main() {\n    let x", "\n}").as_deref(),
            Some(" = compute(1);")
        );
        assert_eq!(
            c.get("a", "fn main() {\n    let x = comp", "\n}")
                .as_deref(),
            Some("ute(1);")
        );
        assert_eq!(c.get("a", "fn main() {\n    let x = cump", "\n}"), None);
        assert_eq!(c.get("a", "fn main() {\n    let x", "\n}\n"), None);
        assert_eq!(c.get("b", "fn main() {\n    let x", "\n}"), None);
        // Fully typed: nothing left to suggest.
        assert_eq!(
            c.get("a", "fn main() {\n    let x = compute(1);", "\n}"),
            None
        );
    }
}
