//! No input wedges the server (issue 13, item 4), over the real binary: `$/` requests get
//! MethodNotFound, a frame announcing 4 GB is refused and later requests are answered, lone
//! surrogates arrive as U+FFFD, and an edit Mira cannot read marks the document out of sync,
//! says so once, and reopening the document brings it back.

use crate::support as common;

use common::{Sandbox, TestServer, frame};
use serde_json::json;
use std::os::unix::process::ExitStatusExt;

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

/// `mira doctor`'s output for this sandbox.
fn doctor(sandbox: &Sandbox) -> String {
    let out = sandbox
        .mira()
        .arg("doctor")
        .output()
        .expect("run mira doctor");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Issue 20, item 4: a handler that panics answers its request with an error, the server
/// goes on answering, and `mira doctor` shows the panic with its time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_handler_answers_an_error_and_the_server_lives_on() {
    let sandbox = Sandbox::new();
    let mut env = sandbox.env();
    env.push(("MIRA_TEST_PANIC_ON".into(), "textDocument/hover".into()));
    let mut server =
        TestServer::binary_with_stderr(env, &sandbox.project(), std::process::Stdio::null());
    server.initialize_default(&sandbox, &["utf-16"]).await;
    let uri = sandbox.file_uri("a.rs");
    server
        .open(
            &uri,
            "rust",
            "fn area() {}
fn main() { area(); }
",
        )
        .await;
    let hover = json!({"textDocument": {"uri": uri}, "position": {"line": 1, "character": 13}});
    for _ in 0..3 {
        let err = server
            .request("textDocument/hover", hover.clone())
            .await
            .expect_err("the panicking handler answers an error");
        assert_eq!(err["code"], -32603, "{err}");
        assert!(
            err["message"].as_str().unwrap().contains("still running"),
            "{err}"
        );
    }
    let symbols = server
        .request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri}}),
        )
        .await
        .expect("other requests are still answered");
    assert_eq!(symbols.as_array().map(Vec::len), Some(2), "{symbols}");
    assert_eq!(
        server.shutdown().await,
        0,
        "a clean exit after three panics"
    );

    let report = doctor(&sandbox);
    let line = report
        .lines()
        .find(|l| l.contains("last crash"))
        .unwrap_or_else(|| panic!("doctor names the last crash:\n{report}"));
    assert!(line.contains("panic") && line.contains("UTC"), "{line}");
    assert!(
        line.contains("MIRA_TEST_PANIC_ON names textDocument/hover"),
        "{line}"
    );
    assert!(
        report.contains("mira.log."),
        "doctor names the log file:\n{report}"
    );
}

/// A fatal signal cannot be survived, but it is recorded: `mira doctor` shows it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fatal_signal_is_recorded_for_doctor() {
    let sandbox = Sandbox::new();
    assert!(
        doctor(&sandbox).contains("last crash none recorded"),
        "a new home has no crash"
    );
    let mut server = TestServer::binary_with_stderr(
        sandbox.env(),
        &sandbox.project(),
        std::process::Stdio::null(),
    );
    server.initialize_default(&sandbox, &["utf-16"]).await;
    let pid = server.pid().expect("a process") as i32;
    // SAFETY: kill(2) on the child we spawned.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSEGV) }, 0);
    let deadline = std::time::Instant::now() + common::TIMEOUT;
    let status = loop {
        if let Some(s) = server.exit_status() {
            break s;
        }
        assert!(std::time::Instant::now() < deadline, "the process died");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert_eq!(status.signal(), Some(libc::SIGSEGV), "it still dies of it");
    let report = doctor(&sandbox);
    let line = report.lines().find(|l| l.contains("last crash")).unwrap();
    assert!(line.contains("signal SIGSEGV in mira lsp"), "{line}");
}
