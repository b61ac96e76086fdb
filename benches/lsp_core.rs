//! Benchmark of the LSP core (prints figures; budgets in docs/benchmarks.md):
//! - spawn → initialize response of the real `mira lsp` binary (budget ≤ 50 ms)
//! - didChange throughput and edit→state latency on a 7,500-line file over stdio
//! - keystroke → documentSymbol over stdio while a new function is typed into the biggest
//!   Rust files of a real crate (regex-automata's `dfa/dense.rs` and `hybrid/dfa.rs`, from
//!   cargo's registry) at the start, middle and end, and inside the largest item (budget
//!   p99 ≤ 15 ms over stdio, docs/benchmarks.md). `MIRA_TYPING_FILES` (colon-separated) adds
//!   files of any indexed language; `MIRA_TYPING_ONLY` runs just those; `MIRA_TYPING_PROBE`
//!   also times documentSymbol with no edit, the response's size and the client's parse, and
//!   keystroke → documentState (where a keystroke's time goes).
//!
//! Run: `cargo bench --bench lsp_core` (release build).

#[allow(dead_code)]
#[path = "../tests/it/support/mod.rs"]
mod common;

use common::{Sandbox, TestServer};
use serde_json::json;
use std::time::{Duration, Instant};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn report(name: &str, mut v: Vec<Duration>) {
    v.sort();
    println!(
        "{name:<44} n={:<5} median {:>10}  p99 {:>10}  min {:>10}  max {:>10}",
        v.len(),
        ms(percentile(&v, 0.5)),
        ms(percentile(&v, 0.99)),
        ms(v[0]),
        ms(*v.last().unwrap())
    );
}

fn file_7500_lines() -> String {
    let mut s = String::new();
    for i in 0..7500 {
        match i % 5 {
            0 => s.push_str(&format!(
                "fn function_{i}(x: u32) -> u32 {{ // 日本語 {i}\n"
            )),
            1 => s.push_str("    let emoji = \"😀🇫🇷\"; // e\u{301}\n"),
            2 => s.push_str(&format!("    x + {i}\n")),
            3 => s.push_str("}\n"),
            _ => s.push('\n'),
        }
    }
    s
}

async fn initialize_latency(runs: usize) -> Vec<Duration> {
    let mut out = Vec::with_capacity(runs);
    for _ in 0..runs {
        let sandbox = Sandbox::new();
        let start = Instant::now();
        let mut s = TestServer::binary(&sandbox);
        s.initialize_default(&sandbox, &["utf-8"]).await;
        out.push(start.elapsed());
        s.shutdown().await;
    }
    out
}

async fn did_change(enc: &str) {
    let sandbox = Sandbox::new();
    let mut s = TestServer::binary(&sandbox);
    s.initialize_default(&sandbox, &[enc]).await;
    let uri = sandbox.file_uri("big.rs");
    let text = file_7500_lines();
    let open = Instant::now();
    s.open(&uri, "rust", &text).await;
    s.document_state(&uri).await;
    let open = open.elapsed();

    // Throughput: typing a character at a time all over the file, then one sync point.
    let edits = 20_000;
    let start = Instant::now();
    for v in 1..=edits {
        let line = (v * 7919) % 7500;
        s.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": v},
                   "contentChanges": [{"range": {"start": {"line": line, "character": 4},
                                                 "end": {"line": line, "character": 4}}, "text": "é"}]}),
        )
        .await;
    }
    let (version, _) = s.document_state(&uri).await;
    let elapsed = start.elapsed();
    assert_eq!(version, edits as i64);
    println!(
        "didChange throughput ({enc}, 7,500 lines)         {:>10.0} edits/s  ({edits} edits in {})",
        edits as f64 / elapsed.as_secs_f64(),
        ms(elapsed)
    );

    // Latency: one edit, then ask for the state (what any follow-up request waits for).
    let mut lat = Vec::new();
    for v in edits + 1..=edits + 500 {
        let t = Instant::now();
        s.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": v},
                   "contentChanges": [{"range": {"start": {"line": 3750, "character": 0},
                                                 "end": {"line": 3750, "character": 1}}, "text": "Ж"}]}),
        )
        .await;
        let id = s
            .request_start("mira/documentState", json!({"uri": uri}))
            .await;
        s.response(id).await.unwrap();
        lat.push(t.elapsed());
    }
    println!(
        "didOpen of 7,500 lines + first state ({enc})        {}",
        ms(open)
    );
    report(&format!("edit → documentState round trip ({enc})"), lat);
    s.shutdown().await;
}

/// Places to type a new top-level item: the line after a blank line (or a top-level `}`)
/// nearest the start, the middle and the end, and a line start in the middle of the longest
/// stretch without one (inside the largest item).
fn typing_places(text: &str) -> Vec<(&'static str, usize)> {
    let mut ends: Vec<usize> = text
        .match_indices("\n\n")
        .map(|(i, _)| i + 2)
        .chain(text.match_indices("\n}\n").map(|(i, _)| i + 3))
        .collect();
    ends.sort_unstable();
    ends.dedup();
    let near = |target: usize| {
        ends.iter()
            .copied()
            .min_by_key(|e| e.abs_diff(target))
            .unwrap_or(target)
    };
    let mut biggest = (0, 0);
    let mut prev = 0;
    for &e in &ends {
        if e - prev > biggest.1 - biggest.0 {
            biggest = (prev, e);
        }
        prev = e;
    }
    let mid = biggest.0 + (biggest.1 - biggest.0) / 2;
    let inside = text[..mid].rfind('\n').map_or(mid, |i| i + 1);
    vec![
        ("start", ends.first().copied().unwrap_or(0)),
        ("middle", near(text.len() / 2)),
        ("end", text.len()),
        ("inside the largest item", inside),
    ]
}

/// The language id and a new function to type, by the file's extension.
fn language_of(path: &std::path::Path) -> (&'static str, &'static str) {
    match path.extension().and_then(|e| e.to_str()) {
        Some("py") => (
            "python",
            "\ndef added_here(a, b):\n    \"\"\"Adds.\"\"\"\n    return a + b\n",
        ),
        Some("ts") => (
            "typescript",
            "\n/** Adds. */\nexport function addedHere(a: number, b: number): number {\n  return a + b\n}\n",
        ),
        Some("js") => (
            "javascript",
            "\n/** Adds. */\nfunction addedHere(a, b) {\n  return a + b;\n}\n",
        ),
        _ => (
            "rust",
            "\n/// Adds.\npub fn added_here(a: u32, b: u32) -> u32 {\n    a + b\n}\n",
        ),
    }
}

fn line_col(text: &str, byte: usize) -> (usize, usize) {
    let before = &text[..byte];
    let line = before.matches('\n').count();
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1);
    (line, col)
}

/// Types a new function into `path` one character at a time over stdio, asking for
/// documentSymbol after each keystroke, at each place; prints p50/p99/max per place.
async fn typing_document_symbol(path: &std::path::Path) {
    let Ok(text) = std::fs::read_to_string(path) else {
        println!(
            "*** SKIPPED keystroke → documentSymbol: cannot read {}",
            path.display()
        );
        return;
    };
    let (language, snippet) = language_of(path);
    let name = path
        .components()
        .rev()
        .take(3)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/");
    let mut runs: Vec<(&str, usize, bool)> = typing_places(&text)
        .into_iter()
        .map(|(p, at)| (p, at, false))
        .collect();
    // A client that sends the whole text at each keystroke (no range).
    runs.push(("end, whole text sent", text.len(), true));
    for (place, at, whole) in runs {
        let sandbox = Sandbox::new();
        // The file in its crate, as an editor opens it: the project is indexed too. With
        // MIRA_TYPING_PROJECT the root is that (big) folder instead, and typing starts while
        // its cold index runs.
        let big = std::env::var_os("MIRA_TYPING_PROJECT").map(std::path::PathBuf::from);
        // A Rust file's crate; other files come alone. (Any ancestor with a Cargo.toml
        // would do otherwise: for the corpus under Mira's own `target/`, that was this whole
        // repository, target directory and all, copied for each place.)
        let krate = path
            .extension()
            .is_some_and(|e| e == "rs")
            .then(|| path.ancestors().find(|a| a.join("Cargo.toml").is_file()))
            .flatten();
        if big.is_none()
            && let Some(krate) = krate
        {
            copy_tree(krate, &sandbox.project());
        }
        let (root, rel) = match &big {
            Some(b) => (
                b.clone(),
                path.strip_prefix(b)
                    .expect("the file is in MIRA_TYPING_PROJECT")
                    .to_string_lossy()
                    .into_owned(),
            ),
            None => (
                sandbox.project(),
                krate.and_then(|k| path.strip_prefix(k).ok()).map_or_else(
                    || path.file_name().unwrap().to_string_lossy().into_owned(),
                    |r| r.to_string_lossy().into_owned(),
                ),
            ),
        };
        let root_uri = format!("file://{}", root.display());
        let mut s = TestServer::binary(&sandbox);
        // What VS Code and Neovim advertise: UTF-16 and a hierarchical outline.
        s.initialize(json!({
            "processId": null,
            "rootUri": root_uri,
            "workspaceFolders": [{"uri": root_uri, "name": "project"}],
            "capabilities": {
                "general": {"positionEncodings": ["utf-16"]},
                "textDocument": {"documentSymbol": {"hierarchicalDocumentSymbolSupport": true}}
            },
            "clientInfo": {"name": "mira-bench"}
        }))
        .await;
        let uri = format!("{root_uri}/{rel}");
        s.open(&uri, language, &text).await;
        if big.is_none() {
            // Let the cold index of the crate finish: typing is measured in a settled project.
            tokio::time::sleep(Duration::from_secs(3)).await;
        }
        // The first outline (the cold parse) is not a keystroke.
        s.request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri}}),
        )
        .await
        .expect("documentSymbol");
        let (mut line, mut col) = line_col(&text, at);
        // To the response's last byte (the server and the pipe: the budget), and to this
        // client's `serde_json::Value` of it (2–4 ms of a 246 KB outline is the client's).
        let (mut lat, mut parsed) = (Vec::new(), Vec::new());
        let mut version = 0;
        let mut current = text.clone();
        let mut cursor = at;
        for ch in snippet.chars() {
            version += 1;
            let change = if whole {
                current.insert(cursor, ch);
                cursor += ch.len_utf8();
                json!({"text": current})
            } else {
                json!({"range": {"start": {"line": line, "character": col},
                                 "end": {"line": line, "character": col}},
                       "text": ch.to_string()})
            };
            let t = Instant::now();
            s.notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": uri, "version": version},
                       "contentChanges": [change]}),
            )
            .await;
            let id = s
                .request_start(
                    "textDocument/documentSymbol",
                    json!({"textDocument": {"uri": uri}}),
                )
                .await;
            let r = s.response(id).await.expect("documentSymbol");
            parsed.push(t.elapsed());
            lat.push(s.arrived(id).expect("answered") - t);
            assert!(
                r.as_array().is_some_and(|a| !a.is_empty()),
                "an empty outline"
            );
            if ch == '\n' {
                line += 1;
                col = 0;
            } else {
                col += 1;
            }
        }
        report(&format!("keystroke → documentSymbol, {name}, {place}"), lat);
        report("  … and parsed by this client", parsed);
        if std::env::var_os("MIRA_TYPING_PROBE").is_some() {
            let mut idle = Vec::new();
            for _ in 0..30 {
                let t = Instant::now();
                s.request(
                    "textDocument/documentSymbol",
                    json!({"textDocument": {"uri": uri}}),
                )
                .await
                .expect("documentSymbol");
                idle.push(t.elapsed());
            }
            report("  documentSymbol with no edit", idle);
            let r = s
                .request(
                    "textDocument/documentSymbol",
                    json!({"textDocument": {"uri": uri}}),
                )
                .await
                .expect("documentSymbol");
            let body = r.to_string();
            let t = Instant::now();
            let _: serde_json::Value = serde_json::from_str(&body).unwrap();
            println!(
                "  response {} bytes, parsed by the client in {}",
                body.len(),
                ms(t.elapsed())
            );
            let mut st = Vec::new();
            for _ in 0..30 {
                version += 1;
                let t = Instant::now();
                s.notify(
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": uri, "version": version},
                           "contentChanges": [{"range": {"start": {"line": line, "character": col},
                                                         "end": {"line": line, "character": col}},
                                               "text": " "}]}),
                )
                .await;
                let id = s
                    .request_start("mira/documentState", json!({"uri": uri}))
                    .await;
                s.response(id).await.unwrap();
                st.push(t.elapsed());
                col += 1;
            }
            report("  keystroke → documentState", st);
        }
        s.shutdown().await;
    }
}

fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    for e in std::fs::read_dir(from).into_iter().flatten().flatten() {
        let dest = to.join(e.file_name());
        if e.file_name() == "target" || e.file_name() == ".git" {
            continue;
        }
        if e.path().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
            copy_tree(&e.path(), &dest);
        } else {
            let _ = std::fs::copy(e.path(), dest);
        }
    }
}

/// regex-automata's biggest sources from cargo's registry (a dependency, so CI has them).
fn registry_typing_files() -> Vec<std::path::PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cargo")));
    let mut out = Vec::new();
    let Some(src) = home.map(|h| h.join("registry/src")) else {
        return out;
    };
    for index in std::fs::read_dir(&src).into_iter().flatten().flatten() {
        for krate in std::fs::read_dir(index.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let n = krate.file_name().to_string_lossy().into_owned();
            if n.starts_with("regex-automata-0.4") && out.is_empty() {
                out.push(krate.path().join("src/dfa/dense.rs"));
                out.push(krate.path().join("src/hybrid/dfa.rs"));
            }
        }
    }
    out
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        println!(
            "Mira LSP core benchmark ({} cores)",
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        );
        // MIRA_TYPING_ONLY: just the typing figures, on MIRA_TYPING_FILES (scripts/bench-index.sh).
        let typing_only = std::env::var_os("MIRA_TYPING_ONLY").is_some();
        if !typing_only {
            report(
                "spawn → initialize response (binary, stdio)",
                initialize_latency(40).await,
            );
            did_change("utf-8").await;
            did_change("utf-16").await;
        }
        let mut files = if typing_only {
            Vec::new()
        } else {
            registry_typing_files()
        };
        // Typing-only runs were handed their files; only a full run looks in the registry.
        if files.is_empty() && !typing_only {
            println!(
                "*** SKIPPED keystroke → documentSymbol on regex-automata: not in cargo's registry"
            );
        }
        if let Some(more) = std::env::var_os("MIRA_TYPING_FILES") {
            files.extend(std::env::split_paths(&more));
        }
        for f in files {
            typing_document_symbol(&f).await;
        }
    });
}
