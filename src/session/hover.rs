//! What hovering a symbol shows, as Markdown: its signature in a code block, its doc, its kind
//! and place, and the memories anchored to it. The adapter only wraps the text.

use std::path::Path;

use super::anchors::{Anchors, symbol_key};
use crate::index::SymbolInfo;
use crate::memory::Memory;

/// The hover text for `h`; with the project root, the memories anchored to it too.
pub async fn markdown(h: &SymbolInfo, root: Option<&Path>, anchors: &Anchors) -> String {
    let lang = crate::index::Lang::for_path(&h.path).map_or("", |l| l.name());
    let mut text = format!("```{lang}\n{}\n```", h.signature);
    if let Some(doc) = &h.doc {
        text.push_str("\n\n");
        text.push_str(doc);
    }
    let file = h
        .path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let place = match &h.container {
        Some(c) => format!("{} {c} · {file}", h.kind),
        None => format!("{} · {file}", h.kind),
    };
    text.push_str(&format!("\n\n*{place}*"));
    if let Some(root) = root {
        let (key, qualified) = symbol_key(root, h);
        let memories = anchors.memories(key, qualified).await;
        if let Some(note) = note(&memories) {
            text.push_str(&note);
        }
    }
    text
}

/// The hover addition for a symbol with anchored memories.
fn note(memories: &[Memory]) -> Option<String> {
    if memories.is_empty() {
        return None;
    }
    let mut s = String::from("\n\n---\n**Mira remembers:**\n");
    for m in memories {
        let stale = if m.stale {
            " *(stale: the code changed since)*"
        } else {
            ""
        };
        s.push_str(&format!("\n- #{} {}{stale}", m.id, m.body.trim()));
    }
    Some(s)
}
