//! The text around the cursor that goes to the model: a prefix and a suffix window, each
//! within a token budget (estimated at 4 bytes a token, so cutting costs no tokenizer run on
//! the keystroke path), cut at line starts so the model sees whole lines.

use ropey::Rope;

/// Bytes per token for budgets: close for code in the usual BPE vocabularies.
pub const BYTES_PER_TOKEN: usize = 4;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Window {
    pub prefix: String,
    pub suffix: String,
    /// What follows the cursor on its own line (no line break).
    pub line_rest: String,
    /// Zero-based line of the cursor.
    pub line: u32,
}

impl Window {
    /// The cursor is inside a line (something other than blanks follows it there): only
    /// the rest of that line may be completed.
    pub fn mid_line(&self) -> bool {
        !self.line_rest.trim().is_empty()
    }

    /// Cut the windows around `char_idx` (clamped to the text).
    pub fn around(
        rope: &Rope,
        char_idx: usize,
        prefix_tokens: usize,
        suffix_tokens: usize,
    ) -> Window {
        let char_idx = char_idx.min(rope.len_chars());
        let line = rope.char_to_line(char_idx);
        let start = prefix_start(rope, char_idx, prefix_tokens * BYTES_PER_TOKEN);
        let end = suffix_end(rope, char_idx, suffix_tokens * BYTES_PER_TOKEN);
        let line_end = line_end_char(rope, line);
        Window {
            prefix: rope.slice(start..char_idx).to_string(),
            suffix: rope.slice(char_idx..end).to_string(),
            line_rest: rope.slice(char_idx..line_end.max(char_idx)).to_string(),
            line: line as u32,
        }
    }
}

impl Window {
    /// This window with the prefix and suffix cut to smaller budgets (at line starts, as
    /// [`Window::around`] cuts); unchanged when they already fit.
    pub fn within(&self, prefix_tokens: usize, suffix_tokens: usize) -> Window {
        let (p, s) = (
            prefix_tokens * BYTES_PER_TOKEN,
            suffix_tokens * BYTES_PER_TOKEN,
        );
        if self.prefix.len() <= p && self.suffix.len() <= s {
            return self.clone();
        }
        let mut prefix = self.prefix.as_str();
        if prefix.len() > p {
            let mut at = prefix.len() - p;
            while !prefix.is_char_boundary(at) {
                at += 1;
            }
            // Start at the next whole line when there is one within the budget.
            let rest = &prefix[at..];
            prefix = match rest.find('\n') {
                Some(nl) if nl + 1 < rest.len() => &rest[nl + 1..],
                _ => rest,
            };
        }
        let mut suffix = self.suffix.as_str();
        if suffix.len() > s {
            let mut at = s;
            while !suffix.is_char_boundary(at) {
                at -= 1;
            }
            let head = &suffix[..at];
            suffix = match head.rfind('\n') {
                Some(nl) => &head[..nl + 1],
                None => head,
            };
        }
        Window {
            prefix: prefix.to_string(),
            suffix: suffix.to_string(),
            ..self.clone()
        }
    }
}

/// Where the line ends, before its terminator.
fn line_end_char(rope: &Rope, line: usize) -> usize {
    let slice = rope.line(line);
    let mut end = rope.line_to_char(line) + slice.len_chars();
    let mut chars = slice.chars_at(slice.len_chars());
    while let Some(c) = chars.prev() {
        if c == '\n' || c == '\r' {
            end -= 1;
        } else {
            break;
        }
    }
    end
}

/// The first whole line within `max_bytes` before the cursor; inside one huge line, the
/// character at the byte limit.
fn prefix_start(rope: &Rope, cursor: usize, max_bytes: usize) -> usize {
    let cursor_byte = rope.char_to_byte(cursor);
    if cursor_byte <= max_bytes {
        return 0;
    }
    let limit = cursor_byte - max_bytes;
    let line = rope.byte_to_line(limit);
    let line_start = rope.line_to_byte(line);
    let start_line = if line_start == limit { line } else { line + 1 };
    if start_line < rope.len_lines() {
        let start = rope.line_to_char(start_line);
        if start <= cursor {
            return start;
        }
    }
    (rope.byte_to_char(limit) + 1).min(cursor)
}

/// The end of the last whole line within `max_bytes` after the cursor, at least the end of
/// the cursor's own line (up to the byte limit).
fn suffix_end(rope: &Rope, cursor: usize, max_bytes: usize) -> usize {
    let cursor_byte = rope.char_to_byte(cursor);
    let limit = (cursor_byte + max_bytes).min(rope.len_bytes());
    if limit == rope.len_bytes() {
        return rope.len_chars();
    }
    let line_start = rope.line_to_char(rope.byte_to_line(limit));
    if line_start > cursor {
        line_start
    } else {
        rope.byte_to_char(limit)
    }
}

/// Tokens a text costs, estimated.
pub fn estimate_tokens(text: &str) -> usize {
    text.len().div_ceil(BYTES_PER_TOKEN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_whole_lines_within_budget() {
        let text: String = (0..100).map(|i| format!("line {i:03}\n")).collect();
        let rope = Rope::from_str(&text);
        let cursor = rope.line_to_char(50) + 4;
        let w = Window::around(&rope, cursor, 5, 5);
        assert_eq!(w.prefix, "line 049\nline");
        assert_eq!(w.suffix, " 050\nline 051\n");
        assert_eq!(w.line_rest, " 050");
        assert!(w.mid_line());
        assert_eq!(w.line, 50);
    }

    #[test]
    fn end_of_line_and_text_edges() {
        let rope = Rope::from_str("fn a() {\r\n    \r\n}");
        let w = Window::around(&rope, 8, 100, 100);
        assert_eq!(w.line_rest, "");
        assert!(!w.mid_line());
        assert_eq!(w.suffix, "\r\n    \r\n}");
        let w = Window::around(&rope, 999, 100, 100);
        assert_eq!(w.prefix, "fn a() {\r\n    \r\n}");
        assert_eq!(w.suffix, "");
    }

    #[test]
    fn one_huge_line_is_cut_by_bytes() {
        let text = "é".repeat(10_000);
        let rope = Rope::from_str(&text);
        let w = Window::around(&rope, 5_000, 10, 10);
        assert!(
            w.prefix.len() <= 40 && !w.prefix.is_empty(),
            "{}",
            w.prefix.len()
        );
        assert!(
            w.suffix.len() <= 42 && !w.suffix.is_empty(),
            "{}",
            w.suffix.len()
        );
    }
}
