//! The single task that talks to the client about turns: transcript edits (coalesced),
//! showDocument, progress, showMessage and the opt-in `mira/*` notifications, in order.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tower_lsp_server::ls_types::notification::Notification;
use tower_lsp_server::ls_types::request::ApplyWorkspaceEdit;
use tower_lsp_server::ls_types::*;

use super::super::state::ServerState;
use super::Out;
use crate::agent::conversation::{self, TurnView};
use crate::agent::{TurnEvent, TurnStatus};
use crate::documents::{PositionEncoding, char_to_position, path_to_uri};
use crate::surface::transcript::{self, Coalescer};

// Custom notifications, sent only when `initializationOptions.mira.notifications = true`.

#[derive(Debug, Serialize, Deserialize)]
struct TurnStarted {
    turn: String,
    question: String,
}
enum TurnStartedNote {}
impl Notification for TurnStartedNote {
    type Params = TurnStarted;
    const METHOD: &'static str = "mira/turnStarted";
}

#[derive(Debug, Serialize, Deserialize)]
struct DeltaParams {
    turn: String,
    text: String,
}
enum DeltaNote {}
impl Notification for DeltaNote {
    type Params = DeltaParams;
    const METHOD: &'static str = "mira/delta";
}

#[derive(Debug, Serialize, Deserialize)]
struct ToolCallParams {
    turn: String,
    name: String,
    summary: String,
}
enum ToolCallNote {}
impl Notification for ToolCallNote {
    type Params = ToolCallParams;
    const METHOD: &'static str = "mira/toolCall";
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct UsageParams {
    input_tokens: u64,
    cached_tokens: u64,
    output_tokens: u64,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TurnFinishedParams {
    turn: String,
    status: TurnStatus,
    usage: UsageParams,
    cost_usd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}
enum TurnFinishedNote {}
impl Notification for TurnFinishedNote {
    type Params = TurnFinishedParams;
    const METHOD: &'static str = "mira/turnFinished";
}

/// How often streamed text is pushed into the transcript at most (paragraph ends go sooner).
const FLUSH_INTERVAL: Duration = Duration::from_millis(300);
/// How long an edit to the open transcript waits for the client's didChange echoing it
/// (Neovim debounces didChange by 150 ms by default).
const ECHO_WAIT: Duration = Duration::from_millis(1500);
/// Attempts at one chunk when the user's typing keeps outdating the version it was made for.
const APPEND_ATTEMPTS: usize = 4;

/// The single task that talks to the client about turns.
pub(super) struct Writer {
    state: Arc<ServerState>,
    path: PathBuf,
    uri: Option<Uri>,
    /// What the transcript holds, as far as Mira knows: edits are computed against it.
    text: String,
    /// Whether the client has loaded the transcript (after showDocument or an applyEdit):
    /// from then on it changes only through edits, never by rewriting the file under it.
    client_has_it: bool,
    pending: Coalescer,
    progress: HashMap<
        String,
        tower_lsp_server::OngoingProgress<
            tower_lsp_server::Unbounded,
            tower_lsp_server::NotCancellable,
        >,
    >,
}

impl Writer {
    pub(super) fn new(state: Arc<ServerState>) -> Writer {
        let path = transcript::path(&state.config().config.store.home);
        let uri = path_to_uri(&path);
        Writer {
            state,
            path,
            uri,
            text: String::new(),
            client_has_it: false,
            pending: Coalescer::new(FLUSH_INTERVAL),
            progress: HashMap::new(),
        }
    }

    pub(super) async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Out>) {
        loop {
            let deadline = self.pending.deadline().map(tokio::time::Instant::from_std);
            tokio::select! {
                msg = rx.recv() => match msg {
                    Some(m) => self.handle(m).await,
                    None => break,
                },
                _ = async { tokio::time::sleep_until(deadline.expect("guarded")).await }, if deadline.is_some() => {
                    if let Some(chunk) = self.pending.take_due(std::time::Instant::now()) {
                        self.append(&chunk).await;
                    }
                }
            }
        }
    }

    fn notifications(&self) -> bool {
        self.state.config().config.notifications
    }

    async fn handle(&mut self, out: Out) {
        match out {
            Out::Open => {
                self.flush().await;
                if !self.client_has_it && !self.is_open() {
                    let text = self.render(true).await;
                    self.write_file(text).await;
                }
                self.show().await;
            }
            Out::Event { turn, event } => self.event(turn, event).await,
            Out::Note { text } => {
                self.flush().await;
                self.append(&text).await;
            }
        }
    }

    async fn event(&mut self, turn: String, event: TurnEvent) {
        match event {
            TurnEvent::Started { question, .. } => {
                self.flush().await;
                let mut text = self.render(false).await;
                text.push_str(&transcript::question_block(&question));
                text.push_str(transcript::answer_heading());
                self.replace_all(text).await;
                self.show().await;
                self.begin_progress(&turn, &question).await;
                if self.notifications() {
                    self.state
                        .client
                        .send_notification::<TurnStartedNote>(TurnStarted { turn, question })
                        .await;
                }
            }
            TurnEvent::Text(t) => {
                let t = t.replace("\r\n", "\n");
                self.pending.push(&t);
                if let Some(chunk) = self.pending.take_due(std::time::Instant::now()) {
                    self.append(&chunk).await;
                }
                if self.notifications() {
                    self.state
                        .client
                        // Each delta is redacted on its own, like the transcript's chunks; a
                        // secret split across two deltas is a known limit (ARCHITECTURE).
                        .send_notification::<DeltaNote>(DeltaParams {
                            turn,
                            text: crate::redact::redact(&t).into_owned(),
                        })
                        .await;
                }
            }
            TurnEvent::ToolCall { name, summary } => {
                self.flush().await;
                self.append(&transcript::live_tool_line(&summary)).await;
                if let Some(p) = self.progress.get(&turn) {
                    p.report(summary.clone()).await;
                }
                if self.notifications() {
                    self.state
                        .client
                        .send_notification::<ToolCallNote>(ToolCallParams {
                            turn,
                            name,
                            summary,
                        })
                        .await;
                }
            }
            TurnEvent::Finished(o) => {
                self.flush().await;
                self.append(&transcript::footer(&o)).await;
                if let Some(p) = self.progress.remove(&turn) {
                    p.finish_with_message(o.status.as_str().to_string()).await;
                }
                let typ = if o.status == TurnStatus::Completed {
                    MessageType::INFO
                } else {
                    MessageType::WARNING
                };
                self.state
                    .client
                    .show_message(typ, transcript::status_message(&o))
                    .await;
                if !self.can_edit() && !o.text.trim().is_empty() {
                    self.answer_without_edits(&turn, &o.text);
                }
                if self.notifications() {
                    let params = TurnFinishedParams {
                        turn,
                        status: o.status,
                        usage: UsageParams {
                            input_tokens: o.usage.input_tokens,
                            cached_tokens: o.usage.cached_input_tokens,
                            output_tokens: o.usage.output_tokens,
                        },
                        cost_usd: o.cost_usd,
                        error: o.error,
                    };
                    self.state
                        .client
                        .send_notification::<TurnFinishedNote>(params)
                        .await;
                }
            }
            TurnEvent::Reasoning(_) | TurnEvent::ToolResult { .. } => {}
        }
    }

    /// Whether the client takes `workspace/applyEdit`; without it the transcript is only a
    /// file on disk, and the answer is said in the status line and the log.
    fn can_edit(&self) -> bool {
        self.state.session().is_some_and(|s| s.features.apply_edit)
    }

    fn answer_without_edits(&self, turn: &str, text: &str) {
        self.state
            .show(MessageType::INFO, transcript::short_answer(text));
        self.state.log(
            MessageType::INFO,
            format!("Mira's answer ({turn}):\n{}", crate::redact::redact(text)),
        );
    }

    async fn flush(&mut self) {
        if let Some(chunk) = self.pending.take() {
            self.append(&chunk).await;
        }
    }

    fn is_open(&self) -> bool {
        self.uri
            .as_ref()
            .is_some_and(|u| self.state.documents().get(u).is_some())
    }

    /// The transcript of finished turns (plus running ones when `all`), from the database.
    async fn render(&self, all: bool) -> String {
        let Ok(store) = self.state.store().cloned() else {
            return String::new();
        };
        let turns = tokio::task::spawn_blocking(move || {
            store.read(|c| conversation::history(c, transcript::SHOWN_TURNS, None))
        })
        .await
        .ok()
        .and_then(|r| r.ok())
        .unwrap_or_default();
        let shown: Vec<TurnView> = turns
            .into_iter()
            .filter(|t| all || t.status != TurnStatus::Running)
            .collect();
        transcript::render(&shown)
    }

    async fn write_file(&mut self, text: String) {
        let path = self.path.clone();
        let body = text.clone();
        let written = tokio::task::spawn_blocking(move || {
            path.parent().map(std::fs::create_dir_all).transpose()?;
            std::fs::write(&path, body)
        })
        .await;
        if !matches!(written, Ok(Ok(()))) {
            tracing::warn!("cannot write the transcript {}", self.path.display());
        }
        self.text = text;
    }

    /// Make the transcript hold `text`: rewrite the file while the client has not loaded
    /// it, else one edit over the whole document.
    async fn replace_all(&mut self, text: String) {
        if !self.can_edit() {
            self.write_file(text).await;
            return;
        }
        let open = self.uri.as_ref().and_then(|u| {
            self.state
                .documents()
                .get(u)
                .map(|d| (d.version(), d.text()))
        });
        if open.is_none() && !self.client_has_it {
            self.write_file(text).await;
            return;
        }
        let (version, current) = match open {
            Some((v, t)) => (Some(v), t),
            None => (None, self.text.clone()),
        };
        let end = end_position(&current, self.state.encoding());
        let range = Range {
            start: Position::new(0, 0),
            end,
        };
        if self.edit(version, range, text.clone()).await {
            if let Some(v) = version {
                // Later appends are computed against the client's text: let it catch up.
                self.echoed(v, "", "").await;
            }
            self.text = text;
        } else {
            self.text = current;
        }
    }

    /// The transcript as the client has it, when the client has it open: edits are computed
    /// against this (never Mira's own copy), so typing into it while a turn streams does not
    /// misplace the answer.
    fn client_copy(&self) -> Option<(i32, String)> {
        let uri = self.uri.as_ref()?;
        self.state
            .documents()
            .get(uri)
            .map(|d| (d.version(), d.text()))
    }

    fn client_version(&self) -> Option<i32> {
        let uri = self.uri.as_ref()?;
        self.state.documents().get(uri).map(|d| d.version())
    }

    /// Whether an edit appending `chunk` after `before` (the end of the text it was made
    /// against) arrived: wait for the didChange after it and look for `before` + `chunk`.
    /// A client that never echoes counts as applied (nothing better is known); one whose
    /// newer text lacks them dropped a stale edit.
    async fn echoed(&self, version: i32, before: &str, chunk: &str) -> bool {
        let deadline = tokio::time::Instant::now() + ECHO_WAIT;
        loop {
            match self.client_version() {
                None => return true,
                Some(v) if v > version => {
                    let Some((_, text)) = self.client_copy() else {
                        return true;
                    };
                    let mut expected = String::with_capacity(before.len() + chunk.len());
                    expected.push_str(before);
                    expected.push_str(chunk);
                    return text.contains(&expected);
                }
                Some(_) => {}
            }
            if tokio::time::Instant::now() >= deadline {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    async fn append(&mut self, chunk: &str) {
        if chunk.is_empty() {
            return;
        }
        if !self.can_edit() {
            let text = format!("{}{chunk}", self.text);
            self.write_file(text).await;
            return;
        }
        if self.client_copy().is_some() {
            for _ in 0..APPEND_ATTEMPTS {
                let Some((version, text)) = self.client_copy() else {
                    break;
                };
                let end = end_position(&text, self.state.encoding());
                let sent = self
                    .edit(Some(version), Range { start: end, end }, chunk.to_string())
                    .await;
                // What precedes the chunk identifies it even when the same text streamed before.
                let mut from = text.len().saturating_sub(64);
                while !text.is_char_boundary(from) {
                    from -= 1;
                }
                if sent && self.echoed(version, &text[from..], chunk).await {
                    self.text = self.client_copy().map_or(text + chunk, |(_, t)| t);
                    return;
                }
            }
            tracing::warn!(
                "the transcript kept changing under Mira; the answer is in `mira history`"
            );
            return;
        }
        let end = end_position(&self.text, self.state.encoding());
        if self
            .edit(None, Range { start: end, end }, chunk.to_string())
            .await
        {
            self.text.push_str(chunk);
        }
    }

    async fn edit(&mut self, version: Option<i32>, range: Range, new_text: String) -> bool {
        let Some(uri) = self.uri.clone() else {
            return false;
        };
        let document_changes = self
            .state
            .session()
            .is_some_and(|s| s.features.document_changes);
        let te = TextEdit { range, new_text };
        let edit = if document_changes {
            WorkspaceEdit {
                document_changes: Some(DocumentChanges::Edits(vec![TextDocumentEdit {
                    text_document: OptionalVersionedTextDocumentIdentifier { uri, version },
                    edits: vec![OneOf::Left(te)],
                }])),
                ..Default::default()
            }
        } else {
            WorkspaceEdit {
                changes: Some(HashMap::from([(uri, vec![te])])),
                ..Default::default()
            }
        };
        self.client_has_it = true;
        let params = ApplyWorkspaceEditParams {
            label: Some("Mira conversation".into()),
            edit,
        };
        match self
            .state
            .client
            .send_request::<ApplyWorkspaceEdit>(params)
            .await
        {
            Ok(r) => r.applied,
            Err(e) => {
                tracing::warn!("the client refused a transcript edit: {}", e.message);
                false
            }
        }
    }

    /// `window/showDocument` when the client advertises it, or is Helix (which handles it
    /// without advertising it).
    async fn show(&mut self) {
        let Some(session) = self.state.session() else {
            return;
        };
        let Some(uri) = self.uri.clone() else { return };
        if !session.features.show_document {
            return;
        }
        let end = end_position(&self.text, self.state.encoding());
        let params = ShowDocumentParams {
            uri,
            external: Some(false),
            take_focus: Some(true),
            selection: Some(Range { start: end, end }),
        };
        if let Ok(true) = self.state.client.show_document(params).await {
            self.client_has_it = true;
        }
    }

    async fn begin_progress(&mut self, turn: &str, question: &str) {
        let supported = self
            .state
            .session()
            .is_some_and(|s| s.features.work_done_progress);
        if !supported {
            return;
        }
        let token = ProgressToken::String(format!("mira/{turn}"));
        if self
            .state
            .client
            .create_work_done_progress(token.clone())
            .await
            .is_err()
        {
            return;
        }
        let title: String = question.chars().take(60).collect();
        let p = self
            .state
            .client
            .progress(token, "Mira")
            .with_message(title)
            .begin()
            .await;
        self.progress.insert(turn.to_string(), p);
    }
}

/// The position just past the end of `text` in the session's encoding.
fn end_position(text: &str, enc: PositionEncoding) -> Position {
    let rope = ropey::Rope::from_str(text);
    char_to_position(&rope, rope.len_chars(), enc)
}
