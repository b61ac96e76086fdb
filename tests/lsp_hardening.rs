//! No input wedges the server (issue 13, item 4), over the real binary: `$/` requests get
//! MethodNotFound, a frame announcing 4 GB is refused and later requests are answered, lone
//! surrogates arrive as U+FFFD, and an edit Mira cannot read marks the document out of sync,
//! says so once, and reopening the document brings it back.

mod common;

use common::{Sandbox, TestServer, frame};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_input_wedges_the_server_or_drifts_a_document_silently() {
    let sandbox = Sandbox::new();
    let mut server = TestServer::binary(&sandbox);
    server.initialize_default(&sandbox, &["utf-16"]).await;
    let uri = sandbox.file_uri("a.rs");
    server.open(&uri, "rust", "fn a() {}\n").await;

    // `$/` requests are answered (the spec requires MethodNotFound); notifications pass.
    let e = server
        .request("$/mystery", json!({}))
        .await
        .expect_err("an error");
    assert_eq!(e["code"], -32601, "{e}");

    // A frame announcing 4 GB: refused at once, and the next request is still answered.
    server
        .send_raw(b"Content-Length: 4000000000\r\n\r\n{\"jsonrpc\":\"2.0\",")
        .await;
    let err = server.null_id_error().await;
    assert!(
        err["error"]["message"].as_str().unwrap().contains("limit"),
        "{err}"
    );
    let (version, _) = server.document_state(&uri).await;
    assert_eq!(version, 0);

    // A lone surrogate in an edit becomes U+FFFD instead of losing the edit.
    let body = format!(
        r#"{{"jsonrpc":"2.0","method":"textDocument/didChange","params":{{"textDocument":{{"uri":"{uri}","version":1}},"contentChanges":[{{"range":{{"start":{{"line":0,"character":0}},"end":{{"line":0,"character":0}}}},"text":"// \ud800!\n"}}]}}}}"#
    );
    server.send_raw(&frame(&body)).await;
    let (version, text) = server.document_state(&uri).await;
    assert_eq!((version, text.as_str()), (1, "// \u{FFFD}!\nfn a() {}\n"));

    // An edit whose params cannot be read: out of sync, said once, later edits ignored.
    let bad = format!(
        r#"{{"jsonrpc":"2.0","method":"textDocument/didChange","params":{{"textDocument":{{"uri":"{uri}","version":2}},"contentChanges":5}}}}"#
    );
    server.send_raw(&frame(&bad)).await;
    let m = server.notification("window/showMessage").await;
    let text = m["params"]["message"].as_str().unwrap().to_string();
    assert!(
        text.contains("lost track of a.rs") && text.contains("reopen"),
        "{text}"
    );
    server.send_raw(&frame(&bad)).await;
    server
        .notify("textDocument/didChange", json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": "drifted"}]}))
        .await;
    let (version, _) = server.document_state(&uri).await;
    assert_eq!(version, 1, "edits to a drifted copy are not applied");
    let said = server
        .notifications()
        .iter()
        .filter(|n| {
            n["method"] == "window/showMessage"
                && n["params"]["message"]
                    .as_str()
                    .is_some_and(|t| t.contains("lost track"))
        })
        .count();
    assert_eq!(said, 0, "told once (the first was consumed above)");

    // Reopening brings the whole text again.
    server
        .notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": uri}}),
        )
        .await;
    server.open(&uri, "rust", "fn b() {}\n").await;
    server
        .notify("textDocument/didChange", json!({"textDocument": {"uri": uri, "version": 1}, "contentChanges": [{"text": "fn c() {}\n"}]}))
        .await;
    assert_eq!(
        server.document_state(&uri).await,
        (1, "fn c() {}\n".to_string())
    );
    assert_eq!(server.shutdown().await, 0);
}
