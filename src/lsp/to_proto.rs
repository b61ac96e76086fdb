//! Library → protocol: byte spans become LSP ranges in the negotiated encoding, paths become
//! URIs, and a file edit becomes a `WorkspaceEdit` (rust-analyzer's `lsp/to_proto.rs`).
//!
//! Columns are converted through a [`LineIndex`] built once per text, never by a rope
//! descent per position: an open document's text comes with the index's answer (the very
//! text its spans are offsets into); a closed file is read only when it is not ASCII and the
//! client does not count in UTF-8, once per answer. Otherwise the stored (row, byte column)
//! points are the answer.

use super::ClientFeatures;
use crate::documents::{LineIndex, PositionEncoding, char_to_position, path_to_uri};
use crate::index::{Found, Span, SymbolInfo};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tower_lsp_server::ls_types::{
    AnnotatedTextEdit, ChangeAnnotation, CreateFile, CreateFileOptions, DocumentChangeOperation,
    DocumentChanges, Location, OneOf, OptionalVersionedTextDocumentIdentifier, Position, Range,
    ResourceOp, TextDocumentEdit, TextEdit, Uri, WorkspaceEdit,
};

/// The position of char `char_idx` of `rope` (clamped to its end).
pub fn char_position(rope: &ropey::Rope, char_idx: usize, enc: PositionEncoding) -> Position {
    char_to_position(rope, char_idx, enc)
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

/// The smallest single edit turning `base` into `new`: common prefix and suffix kept.
pub fn minimal_edit(base: &str, new: &str, enc: PositionEncoding) -> TextEdit {
    let b: Vec<char> = base.chars().collect();
    let n: Vec<char> = new.chars().collect();
    let prefix = b.iter().zip(&n).take_while(|(x, y)| x == y).count();
    let max_suffix = b.len().min(n.len()) - prefix;
    let suffix = b
        .iter()
        .rev()
        .zip(n.iter().rev())
        .take(max_suffix)
        .take_while(|(x, y)| x == y)
        .count();
    let rope = ropey::Rope::from_str(base);
    let start = char_to_position(&rope, prefix, enc);
    let end = char_to_position(&rope, b.len() - suffix, enc);
    TextEdit {
        range: Range { start, end },
        new_text: n[prefix..n.len() - suffix].iter().collect(),
    }
}

/// One file's edit as the `WorkspaceEdit` this client takes: versioned `documentChanges`
/// (creating the file first when asked and the client can), annotated for clients that show
/// annotated edits in a refactor preview (VS Code), else a plain `changes` map.
pub fn file_edit(
    uri: &Uri,
    version: Option<i32>,
    text_edit: TextEdit,
    create: bool,
    features: &ClientFeatures,
) -> WorkspaceEdit {
    if !features.document_changes {
        return WorkspaceEdit {
            changes: Some(HashMap::from([(uri.clone(), vec![text_edit])])),
            ..Default::default()
        };
    }
    let annotation = features.change_annotations.then(|| "mira".to_string());
    let mut ops = Vec::new();
    if create && features.create_files {
        ops.push(DocumentChangeOperation::Op(ResourceOp::Create(
            CreateFile {
                uri: uri.clone(),
                options: Some(CreateFileOptions {
                    overwrite: Some(false),
                    ignore_if_exists: Some(true),
                }),
                annotation_id: annotation.clone(),
            },
        )));
    }
    ops.push(DocumentChangeOperation::Edit(TextDocumentEdit {
        text_document: OptionalVersionedTextDocumentIdentifier {
            uri: uri.clone(),
            version,
        },
        edits: vec![match &annotation {
            Some(id) => OneOf::Right(AnnotatedTextEdit {
                text_edit,
                annotation_id: id.clone(),
            }),
            None => OneOf::Left(text_edit),
        }],
    }));
    let change_annotations = annotation.map(|id| {
        HashMap::from([(
            id,
            ChangeAnnotation {
                label: "Mira".into(),
                needs_confirmation: Some(true),
                description: Some("an edit proposed by the model".into()),
            },
        )])
    });
    WorkspaceEdit {
        document_changes: Some(DocumentChanges::Operations(ops)),
        change_annotations,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimal_edits_touch_only_what_changed() {
        let e = minimal_edit(
            "fn a() {\n    41\n}\n",
            "fn a() {\n    42\n}\n",
            PositionEncoding::Utf16,
        );
        assert_eq!(
            e.range,
            Range {
                start: Position::new(1, 5),
                end: Position::new(1, 6)
            }
        );
        assert_eq!(e.new_text, "2");
        let e = minimal_edit("é😀x", "é😀yx", PositionEncoding::Utf16);
        assert_eq!(
            (e.range.start, e.new_text.as_str()),
            (Position::new(0, 3), "y")
        );
        let e = minimal_edit("aaa", "aa", PositionEncoding::Utf8);
        assert_eq!(
            (
                e.range.start.character,
                e.range.end.character,
                e.new_text.as_str()
            ),
            (2, 3, "")
        );
    }
}
