//! The last gate before the wire: every text a request carries passes [`crate::redact`] once
//! more, whatever built it (turns, summaries, previews). Callers redact what they store; this
//! makes sure nothing they missed (an old row, a new context source) leaves the machine.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::{LazyLock, Mutex};

use crate::redact::{redact_json, redact_with};

use super::{Item, Request};

impl Request {
    /// Every text redacted; `known` are literal secrets (the configured API key). Borrowed
    /// when nothing needed it, which is every call but the rare one carrying a secret: a
    /// copy of a turn's whole history was a fifth of Mira's own time to first token.
    /// Redaction is idempotent and deterministic, so cached prefixes stay byte-identical.
    pub fn redacted(&self, known: &[&str]) -> Cow<'_, Request> {
        let changes = |t: &str| matches!(redact_remembering_clean(t, known), Cow::Owned(_));
        let item_changes = |i: &Item| match i {
            Item::User(t) | Item::Assistant(t) => changes(t),
            Item::Reasoning(x) => changes(&x.text),
            Item::ToolCall(c) => matches!(redact_json(&c.arguments, known), Cow::Owned(_)),
            Item::ToolResult(x) => changes(&x.content),
        };
        if changes(&self.system) || self.items.iter().any(item_changes) {
            Cow::Owned(self.redacted_copy(known))
        } else {
            Cow::Borrowed(self)
        }
    }

    fn redacted_copy(&self, known: &[&str]) -> Request {
        let r = |t: &str| -> String {
            match redact_remembering_clean(t, known) {
                Cow::Borrowed(_) => t.to_string(),
                Cow::Owned(o) => o,
            }
        };
        let items = self
            .items
            .iter()
            .map(|i| match i {
                Item::User(t) => Item::User(r(t)),
                Item::Assistant(t) => Item::Assistant(r(t)),
                Item::Reasoning(x) => {
                    let mut x = x.clone();
                    x.text = r(&x.text);
                    Item::Reasoning(x)
                }
                Item::ToolCall(c) => {
                    let mut c = c.clone();
                    // The marker has no quotes or backslashes, so JSON arguments stay valid.
                    c.arguments = redact_json(&c.arguments, known).into_owned();
                    Item::ToolCall(c)
                }
                Item::ToolResult(x) => {
                    let mut x = x.clone();
                    x.content = r(&x.content);
                    Item::ToolResult(x)
                }
            })
            .collect();
        Request {
            system: r(&self.system),
            items,
            tools: self.tools.clone(),
            effort: self.effort,
        }
    }
}

/// Texts this process already scanned and found clean, by a BLAKE3 digest of the known
/// secrets and the text. Every turn sends the whole history again and scanning it was the
/// largest part of building a request; a clean text stays clean because the rules are
/// fixed for the life of the process. A 256-bit digest, not a 64-bit hash: a collision here
/// would let a text through unscanned.
static CLEAN: LazyLock<Mutex<HashSet<[u8; 32]>>> = LazyLock::new(Default::default);

/// Far above a conversation's distinct texts; past it the set starts over rather than grow.
const CLEAN_MAX: usize = 100_000;

/// Below this, scanning costs about what hashing does.
const CLEAN_MIN_BYTES: usize = 512;

fn redact_remembering_clean<'a>(text: &'a str, known: &[&str]) -> Cow<'a, str> {
    if text.len() < CLEAN_MIN_BYTES {
        return redact_with(text, known);
    }
    let mut h = blake3::Hasher::new();
    for k in known {
        h.update(&(k.len() as u64).to_le_bytes());
        h.update(k.as_bytes());
    }
    h.update(text.as_bytes());
    let digest = *h.finalize().as_bytes();
    let clean = || CLEAN.lock().unwrap_or_else(|e| e.into_inner());
    if clean().contains(&digest) {
        return Cow::Borrowed(text);
    }
    let out = redact_with(text, known);
    if let Cow::Borrowed(_) = out {
        let mut set = clean();
        if set.len() >= CLEAN_MAX {
            set.clear();
        }
        set.insert(digest);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn long(extra: &str) -> String {
        format!(
            "{}{extra}",
            "the history of a long conversation about billing. ".repeat(20)
        )
    }

    #[test]
    fn a_text_found_clean_is_passed_and_a_secret_is_redacted_every_time() {
        let clean = long("nothing to hide");
        for _ in 0..2 {
            assert!(matches!(
                redact_remembering_clean(&clean, &[]),
                Cow::Borrowed(_)
            ));
        }
        let secret = long("AWS key AKIAIOSFODNN7EXAMPLE in the paste");
        for _ in 0..2 {
            let out = redact_remembering_clean(&secret, &[]);
            assert!(!out.contains("AKIAIOSFODNN7EXAMPLE"), "{out}");
        }
    }

    #[test]
    fn clean_without_a_key_is_not_clean_with_it() {
        // A configured key need not look like a secret to the rules.
        let text = long("the word is correct-horse-battery-staple");
        assert!(matches!(
            redact_remembering_clean(&text, &[]),
            Cow::Borrowed(_)
        ));
        let out = redact_remembering_clean(&text, &["correct-horse-battery-staple"]);
        assert!(!out.contains("correct-horse-battery-staple"), "{out}");
    }

    fn request(secret_in_result: &str) -> Request {
        Request {
            system: long("system prompt"),
            items: vec![
                Item::User("what does the billing job do?".into()),
                Item::ToolCall(crate::llm::ToolCall {
                    id: "c1".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"src/billing.rs"}"#.into(),
                }),
                Item::ToolResult(crate::llm::ToolResult {
                    call_id: "c1".into(),
                    content: long(secret_in_result),
                    is_error: false,
                }),
                Item::Assistant(long("It bills.")),
            ],
            tools: Vec::new(),
            effort: None,
        }
    }

    /// A clean request goes out as it is (no copy of the history); one secret anywhere gets
    /// a copy with that text redacted and every other text unchanged.
    #[test]
    fn a_clean_request_is_borrowed_and_a_secret_is_redacted_in_a_copy() {
        let clean = request("fn bill() {}");
        assert!(matches!(clean.redacted(&["sk-live-key"]), Cow::Borrowed(_)));
        let dirty = request("let key = \"sk-live-key\";");
        let out = dirty.redacted(&["sk-live-key"]);
        let Cow::Owned(out) = out else {
            panic!("a request carrying the key was not copied")
        };
        let Item::ToolResult(r) = &out.items[2] else {
            panic!("items moved")
        };
        assert!(!r.content.contains("sk-live-key"), "{}", r.content);
        assert_eq!(out.system, dirty.system);
        assert_eq!(out.items[3], dirty.items[3]);
    }
}
