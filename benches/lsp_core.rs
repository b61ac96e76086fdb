//! Benchmark of the LSP core (prints figures; budgets in DESIGN §10):
//! - spawn → initialize response of the real `mira lsp` binary (budget ≤ 50 ms)
//! - didChange throughput and edit→state latency on a 7,500-line file over stdio
//!
//! Run: `cargo bench --bench lsp_core` (release build).

#[path = "../tests/common/mod.rs"]
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
        report(
            "spawn → initialize response (binary, stdio)",
            initialize_latency(40).await,
        );
        did_change("utf-8").await;
        did_change("utf-16").await;
    });
}
