//! A bounded, seeded fuzz of the real binary over stdio (issue 13): random incremental edits
//! in UTF-16 (emoji, CJK, CRLF, lone CR, U+2028) to three open documents, interleaved with
//! garbage params to every method Mira answers, unknown and `$/` methods, malformed JSON,
//! wrong shapes, bare garbage bytes and frames announcing gigabytes. It asserts that every
//! framed request gets exactly one answer and that every tracked document equals the
//! client's text, at checkpoints and at the end.
//!
//! `MIRA_FUZZ_SEED=n` replays one seed; `MIRA_FUZZ_STEPS=n` changes the length.

mod common;

use common::{Sandbox, TestServer, frame};
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// xorshift64*: small, seeded, and the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

const SNIPPETS: &[&str] = &[
    "fn ",
    "x",
    "(",
    ")",
    "{",
    "}",
    " ",
    "\n",
    "\r\n",
    "\r",
    "\t",
    "let a = 1;",
    "😀",
    "🇫🇷",
    "中文",
    "é",
    "e\u{301}",
    "\u{2028}",
    "class K:\n    def m(self):\n        pass\n",
    "export const f = () => 1;\n",
    "/* ",
    " */",
    "\"",
    "'",
    "#[test]\n",
    "impl T for S {\n",
    "}\n",
    "// 注释\n",
    "𝔘𝔫𝔦",
];

/// Line starts (byte offsets) as LSP counts lines: `\n`, `\r\n` and a lone `\r` end one.
fn line_starts(text: &str) -> Vec<usize> {
    let b = text.as_bytes();
    let mut starts = vec![0];
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\n' => starts.push(i + 1),
            b'\r' if b.get(i + 1) == Some(&b'\n') => {
                starts.push(i + 2);
                i += 1;
            }
            b'\r' => starts.push(i + 1),
            _ => {}
        }
        i += 1;
    }
    starts
}

/// The byte range of line `l`'s content (without its terminator).
fn line_span(text: &str, starts: &[usize], l: usize) -> (usize, usize) {
    let start = starts[l];
    let mut end = starts.get(l + 1).copied().unwrap_or(text.len());
    let b = text.as_bytes();
    while end > start && (b[end - 1] == b'\n' || b[end - 1] == b'\r') {
        end -= 1;
    }
    (start, end)
}

/// A random position on a character boundary: (line, UTF-16 column, byte offset).
fn random_position(rng: &mut Rng, text: &str) -> (usize, usize, usize) {
    let starts = line_starts(text);
    let l = rng.below(starts.len());
    let (s, e) = line_span(text, &starts, l);
    let chars: Vec<(usize, char)> = text[s..e].char_indices().collect();
    let k = rng.below(chars.len() + 1);
    let byte = chars.get(k).map_or(e, |(i, _)| s + i);
    let col: usize = text[s..byte].chars().map(char::len_utf16).sum();
    (l, col, byte)
}

struct Doc {
    uri: String,
    text: String,
    version: i64,
}

impl Doc {
    /// One random change: its LSP form, applied to the client's copy.
    fn random_change(&mut self, rng: &mut Rng) -> Value {
        if rng.chance(2) {
            let text: String = (0..rng.below(6)).map(|_| *rng.pick(SNIPPETS)).collect();
            self.text = text.clone();
            return json!({"text": text});
        }
        let a = random_position(rng, &self.text);
        let b = if rng.chance(60) {
            a
        } else {
            random_position(rng, &self.text)
        };
        let (a, b) = if a.2 <= b.2 { (a, b) } else { (b, a) };
        let insert: String = (0..rng.below(4)).map(|_| *rng.pick(SNIPPETS)).collect();
        self.text.replace_range(a.2..b.2, &insert);
        json!({
            "range": {"start": {"line": a.0, "character": a.1}, "end": {"line": b.0, "character": b.1}},
            "text": insert
        })
    }
}

/// Params that are wrong in every way a client or a bug could make them.
fn garbage(rng: &mut Rng, uri: &str) -> Value {
    let deep = (0..rng.below(40)).fold(json!(0), |v, _| json!([v]));
    let choices = [
        Value::Null,
        json!(5),
        json!("text"),
        json!([]),
        json!({}),
        json!({"textDocument": 5}),
        json!({"textDocument": {"uri": "not a uri"}, "position": {"line": 0, "character": 0}}),
        json!({"textDocument": {"uri": uri}, "position": {"line": -1, "character": 1e12}}),
        json!({"textDocument": {"uri": uri}, "position": {"line": 4_000_000_000u64, "character": 0}}),
        json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 9, "character": 0}, "end": {"line": 0, "character": 0}}, "context": {"diagnostics": "x"}}),
        json!({"textDocument": {"uri": "file:///nowhere/x.rs"}, "position": {"line": 0, "character": 0}}),
        json!({"query": 7}),
        json!({"query": "\u{0}\u{FFFF}%*\"(", "limit": -3}),
        json!({"command": "mira.nothing", "arguments": [1, 2]}),
        json!({"command": 5}),
        json!({"uri": uri}),
        json!({"limit": "many", "before": []}),
        json!({"id": "x", "restore": 9}),
        json!({"data": {"kind": "ask", "uri": 3}, "title": 1}),
        deep,
    ];
    rng.pick(&choices).clone()
}

/// Every method Mira answers, plus ones it must refuse (unknown, `$/`, unadvertised).
const METHODS: &[&str] = &[
    "textDocument/documentSymbol",
    "workspace/symbol",
    "textDocument/definition",
    "textDocument/hover",
    "textDocument/codeAction",
    "codeAction/resolve",
    "workspace/executeCommand",
    "textDocument/inlineCompletion",
    "textDocument/completion",
    "mira/history",
    "mira/memories",
    "mira/goals",
    "mira/tasks",
    "mira/context",
    "mira/documentState",
    "textDocument/formatting",
    "no/such/method",
    "$/mystery",
];

/// Commands that answer at once and start nothing that outlives the test's interest.
const COMMANDS: &[&str] = &[
    "mira.status",
    "mira.recall",
    "mira.remember",
    "mira.forget",
    "mira.applyProposal",
    "mira.rejectProposal",
    "mira.cancel",
    "mira.openConversation",
    "mira.askSymbol",
    "mira.explain",
    "mira.fix",
    "mira.edit",
    "mira.ask",
    "mira.nothing",
];

/// Malformed traffic the guard must survive. None of it carries a request to be answered.
fn malformed(rng: &mut Rng) -> Vec<u8> {
    match rng.below(6) {
        0 => frame("{\"jsonrpc\":\"2.0\",\"id\":"),
        1 => frame("[1,2,3]"),
        2 => frame("{\"jsonrpc\":\"2.0\",\"method\":5,\"id\":true}"),
        3 => b"garbage without a header\r\n\r\n".to_vec(),
        4 => b"Content-Length: 4000000000\r\n\r\n{\"jsonrpc\":".to_vec(),
        _ => frame(
            "\u{feff}{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didChange\",\"params\":{\"textDocument\":{\"uri\":\"file:///elsewhere.rs\",\"version\":1},\"contentChanges\":[{\"text\":1}]}}",
        ),
    }
}

async fn check_documents(server: &mut TestServer, docs: &[Doc], seed: u64, step: usize) {
    for d in docs {
        let (version, text) = server.document_state(&d.uri).await;
        assert_eq!(
            (version, text.as_str()),
            (d.version, d.text.as_str()),
            "seed {seed}, step {step}: {} drifted from the client's copy",
            d.uri
        );
    }
}

/// The server's stderr, kept in a file: the fuzz makes it warn thousands of times
/// ("malformed message"), which belongs in no CI log unless the test fails.
struct ServerLog(std::path::PathBuf);

impl ServerLog {
    fn stdio(&self) -> std::process::Stdio {
        std::fs::File::create(&self.0)
            .expect("create the server's stderr file")
            .into()
    }
}

impl Drop for ServerLog {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        let text = std::fs::read_to_string(&self.0).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tail = &lines[lines.len().saturating_sub(60)..];
        eprintln!(
            "--- last {} of {} lines the server wrote to stderr ---\n{}",
            tail.len(),
            lines.len(),
            tail.join("\n")
        );
    }
}

async fn run(seed: u64, steps: usize) {
    let sandbox = Sandbox::new();
    let log = ServerLog(sandbox.dir.path().join("server-stderr.log"));
    let mut server = TestServer::binary_with_stderr(sandbox.env(), &sandbox.project(), log.stdio());
    server.initialize_default(&sandbox, &["utf-16"]).await;
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut docs = Vec::new();
    for (name, lang, text) in [
        ("a.rs", "rust", "fn main() {\n    let s = \"😀\";\n}\n"),
        (
            "b.py",
            "python",
            "class A:\n    def m(self):\n        return '中文'\n",
        ),
        (
            "c.ts",
            "typescript",
            "export const f = (x: number) => x;\r\nclass C { m() {} }\r\n",
        ),
    ] {
        let uri = sandbox.file_uri(name);
        server.open(&uri, lang, text).await;
        docs.push(Doc {
            uri,
            text: text.to_string(),
            version: 0,
        });
    }

    let mut pending: BTreeSet<i64> = BTreeSet::new();
    let (mut edits, mut requests, mut broken) = (0, 0, 0);
    for step in 0..steps {
        match rng.below(100) {
            0..=54 => {
                let d = rng.below(docs.len());
                let changes: Vec<Value> = (0..1 + rng.below(3))
                    .map(|_| docs[d].random_change(&mut rng))
                    .collect();
                docs[d].version += 1;
                let (uri, version) = (docs[d].uri.clone(), docs[d].version);
                server
                    .notify(
                        "textDocument/didChange",
                        json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": changes}),
                    )
                    .await;
                edits += 1;
            }
            55..=89 => {
                let method = *rng.pick(METHODS);
                let uri = docs[rng.below(docs.len())].uri.clone();
                let params = if method == "workspace/executeCommand" && rng.chance(70) {
                    let args = if rng.chance(50) {
                        json!([garbage(&mut rng, &uri)])
                    } else {
                        garbage(&mut rng, &uri)
                    };
                    json!({"command": rng.pick(COMMANDS), "arguments": args})
                } else {
                    garbage(&mut rng, &uri)
                };
                pending.insert(server.request_start(method, params).await);
                requests += 1;
            }
            _ => {
                let bytes = malformed(&mut rng);
                server.send_raw(&bytes).await;
                broken += 1;
            }
        }
        if step % 200 == 199 {
            drain(&mut server, &mut pending, seed).await;
            check_documents(&mut server, &docs, seed, step).await;
        }
    }
    drain(&mut server, &mut pending, seed).await;
    check_documents(&mut server, &docs, seed, steps).await;
    eprintln!(
        "seed {seed}: {edits} didChange, {requests} requests answered, {broken} malformed messages survived"
    );
    assert_eq!(
        server.shutdown().await,
        0,
        "seed {seed}: clean exit after the fuzz"
    );
}

/// Every request sent so far gets its answer (an error is an answer).
async fn drain(server: &mut TestServer, pending: &mut BTreeSet<i64>, seed: u64) {
    for id in std::mem::take(pending) {
        let answered =
            tokio::time::timeout(std::time::Duration::from_secs(30), server.response(id)).await;
        assert!(
            answered.is_ok(),
            "seed {seed}: request {id} was never answered"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_input_sequence_loses_an_answer_or_drifts_a_document() {
    let steps = std::env::var("MIRA_FUZZ_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3000);
    let seeds: Vec<u64> = match std::env::var("MIRA_FUZZ_SEED") {
        Ok(s) => vec![s.parse().expect("MIRA_FUZZ_SEED is a number")],
        Err(_) => vec![1, 2, 3, 4, 5],
    };
    for seed in seeds {
        run(seed, steps).await;
    }
}
