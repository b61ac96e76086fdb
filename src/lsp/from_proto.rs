//! Protocol → library: a URI becomes a [`DocId`] or a path, an LSP position in the client's
//! encoding becomes a byte offset of the open document's text (rust-analyzer's
//! `lsp/from_proto.rs`). Positions are clamped, never trusted: a line past the end is the
//! end of the text, a character past a line's end is that line's end
//! (`documents::position_to_byte`). Each conversion reads the mirror in the handler's
//! synchronous prefix, so it sees exactly the edits the client sent before the request.

use crate::documents::{DocId, Documents, PositionEncoding, position_to_byte, position_to_char};
use crate::index::FocusError;
use ropey::Rope;
use std::path::PathBuf;
use tower_lsp_server::ls_types::{Position, Range, Uri};

/// The library's name for the document the client calls `uri`.
pub fn doc(uri: &Uri) -> DocId {
    DocId::of(uri)
}

/// The file `uri` names (`None` for other schemes).
pub fn path(uri: &Uri) -> Option<PathBuf> {
    crate::documents::uri_to_path(uri)
}

/// The char index of `pos` in `rope` (the open document's text), clamped.
pub fn char_index(rope: &Rope, pos: Position, enc: PositionEncoding) -> usize {
    position_to_char(rope, pos, enc)
}

/// The byte offset of `pos` in the open document `uri`, clamped; `None` when it is not open.
pub fn offset(docs: &Documents, enc: PositionEncoding, uri: &Uri, pos: Position) -> Option<usize> {
    Some(position_to_byte(docs.get(uri)?.rope(), pos, enc))
}

/// Like [`offset`], but `None` also for a line past the document's end: nothing is there.
pub fn offset_on_a_line(
    docs: &Documents,
    enc: PositionEncoding,
    uri: &Uri,
    pos: Position,
) -> Option<usize> {
    focus_offset(docs, enc, uri, pos).ok()
}

/// Like [`offset`], for an action about a place: a document that is not open and a line
/// past its end are the caller's mistakes, said as such.
pub fn focus_offset(
    docs: &Documents,
    enc: PositionEncoding,
    uri: &Uri,
    pos: Position,
) -> Result<usize, FocusError> {
    focus_offsets(docs, enc, uri, &[pos]).map(|v| v[0])
}

/// [`focus_offset`] of a range's start and end.
pub fn focus_range(
    docs: &Documents,
    enc: PositionEncoding,
    uri: &Uri,
    range: Range,
) -> Result<(usize, usize), FocusError> {
    focus_offsets(docs, enc, uri, &[range.start, range.end]).map(|v| (v[0], v[1]))
}

fn focus_offsets(
    docs: &Documents,
    enc: PositionEncoding,
    uri: &Uri,
    positions: &[Position],
) -> Result<Vec<usize>, FocusError> {
    let d = docs
        .get(uri)
        .ok_or_else(|| FocusError::NotOpen(uri.as_str().to_string()))?;
    let lines = d.rope().len_lines();
    if let Some(line) = positions.iter().map(|p| p.line).max()
        && line as usize >= lines
    {
        return Err(FocusError::PastEnd { line, lines });
    }
    Ok(positions
        .iter()
        .map(|&p| position_to_byte(d.rope(), p, enc))
        .collect())
}

/// The library says where it found no identifier in bytes; the user is told the position
/// their editor sent.
pub fn at_position(e: FocusError, pos: Position) -> FocusError {
    match e {
        FocusError::NoIdentifier { .. } => FocusError::NoIdentifier {
            line: pos.line,
            character: pos.character,
        },
        e => e,
    }
}
