//! The editor surface over the protocol: each code action offered where it applies and
//! nowhere else, each with its command from the start, `codeAction/resolve`, execution of
//! every action command on the turn machinery (against the mock provider), anchored memories
//! going stale through the live index and the watcher, and errors for bad arguments.

use crate::support as common;
use crate::support::mock_llm;

use std::time::Duration;

use common::{Sandbox, TestServer};
use mock_llm::{MockLlm, Turn, Wire};
use serde_json::{Value, json};

const UTIL: &str = "/// Parses a TCP port.\npub fn parse_port(text: &str) -> u16 {\n    let value = text.trim().parse().unwrap_or(0);\n    value\n}\n";
const MAIN: &str = "mod util;\n\nfn main() {\n    let port = util::parse_port(\"8080\");\n    println!(\"{port}\");\n}\n";

fn project(sandbox: &Sandbox) {
    std::fs::create_dir_all(sandbox.project().join("src")).unwrap();
    std::fs::write(sandbox.project().join("src/util.rs"), UTIL).unwrap();
    std::fs::write(sandbox.project().join("src/main.rs"), MAIN).unwrap();
}

fn env(sandbox: &Sandbox, mock: &MockLlm) -> Vec<(String, String)> {
    let mut env = sandbox.env();
    env.extend(mock.env().into_iter().map(|(k, v)| (k.to_string(), v)));
    env
}

fn init(sandbox: &Sandbox, resolve: bool) -> Value {
    let mut caps = json!({
        "processId": null,
        "rootUri": sandbox.project_uri(),
        "workspaceFolders": [{"uri": sandbox.project_uri(), "name": "project"}],
        "capabilities": {
            "general": {"positionEncodings": ["utf-16"]},
            "window": {"workDoneProgress": true, "showDocument": {"support": true}},
            "workspace": {"applyEdit": true, "workspaceEdit": {"documentChanges": true}},
            "textDocument": {"codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["", "quickfix", "refactor", "refactor.rewrite"]}}}}
        },
        "clientInfo": {"name": "mira-tests"}
    });
    if resolve {
        caps["capabilities"]["textDocument"]["codeAction"]["resolveSupport"] =
            json!({"properties": ["command"]});
    }
    caps
}

fn range(l1: u32, c1: u32, l2: u32, c2: u32) -> Value {
    json!({"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}})
}

async fn actions(server: &mut TestServer, uri: &str, r: Value, context: Value) -> Vec<Value> {
    let res = server
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": r, "context": context}),
        )
        .await
        .expect("codeAction answers");
    res.as_array().cloned().unwrap_or_default()
}

fn titles(actions: &[Value]) -> Vec<String> {
    actions
        .iter()
        .map(|a| a["title"].as_str().unwrap().to_string())
        .collect()
}

/// Until the cold index has util.rs: the action at the call site appears.
async fn ready(server: &mut TestServer, main: &str) {
    for _ in 0..200 {
        let a = actions(
            server,
            main,
            range(3, 21, 3, 21),
            json!({"diagnostics": []}),
        )
        .await;
        if !a.is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the index never found parse_port");
}

async fn command(server: &mut TestServer, name: &str, args: Value) -> Result<Value, Value> {
    server
        .request(
            "workspace/executeCommand",
            json!({"command": name, "arguments": [args]}),
        )
        .await
}

async fn message(server: &mut TestServer, prefix: &str) -> String {
    loop {
        let m = server.notification("window/showMessage").await;
        let text = m["params"]["message"].as_str().unwrap().to_string();
        if text.starts_with(prefix) {
            return text;
        }
    }
}

async fn hover(server: &mut TestServer, uri: &str, line: u32, character: u32) -> String {
    let h = server
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
        )
        .await
        .unwrap();
    h["contents"]["value"].as_str().unwrap_or("").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn actions_are_offered_where_they_apply_and_nowhere_else() {
    let sandbox = Sandbox::new();
    project(&sandbox);
    let mut server = TestServer::in_process(&sandbox);
    let caps = server.initialize(init(&sandbox, true)).await;
    let provider = &caps["capabilities"]["codeActionProvider"];
    assert_eq!(provider["resolveProvider"], true, "{provider}");
    let main = sandbox.file_uri("src/main.rs");
    server.open(&main, "rust", MAIN).await;
    ready(&mut server, &main).await;

    // A call site: only the question about the symbol, its command already in place even for
    // a client that resolves (Helix 25.07.1 runs only the command first sent).
    let at_call = actions(
        &mut server,
        &main,
        range(3, 23, 3, 23),
        json!({"diagnostics": []}),
    )
    .await;
    assert_eq!(titles(&at_call), ["Ask Mira about `parse_port`"]);
    assert_eq!(at_call[0]["command"]["command"], "mira.askSymbol");
    assert_eq!(
        at_call[0]["command"]["arguments"][0],
        json!({"uri": main, "position": {"line": 3, "character": 23}})
    );
    assert!(at_call[0]["data"].is_object());
    assert_eq!(
        at_call[0]["kind"], "quickfix.mira",
        "under Quick Fix, where users look"
    );

    // Blank line, nothing selected: nothing.
    let blank = server
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": main}, "range": range(1, 0, 1, 0), "context": {"diagnostics": []}}),
        )
        .await
        .unwrap();
    assert_eq!(blank, Value::Null);
    // A one-character range is a cursor (Helix), not a selection.
    let one = actions(
        &mut server,
        &main,
        range(1, 0, 1, 1),
        json!({"diagnostics": []}),
    )
    .await;
    assert!(one.is_empty(), "{one:?}");

    // A selection: explain, edit, remember.
    let sel = actions(
        &mut server,
        &main,
        range(3, 0, 4, 10),
        json!({"diagnostics": []}),
    )
    .await;
    assert_eq!(
        titles(&sel),
        [
            "Mira: explain selection",
            "Mira: edit selection…",
            "Mira: remember selection…"
        ]
    );
    assert_eq!(sel[1]["kind"], "refactor.rewrite");

    // Diagnostics in the request: a fix per diagnostic, quickfix kind; `only` filters.
    let diag = json!({"range": range(3, 8, 3, 12), "message": "unused variable: `port`\nhelp: prefix it", "source": "rustc", "severity": 2});
    let with = actions(
        &mut server,
        &main,
        range(3, 8, 3, 12),
        json!({"diagnostics": [diag]}),
    )
    .await;
    assert!(
        titles(&with).contains(&"Mira: fix: unused variable: `port` help: prefix it".to_string()),
        "{:?}",
        titles(&with)
    );
    let fix = with
        .iter()
        .find(|a| a["kind"] == "quickfix")
        .unwrap()
        .clone();
    let only = actions(
        &mut server,
        &main,
        range(3, 0, 4, 10),
        json!({"diagnostics": [diag], "only": ["quickfix"]}),
    )
    .await;
    // Mira's own actions are a sub-kind of quickfix (VS Code's Quick Fix header).
    assert_eq!(titles(&only).len(), 3, "{:?}", titles(&only));
    let mira_only = actions(
        &mut server,
        &main,
        range(3, 0, 4, 10),
        json!({"diagnostics": [diag], "only": ["quickfix.mira"]}),
    )
    .await;
    assert_eq!(
        titles(&mira_only),
        ["Mira: explain selection", "Mira: remember selection…"]
    );

    // Documents Mira does not have open: nothing.
    let other = server
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": sandbox.file_uri("src/nope.rs")}, "range": range(0, 0, 0, 0), "context": {"diagnostics": []}}),
        )
        .await
        .unwrap();
    assert_eq!(other, Value::Null);

    // Resolve answers the action as sent: there is no edit to add, and the command was there.
    let resolved = server
        .request("codeAction/resolve", at_call[0].clone())
        .await
        .unwrap();
    assert_eq!(resolved, at_call[0]);
    // A client that dropped the command gets it back, with the arguments the command takes.
    let mut stripped = fix.clone();
    stripped.as_object_mut().unwrap().remove("command");
    let resolved = server
        .request("codeAction/resolve", stripped)
        .await
        .unwrap();
    assert_eq!(resolved, fix);
    assert_eq!(resolved["command"]["command"], "mira.fix");
    assert_eq!(
        resolved["command"]["arguments"][0]["diagnostics"][0]["source"],
        "rustc"
    );
    let bad = server
        .request(
            "codeAction/resolve",
            json!({"title": "x", "data": {"mira": "frobnicate"}}),
        )
        .await
        .unwrap_err();
    assert!(
        bad["message"]
            .as_str()
            .unwrap()
            .contains("not a Mira code action"),
        "{bad}"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_without_resolve_get_the_command_at_once() {
    let sandbox = Sandbox::new();
    project(&sandbox);
    let mut server = TestServer::in_process(&sandbox);
    server.initialize(init(&sandbox, false)).await;
    let main = sandbox.file_uri("src/main.rs");
    server.open(&main, "rust", MAIN).await;
    ready(&mut server, &main).await;
    let a = actions(
        &mut server,
        &main,
        range(3, 0, 4, 10),
        json!({"diagnostics": []}),
    )
    .await;
    let edit = a
        .iter()
        .find(|a| a["title"] == "Mira: edit selection…")
        .unwrap();
    assert_eq!(edit["command"]["command"], "mira.edit");
    assert_eq!(edit["command"]["arguments"][0]["range"], range(3, 0, 4, 10));
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_symbol_sends_the_definition_callers_and_anchored_memories() {
    let sandbox = Sandbox::new();
    project(&sandbox);
    let mock = MockLlm::start(Wire::Chat).await;
    mock.push_turn(&Turn::text(&["It parses ports."]));
    let mut server = TestServer::in_process_with_env(env(&sandbox, &mock), sandbox.project());
    server.initialize(init(&sandbox, true)).await;
    let main = sandbox.file_uri("src/main.rs");
    let util = sandbox.file_uri("src/util.rs");
    server.open(&main, "rust", MAIN).await;
    server.open(&util, "rust", UTIL).await;
    ready(&mut server, &main).await;

    let r = command(
        &mut server,
        "mira.remember",
        json!({"text": "parse_port returns 0 for garbage", "uri": util, "range": range(2, 4, 2, 20)}),
    )
    .await
    .expect("remember");
    assert_eq!(r["memory"]["stale"], false);

    let r = command(
        &mut server,
        "mira.askSymbol",
        json!({"uri": main, "position": {"line": 3, "character": 23}}),
    )
    .await
    .expect("askSymbol");
    assert!(r["turn"].is_string());
    message(&mut server, "Mira answered").await;
    let body = &mock.requests()[0].raw;
    for want in [
        "## Symbol in focus",
        "`parse_port` (function) defined at src/util.rs:2",
        "pub fn parse_port(text: &str) -> u16",
        "Parses a TCP port.",
        "`main` at src/main.rs:4",
        "Mira remembers about it",
        "parse_port returns 0 for garbage",
    ] {
        assert!(body.contains(want), "missing {want:?} in {body}");
    }

    // Bad arguments: each says what is wrong.
    let err = |e: Value| e["message"].as_str().unwrap().to_string();
    let e = command(
        &mut server,
        "mira.askSymbol",
        json!({"uri": sandbox.file_uri("src/gone.rs"), "position": {"line": 0, "character": 0}}),
    )
    .await
    .unwrap_err();
    assert!(err(e.clone()).contains("is not open"), "{e}");
    let e = command(
        &mut server,
        "mira.askSymbol",
        json!({"uri": main, "position": {"line": 99, "character": 0}}),
    )
    .await
    .unwrap_err();
    assert!(err(e.clone()).contains("past the end"), "{e}");
    let e = command(
        &mut server,
        "mira.askSymbol",
        json!({"uri": main, "position": {"line": 1, "character": 0}}),
    )
    .await
    .unwrap_err();
    assert!(err(e.clone()).contains("no identifier"), "{e}");
    let e = command(
        &mut server,
        "mira.askSymbol",
        json!({"uri": main, "position": {"line": 4, "character": 6}}),
    )
    .await
    .unwrap_err();
    assert!(err(e.clone()).contains("`println` is not defined"), "{e}");
    let e = command(&mut server, "mira.askSymbol", json!({"uri": main}))
        .await
        .unwrap_err();
    assert!(err(e.clone()).contains("{uri, position}"), "{e}");
    assert_eq!(mock.requests().len(), 1, "no turn for bad arguments");
    assert_eq!(mock.violations(), Vec::<String>::new());
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_fix_and_edit_run_turns_with_their_context() {
    let sandbox = Sandbox::new();
    project(&sandbox);
    let mock = MockLlm::start(Wire::Chat).await;
    mock.push_turn(&Turn::text(&["It trims and parses."]));
    mock.push_turn(&Turn::text(&["Fixed."]));
    mock.push_turn(&Turn::text(&[]).call(
        "e1",
        "edit_file",
        r#"{"path":"src/util.rs","old_string":"unwrap_or(0)","new_string":"unwrap_or(80)"}"#,
    ));
    mock.push_turn(&Turn::text(&["Done."]));
    let mut server = TestServer::in_process_with_env(env(&sandbox, &mock), sandbox.project());
    server.initialize(init(&sandbox, true)).await;
    let util = sandbox.file_uri("src/util.rs");
    server.open(&util, "rust", UTIL).await;

    command(
        &mut server,
        "mira.explain",
        json!({"uri": util, "range": range(2, 0, 3, 9)}),
    )
    .await
    .expect("explain");
    message(&mut server, "Mira answered").await;
    let body = mock.requests()[0].raw.clone();
    assert!(
        body.contains("Explain the selected code (lines 3–4 of src/util.rs)"),
        "{body}"
    );
    assert!(
        body.contains("let value = text.trim().parse().unwrap_or(0);"),
        "{body}"
    );
    assert!(body.contains("`parse_port` (function)"), "{body}");

    let diag = json!({"range": range(2, 8, 2, 13), "message": "type annotations needed", "source": "rustc", "code": "E0282"});
    command(
        &mut server,
        "mira.fix",
        json!({"uri": util, "range": range(2, 8, 2, 13), "diagnostics": [diag]}),
    )
    .await
    .expect("fix");
    message(&mut server, "Mira answered").await;
    let body = mock.requests()[1].raw.clone();
    assert!(
        body.contains("line 3: [rustc] type annotations needed (E0282)"),
        "{body}"
    );

    command(
        &mut server,
        "mira.edit",
        json!({"instruction": "default to port 80", "uri": util, "range": range(2, 0, 3, 9)}),
    )
    .await
    .expect("edit");
    message(&mut server, "Mira answered").await;
    let body = mock.requests()[2].raw.clone();
    assert!(
        body.contains("default to port 80") && body.contains("(the selection)"),
        "{body}"
    );
    let edit = server
        .server_requests()
        .into_iter()
        .find(|r| {
            r["method"] == "workspace/applyEdit"
                && r["params"]["edit"]["documentChanges"][0]["textDocument"]["uri"] == util.as_str()
        })
        .expect("the edit went to the editor");
    assert_eq!(
        edit["params"]["edit"]["documentChanges"][0]["textDocument"]["version"], 0,
        "versioned against the open buffer"
    );
    assert_eq!(
        edit["params"]["edit"]["documentChanges"][0]["edits"][0]["newText"],
        "8"
    );

    // Without an instruction (a code action in Helix): keep the place, say what to type.
    let r = command(
        &mut server,
        "mira.edit",
        json!({"uri": util, "range": range(2, 0, 3, 9)}),
    )
    .await
    .unwrap();
    assert_eq!(r["needsInstruction"], true);
    assert!(
        message(&mut server, "Mira: say what to change")
            .await
            .contains("mira.edit")
    );

    let err = |e: Value| e["message"].as_str().unwrap().to_string();
    let e = command(
        &mut server,
        "mira.fix",
        json!({"uri": util, "range": range(2, 0, 2, 1), "diagnostics": []}),
    )
    .await
    .unwrap_err();
    assert!(err(e.clone()).contains("needs the diagnostics"), "{e}");
    let e = command(
        &mut server,
        "mira.explain",
        json!({"uri": util, "range": range(2, 0, 40, 0)}),
    )
    .await
    .unwrap_err();
    assert!(err(e.clone()).contains("past the end"), "{e}");
    let e = command(
        &mut server,
        "mira.explain",
        json!({"uri": sandbox.file_uri("x.rs"), "range": range(0, 0, 0, 3)}),
    )
    .await
    .unwrap_err();
    assert!(err(e.clone()).contains("is not open"), "{e}");
    let e = command(
        &mut server,
        "mira.edit",
        json!({"instruction": "x", "uri": sandbox.file_uri("x.rs")}),
    )
    .await
    .unwrap_err();
    assert!(err(e.clone()).contains("is not open"), "{e}");
    assert_eq!(mock.requests().len(), 4, "no turn for bad arguments");
    assert_eq!(mock.violations(), Vec::<String>::new());
    server.shutdown().await;
}

async fn recall_anchor(server: &mut TestServer, query: &str) -> Value {
    let r = command(server, "mira.recall", json!({"query": query}))
        .await
        .unwrap();
    r["memories"][0]["anchors"][0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anchored_memories_show_on_hover_and_go_stale_when_the_code_changes() {
    let sandbox = Sandbox::new();
    project(&sandbox);
    let mut server = TestServer::in_process(&sandbox);
    server.initialize(init(&sandbox, true)).await;
    let util = sandbox.file_uri("src/util.rs");
    server.open(&util, "rust", UTIL).await;

    // Helix: "remember selection…" has no text; the next typed remember is anchored there.
    let r = command(
        &mut server,
        "mira.remember",
        json!({"uri": util, "range": range(2, 4, 3, 9)}),
    )
    .await
    .unwrap();
    assert_eq!(r["needsText"], true);
    server
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.remember", "arguments": ["ports", "under", "1024", "need", "root"]}),
        )
        .await
        .unwrap();
    let a = recall_anchor(&mut server, "1024 root").await;
    assert_eq!(
        (a["anchor"]["path"].as_str(), a["anchor"]["symbol"].as_str()),
        (Some("src/util.rs"), Some("parse_port"))
    );
    assert!(a["stale_since"].is_null());
    let h = hover(&mut server, &util, 1, 9).await;
    assert!(
        h.contains("Mira remembers") && h.contains("ports under 1024 need root"),
        "{h}"
    );
    assert!(!h.contains("stale"), "{h}");
    // Moving it (an edit above) keeps it fresh.
    server
        .notify("textDocument/didChange", json!({"textDocument": {"uri": util, "version": 1}, "contentChanges": [{"range": range(0, 0, 0, 0), "text": "\n"}]}))
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(recall_anchor(&mut server, "1024 root").await["stale_since"].is_null());

    // Editing the body (the live index) makes it stale: hover and recall say so.
    server
        .notify("textDocument/didChange", json!({"textDocument": {"uri": util, "version": 2}, "contentChanges": [{"range": range(3, 36, 3, 48), "text": "unwrap_or(80)"}]}))
        .await;
    let mut stale = String::new();
    for _ in 0..100 {
        stale = hover(&mut server, &util, 2, 9).await;
        if stale.contains("stale") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    assert!(stale.contains("stale"), "{stale}");
    assert!(!recall_anchor(&mut server, "1024 root").await["stale_since"].is_null());

    // Undoing the edit makes it fresh again.
    server
        .notify("textDocument/didChange", json!({"textDocument": {"uri": util, "version": 3}, "contentChanges": [{"range": range(3, 36, 3, 49), "text": "unwrap_or(0)"}]}))
        .await;
    let mut fresh = false;
    for _ in 0..100 {
        if recall_anchor(&mut server, "1024 root").await["stale_since"].is_null() {
            fresh = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    assert!(fresh, "the anchor did not come back");

    // The memory pickers' data: memories with their anchors, and goals.
    let listed = server
        .request("mira/memories", json!({"limit": 10}))
        .await
        .unwrap();
    assert_eq!(
        listed["memories"][0]["anchors"][0]["anchor"]["symbol"],
        "parse_port"
    );
    let goals = server.request("mira/goals", json!({})).await.unwrap();
    assert!(goals["goals"].is_array(), "{goals}");

    // Bad places: a range past the end, a document not open.
    let e = command(
        &mut server,
        "mira.remember",
        json!({"text": "x y", "uri": util, "range": range(50, 0, 51, 0)}),
    )
    .await
    .unwrap_err();
    assert!(
        e["message"].as_str().unwrap().contains("past the end"),
        "{e}"
    );
    let e = command(
        &mut server,
        "mira.remember",
        json!({"text": "x y", "uri": sandbox.file_uri("nope.rs"), "range": range(0, 0, 0, 2)}),
    )
    .await
    .unwrap_err();
    assert!(
        e["message"].as_str().unwrap().contains("is not open"),
        "{e}"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watcher_flags_anchors_when_a_closed_file_changes_on_disk() {
    let sandbox = Sandbox::new();
    project(&sandbox);
    let mut server = TestServer::in_process(&sandbox);
    server.initialize(init(&sandbox, true)).await;
    let util = sandbox.file_uri("src/util.rs");
    server.open(&util, "rust", UTIL).await;
    command(
        &mut server,
        "mira.remember",
        json!({"text": "watch this parser", "uri": util, "range": range(2, 4, 2, 10)}),
    )
    .await
    .unwrap();
    server
        .notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": util}}),
        )
        .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    std::fs::write(
        sandbox.project().join("src/util.rs"),
        UTIL.replace("unwrap_or(0)", "unwrap_or(8080)"),
    )
    .unwrap();
    let mut stale = false;
    for _ in 0..150 {
        if !recall_anchor(&mut server, "watch parser").await["stale_since"].is_null() {
            stale = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(stale, "the watcher never reported the change");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_proposals_are_offered_as_actions_on_their_file() {
    let sandbox = Sandbox::new();
    project(&sandbox);
    let mock = MockLlm::start(Wire::Chat).await;
    mock.push_turn(&Turn::text(&[]).call(
        "e1",
        "edit_file",
        r#"{"path":"src/util.rs","old_string":"unwrap_or(0)","new_string":"unwrap_or(1)"}"#,
    ));
    mock.push_turn(&Turn::text(&["Proposed."]));
    let mut server = TestServer::in_process_with_env(env(&sandbox, &mock), sandbox.project());
    let mut caps = init(&sandbox, true);
    caps["initializationOptions"] = json!({"mira": {"edits": {"confirm": true}}});
    server.initialize(caps).await;
    let util = sandbox.file_uri("src/util.rs");
    let main = sandbox.file_uri("src/main.rs");
    server.open(&util, "rust", UTIL).await;
    server.open(&main, "rust", MAIN).await;
    command(
        &mut server,
        "mira.edit",
        json!({"instruction": "default 1", "uri": util}),
    )
    .await
    .unwrap();
    // The list of pending proposals is current before "Mira proposes edit #1" is said, and so
    // before the turn's answer: asked at once, without polling, the actions offer it.
    message(&mut server, "Mira proposes edit #1").await;
    let offered = titles(
        &actions(
            &mut server,
            &util,
            range(0, 0, 0, 0),
            json!({"diagnostics": []}),
        )
        .await,
    );
    assert_eq!(
        offered,
        ["Apply Mira proposal #1", "Reject Mira proposal #1"]
    );
    let elsewhere = actions(
        &mut server,
        &main,
        range(1, 0, 1, 0),
        json!({"diagnostics": []}),
    )
    .await;
    assert!(elsewhere.is_empty(), "{elsewhere:?}");
    command(&mut server, "mira.rejectProposal", json!({"proposal": 1}))
        .await
        .unwrap();
    // Asked right after the command's answer, not polled: the list was re-read before it.
    let after = actions(
        &mut server,
        &util,
        range(0, 0, 0, 0),
        json!({"diagnostics": []}),
    )
    .await;
    assert!(
        after.is_empty(),
        "a rejected proposal is still offered: {after:?}"
    );
    server.shutdown().await;
}
