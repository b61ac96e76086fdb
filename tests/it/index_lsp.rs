//! The index over LSP: typing through didChange, files changing on disk, progress,
//! definition and hover; in-process and through the real binary.

use crate::support as common;

use common::{Sandbox, TestServer};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const PATIENCE: Duration = Duration::from_secs(20);

fn caps() -> Value {
    json!({
        "general": {"positionEncodings": ["utf-16"]},
        "window": {"workDoneProgress": true},
        "textDocument": {"documentSymbol": {"hierarchicalDocumentSymbolSupport": true}}
    })
}

async fn init(s: &mut TestServer, sandbox: &Sandbox, caps: Value) -> Value {
    s.initialize(json!({
        "processId": null,
        "rootUri": sandbox.project_uri(),
        "workspaceFolders": [{"uri": sandbox.project_uri(), "name": "project"}],
        "capabilities": caps,
        "clientInfo": {"name": "mira-tests"}
    }))
    .await
}

async fn workspace_names(s: &mut TestServer, query: &str) -> Vec<String> {
    let r = s
        .request("workspace/symbol", json!({"query": query}))
        .await
        .expect("workspace/symbol");
    r.as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap().to_string())
        .collect()
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
    out
}

/// Polls workspace/symbol until `pred` holds for `query`'s names.
async fn eventually(s: &mut TestServer, query: &str, what: &str, pred: impl Fn(&[String]) -> bool) {
    let start = Instant::now();
    loop {
        let names = workspace_names(s, query).await;
        if pred(&names) {
            return;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "{what}: still {names:?} after {PATIENCE:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn change(s: &mut TestServer, uri: &str, version: i64, range: Value, text: &str) {
    s.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": range, "text": text}]
        }),
    )
    .await;
}

fn range(l1: u32, c1: u32, l2: u32, c2: u32) -> Value {
    json!({"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}})
}

#[tokio::test]
async fn typing_a_function_char_by_char_shows_it_and_deleting_removes_it() {
    let sandbox = Sandbox::new();
    let src =
        "/// Greets. ✓\npub fn greet(name: &str) -> String {\n    format!(\"hi {name}\")\n}\n\n";
    std::fs::write(sandbox.project().join("lib.rs"), src).unwrap();
    for server in [
        TestServer::in_process(&sandbox),
        TestServer::binary(&sandbox),
    ] {
        let mut s = server;
        init(&mut s, &sandbox, caps()).await;
        let uri = sandbox.file_uri("lib.rs");
        s.open(&uri, "rust", src).await;
        assert_eq!(document_names(&mut s, &uri).await, vec!["greet"]);

        // Type a new function after the last line, one keystroke per didChange.
        let typed = "fn typed_fn(x: u32) -> u32 {\n    greet(\"a\");\n    x\n}\n";
        let (mut line, mut col) = (5u32, 0u32);
        let mut version = 1;
        for ch in typed.chars() {
            change(
                &mut s,
                &uri,
                version,
                range(line, col, line, col),
                &ch.to_string(),
            )
            .await;
            version += 1;
            if ch == '\n' {
                line += 1;
                col = 0;
            } else {
                col += ch.len_utf16() as u32;
            }
        }
        // No waiting: the queries are ordered after the edits.
        assert_eq!(
            document_names(&mut s, &uri).await,
            vec!["greet", "typed_fn"]
        );
        assert_eq!(workspace_names(&mut s, "typed_fn").await, vec!["typed_fn"]);
        let outline = s
            .request(
                "textDocument/documentSymbol",
                json!({"textDocument": {"uri": uri}}),
            )
            .await
            .unwrap();
        let typed_sym = &outline[1];
        assert_eq!(typed_sym["kind"], 12);
        assert_eq!(
            typed_sym["range"]["start"],
            json!({"line": 5, "character": 0})
        );
        assert_eq!(
            typed_sym["range"]["end"],
            json!({"line": 8, "character": 1})
        );
        assert_eq!(
            typed_sym["selectionRange"]["start"],
            json!({"line": 5, "character": 3})
        );
        assert_eq!(typed_sym["detail"], "fn typed_fn(x: u32) -> u32");

        // Definition from the call inside typed_fn jumps to greet; hover shows its doc.
        let at_call =
            json!({"textDocument": {"uri": uri}, "position": {"line": 6, "character": 6}});
        let def = s
            .request("textDocument/definition", at_call.clone())
            .await
            .unwrap();
        assert_eq!(def["uri"], json!(uri));
        assert_eq!(def["range"]["start"], json!({"line": 1, "character": 7}));
        let hover = s.request("textDocument/hover", at_call).await.unwrap();
        let text = hover["contents"]["value"].as_str().unwrap();
        assert!(
            text.contains("pub fn greet(name: &str) -> String"),
            "{text}"
        );
        assert!(text.contains("Greets. ✓"), "{text}");

        // Delete it again: gone from both views.
        change(&mut s, &uri, version, range(5, 0, 9, 0), "").await;
        assert_eq!(document_names(&mut s, &uri).await, vec!["greet"]);
        assert!(workspace_names(&mut s, "typed_fn").await.is_empty());
        assert_eq!(s.shutdown().await, 0);
    }
}

#[tokio::test]
async fn unopened_files_follow_the_disk_and_unsaved_buffers_win() {
    let sandbox = Sandbox::with_files(
        r#"
        //- a.py
        def alpha():
            pass
        //- .gitignore
        build/
        "#,
    );
    let p = sandbox.project();
    let mut s = TestServer::in_process(&sandbox);
    init(&mut s, &sandbox, caps()).await;
    eventually(&mut s, "alpha", "cold index", |n| n == ["alpha"]).await;

    // Created on disk, never opened.
    std::fs::write(p.join("b.go"), "package b\n\nfunc DiskFunc() {}\n").unwrap();
    eventually(&mut s, "DiskFunc", "created file", |n| n == ["DiskFunc"]).await;
    // Modified: the old name leaves, the new one arrives.
    std::fs::write(p.join("b.go"), "package b\n\nfunc Renamed() {}\n").unwrap();
    eventually(&mut s, "DiskFunc", "modified file", |n| n.is_empty()).await;
    eventually(&mut s, "Renamed", "modified file", |n| n == ["Renamed"]).await;
    // Renamed file.
    std::fs::rename(p.join("b.go"), p.join("c.go")).unwrap();
    let start = Instant::now();
    loop {
        let r = s
            .request("workspace/symbol", json!({"query": "Renamed"}))
            .await
            .unwrap();
        let uris: Vec<&str> = r
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["location"]["uri"].as_str().unwrap())
            .collect();
        if uris.len() == 1 && uris[0].ends_with("/c.go") {
            break;
        }
        assert!(start.elapsed() < PATIENCE, "after rename: {uris:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Deleted.
    std::fs::remove_file(p.join("c.go")).unwrap();
    eventually(&mut s, "Renamed", "deleted file", |n| n.is_empty()).await;
    // Ignored directories stay out.
    std::fs::create_dir_all(p.join("build")).unwrap();
    std::fs::write(p.join("build/gen.rs"), "fn generated_thing() {}\n").unwrap();
    std::fs::write(p.join("marker.rs"), "fn marker_after_build() {}\n").unwrap();
    eventually(&mut s, "marker_after_build", "marker", |n| n.len() == 1).await;
    assert!(workspace_names(&mut s, "generated_thing").await.is_empty());

    // An open buffer's unsaved state wins over the file on disk.
    let uri = sandbox.file_uri("a.py");
    s.open(
        &uri,
        "python",
        "def alpha():\n    pass\n\ndef unsaved():\n    pass\n",
    )
    .await;
    std::fs::write(p.join("a.py"), "def on_disk_only():\n    pass\n").unwrap();
    std::fs::write(p.join("marker2.rs"), "fn marker_two() {}\n").unwrap();
    eventually(&mut s, "marker_two", "marker", |n| n.len() == 1).await;
    assert_eq!(workspace_names(&mut s, "unsaved").await, vec!["unsaved"]);
    assert!(workspace_names(&mut s, "on_disk_only").await.is_empty());
    // Closing it brings back the disk's version.
    s.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    )
    .await;
    assert_eq!(
        workspace_names(&mut s, "on_disk_only").await,
        vec!["on_disk_only"]
    );
    assert!(workspace_names(&mut s, "unsaved").await.is_empty());

    // Progress was reported with $/progress after window/workDoneProgress/create.
    assert!(
        s.server_requests()
            .iter()
            .any(|r| r["method"] == "window/workDoneProgress/create")
    );
    let progress: Vec<Value> = s
        .notifications()
        .into_iter()
        .filter(|n| n["method"] == "$/progress")
        .collect();
    assert!(
        progress
            .iter()
            .any(|n| n["params"]["value"]["kind"] == "begin")
    );
    assert!(
        progress
            .iter()
            .any(|n| n["params"]["value"]["kind"] == "end")
    );
    assert_eq!(s.shutdown().await, 0);
}

#[tokio::test]
async fn a_checkout_of_500_files_ends_consistent() {
    let sandbox = Sandbox::new();
    let p = sandbox.project();
    std::fs::create_dir_all(p.join("src")).unwrap();
    for i in 0..500 {
        std::fs::write(
            p.join(format!("src/m{i}.rs")),
            format!("pub fn old_{i}() {{}}\n"),
        )
        .unwrap();
    }
    let mut s = TestServer::in_process(&sandbox);
    init(&mut s, &sandbox, caps()).await;
    eventually(&mut s, "old_", "cold index", |n| n.len() == 128).await;
    // Symbols are answered as soon as they are parsed, before the crawl's reports (which
    // follow their storage): wait for the progress to end.
    let start = Instant::now();
    while !s
        .notifications()
        .iter()
        .any(|n| n["method"] == "$/progress" && n["params"]["value"]["kind"] == "end")
    {
        assert!(
            start.elapsed() < PATIENCE,
            "the cold index's progress never ended"
        );
        workspace_names(&mut s, "old_").await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The walk finds files while they are parsed, so the total grows during the crawl; the
    // percentage shown must still only rise (LSP: clients may drop one that falls).
    let shown: Vec<u64> = s
        .notifications()
        .into_iter()
        .filter(|n| n["method"] == "$/progress" && n["params"]["value"]["kind"] == "report")
        .filter_map(|n| n["params"]["value"]["percentage"].as_u64())
        .collect();
    assert!(!shown.is_empty(), "the cold index reported no progress");
    assert!(
        shown.windows(2).all(|w| w[0] <= w[1]) && shown.iter().all(|&p| p <= 100),
        "percentages {shown:?}"
    );
    // The "checkout": 250 files rewritten, 250 deleted, 250 new ones, all at once.
    for i in 0..500 {
        let f = p.join(format!("src/m{i}.rs"));
        if i % 2 == 0 {
            std::fs::write(&f, format!("pub fn new_{i}() {{}}\n")).unwrap();
        } else {
            std::fs::remove_file(&f).unwrap();
        }
    }
    for i in 500..750 {
        std::fs::write(
            p.join(format!("src/m{i}.rs")),
            format!("pub fn new_{i}() {{}}\n"),
        )
        .unwrap();
    }
    let start = Instant::now();
    loop {
        let old = workspace_names(&mut s, "old_").await;
        let new = s
            .request("workspace/symbol", json!({"query": "new_"}))
            .await
            .unwrap();
        // The first and last files of each kind, too: the checkout's events can reach the
        // watcher in more than one batch, and "no old left" can come before the last new file.
        let last = workspace_names(&mut s, "new_749").await;
        if old.is_empty()
            && new.as_array().unwrap().len() == 128
            && last.first().is_some_and(|n| n == "new_749")
        {
            break;
        }
        assert!(start.elapsed() < PATIENCE, "old left: {}", old.len());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Exactly the 500 files now on disk, each with its one symbol.
    for probe in [0, 2, 498, 500, 749] {
        let name = format!("new_{probe}");
        let names = workspace_names(&mut s, &name).await;
        assert_eq!(names[0], name, "exact match ranks first");
        assert_eq!(names.iter().filter(|n| **n == name).count(), 1);
    }
    assert!(
        workspace_names(&mut s, "new_1")
            .await
            .iter()
            .all(|n| n != "new_1")
    );
    assert_eq!(s.shutdown().await, 0);
}

#[tokio::test]
async fn flat_document_symbols_without_hierarchical_support() {
    let sandbox = Sandbox::new();
    let mut s = TestServer::in_process(&sandbox);
    init(
        &mut s,
        &sandbox,
        json!({"general": {"positionEncodings": ["utf-8"]}}),
    )
    .await;
    let uri = sandbox.file_uri("w.ts");
    s.open(&uri, "typescript", "class W {\n  run = () => go();\n}\n")
        .await;
    let r = s
        .request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri}}),
        )
        .await
        .unwrap();
    let flat: Vec<(String, Value)> = r
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["name"].as_str().unwrap().to_string(),
                x["containerName"].clone(),
            )
        })
        .collect();
    assert_eq!(
        flat,
        vec![("W".into(), Value::Null), ("run".into(), json!("W"))]
    );
    assert_eq!(
        r[1]["location"]["range"]["start"],
        json!({"line": 1, "character": 2})
    );
    assert_eq!(s.shutdown().await, 0);
}

/// The `end` message of the last finished index progress.
async fn index_end_message(s: &mut TestServer) -> String {
    let start = Instant::now();
    loop {
        let end = s
            .notifications()
            .into_iter()
            .rev()
            .find(|n| n["method"] == "$/progress" && n["params"]["value"]["kind"] == "end");
        if let Some(n) = end {
            return n["params"]["value"]["message"]
                .as_str()
                .unwrap()
                .to_string();
        }
        assert!(start.elapsed() < PATIENCE, "no index progress end");
        // A round trip lets the test client answer workDoneProgress/create.
        workspace_names(s, "zzz").await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn restart_parses_nothing_then_only_the_changed_file() {
    let sandbox = Sandbox::new();
    let p = sandbox.project();
    for i in 0..20 {
        std::fs::write(p.join(format!("f{i}.rs")), format!("fn f{i}() {{}}\n")).unwrap();
    }
    let mut s = TestServer::binary(&sandbox);
    init(&mut s, &sandbox, caps()).await;
    assert!(
        index_end_message(&mut s)
            .await
            .starts_with("20 files (20 parsed)")
    );
    assert_eq!(s.shutdown().await, 0);

    // Restart: the persisted index is queryable and nothing is parsed again.
    let mut s = TestServer::binary(&sandbox);
    init(&mut s, &sandbox, caps()).await;
    assert!(
        index_end_message(&mut s)
            .await
            .starts_with("20 files (0 parsed)")
    );
    assert_eq!(workspace_names(&mut s, "f17").await, vec!["f17"]);
    assert_eq!(s.shutdown().await, 0);

    // One file changes while no server runs: exactly that one is parsed.
    std::fs::write(p.join("f3.rs"), "fn f3() {}\nfn f3_more() {}\n").unwrap();
    let mut s = TestServer::binary(&sandbox);
    init(&mut s, &sandbox, caps()).await;
    assert!(
        index_end_message(&mut s)
            .await
            .starts_with("20 files (1 parsed)")
    );
    assert_eq!(workspace_names(&mut s, "f3_more").await, vec!["f3_more"]);
    assert_eq!(s.shutdown().await, 0);
}

#[tokio::test]
async fn configured_excludes_apply_to_the_crawl_and_the_watcher() {
    let sandbox = Sandbox::with_files(
        r#"
        //- .mira/project.toml
        [index]
        exclude = ["gen/**"]
        //- gen/old.rs
        fn generated_before() {}
        //- main.rs
        fn kept() {}
        "#,
    );
    let p = sandbox.project();
    let mut s = TestServer::in_process(&sandbox);
    init(&mut s, &sandbox, caps()).await;
    eventually(&mut s, "kept", "cold index", |n| n == ["kept"]).await;
    assert!(workspace_names(&mut s, "generated_before").await.is_empty());
    std::fs::write(p.join("gen/new.rs"), "fn generated_after() {}\n").unwrap();
    std::fs::write(p.join("marker.rs"), "fn marker_three() {}\n").unwrap();
    eventually(&mut s, "marker_three", "marker", |n| n.len() == 1).await;
    assert!(workspace_names(&mut s, "generated_after").await.is_empty());
    assert_eq!(s.shutdown().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_document_over_the_size_limit_is_not_parsed_and_blocks_nothing() {
    let sandbox = Sandbox::new();
    let mut s = TestServer::in_process(&sandbox);
    init(&mut s, &sandbox, caps()).await;
    // 3 MB of Rust, over the default 1 MiB index.max_file_bytes.
    let mut huge = String::from("fn huge_marker() {}\n");
    while huge.len() < 3 * 1024 * 1024 {
        huge.push_str("fn filler_function_with_a_long_name() { let x = 1 + 2 + 3; }\n");
    }
    let big = sandbox.file_uri("big.rs");
    s.open(&big, "rust", &huge).await;
    let small = sandbox.file_uri("small.rs");
    s.open(&small, "rust", "fn small_marker() {}\n").await;
    assert_eq!(document_names(&mut s, &small).await, ["small_marker"]);
    let outline = s
        .request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": big}}),
        )
        .await
        .unwrap();
    assert!(outline.is_null() || outline == json!([]), "{outline}");
    assert!(workspace_names(&mut s, "huge_marker").await.is_empty());
    // Mira still holds the text itself: edits apply and the document stays exact.
    assert_eq!(s.document_state(&big).await.1.len(), huge.len());
    s.shutdown().await;
}

/// The outline skips tower-lsp-server's `Value` (`lsp/direct.rs`): its bytes are swapped in
/// by the output pump. Through the real binary: refused before initialize as any request is,
/// answered to a string id, answered in full after `$/cancelRequest` (it cannot be aborted),
/// and bad params get -32602.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_outline_is_answered_to_any_id_and_refused_before_initialize() {
    let sandbox = Sandbox::new();
    let mut s = TestServer::binary(&sandbox);
    let early = s
        .request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": sandbox.file_uri("a.rs")}}),
        )
        .await
        .expect_err("an outline before initialize");
    assert_eq!(early["code"], -32002, "{early}");

    init(&mut s, &sandbox, caps()).await;
    let uri = sandbox.file_uri("a.rs");
    s.open(
        &uri,
        "rust",
        "/// É 🦀 \"q\"\nfn alpha() {}\nfn beta() {}\n",
    )
    .await;
    assert_eq!(document_names(&mut s, &uri).await, ["alpha", "beta"]);

    s.send(
        json!({"jsonrpc": "2.0", "id": "outline-é", "method": "textDocument/documentSymbol",
                  "params": {"textDocument": {"uri": uri}}}),
    )
    .await;
    let answer = s.null_id_error().await;
    assert_eq!(answer["id"], "outline-é", "{answer}");
    let mut names = Vec::new();
    outline_names(&answer["result"], &mut names);
    assert_eq!(names, ["alpha", "beta"], "{answer}");

    let id = s
        .request_start(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri}}),
        )
        .await;
    s.notify("$/cancelRequest", json!({"id": id})).await;
    let outline = s.response(id).await.expect("answered in full");
    let mut names = Vec::new();
    outline_names(&outline, &mut names);
    assert_eq!(names, ["alpha", "beta"]);

    let bad = s
        .request("textDocument/documentSymbol", json!({"textDocument": {}}))
        .await
        .expect_err("bad params");
    assert_eq!(bad["code"], -32602, "{bad}");
    assert_eq!(s.shutdown().await, 0);
}
