//! The symbols in reach of a cursor, for inline completion: what the code near the cursor
//! calls and what the file imports, resolved through the index to their signatures and docs.
//! Read from the open buffer's own symbols; definitions come from the synced table, so a
//! definition typed in another open, unsaved buffer is in reach.

use super::synced::View;
use super::{IndexGone, IndexHandle, Request};
use crate::documents::DocId;
use crate::index::model::RefKind;
use std::collections::HashSet;

/// Calls this many lines around the cursor count as "near".
const NEAR_LINES: u32 = 40;

/// A definition the code at the cursor can use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InReach {
    pub name: String,
    /// Project-relative path of the definition.
    pub path: String,
    pub signature: String,
    pub doc: Option<String>,
}

impl IndexHandle {
    /// Up to `limit` definitions in reach of `line` of the open document `doc`: calls near the
    /// line first (nearest first), then the file's imports. Empty when the document is not open.
    pub async fn in_reach(
        &self,
        doc: &DocId,
        line: u32,
        limit: usize,
    ) -> Result<Vec<InReach>, IndexGone> {
        let doc = doc.clone();
        self.ask(|reply| Request::InReach {
            doc,
            line,
            limit,
            reply,
        })
        .await
    }
}

impl View<'_> {
    pub(super) fn in_reach(&self, doc: &DocId, line: u32, limit: usize) -> Vec<InReach> {
        let Some(entry) = self.open.get(doc) else {
            return Vec::new();
        };
        let refs = &entry.doc.symbols.refs;
        let mut near: Vec<(u32, &str)> = refs
            .iter()
            .filter(|r| r.kind == RefKind::Call)
            .map(|r| (r.span.start.row.abs_diff(line), r.name.as_str()))
            .filter(|(d, _)| *d <= NEAR_LINES)
            .collect();
        near.sort_unstable();
        let imports = refs
            .iter()
            .filter(|r| r.kind == RefKind::Import)
            .map(|r| r.name.as_str());
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for name in near.into_iter().map(|(_, n)| n).chain(imports) {
            if out.len() >= limit {
                break;
            }
            if !seen.insert(name) {
                continue;
            }
            let Some(hit) = self
                .table
                .definitions(name, Some(&entry.key), 1)
                .into_iter()
                .next()
            else {
                continue;
            };
            // The buffer's own definitions are already in the prefix or suffix window, or
            // will be once the user scrolls there; other files are what the model cannot see.
            if hit.path == entry.key {
                continue;
            }
            out.push(InReach {
                name: hit.symbol.name.clone(),
                path: hit.path.clone(),
                signature: hit.symbol.signature.clone(),
                doc: hit.symbol.doc.clone(),
            });
        }
        out
    }
}
