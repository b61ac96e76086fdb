//! LSP positions ↔ rope offsets, in any negotiated position encoding.
//!
//! LSP counts `character` in code units of the negotiated encoding and recognises only
//! `\n`, `\r\n` and `\r` as line breaks (ropey is built with `cr_lines` and without
//! `unicode_lines` for exactly that reason). A `character` past the end of a line, or in the
//! middle of a multi-unit character, is clamped — never a panic, never an edit on the
//! wrong line.

use ropey::{Rope, RopeSlice};
use tower_lsp_server::ls_types::{Position, PositionEncodingKind};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PositionEncoding {
    Utf8,
    Utf16,
    Utf32,
}

impl PositionEncoding {
    /// UTF-8 when the client offers it (tree-sitter and SQLite speak bytes), else UTF-16
    /// (mandatory for every client), else UTF-32 if that is all the client lists.
    pub fn negotiate(offered: Option<&[PositionEncodingKind]>) -> Self {
        let offered = offered.unwrap_or_default();
        let has = |k: &PositionEncodingKind| offered.iter().any(|o| o == k);
        if has(&PositionEncodingKind::UTF8) {
            PositionEncoding::Utf8
        } else if offered.is_empty() || has(&PositionEncodingKind::UTF16) {
            PositionEncoding::Utf16
        } else if has(&PositionEncodingKind::UTF32) {
            PositionEncoding::Utf32
        } else {
            PositionEncoding::Utf16
        }
    }

    pub fn kind(self) -> PositionEncodingKind {
        match self {
            PositionEncoding::Utf8 => PositionEncodingKind::UTF8,
            PositionEncoding::Utf16 => PositionEncodingKind::UTF16,
            PositionEncoding::Utf32 => PositionEncodingKind::UTF32,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            PositionEncoding::Utf8 => "utf-8",
            PositionEncoding::Utf16 => "utf-16",
            PositionEncoding::Utf32 => "utf-32",
        }
    }
}

/// The line without its terminator (`\r\n`, `\n` or `\r`).
fn line_content(rope: &Rope, line: usize) -> RopeSlice<'_> {
    let slice = rope.line(line);
    let len = slice.len_chars();
    let term = if len >= 2 && slice.char(len - 2) == '\r' && slice.char(len - 1) == '\n' {
        2
    } else if len >= 1 && matches!(slice.char(len - 1), '\n' | '\r') {
        1
    } else {
        0
    };
    slice.slice(..len - term)
}

/// Char index for an LSP position. Lines past the end clamp to the end of the text;
/// characters past the end of a line clamp to just before its terminator.
pub fn position_to_char(rope: &Rope, pos: Position, enc: PositionEncoding) -> usize {
    let line = pos.line as usize;
    if line >= rope.len_lines() {
        return rope.len_chars();
    }
    let content = line_content(rope, line);
    let units = pos.character as usize;
    let col = match enc {
        PositionEncoding::Utf8 => content.byte_to_char(units.min(content.len_bytes())),
        PositionEncoding::Utf16 => content.utf16_cu_to_char(units.min(content.len_utf16_cu())),
        PositionEncoding::Utf32 => units.min(content.len_chars()),
    };
    rope.line_to_char(line) + col
}

/// LSP position of a char index (clamped to the end of the text).
pub fn char_to_position(rope: &Rope, char_idx: usize, enc: PositionEncoding) -> Position {
    let char_idx = char_idx.min(rope.len_chars());
    let line = rope.char_to_line(char_idx);
    let col_chars = char_idx - rope.line_to_char(line);
    let slice = rope.line(line);
    let character = match enc {
        PositionEncoding::Utf8 => slice.char_to_byte(col_chars),
        PositionEncoding::Utf16 => slice.char_to_utf16_cu(col_chars),
        PositionEncoding::Utf32 => col_chars,
    };
    Position::new(line as u32, character as u32)
}

pub fn position_to_byte(rope: &Rope, pos: Position, enc: PositionEncoding) -> usize {
    rope.char_to_byte(position_to_char(rope, pos, enc))
}

/// LSP position of a byte offset; a byte inside a multi-byte char maps to that char.
pub fn byte_to_position(rope: &Rope, byte: usize, enc: PositionEncoding) -> Position {
    let byte = byte.min(rope.len_bytes());
    char_to_position(rope, rope.byte_to_char(byte), enc)
}

/// Where each line starts and whether it is ASCII, built in one pass over a rope, so that many
/// byte offsets of one text (an outline's ranges) convert without descending the rope for
/// each: on an ASCII line the column is the byte distance in every encoding. Non-ASCII lines
/// take [`byte_to_position`]'s path, so both always agree.
/// It holds its own clone of the rope (O(1)), so an answer can carry it.
#[derive(Clone, Debug)]
pub struct LineIndex {
    rope: Rope,
    /// Byte offset where each line starts (line breaks as ropey counts them: `\n`, `\r\n`, `\r`).
    starts: Vec<usize>,
    /// Bit per line: set when the line holds a byte ≥ 0x80.
    wide: Vec<u64>,
}

impl LineIndex {
    pub fn new(rope: &Rope) -> Self {
        let mut starts = vec![0usize];
        let mut wide = vec![0u64];
        let mut offset = 0usize;
        let mut after_cr = false;
        // Line breaks found with `memchr`, the bytes between them checked as a whole: a
        // 300 KB outline's index was 4 % of the server's time while typing when this went
        // byte by byte.
        let mark_wide = |starts: &[usize], wide: &mut [u64], bytes: &[u8]| {
            if !bytes.is_ascii() {
                let line = starts.len() - 1;
                wide[line / 64] |= 1 << (line % 64);
            }
        };
        for chunk in rope.chunks() {
            let bytes = chunk.as_bytes();
            if after_cr && bytes.first().is_some_and(|&b| b != b'\n') {
                // A lone `\r` ended the line before this chunk.
                Self::push_line(&mut starts, &mut wide, offset);
            }
            after_cr = after_cr && bytes.is_empty();
            let mut from = 0;
            for at in memchr::memchr2_iter(b'\n', b'\r', bytes) {
                mark_wide(&starts, &mut wide, &bytes[from..at]);
                match (bytes[at], bytes.get(at + 1)) {
                    (b'\n', _) => Self::push_line(&mut starts, &mut wide, offset + at + 1),
                    // `\r\n`: the line ends at the `\n`.
                    (_, Some(b'\n')) => {}
                    (_, Some(_)) => Self::push_line(&mut starts, &mut wide, offset + at + 1),
                    (_, None) => after_cr = true,
                }
                from = at + 1;
            }
            mark_wide(&starts, &mut wide, &bytes[from..]);
            offset += chunk.len();
        }
        if after_cr {
            Self::push_line(&mut starts, &mut wide, offset);
        }
        LineIndex {
            rope: rope.clone(),
            starts,
            wide,
        }
    }

    fn push_line(starts: &mut Vec<usize>, wide: &mut Vec<u64>, start: usize) {
        starts.push(start);
        if (starts.len() - 1) / 64 >= wide.len() {
            wide.push(0);
        }
    }

    /// The same answer as [`byte_to_position`] on this index's rope.
    pub fn position(&self, byte: usize, enc: PositionEncoding) -> Position {
        let byte = byte.min(self.rope.len_bytes());
        let line = self.starts.partition_point(|&s| s <= byte) - 1;
        if self.wide[line / 64] & (1 << (line % 64)) != 0 {
            return byte_to_position(&self.rope, byte, enc);
        }
        Position::new(line as u32, (byte - self.starts[line]) as u32)
    }
}
