//! The LSP core over a real transport: handshake, encodings, malformed input, lifecycle.
//! Each scenario runs in-process (duplex pipe) and against the real binary over stdio.

use crate::support as common;

use common::{Sandbox, TestServer, frame};
use serde_json::{Value, json};

async fn both(sandbox: &Sandbox) -> [TestServer; 2] {
    [TestServer::in_process(sandbox), TestServer::binary(sandbox)]
}

#[tokio::test]
async fn negotiates_position_encoding_and_advertises_the_contract() {
    for (offered, expected) in [
        (vec!["utf-16", "utf-8"], "utf-8"),
        (vec!["utf-16"], "utf-16"),
        (vec!["utf-32"], "utf-32"),
        (vec![], "utf-16"),
    ] {
        let sandbox = Sandbox::new();
        let mut s = TestServer::in_process(&sandbox);
        let init = s.initialize_default(&sandbox, &offered).await;
        let caps = &init["capabilities"];
        assert_eq!(caps["positionEncoding"], expected, "offered {offered:?}");
        assert_eq!(caps["textDocumentSync"]["change"], 2, "incremental sync");
        assert_eq!(caps["workspace"]["workspaceFolders"]["supported"], true);
        let commands = caps["executeCommandProvider"]["commands"]
            .as_array()
            .unwrap();
        for c in ["mira.ask", "mira.remember", "mira.status", "mira.cancel"] {
            assert!(commands.contains(&json!(c)), "{c} advertised");
        }
        assert_eq!(init["serverInfo"]["name"], "mira");
        assert_eq!(s.shutdown().await, 0);
    }
}

#[tokio::test]
async fn document_state_follows_incremental_edits_in_utf16() {
    let sandbox = Sandbox::new();
    for mut s in both(&sandbox).await {
        s.initialize_default(&sandbox, &["utf-16"]).await;
        let uri = sandbox.file_uri("a.rs");
        s.open(&uri, "rust", "fn a😀() {}\n").await;
        s.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 1},
                   "contentChanges": [
                       {"range": {"start": {"line": 0, "character": 6}, "end": {"line": 0, "character": 6}}, "text": "日本"},
                       {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}}, "text": "// é\r\n"}
                   ]}),
        )
        .await;
        assert_eq!(
            s.document_state(&uri).await,
            (1, "fn a😀日本() {}\n// é\r\n".to_string())
        );
        let missing = s
            .request(
                "mira/documentState",
                json!({"uri": sandbox.file_uri("nope.rs")}),
            )
            .await
            .unwrap_err();
        assert_eq!(missing["code"], -32602);
        assert!(missing["message"].as_str().unwrap().contains("not open"));
        assert_eq!(s.shutdown().await, 0);
    }
}

#[tokio::test]
async fn malformed_input_gets_errors_and_the_server_keeps_answering() {
    let sandbox = Sandbox::new();
    for mut s in both(&sandbox).await {
        s.initialize_default(&sandbox, &["utf-8"]).await;

        // invalid JSON
        s.send_raw(&frame("{\"jsonrpc\": \"2.0\", \"id\": 90, \"method\": "))
            .await;
        assert_eq!(s.null_id_error().await["error"]["code"], -32700);

        // valid JSON, not JSON-RPC: the id is kept
        s.send(json!({"jsonrpc": "2.0", "id": 91, "method": 12}))
            .await;
        assert_eq!(s.response(91).await.unwrap_err()["code"], -32600);

        // Content-Length shorter than the body: the tail is skipped up to the next header
        let body = json!({"jsonrpc": "2.0", "id": 92, "method": "shutdownx"}).to_string();
        let mut bytes = format!("Content-Length: {}\r\n\r\n", body.len() - 7).into_bytes();
        bytes.extend_from_slice(body.as_bytes());
        s.send_raw(&bytes).await;
        assert_eq!(s.null_id_error().await["error"]["code"], -32700);

        // a header block without Content-Length
        s.send_raw(b"Content-Type: application/json\r\n\r\n{}")
            .await;
        assert_eq!(s.null_id_error().await["error"]["code"], -32700);

        // unknown method
        let e = s.request("mira/noSuchMethod", json!({})).await.unwrap_err();
        assert_eq!(e["code"], -32601);

        // wrong parameter types for a known method
        let e = s
            .request("mira/documentState", json!({"uri": 42}))
            .await
            .unwrap_err();
        assert_eq!(e["code"], -32602);
        let e = s
            .request("workspace/executeCommand", json!({"command": 7}))
            .await
            .unwrap_err();
        assert_eq!(e["code"], -32602);

        // a notification with garbage params is dropped, not fatal
        s.notify("textDocument/didChange", json!({"textDocument": "x"}))
            .await;

        // and the server still works
        let uri = sandbox.file_uri("ok.txt");
        s.open(&uri, "plaintext", "still alive").await;
        assert_eq!(s.document_state(&uri).await.1, "still alive");
        assert_eq!(s.shutdown().await, 0);
    }
}

#[tokio::test]
async fn commands_answer_and_unknown_ones_are_named() {
    let sandbox = Sandbox::new();
    std::fs::write(
        sandbox.project().join("lib.rs"),
        "pub fn one() {}\npub fn two() {}\n",
    )
    .unwrap();
    let mut s = TestServer::in_process(&sandbox);
    s.initialize_default(&sandbox, &["utf-16"]).await;
    // The index reports itself once its cold crawl is done.
    let mut index = json!(null);
    for _ in 0..100 {
        let st = s
            .request(
                "workspace/executeCommand",
                json!({"command": "mira.status"}),
            )
            .await
            .unwrap();
        index = st["index"].clone();
        if index["ready"] == true {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let project = sandbox.project().canonicalize().unwrap();
    assert_eq!(
        index,
        json!({"files": 1, "symbols": 2, "ready": true, "symbolsReady": true, "skipped": 0,
               "skippedFiles": [], "folders": [project.display().to_string()]})
    );
    while s
        .notifications()
        .iter()
        .any(|n| n["method"] == "window/showMessage")
    {
        s.notification("window/showMessage").await;
    }
    let status = s
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.status", "arguments": []}),
        )
        .await
        .unwrap();
    assert_eq!(
        status["project"]["root"],
        sandbox.project().display().to_string()
    );
    assert_eq!(status["project"]["detection"], "git root");
    assert_eq!(status["positionEncoding"], "utf-16");
    assert_eq!(status["database"], sandbox.db().display().to_string());
    assert!(status["schemaVersion"].as_u64().unwrap() >= 1);
    assert_eq!(status["attachedProcesses"], 1);
    // Helix ignores results: the summary also goes to the status line.
    let shown = s.notification("window/showMessage").await;
    assert!(
        shown["params"]["message"]
            .as_str()
            .unwrap()
            .contains("project project")
    );

    let e = s
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.nope", "arguments": []}),
        )
        .await
        .unwrap_err();
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("unknown command `mira.nope`")
    );
    let e = s
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.askSymbol", "arguments": ["not an object"]}),
        )
        .await
        .unwrap_err();
    assert!(e["message"].as_str().unwrap().contains("{uri, position}"));
    assert_eq!(s.shutdown().await, 0);
}

#[tokio::test]
async fn requests_before_initialize_are_refused_not_dropped() {
    let sandbox = Sandbox::new();
    let mut s = TestServer::binary(&sandbox);
    let e = s
        .request("mira/documentState", json!({"uri": "file:///x"}))
        .await
        .unwrap_err();
    assert_eq!(e["code"], -32002);
    s.initialize_default(&sandbox, &[]).await;
    assert_eq!(s.shutdown().await, 0);
}

#[tokio::test]
async fn exit_codes_follow_the_protocol_and_eof_ends_the_process() {
    // shutdown + exit → 0
    let sandbox = Sandbox::new();
    let mut s = TestServer::binary(&sandbox);
    s.initialize_default(&sandbox, &[]).await;
    assert_eq!(s.shutdown().await, 0);

    // exit without shutdown → 1
    let mut s = TestServer::binary(&sandbox);
    s.initialize_default(&sandbox, &[]).await;
    s.notify("exit", Value::Null).await;
    assert_eq!(s.wait_exit().await, 1);

    // the editor dies: stdin closes → the server exits by itself (no orphan)
    let mut s = TestServer::binary(&sandbox);
    s.initialize_default(&sandbox, &[]).await;
    s.open(&sandbox.file_uri("x.txt"), "plaintext", "x").await;
    assert_eq!(s.close_input().await, 1);
}

#[tokio::test]
async fn a_broken_config_is_reported_and_the_server_still_serves() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.project().join(".mira")).unwrap();
    std::fs::write(
        sandbox.project().join(".mira/project.toml"),
        "[index\nbroken",
    )
    .unwrap();
    let mut s = TestServer::in_process(&sandbox);
    s.initialize_default(&sandbox, &[]).await;
    let shown = s.notification("window/showMessage").await;
    let msg = shown["params"]["message"].as_str().unwrap();
    assert!(
        msg.contains("project.toml") && msg.contains("line 1"),
        "{msg}"
    );
    let uri = sandbox.file_uri("a.txt");
    s.open(&uri, "plaintext", "ok").await;
    assert_eq!(s.document_state(&uri).await.1, "ok");
    assert_eq!(s.shutdown().await, 0);
}
