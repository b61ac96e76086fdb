//! codeAction latency while typing (docs/benchmarks.md: p99 ≤ 10 ms), over stdio against the real
//! `mira lsp` binary, on a 7,500-line file: each round types a character into a function
//! body (didChange) and then asks for code actions — at a call site (resolved through the
//! index), on a selection with a diagnostic, and at the end of the file.
//!
//! Run: `cargo bench --bench code_actions` (release), or `--profile dev` for an upper bound.

#[allow(dead_code)]
#[path = "../tests/it/support/mod.rs"]
mod common;

use common::{Sandbox, TestServer};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const LINES: usize = 7_500;
const ROUNDS: usize = 600;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn report(name: &str, mut v: Vec<Duration>) {
    v.sort();
    let ms = |d: Duration| format!("{:.2} ms", d.as_secs_f64() * 1000.0);
    println!(
        "{name:<46} n={:<4} p50 {:>9}  p99 {:>9}  max {:>9}",
        v.len(),
        ms(percentile(&v, 0.5)),
        ms(percentile(&v, 0.99)),
        ms(*v.last().unwrap())
    );
}

/// 1,500 five-line functions, each calling the previous one.
fn source() -> String {
    let mut s = String::with_capacity(LINES * 40);
    for i in 0..LINES / 5 {
        let prev = i.saturating_sub(1);
        s.push_str(&format!("/// Step {i}.\nfn step_{i}(x: u32) -> u32 {{\n    let y = step_{prev}(x);\n    y + {i}\n}}\n"));
    }
    s
}

fn range(l1: usize, c1: usize, l2: usize, c2: usize) -> Value {
    json!({"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}})
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let sandbox = Sandbox::new();
    let mut s = TestServer::binary(&sandbox);
    // As the editors ask (all three take CodeAction literals): the actions come with their
    // data and their command, the full answer.
    s.initialize(json!({
        "processId": null,
        "rootUri": sandbox.project_uri(),
        "capabilities": {
            "general": {"positionEncodings": ["utf-16"]},
            "textDocument": {"codeAction": {
                "codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["", "quickfix", "refactor"]}},
                "resolveSupport": {"properties": ["edit", "command"]}
            }}
        }
    }))
    .await;
    let uri = sandbox.file_uri("big.rs");
    let text = source();
    assert_eq!(text.lines().count(), LINES);
    s.open(&uri, "rust", &text).await;
    s.document_state(&uri).await;

    let mut at_call = Vec::with_capacity(ROUNDS);
    let mut on_selection = Vec::with_capacity(ROUNDS);
    let mut at_end = Vec::with_capacity(ROUNDS);
    let diag =
        json!({"range": range(2, 8, 2, 9), "message": "unused variable: `y`", "severity": 2});
    for v in 1..=ROUNDS {
        // Type one character into the body of a function somewhere in the file (a digit into
        // `y + N`, so the code stays valid as it would between most keystrokes).
        let f = (v * 7919) % (LINES / 5);
        s.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": v}, "contentChanges": [
                {"range": range(f * 5 + 3, 8, f * 5 + 3, 8), "text": "1"}
            ]}),
        )
        .await;
        let call_line = ((v * 104_729) % (LINES / 5)) * 5 + 2;
        for (r, ctx, out) in [
            (
                range(call_line, 14, call_line, 14),
                json!({"diagnostics": []}),
                &mut at_call,
            ),
            (
                range(call_line, 4, call_line + 1, 5),
                json!({"diagnostics": [diag]}),
                &mut on_selection,
            ),
            (
                range(LINES - 3, 14, LINES - 3, 14),
                json!({"diagnostics": []}),
                &mut at_end,
            ),
        ] {
            let t = Instant::now();
            let res = s
                .request(
                    "textDocument/codeAction",
                    json!({"textDocument": {"uri": uri}, "range": r, "context": ctx}),
                )
                .await
                .expect("codeAction");
            out.push(t.elapsed());
            assert!(
                res.as_array().is_some_and(|a| !a.is_empty()),
                "no actions: {res}"
            );
        }
    }
    println!(
        "codeAction on a {LINES}-line file, one keystroke before each request (stdio, real binary):"
    );
    report("at a call site (index lookup)", at_call);
    report("selection + diagnostic", on_selection);
    report("at the end of the file", at_end);
    s.shutdown().await;
}
