//! What the index knows around one symbol: its definition's code, callers and callees (for
//! "Ask Mira about this symbol" and the other editor actions), the symbol enclosing a range
//! (what a memory is anchored to), and the per-symbol content hashes that tell anchored
//! memories when their code changed.

use super::synced::View;
use super::{Actor, Request, SymbolInfo};
use crate::documents::DocId;
use crate::index::model::{FileSymbols, RefKind};
use crate::index::registry::Lang;
use crate::index::table::SymbolHit;
use std::collections::HashSet;
use std::sync::{Arc, RwLock};
use tokio::sync::mpsc;

/// The code of a definition sent to the model is capped (a 3,000-line function is rare, and
/// the turn can read the rest with read_file).
const MAX_CODE_BYTES: usize = 12 * 1024;
const MAX_CALLERS: usize = 12;
const MAX_CALLEES: usize = 20;

/// A symbol that calls, or is called by, the one in focus.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Related {
    /// Qualified name.
    pub name: String,
    /// Project-relative path.
    pub path: String,
    /// 1-based line of the call (callers) or of the definition (callees).
    pub line: u32,
    pub signature: String,
}

/// A definition and its neighbourhood, as the index sees it now (open buffers included).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SymbolContext {
    pub info: SymbolInfo,
    /// Project-relative path (the table key).
    pub key: String,
    /// `container` + separator + name.
    pub qualified: String,
    /// The definition's text, capped at [`MAX_CODE_BYTES`].
    pub code: String,
    /// [`symbol_hash`] of the whole definition.
    pub hash: String,
    pub callers: Vec<Related>,
    pub callees: Vec<Related>,
}

/// Why the index could not answer a focus question; the texts are for users.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FocusError {
    #[error("{0} is not open in the editor (Mira only acts on open documents)")]
    NotOpen(String),
    /// Said by the adapter, which holds the client's lines.
    #[error("{0} is not a language Mira indexes")]
    NotIndexed(String),
    #[error("the range ends past the end of the document (line {line}, but it has {lines} lines)")]
    PastEnd { line: u32, lines: usize },
    #[error("there is no identifier at line {line}, column {character}")]
    NoIdentifier { line: u32, character: u32 },
    #[error("`{0}` is not defined anywhere Mira has indexed")]
    NotFound(String),
    #[error("no symbol encloses that range (select code inside a function, method or type)")]
    NoEnclosing,
}

/// The content hash a memory anchor stores: of the definition's whole text, so moving it
/// does not make it stale but editing it does.
pub fn symbol_hash(code: &[u8]) -> String {
    blake3::hash(code).to_hex()[..16].to_string()
}

/// The (qualified name, hash) of every symbol in a file, first definition of a name wins.
pub fn file_hashes(lang: Lang, symbols: &FileSymbols, text: &[u8]) -> Vec<(String, String)> {
    let sep = lang.spec().separator();
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(symbols.symbols.len());
    for (i, s) in symbols.symbols.iter().enumerate() {
        let q = symbols.qualified_name(i, sep);
        if !seen.insert(q.clone()) {
            continue;
        }
        let (a, b) = (s.range.start_byte as usize, s.range.end_byte as usize);
        if let Some(code) = text.get(a..b.min(text.len())) {
            out.push((q, symbol_hash(code)));
        }
    }
    out
}

/// A file's symbols changed (open buffer edited, or the file re-indexed on disk): every
/// symbol's current hash. An empty list means the file is gone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolChange {
    pub path: String,
    pub symbols: Vec<(String, String)>,
}

/// A subscription to symbol changes in some files (the ones memories are anchored in).
#[derive(Clone)]
pub struct SymbolWatch {
    pub paths: Arc<RwLock<HashSet<String>>>,
    pub tx: mpsc::UnboundedSender<SymbolChange>,
}

impl SymbolWatch {
    pub(super) fn wants(&self, key: &str) -> bool {
        self.paths
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains(key)
    }
}

impl super::IndexHandle {
    /// The definition of the identifier at byte `offset` of the open document `doc` (resolved
    /// through the index, in any file) with its code, callers and callees.
    pub async fn symbol_at(
        &self,
        doc: &DocId,
        offset: usize,
    ) -> Result<Result<SymbolContext, FocusError>, super::IndexGone> {
        let doc = doc.clone();
        self.ask(|reply| Request::SymbolAt { doc, offset, reply })
            .await
    }

    /// The innermost symbol enclosing the bytes `start..end` of the open document `doc`, with
    /// its neighbourhood.
    pub async fn enclosing(
        &self,
        doc: &DocId,
        start: usize,
        end: usize,
    ) -> Result<Result<SymbolContext, FocusError>, super::IndexGone> {
        let doc = doc.clone();
        self.ask(|reply| Request::Enclosing {
            doc,
            start,
            end,
            reply,
        })
        .await
    }

    /// The identifier at byte `offset` when the index knows a definition for it (what the
    /// "Ask Mira about `name`" action needs): nothing cloned, and the open document's own
    /// symbols read directly instead of re-syncing the table on every keystroke.
    pub async fn name_at(
        &self,
        doc: &DocId,
        offset: usize,
    ) -> Result<Option<String>, super::IndexGone> {
        let doc = doc.clone();
        self.ask(|reply| Request::NameAt { doc, offset, reply })
            .await
    }

    /// Report symbol changes in the files `watch.paths` names from now on.
    pub fn watch_symbols(&self, watch: SymbolWatch) {
        let _ = self.tx.send(Request::Watch(watch));
    }

    /// Report the open file `key`'s symbols to the watchers once more, as they are now: a
    /// memory anchored with the hash its symbol had when it was asked for may land after the
    /// code was edited again, and only a report after it tells the anchor so.
    pub fn report_again(&self, key: String) {
        let _ = self.tx.send(Request::ReportAgain(key));
    }
}

impl View<'_> {
    pub(super) fn symbol_at(
        &self,
        doc: &DocId,
        offset: usize,
    ) -> Result<SymbolContext, FocusError> {
        let entry = self
            .open
            .get(doc)
            .ok_or_else(|| FocusError::NotOpen(doc.to_string()))?;
        let name = super::identifier_at(&entry.doc, offset).ok_or_else(|| {
            let rope = &entry.doc.rope;
            let offset = offset.min(rope.len_bytes());
            let line = rope.byte_to_line(offset);
            FocusError::NoIdentifier {
                line: line as u32,
                character: (offset - rope.line_to_byte(line)) as u32,
            }
        })?;
        let from = entry.key.clone();
        let hit = self
            .table
            .definitions(&name, Some(&from), 1)
            .into_iter()
            .next()
            .ok_or(FocusError::NotFound(name))?;
        Ok(self.context_of(hit))
    }

    pub(super) fn name_at(&self, doc: &DocId, offset: usize) -> Option<String> {
        let entry = self.open.get(doc)?;
        let name = super::identifier_at(&entry.doc, offset)?;
        self.table.defines(&name).then_some(name)
    }

    pub(super) fn enclosing(
        &self,
        doc: &DocId,
        start: usize,
        end: usize,
    ) -> Result<SymbolContext, FocusError> {
        let entry = self
            .open
            .get(doc)
            .ok_or_else(|| FocusError::NotOpen(doc.to_string()))?;
        let (a, b) = (start.min(end) as u32, start.max(end) as u32);
        // Symbols are in document order, parents first: the last one containing the range
        // is the innermost.
        let syms = &entry.doc.symbols.symbols;
        let index = (0..syms.len())
            .rev()
            .find(|&i| syms[i].range.start_byte <= a && b <= syms[i].range.end_byte)
            .ok_or(FocusError::NoEnclosing)?;
        let hit = SymbolHit {
            path: entry.key.clone(),
            lang: entry.doc.lang,
            ascii: entry.doc.text().is_ascii(),
            symbol: syms[index].clone(),
        };
        Ok(self.context_of(hit))
    }

    /// The text of a table file: the open buffer's, else the file on disk (one small read,
    /// only for a user's explicit action).
    fn file_text(&self, key: &str) -> Option<Vec<u8>> {
        match self.open.values().find(|e| e.key == key) {
            Some(e) => Some(e.doc.text().to_vec()),
            None => std::fs::read(self.path_for(key)).ok(),
        }
    }

    fn context_of(&self, hit: SymbolHit) -> SymbolContext {
        let sep = hit.lang.spec().separator();
        let qualified = match &hit.symbol.container {
            Some(c) => format!("{c}{sep}{}", hit.symbol.name),
            None => hit.symbol.name.clone(),
        };
        let (a, b) = (
            hit.symbol.range.start_byte as usize,
            hit.symbol.range.end_byte as usize,
        );
        let text = self.file_text(&hit.path).unwrap_or_default();
        let code_bytes = text.get(a..b.min(text.len())).unwrap_or_default();
        let hash = symbol_hash(code_bytes);
        let mut code = String::from_utf8_lossy(code_bytes).into_owned();
        if code.len() > MAX_CODE_BYTES {
            let mut cut = MAX_CODE_BYTES;
            while !code.is_char_boundary(cut) {
                cut -= 1;
            }
            code.truncate(cut);
            code.push_str("\n… [cut; read_file shows the rest]");
        }
        let callers = self.callers(&hit.symbol.name);
        let callees = self.callees(&hit);
        let key = hit.path.clone();
        let info = SymbolInfo::from_hit(&hit, self.root);
        SymbolContext {
            info,
            key,
            qualified,
            code,
            hash,
            callers,
            callees,
        }
    }

    /// Calls to `name` anywhere in the table, attributed to their enclosing symbol.
    fn callers(&self, name: &str) -> Vec<Related> {
        let mut out = Vec::new();
        for (path, e) in self.table.files() {
            let sep = e.lang.spec().separator();
            for r in &e.symbols.refs {
                if r.kind != RefKind::Call || r.name != name {
                    continue;
                }
                let (caller, signature) = match r.caller {
                    Some(c) if (c as usize) < e.symbols.symbols.len() => (
                        e.symbols.qualified_name(c as usize, sep),
                        e.symbols.symbols[c as usize].signature.clone(),
                    ),
                    _ => ("(top level)".to_string(), String::new()),
                };
                out.push(Related {
                    name: caller,
                    path: path.clone(),
                    line: r.span.start.row + 1,
                    signature,
                });
            }
        }
        out.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
        out.dedup_by(|a, b| a.name == b.name && a.path == b.path);
        out.truncate(MAX_CALLERS);
        out
    }

    /// What the definition calls, each resolved to its best definition.
    fn callees(&self, hit: &SymbolHit) -> Vec<Related> {
        let Some(file) = self.table.get(&hit.path) else {
            return Vec::new();
        };
        let Some(index) = file.symbols.symbols.iter().position(|s| *s == hit.symbol) else {
            return Vec::new();
        };
        let mut names: Vec<&str> = Vec::new();
        for r in &file.symbols.refs {
            if r.kind == RefKind::Call
                && r.caller == Some(index as u32)
                && !names.contains(&r.name.as_str())
            {
                names.push(&r.name);
            }
        }
        names
            .into_iter()
            .filter_map(|n| {
                let d = self.table.definitions(n, Some(&hit.path), 1).pop()?;
                let dsep = d.lang.spec().separator();
                Some(Related {
                    name: match &d.symbol.container {
                        Some(c) => format!("{c}{dsep}{}", d.symbol.name),
                        None => d.symbol.name.clone(),
                    },
                    path: d.path,
                    line: d.symbol.range.start.row + 1,
                    signature: d.symbol.signature,
                })
            })
            .take(MAX_CALLEES)
            .collect()
    }
}

impl Actor {
    /// Tell the watchers about an open document whose symbols may have changed.
    pub(super) fn report_open(&self, doc: &DocId) {
        let Some(e) = self.open.get(doc) else { return };
        for w in self.watchers.iter().filter(|w| w.wants(&e.key)) {
            let _ = w.tx.send(SymbolChange {
                path: e.key.clone(),
                symbols: file_hashes(e.doc.lang, &e.doc.symbols, e.doc.text()),
            });
        }
    }

    /// Tell the watchers about a file re-indexed from disk (`None`: removed).
    pub(super) fn report_disk(&self, key: &str, indexed: Option<(Lang, &FileSymbols)>) {
        let watchers: Vec<&SymbolWatch> = self.watchers.iter().filter(|w| w.wants(key)).collect();
        if watchers.is_empty() {
            return;
        }
        let symbols = match indexed {
            Some((lang, syms)) => match std::fs::read(self.path_for(key)) {
                Ok(text) => file_hashes(lang, syms, &text),
                Err(_) => Vec::new(),
            },
            None => Vec::new(),
        };
        for w in watchers {
            let _ = w.tx.send(SymbolChange {
                path: key.to_string(),
                symbols: symbols.clone(),
            });
        }
    }
}
