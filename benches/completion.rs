//! Mira's own time per inline completion (docs/benchmarks.md: p99 ≤ 5 ms), over stdio against the
//! real `mira lsp` binary and the loopback mock FIM server, on a 7,500-line file. Each round
//! types one character (so no answer comes from the cache) and asks for a completion at
//! once (invoked, no debounce), alternating the middle and the end of the file. Two spans
//! are Mira's: from the request leaving the editor to the provider receiving its call
//! (document read, windows, index context, preferences, redaction, HTTP), and from the
//! provider's last byte to the editor receiving the answer (parsing, shaping, caching).
//! Both include the stdio and loopback hops; Mira's in-process share of each (from the
//! request reaching the completer to the HTTP client, from the answer's last byte read to
//! the suggestion) is read from the server's `mira::complete::timing` log lines.
//!
//! It runs twice: against a mock that keeps connections open (as llama.cpp and vLLM do, so
//! reqwest's pool reuses one), and against one that closes each connection (a new TCP
//! connection per call, the worst case).
//!
//! Run: `cargo bench --bench completion` (release).

#[allow(dead_code)]
#[path = "../tests/it/support/mod.rs"]
mod common;

use common::mock_fim::{self, FimWire, MockFim, Reply};
use common::{Sandbox, TestServer};
use serde_json::{Value, json};
use std::path::Path;
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
    println!(
        "inline completion on a {LINES}-line file, one keystroke before each (stdio, real binary, mock FIM):"
    );
    println!("-- provider keeps connections open (pooled, like llama.cpp/vLLM):");
    run(true).await;
    println!("-- provider closes every connection (a new TCP connection per call):");
    run(false).await;
}

/// Mira's in-process times from the server's log: (request → HTTP client, last byte read →
/// suggestion), one pair per served completion.
fn own_times(mira_home: &Path) -> (Vec<Duration>, Vec<Duration>) {
    let (mut to_call, mut after_read) = (Vec::new(), Vec::new());
    let field = |line: &str, name: &str| -> Option<Duration> {
        let v = line.split(&format!("{name}=")).nth(1)?;
        let digits: String = v.chars().take_while(char::is_ascii_digit).collect();
        Some(Duration::from_micros(digits.parse().ok()?))
    };
    let logs = std::fs::read_dir(mira_home.join("logs")).expect("the server's log directory");
    for entry in logs.flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        for line in text.lines().filter(|l| l.contains("completion served")) {
            if let (Some(a), Some(b)) = (field(line, "to_call_us"), field(line, "after_read_us")) {
                to_call.push(a);
                after_read.push(b);
            }
        }
    }
    (to_call, after_read)
}

async fn run(keep_alive: bool) {
    let sandbox = Sandbox::new();
    let src = sandbox.project().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("util.rs"),
        "/// Scales a step.\npub fn scale(x: u32) -> u32 { x * 2 }\n/// Keeps a step in range.\npub fn clamp(x: u32) -> u32 { x.min(100) }\n",
    )
    .unwrap();
    let mock = if keep_alive {
        MockFim::keep_alive_in_background(FimWire::Completions)
    } else {
        MockFim::start_in_background(FimWire::Completions)
    };
    for _ in 0..ROUNDS {
        mock.push(Reply::text(&["x + ", "1", ";"]));
    }
    let mut env = sandbox.env();
    env.push((
        "MIRA_LOG".into(),
        "warn,mira::complete::timing=debug".into(),
    ));
    let mut s = TestServer::binary_with_env(env, &sandbox.project());
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
    report("request → provider call", to_provider);
    if !keep_alive {
        report("(of which: request → connection accepted)", to_accept);
    }
    report("provider's last byte → response", to_editor);
    report("Mira's own time, end to end (sum)", total);
    println!("prompts carrying the imported helpers' signatures: {with_context}/{ROUNDS}");
    s.shutdown().await;
    // The log writer flushes on exit; give the file a moment to land.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (to_call, after_read) = own_times(&sandbox.mira_home());
    assert_eq!(
        to_call.len(),
        ROUNDS,
        "one timing line per completion in the server's log"
    );
    let sums = to_call
        .iter()
        .zip(&after_read)
        .map(|(a, b)| *a + *b)
        .collect();
    report("in process: completer → HTTP client", to_call);
    report("in process: last byte read → suggestion", after_read);
    report("in process: sum", sums);
}
