//! Helix 25.07.1 replayed: the client side of a capture of real Helix talking to `mira lsp`
//! (tests/fixtures/helix/, recorded by hand; Helix is in no registry, so CI cannot start it)
//! is played against the real binary, with Helix's exact initialize params, document sync,
//! typed commands, pickers, `space a` and `:q!`. A model of Helix (tests/it/support/helix.rs) answers the
//! server as Helix does. The test asserts what a Helix user would see, and fails when an
//! answer reaches Helix only through a message Helix drops.
//!
//! Past the capture it chooses every other code action Mira offers, with Helix 25.07.1's rule
//! (helix-term/src/commands/lsp.rs at that tag): resolve when `edit` or `command` is missing,
//! apply the resolved edit, then run the command of the action *as first sent*.

use crate::support::helix;
use crate::support::mock_llm;

use std::path::Path;

use helix::Helix;
use mock_llm::{MockLlm, Turn, Wire};
use serde_json::{Value, json};

const CAPTURE: &str = include_str!("../fixtures/helix/helix-25.07.1-capture.jsonl");

/// The client's own messages, with `/ROOT` moved to `root`. Helix's reactions to the server
/// (responses, and the transcript it opens and edits) are left out: the model makes its own.
fn client_messages(root: &Path) -> Vec<Value> {
    let root = root.display().to_string();
    CAPTURE
        .lines()
        .map(|l| serde_json::from_str::<Value>(&l.replace("/ROOT", &root)).unwrap())
        .filter(|e| e["dir"] == "client->server" && e["msg"].get("method").is_some())
        .map(|e| e["msg"].clone())
        .filter(|m| {
            let uri = m["params"]["textDocument"]["uri"].as_str().unwrap_or("");
            !uri.ends_with("/conversation.md")
        })
        .map(|mut m| {
            if m["method"] == "initialize" {
                // Helix's own pid: Mira watches it and leaves when it is gone.
                m["params"]["processId"] = json!(std::process::id());
            }
            m
        })
        .collect()
}

/// The project Helix had open, rebuilt from the capture's didOpen texts.
fn project(root: &Path, messages: &[Value]) {
    let proj = root.join("proj");
    std::fs::create_dir_all(proj.join(".git")).unwrap();
    for m in messages
        .iter()
        .filter(|m| m["method"] == "textDocument/didOpen")
    {
        let d = &m["params"]["textDocument"];
        let path = Path::new(d["uri"].as_str().unwrap().strip_prefix("file://").unwrap());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, d["text"].as_str().unwrap()).unwrap();
    }
    std::fs::write(proj.join("notes.txt"), "The secret word is PERIWINKLE.\n").unwrap();
    // Helix has no preview for server edits: a user who wants to review them sets this.
    let config = root.join("home/.config/mira");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "[edits]\nconfirm = true\n").unwrap();
}

fn script(mock: &MockLlm) {
    let turns = [
        Turn::text(&[]).call("r1", "read_file", r#"{"path":"notes.txt"}"#),
        Turn::text(&["The word is PERIWINKLE."]),
        Turn::text(&["`area` multiplies its two sides."]),
        Turn::text(&["It prints the area of a 2 by 3 rectangle."]),
        Turn::text(&[]).call(
            "e1",
            "edit_file",
            r#"{"path":"src/main.rs","old_string":"area(2, 3)","new_string":"area(4, 5)"}"#,
        ),
        Turn::text(&["Proposed 4 by 5."]),
        Turn::text(&[]).call(
            "e2",
            "edit_file",
            r#"{"path":"src/geometry.rs","old_string":"w * h","new_string":"w.saturating_mul(h)"}"#,
        ),
        Turn::text(&["Proposed a saturating multiply."]),
    ];
    for t in &turns {
        mock.push_turn(t);
    }
}

fn env(root: &Path, mock: &MockLlm) -> Vec<(String, String)> {
    let mut env = vec![
        ("HOME".to_string(), root.join("home").display().to_string()),
        ("MIRA_HOME".into(), root.join("data").display().to_string()),
        (
            "XDG_CONFIG_HOME".into(),
            root.join("home/.config").display().to_string(),
        ),
    ];
    env.extend(mock.env().into_iter().map(|(k, v)| (k.to_string(), v)));
    env
}

/// The replay's places, in the capture's files.
struct Places {
    main: String,
    geometry: String,
    /// Where Mira writes each answer Helix is shown (`answers/<turn>.md`).
    answers: String,
}

impl Places {
    fn new(root: &Path) -> Places {
        let file = |p: &str| format!("file://{}", root.join(p).display());
        Places {
            main: file("proj/src/main.rs"),
            geometry: file("proj/src/geometry.rs"),
            answers: file("data/answers/"),
        }
    }
}

fn range(l1: u32, c1: u32, l2: u32, c2: u32) -> Value {
    json!({"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}})
}

/// The document Helix was last asked to show: an answer file, loaded from disk.
fn last_shown<'h>(h: &'h Helix, p: &Places) -> &'h str {
    let uri = h.screen.shown.last().expect("a document shown");
    assert!(uri.starts_with(&p.answers), "not an answer file: {uri}");
    h.text(uri)
}

/// Waits for a turn's end in the status line; the answer Helix is shown must hold `answer`.
async fn answered(h: &mut Helix, p: &Places, answer: &str) {
    let shown = h.screen.shown.len();
    h.message("Mira answered").await;
    h.until("the answer shown", |h| h.screen.shown.len() > shown)
        .await;
    let text = last_shown(h, p);
    assert!(
        text.contains(answer),
        "the answer Helix shows lacks {answer:?}:\n{text}"
    );
}

/// `space a` as Helix sends it (the cursor's selection and the diagnostics under it).
async fn space_a(h: &mut Helix, uri: &str, r: Value, diagnostics: Value) -> Vec<Value> {
    let res = h
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": r,
                   "context": {"diagnostics": diagnostics, "triggerKind": 1}}),
        )
        .await
        .expect("codeAction answers");
    res.as_array().cloned().unwrap_or_default()
}

fn titled<'a>(actions: &'a [Value], title: &str) -> &'a Value {
    actions
        .iter()
        .find(|a| a["title"].as_str().is_some_and(|t| t.starts_with(title)))
        .unwrap_or_else(|| panic!("no action {title:?} in {actions:#?}"))
}

/// Enter on an action in Helix 25.07.1's menu.
async fn choose(h: &mut Helix, action: &Value) {
    let resolved = if action["edit"].is_null() || action["command"].is_null() {
        h.request("codeAction/resolve", action.clone()).await.ok()
    } else {
        None
    };
    if let Some(edit) = resolved
        .as_ref()
        .map(|r| &r["edit"])
        .filter(|e| e.is_object())
    {
        h.apply(edit).await;
    }
    // The action as first sent: a command added by resolve never runs.
    let title = action["title"].as_str().unwrap_or_default();
    let Some(cmd) = action.get("command").filter(|c| c.is_object()) else {
        let added = resolved.map(|r| r["command"]["command"].clone());
        h.screen.chosen.push(format!(
            "{title} -> nothing runs (no command as first sent; resolve added {added:?})"
        ));
        return;
    };
    let name = cmd["command"].as_str().unwrap_or_default();
    h.screen.chosen.push(format!("{title} -> {name}"));
    let _ = h
        .request(
            "workspace/executeCommand",
            json!({"command": cmd["command"], "arguments": cmd["arguments"]}),
        )
        .await;
}

/// `:lsp-workspace-command <command> "<text>"`: Helix 25.07 parses the rest as JSON values, so
/// quoted text arrives as one string argument (as in the capture).
async fn typed(h: &mut Helix, command: &str, text: &str) -> Value {
    h.request(
        "workspace/executeCommand",
        json!({"command": command, "arguments": [text]}),
    )
    .await
    .unwrap_or_else(|e| panic!("{command} failed: {e}"))
}

/// What the replayed requests answer, checked as a Helix user would see it.
async fn check(h: &mut Helix, p: &Places, request: &Value, result: Value) {
    match request["method"].as_str().unwrap() {
        "initialize" => {
            let caps = &result["capabilities"];
            assert_eq!(caps["positionEncoding"], "utf-8");
            assert_eq!(caps["codeActionProvider"]["resolveProvider"], true);
        }
        "textDocument/hover" => {
            let v = result["contents"]["value"].as_str().unwrap_or_default();
            assert!(v.contains("pub fn area(w: u32, h: u32) -> u32"), "{v}");
        }
        "textDocument/definition" => {
            assert_eq!(result["uri"], p.geometry.as_str(), "{result}");
            assert_eq!(result["range"], range(1, 7, 1, 11));
        }
        "textDocument/documentSymbol" | "workspace/symbol" => {
            assert!(!result.as_array().unwrap().is_empty(), "{result}");
        }
        "workspace/executeCommand" => executed(h, p, &request["params"], &result).await,
        other => panic!("the capture has a request this replay does not check: {other}"),
    }
}

async fn executed(h: &mut Helix, p: &Places, params: &Value, result: &Value) {
    match params["command"].as_str().unwrap() {
        "mira.status" => {
            let line = h.message(concat!("Mira ", env!("CARGO_PKG_VERSION"))).await;
            assert!(line.contains("index 2 files"), "{line}");
        }
        "mira.remember" => {
            h.message("Mira: Remembered #1").await;
        }
        "mira.ask" => {
            let turn = result["turn"].as_str().expect("a turn id").to_string();
            answered(h, p, "The word is PERIWINKLE.").await;
            let token = format!("mira/{turn}");
            let kinds: Vec<&str> = (h.screen.progress.iter())
                .filter(|(t, _)| *t == token)
                .map(|(_, k)| k.as_str())
                .collect();
            assert_eq!(kinds.first(), Some(&"begin"), "{kinds:?}");
            assert_eq!(kinds.last(), Some(&"end"), "{kinds:?}");
            assert!(last_shown(h, p).contains("read notes.txt"));
        }
        other => panic!("the capture runs a command this replay does not check: {other}"),
    }
}

/// The capture's `space a` on `area`, then Enter on "Ask Mira about `area`".
async fn ask_about_area(h: &mut Helix, p: &Places, request: &Value, result: Value) {
    let actions = result.as_array().cloned().unwrap_or_default();
    let ask = titled(&actions, "Ask Mira about `area`");
    choose(h, ask).await;
    answered(h, p, "`area` multiplies its two sides.").await;
    assert_eq!(request["params"]["textDocument"]["uri"], p.main.as_str());
}

/// Explain, edit and remember on a selection of `area(2, 3)`.
async fn selection_actions(h: &mut Helix, p: &Places) {
    let sel = range(4, 19, 4, 29);
    let offered = space_a(h, &p.main, sel.clone(), json!([])).await;
    choose(h, titled(&offered, "Mira: explain selection")).await;
    answered(h, p, "It prints the area of a 2 by 3 rectangle.").await;

    // Helix cannot prompt from an action: Mira keeps the place and says what to type.
    choose(h, titled(&offered, "Mira: edit selection")).await;
    let hint = h.message("Mira: say what to change").await;
    assert!(hint.contains(r#"mira.edit "<instruction>""#), "{hint}");
    typed(h, "mira.edit", "make it 4 by 5").await;
    h.message("Mira proposes edit #1").await;
    answered(h, p, "**Proposed edit #1**").await;

    choose(h, titled(&offered, "Mira: remember selection")).await;
    h.message(r#"Mira: type `:lsp-workspace-command mira.remember "<text>"`"#)
        .await;
    typed(h, "mira.remember", "main prints one area").await;
    h.message("Mira: Remembered #2").await;
    let hover = h
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": p.main}, "position": {"line": 3, "character": 3}}),
        )
        .await
        .unwrap();
    let shown = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(shown.contains("main prints one area"), "{shown}");
}

/// Apply proposal #1 (the model edit reaches the buffer as one versioned edit), then fix a
/// diagnostic into proposal #2 and reject it.
async fn proposal_actions(h: &mut Helix, p: &Places) {
    let cursor = range(4, 19, 4, 20);
    let offered = space_a(h, &p.main, cursor.clone(), json!([])).await;
    let version = h.buffers[&p.main].version;
    choose(h, titled(&offered, "Apply Mira proposal #1")).await;
    h.message("Mira: applied proposal #1").await;
    let edit = h.screen.applied.last().cloned().unwrap();
    assert_eq!(
        (edit.uri.as_str(), edit.version, edit.edits),
        (p.main.as_str(), Some(version), 1)
    );
    assert!(
        h.text(&p.main).contains("area(4, 5)"),
        "{}",
        h.text(&p.main)
    );

    // Helix passes a server only its own diagnostics (none, for Mira): this context is what a
    // client passing others' would send, to run the fix action through Helix's rule anyway.
    let diagnostic = json!({"range": range(4, 19, 4, 23), "severity": 1,
        "source": "rustc", "message": "mismatched types"});
    let offered = space_a(h, &p.main, cursor, json!([diagnostic])).await;
    choose(h, titled(&offered, "Mira: fix: mismatched types")).await;
    h.message("Mira proposes edit #2").await;
    answered(h, p, "Proposed a saturating multiply.").await;

    let offered = space_a(h, &p.geometry, range(2, 4, 2, 5), json!([])).await;
    choose(h, titled(&offered, "Reject Mira proposal #2")).await;
    h.message("Mira: rejected proposal #2").await;
    assert!(h.text(&p.geometry).contains("w * h"));
    let after = space_a(h, &p.geometry, range(2, 4, 2, 5), json!([])).await;
    assert!(
        !after
            .iter()
            .any(|a| a["title"] == "Reject Mira proposal #2"),
        "{after:?}"
    );
}

/// The typed commands of editors/helix/config.toml's keys, as a key sends them (no
/// arguments): each must show the user something.
async fn keymaps(h: &mut Helix, p: &Places) {
    let config = include_str!("../../editors/helix/config.toml");
    let commands: Vec<&str> = config
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split(":lsp-workspace-command ").nth(1))
        .map(|c| c.trim_end_matches('"').trim())
        .collect();
    assert!(commands.len() >= 3, "{commands:?}");
    for command in commands {
        let shown = h.screen.shown.len();
        h.request(
            "workspace/executeCommand",
            json!({"command": command, "arguments": []}),
        )
        .await
        .unwrap_or_else(|e| panic!("{command}: {e}"));
        match command {
            "mira.status" => {
                h.message(concat!("Mira ", env!("CARGO_PKG_VERSION"))).await;
            }
            "mira.cancel" => {
                h.message("Mira: no turn is running").await;
            }
            "mira.openConversation" => {
                h.until("the transcript shown", |h| h.screen.shown.len() > shown)
                    .await;
                assert!(last_shown(h, p).contains("# Mira — conversation"));
            }
            other => panic!("a key runs {other}, which this replay does not check"),
        }
    }
}

/// Every action Mira offered ran its command in Helix, and nothing reached Helix in a form
/// it drops or refuses.
fn all_reached_the_user(h: &Helix) {
    let ran: Vec<&str> = (h.screen.chosen.iter())
        .map(|c| &c[c.find("-> ").unwrap() + 3..])
        .collect();
    let every_action = [
        "mira.askSymbol",
        "mira.explain",
        "mira.edit",
        "mira.remember",
        "mira.applyProposal",
        "mira.fix",
        "mira.rejectProposal",
    ];
    assert_eq!(ran, every_action, "{:#?}", h.screen.chosen);
    let unversioned: Vec<&helix::Applied> = (h.screen.applied.iter())
        .filter(|a| a.version.is_none())
        .collect();
    assert!(
        unversioned.is_empty(),
        "edits to open buffers carry a version: {unversioned:?}"
    );
    // Helix's `:q` refuses to quit while a buffer has unsaved edits: no answer may edit one.
    let answer_edits: Vec<&helix::Applied> = (h.screen.applied.iter())
        .filter(|a| a.uri.contains("/data/"))
        .collect();
    assert!(
        answer_edits.is_empty(),
        "an answer left a Helix buffer unsaved: {answer_edits:?}"
    );
    assert_eq!(h.screen.dropped, Vec::<String>::new(), "Helix drops these");
    assert_eq!(h.screen.refused, Vec::<String>::new(), "stale edits");
}

/// Sends one message of the capture as Helix did, and checks what came of it.
async fn replay(h: &mut Helix, p: &Places, m: &Value) {
    let method = m["method"].as_str().unwrap();
    match method {
        "initialized" => {
            h.send_client(m).await;
            // Helix's spinner: the first indexing round ends before the user moves.
            h.until("indexing done", |h| {
                h.screen.progress.iter().any(|(_, k)| k == "end")
            })
            .await;
        }
        // Choosing an action resolves it in `choose`, with what the server sent this time.
        "codeAction/resolve" => {}
        _ if m.get("id").is_none() => h.send_client(m).await,
        _ => {
            h.send_client(m).await;
            let result = h.response(m["id"].as_i64().unwrap()).await;
            let result = result.unwrap_or_else(|e| panic!("{method} failed: {e}"));
            if method == "textDocument/codeAction" {
                ask_about_area(h, p, m, result).await;
            } else {
                check(h, p, m, result).await;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn helix_25_07_1_session_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let messages = client_messages(root);
    project(root, &messages);
    let mock = MockLlm::start(Wire::Chat).await;
    script(&mock);
    let p = Places::new(root);
    let mut h = Helix::start(env(root, &mock), &root.join("proj"));
    let end = messages.iter().position(|m| m["method"] == "shutdown");
    let (session, quit) = messages.split_at(end.expect("the capture ends with :q!"));
    for m in session {
        replay(&mut h, &p, m).await;
    }
    // Past the capture: every other action Mira offers, and the keys of config.toml.
    selection_actions(&mut h, &p).await;
    proposal_actions(&mut h, &p).await;
    keymaps(&mut h, &p).await;
    all_reached_the_user(&h);
    assert_eq!(quit[1]["method"], "exit");
    assert_eq!(h.quit(&quit[0], &quit[1]).await, 0, "mira exits cleanly");
    assert_eq!(mock.remaining(), 0, "every scripted turn ran");
    assert_eq!(mock.violations(), Vec::<String>::new());
}
