//! The transcript when the user types into `conversation.md` while a turn streams: Mira's
//! edits are computed against the client's version of the document, and an edit the client
//! drops as stale (as Neovim does, silently) is sent again against the newer text. The test
//! client behaves like an editor: it applies versioned edits only to the version they name
//! and echoes every change with didChange.

mod common;
mod mock_llm;

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

struct Editor {
    uri: String,
    text: String,
    version: i64,
}

impl Editor {
    /// Apply one change and tell the server, as an editor's buffer would.
    async fn change(&mut self, server: &mut TestServer, range: &Value, new_text: &str) {
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
        server
            .notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": self.uri, "version": self.version},
                       "contentChanges": [{"range": range, "text": new_text}]}),
            )
            .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typing_into_the_transcript_while_a_turn_streams_never_misplaces_the_answer() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Wire::Chat).await;
    mock.push(
        Reply::turn(
            Wire::Chat,
            &Turn::text(&[
                "First paragraph.\n\n",
                "Second ",
                "paragraph.\n\n",
                "Third and last.",
            ]),
        )
        .gap(Duration::from_millis(400)),
    );
    let mut env = sandbox.env();
    env.extend(mock.env().into_iter().map(|(k, v)| (k.to_string(), v)));
    let mut server = TestServer::in_process_with_env(env, sandbox.project());
    server
        .initialize(json!({
            "processId": null,
            "rootUri": sandbox.project_uri(),
            "capabilities": {
                "general": {"positionEncodings": ["utf-16"]},
                "workspace": {"applyEdit": true, "workspaceEdit": {"documentChanges": true}}
            },
            "clientInfo": {"name": "mira-tests"}
        }))
        .await;
    std::fs::create_dir_all(sandbox.mira_home()).unwrap();
    let uri = format!(
        "file://{}",
        sandbox.mira_home().join("conversation.md").display()
    );
    let mut editor = Editor {
        uri: uri.clone(),
        text: "# my notes\n".into(),
        version: 0,
    };
    server.open(&uri, "markdown", &editor.text).await;
    server
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.ask", "arguments": ["tell me three things"]}),
        )
        .await
        .unwrap();

    let mut seen = 0;
    let mut appends = 0;
    let mut dropped = 0;
    let mut typed = 0;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the turn never finished: {}",
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
            let e = &dc["edits"][0];
            let is_append = e["range"]["start"] == e["range"]["end"];
            if is_append {
                appends += 1;
                if appends % 2 == 0 && typed < 3 {
                    // The user types at the top just before the editor gets Mira's edit.
                    typed += 1;
                    let top = json!({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}});
                    editor
                        .change(&mut server, &top, &format!("typed {typed}\n"))
                        .await;
                }
            }
            if dc["textDocument"]["version"].as_i64() != Some(editor.version) {
                dropped += 1; // stale: an editor refuses it
                continue;
            }
            let text = e["newText"].as_str().unwrap().to_string();
            editor.change(&mut server, &e["range"], &text).await;
        }
        seen = requests.len();
        if editor.text.contains("_completed") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let t = &editor.text;
    assert!(
        typed >= 1 && dropped >= 1,
        "the race was not exercised (typed {typed}, dropped {dropped})"
    );
    assert!(t.starts_with("typed "), "{t}");
    for n in 1..=typed {
        assert!(t.contains(&format!("typed {n}\n")), "{t}");
    }
    assert!(
        t.contains("First paragraph.\n\nSecond paragraph.\n\nThird and last."),
        "the answer is split or misplaced:\n{t}"
    );
    assert_eq!(t.matches("Third and last.").count(), 1, "{t}");
    let (_, mira_view) = server.document_state(&uri).await;
    assert_eq!(&mira_view, t);
    server.shutdown().await;
}
