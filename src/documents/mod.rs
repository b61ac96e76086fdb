//! Open documents: the client's truth for every file it has opened — the LSP adapter's
//! mirror of the editor's buffers (rust-analyzer's `mem_docs`), so this module may name LSP
//! types; what it tells the library does not.
//!
//! One [`Document`] owns a rope and its version; [`Document::apply_change`] is the only
//! function that turns an LSP content change into a text edit, in any position encoding,
//! and reports the edit in the byte/point form tree-sitter's `InputEdit` wants.
//! Syntax trees live with the index actor, which receives every edit in order as a
//! [`DocEvent`]: a [`DocId`], a path, byte edits and the text — no LSP type.

mod encoding;

pub use encoding::{
    LineIndex, PositionEncoding, byte_to_position, char_to_position, position_to_byte,
    position_to_char,
};

use ropey::Rope;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tower_lsp_server::ls_types::{Range, TextDocumentContentChangeEvent, Uri};

/// An open document as the library knows it: the name the client gave it (its URI's text),
/// opaque below the adapter. Compared and hashed as that text, so one document is one id.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DocId(Arc<str>);

impl DocId {
    pub fn new(name: impl Into<Arc<str>>) -> DocId {
        DocId(name.into())
    }

    /// The id of the document the client calls `uri`.
    pub fn of(uri: &Uri) -> DocId {
        DocId(Arc::from(uri.as_str()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The last segment of the name (`main.rs` for `file:///p/src/main.rs`), as sent.
    pub fn file_name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or_default()
    }
}

impl std::fmt::Display for DocId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A (row, byte column) pair, as tree-sitter counts points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Point {
    pub row: usize,
    pub column: usize,
}

/// One applied edit, in bytes and points of the text before/after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextEdit {
    pub start_byte: usize,
    pub old_end_byte: usize,
    pub new_end_byte: usize,
    pub start_point: Point,
    pub old_end_point: Point,
    pub new_end_point: Point,
}

#[derive(Clone, Debug)]
pub struct Document {
    rope: Rope,
    version: i32,
    language_id: String,
}

impl Document {
    pub fn new(text: &str, version: i32, language_id: impl Into<String>) -> Self {
        Document {
            rope: Rope::from_str(text),
            version,
            language_id: language_id.into(),
        }
    }

    pub fn rope(&self) -> &Rope {
        &self.rope
    }

    pub fn text(&self) -> String {
        self.rope.to_string()
    }

    pub fn version(&self) -> i32 {
        self.version
    }

    pub fn language_id(&self) -> &str {
        &self.language_id
    }

    pub fn set_version(&mut self, version: i32) {
        self.version = version;
    }

    /// Apply one LSP content change. `range: None` replaces the whole text, reported as the
    /// smallest edit that turns the old text into the new one: a client that sends the whole
    /// document at each keystroke then costs an incremental reparse and keeps its outline,
    /// where "everything changed" meant a full parse and, over the parse budget, no symbols.
    /// A reversed range is treated as empty at its start rather than rejected: clients that
    /// send one (it happens) still mean "insert here".
    pub fn apply_change(
        &mut self,
        range: Option<Range>,
        text: &str,
        enc: PositionEncoding,
    ) -> TextEdit {
        let (start_char, end_char, text) = match range {
            None => {
                let (prefix, old_end, new_end) = differing_span(&self.rope, text);
                (
                    self.rope.byte_to_char(prefix),
                    self.rope.byte_to_char(old_end),
                    &text[prefix..new_end],
                )
            }
            Some(r) => {
                let s = position_to_char(&self.rope, r.start, enc);
                let e = position_to_char(&self.rope, r.end, enc);
                (s, e.max(s), text)
            }
        };
        self.splice(start_char, end_char, text)
    }

    /// Replace the bytes `bytes` with `text`, as the library speaks (no LSP position): an
    /// offset past the end is the end, one inside a character is that character's start.
    pub fn replace(&mut self, bytes: std::ops::Range<usize>, text: &str) -> TextEdit {
        let len = self.rope.len_bytes();
        let s = self.rope.byte_to_char(bytes.start.min(len));
        let e = self.rope.byte_to_char(bytes.end.min(len));
        self.splice(s, e.max(s), text)
    }

    fn splice(&mut self, start_char: usize, end_char: usize, text: &str) -> TextEdit {
        let start_byte = self.rope.char_to_byte(start_char);
        let old_end_byte = self.rope.char_to_byte(end_char);
        let start_point = self.point(start_byte);
        let old_end_point = self.point(old_end_byte);
        self.rope.remove(start_char..end_char);
        self.rope.insert(start_char, text);
        let new_end_byte = start_byte + text.len();
        TextEdit {
            start_byte,
            old_end_byte,
            new_end_byte,
            start_point,
            old_end_point,
            new_end_point: self.point(new_end_byte),
        }
    }

    fn point(&self, byte: usize) -> Point {
        let row = self.rope.byte_to_line(byte);
        Point {
            row,
            column: byte - self.rope.line_to_byte(row),
        }
    }
}

/// The bytes where `new` differs from `old`: `(start, old end, new end)`, on character
/// boundaries of both (a shared prefix or suffix never ends inside a character).
fn differing_span(old: &Rope, new: &str) -> (usize, usize, usize) {
    let new_b = new.as_bytes();
    let mut prefix = 0;
    for chunk in old.chunks() {
        let c = chunk.as_bytes();
        let rest = &new_b[prefix.min(new_b.len())..];
        let same = common_prefix(c, rest);
        prefix += same;
        if same < c.len() {
            break;
        }
    }
    while !new.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let old_len = old.len_bytes();
    let room = old_len.min(new_b.len()) - prefix;
    let mut suffix = 0;
    let mut chunks = old.chunks_at_byte(old_len).0;
    while suffix < room {
        let Some(chunk) = chunks.prev() else { break };
        let c = chunk.as_bytes();
        let rest = &new_b[..new_b.len() - suffix];
        let same = common_suffix(c, rest).min(room - suffix);
        suffix += same;
        if same < c.len() {
            break;
        }
    }
    while !new.is_char_boundary(new_b.len() - suffix) {
        suffix -= 1;
    }
    (prefix, old_len - suffix, new_b.len() - suffix)
}

/// Compares in blocks first: a whole document sent per keystroke is mostly equal.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 64;
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + BLOCK <= n && a[i..i + BLOCK] == b[i..i + BLOCK] {
        i += BLOCK;
    }
    i + a[i..n]
        .iter()
        .zip(&b[i..n])
        .take_while(|(x, y)| x == y)
        .count()
}

fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 64;
    let n = a.len().min(b.len());
    let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
    let mut i = 0;
    while i + BLOCK <= n && a[n - i - BLOCK..n - i] == b[n - i - BLOCK..n - i] {
        i += BLOCK;
    }
    i + a[..n - i]
        .iter()
        .rev()
        .zip(b[..n - i].iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

/// What the rest of Mira learns about open documents, in the order the client sent it.
/// Rope clones are O(1), so every event carries the full text of its version.
#[derive(Clone, Debug)]
pub enum DocEvent {
    Opened {
        doc: DocId,
        /// `None` when the document is not a file (`untitled:`).
        path: Option<PathBuf>,
        version: i32,
        language_id: String,
        text: Rope,
    },
    Changed {
        doc: DocId,
        version: i32,
        edits: Vec<TextEdit>,
        text: Rope,
    },
    Saved {
        doc: DocId,
        path: Option<PathBuf>,
    },
    Closed {
        doc: DocId,
    },
}

impl DocEvent {
    /// The client saved `uri` (whether or not it is open).
    pub fn saved(uri: &Uri) -> DocEvent {
        DocEvent::Saved {
            doc: DocId::of(uri),
            path: uri_to_path(uri),
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DocError {
    #[error("didChange for {0}, which is not open: the client must send didOpen first")]
    NotOpen(String),
}

/// Every open document, keyed by URI.
#[derive(Default, Debug)]
pub struct Documents {
    docs: HashMap<Uri, Document>,
}

/// What [`Documents::change`] noticed besides applying the edits.
#[derive(Debug, PartialEq, Eq)]
pub enum VersionCheck {
    InOrder,
    /// The client sent a version not greater than the last one; applied anyway, because the
    /// client's edits are the truth, but worth a log line.
    NotIncreasing {
        previous: i32,
    },
}

impl Documents {
    pub fn open(&mut self, uri: Uri, language_id: String, version: i32, text: &str) -> DocEvent {
        let doc = Document::new(text, version, language_id.clone());
        let rope = doc.rope.clone();
        let event = DocEvent::Opened {
            doc: DocId::of(&uri),
            path: uri_to_path(&uri),
            version,
            language_id,
            text: rope,
        };
        self.docs.insert(uri, doc);
        event
    }

    pub fn change(
        &mut self,
        uri: &Uri,
        version: i32,
        changes: &[TextDocumentContentChangeEvent],
        enc: PositionEncoding,
    ) -> Result<(DocEvent, VersionCheck), DocError> {
        let doc = self
            .docs
            .get_mut(uri)
            .ok_or_else(|| DocError::NotOpen(uri.as_str().to_string()))?;
        let check = if version > doc.version {
            VersionCheck::InOrder
        } else {
            VersionCheck::NotIncreasing {
                previous: doc.version,
            }
        };
        let edits = changes
            .iter()
            .map(|c| doc.apply_change(c.range, &c.text, enc))
            .collect();
        doc.version = version;
        Ok((
            DocEvent::Changed {
                doc: DocId::of(uri),
                version,
                edits,
                text: doc.rope.clone(),
            },
            check,
        ))
    }

    pub fn close(&mut self, uri: &Uri) -> Option<DocEvent> {
        self.docs.remove(uri).map(|_| DocEvent::Closed {
            doc: DocId::of(uri),
        })
    }

    pub fn get(&self, uri: &Uri) -> Option<&Document> {
        self.docs.get(uri)
    }

    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }
}

/// The one place URIs become paths and back (tower-lsp-server 0.24 changes these APIs).
pub fn uri_to_path(uri: &Uri) -> Option<PathBuf> {
    uri.to_file_path().map(|p| p.into_owned())
}

pub fn path_to_uri(path: &Path) -> Option<Uri> {
    Uri::from_file_path(path)
}

/// The path a `file:` URI written as text names (MCP's roots), without the caller naming
/// an LSP type; `None` for other schemes and malformed text.
pub fn file_uri_to_path(uri: &str) -> Option<PathBuf> {
    uri_to_path(&uri.parse::<Uri>().ok()?)
}

#[cfg(test)]
mod tests;
