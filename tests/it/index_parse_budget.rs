//! The bounded reparse through the real `mira lsp`: a `"""` typed near the start of a big
//! Python file opens a string that swallows every docstring after it, a reparse of the
//! whole file. documentSymbol answers at once from the previous parse (shifted), and once
//! the background parse is installed it answers what a full walk gives.

use crate::support as common;

use common::{Sandbox, TestServer};
use mira::documents::{Document, PositionEncoding, byte_to_position};
use mira::index::Lang;
use mira::index::extract::extract;
use mira::index::live::OpenDoc;
use mira::index::parse::parse_and_extract;
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};
use tower_lsp_server::ls_types::Range;

const PATIENCE: Duration = Duration::from_secs(20);
const TYPED: &str = "x = \"\"\"";

fn big_python() -> String {
    let mut s = String::from("import os\n\n");
    for i in 0..1000 {
        s.push_str(&format!(
            "def f{i}(a, b):\n    \"\"\"Adds {i} to a.\n\n    Examples: f{i}(1, 2)\n    \"\"\"\n    return a + b + {i}\n\n"
        ));
    }
    s
}

fn outline_names(v: &Value, out: &mut Vec<String>) {
    for s in v.as_array().unwrap() {
        out.push(s["name"].as_str().unwrap().to_string());
        if let Some(c) = s.get("children").filter(|c| c.is_array()) {
            outline_names(c, out);
        }
    }
}

async fn document_names(s: &mut TestServer, uri: &str) -> Vec<String> {
    let r = s
        .request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri}}),
        )
        .await
        .expect("documentSymbol");
    let mut out = Vec::new();
    outline_names(&r, &mut out);
    out.sort();
    out
}

/// The names a full walk gives after typing: of the tree the same keystrokes parse to
/// when every reparse is waited for, and of a fresh parse of the final text (the
/// background parse starts from the tree of whichever keystroke ran out of budget, and
/// error recovery may differ between the two).
fn full_walk_names(src: &str, at: usize) -> (Vec<String>, Vec<String>) {
    let lang = Lang::for_path(Path::new("a.py")).unwrap();
    let mut doc = Document::new(src, 0, "python");
    let mut live = OpenDoc::open(lang, 0, doc.rope().clone()).unwrap();
    for (v, ch) in TYPED.chars().enumerate() {
        let pos = byte_to_position(doc.rope(), at + v, PositionEncoding::Utf16);
        let edit = doc.apply_change(
            Some(Range::new(pos, pos)),
            &ch.to_string(),
            PositionEncoding::Utf16,
        );
        live.apply(v as i32 + 1, &[edit], doc.rope().clone());
    }
    let names = |syms: mira::index::FileSymbols| {
        let mut n: Vec<String> = syms.symbols.into_iter().map(|s| s.name).collect();
        n.sort();
        n
    };
    let chained = names(extract(lang, live.tree(), live.text()));
    let fresh = names(parse_and_extract(lang, doc.text().as_bytes()).unwrap());
    (chained, fresh)
}

#[tokio::test]
async fn an_opened_triple_quote_answers_at_once_and_converges_to_a_full_walk() {
    let sandbox = Sandbox::new();
    let src = big_python();
    std::fs::write(sandbox.project().join("big.py"), &src).unwrap();
    let mut s = TestServer::binary(&sandbox);
    s.initialize(json!({
        "processId": null,
        "rootUri": sandbox.project_uri(),
        "capabilities": {
            "general": {"positionEncodings": ["utf-16"]},
            "textDocument": {"documentSymbol": {"hierarchicalDocumentSymbolSupport": true}}
        },
        "clientInfo": {"name": "mira-tests"}
    }))
    .await;
    let uri = sandbox.file_uri("big.py");
    s.open(&uri, "python", &src).await;
    let before = document_names(&mut s, &uri).await;
    assert!(before.contains(&"f999".to_string()));

    // Type `x = """` on the blank line after the import, one keystroke per didChange.
    let at = src.find("\n\n").unwrap() + 2;
    for (v, ch) in TYPED.chars().enumerate() {
        s.notify(
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": uri, "version": v + 1},
                "contentChanges": [{
                    "range": {"start": {"line": 2, "character": v}, "end": {"line": 2, "character": v}},
                    "text": ch.to_string()
                }]
            }),
        )
        .await;
    }
    let asked = Instant::now();
    let first = document_names(&mut s, &uri).await;
    let answered = asked.elapsed();
    println!("documentSymbol right after the `\"\"\"`: {answered:?}");
    // The heavy reparse ran out of budget: the answer is the previous parse's, shifted,
    // so every definition is still there.
    for name in ["f0", "f500", "f999"] {
        assert!(
            first.contains(&name.to_string()),
            "{name} missing from the first answer"
        );
    }

    let (chained, fresh) = full_walk_names(&src, at);
    assert!(
        chained.len() < before.len() / 2 && fresh.len() < before.len() / 2,
        "the string should swallow most definitions"
    );
    let start = Instant::now();
    loop {
        let now = document_names(&mut s, &uri).await;
        if now == chained || now == fresh {
            println!("converged {:?} after the first answer", start.elapsed());
            break;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "documentSymbol did not converge to a full walk: {} names, expected {} ({:?}…)",
            now.len(),
            chained.len(),
            &chained[..chained.len().min(8)]
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The document itself is the client's: nothing was lost on the way.
    let (version, text) = s.document_state(&uri).await;
    assert_eq!(version, TYPED.chars().count() as i64);
    assert_eq!(text, format!("{}{TYPED}{}", &src[..at], &src[at..]));
    s.shutdown().await;
}

/// A client that sends the whole document at each keystroke (no range) keeps its outline:
/// the change is reduced to the typed character, so the reparse is incremental. It used to
/// count as "everything changed": a full parse over the budget, and an empty outline.
#[tokio::test]
async fn whole_text_keystrokes_keep_the_outline() {
    let sandbox = Sandbox::new();
    let src = big_python();
    std::fs::write(sandbox.project().join("big.py"), &src).unwrap();
    let mut s = TestServer::binary(&sandbox);
    s.initialize_default(&sandbox, &["utf-16"]).await;
    let uri = sandbox.file_uri("big.py");
    s.open(&uri, "python", &src).await;
    assert!(
        document_names(&mut s, &uri)
            .await
            .contains(&"f999".to_string())
    );
    let typed = "\ndef added_here(a):\n    return a\n";
    let mut text = src.clone();
    let mut at = text.len();
    for (v, ch) in typed.chars().enumerate() {
        text.insert(at, ch);
        at += ch.len_utf8();
        s.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": v + 1}, "contentChanges": [{"text": text}]}),
        )
        .await;
        let names = document_names(&mut s, &uri).await;
        for name in ["f0", "f999"] {
            assert!(
                names.contains(&name.to_string()),
                "{name} gone after keystroke {v}"
            );
        }
    }
    assert!(
        document_names(&mut s, &uri)
            .await
            .contains(&"added_here".to_string())
    );
    assert_eq!(s.document_state(&uri).await.1, text);
    s.shutdown().await;
}
