//! Mira's own time per inline completion (DESIGN §10: p99 ≤ 5 ms), over stdio against the
//! real `mira lsp` binary and the loopback mock FIM server, on a 7,500-line file. Each round
//! types one character (so no answer comes from the cache) and asks for a completion at
//! once (invoked, no debounce), alternating the middle and the end of the file. Two spans
//! are Mira's: from the request leaving the editor to the provider receiving its call
//! (document read, windows, index context, preferences, redaction, HTTP), and from the
//! provider's last byte to the editor receiving the answer (parsing, shaping, caching).
//! Both include the stdio and loopback hops.
//!
//! Run: `cargo bench --bench completion` (release).

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/mock_fim/mod.rs"]
mod mock_fim;

use common::{Sandbox, TestServer};
use mock_fim::{FimWire, MockFim, Reply};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const LINES: usize = 7_500;
const ROUNDS: usize = 400;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn report(name: &str, mut v: Vec<Duration>) {
    v.sort();
    let ms = |d: Duration| format!("{:.2} ms", d.as_secs_f64() * 1000.0);
    println!(
        "{name:<44} n={:<4} p50 {:>9}  p99 {:>9}  max {:>9}",
        v.len(),
        ms(percentile(&v, 0.5)),
        ms(percentile(&v, 0.99)),
        ms(*v.last().unwrap())
    );
}

/// 1,500 five-line functions, each calling the previous one and a helper from `util.rs`.
fn source() -> String {
    let mut s = String::from("use crate::util::{scale, clamp};\n");
    for i in 0..LINES / 5 - 1 {
        let prev = i.saturating_sub(1);
        s.push_str(&format!(
            "/// Step {i}.\nfn step_{i}(x: u32) -> u32 {{\n    let y = scale(step_{prev}(x));\n    clamp(y + {i})\n}}\n"
        ));
    }
    s.push_str("fn last(x: u32) -> u32 {\n    let v = \n}\n\n");
    s
}

fn position(line: usize, character: usize) -> Value {
    json!({"line": line, "character": character})
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let sandbox = Sandbox::new();
    let src = sandbox.project().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("util.rs"),
        "/// Scales a step.\npub fn scale(x: u32) -> u32 { x * 2 }\n/// Keeps a step in range.\npub fn clamp(x: u32) -> u32 { x.min(100) }\n",
    )
    .unwrap();
    let mock = MockFim::start_in_background(FimWire::Completions);
    for _ in 0..ROUNDS {
        mock.push(Reply::text(&["x + ", "1", ";"]));
    }
    let mut s = TestServer::binary(&sandbox);
    s.initialize(json!({
        "processId": null,
        "rootUri": sandbox.project_uri(),
        "workspaceFolders": [{"uri": sandbox.project_uri(), "name": "project"}],
        "capabilities": {"general": {"positionEncodings": ["utf-16"]}},
        "initializationOptions": {"mira": {"completion": {
            "provider": "openai-completions", "base_url": mock.base_url(), "debounce_ms": 0
        }}}
    }))
    .await;
    let uri = sandbox.file_uri("src/main.rs");
    let text = source();
    assert_eq!(text.lines().count(), LINES);
    s.open(&uri, "rust", &text).await;
    s.document_state(&uri).await;

    let mut to_provider = Vec::with_capacity(ROUNDS);
    let mut to_accept = Vec::with_capacity(ROUNDS);
    let mut to_editor = Vec::with_capacity(ROUNDS);
    let mut total = Vec::with_capacity(ROUNDS);
    let mut with_context = 0;
    let mid = LINES / 2 / 5 * 5 + 3; // a `let y = …` line in the middle
    for v in 1..=ROUNDS {
        // One keystroke: a digit typed inside `clamp(y + N)` in the middle, or after
        // `let v = ` at the end; the request follows it at once, right after the new digit.
        let at = if v % 2 == 0 {
            (mid + 1, 12)
        } else {
            (LINES - 3, 12)
        };
        let (line, character) = (at.0, at.1 + 1);
        s.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": v}, "contentChanges": [
                {"range": {"start": position(at.0, at.1), "end": position(at.0, at.1)}, "text": "1"}
            ]}),
        )
        .await;
        let sent = Instant::now();
        let r = s
            .request(
                "textDocument/inlineCompletion",
                json!({"textDocument": {"uri": uri}, "position": position(line, character),
                       "context": {"triggerKind": 1}}),
            )
            .await
            .expect("inlineCompletion");
        let received = Instant::now();
        assert!(
            r["items"][0]["insertText"].is_string(),
            "no suggestion: {r}"
        );
        assert_eq!(
            mock.requests().len(),
            v,
            "round {v} was answered without a call"
        );
        mock.wait_served(v - 1).await;
        let call = mock.requests().pop().expect("a provider call");
        if mock_fim::FimWire::Completions
            .prompt_of(&call.body)
            .contains("src/util.rs: pub fn scale")
        {
            with_context += 1;
        }
        let last = call.last_byte.expect("the mock finished");
        to_provider.push(call.arrived.saturating_duration_since(sent));
        to_accept.push(call.accepted.saturating_duration_since(sent));
        to_editor.push(received.saturating_duration_since(last));
        total.push(
            call.arrived.saturating_duration_since(sent) + received.saturating_duration_since(last),
        );
    }
    println!(
        "inline completion on a {LINES}-line file, one keystroke before each (stdio, real binary, mock FIM):"
    );
    report("request → provider call", to_provider);
    report("(of which: request → connection accepted)", to_accept);
    report("provider's last byte → response", to_editor);
    report("Mira's own time (sum)", total);
    println!("prompts carrying the imported helpers' signatures: {with_context}/{ROUNDS}");
    s.shutdown().await;
}
