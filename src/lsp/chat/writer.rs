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
use super::super::to_proto;
use super::Out;
use crate::agent::conversation::{self, TurnView};
use crate::agent::{TurnEvent, TurnStatus};
use crate::documents::PositionEncoding;
use crate::lsp::transcript::{self, Coalescer};

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
/// Attempts at one chunk the client refused (`applied: false`).
const APPEND_ATTEMPTS: usize = 3;
/// How many of Mira's own recent transcript states are remembered (see [`Model`]).
const STATES_KEPT: usize = 64;

/// The transcript is a view Mira owns (ARCHITECTURE.md): regenerated from the database at every
/// turn, streamed into with unversioned edits whose acknowledgement is the client's
/// `applied`. Versioned edits cannot work here: Neovim drops an edit older than its buffer
/// silently and still answers `applied: true`, and its debounced didChange (150 ms) lags
/// every edit Mira just made. So Mira keeps its own copy of what the client shows, and a
/// client copy reported later is adopted only when it is none of Mira's own recent states
/// (the user typed into it); a lagging report is recognised and ignored.
#[derive(Default)]
struct Model {
    text: String,
    ours: std::collections::VecDeque<u64>,
    /// The last client version looked at.
    seen: Option<i32>,
}

fn digest(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

impl Model {
    fn set(&mut self, text: String) {
        self.ours.push_back(digest(&text));
        if self.ours.len() > STATES_KEPT {
            self.ours.pop_front();
        }
        self.text = text;
    }

    /// Whether the client's text is one of Mira's states (an editor may add the final
    /// newline a file needs).
    fn is_ours(&self, client: &str) -> bool {
        let known = |t: &str| self.ours.contains(&digest(t));
        known(client) || client.strip_suffix('\n').is_some_and(known)
    }

    /// Takes the client's copy when it is newer than the last one seen and the user changed it.
    fn reconcile(&mut self, client: Option<(i32, String)>) {
        let Some((version, text)) = client else {
            return;
        };
        if self.seen == Some(version) {
            return;
        }
        self.seen = Some(version);
        if !self.is_ours(&text) {
            self.set(text);
        }
    }
}

/// How answers reach the screen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Delivery {
    /// Streamed into `conversation.md` with edits as the model writes.
    Stream,
    /// A client without `workspace.applyEdit`: the transcript is only written to disk, and
    /// each answer also comes as a status line (cut) and in full in the client's log.
    DiskOnly,
    /// Helix: any edit leaves its buffer unsaved, and Helix 25.07.1 gives a server no way to
    /// mark it saved, so `:q` would refuse to quit after every answer. Each answer is written
    /// instead, when it ends, to a new file under `<data_dir>/answers/` and shown with
    /// showDocument: loaded from disk, that buffer is never unsaved. Progress shows meanwhile.
    Snapshots,
}

/// Snapshot files kept (older ones are removed).
const SNAPSHOTS_KEPT: usize = 20;

/// An edit of the transcript, relative to Mira's copy of it.
enum Change {
    /// The whole document becomes this.
    Whole(String),
    /// This goes at the end.
    Append(String),
}

/// What the client said to an edit.
#[derive(Debug, PartialEq, Eq)]
enum Applied {
    Yes,
    Refused,
    /// No transcript uri, or the request failed: retrying will not help.
    Failed,
}

/// The single task that talks to the client about turns.
pub(super) struct Writer {
    state: Arc<ServerState>,
    path: PathBuf,
    uri: Option<Uri>,
    /// What the transcript holds, as far as Mira knows: edits are computed against it.
    model: Model,
    /// Whether the client has loaded the transcript (after showDocument or an applyEdit):
    /// from then on it changes only through edits, never by rewriting the file under it.
    /// Cleared when the client closes it (see [`Writer::holds`]).
    client_has_it: bool,
    /// Whether the client reported the transcript open when last looked at.
    seen_open: bool,
    /// Mira's copy has text the file on disk lacks: streamed while no client held it.
    behind: bool,
    /// Turns started and not yet finished.
    live: std::collections::HashSet<String>,
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
        let uri = to_proto::uri(&path);
        Writer {
            state,
            path,
            uri,
            model: Model::default(),
            client_has_it: false,
            seen_open: false,
            behind: false,
            live: Default::default(),
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

    fn delivery(&self) -> Delivery {
        if !self.can_edit() {
            return Delivery::DiskOnly;
        }
        if self
            .state
            .session()
            .is_some_and(|s| s.features.answers_as_files)
        {
            Delivery::Snapshots
        } else {
            Delivery::Stream
        }
    }

    async fn handle(&mut self, out: Out) {
        match out {
            Out::Open if self.delivery() == Delivery::Snapshots => {
                self.flush().await;
                let text = self.current().await;
                // A new name each time: Helix only focuses a document it already has open.
                let name = format!("conversation-{}", crate::agent::conversation::now_ms());
                self.show_snapshot(text, &name).await;
            }
            Out::Open => {
                self.flush().await;
                if !self.client_has_it && !self.is_open() {
                    let text = self.current().await;
                    self.write_file(text).await;
                }
                self.show().await;
            }
            Out::Closed(uri) => {
                if self.uri.as_ref() == Some(&uri) {
                    self.client_has_it = false;
                    self.seen_open = false;
                }
            }
            Out::Event { turn, event } => self.event(turn, event).await,
            Out::Note { text } => {
                self.flush().await;
                self.append(&text).await;
                self.catch_up_on_disk().await;
            }
        }
    }

    async fn event(&mut self, turn: String, event: TurnEvent) {
        match event {
            TurnEvent::Started { question, .. } => {
                self.live.insert(turn.clone());
                self.flush().await;
                let mut text = self.render(false).await;
                text.push_str(&transcript::question_block(&question));
                text.push_str(transcript::answer_heading());
                if self.delivery() != Delivery::Stream {
                    self.model.set(text.clone());
                    if self.delivery() == Delivery::DiskOnly {
                        self.write_file(text).await;
                    }
                } else if self.holds() {
                    self.replace_all(text).await;
                    self.show().await;
                } else {
                    // Nobody holds it: the file is Mira's to write. The client then loads
                    // it, or declines to (VS Code's chat view shows the turn instead), and
                    // the answer streams into it only once it is loaded.
                    self.write_file(text.clone()).await;
                    if self.show().await {
                        self.replace_all(text).await;
                    }
                }
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
                self.live.remove(&turn);
                self.flush().await;
                self.append(&transcript::footer(&o)).await;
                match self.delivery() {
                    Delivery::Snapshots => {
                        let text = self.model.text.clone();
                        self.show_snapshot(text, &turn).await;
                    }
                    Delivery::DiskOnly => {
                        let text = self.model.text.clone();
                        self.write_file(text).await;
                        if !o.text.trim().is_empty() {
                            self.answer_without_edits(&turn, &o.text);
                        }
                    }
                    Delivery::Stream => self.catch_up_on_disk().await,
                }
                if let Some(p) = self.progress.remove(&turn) {
                    p.finish_with_message(o.status.as_str().to_string()).await;
                }
                // A client with Mira's notifications shows the turn itself (VS Code's chat
                // view, the Neovim plugin); it hears of a failure, never of an answer or a
                // cancel it already shows.
                let completed = o.status == TurnStatus::Completed;
                if o.status == TurnStatus::Failed || !self.notifications() {
                    let typ = if completed {
                        MessageType::INFO
                    } else {
                        MessageType::WARNING
                    };
                    self.state
                        .client
                        .show_message(
                            typ,
                            transcript::status_message(&o, self.delivery() == Delivery::Snapshots),
                        )
                        .await;
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

    /// Whether the transcript is the client's: open in it (didOpen), shown by it, or — for a
    /// client that cannot show documents — reached only through Mira's edits. Edits go only
    /// to a transcript the client holds. Streamed into a document no editor shows, they made
    /// VS Code keep a hidden, unsaved copy, and a window reload mid-save left that copy older
    /// than the file ("the content of the file is newer"): unsaved for good.
    fn holds(&mut self) -> bool {
        let open = self.is_open();
        if self.seen_open && !open {
            // Closed by the user (didClose): a later turn must not reopen it behind their back.
            self.client_has_it = false;
        }
        self.seen_open = open;
        let shows = self
            .state
            .session()
            .is_some_and(|s| s.features.show_document);
        open || self.client_has_it || !shows
    }

    /// Writes what was streamed while no client held the transcript (only [`Delivery::Stream`]
    /// streams so).
    async fn catch_up_on_disk(&mut self) {
        if self.behind && !self.holds() {
            let text = self.model.text.clone();
            self.write_file(text).await;
        }
    }

    fn is_open(&self) -> bool {
        self.uri
            .as_ref()
            .is_some_and(|u| self.state.documents().get(u).is_some())
    }

    /// The transcript to show now. While a turn runs, Mira's copy is ahead of the database
    /// (the turn's row is stored after `Started`), and a render then could drop the question
    /// from the file an editor is about to load: Neovim 0.7 opens it on `mira/turnStarted`.
    async fn current(&self) -> String {
        if self.live.is_empty() {
            self.render(true).await
        } else {
            self.model.text.clone()
        }
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
            write_whole(&path, &body)
        })
        .await;
        if !matches!(written, Ok(Ok(()))) {
            tracing::warn!("cannot write the transcript {}", self.path.display());
        } else if !self.client_has_it || text == self.model.text {
            // The file now has everything Mira's copy has.
            self.behind = false;
        }
        if !self.client_has_it {
            self.model.set(text);
        }
    }

    /// Make the transcript hold `text`: one edit over the whole document, through the client.
    ///
    /// Only a file that does not exist yet is written here. A client that has not reported
    /// the transcript may still hold it: VS Code restores an unsaved one after a window
    /// reload, and a fresh server can start a turn before the client's didOpen for it
    /// arrives. Writing the file under such a copy made the client's next save fail ("the
    /// content of the file is newer") and left the transcript unsaved for good. The client's
    /// copy is then taken to be the file as it is on disk: what a client loads, and what a
    /// clean copy holds.
    async fn replace_all(&mut self, text: String) {
        if self.client_copy().is_none() && !self.client_has_it {
            let path = self.path.clone();
            let on_disk = tokio::task::spawn_blocking(move || std::fs::read(path)).await;
            match on_disk {
                Ok(Ok(bytes)) => self.model.set(String::from_utf8_lossy(&bytes).into_owned()),
                _ => {
                    self.write_file(text).await;
                    return;
                }
            }
        }
        self.edit_model(Change::Whole(text)).await;
    }

    /// Sends `change` against Mira's copy of the client's transcript until the client applies
    /// it (retrying only on `applied: false`), and keeps the copy in step.
    async fn edit_model(&mut self, change: Change) {
        for _ in 0..APPEND_ATTEMPTS {
            let client = self.client_copy();
            // A whole-document edit spans the longer of the two copies: the client's may be
            // an older state of Mira's (loaded from disk mid-turn) that reconcile keeps.
            let client_end = client
                .as_ref()
                .map(|(_, t)| end_position(t, self.state.encoding()));
            self.model.reconcile(client);
            let end = end_position(&self.model.text, self.state.encoding());
            let (range, new_text, after) = match &change {
                Change::Whole(t) => {
                    let end = client_end.map_or(end, |c| c.max(end));
                    (Range::new(Position::new(0, 0), end), t.clone(), t.clone())
                }
                Change::Append(c) => (
                    Range::new(end, end),
                    c.clone(),
                    format!("{}{c}", self.model.text),
                ),
            };
            match self.edit(range, new_text).await {
                Applied::Yes => {
                    self.model.set(after);
                    return;
                }
                Applied::Refused => self.settle().await,
                Applied::Failed => return,
            }
        }
        tracing::warn!(
            "the client kept refusing transcript edits; the answer is in `mira history`"
        );
    }

    /// The transcript as the client has it, when the client has it open.
    fn client_copy(&self) -> Option<(i32, String)> {
        let uri = self.uri.as_ref()?;
        self.state
            .documents()
            .get(uri)
            .map(|d| (d.version(), d.text()))
    }

    /// After a refusal: give the client's didChange (debounced by Neovim) time to arrive.
    async fn settle(&self) {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    async fn append(&mut self, chunk: &str) {
        if chunk.is_empty() {
            return;
        }
        let text = format!("{}{chunk}", self.model.text);
        if self.delivery() != Delivery::Stream {
            self.model.set(text);
            return;
        }
        if !self.holds() {
            self.model.set(text);
            self.behind = true;
            return;
        }
        if self.behind {
            // The client loaded the file mid-turn: it lacks what streamed before.
            self.behind = false;
            self.edit_model(Change::Whole(text)).await;
            return;
        }
        self.edit_model(Change::Append(chunk.to_string())).await;
    }

    async fn edit(&mut self, range: Range, new_text: String) -> Applied {
        let Some(uri) = self.uri.clone() else {
            return Applied::Failed;
        };
        let document_changes = self
            .state
            .session()
            .is_some_and(|s| s.features.document_changes);
        let te = TextEdit { range, new_text };
        let edit = if document_changes {
            WorkspaceEdit {
                document_changes: Some(DocumentChanges::Edits(vec![TextDocumentEdit {
                    // Unversioned on purpose: see [`Model`].
                    text_document: OptionalVersionedTextDocumentIdentifier { uri, version: None },
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
        // No label: Neovim prints it for every edit ("Workspace edit …").
        let params = ApplyWorkspaceEditParams { label: None, edit };
        match self
            .state
            .client
            .send_request::<ApplyWorkspaceEdit>(params)
            .await
        {
            Ok(r) if r.applied => Applied::Yes,
            Ok(r) => {
                tracing::info!(reason = ?r.failure_reason, "the client refused a transcript edit");
                Applied::Refused
            }
            Err(e) => {
                tracing::warn!("the client refused a transcript edit: {}", e.message);
                Applied::Failed
            }
        }
    }

    /// Writes `text` to a new file under `answers/` (and `conversation.md`) and shows it,
    /// at the last question ([`Delivery::Snapshots`]).
    async fn show_snapshot(&mut self, text: String, name: &str) {
        let dir = self.path.with_file_name("answers");
        let name: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let file = dir.join(format!("{name}.md"));
        let (body, transcript, target) = (text.clone(), self.path.clone(), file.clone());
        let written = tokio::task::spawn_blocking(move || -> std::io::Result<()> {
            std::fs::create_dir_all(&dir)?;
            write_whole(&target, &body)?;
            write_whole(&transcript, &body)?;
            prune(&dir, SNAPSHOTS_KEPT);
            Ok(())
        })
        .await;
        if !matches!(written, Ok(Ok(()))) {
            tracing::warn!("cannot write the answer {}", file.display());
            return;
        }
        self.model.set(text);
        let Some(uri) = to_proto::uri(&file) else {
            return;
        };
        let line = self.model.text[..self.model.text.rfind("### You").unwrap_or(0)]
            .matches('\n')
            .count() as u32;
        let at = Position::new(line, 0);
        let params = ShowDocumentParams {
            uri,
            external: Some(false),
            take_focus: Some(true),
            selection: Some(Range { start: at, end: at }),
        };
        let _ = self.state.client.show_document(params).await;
    }

    /// `window/showDocument` when the client advertises it, or is Helix (which handles it
    /// without advertising it); whether the client showed it.
    async fn show(&mut self) -> bool {
        let Some(session) = self.state.session() else {
            return false;
        };
        let Some(uri) = self.uri.clone() else {
            return false;
        };
        if !session.features.show_document {
            return false;
        }
        // The last line: past a final newline is no line to Neovim, whose showDocument then
        // fails with "Cursor position outside buffer".
        let text = &self.model.text;
        let last = end_position(
            text.strip_suffix('\n').unwrap_or(text),
            self.state.encoding(),
        );
        let at = Position::new(last.line, 0);
        let params = ShowDocumentParams {
            uri,
            external: Some(false),
            take_focus: Some(true),
            selection: Some(Range { start: at, end: at }),
        };
        let shown = matches!(self.state.client.show_document(params).await, Ok(true));
        if shown {
            self.client_has_it = true;
        }
        shown
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

/// Replaces `path` with `body` in one step (a temporary file renamed over it): an editor
/// loading the file meanwhile reads the old text or the new one, never a truncated one
/// (Neovim 0.7's plugin loads the transcript while Mira rewrites it; an empty read lost the
/// question from the buffer).
fn write_whole(path: &std::path::Path, body: &str) -> std::io::Result<()> {
    let tmp = path.with_extension("md.partial");
    std::fs::write(&tmp, body)?;
    std::fs::rename(&tmp, path)
}

/// Removes all but the newest `keep` files of `dir` (by modification time).
fn prune(dir: &std::path::Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    files.sort();
    let excess = files.len().saturating_sub(keep);
    for (_, path) in files.into_iter().take(excess) {
        let _ = std::fs::remove_file(path);
    }
}

/// The position just past the end of `text` in the session's encoding.
fn end_position(text: &str, enc: PositionEncoding) -> Position {
    let rope = ropey::Rope::from_str(text);
    to_proto::char_position(&rope, rope.len_chars(), enc)
}
