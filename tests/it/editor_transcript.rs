//! The transcript is a view Mira owns (ARCHITECTURE.md, Invariants): streamed into with unversioned edits whose
//! acknowledgement is the client's `applied`. The test editor here behaves like Neovim: it
//! answers `applied: true` at once, applies the edit, and reports its buffer with didChange
//! later — debounced by 150 ms, or several edits coalesced into one notification. Every
//! answer must land once and in one piece, over several turns; text the user types into the
//! transcript between chunks is kept and the answer goes after it.

use crate::support as common;
use crate::support::mock_llm;

use std::time::Duration;

use common::{Sandbox, TestServer};
use mock_llm::{MockLlm, Reply, Turn, Wire};
use serde_json::{Value, json};

/// Byte offset of an LSP position (UTF-16 columns) in `text`.
fn offset(text: &str, line: u64, character: u64) -> usize {
    let mut at = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i as u64 == line {
            let mut units = 0u64;
            for (b, c) in l.char_indices() {
                if units >= character || c == '\n' {
                    return at + b;
                }
                units += c.len_utf16() as u64;
            }
            return at + l.len();
        }
        at += l.len();
    }
    text.len()
}

/// How the test editor reports its buffer.
#[derive(Clone, Copy, Debug)]
enum Reporting {
    /// One didChange per quiet period of this length (Neovim's default is 150 ms).
    Debounced(Duration),
    /// One didChange for every this many edits.
    Coalesced(usize),
}

struct Editor {
    uri: String,
    text: String,
    version: i64,
    reporting: Reporting,
    /// Changes not yet reported, and when the last one was made.
    unreported: Vec<Value>,
    last_change: tokio::time::Instant,
}

impl Editor {
    fn new(uri: &str, text: &str, reporting: Reporting) -> Editor {
        Editor {
            uri: uri.into(),
            text: text.into(),
            version: 0,
            reporting,
            unreported: Vec::new(),
            last_change: tokio::time::Instant::now(),
        }
    }

    /// Apply one change to the buffer (reported later).
    fn change(&mut self, range: &Value, new_text: &str) {
        let a = offset(
            &self.text,
            range["start"]["line"].as_u64().unwrap(),
            range["start"]["character"].as_u64().unwrap(),
        );
        let b = offset(
            &self.text,
            range["end"]["line"].as_u64().unwrap(),
            range["end"]["character"].as_u64().unwrap(),
        );
        self.text.replace_range(a..b, new_text);
        self.version += 1;
        self.unreported
            .push(json!({"range": range, "text": new_text}));
        self.last_change = tokio::time::Instant::now();
    }

    async fn report(&mut self, server: &mut TestServer, force: bool) {
        let due = match self.reporting {
            Reporting::Debounced(d) => self.last_change.elapsed() >= d,
            Reporting::Coalesced(n) => self.unreported.len() >= n,
        };
        if self.unreported.is_empty() || !(due || force) {
            return;
        }
        let changes = std::mem::take(&mut self.unreported);
        server
            .notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": self.uri, "version": self.version},
                       "contentChanges": changes}),
            )
            .await;
    }
}

/// A client like Neovim 0.7 (`shows: false`: no showDocument) or like VS Code and Neovim
/// 0.8+ (`shows: true`).
async fn start_client(sandbox: &Sandbox, mock: &MockLlm, shows: bool) -> TestServer {
    let mut env = sandbox.env();
    env.extend(mock.env().into_iter().map(|(k, v)| (k.to_string(), v)));
    let mut server = TestServer::in_process_with_env(env, sandbox.project());
    server
        .initialize(json!({
            "processId": null,
            "rootUri": sandbox.project_uri(),
            "capabilities": {
                "general": {"positionEncodings": ["utf-16"]},
                "window": {"showDocument": {"support": shows}},
                "workspace": {"workspaceEdit": {"documentChanges": true}, "applyEdit": true}
            },
            "clientInfo": {"name": "mira-tests"}
        }))
        .await;
    server
}

async fn start(sandbox: &Sandbox, mock: &MockLlm) -> TestServer {
    start_client(sandbox, mock, false).await
}

fn answer(n: usize) -> Turn {
    Turn::text(&[
        &format!("Answer {n} begins."),
        "\n\nA middle paragraph.",
        &format!("\n\nAnswer {n} ends."),
    ])
}

/// Runs `turns` questions with `editor` applying and reporting Mira's edits; `type_at` is
/// the append after which the user types a line at the top of the transcript, if any.
async fn run_turns(reporting: Reporting, turns: usize, type_at: Option<usize>) -> String {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Wire::Chat).await;
    for n in 1..=turns {
        mock.push(Reply::turn(Wire::Chat, &answer(n)).gap(Duration::from_millis(250)));
    }
    let mut server = start(&sandbox, &mock).await;
    std::fs::create_dir_all(sandbox.mira_home()).unwrap();
    let uri = format!(
        "file://{}",
        sandbox.mira_home().join("conversation.md").display()
    );
    let mut editor = Editor::new(&uri, "# my notes\n", reporting);
    server.open(&uri, "markdown", &editor.text).await;
    let (mut seen, mut appends) = (0, 0);
    for n in 1..=turns {
        server
            .request(
                "workspace/executeCommand",
                json!({"command": "mira.ask", "arguments": [format!("question {n}")]}),
            )
            .await
            .unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while editor.text.matches("_completed").count() < n {
            assert!(
                tokio::time::Instant::now() < deadline,
                "turn {n} never finished: {}",
                editor.text
            );
            // A request flushes our answers to the server's applyEdits.
            server.document_state(&uri).await;
            let requests = server.server_requests();
            for r in &requests[seen..] {
                if r["method"] != "workspace/applyEdit" {
                    continue;
                }
                let dc = &r["params"]["edit"]["documentChanges"][0];
                assert_eq!(dc["textDocument"]["uri"], uri.as_str());
                assert_eq!(dc["textDocument"]["version"], Value::Null, "unversioned");
                assert!(r["params"].get("label").is_none(), "no label to echo");
                let e = &dc["edits"][0];
                editor.change(&e["range"], e["newText"].as_str().unwrap());
                if e["range"]["start"] == e["range"]["end"] {
                    appends += 1;
                    if Some(appends) == type_at {
                        let top = json!({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}});
                        editor.change(&top, "typed by the user\n");
                        editor.report(&mut server, true).await;
                    }
                }
            }
            seen = requests.len();
            editor.report(&mut server, false).await;
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    editor.report(&mut server, true).await;
    let (_, mira_view) = server.document_state(&uri).await;
    assert_eq!(mira_view, editor.text, "Mira's document is the editor's");
    assert_eq!(mock.violations(), Vec::<String>::new());
    server.shutdown().await;
    editor.text
}

fn assert_each_answer_once(text: &str, turns: usize) {
    for n in 1..=turns {
        let whole = format!("Answer {n} begins.\n\nA middle paragraph.\n\nAnswer {n} ends.");
        assert_eq!(text.matches(&whole).count(), 1, "answer {n}:\n{text}");
        assert_eq!(
            text.matches(&format!("Answer {n} begins.")).count(),
            1,
            "{text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_land_once_with_a_didchange_debounced_like_neovims() {
    let text = run_turns(Reporting::Debounced(Duration::from_millis(150)), 3, None).await;
    assert_each_answer_once(&text, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_land_once_when_several_edits_share_one_didchange() {
    let text = run_turns(Reporting::Coalesced(3), 3, None).await;
    assert_each_answer_once(&text, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_typed_into_the_transcript_mid_answer_stays_and_the_answer_follows_it() {
    let text = run_turns(Reporting::Debounced(Duration::ZERO), 1, Some(2)).await;
    assert!(text.starts_with("typed by the user\n"), "{text}");
    assert_each_answer_once(&text, 1);
}

/// VS Code restores an unsaved transcript after a window reload, and a fresh server can start a
/// turn before the editor's didOpen for it arrives. Mira must not write the file under that
/// copy (the editor's next save then fails: "the content of the file is newer"): it replaces
/// the editor's copy, taken to be the file on disk, with one edit, and leaves the file to the
/// editor's save.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_server_edits_a_transcript_it_was_not_told_of_and_never_writes_under_it() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Wire::Chat).await;
    mock.push(Reply::turn(Wire::Chat, &answer(1)));
    std::fs::create_dir_all(sandbox.mira_home()).unwrap();
    let file = sandbox.mira_home().join("conversation.md");
    let earlier = "# Mira — conversation\n\n### You\n\n> an earlier session's question\n\n### Mira\n\nä ✓ 🦀\n";
    std::fs::write(&file, earlier).unwrap();
    let written = std::fs::metadata(&file).unwrap().modified().unwrap();
    let mut server = start(&sandbox, &mock).await;
    let uri = format!("file://{}", file.display());
    // The editor holds the file as it is on disk, and has not said so.
    let mut editor = Editor::new(&uri, earlier, Reporting::Debounced(Duration::ZERO));
    server
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.ask", "arguments": ["question 1"]}),
        )
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let mut seen = 0;
    while !editor.text.contains("_completed") {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the turn never finished: {}",
            editor.text
        );
        // A request flushes our answers to the server's applyEdits (the document is not open:
        // no documentState).
        server
            .request("mira/history", json!({"limit": 1}))
            .await
            .unwrap();
        let requests = server.server_requests();
        for r in &requests[seen..] {
            if r["method"] == "workspace/applyEdit" {
                let e = &r["params"]["edit"]["documentChanges"][0]["edits"][0];
                editor.change(&e["range"], e["newText"].as_str().unwrap());
            }
        }
        seen = requests.len();
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        earlier,
        "the file under the editor's copy was rewritten"
    );
    assert_eq!(
        std::fs::metadata(&file).unwrap().modified().unwrap(),
        written
    );
    assert!(
        !editor.text.contains("ä ✓ 🦀\n# Mira"),
        "the first edit did not replace the whole copy:\n{}",
        editor.text
    );
    assert_eq!(
        editor.text.matches("# Mira — conversation").count(),
        1,
        "{}",
        editor.text
    );
    assert_each_answer_once(&editor.text, 1);
    assert!(editor.text.contains("> question 1"), "{}", editor.text);
    server.shutdown().await;
}

async fn ask(server: &mut TestServer, n: usize) {
    server
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.ask", "arguments": [format!("question {n}")]}),
        )
        .await
        .unwrap();
}

/// The transcript on disk once `done` holds for it.
async fn disk_when(
    server: &mut TestServer,
    file: &std::path::Path,
    what: &str,
    done: impl Fn(&str) -> bool,
) -> String {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        if done(&text) {
            return text;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what} never reached the file:\n{text}"
        );
        // A request flushes our answers to the server's requests.
        server
            .request("mira/history", json!({"limit": 1}))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn transcript_edits(server: &TestServer, uri: &str) -> Vec<Value> {
    server
        .server_requests()
        .into_iter()
        .filter(|r| {
            r["method"] == "workspace/applyEdit"
                && r["params"]["edit"]["documentChanges"][0]["textDocument"]["uri"] == uri
        })
        .collect()
}

/// VS Code's chat view shows the turns, and its extension declines the transcript's
/// showDocument. Mira then writes the file and sends no edit: streamed into a copy no tab
/// showed, edits left VS Code holding it unsaved, and a window reload during its save left
/// that copy older than the file ("the content of the file is newer": unsaved for good).
/// Opened mid-turn, the transcript gets the rest of the answer as edits (and the part it
/// missed); closed again, it is Mira's file to write again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transcript_no_editor_shows_is_written_and_one_opened_mid_turn_is_streamed_into() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Wire::Chat).await;
    for n in 1..=3 {
        mock.push(Reply::turn(Wire::Chat, &answer(n)).gap(Duration::from_millis(300)));
    }
    let mut server = start_client(&sandbox, &mock, true).await;
    server.decline_show_document();
    let file = sandbox.mira_home().join("conversation.md");
    let uri = format!("file://{}", file.display());

    // Turn 1: no editor holds the transcript.
    ask(&mut server, 1).await;
    let disk = disk_when(&mut server, &file, "turn 1", |t| t.contains("_completed")).await;
    assert_each_answer_once(&disk, 1);
    assert!(
        server
            .server_requests()
            .iter()
            .any(|r| r["method"] == "window/showDocument"),
        "the transcript was offered"
    );
    assert_eq!(transcript_edits(&server, &uri), Vec::<Value>::new());

    // Turn 2: the editor opens the file once the question is in it, mid-turn.
    ask(&mut server, 2).await;
    let loaded = disk_when(&mut server, &file, "question 2", |t| {
        t.contains("> question 2")
    })
    .await;
    assert!(
        !loaded.contains("Answer 2 ends."),
        "the turn ended too soon to test:\n{loaded}"
    );
    let mut editor = Editor::new(&uri, &loaded, Reporting::Debounced(Duration::ZERO));
    server.open(&uri, "markdown", &editor.text).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let mut seen = transcript_edits(&server, &uri).len();
    while editor.text.matches("_completed").count() < 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "turn 2 never reached the editor:\n{}",
            editor.text
        );
        server.document_state(&uri).await;
        let edits = transcript_edits(&server, &uri);
        for r in &edits[seen..] {
            let e = &r["params"]["edit"]["documentChanges"][0]["edits"][0];
            editor.change(&e["range"], e["newText"].as_str().unwrap());
        }
        seen = edits.len();
        editor.report(&mut server, false).await;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_each_answer_once(&editor.text, 2);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        loaded,
        "the file was written under the editor's copy"
    );
    editor.report(&mut server, true).await;
    let (_, mira_view) = server.document_state(&uri).await;
    assert_eq!(mira_view, editor.text, "Mira's document is the editor's");

    // Turn 3: closed (unsaved, as a test editor may): the file is Mira's again.
    server
        .notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": uri}}),
        )
        .await;
    let before = transcript_edits(&server, &uri).len();
    ask(&mut server, 3).await;
    let disk = disk_when(&mut server, &file, "turn 3", |t| {
        t.matches("_completed").count() == 3
    })
    .await;
    assert_each_answer_once(&disk, 3);
    assert_eq!(
        transcript_edits(&server, &uri).len(),
        before,
        "an edit after the close"
    );
    assert_eq!(mock.violations(), Vec::<String>::new());
    server.shutdown().await;
}

/// Neovim shows the transcript when asked (`mira.openConversation`), and the user may close
/// it again before any turn. The next turn must not edit the closed document: Neovim applies
/// such an edit by loading the file into a hidden buffer and modifying it, unsaved. The turn
/// writes the file with the question in it and shows it again; the edits follow the show.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transcript_shown_and_closed_before_any_turn_gets_no_edit_until_shown_again() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Wire::Chat).await;
    mock.push(Reply::turn(Wire::Chat, &answer(1)));
    let mut server = start_client(&sandbox, &mock, true).await;
    let file = sandbox.mira_home().join("conversation.md");
    let uri = format!("file://{}", file.display());
    server
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.openConversation"}),
        )
        .await
        .unwrap();
    shown_times(&mut server, 1, "mira.openConversation").await;
    // The editor loads the file it was shown, and the user closes it at once.
    let shown = std::fs::read_to_string(&file).expect("the transcript was written to be shown");
    server.open(&uri, "markdown", &shown).await;
    server
        .request("mira/history", json!({"limit": 1}))
        .await
        .unwrap();
    server
        .notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": uri}}),
        )
        .await;
    let closed_at = server.server_requests().len();

    ask(&mut server, 1).await;
    shown_times(&mut server, 2, "turn 1").await;
    let since: Vec<String> = server.server_requests()[closed_at..]
        .iter()
        .map(|r| r["method"].as_str().unwrap_or_default().to_string())
        .collect();
    let show = since.iter().position(|m| m == "window/showDocument");
    let edit = since.iter().position(|m| m == "workspace/applyEdit");
    assert!(
        edit.is_none_or(|e| Some(e) > show),
        "an edit to the closed transcript before it was shown again: {since:?}"
    );
    let disk = std::fs::read_to_string(&file).unwrap();
    assert!(
        disk.contains("> question 1"),
        "the shown file lacks the question:\n{disk}"
    );
    server.shutdown().await;
}

/// Waits until the server has asked `n` times in all to show a document (after `what`).
async fn shown_times(server: &mut TestServer, n: usize, what: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let shows = server
            .server_requests()
            .iter()
            .filter(|r| r["method"] == "window/showDocument")
            .count();
        if shows >= n {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what} never showed the transcript ({shows} shows of {n})"
        );
        // A request flushes the server's requests to us.
        server
            .request("mira/history", json!({"limit": 1}))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
