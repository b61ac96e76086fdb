//! Property: after any sequence of random incremental edits — multi-byte text, CRLF, lone CR,
//! positions past line ends and past the last line — Mira's document equals the same edits
//! applied to a plain String by an independent implementation, with versions in order.
//! In-process for every encoding, and once through the binary over stdio.

use crate::support as common;

use common::{Sandbox, TestServer};
use proptest::prelude::*;
use serde_json::json;

#[derive(Clone, Copy, Debug)]
enum Enc {
    Utf8,
    Utf16,
    Utf32,
}

impl Enc {
    fn name(self) -> &'static str {
        match self {
            Enc::Utf8 => "utf-8",
            Enc::Utf16 => "utf-16",
            Enc::Utf32 => "utf-32",
        }
    }
    fn units(self, c: char) -> usize {
        match self {
            Enc::Utf8 => c.len_utf8(),
            Enc::Utf16 => c.len_utf16(),
            Enc::Utf32 => 1,
        }
    }
}

/// Byte ranges of each line's content (terminators excluded), LSP line rules.
fn lines(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let (mut out, mut start, mut i) = (vec![], 0, 0);
    while i < b.len() {
        match b[i] {
            b'\r' if b.get(i + 1) == Some(&b'\n') => {
                out.push((start, i));
                i += 2;
                start = i;
            }
            b'\r' | b'\n' => {
                out.push((start, i));
                i += 1;
                start = i;
            }
            _ => i += 1,
        }
    }
    out.push((start, b.len()));
    out
}

/// The oracle: (line, character) → byte offset, clamping like the spec asks.
fn offset(text: &str, line: u32, character: u32, enc: Enc) -> usize {
    let ls = lines(text);
    let Some(&(start, end)) = ls.get(line as usize) else {
        return text.len();
    };
    let mut units = 0;
    for (i, c) in text[start..end].char_indices() {
        let next = units + enc.units(c);
        if next > character as usize {
            return start + i;
        }
        units = next;
    }
    end
}

/// Units of a line's content, so generated positions are mostly meaningful.
fn line_units(text: &str, line: usize, enc: Enc) -> usize {
    let ls = lines(text);
    ls.get(line)
        .map(|&(s, e)| text[s..e].chars().map(|c| enc.units(c)).sum())
        .unwrap_or(0)
}

const PIECES: &[&str] = &[
    "a", "Z", " ", "fn", "\n", "\r\n", "\r", "😀", "🇫🇷", "日本", "e\u{301}", "\t", "{}", "\u{2028}",
];

#[derive(Clone, Debug)]
struct Op {
    /// fractions of the document, so positions track its size
    start: (f64, f64),
    len: (u8, u8),
    text: Vec<u8>,
    /// how many changes the next didChange carries (1..=3)
    batch: u8,
}

fn op() -> impl Strategy<Value = Op> {
    (
        (0.0..1.08f64, 0.0..1.25f64),
        (0u8..3, 0u8..6),
        prop::collection::vec(0u8..PIECES.len() as u8, 0..5),
        1u8..=3,
    )
        .prop_map(|(start, len, text, batch)| Op {
            start,
            len,
            text,
            batch,
        })
}

/// Turn a generated op into an LSP change against `text`, and apply it to `text`.
fn change(text: &mut String, op: &Op, enc: Enc) -> serde_json::Value {
    let nlines = lines(text).len();
    let sl = (op.start.0 * nlines as f64) as usize;
    let sc = (op.start.1 * line_units(text, sl, enc) as f64) as usize;
    let el = sl + op.len.0 as usize;
    let ec = if op.len.0 == 0 {
        sc + op.len.1 as usize
    } else {
        op.len.1 as usize
    };
    let insert: String = op.text.iter().map(|&i| PIECES[i as usize]).collect();
    let a = offset(text, sl as u32, sc as u32, enc);
    let b = offset(text, el as u32, ec as u32, enc).max(a);
    text.replace_range(a..b, &insert);
    json!({"range": {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}},
           "text": insert})
}

async fn run(mut s: TestServer, sandbox: &Sandbox, enc: Enc, ops: &[Op]) {
    s.initialize_default(sandbox, &[enc.name()]).await;
    let uri = sandbox.file_uri("prop.txt");
    let mut text = String::from("start 😀\r\nsecond 日本\nthird\rlast");
    s.open(&uri, "plaintext", &text).await;
    let mut version = 0;
    let mut i = 0;
    while i < ops.len() {
        let n = (ops[i].batch as usize).min(ops.len() - i);
        let changes: Vec<_> = ops[i..i + n]
            .iter()
            .map(|op| change(&mut text, op, enc))
            .collect();
        i += n;
        version += 1;
        s.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": changes}),
        )
        .await;
        if version % 25 == 0 {
            assert_eq!(
                s.document_state(&uri).await,
                (version, text.clone()),
                "{}",
                enc.name()
            );
        }
    }
    assert_eq!(
        s.document_state(&uri).await,
        (version, text),
        "{}",
        enc.name()
    );
    assert_eq!(s.shutdown().await, 0);
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

proptest! {
    // 4 cases × 300 edits = 1,200 random edits per encoding.
    #![proptest_config(ProptestConfig { cases: 4, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn in_process_utf8(ops in prop::collection::vec(op(), 300)) {
        let sandbox = Sandbox::new();
        runtime().block_on(async { run(TestServer::in_process(&sandbox), &sandbox, Enc::Utf8, &ops).await });
    }

    #[test]
    fn in_process_utf16(ops in prop::collection::vec(op(), 300)) {
        let sandbox = Sandbox::new();
        runtime().block_on(async { run(TestServer::in_process(&sandbox), &sandbox, Enc::Utf16, &ops).await });
    }

    #[test]
    fn in_process_utf32(ops in prop::collection::vec(op(), 300)) {
        let sandbox = Sandbox::new();
        runtime().block_on(async { run(TestServer::in_process(&sandbox), &sandbox, Enc::Utf32, &ops).await });
    }
}

proptest! {
    // The real binary over stdio: 1,000 edits in one case per encoding pairing.
    #![proptest_config(ProptestConfig { cases: 1, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn binary_over_stdio(ops in prop::collection::vec(op(), 1000)) {
        let sandbox = Sandbox::new();
        let rt = runtime();
        rt.block_on(async { run(TestServer::binary(&sandbox), &sandbox, Enc::Utf16, &ops).await });
        let sandbox = Sandbox::new();
        rt.block_on(async { run(TestServer::binary(&sandbox), &sandbox, Enc::Utf8, &ops).await });
    }
}

#[test]
fn oracle_agrees_with_the_spec_examples() {
    let t = "a😀b\r\nc";
    assert_eq!(offset(t, 0, 3, Enc::Utf16), 5);
    assert_eq!(
        offset(t, 0, 2, Enc::Utf16),
        1,
        "mid-surrogate clamps to the char start"
    );
    assert_eq!(
        offset(t, 0, 99, Enc::Utf8),
        6,
        "past the end clamps before CRLF"
    );
    assert_eq!(offset(t, 1, 1, Enc::Utf32), 9);
    assert_eq!(offset(t, 5, 0, Enc::Utf32), t.len());
}
