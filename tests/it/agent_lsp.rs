//! The chat over LSP: mira.ask answers at once and the turn streams into the transcript;
//! the server keeps serving while a slow model thinks; the conversation survives a killed
//! server process.

use crate::support as common;
use crate::support::mock_llm;

use std::time::{Duration, Instant};

use common::{Sandbox, TestServer};
use mock_llm::{MockLlm, Reply, Turn, Wire};
use serde_json::{Value, json};

fn env(sandbox: &Sandbox, mock: &MockLlm) -> Vec<(String, String)> {
    let mut env = sandbox.env();
    env.extend(mock.env().into_iter().map(|(k, v)| (k.to_string(), v)));
    env
}

fn capabilities(notifications: bool, sandbox: &Sandbox) -> Value {
    json!({
        "processId": null,
        "rootUri": sandbox.project_uri(),
        "workspaceFolders": [{"uri": sandbox.project_uri(), "name": "project"}],
        "capabilities": {
            "general": {"positionEncodings": ["utf-16"]},
            "window": {"workDoneProgress": true, "showDocument": {"support": true}},
            "workspace": {"applyEdit": true, "workspaceEdit": {"documentChanges": true}}
        },
        "clientInfo": {"name": "mira-tests"},
        "initializationOptions": {"mira": {"notifications": notifications}}
    })
}

/// The next window/showMessage whose text starts with `prefix` (others are skipped).
async fn message(server: &mut TestServer, prefix: &str) -> String {
    loop {
        let m = server.notification("window/showMessage").await;
        let text = m["params"]["message"].as_str().unwrap().to_string();
        if text.starts_with(prefix) {
            return text;
        }
    }
}

/// All text the server inserted into the transcript, in order.
fn transcript_edits(server: &TestServer) -> String {
    let mut text = String::new();
    for r in server.server_requests() {
        if r["method"] != "workspace/applyEdit" {
            continue;
        }
        for dc in r["params"]["edit"]["documentChanges"]
            .as_array()
            .cloned()
            .unwrap_or_default()
        {
            if dc["textDocument"]["uri"]
                .as_str()
                .is_some_and(|u| u.ends_with("conversation.md"))
            {
                for e in dc["edits"].as_array().unwrap() {
                    text.push_str(e["newText"].as_str().unwrap());
                }
            }
        }
    }
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_answers_at_once_and_the_server_keeps_serving_while_the_model_is_slow() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Wire::Responses).await;
    mock.push(
        Reply::turn(
            Wire::Responses,
            &Turn::text(&["The answer ", "streams in.\n\nSecond paragraph."]),
        )
        .delayed(Duration::from_secs(5)),
    );
    let mut server = TestServer::in_process_with_env(env(&sandbox, &mock), sandbox.project());
    server.initialize(capabilities(true, &sandbox)).await;
    let uri = sandbox.file_uri("src/lib.rs");
    server.open(&uri, "rust", "fn main() {}\n").await;

    let started = Instant::now();
    let r = server
        .request("workspace/executeCommand", json!({"command": "mira.ask", "arguments": [{"question": "what is this?", "uri": uri, "position": {"line": 0, "character": 3}}]}))
        .await
        .expect("mira.ask succeeds");
    let took = started.elapsed();
    assert!(took < Duration::from_millis(50), "mira.ask took {took:?}");
    let turn = r["turn"].as_str().expect("{turn}").to_string();

    // While the model is silent: edits and requests are handled promptly.
    for v in 2..=6 {
        server
            .notify("textDocument/didChange", json!({"textDocument": {"uri": uri, "version": v}, "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "// x\n"}]}))
            .await;
        let t = Instant::now();
        let (version, _) = server.document_state(&uri).await;
        assert_eq!(version, v);
        assert!(
            t.elapsed() < Duration::from_millis(1000),
            "documentState took {:?}",
            t.elapsed()
        );
    }
    server
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.status"}),
        )
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "the checks ran while the model was still delaying"
    );

    let started_note = server.notification("mira/turnStarted").await;
    assert_eq!(started_note["params"]["turn"], turn.as_str());
    let finished = server.notification("mira/turnFinished").await;
    assert_eq!(finished["params"]["status"], "completed");
    assert_eq!(finished["params"]["usage"]["inputTokens"], 1200);
    // A client with Mira's notifications shows the turn itself: no "Mira answered" toast.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let toasts: Vec<Value> = server
        .notifications()
        .into_iter()
        .filter(|n| n["method"] == "window/showMessage")
        .filter(|n| {
            n["params"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("Mira answered"))
        })
        .collect();
    assert!(toasts.is_empty(), "{toasts:?}");

    // The transcript file was written before the client loaded it (question included); from
    // then on it only changed through edits (the client saves it), which carried the answer.
    let disk = std::fs::read_to_string(sandbox.mira_home().join("conversation.md")).unwrap();
    assert!(
        disk.starts_with("# Mira — conversation") && disk.contains("### You\n\n> what is this?"),
        "{disk}"
    );
    let edits = transcript_edits(&server);
    assert!(
        edits.contains("The answer streams in.\n\nSecond paragraph."),
        "{edits}"
    );
    assert!(edits.contains("_completed"), "{edits}");
    let requests = server.server_requests();
    let methods: Vec<&str> = requests
        .iter()
        .filter_map(|r| r["method"].as_str())
        .collect();
    assert!(methods.contains(&"window/showDocument"), "{methods:?}");
    assert!(
        methods.contains(&"window/workDoneProgress/create"),
        "{methods:?}"
    );
    let progress: Vec<Value> = server
        .notifications()
        .into_iter()
        .filter(|n| n["method"] == "$/progress")
        .collect();
    assert!(
        progress
            .iter()
            .any(|p| p["params"]["value"]["kind"] == "begin")
    );
    let deltas: String = server
        .notifications()
        .into_iter()
        .filter(|n| n["method"] == "mira/delta")
        .map(|n| n["params"]["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(deltas, "The answer streams in.\n\nSecond paragraph.");

    // The editor context went to the model.
    let raw = &mock.requests()[0].raw;
    assert!(raw.contains("File: src/lib.rs:1 (rust)"), "{raw}");

    let history = server
        .request("mira/history", json!({"limit": 5}))
        .await
        .unwrap();
    assert_eq!(history[0]["turn"], turn.as_str());
    assert_eq!(
        history[0]["entries"][1]["text"],
        "The answer streams in.\n\nSecond paragraph."
    );
    assert_eq!(mock.violations(), Vec::<String>::new());
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_stops_a_running_turn() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Wire::Anthropic).await;
    mock.push(
        Reply::turn(Wire::Anthropic, &Turn::text(&["never"])).delayed(Duration::from_secs(10)),
    );
    let mut server = TestServer::in_process_with_env(env(&sandbox, &mock), sandbox.project());
    server.initialize(capabilities(false, &sandbox)).await;
    let r = server
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.ask", "arguments": ["why is the sky blue"]}),
        )
        .await
        .unwrap();
    let turn = r["turn"].as_str().unwrap().to_string();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let c = server
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.cancel", "arguments": [{"turn": turn}]}),
        )
        .await
        .unwrap();
    assert_eq!(c["cancelled"][0], turn.as_str());
    message(&mut server, "Mira: turn cancelled").await;
    let history = server.request("mira/history", json!({})).await.unwrap();
    assert_eq!(history[0]["status"], "cancelled");
    assert!(
        server
            .notifications()
            .iter()
            .all(|n| !n["method"].as_str().unwrap().starts_with("mira/")),
        "notifications are opt-in"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_conversation_survives_killing_the_server() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Wire::Chat).await;
    mock.push_turn(&Turn::text(&["Remember: the codeword is ", "pelican."]));
    let mut first = TestServer::binary_with_env(env(&sandbox, &mock), &sandbox.project());
    first.initialize(capabilities(false, &sandbox)).await;
    first
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.ask", "arguments": ["what is the codeword?"]}),
        )
        .await
        .unwrap();
    message(&mut first, "Mira answered").await;
    if let common::Kind::Binary(mut child) = first.kind {
        child.kill().await.unwrap();
    }

    let mut second = TestServer::binary_with_env(env(&sandbox, &mock), &sandbox.project());
    second.initialize(capabilities(false, &sandbox)).await;
    let history = second
        .request("mira/history", json!({"limit": 10}))
        .await
        .unwrap();
    assert_eq!(history.as_array().unwrap().len(), 1);
    assert_eq!(history[0]["entries"][0]["text"], "what is the codeword?");
    assert_eq!(
        history[0]["entries"][1]["text"],
        "Remember: the codeword is pelican."
    );

    mock.push_turn(&Turn::text(&["Pelican."]));
    second
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.ask", "arguments": ["and again?"]}),
        )
        .await
        .unwrap();
    message(&mut second, "Mira answered").await;
    let messages = mock.requests()[1].body["messages"].clone();
    let texts: Vec<&str> = messages
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(
        texts.contains(&"what is the codeword?")
            && texts.contains(&"Remember: the codeword is pelican."),
        "{texts:?}"
    );
    assert_eq!(mock.violations(), Vec::<String>::new());
    second.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_edits_are_versioned_and_never_clobber_newer_typing() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.project().join("src")).unwrap();
    std::fs::write(
        sandbox.project().join("src/lib.rs"),
        "fn answer() -> u32 { 41 }\n",
    )
    .unwrap();
    let mock = MockLlm::start(Wire::Responses).await;
    let args = r#"{"path":"src/lib.rs","old_string":"41","new_string":"42"}"#;
    mock.push_turn(&Turn::text(&[]).call("e1", "edit_file", args));
    mock.push_turn(&Turn::text(&["Done."]));
    let mut server = TestServer::in_process_with_env(env(&sandbox, &mock), sandbox.project());
    server.initialize(capabilities(false, &sandbox)).await;
    let uri = sandbox.file_uri("src/lib.rs");
    server
        .open(&uri, "rust", "fn answer() -> u32 { 41 }\n")
        .await;
    let (version, _) = server.document_state(&uri).await;
    server
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.ask", "arguments": ["make it 42"]}),
        )
        .await
        .unwrap();
    message(&mut server, "Mira answered").await;
    let edit = server
        .server_requests()
        .into_iter()
        .find(|r| {
            r["method"] == "workspace/applyEdit"
                && r["params"]["edit"]["documentChanges"][0]["textDocument"]["uri"] == uri.as_str()
        })
        .expect("an applyEdit for src/lib.rs");
    let dc = &edit["params"]["edit"]["documentChanges"][0];
    assert_eq!(
        dc["textDocument"]["version"], version,
        "versioned against what the tool read"
    );
    assert_eq!(
        dc["edits"][0]["range"],
        json!({"start": {"line": 0, "character": 22}, "end": {"line": 0, "character": 23}})
    );
    assert_eq!(dc["edits"][0]["newText"], "2");
    assert!(mock.requests()[1].raw.contains("applied: src/lib.rs"));
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_cut_off_by_a_killed_server_is_closed_by_the_next_one() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Wire::Chat).await;
    mock.push(Reply::turn(Wire::Chat, &Turn::text(&["too late"])).delayed(Duration::from_secs(30)));
    let mut first = TestServer::binary_with_env(env(&sandbox, &mock), &sandbox.project());
    first.initialize(capabilities(false, &sandbox)).await;
    first
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.ask", "arguments": ["slow question"]}),
        )
        .await
        .unwrap();
    // Wait until the question is stored, then kill the process mid-turn.
    let deadline = Instant::now() + Duration::from_secs(10);
    while mock.requests().is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    if let common::Kind::Binary(mut child) = first.kind {
        child.kill().await.unwrap();
        child.wait().await.unwrap();
    }

    let mut second = TestServer::binary_with_env(env(&sandbox, &mock), &sandbox.project());
    second.initialize(capabilities(false, &sandbox)).await;
    mock.push_turn(&Turn::text(&["Fresh answer."]));
    second
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.ask", "arguments": ["next question"]}),
        )
        .await
        .unwrap();
    message(&mut second, "Mira answered").await;
    let history = second.request("mira/history", json!({})).await.unwrap();
    assert_eq!(history[0]["status"], "failed");
    assert!(
        history[0]["error"]
            .as_str()
            .unwrap()
            .contains("stopped before it finished")
    );
    assert_eq!(history[1]["status"], "completed");
    assert_eq!(
        mock.violations(),
        Vec::<String>::new(),
        "the orphaned question did not break the next request"
    );
    second.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_share_one_conversation() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Wire::Responses).await;
    // Both first calls are answered slowly, so the two tool loops overlap.
    for id in ["ca", "cb"] {
        mock.push(
            Reply::turn(
                Wire::Responses,
                &Turn::text(&["Answer."]).call(id, "list_files", "{}"),
            )
            .delayed(Duration::from_millis(400)),
        );
    }
    for _ in 0..2 {
        mock.push_turn(&Turn::text(&["Done."]));
    }
    let mut a = TestServer::in_process_with_env(env(&sandbox, &mock), sandbox.project());
    let mut b = TestServer::in_process_with_env(env(&sandbox, &mock), sandbox.project());
    a.initialize(capabilities(false, &sandbox)).await;
    b.initialize(capabilities(false, &sandbox)).await;
    a.request(
        "workspace/executeCommand",
        json!({"command": "mira.ask", "arguments": ["question from editor A"]}),
    )
    .await
    .unwrap();
    b.request(
        "workspace/executeCommand",
        json!({"command": "mira.ask", "arguments": ["question from editor B"]}),
    )
    .await
    .unwrap();
    message(&mut a, "Mira answered").await;
    message(&mut b, "Mira answered").await;
    assert_eq!(
        mock.violations(),
        Vec::<String>::new(),
        "concurrent turns never saw each other's half-finished tool loops"
    );

    mock.push_turn(&Turn::text(&["Both."]));
    a.request(
        "workspace/executeCommand",
        json!({"command": "mira.ask", "arguments": ["what did we discuss?"]}),
    )
    .await
    .unwrap();
    message(&mut a, "Mira answered").await;
    let raw = mock.requests().last().unwrap().raw.clone();
    assert!(
        raw.contains("question from editor A") && raw.contains("question from editor B"),
        "one global conversation"
    );
    assert_eq!(mock.violations(), Vec::<String>::new());
    let history = b.request("mira/history", json!({})).await.unwrap();
    assert_eq!(history.as_array().unwrap().len(), 3);
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_shows_exactly_what_would_be_sent() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Wire::Anthropic).await;
    let mut server = TestServer::in_process_with_env(env(&sandbox, &mock), sandbox.project());
    server.initialize(capabilities(false, &sandbox)).await;
    let uri = sandbox.file_uri("src/lib.rs");
    server.open(&uri, "rust", "fn a() {}\nfn b() {}\n").await;
    let r = server
        .request("mira/context", json!({"uri": uri, "range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 9}}, "question": "what is b?"}))
        .await
        .unwrap();
    assert_eq!(r["provider"], "anthropic");
    assert!(r["endpoint"].as_str().unwrap().ends_with("/v1/messages"));
    let user = r["body"]["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        user.contains("Selection:\n```\nfn b() {}\n```") && user.ends_with("what is b?"),
        "{user}"
    );
    assert!(r["system"].as_str().unwrap().starts_with("You are Mira"));
    let names: Vec<&str> = r["sections"]
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
    assert!(mock.requests().is_empty(), "nothing was sent");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_conversation_writes_and_shows_the_transcript() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Wire::Chat).await;
    mock.push_turn(&Turn::text(&["Kept."]));
    let mut server = TestServer::in_process_with_env(env(&sandbox, &mock), sandbox.project());
    server.initialize(capabilities(false, &sandbox)).await;
    server
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.ask", "arguments": ["keep this"]}),
        )
        .await
        .unwrap();
    message(&mut server, "Mira answered").await;
    server.shutdown().await;

    // A new server (nothing loaded in the client yet) regenerates the file from the store.
    let mut server = TestServer::in_process_with_env(env(&sandbox, &mock), sandbox.project());
    server.initialize(capabilities(false, &sandbox)).await;
    let r = server
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.openConversation"}),
        )
        .await
        .unwrap();
    let uri = r["uri"].as_str().unwrap().to_string();
    assert!(uri.ends_with("/conversation.md"));
    let deadline = Instant::now() + Duration::from_secs(10);
    while !server
        .server_requests()
        .iter()
        .any(|q| q["method"] == "window/showDocument")
        && Instant::now() < deadline
    {
        server
            .request(
                "workspace/executeCommand",
                json!({"command": "mira.status"}),
            )
            .await
            .unwrap();
    }
    let show = server
        .server_requests()
        .into_iter()
        .find(|q| q["method"] == "window/showDocument")
        .expect("showDocument");
    assert_eq!(show["params"]["uri"], uri.as_str());
    let text = std::fs::read_to_string(sandbox.mira_home().join("conversation.md")).unwrap();
    assert!(
        text.contains("> keep this") && text.contains("Kept.") && text.contains("_completed"),
        "{text}"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_with_change_annotations_confirm_model_edits() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.project().join("src")).unwrap();
    std::fs::write(sandbox.project().join("src/lib.rs"), "const X: u32 = 1;\n").unwrap();
    let mock = MockLlm::start(Wire::Chat).await;
    mock.push_turn(&Turn::text(&[]).call(
        "e1",
        "edit_file",
        r#"{"path":"src/lib.rs","old_string":"1;","new_string":"2;"}"#,
    ));
    mock.push_turn(&Turn::text(&["Proposed."]));
    let mut server = TestServer::in_process_with_env(env(&sandbox, &mock), sandbox.project());
    let mut caps = capabilities(false, &sandbox);
    caps["capabilities"]["workspace"]["workspaceEdit"]["changeAnnotationSupport"] =
        json!({"groupsOnLabel": true});
    server.initialize(caps).await;
    server
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.ask", "arguments": ["make X 2"]}),
        )
        .await
        .unwrap();
    message(&mut server, "Mira answered").await;
    let edit = server
        .server_requests()
        .into_iter()
        .find(|r| {
            r["method"] == "workspace/applyEdit"
                && r["params"]["edit"]["changeAnnotations"].is_object()
        })
        .expect("an annotated edit");
    assert_eq!(
        edit["params"]["edit"]["changeAnnotations"]["mira"]["needsConfirmation"],
        true
    );
    let e = &edit["params"]["edit"]["documentChanges"][0]["edits"][0];
    assert_eq!(
        (e["annotationId"].as_str(), e["newText"].as_str()),
        (Some("mira"), Some("2"))
    );
    assert_eq!(
        edit["params"]["edit"]["documentChanges"][0]["textDocument"]["version"],
        Value::Null,
        "not open: checked against the disk"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_edits_confirm_model_edits_become_proposals_applied_on_request() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.project().join("src")).unwrap();
    let lib = sandbox.project().join("src/lib.rs");
    std::fs::write(&lib, "const X: u32 = 1;\n").unwrap();
    let mock = MockLlm::start(Wire::Anthropic).await;
    let edit =
        |n: &str| format!(r#"{{"path":"src/lib.rs","old_string":"1;","new_string":"{n};"}}"#);
    mock.push_turn(&Turn::text(&[]).call("e1", "edit_file", &edit("2")));
    mock.push_turn(&Turn::text(&["Proposed."]));
    let mut server = TestServer::in_process_with_env(env(&sandbox, &mock), sandbox.project());
    let mut caps = capabilities(false, &sandbox);
    caps["initializationOptions"]["mira"]["edits"] = json!({"confirm": true});
    server.initialize(caps).await;
    server
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.ask", "arguments": ["make X 2"]}),
        )
        .await
        .unwrap();
    message(&mut server, "Mira answered").await;
    assert!(
        mock.requests()[1].raw.contains("proposed as #1"),
        "the model is told"
    );
    let lib_uri = sandbox.file_uri("src/lib.rs");
    let edits_to_lib = |server: &TestServer| {
        server
            .server_requests()
            .into_iter()
            .filter(|r| {
                r["method"] == "workspace/applyEdit"
                    && r["params"]["edit"]["documentChanges"][0]["textDocument"]["uri"]
                        == lib_uri.as_str()
            })
            .count()
    };
    assert_eq!(
        edits_to_lib(&server),
        0,
        "nothing applied before the user says so"
    );
    let transcript = transcript_edits(&server);
    assert!(
        transcript.contains("**Proposed edit #1** to `src/lib.rs`")
            && transcript.contains("+const X: u32 = 2;"),
        "{transcript}"
    );

    let r = server
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.applyProposal", "arguments": [{"proposal": 1}]}),
        )
        .await
        .unwrap();
    assert_eq!(r["status"], "applying");
    message(&mut server, "Mira: applied proposal #1").await;
    assert_eq!(edits_to_lib(&server), 1);
    let again = server
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.rejectProposal", "arguments": [{"proposal": 1}]}),
        )
        .await;
    assert!(again.is_err(), "an applied proposal cannot be rejected");

    // A proposal made stale by the user's own change is refused, not forced.
    mock.push_turn(&Turn::text(&[]).call("e2", "edit_file", &edit("3")));
    mock.push_turn(&Turn::text(&["Proposed again."]));
    server
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.ask", "arguments": ["make X 3"]}),
        )
        .await
        .unwrap();
    message(&mut server, "Mira answered").await;
    std::fs::write(&lib, "const X: u32 = 1; // touched\n").unwrap();
    server
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.applyProposal", "arguments": [{"proposal": 2}]}),
        )
        .await
        .unwrap();
    message(&mut server, "Mira: proposal #2 is stale").await;
    assert_eq!(edits_to_lib(&server), 1);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn helix_gets_each_answer_as_a_file_it_never_has_to_save() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Wire::Chat).await;
    mock.push_turn(&Turn::text(&["Hi Helix."]));
    mock.push_turn(&Turn::text(&["Hi again."]));
    let mut server = TestServer::in_process_with_env(env(&sandbox, &mock), sandbox.project());
    server
        .initialize(json!({
            "processId": null,
            "rootUri": sandbox.project_uri(),
            "capabilities": {
                "general": {"positionEncodings": ["utf-8", "utf-32", "utf-16"]},
                "workspace": {"applyEdit": true}
            },
            "clientInfo": {"name": "helix", "version": "25.07"}
        }))
        .await;
    let mut shown = Vec::new();
    for (question, answer) in [
        (json!(["hello", "there"]), "Hi Helix."),
        (json!(["again"]), "Hi again."),
    ] {
        server
            .request(
                "workspace/executeCommand",
                json!({"command": "mira.ask", "arguments": question}),
            )
            .await
            .unwrap();
        message(&mut server, "Mira answered").await;
        let show = server
            .server_requests()
            .into_iter()
            .rfind(|r| r["method"] == "window/showDocument")
            .expect("showDocument, which Helix handles without advertising it");
        let uri = show["params"]["uri"].as_str().unwrap().to_string();
        assert!(!shown.contains(&uri), "each answer is a new file: {uri}");
        let path = uri.strip_prefix("file://").unwrap();
        let text = std::fs::read_to_string(path).unwrap();
        assert!(
            text.contains(answer) && text.contains("_completed"),
            "{text}"
        );
        // The selection is the answer's question.
        let line = show["params"]["selection"]["start"]["line"]
            .as_u64()
            .unwrap() as usize;
        assert!(
            text.lines().nth(line).unwrap().starts_with("### You"),
            "{text}"
        );
        shown.push(uri);
    }
    let methods: Vec<String> = server
        .server_requests()
        .iter()
        .map(|r| r["method"].as_str().unwrap().to_string())
        .collect();
    // Any edit would leave a Helix buffer unsaved, and `:q` would refuse to quit.
    assert!(
        !methods.contains(&"workspace/applyEdit".to_string()),
        "{methods:?}"
    );
    assert!(
        !methods.contains(&"window/workDoneProgress/create".to_string()),
        "{methods:?}"
    );
    let raw = &mock.requests()[0].raw;
    assert!(
        raw.contains("hello there"),
        "bare strings are joined into the question"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_provider_ask_says_how_to_set_one() {
    let sandbox = Sandbox::new();
    let mut server = TestServer::in_process(&sandbox);
    server.initialize(capabilities(false, &sandbox)).await;
    let r = server
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.ask", "arguments": ["hello"]}),
        )
        .await
        .unwrap();
    assert!(r["turn"].is_string());
    let m = message(&mut server, "Mira: turn failed").await;
    assert!(
        m.contains("no LLM provider is configured")
            && m.contains("OPENAI_API_KEY")
            && !m.contains('\n'),
        "{m}"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_on_ask_asks_the_user_through_show_message_request() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Wire::Chat).await;
    mock.push_turn(&Turn::text(&[]).call("b1", "bash", r#"{"command":"touch should-not-exist"}"#));
    mock.push_turn(&Turn::text(&["Not run."]));
    let mut server = TestServer::in_process_with_env(env(&sandbox, &mock), sandbox.project());
    let mut caps = capabilities(false, &sandbox);
    caps["capabilities"]["window"]["showMessage"] =
        json!({"messageActionItem": {"additionalPropertiesSupport": false}});
    caps["initializationOptions"]["mira"]["agent"] = json!({"bash": "ask"});
    server.initialize(caps).await;
    server
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.ask", "arguments": ["run it"]}),
        )
        .await
        .unwrap();
    message(&mut server, "Mira answered").await;
    let asked = server
        .server_requests()
        .into_iter()
        .find(|r| r["method"] == "window/showMessageRequest")
        .expect("the user was asked");
    assert!(
        asked["params"]["message"]
            .as_str()
            .unwrap()
            .contains("touch should-not-exist")
    );
    assert_eq!(asked["params"]["actions"][0]["title"], "Allow");
    // The test client dismisses the question (null): refused.
    assert!(!sandbox.project().join("should-not-exist").exists());
    assert!(mock.requests()[1].raw.contains("did not allow"));
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_can_override_the_reasoning_effort() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Wire::Responses).await;
    mock.push_turn(&Turn::text(&["Thought hard."]));
    mock.push_turn(&Turn::text(&["Barely thought."]));
    let mut server = TestServer::in_process_with_env(env(&sandbox, &mock), sandbox.project());
    server.initialize(capabilities(false, &sandbox)).await;
    for (effort, question) in [("high", "think hard"), ("low", "quick one")] {
        server
            .request(
                "workspace/executeCommand",
                json!({"command": "mira.ask", "arguments": [{"question": question, "effort": effort}]}),
            )
            .await
            .unwrap();
        message(&mut server, "Mira answered").await;
    }
    let efforts: Vec<Value> = mock
        .requests()
        .iter()
        .map(|r| r.body["reasoning"]["effort"].clone())
        .collect();
    assert_eq!(efforts, [json!("high"), json!("low")]);
    let e = server
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.ask", "arguments": [{"question": "q", "effort": "maximal"}]}),
        )
        .await
        .unwrap_err();
    assert!(e["message"].as_str().unwrap().contains("maximal"), "{e}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typed_question_uses_the_last_focus() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Wire::Chat).await;
    mock.push_turn(&Turn::text(&["It is beta."]));
    let mut server = TestServer::in_process_with_env(env(&sandbox, &mock), sandbox.project());
    server.initialize(capabilities(false, &sandbox)).await;
    let uri = sandbox.file_uri("src/focus.rs");
    server
        .open(&uri, "rust", "fn alpha() {}\n\nfn beta_function() {}\n")
        .await;
    // Helix: K on beta_function, then `:lsp-workspace-command mira.ask what is this`
    server
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": 2, "character": 5}}),
        )
        .await
        .unwrap();
    server
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.ask", "arguments": ["what", "is", "this"]}),
        )
        .await
        .unwrap();
    message(&mut server, "Mira answered").await;
    let body = mock.requests()[0].body.to_string();
    assert!(body.contains("src/focus.rs"), "{body}");
    assert!(body.contains("fn beta_function() {}"), "{body}");
    server.shutdown().await;
}

/// Issue 20, item 3: a definition typed into an open, unsaved buffer is what every reader
/// of the index sees — go to definition, the "Ask Mira" code action and its turn's focus,
/// and the model's find_symbol tool — never the older text on disk.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_reader_sees_a_definition_typed_in_an_open_unsaved_buffer() {
    let sandbox = Sandbox::new();
    let src = sandbox.project().join("src");
    std::fs::create_dir_all(&src).unwrap();
    let main = "fn main() {\n    helper_typed(1);\n}\n";
    std::fs::write(src.join("main.rs"), main).unwrap();
    std::fs::write(src.join("util.rs"), "pub fn other() {}\n").unwrap();
    let mock = MockLlm::start(Wire::Chat).await;
    mock.push_turn(&Turn::text(&["Looking."]).call(
        "c1",
        "find_symbol",
        r#"{"query":"helper_typed"}"#,
    ));
    mock.push_turn(&Turn::text(&["It adds one."]));
    let mut server = TestServer::binary_with_env(env(&sandbox, &mock), &sandbox.project());
    server.initialize(capabilities(false, &sandbox)).await;
    let util = sandbox.file_uri("src/util.rs");
    server.open(&util, "rust", "pub fn other() {}\n").await;
    server
        .notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": util, "version": 1}, "contentChanges": [{
                "range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}},
                "text": "/// Typed, unsaved.\npub fn helper_typed(n: u32) -> u32 {\n    n + 1\n}\n"
            }]}),
        )
        .await;
    let uri = sandbox.file_uri("src/main.rs");
    server.open(&uri, "rust", main).await;
    let at = json!({"line": 1, "character": 6});

    let def = server
        .request(
            "textDocument/definition",
            json!({"textDocument": {"uri": uri}, "position": at}),
        )
        .await
        .unwrap();
    let def = def
        .as_array()
        .and_then(|a| a.first())
        .cloned()
        .unwrap_or(def);
    assert_eq!(def["uri"], util.as_str(), "{def}");
    assert_eq!(def["range"]["start"]["line"], 2, "{def}");

    let actions = server
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": {"start": at, "end": at}, "context": {"diagnostics": []}}),
        )
        .await
        .unwrap();
    assert!(
        actions
            .to_string()
            .contains("Ask Mira about `helper_typed`"),
        "{actions}"
    );

    server
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.askSymbol", "arguments": [{"uri": uri, "position": at}]}),
        )
        .await
        .unwrap();
    message(&mut server, "Mira answered").await;
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "a tool call and the answer");
    assert!(
        requests[0]
            .raw
            .contains("pub fn helper_typed(n: u32) -> u32"),
        "the turn's focus carries the unsaved definition: {}",
        requests[0].raw
    );
    assert!(
        requests[1]
            .raw
            .contains("function helper_typed — src/util.rs:3"),
        "find_symbol finds the unsaved definition: {}",
        requests[1].raw
    );
    assert_eq!(server.shutdown().await, 0);
}

/// Issue 30/29: a tool call reads the same live and regenerated — in the streamed
/// transcript, in the transcript rebuilt from the database, and in `mira/history` (which
/// carries the `summary` of `mira/toolCall`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_reads_the_same_live_and_from_history() {
    let sandbox = Sandbox::new();
    std::fs::write(
        sandbox.project().join("notes.txt"),
        "the word is PERIWINKLE\n",
    )
    .unwrap();
    let mock = MockLlm::start(Wire::Chat).await;
    mock.push_turn(&Turn::text(&["Reading."]).call("c1", "read_file", r#"{"path":"notes.txt"}"#));
    mock.push_turn(&Turn::text(&["The word is PERIWINKLE."]));
    mock.push_turn(&Turn::text(&["Nothing else."]));
    let mut server = TestServer::in_process_with_env(env(&sandbox, &mock), sandbox.project());
    server.initialize(capabilities(true, &sandbox)).await;
    server
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.ask", "arguments": ["what is the word?"]}),
        )
        .await
        .unwrap();
    let live = server.notification("mira/toolCall").await;
    let summary = live["params"]["summary"].as_str().unwrap().to_string();
    assert_eq!(summary, "read notes.txt");
    server.notification("mira/turnFinished").await;
    let line = format!("> 🔧 {summary}\n");
    let streamed = transcript_edits(&server);
    assert_eq!(streamed.matches(&line).count(), 1, "{streamed}");
    let history = server
        .request("mira/history", json!({"limit": 1}))
        .await
        .unwrap();
    let call = history[0]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "tool_call")
        .cloned()
        .expect("a tool call entry");
    assert_eq!(call["summary"], summary.as_str(), "{call}");
    // The next turn regenerates the transcript from the database: the same line.
    server
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.ask", "arguments": ["anything else?"]}),
        )
        .await
        .unwrap();
    server.notification("mira/turnFinished").await;
    // Streamed once live, then once more in the transcript regenerated for the second turn.
    let streamed = transcript_edits(&server);
    assert!(streamed.contains("Nothing else."), "{streamed}");
    assert_eq!(streamed.matches(&line).count(), 2, "{streamed}");
    server.shutdown().await;
}
