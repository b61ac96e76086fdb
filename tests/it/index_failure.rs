//! A workspace folder whose disk worker fails in its crawl is reported as failed, with the
//! reason, by `mira.status` (issue 13): before, it stayed "indexing…" forever.

use crate::support as common;

use common::{Sandbox, TestServer};
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};

const PATIENCE: Duration = Duration::from_secs(20);

fn write(p: &Path, body: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
}

async fn status(s: &mut TestServer) -> Value {
    s.request(
        "workspace/executeCommand",
        json!({"command": "mira.status", "arguments": []}),
    )
    .await
    .expect("mira.status")
}

/// `mira lsp` on two workspace folders, once `mira.status` says the index is ready.
async fn start_with(sandbox: &Sandbox, project: &Path, other: &Path) -> (TestServer, Value) {
    let mut s = TestServer::binary(sandbox);
    s.initialize(json!({
        "processId": null,
        "rootUri": sandbox.project_uri(),
        "workspaceFolders": [
            {"uri": format!("file://{}", project.display()), "name": "project"},
            {"uri": format!("file://{}", other.display()), "name": "other"},
        ],
        "capabilities": {"general": {"positionEncodings": ["utf-8"]}},
        "clientInfo": {"name": "mira-tests"}
    }))
    .await;
    let start = Instant::now();
    loop {
        let st = status(&mut s).await;
        if st["index"]["ready"] == true {
            return (s, st);
        }
        assert!(
            start.elapsed() < PATIENCE,
            "mira.status still says the index is not ready: {st}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_folder_whose_crawl_fails_is_reported_failed_not_indexing_forever() {
    let sandbox = Sandbox::new();
    let project = sandbox.project();
    let root = sandbox.dir.path().canonicalize().unwrap();
    let other = root.join("other");
    write(&project.join("src/main.rs"), "fn project_main() {}\n");
    write(&other.join("ok.rs"), "fn other_ok() {}\n");
    write(&other.join("boom.rs"), "fn other_boom() {}\n");
    // A real SQLite failure in the middle of that folder's crawl: the database refuses the
    // row of `boom.rs` (as a full disk or a corrupt page would refuse a write).
    let store = mira::store::Store::open(&sandbox.db()).expect("create the database");
    drop(store);
    let conn = rusqlite::Connection::open(sandbox.db()).unwrap();
    conn.execute_batch(
        "CREATE TRIGGER refuse_boom BEFORE INSERT ON files WHEN NEW.path = 'boom.rs'
         BEGIN SELECT RAISE(ABORT, 'simulated write failure'); END;",
    )
    .unwrap();
    drop(conn);

    let (mut s, st) = start_with(&sandbox, &project, &other).await;
    let failed = st["index"]["failedFolders"]
        .as_array()
        .expect("failedFolders");
    assert_eq!(failed.len(), 1, "{st}");
    assert_eq!(failed[0]["path"], other.display().to_string(), "{st}");
    let reason = failed[0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("simulated write failure"),
        "the reason names the database error: {reason}"
    );
    // The project itself is indexed all the same.
    let hits = s
        .request("workspace/symbol", json!({"query": "project_main"}))
        .await
        .unwrap();
    assert_eq!(hits.as_array().unwrap().len(), 1, "{hits}");
    // The one-line summary (what Helix shows) says it too, with the way to retry.
    let shown: Vec<String> = s
        .notifications()
        .iter()
        .filter(|n| n["method"] == "window/showMessage")
        .map(|n| n["params"]["message"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(
        shown.iter().any(|m| m.contains("not indexed")
            && m.contains("simulated write failure")
            && m.contains("mira.reindex")),
        "status summary names the failed folder: {shown:?}"
    );

    // The cause goes away; `mira.reindex`, as the message says, indexes the folder.
    let conn = rusqlite::Connection::open(sandbox.db()).unwrap();
    conn.execute_batch("DROP TRIGGER refuse_boom").unwrap();
    drop(conn);
    reindex_until_healthy(&mut s, "other_boom").await;
    s.shutdown().await;
}

async fn reindex_until_healthy(s: &mut TestServer, symbol: &str) {
    s.request(
        "workspace/executeCommand",
        json!({"command": "mira.reindex", "arguments": []}),
    )
    .await
    .expect("mira.reindex");
    let start = Instant::now();
    loop {
        let st = status(s).await;
        let hits = s
            .request("workspace/symbol", json!({"query": symbol}))
            .await
            .unwrap();
        let failed = st["index"]["failedFolders"].as_array().map_or(0, Vec::len);
        if st["index"]["ready"] == true && failed == 0 && hits.as_array().unwrap().len() == 1 {
            return;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "after mira.reindex the folder is still not indexed: {st} {hits}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_folder_that_cannot_open_its_database_is_retried_by_reindex() {
    let sandbox = Sandbox::new();
    let project = sandbox.project();
    let root = sandbox.dir.path().canonicalize().unwrap();
    let other = root.join("other");
    write(&project.join("src/main.rs"), "fn project_main() {}\n");
    write(&other.join("lib.rs"), "fn other_lib() {}\n");
    // The folder's worker fails before its crawl: the database refuses its project row.
    drop(mira::store::Store::open(&sandbox.db()).expect("create the database"));
    let conn = rusqlite::Connection::open(sandbox.db()).unwrap();
    conn.execute_batch(
        "CREATE TRIGGER refuse_other BEFORE INSERT ON projects WHEN NEW.root LIKE '%/other'
         BEGIN SELECT RAISE(ABORT, 'simulated project failure'); END;",
    )
    .unwrap();
    drop(conn);

    let (mut s, st) = start_with(&sandbox, &project, &other).await;
    let failed = st["index"]["failedFolders"]
        .as_array()
        .expect("failedFolders");
    assert_eq!(failed.len(), 1, "{st}");
    let reason = failed[0]["reason"].as_str().unwrap();
    assert!(reason.contains("simulated project failure"), "{reason}");

    let conn = rusqlite::Connection::open(sandbox.db()).unwrap();
    conn.execute_batch("DROP TRIGGER refuse_other").unwrap();
    drop(conn);
    reindex_until_healthy(&mut s, "other_lib").await;
    s.shutdown().await;
}
