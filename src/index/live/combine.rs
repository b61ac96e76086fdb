//! Several edits as one: the span of the old text they replaced and of the new text that
//! replaced it. A tree edited by the combined edit, or symbols shifted by it, are as valid
//! as after the edits one by one (only coarser), so a document whose parse was put off can
//! be caught up with a single splice.

use crate::documents::{Point, TextEdit};

/// `a` then `b` (`b` in the coordinates of the text after `a`) as one edit of the text
/// before `a`.
pub fn combine(a: &TextEdit, b: &TextEdit) -> TextEdit {
    let (start_byte, start_point) = if b.start_byte < a.start_byte {
        (b.start_byte, b.start_point)
    } else {
        (a.start_byte, a.start_point)
    };
    // Where `b` ends in the text before `a`, and where `a` ends in the text after `b`.
    let b_old_end = back(a, b.old_end_byte, b.old_end_point);
    let a_new_end = forward(b, a.new_end_byte, a.new_end_point);
    let (old_end_byte, old_end_point) = if b_old_end.0 > a.old_end_byte {
        b_old_end
    } else {
        (a.old_end_byte, a.old_end_point)
    };
    let (new_end_byte, new_end_point) = if a_new_end.0 > b.new_end_byte {
        a_new_end
    } else {
        (b.new_end_byte, b.new_end_point)
    };
    TextEdit {
        start_byte,
        old_end_byte,
        new_end_byte,
        start_point,
        old_end_point,
        new_end_point,
    }
}

/// A position in the text before `e` as a position in the text after it; one inside the
/// replaced text goes to the end of the new text.
fn forward(e: &TextEdit, byte: usize, p: Point) -> (usize, Point) {
    if byte < e.start_byte {
        return (byte, p);
    }
    if byte < e.old_end_byte {
        return (e.new_end_byte, e.new_end_point);
    }
    let column = if p.row == e.old_end_point.row {
        e.new_end_point.column + (p.column - e.old_end_point.column)
    } else {
        p.column
    };
    let row = p.row + e.new_end_point.row - e.old_end_point.row;
    (
        byte + e.new_end_byte - e.old_end_byte,
        Point { row, column },
    )
}

/// A position in the text after `e` as a position in the text before it; one inside the
/// new text goes to the end of the replaced text.
fn back(e: &TextEdit, byte: usize, p: Point) -> (usize, Point) {
    if byte < e.start_byte {
        return (byte, p);
    }
    if byte < e.new_end_byte {
        return (e.old_end_byte, e.old_end_point);
    }
    let column = if p.row == e.new_end_point.row {
        e.old_end_point.column + (p.column - e.new_end_point.column)
    } else {
        p.column
    };
    let row = p.row + e.old_end_point.row - e.new_end_point.row;
    (
        byte + e.old_end_byte - e.new_end_byte,
        Point { row, column },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::documents::Document;
    use proptest::prelude::*;

    fn point_of(text: &str, byte: usize) -> Point {
        let row = text[..byte].matches('\n').count();
        let column = byte - text[..byte].rfind('\n').map_or(0, |i| i + 1);
        Point { row, column }
    }

    fn edit(doc: &mut Document, from: usize, to: usize, with: &str) -> TextEdit {
        doc.replace(from..to, with)
    }

    proptest! {
        /// Replacing the combined old span of the first text with the combined new span of
        /// the last gives the last text, and every point is where that text has it.
        #[test]
        fn combined_edits_describe_the_same_change(
            base in "[ab\n]{0,40}",
            edits in proptest::collection::vec((any::<usize>(), 0usize..6, "[xy\n]{0,5}"), 1..6),
        ) {
            let mut doc = Document::new(&base, 1, "x");
            let mut all: Option<TextEdit> = None;
            for (at, len, with) in edits {
                let n = doc.text().len();
                let from = at % (n + 1);
                let to = (from + len).min(n);
                let e = edit(&mut doc, from, to, &with);
                all = Some(match all {
                    None => e,
                    Some(a) => combine(&a, &e),
                });
            }
            let c = all.unwrap();
            let now = doc.text();
            let rebuilt = format!(
                "{}{}{}",
                &base[..c.start_byte],
                &now[c.start_byte..c.new_end_byte],
                &base[c.old_end_byte..]
            );
            prop_assert_eq!(&rebuilt, &now);
            prop_assert_eq!(c.start_point, point_of(&base, c.start_byte));
            prop_assert_eq!(c.old_end_point, point_of(&base, c.old_end_byte));
            prop_assert_eq!(c.new_end_point, point_of(&now, c.new_end_byte));
        }
    }
}
