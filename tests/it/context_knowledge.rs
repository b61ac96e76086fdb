//! "Mira answers with what it knows": the first request of a turn carries the user's
//! preferences and corrections, active goals, memories recalled for the question and code
//! found by code search, in the documented order — for each wire format, through the real
//! binary, with every memory written by another process (as another editor or terminal
//! would). Superseded and forgotten memories never appear.

use crate::support::mock_llm;

use std::path::Path;

use assert_cmd::Command;
use mock_llm::{MockLlm, Turn, Wire};
use serde_json::Value;

fn mira(dir: &Path, mock: Option<&MockLlm>) -> Command {
    let env = crate::support::dir_env(dir, mock.map(|m| m.env()).unwrap_or_default());
    Command::from_std(crate::support::mira(env, &dir.join("project")))
}

/// Runs a command that must succeed; returns stdout.
fn ok(dir: &Path, args: &[&str]) -> String {
    let out = mira(dir, None).args(args).output().unwrap();
    let (o, e) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(
        out.status.success(),
        "mira {args:?}\nstdout: {o}\nstderr: {e}"
    );
    o
}

const BILLING: &str = r#"
/// Computes the prorated refund owed when a subscription is cancelled mid-cycle.
pub fn settle(plan: &Plan, days_used: u32) -> Cents {
    plan.price * (plan.days - days_used) / plan.days
}

/// Formats an invoice number for the PDF header.
pub fn invoice_label(n: u64) -> String {
    format!("INV-{n:08}")
}
"#;

fn sandbox() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("project");
    std::fs::create_dir_all(p.join(".git")).unwrap();
    std::fs::create_dir_all(p.join("src")).unwrap();
    std::fs::write(p.join("src/billing.rs"), BILLING).unwrap();
    dir
}

/// What every test of this file knows before asking: written by separate processes.
fn seed(dir: &Path) {
    ok(dir, &["index"]);
    ok(
        dir,
        &[
            "remember",
            "--kind",
            "preference",
            "Always answer in French",
        ],
    );
    ok(dir, &["remember", "staging listens on port 5433"]);
    let corrected = ok(
        dir,
        &[
            "remember",
            "--kind",
            "correction",
            "Correction: staging listens on port 5434, not 5433",
        ],
    );
    assert!(corrected.contains("supersedes #2"), "{corrected}");
    ok(dir, &["goals", "add", "Ship billing v2"]);
    ok(
        dir,
        &[
            "remember",
            "The deploy script lives in ops/deploy.sh and needs the VPN",
        ],
    );
    let forgotten = ok(
        dir,
        &["remember", "Mercury is the codename of the deploy pipeline"],
    );
    let id = forgotten
        .split('#')
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .unwrap()
        .to_string();
    ok(dir, &["forget", &id]);
}

/// Every string inside a JSON value, in document order.
fn strings(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

/// The system prompt and the last user message of a request, whatever the wire format.
fn system_and_user(wire: Wire, body: &Value) -> (String, String) {
    let (mut system, mut user) = (String::new(), String::new());
    match wire {
        Wire::Responses => {
            strings(&body["instructions"], &mut system);
            strings(body["input"].as_array().unwrap().last().unwrap(), &mut user);
        }
        Wire::Chat => {
            let msgs = body["messages"].as_array().unwrap();
            strings(&msgs[0]["content"], &mut system);
            strings(&msgs.last().unwrap()["content"], &mut user);
        }
        Wire::Anthropic => {
            strings(&body["system"], &mut system);
            strings(
                &body["messages"].as_array().unwrap().last().unwrap()["content"],
                &mut user,
            );
        }
    }
    (system, user)
}

fn before(text: &str, a: &str, b: &str) -> bool {
    match (text.find(a), text.find(b)) {
        (Some(x), Some(y)) => x < y,
        _ => false,
    }
}

fn ask_and_capture(dir: &Path, wire: Wire, question: &str) -> (String, String) {
    let mock = MockLlm::start_in_background(wire);
    mock.push_turn(&Turn::text(&["D'accord."]));
    let out = mira(dir, Some(&mock))
        .args(["ask", question])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(mock.violations(), Vec::<String>::new());
    let req = &mock.requests()[0];
    system_and_user(wire, &req.body)
}

#[test]
fn every_wire_format_carries_what_mira_knows_in_order() {
    let dir = sandbox();
    seed(dir.path());
    for wire in [Wire::Responses, Wire::Chat, Wire::Anthropic] {
        let (system, user) = ask_and_capture(
            dir.path(),
            wire,
            "How do we compute the prorated refund for cancelled subscriptions, and where is the deploy script?",
        );
        // Stable part (system prompt): corrections and preferences, then goals.
        assert!(
            system.contains("Always answer in French"),
            "{wire:?}: {system}"
        );
        assert!(
            system.contains("staging listens on port 5434"),
            "{wire:?}: {system}"
        );
        assert!(system.contains("Ship billing v2"), "{wire:?}: {system}");
        assert!(
            before(&system, "Always answer in French", "Ship billing v2"),
            "{wire:?}: standing before goals: {system}"
        );
        // The correction is newest, so it comes first among standing memories.
        assert!(
            before(&system, "5434", "Always answer in French"),
            "{wire:?}: newest first: {system}"
        );
        // Query-dependent part (user message): recalled memory (keyword), then code found
        // through its doc comment, then the question.
        assert!(user.contains("ops/deploy.sh"), "{wire:?}: {user}");
        assert!(
            user.contains("fn settle"),
            "{wire:?}: the doc comment finds it: {user}"
        );
        assert!(
            before(&user, "ops/deploy.sh", "fn settle"),
            "{wire:?}: {user}"
        );
        assert!(
            before(&user, "fn settle", "How do we compute"),
            "{wire:?}: {user}"
        );
        // Superseded and forgotten memories never appear.
        let all = format!("{system}{user}");
        assert!(
            !all.contains("port 5433\n") && !all.contains("on port 5433"),
            "{wire:?}: {all}"
        );
        assert!(!all.contains("Mercury"), "{wire:?}: {all}");
    }
}

#[test]
fn context_shows_sections_with_tokens_and_what_was_cut() {
    let dir = sandbox();
    seed(dir.path());
    let out = ok(
        dir.path(),
        &[
            "context",
            "--json",
            "prorated refund for cancelled subscriptions",
        ],
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    let names: Vec<&str> = v["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "instructions",
            "project instructions",
            "project",
            "standing",
            "goals",
            "summaries",
            "history",
            "memories",
            "conversation",
            "code",
            "focus",
            "editor",
            "question"
        ]
    );
    let code = v["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "code")
        .unwrap();
    assert!(code["tokens"].as_u64().unwrap() > 0, "{code}");
    assert!(code["text"].as_str().unwrap().contains("settle"), "{code}");
    assert_eq!(code["truncated"], false);

    // The human form, and `mira ask --show-context` printing it before the answer.
    let out = mira(dir.path(), None)
        .args(["context", "prorated refund"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && err.contains("── standing ·") && err.contains("tokens"),
        "{err}"
    );
    let mock = MockLlm::start_in_background(Wire::Chat);
    mock.push_turn(&Turn::text(&["ok"]));
    let out = mira(dir.path(), Some(&mock))
        .args(["ask", "--show-context", "prorated refund"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("── code ·") && err.find("── code").unwrap() < err.find("completed").unwrap(),
        "{err}"
    );
}

#[test]
fn search_finds_code_by_its_doc_comment_and_by_name() {
    let dir = sandbox();
    ok(dir.path(), &["index"]);
    let out = ok(
        dir.path(),
        &[
            "search",
            "--json",
            "refund when a subscription is cancelled",
        ],
    );
    let hits: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(hits[0]["name"], "settle", "{hits}");
    assert_eq!(hits[0]["path"], "src/billing.rs");
    let out = ok(dir.path(), &["search", "invoiceLabel"]);
    assert!(
        out.starts_with("function invoice_label — src/billing.rs:8"),
        "{out}"
    );
    // No word matches: what is nearest by meaning, every hit from the vectors alone (a
    // semantic search always has a nearest chunk; a floor on cosine measured no line
    // between related and unrelated questions: docs/benchmarks.md).
    let out = ok(dir.path(), &["search", "--json", "zebra quux"]);
    let hits: Value = serde_json::from_str(&out).unwrap();
    let hits = hits.as_array().unwrap();
    assert!(!hits.is_empty(), "{out}");
    assert!(
        hits.iter()
            .all(|h| h["bm25_rank"].is_null() && h["vector_rank"].is_u64()),
        "{out}"
    );
}

/// Code search by meaning in the default build, as a new user meets it: `mira index`
/// embeds the chunks with the built-in code model (offline, nothing to download), and
/// each question shares no word with the function it finds, not even after stemming.
#[test]
fn search_finds_code_by_meaning_with_no_word_in_common() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("project");
    std::fs::create_dir_all(p.join(".git")).unwrap();
    std::fs::create_dir_all(p.join("src")).unwrap();
    std::fs::write(p.join("src/lib.rs"), UNDOCUMENTED).unwrap();
    let out = ok(dir.path(), &["index"]);
    assert!(
        out.contains("chunks embedded with builtin:code-static-v1"),
        "{out}"
    );
    for (question, name) in [
        ("how many unread octets are left", "remaining"),
        ("checksum of a byte slice", "crc32"),
        ("try again with exponential backoff", "retry"),
        ("run jobs concurrently", "spawn_workers"),
        ("capitalize letters", "to_upper_ascii"),
        ("whether february has 29 days", "is_leap"),
    ] {
        let out = ok(dir.path(), &["search", "--json", question]);
        let hits: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(hits[0]["name"], name, "{question}: {hits}");
        assert!(
            hits[0]["bm25_rank"].is_null(),
            "{question}: found by words? {hits}"
        );
    }
    // A second `mira index` has nothing new to embed, and says nothing about vectors.
    let out = ok(dir.path(), &["index"]);
    assert!(!out.contains("chunks embedded"), "{out}");
}

/// Functions without a doc comment whose names and bodies share no word with the
/// questions of `search_finds_code_by_meaning_with_no_word_in_common`.
const UNDOCUMENTED: &str = r#"pub struct Reader {
    buf: Vec<u8>,
    pos: usize,
}

impl Reader {
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn advance(&mut self, n: usize) {
        self.pos += n;
    }
}

pub fn crc32(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for b in data {
        c ^= *b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 { (c >> 1) ^ 0xEDB8_8320 } else { c >> 1 };
        }
    }
    !c
}

pub fn retry<T>(mut f: impl FnMut() -> Option<T>, tries: u32) -> Option<T> {
    for i in 0..tries {
        if let Some(v) = f() {
            return Some(v);
        }
        std::thread::sleep(std::time::Duration::from_millis(10 << i));
    }
    None
}

pub fn spawn_workers(n: usize) -> Vec<std::thread::JoinHandle<()>> {
    (0..n).map(|_| std::thread::spawn(|| {})).collect()
}

pub fn to_upper_ascii(s: &str) -> String {
    s.chars().map(|c| c.to_ascii_uppercase()).collect()
}

pub fn is_leap(year: i32) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}
"#;

/// A database whose chunks are not written (an upgrade's migration 09 drops them; `mira
/// search` and `mira mcp` do not crawl) says why nothing is found, and how to fix it.
#[test]
fn search_says_when_files_are_not_in_code_search_yet() {
    let dir = sandbox();
    ok(dir.path(), &["index"]);
    let db = rusqlite::Connection::open(dir.path().join("mira/mira.db")).unwrap();
    db.execute_batch("UPDATE files SET chunks_done = 0; DELETE FROM code_fts;")
        .unwrap();
    drop(db);
    let out = mira(dir.path(), None)
        .args(["search", "prorated refund"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("code search does not cover 1 indexed file yet")
            && err.contains("`mira index` adds it"),
        "{err}"
    );
    // `mira index` writes them, and the note is gone.
    ok(dir.path(), &["index"]);
    let out = mira(dir.path(), None)
        .args(["search", "prorated refund"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("settle"),
        "{err}"
    );
    assert!(!err.contains("does not cover"), "{err}");
}

/// Without code vectors, `mira search` has no use for its question's vector: it neither
/// waits for an embedder nor warns about one. The embedder here accepts connections and
/// never answers, so a search that asked it would wait out the 3 s query-embed timeout
/// and then say "full-text search only".
#[test]
fn search_without_code_vectors_does_not_wait_for_the_embedder() {
    let dir = sandbox();
    ok(dir.path(), &["index"]);
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let cfg = dir.path().join("home/.config/mira");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(
        cfg.join("config.toml"),
        format!(
            "[memory.embedder]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\napi_key = \"sk-test-not-a-key-000000\"\n"
        ),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let out = mira(dir.path(), None)
        .args(["search", "prorated refund"])
        .output()
        .unwrap();
    let took = started.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("settle"),
        "{err}"
    );
    assert!(!err.contains("full-text search only"), "{err}");
    assert!(
        took < std::time::Duration::from_secs(3),
        "the search waited {took:?}: it asked the embedder"
    );
    drop(silent);
}

#[test]
fn bad_input_gets_a_clear_outcome_and_the_turn_still_runs() {
    let dir = sandbox();
    seed(dir.path());
    // An empty question.
    for cmd in ["ask", "context", "search"] {
        let out = mira(dir.path(), None).args([cmd, " "]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("usage"),
            "{cmd}"
        );
    }
    // A 100 KB question: searched by its head, sent whole.
    let big = format!(
        "deploy script {}",
        "lorem ipsum dolor ".repeat(100_000 / 18)
    );
    let (_, user) = ask_and_capture(dir.path(), Wire::Chat, &big);
    assert!(user.contains("ops/deploy.sh") && user.len() > 100_000);

    // Another process holds the write lock for a second: the turn waits and runs.
    let db = dir.path().join("mira/mira.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    let release = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(1500));
        conn.execute_batch("COMMIT").unwrap();
    });
    let started = std::time::Instant::now();
    let (system, _) = ask_and_capture(dir.path(), Wire::Anthropic, "where is the deploy script?");
    assert!(started.elapsed() >= std::time::Duration::from_millis(1400));
    assert!(system.contains("Always answer in French"));
    release.join().unwrap();

    // An embedder that is down: recall and code search fall back to full-text search and
    // the context says so; the turn runs.
    let cfg = dir.path().join("home/.config/mira");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(
        cfg.join("config.toml"),
        "[memory.embedder]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key = \"sk-test-not-a-key-000000\"\n",
    )
    .unwrap();
    let out = ok(
        dir.path(),
        &["context", "--json", "where is the deploy script?"],
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    let memories = v["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "memories")
        .unwrap();
    assert!(
        memories["note"]
            .as_str()
            .unwrap()
            .contains("full-text search only"),
        "{memories}"
    );
    assert!(
        memories["text"].as_str().unwrap().contains("ops/deploy.sh"),
        "{memories}"
    );
    let (_, user) = ask_and_capture(dir.path(), Wire::Responses, "where is the deploy script?");
    assert!(user.contains("ops/deploy.sh"), "{user}");
}

/// With the built-in or the local embedder, a memory that shares no word with the question is
/// recalled by meaning; with none (BM25 only) it is not. Code search ranks by meaning with the
/// local one.
#[cfg(feature = "local-embeddings")]
#[test]
fn the_local_embedder_recalls_by_paraphrase() {
    let model = std::env::var("MIRA_MINILM_DIR").expect(
        "MIRA_MINILM_DIR must point at all-MiniLM-L6-v2 (export MIRA_MINILM_DIR=$(scripts/fetch-minilm))",
    );
    let dir = sandbox();
    seed(dir.path());
    ok(
        dir.path(),
        &["remember", "Standups happen at 9:30 in the blue room"],
    );
    let question = "what time is our daily sync meeting?";
    let memories_of = |out: &str| -> String {
        let v: Value = serde_json::from_str(out).unwrap();
        v["sections"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == "memories")
            .unwrap()["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // The default, built-in embedder already finds it...
    let builtin = memories_of(&ok(dir.path(), &["context", "--json", question]));
    assert!(builtin.contains("Standups happen at 9:30"), "{builtin}");

    // ...and full-text search alone cannot.
    let cfg = dir.path().join("home/.config/mira");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(
        cfg.join("config.toml"),
        "[memory.embedder]\nprovider = \"none\"\n",
    )
    .unwrap();
    let bm25 = memories_of(&ok(dir.path(), &["context", "--json", question]));
    assert!(
        !bm25.contains("blue room"),
        "no shared word, no BM25 hit: {bm25}"
    );

    std::fs::write(
        cfg.join("config.toml"),
        format!("[memory.embedder]\nprovider = \"local\"\nmodel_dir = \"{model}\"\n"),
    )
    .unwrap();
    // Embeds the memories written so far (the CLI embeds pending ones after a write) and
    // the code chunks (`mira index` with an embedder on).
    ok(
        dir.path(),
        &["remember", "The blue room projector needs an HDMI adapter"],
    );
    let indexed = ok(dir.path(), &["index"]);
    assert!(indexed.contains("chunks embedded"), "{indexed}");
    let hybrid = memories_of(&ok(dir.path(), &["context", "--json", question]));
    assert!(hybrid.contains("Standups happen at 9:30"), "{hybrid}");

    for wire in [Wire::Responses, Wire::Chat, Wire::Anthropic] {
        let (system, user) = ask_and_capture(dir.path(), wire, question);
        assert!(user.contains("Standups happen at 9:30"), "{wire:?}: {user}");
        assert!(system.contains("Always answer in French"), "{wire:?}");
    }
    let out = ok(
        dir.path(),
        &["search", "--json", "money back after cancelling"],
    );
    let hits: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(hits[0]["name"], "settle", "{hits}");
    assert!(hits[0]["vector_rank"].is_number(), "{hits}");
}
