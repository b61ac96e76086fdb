//! The last gate before the wire: every text a request carries passes [`crate::redact`] once
//! more, whatever built it (turns, summaries, previews). Callers redact what they store; this
//! makes sure nothing they missed (an old row, a new context source) leaves the machine.

use std::borrow::Cow;

use crate::redact::{redact_json, redact_with};

use super::{Item, Request};

impl Request {
    /// A copy with every text redacted; `known` are literal secrets (the configured API key).
    /// Redaction is idempotent and deterministic, so cached prefixes stay byte-identical.
    pub fn redacted(&self, known: &[&str]) -> Request {
        let r = |t: &str| -> String {
            match redact_with(t, known) {
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
