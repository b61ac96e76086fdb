//! Library → protocol: byte spans become LSP ranges in the negotiated encoding, paths become
//! URIs, and a file edit becomes a `WorkspaceEdit` (rust-analyzer's `lsp/to_proto.rs`).
//!
//! Columns are converted through a [`LineIndex`] built once per text, never by a rope
//! descent per position: an open document's text comes with the index's answer (the very
//! text its spans are offsets into); a closed file is read only when it is not ASCII and the
//! client does not count in UTF-8, once per answer. Otherwise the stored (row, byte column)
//! points are the answer.

use crate::documents::{LineIndex, PositionEncoding, path_to_uri};
use crate::index::{Found, Span, SymbolInfo};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tower_lsp_server::ls_types::{Location, Position, Range, Uri};

/// The LSP position of byte `byte` of the text `lines` indexes.
pub fn position(lines: &LineIndex, byte: usize, enc: PositionEncoding) -> Position {
    lines.position(byte, enc)
}

/// A span as an LSP range, through the text's line index.
pub fn range(lines: &LineIndex, span: &Span, enc: PositionEncoding) -> Range {
    Range::new(
        lines.position(span.start_byte as usize, enc),
        lines.position(span.end_byte as usize, enc),
    )
}

/// A span as an LSP range straight from its (row, byte column) points: right for ASCII text
/// and for a client counting in UTF-8.
pub fn range_of_points(span: &Span) -> Range {
    Range::new(
        Position::new(span.start.row, span.start.col),
        Position::new(span.end.row, span.end.col),
    )
}

/// The URI of a path, when it can be one.
pub fn uri(path: &Path) -> Option<Uri> {
    path_to_uri(path)
}

/// How the symbols of one answer are shown in the client's encoding.
pub struct Lines {
    enc: PositionEncoding,
    /// The texts that need one: open documents, and closed non-ASCII files for UTF-16/32.
    files: HashMap<PathBuf, LineIndex>,
}

impl Lines {
    /// For symbols the index found: each file's text indexed once for all its symbols.
    /// Reading closed files runs off the runtime.
    pub async fn of(found: &Found, enc: PositionEncoding) -> Lines {
        let mut files: HashMap<PathBuf, LineIndex> = found
            .open_texts
            .iter()
            .map(|(p, t)| (p.clone(), LineIndex::new(t)))
            .collect();
        let mut unread: Vec<PathBuf> = Vec::new();
        if enc != PositionEncoding::Utf8 {
            for s in &found.symbols {
                if !s.ascii && !files.contains_key(&s.path) && !unread.contains(&s.path) {
                    unread.push(s.path.clone());
                }
            }
        }
        if !unread.is_empty() {
            let read = tokio::task::spawn_blocking(move || {
                unread
                    .into_iter()
                    .filter_map(|p| {
                        let text = std::fs::read_to_string(&p).ok()?;
                        Some((p, LineIndex::new(&ropey::Rope::from_str(&text))))
                    })
                    .collect::<Vec<_>>()
            })
            .await
            .unwrap_or_default();
            files.extend(read);
        }
        Lines { enc, files }
    }

    pub fn range(&self, symbol: &SymbolInfo, span: &Span) -> Range {
        match self.files.get(&symbol.path) {
            Some(lines) => range(lines, span, self.enc),
            None => range_of_points(span),
        }
    }

    /// Where the symbol's name is.
    pub fn location(&self, symbol: &SymbolInfo) -> Option<Location> {
        Some(Location::new(
            uri(&symbol.path)?,
            self.range(symbol, &symbol.selection),
        ))
    }
}
