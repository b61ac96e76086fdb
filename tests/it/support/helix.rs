//! A model of Helix 25.07.1 as an LSP client, for replaying its recorded traffic
//! (tests/fixtures/helix/): it keeps its own buffers and reacts to the server the way Helix
//! does (the Helix section of the editor-testing recipe), and it records what a Helix user
//! would see: the status line, the spinner, the buffers. What Helix drops (custom
//! notifications, requests it does not handle) is recorded apart, so a test can fail on it.

use std::collections::HashMap;
use std::time::Duration;

use mira::lsp::transport::{Frame, FrameReader};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::mpsc;

pub const TIMEOUT: Duration = Duration::from_secs(20);

/// The server requests Helix 25.07.1 answers. `window/showDocument` is handled though Helix
/// does not advertise it; anything else gets MethodNotFound and the user sees nothing.
const HANDLED_REQUESTS: &[&str] = &[
    "window/workDoneProgress/create",
    "workspace/applyEdit",
    "workspace/workspaceFolders",
    "workspace/configuration",
    "client/registerCapability",
    "client/unregisterCapability",
    "window/showDocument",
];

/// The notifications Helix acts on; it drops every other one (`mira/*` included).
const HANDLED_NOTIFICATIONS: &[&str] = &[
    "textDocument/publishDiagnostics",
    "window/showMessage",
    "window/logMessage",
    "$/progress",
];

pub struct Buffer {
    pub text: String,
    pub version: i64,
}

/// One `workspace/applyEdit` Helix took: one undo step in one buffer.
#[derive(Clone, Debug)]
pub struct Applied {
    pub uri: String,
    /// The version the edit was made for (`None`: unversioned).
    pub version: Option<i64>,
    pub edits: usize,
}

/// What a Helix user saw, and what never reached them.
#[derive(Default)]
pub struct Screen {
    /// Status-line messages (`window/showMessage`).
    pub messages: Vec<String>,
    /// `$/progress` as (token, kind).
    pub progress: Vec<(String, String)>,
    /// Documents focused by `window/showDocument`.
    pub shown: Vec<String>,
    pub applied: Vec<Applied>,
    /// Edits refused as stale (versioned for a buffer that has moved on).
    pub refused: Vec<String>,
    /// Messages Helix drops: an answer that came only this way is lost.
    pub dropped: Vec<String>,
    /// Code actions chosen, and what choosing each ran.
    pub chosen: Vec<String>,
}

pub struct Helix {
    child: Child,
    stdin: ChildStdin,
    /// What the server wrote, read on a task of its own (a frame reader's buffer is too big
    /// to poll deep inside a test's futures on a 2 MiB stack).
    incoming: mpsc::UnboundedReceiver<Value>,
    pub buffers: HashMap<String, Buffer>,
    pub screen: Screen,
    responses: HashMap<i64, Value>,
    next_id: i64,
    /// Status-line messages already waited for.
    read_messages: usize,
}

/// A client message as Helix frames it.
fn frame(msg: &Value) -> Vec<u8> {
    mira::lsp::transport::encode(msg.to_string().as_bytes())
}

/// The byte offset of an LSP position in utf-8 (the encoding Helix negotiates first).
pub fn offset(text: &str, line: u64, character: u64) -> usize {
    let mut start = 0;
    for _ in 0..line {
        match text[start..].find('\n') {
            Some(i) => start += i + 1,
            None => return text.len(),
        }
    }
    let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    (start + character as usize).min(end)
}

fn language_of(uri: &str) -> &'static str {
    if uri.ends_with(".md") {
        "markdown"
    } else {
        "rust"
    }
}

fn uri_path(uri: &str) -> &str {
    uri.strip_prefix("file://").unwrap_or(uri)
}

impl Helix {
    pub fn start(env: Vec<(String, String)>, cwd: &std::path::Path) -> Helix {
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mira"))
            .arg("lsp")
            .env_clear()
            .envs(env)
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .current_dir(cwd)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn mira lsp");
        let stdin = child.stdin.take().unwrap();
        let (tx, incoming) = mpsc::unbounded_channel();
        tokio::spawn(read_frames(child.stdout.take().unwrap(), tx));
        Helix {
            child,
            stdin,
            incoming,
            buffers: HashMap::new(),
            screen: Screen::default(),
            responses: HashMap::new(),
            // Above the ids of the capture, which is replayed with its own.
            next_id: 1000,
            read_messages: 0,
        }
    }

    pub async fn send(&mut self, msg: &Value) {
        self.stdin.write_all(&frame(msg)).await.expect("write");
        self.stdin.flush().await.unwrap();
    }

    /// Sends a client message and keeps the buffers in step, as Helix's own edits do.
    pub async fn send_client(&mut self, msg: &Value) {
        let params = &msg["params"];
        match msg["method"].as_str() {
            Some("textDocument/didOpen") => {
                let d = &params["textDocument"];
                self.buffers.insert(
                    d["uri"].as_str().unwrap().to_string(),
                    Buffer {
                        text: d["text"].as_str().unwrap().to_string(),
                        version: d["version"].as_i64().unwrap(),
                    },
                );
            }
            Some("textDocument/didChange") => {
                let uri = params["textDocument"]["uri"].as_str().unwrap();
                let b = self
                    .buffers
                    .get_mut(uri)
                    .expect("a change to an open buffer");
                for c in params["contentChanges"].as_array().unwrap() {
                    splice(&mut b.text, &c["range"], c["text"].as_str().unwrap());
                }
                b.version = params["textDocument"]["version"].as_i64().unwrap();
            }
            _ => {}
        }
        self.send(msg).await;
    }

    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send_client(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    /// A request of Helix's own (not from the capture); its answer.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.response(id).await
    }

    /// The answer to request `id`, reacting to everything the server sends meanwhile.
    pub async fn response(&mut self, id: i64) -> Result<Value, Value> {
        self.until(&format!("the answer to request {id}"), |h| {
            h.responses.contains_key(&id)
        })
        .await;
        let msg = self.responses.remove(&id).unwrap();
        match msg.get("error") {
            Some(e) => Err(e.clone()),
            None => Ok(msg["result"].clone()),
        }
    }

    /// Reads and reacts until `done` holds; panics after [`TIMEOUT`].
    pub async fn until(&mut self, what: &str, mut done: impl FnMut(&Helix) -> bool) {
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        while !done(self) {
            let next = tokio::time::timeout_at(deadline, self.incoming.recv()).await;
            let Ok(Some(msg)) = next else {
                panic!(
                    "Helix never saw {what}; status line: {:?}; dropped: {:?}; chosen: {:?}",
                    self.screen.messages, self.screen.dropped, self.screen.chosen
                );
            };
            self.react(msg).await;
        }
    }

    /// Waits for a status-line message starting with `prefix`, after the last one waited
    /// for (it may have come while the test waited for something else).
    pub async fn message(&mut self, prefix: &str) -> String {
        let find = |h: &Helix| {
            (h.read_messages..h.screen.messages.len())
                .find(|&i| h.screen.messages[i].starts_with(prefix))
        };
        self.until(&format!("a status line `{prefix}…`"), |h| {
            find(h).is_some()
        })
        .await;
        let i = find(self).unwrap();
        self.read_messages = i + 1;
        self.screen.messages[i].clone()
    }

    /// A workspace edit the user takes (a resolved code action's `edit`).
    pub async fn apply(&mut self, edit: &Value) -> Value {
        self.apply_workspace_edit(edit).await
    }

    async fn react(&mut self, msg: Value) {
        let method = msg["method"].as_str().map(str::to_string);
        match (method, msg.get("id").cloned()) {
            (Some(m), Some(id)) => {
                let reply = self.answer(&m, &msg["params"]).await;
                let mut out = json!({"jsonrpc": "2.0", "id": id});
                match reply {
                    Ok(result) => out["result"] = result,
                    Err(error) => out["error"] = error,
                }
                self.send(&out).await;
            }
            (Some(m), None) => self.note(&m, &msg["params"]),
            (None, Some(Value::Number(id))) => {
                self.responses.insert(id.as_i64().unwrap(), msg);
            }
            (None, _) => panic!("a response without an id: {msg}"),
        }
    }

    fn note(&mut self, method: &str, params: &Value) {
        match method {
            "window/showMessage" => self
                .screen
                .messages
                .push(params["message"].as_str().unwrap_or_default().to_string()),
            "$/progress" => self.screen.progress.push((
                params["token"].to_string().trim_matches('"').to_string(),
                params["value"]["kind"].as_str().unwrap_or_default().into(),
            )),
            m if HANDLED_NOTIFICATIONS.contains(&m) => {}
            m => self.screen.dropped.push(format!("notification {m}")),
        }
    }

    async fn answer(&mut self, method: &str, params: &Value) -> Result<Value, Value> {
        if !HANDLED_REQUESTS.contains(&method) {
            self.screen.dropped.push(format!("request {method}"));
            return Err(json!({"code": -32601, "message": format!("unhandled {method}")}));
        }
        Ok(match method {
            "workspace/applyEdit" => self.apply_workspace_edit(&params["edit"]).await,
            "window/showDocument" => {
                let uri = params["uri"].as_str().unwrap().to_string();
                self.open_from_disk(&uri).await;
                self.screen.shown.push(uri);
                json!({"success": true})
            }
            "workspace/configuration" => {
                let n = params["items"].as_array().map_or(0, Vec::len);
                Value::Array(vec![Value::Null; n])
            }
            "workspace/workspaceFolders" => Value::Null,
            _ => Value::Null,
        })
    }

    /// Helix loads a document it is asked to show or edit, and tells its servers.
    async fn open_from_disk(&mut self, uri: &str) {
        if self.buffers.contains_key(uri) {
            return;
        }
        let text = std::fs::read_to_string(uri_path(uri)).unwrap_or_default();
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language_of(uri), "version": 0, "text": text}}),
        )
        .await;
    }

    /// Helix's apply_workspace_edit: each document edit is one transaction, refused when it
    /// was made for another version of the buffer; each applied one reaches the servers as
    /// one didChange.
    async fn apply_workspace_edit(&mut self, edit: &Value) -> Value {
        let mut parts: Vec<(String, Option<i64>, Vec<Value>)> = Vec::new();
        if let Some(changes) = edit["changes"].as_object() {
            for (uri, edits) in changes {
                parts.push((uri.clone(), None, edits.as_array().unwrap().clone()));
            }
        }
        for dc in edit["documentChanges"].as_array().into_iter().flatten() {
            if dc.get("kind").is_some() {
                // Resource operations: a created file is opened empty by the edit after it.
                continue;
            }
            let td = &dc["textDocument"];
            parts.push((
                td["uri"].as_str().unwrap().to_string(),
                td["version"].as_i64(),
                dc["edits"].as_array().unwrap().clone(),
            ));
        }
        for (i, (uri, version, _)) in parts.iter().enumerate() {
            self.open_from_disk(uri).await;
            let current = self.buffers[uri].version;
            if version.is_some_and(|v| v != current) {
                self.screen.refused.push(uri.clone());
                return json!({"applied": false, "failedChange": i,
                    "failureReason": format!("document changed: version {current}, edit for {version:?}")});
            }
        }
        for (uri, version, edits) in parts {
            self.apply_edits(&uri, &edits).await;
            self.screen.applied.push(Applied {
                uri,
                version,
                edits: edits.len(),
            });
        }
        json!({"applied": true})
    }

    /// The edits of one transaction, sent on as one didChange (last first, so each change
    /// still lands where the server computed it).
    async fn apply_edits(&mut self, uri: &str, edits: &[Value]) {
        let mut sorted: Vec<&Value> = edits.iter().collect();
        sorted.sort_by_key(|e| {
            let s = &e["range"]["start"];
            (s["line"].as_u64(), s["character"].as_u64())
        });
        let changes: Vec<Value> = sorted
            .iter()
            .rev()
            .map(|e| json!({"range": e["range"], "text": e["newText"]}))
            .collect();
        let version = self.buffers[uri].version + 1;
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": changes}),
        )
        .await;
    }

    pub fn text(&self, uri: &str) -> &str {
        self.buffers.get(uri).map_or("", |b| b.text.as_str())
    }

    /// shutdown + exit, as `:q!` sends them; the server's exit code.
    pub async fn quit(mut self, shutdown: &Value, exit: &Value) -> i32 {
        self.send(shutdown).await;
        let id = shutdown["id"].as_i64().unwrap();
        self.response(id).await.expect("shutdown answers");
        self.send(exit).await;
        let status = tokio::time::timeout(TIMEOUT, self.child.wait())
            .await
            .expect("mira exits after exit")
            .unwrap();
        status.code().unwrap_or(-1)
    }
}

async fn read_frames(stdout: ChildStdout, tx: mpsc::UnboundedSender<Value>) {
    let mut frames = FrameReader::new(stdout);
    while let Ok(Some(frame)) = frames.next().await {
        let Frame::Body(body) = frame else {
            panic!("the server wrote a malformed frame: {frame:?}");
        };
        let msg = serde_json::from_slice(&body).expect("JSON from the server");
        if tx.send(msg).is_err() {
            return;
        }
    }
}

/// Applies one LSP content change (utf-8 positions) to `text`.
fn splice(text: &mut String, range: &Value, new_text: &str) {
    let at = |p: &Value| {
        offset(
            text,
            p["line"].as_u64().unwrap(),
            p["character"].as_u64().unwrap(),
        )
    };
    let (start, end) = (at(&range["start"]), at(&range["end"]));
    text.replace_range(start..end, new_text);
}
