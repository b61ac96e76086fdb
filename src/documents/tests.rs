//! Table tests in the style of llm-ls's document.rs: every row is applied in each encoding.

use super::*;
use tower_lsp_server::ls_types::Position;

fn pos(line: u32, character: u32) -> Position {
    Position::new(line, character)
}

fn range(a: (u32, u32), b: (u32, u32)) -> Option<Range> {
    Some(Range::new(pos(a.0, a.1), pos(b.0, b.1)))
}

struct Row {
    name: &'static str,
    before: &'static str,
    /// (start, end) in utf-8, utf-16 and utf-32 units: the same spot spelled three ways.
    utf8: ((u32, u32), (u32, u32)),
    utf16: ((u32, u32), (u32, u32)),
    utf32: ((u32, u32), (u32, u32)),
    insert: &'static str,
    after: &'static str,
}

const ROWS: &[Row] = &[
    Row {
        name: "ascii insert",
        before: "hello world",
        utf8: ((0, 5), (0, 5)),
        utf16: ((0, 5), (0, 5)),
        utf32: ((0, 5), (0, 5)),
        insert: ",",
        after: "hello, world",
    },
    Row {
        name: "after an emoji (4 bytes, 2 utf-16 units, 1 char)",
        before: "a😀b",
        utf8: ((0, 5), (0, 5)),
        utf16: ((0, 3), (0, 3)),
        utf32: ((0, 2), (0, 2)),
        insert: "X",
        after: "a😀Xb",
    },
    Row {
        name: "replace a flag (two regional indicators)",
        before: "go 🇫🇷 now",
        utf8: ((0, 3), (0, 11)),
        utf16: ((0, 3), (0, 7)),
        utf32: ((0, 3), (0, 5)),
        insert: "🇯🇵",
        after: "go 🇯🇵 now",
    },
    Row {
        name: "CJK (3 bytes, 1 unit each)",
        before: "日本語",
        utf8: ((0, 6), (0, 6)),
        utf16: ((0, 2), (0, 2)),
        utf32: ((0, 2), (0, 2)),
        insert: "の",
        after: "日本の語",
    },
    Row {
        name: "combining acute accent is its own char",
        before: "e\u{301}x",
        utf8: ((0, 3), (0, 3)),
        utf16: ((0, 2), (0, 2)),
        utf32: ((0, 2), (0, 2)),
        insert: "-",
        after: "e\u{301}-x",
    },
    Row {
        name: "CRLF: second line",
        before: "ab\r\ncd",
        utf8: ((1, 1), (1, 1)),
        utf16: ((1, 1), (1, 1)),
        utf32: ((1, 1), (1, 1)),
        insert: "Z",
        after: "ab\r\ncZd",
    },
    Row {
        name: "past the end of a CRLF line clamps before the terminator",
        before: "ab\r\ncd",
        utf8: ((0, 99), (0, 99)),
        utf16: ((0, 99), (0, 99)),
        utf32: ((0, 99), (0, 99)),
        insert: "!",
        after: "ab!\r\ncd",
    },
    Row {
        name: "lone CR is a line break",
        before: "a\rb",
        utf8: ((1, 0), (1, 1)),
        utf16: ((1, 0), (1, 1)),
        utf32: ((1, 0), (1, 1)),
        insert: "B",
        after: "a\rB",
    },
    Row {
        name: "U+2028 is not a line break in LSP",
        before: "q\u{2028}w",
        utf8: ((0, 4), (0, 5)),
        utf16: ((0, 2), (0, 3)),
        utf32: ((0, 2), (0, 3)),
        insert: "W",
        after: "q\u{2028}W",
    },
    Row {
        name: "delete across lines with emoji on both",
        before: "😀a\n😀b\nc",
        utf8: ((0, 4), (1, 4)),
        utf16: ((0, 2), (1, 2)),
        utf32: ((0, 1), (1, 1)),
        insert: "",
        after: "😀b\nc",
    },
    Row {
        name: "line past the end appends",
        before: "x\n",
        utf8: ((7, 0), (7, 0)),
        utf16: ((7, 0), (7, 0)),
        utf32: ((7, 0), (7, 0)),
        insert: "y",
        after: "x\ny",
    },
];

#[test]
fn table_applies_in_every_encoding() {
    for row in ROWS {
        for (enc, (a, b)) in [
            (PositionEncoding::Utf8, row.utf8),
            (PositionEncoding::Utf16, row.utf16),
            (PositionEncoding::Utf32, row.utf32),
        ] {
            let mut doc = Document::new(row.before, 0, "plaintext");
            doc.apply_change(range(a, b), row.insert, enc);
            assert_eq!(doc.text(), row.after, "{} in {}", row.name, enc.name());
        }
    }
}

#[test]
fn mid_character_offsets_clamp_to_the_character_start() {
    let mut doc = Document::new("a😀b", 0, "plaintext");
    // utf-16 unit 2 is the low surrogate of 😀; utf-8 byte 3 is inside it.
    doc.apply_change(range((0, 2), (0, 2)), "|", PositionEncoding::Utf16);
    assert_eq!(doc.text(), "a|😀b");
    let mut doc = Document::new("a😀b", 0, "plaintext");
    doc.apply_change(range((0, 3), (0, 3)), "|", PositionEncoding::Utf8);
    assert_eq!(doc.text(), "a|😀b");
}

#[test]
fn positions_round_trip_in_every_encoding() {
    let rope = Rope::from_str("fn 😀() {}\r\n// 日本 e\u{301} 🇫🇷\rlast");
    for enc in [
        PositionEncoding::Utf8,
        PositionEncoding::Utf16,
        PositionEncoding::Utf32,
    ] {
        for c in 0..=rope.len_chars() {
            let p = char_to_position(&rope, c, enc);
            let back = position_to_char(&rope, p, enc);
            // The only chars without a position of their own are line terminators' second half.
            if back != c {
                assert_eq!(rope.char(c - 1), '\r', "char {c} in {}", enc.name());
            }
        }
    }
}

#[test]
fn edits_report_tree_sitter_bytes_and_points() {
    let mut doc = Document::new("ab\n日本\n", 0, "plaintext");
    let e = doc.apply_change(range((1, 1), (1, 2)), "x\ny", PositionEncoding::Utf16);
    assert_eq!(doc.text(), "ab\n日x\ny\n");
    assert_eq!(e.start_byte, 6);
    assert_eq!(e.old_end_byte, 9);
    assert_eq!(e.new_end_byte, 9);
    assert_eq!(e.start_point, Point { row: 1, column: 3 });
    assert_eq!(e.old_end_point, Point { row: 1, column: 6 });
    assert_eq!(e.new_end_point, Point { row: 2, column: 1 });
}

#[test]
fn negotiation_prefers_utf8_then_utf16() {
    use tower_lsp_server::ls_types::PositionEncodingKind as K;
    let n = |v: Vec<K>| PositionEncoding::negotiate(Some(&v));
    assert_eq!(n(vec![K::UTF16, K::UTF8]), PositionEncoding::Utf8);
    assert_eq!(n(vec![K::UTF32, K::UTF16]), PositionEncoding::Utf16);
    assert_eq!(n(vec![K::UTF32]), PositionEncoding::Utf32);
    assert_eq!(n(vec![]), PositionEncoding::Utf16);
    assert_eq!(PositionEncoding::negotiate(None), PositionEncoding::Utf16);
}

#[test]
fn full_replacement_and_version_checks() {
    let mut docs = Documents::default();
    let uri: Uri = "file:///tmp/a.rs".parse().unwrap();
    docs.open(uri.clone(), "rust".into(), 1, "old");
    let change = TextDocumentContentChangeEvent {
        range: None,
        range_length: None,
        text: "new".into(),
    };
    let (_, check) = docs
        .change(
            &uri,
            2,
            std::slice::from_ref(&change),
            PositionEncoding::Utf16,
        )
        .unwrap();
    assert_eq!(check, VersionCheck::InOrder);
    assert_eq!(docs.get(&uri).unwrap().text(), "new");
    let (_, check) = docs
        .change(
            &uri,
            2,
            std::slice::from_ref(&change),
            PositionEncoding::Utf16,
        )
        .unwrap();
    assert_eq!(check, VersionCheck::NotIncreasing { previous: 2 });
    let other: Uri = "file:///tmp/b.rs".parse().unwrap();
    assert!(matches!(
        docs.change(&other, 1, &[change], PositionEncoding::Utf16),
        Err(DocError::NotOpen(_))
    ));
}

#[test]
fn a_whole_text_change_is_reported_as_the_smallest_edit() {
    // (old, new, expected start byte, old end byte, new end byte)
    let table: &[(&str, &str, usize, usize, usize)] = &[
        ("fn a() {}\n", "fn ab() {}\n", 4, 4, 5),
        ("same", "same", 4, 4, 4),
        ("", "new", 0, 0, 3),
        ("old", "", 0, 3, 0),
        ("aaa", "aaaa", 3, 3, 4),
        // A shared prefix or suffix never ends inside a character.
        ("x😀y", "x😃y", 1, 5, 5),
        ("日本語", "日本人語", 6, 6, 9),
        ("é", "e\u{301}", 0, 2, 3),
    ];
    for &(old, new, start, old_end, new_end) in table {
        let mut d = Document::new(old, 0, "rust");
        let e = d.apply_change(None, new, PositionEncoding::Utf16);
        assert_eq!(d.text(), new, "{old:?} → {new:?}");
        assert_eq!(
            (e.start_byte, e.old_end_byte, e.new_end_byte),
            (start, old_end, new_end),
            "{old:?} → {new:?}"
        );
    }
}

#[test]
fn a_whole_text_change_spanning_rope_chunks_is_exact() {
    // Ropes split text into chunks of about 1 KB: the comparison crosses their edges.
    let old: String = (0..3000).map(|i| format!("line {i} 日本\n")).collect();
    for at in [0, 1, 977, 1024, old.len() / 2, old.len() - 1, old.len()] {
        let at = (at..=old.len()).find(|&i| old.is_char_boundary(i)).unwrap();
        let mut new = old.clone();
        new.insert_str(at, "ß!");
        let mut d = Document::new(&old, 0, "rust");
        let e = d.apply_change(None, &new, PositionEncoding::Utf8);
        assert_eq!(d.text(), new);
        assert_eq!(e.new_end_byte - e.start_byte, 3, "at {at}");
        assert_eq!(e.old_end_byte, e.start_byte, "at {at}");
        assert!(
            e.start_byte <= at && at <= e.start_byte + 3,
            "at {at}: {e:?}"
        );
    }
}

proptest::proptest! {
    // Each case checks every byte of up to ~10 KB in three encodings.
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
    /// The one-pass line index answers exactly as a rope descent, for every byte of texts
    /// that span many rope chunks and mix `\r\n`, lone `\r`, CJK, emoji and combining marks.
    #[test]
    fn the_line_index_agrees_with_the_rope_at_every_byte(
        text in "([a-z ]{0,60}|日本|😀|e\u{301}|\r\n|\r|\n){0,160}",
    ) {
        let rope = Rope::from_str(&text);
        let index = LineIndex::new(&rope);
        for enc in [PositionEncoding::Utf8, PositionEncoding::Utf16, PositionEncoding::Utf32] {
            for byte in 0..=text.len() + 2 {
                proptest::prop_assert_eq!(
                    index.position(byte, enc),
                    byte_to_position(&rope, byte, enc),
                    "byte {} in {}", byte, enc.name()
                );
            }
        }
    }
}

proptest::proptest! {
    /// Whatever the two texts, the reported edit spliced into the old text gives the new one.
    #[test]
    fn a_whole_text_change_edit_splices_old_into_new(
        old in "[a-c日😀\n]{0,40}",
        new in "[a-c日😀\n]{0,40}",
    ) {
        let mut d = Document::new(&old, 0, "rust");
        let e = d.apply_change(None, &new, PositionEncoding::Utf16);
        let spliced = format!("{}{}{}", &old[..e.start_byte], &new[e.start_byte..e.new_end_byte], &old[e.old_end_byte..]);
        proptest::prop_assert_eq!(&spliced, &new);
        proptest::prop_assert_eq!(d.text(), new);
    }
}
