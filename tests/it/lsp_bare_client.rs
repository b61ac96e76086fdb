//! A client that declares no optional capability (`capabilities: {}`) gets only what LSP
//! allows it, from the real binary: `codeActionProvider: true` (no options object), code
//! actions as bare `Command`s, and no `workspace/applyEdit` — the answer comes through the
//! status line (`window/showMessage`) and the log instead, and a model edit is refused, never
//! sent. Nothing it did not ask for either: no showDocument, progress or `mira/*` notes.

use crate::support as common;
use crate::support::mock_llm;

use std::time::Duration;

use common::{Sandbox, TestServer};
use mock_llm::{MockLlm, Turn, Wire};
use serde_json::{Value, json};

const LIB: &str = "/// Doubles.\npub fn double(x: u32) -> u32 {\n    x * 2\n}\n";

fn project(sandbox: &Sandbox) -> String {
    std::fs::create_dir_all(sandbox.project().join("src")).unwrap();
    std::fs::write(sandbox.project().join("src/lib.rs"), LIB).unwrap();
    sandbox.file_uri("src/lib.rs")
}

async fn start(sandbox: &Sandbox, mock: Option<&MockLlm>) -> (TestServer, Value) {
    let mut env = sandbox.env();
    if let Some(m) = mock {
        env.extend(m.env().into_iter().map(|(k, v)| (k.to_string(), v)));
    }
    let mut server = TestServer::binary_with_env(env, &sandbox.project());
    let init = server
        .initialize(json!({
            "processId": null,
            "rootUri": sandbox.project_uri(),
            "capabilities": {},
        }))
        .await;
    (server, init)
}

/// Code actions at `range` once the cold index knows `double`.
async fn actions(server: &mut TestServer, uri: &str, range: Value) -> Vec<Value> {
    for _ in 0..200 {
        let r = server
            .request(
                "textDocument/codeAction",
                json!({"textDocument": {"uri": uri}, "range": range, "context": {"diagnostics": []}}),
            )
            .await
            .expect("codeAction answers");
        let list = r.as_array().cloned().unwrap_or_default();
        if list.len() > 1 {
            return list;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the index never found `double`");
}

/// Everything the server asked or told the client that a bare client never opted into.
fn unasked(server: &TestServer) -> Vec<String> {
    let requests = server.server_requests().into_iter();
    let notes = server.notifications().into_iter();
    requests
        .chain(notes)
        .filter_map(|m| m["method"].as_str().map(str::to_string))
        .filter(|m| {
            m.starts_with("mira/")
                || matches!(
                    m.as_str(),
                    "workspace/applyEdit"
                        | "window/showDocument"
                        | "window/workDoneProgress/create"
                        | "$/progress"
                        | "window/showMessageRequest"
                )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_actions_are_plain_commands_behind_a_plain_provider() {
    let sandbox = Sandbox::new();
    let uri = project(&sandbox);
    let (mut server, init) = start(&sandbox, None).await;
    assert_eq!(init["capabilities"]["codeActionProvider"], json!(true));
    server.open(&uri, "rust", LIB).await;
    let selection =
        json!({"start": {"line": 1, "character": 7}, "end": {"line": 2, "character": 9}});
    let offered = actions(&mut server, &uri, selection).await;
    let titles: Vec<&str> = offered
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        [
            "Ask Mira about `double`",
            "Mira: explain selection",
            "Mira: edit selection…",
            "Mira: remember selection…"
        ]
    );
    for a in &offered {
        // A Command: title, command (a string), arguments; nothing of a CodeAction.
        let mut keys: Vec<&str> = a.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort();
        assert_eq!(keys, ["arguments", "command", "title"], "{a}");
        assert!(a["command"].as_str().unwrap().starts_with("mira."), "{a}");
    }
    let explain = &offered[1];
    assert_eq!(explain["arguments"][0]["uri"], uri.as_str());
    assert_eq!(server.shutdown().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_apply_edit_the_answer_comes_in_the_status_line_and_edits_are_refused() {
    let sandbox = Sandbox::new();
    let uri = project(&sandbox);
    let mock = MockLlm::start(Wire::Chat).await;
    mock.push_turn(&Turn::text(&[]).call(
        "e1",
        "edit_file",
        r#"{"path":"src/lib.rs","old_string":"x * 2","new_string":"x + x"}"#,
    ));
    mock.push_turn(&Turn::text(&[
        "I could not edit it.\n\nUse `x + x` instead.",
    ]));
    let (mut server, _) = start(&sandbox, Some(&mock)).await;
    server.open(&uri, "rust", LIB).await;
    server
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.ask", "arguments": ["make double add"]}),
        )
        .await
        .expect("mira.ask answers at once");
    let answer = loop {
        let m = server.notification("window/showMessage").await;
        let text = m["params"]["message"].as_str().unwrap().to_string();
        if text.starts_with("Mira: I could") {
            break text;
        }
    };
    assert_eq!(answer, "Mira: I could not edit it. Use `x + x` instead.");
    // The whole answer, in the log (`notification` fails the test if it never comes).
    while !server.notification("window/logMessage").await["params"]["message"]
        .as_str()
        .is_some_and(|t| t.contains("I could not edit it.\n\nUse `x + x` instead."))
    {}
    let tool_result = mock.requests()[1].raw.clone();
    assert!(
        tool_result.contains("no workspace.applyEdit"),
        "{tool_result}"
    );
    assert_eq!(unasked(&server), Vec::<String>::new());
    let on_disk = std::fs::read_to_string(sandbox.project().join("src/lib.rs")).unwrap();
    assert_eq!(on_disk, LIB, "nothing edited behind the editor's back");
    let transcript = std::fs::read_to_string(sandbox.mira_home().join("conversation.md")).unwrap();
    assert!(transcript.contains("Use `x + x` instead."), "{transcript}");
    assert_eq!(server.shutdown().await, 0);
}
