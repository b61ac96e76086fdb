//! A bounded, seeded fuzz of the real binary over stdio (issues 13 and 20). Each session opens
//! documents in four of the ten languages, each 6–40 KB and dense with multi-byte text
//! (CJK, emoji, combining marks), with `index.parse_budget_ms = 1` so that edits which open a
//! string or a comment run over budget and race the background reparse. It sends random
//! incremental UTF-16 edits (big pastes and bursts included), valid requests that read the
//! index, garbage params to every method Mira answers, unknown and `$/` methods, malformed
//! JSON, bare garbage bytes and frames announcing gigabytes. Every framed request must get
//! its answer, every tracked document must equal the client's text at checkpoints, and the
//! process must exit 0 after `shutdown`. It prints sessions, messages, crashes, hangs and
//! drift; any of the last three fails it, naming the seed.
//!
//! `MIRA_FUZZ_SEED=n` replays one session; `MIRA_FUZZ_SESSIONS` and `MIRA_FUZZ_STEPS` change
//! the run's size. The valgrind test runs a short fuzz with the server under memcheck.

use crate::support as common;

use common::{Sandbox, TestServer, frame};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

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
    // Openers: each makes the lexer read to the end of the file, past the parse budget.
    "/*",
    "`",
    "\"\"\"",
    "<div>",
    "#{",
    "=begin\n",
    "r#\"",
];

/// The ten languages: extension, languageId, a header, and one repeated item (`{i}` = its
/// number) heavy in three-byte characters, so parser chunks would end inside one.
const LANGUAGES: &[(&str, &str, &str, &str)] = &[
    (
        "rs",
        "rust",
        "use std::fmt;\n",
        "/// 文档 {i} 😀\npub fn f{i}(x: &str) -> usize {\n    let s = \"数据{i} é\";\n    x.len() + s.len()\n}\n",
    ),
    (
        "py",
        "python",
        "import os\n",
        "# 注释 {i}\ndef f{i}(x):\n    \"\"\"文档字符串 {i} 😀\"\"\"\n    return x + '数据'\n\n",
    ),
    (
        "ts",
        "typescript",
        "import { a } from './a';\n",
        "// 注释 {i}\nexport function f{i}(x: string): number {\n  const s = `模板 ${x} 😀`;\n  return s.length;\n}\n",
    ),
    (
        "tsx",
        "typescriptreact",
        "import React from 'react';\n",
        "export const C{i} = (p: { s: string }) => <div title=\"标题\">{p.s} 中文</div>;\n",
    ),
    (
        "js",
        "javascript",
        "'use strict';\n",
        "// 注释 {i}\nfunction f{i}(x) { return '数据' + x; /* 😀 */ }\n",
    ),
    (
        "go",
        "go",
        "package main\n",
        "// F{i} 文档 😀\nfunc F{i}(x string) int {\n\ts := \"数据\"\n\treturn len(x + s)\n}\n",
    ),
    (
        "java",
        "java",
        "package p;\n",
        "class C{i} {\n  // 注释 😀\n  String m() { return \"数据\"; }\n}\n",
    ),
    (
        "c",
        "c",
        "#include <stdio.h>\n",
        "/* 注释 {i} 😀 */\nint f{i}(const char *s) { return s[0] + 1; } // 中文\n",
    ),
    (
        "cpp",
        "cpp",
        "#include <string>\n",
        "namespace n{i} { // 注释\nstd::string f() { return \"数据😀\"; } }\n",
    ),
    (
        "rb",
        "ruby",
        "require 'set'\n",
        "# 注释 {i}\ndef f{i}(x)\n  \"数据 #{x} 😀\"\nend\n",
    ),
];

/// A document of `bytes` or a little more: the header, then numbered items.
fn document(lang: usize, bytes: usize) -> String {
    let (_, _, header, item) = LANGUAGES[lang];
    let mut text = header.to_string();
    let mut i = 0;
    while text.len() < bytes {
        text.push_str(&item.replace("{i}", &i.to_string()));
        i += 1;
    }
    text
}

/// A paste of 9–12 KB of CJK comment lines: moves every chunk boundary after it.
fn big_paste(rng: &mut Rng) -> String {
    let line = "// 大段粘贴的中文注释行，用于移动分块边界 😀\n";
    line.repeat(9_000 / line.len() + rng.below(60))
}

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
        let insert: String = if rng.chance(3) {
            big_paste(rng)
        } else {
            (0..rng.below(4)).map(|_| *rng.pick(SNIPPETS)).collect()
        };
        self.text.replace_range(a.2..b.2, &insert);
        json!({
            "range": {"start": {"line": a.0, "character": a.1}, "end": {"line": b.0, "character": b.1}},
            "text": insert
        })
    }
}

/// A well-formed request that reads the index (where the held-out fuzz saw the crash).
fn index_request(rng: &mut Rng, docs: &[Doc]) -> (&'static str, Value) {
    let d = &docs[rng.below(docs.len())];
    let (line, character, _) = random_position(rng, &d.text);
    let at =
        json!({"textDocument": {"uri": d.uri}, "position": {"line": line, "character": character}});
    match rng.below(6) {
        0 => (
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": d.uri}}),
        ),
        1 => (
            "workspace/symbol",
            json!({"query": rng.pick(&["f1", "C", "n2", "", "数据"])}),
        ),
        2 => ("textDocument/definition", at),
        3 => ("textDocument/hover", at),
        4 => (
            "textDocument/codeAction",
            json!({"textDocument": {"uri": d.uri}, "range": {"start": at["position"], "end": at["position"]}, "context": {"diagnostics": []}}),
        ),
        _ => ("mira/documentState", json!({"uri": d.uri})),
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

/// What went wrong in a session, with the seed that replays it.
enum Failure {
    Crash { seed: u64, step: usize, how: String },
    Hang { seed: u64, id: i64 },
    Drift { seed: u64, step: usize, uri: String },
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Crash { seed, step, how } => {
                write!(f, "seed {seed}: the server died at step {step} ({how})")
            }
            Failure::Hang { seed, id } => write!(f, "seed {seed}: request {id} was never answered"),
            Failure::Drift { seed, step, uri } => {
                write!(
                    f,
                    "seed {seed}: {uri} drifted from the client's copy by step {step}"
                )
            }
        }
    }
}

#[derive(Default)]
struct Figures {
    sessions: usize,
    messages: usize,
    failures: Vec<Failure>,
}

impl Figures {
    fn count(&self, f: fn(&Failure) -> bool) -> usize {
        self.failures.iter().filter(|x| f(x)).count()
    }

    /// Straight to stderr, past the test harness's capture: CI's log shows the figures.
    fn print(&self, what: &str) {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "{what}: {} sessions, {} messages, crashes {}, hangs {}, document drift {}",
            self.sessions,
            self.messages,
            self.count(|f| matches!(f, Failure::Crash { .. })),
            self.count(|f| matches!(f, Failure::Hang { .. })),
            self.count(|f| matches!(f, Failure::Drift { .. })),
        );
    }
}

struct Run {
    steps: usize,
    /// How long one answer may take (valgrind is ~50× slower).
    patience: Duration,
    wrapper: Vec<String>,
}

/// How the process died, when it has.
fn death(server: &mut TestServer) -> Option<String> {
    let status = server.exit_status()?;
    Some(match status.signal() {
        Some(sig) => format!("killed by signal {sig}"),
        None => format!("exited with {:?} mid-session", status.code()),
    })
}

/// Every request sent so far gets its answer (an error is an answer), unless the server died.
async fn drain(
    server: &mut TestServer,
    pending: &mut BTreeSet<i64>,
    run: &Run,
    seed: u64,
    step: usize,
) -> Result<(), Failure> {
    for id in std::mem::take(pending) {
        let deadline = std::time::Instant::now() + run.patience;
        loop {
            if server
                .response_within(id, Duration::from_millis(200))
                .await
                .is_some()
            {
                break;
            }
            if let Some(how) = death(server) {
                return Err(Failure::Crash { seed, step, how });
            }
            if std::time::Instant::now() > deadline {
                return Err(Failure::Hang { seed, id });
            }
        }
    }
    Ok(())
}

async fn check_documents(
    server: &mut TestServer,
    docs: &[Doc],
    run: &Run,
    seed: u64,
    step: usize,
) -> Result<(), Failure> {
    for d in docs {
        let id = server
            .request_start("mira/documentState", json!({"uri": d.uri}))
            .await;
        let state = match server.response_within(id, run.patience).await {
            Some(Ok(r)) => r,
            Some(Err(e)) => panic!("seed {seed}: documentState failed: {e}"),
            None => {
                return Err(match death(server) {
                    Some(how) => Failure::Crash { seed, step, how },
                    None => Failure::Hang { seed, id },
                });
            }
        };
        if (state["version"].as_i64(), state["text"].as_str()) != (Some(d.version), Some(&d.text)) {
            return Err(Failure::Drift {
                seed,
                step,
                uri: d.uri.clone(),
            });
        }
    }
    Ok(())
}

/// The server's stderr (valgrind's report too), kept in a file: the fuzz makes it warn
/// thousands of times ("malformed message"), which belongs in no CI log unless it fails.
struct ServerLog(std::path::PathBuf);

impl ServerLog {
    fn stdio(&self) -> std::process::Stdio {
        std::fs::File::create(&self.0)
            .expect("create the server's stderr file")
            .into()
    }

    fn tail(&self) -> String {
        let text = std::fs::read_to_string(&self.0).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(60)..].join("\n")
    }
}

/// One session; its message count, or what went wrong.
async fn session(seed: u64, run: &Run) -> Result<usize, (Failure, String)> {
    let sandbox = Sandbox::new();
    let log = ServerLog(sandbox.dir.path().join("server-stderr.log"));
    std::fs::create_dir_all(sandbox.project().join(".mira")).unwrap();
    std::fs::write(
        sandbox.project().join(".mira/project.toml"),
        "[index]\nparse_budget_ms = 1\n",
    )
    .unwrap();
    let mut server =
        TestServer::binary_wrapped(&run.wrapper, sandbox.env(), &sandbox.project(), log.stdio());
    let result = fuzz(&mut server, &sandbox, seed, run).await;
    let result = match result {
        Ok(messages) => {
            let clean = tokio::time::timeout(run.patience, server.shutdown()).await;
            match clean {
                Ok(0) => Ok(messages),
                Ok(code) => Err(Failure::Crash {
                    seed,
                    step: run.steps,
                    how: format!("exit code {code} after shutdown"),
                }),
                Err(_) => Err(Failure::Hang { seed, id: -1 }),
            }
        }
        Err(f) => Err(f),
    };
    result.map_err(|f| (f, log.tail()))
}

async fn fuzz(
    server: &mut TestServer,
    sandbox: &Sandbox,
    seed: u64,
    run: &Run,
) -> Result<usize, Failure> {
    let init = server.request_start(
        "initialize",
        json!({
            "processId": null,
            "rootUri": sandbox.project_uri(),
            "workspaceFolders": [{"uri": sandbox.project_uri(), "name": "project"}],
            "capabilities": {"general": {"positionEncodings": ["utf-16"]}},
            "clientInfo": {"name": "mira-fuzz"}
        }),
    );
    let mut pending = BTreeSet::from([init.await]);
    drain(server, &mut pending, run, seed, 0).await?;
    server.notify("initialized", json!({})).await;
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut docs = Vec::new();
    let mut langs: Vec<usize> = (0..LANGUAGES.len()).collect();
    for n in 0..4 {
        let lang = langs.remove(rng.below(langs.len()));
        let (ext, id, _, _) = LANGUAGES[lang];
        let text = document(lang, 6_000 + rng.below(34_000));
        let uri = sandbox.file_uri(&format!("doc{n}.{ext}"));
        server.open(&uri, id, &text).await;
        docs.push(Doc {
            uri,
            text,
            version: 0,
        });
    }
    let mut messages = 2 + docs.len();
    for step in 0..run.steps {
        let sent = match rng.below(100) {
            0..=54 => {
                let d = rng.below(docs.len());
                let changes: Vec<Value> = (0..1 + rng.below(3))
                    .map(|_| docs[d].random_change(&mut rng))
                    .collect();
                docs[d].version += 1;
                let (uri, version) = (docs[d].uri.clone(), docs[d].version);
                let msg = json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": changes}});
                server.try_send_raw(&frame(&msg.to_string())).await
            }
            55..=89 => {
                let (method, params) = if rng.chance(40) {
                    index_request(&mut rng, &docs)
                } else {
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
                    (method, params)
                };
                pending.insert(server.request_start(method, params).await);
                true
            }
            _ => {
                let bytes = malformed(&mut rng);
                server.try_send_raw(&bytes).await
            }
        };
        messages += 1;
        if !sent {
            let how = death(server).unwrap_or_else(|| "its stdin closed".into());
            return Err(Failure::Crash { seed, step, how });
        }
        if step % 100 == 99 {
            drain(server, &mut pending, run, seed, step).await?;
            check_documents(server, &docs, run, seed, step).await?;
        }
    }
    drain(server, &mut pending, run, seed, run.steps).await?;
    check_documents(server, &docs, run, seed, run.steps).await?;
    Ok(messages)
}

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

async fn fuzz_sessions(what: &str, seeds: Vec<u64>, run: Run) {
    let mut figures = Figures::default();
    let mut logs = Vec::new();
    for seed in seeds {
        figures.sessions += 1;
        match session(seed, &run).await {
            Ok(messages) => figures.messages += messages,
            Err((failure, log)) => {
                figures.failures.push(failure);
                logs.push(log);
            }
        }
    }
    figures.print(what);
    if let Some(log) = logs.first() {
        eprintln!("--- the first failing session's server stderr (tail) ---\n{log}");
    }
    let failures: Vec<String> = figures.failures.iter().map(Failure::to_string).collect();
    assert!(
        failures.is_empty(),
        "{what} failed (replay one with MIRA_FUZZ_SEED=n):\n{}",
        failures.join("\n")
    );
}

fn seeds(default_sessions: usize) -> Vec<u64> {
    match std::env::var("MIRA_FUZZ_SEED") {
        Ok(s) => vec![s.parse().expect("MIRA_FUZZ_SEED is a number")],
        Err(_) => (1..=env_number("MIRA_FUZZ_SESSIONS", default_sessions) as u64).collect(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_input_sequence_crashes_hangs_or_drifts_the_server() {
    let run = Run {
        steps: env_number("MIRA_FUZZ_STEPS", 400),
        patience: common::TIMEOUT,
        wrapper: Vec::new(),
    };
    fuzz_sessions("fuzz", seeds(60), run).await;
}

/// A short fuzz with the server under valgrind's memcheck: any invalid read or write, use
/// of uninitialised memory or bad free makes valgrind exit 99, which fails the session.
/// valgrind comes from scripts/install-test-deps (Debian's package); without it this test
/// fails rather than pass unseen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_fuzz_under_valgrind_has_no_memory_errors() {
    let found = std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "valgrind is not installed: run scripts/install-test-deps (apt-get install valgrind)"
    );
    let run = Run {
        steps: env_number("MIRA_VALGRIND_STEPS", 150),
        patience: Duration::from_secs(180),
        // memcheck sees allocations only through the system allocator (src/main.rs).
        wrapper: [
            "env",
            "MIRA_ALLOCATOR=system",
            "valgrind",
            "--error-exitcode=99",
            "--leak-check=no",
            "--errors-for-leak-kinds=none",
            "--num-callers=30",
        ]
        .map(String::from)
        .to_vec(),
    };
    let sessions = env_number("MIRA_VALGRIND_SESSIONS", 2) as u64;
    fuzz_sessions("valgrind fuzz", (101..101 + sessions).collect(), run).await;
}
