//! The chat surface over LSP: `mira.ask` answers `{turn}` at once and the turn runs in a
//! task; `mira.cancel`, `mira.openConversation`, `mira/history`.
//!
//! Everything the user sees of a turn goes through one writer task, in order: the transcript
//! (`workspace/applyEdit` into `<data_dir>/conversation.md`, coalesced), `window/showDocument`,
//! `$/progress`, `window/showMessage`, and — when the client opted in — `mira/*`
//! notifications. Handlers only send to it; only the writer awaits the client.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::notification::Notification;
use tower_lsp_server::ls_types::request::ApplyWorkspaceEdit;
use tower_lsp_server::ls_types::*;

use super::server::Backend;
use super::state::ServerState;
use crate::agent::conversation::{self, TurnView};
use crate::agent::{
    Agent, Ask, EditOutcome, EditorContext, FileEdit, OpenDocument, TurnEvent, TurnHost,
    TurnStatus, new_turn_id,
};
use crate::config::Loaded;
use crate::documents::{
    PositionEncoding, char_to_position, path_to_uri, position_to_char, uri_to_path,
};
use crate::store::Store;
use crate::surface::chat as chat_surface;
use crate::surface::commands::{AskArgs, CancelArgs};
use crate::surface::proposals::{self, ProposalStatus};
use crate::surface::transcript::{self, Coalescer};

/// Chat state of one server: the agent (rebuilt when the configuration changes), running
/// turns by id, and the writer task.
#[derive(Default)]
pub struct Chat {
    agent: Mutex<Option<(Arc<Loaded>, Arc<Agent>)>>,
    running: Mutex<HashMap<String, CancellationToken>>,
    writer: OnceLock<mpsc::UnboundedSender<Out>>,
}

enum Out {
    Event {
        turn: String,
        event: TurnEvent,
    },
    /// Text for the transcript outside the model's stream (a proposal's diff).
    Note {
        text: String,
    },
    Open,
}

impl Chat {
    fn agent(&self, config: Arc<Loaded>, store: &Store) -> Arc<Agent> {
        let mut slot = self.agent.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((c, a)) = slot.as_ref()
            && Arc::ptr_eq(c, &config)
        {
            return a.clone();
        }
        let agent = Arc::new(Agent::from_config(store.clone(), &config));
        *slot = Some((config, agent.clone()));
        agent
    }

    fn writer(&self, state: &Arc<ServerState>) -> mpsc::UnboundedSender<Out> {
        self.writer
            .get_or_init(|| {
                let (tx, rx) = mpsc::unbounded_channel();
                let w = Writer::new(state.clone());
                tokio::spawn(w.run(rx));
                tx
            })
            .clone()
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, CancellationToken>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// `mira.ask`: start a turn and answer `{turn}` without waiting for anything.
pub fn ask(state: &Arc<ServerState>, args: AskArgs) -> std::result::Result<Value, String> {
    if args.question.trim().is_empty() {
        return Err("the question is empty".into());
    }
    let session = state.session().ok_or("Mira is not initialized yet")?;
    let store = state
        .store()
        .map_err(|e| format!("memory and conversation are unavailable: {e}"))?
        .clone();
    let editor = editor_context(state, &session.project.root, &args);
    let turn = new_turn_id();
    let cancel = CancellationToken::new();
    state.chat.running().insert(turn.clone(), cancel.clone());
    let host = LspHost {
        state: state.clone(),
        out: state.chat.writer(state),
        turn: turn.clone(),
    };
    let project = session.project.clone();
    let st = state.clone();
    let id = turn.clone();
    tokio::spawn(async move {
        // Building the agent (HTTP client) and the project row are blocking work: off the
        // runtime, and never in the handler.
        let s = store.clone();
        let st2 = st.clone();
        let prepared = tokio::task::spawn_blocking(move || {
            (
                st2.chat.agent(st2.config(), &s),
                chat_surface::project_info(&s, &project),
            )
        })
        .await;
        match prepared {
            Ok((agent, project)) => {
                let ask = Ask {
                    turn: id.clone(),
                    question: args.question,
                    project,
                    editor,
                    effort: None,
                    source: "lsp",
                };
                agent.run(ask, &host, &cancel).await;
            }
            Err(e) => tracing::error!("turn {id} could not start: {e}"),
        }
        st.chat.running().remove(&id);
    });
    Ok(json!({ "turn": turn }))
}

/// `mira.cancel`: the named turn, or every running one.
pub fn cancel(state: &Arc<ServerState>, args: CancelArgs) -> Value {
    let running = state.chat.running();
    let mut cancelled = Vec::new();
    for (id, token) in running.iter() {
        if args.turn.as_ref().is_none_or(|t| t == id) {
            token.cancel();
            cancelled.push(id.clone());
        }
    }
    if cancelled.is_empty() {
        state.show(MessageType::INFO, "Mira: no turn is running");
    }
    json!({ "cancelled": cancelled })
}

/// `mira.openConversation`: regenerate the transcript if needed and show it.
pub fn open_conversation(state: &Arc<ServerState>) -> Value {
    let _ = state.chat.writer(state).send(Out::Open);
    let path = transcript::path(&state.config().config.store.home);
    json!({ "uri": path_to_uri(&path).map(|u| u.as_str().to_string()) })
}

#[derive(Debug, Deserialize)]
pub struct HistoryParams {
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(default)]
    pub before: Option<String>,
}

impl Backend {
    /// `mira/history {limit, before?}` → the newest turns, oldest first.
    pub async fn history(&self, params: HistoryParams) -> Result<Vec<TurnView>> {
        let store = self.state.store().map_err(Error::invalid_params)?.clone();
        let limit = params.limit.unwrap_or(20).min(500);
        tokio::task::spawn_blocking(move || {
            store.read(|c| conversation::history(c, limit, params.before.as_deref()))
        })
        .await
        .map_err(|e| Error::invalid_params(e.to_string()))?
        .map_err(|e| Error::invalid_params(e.to_string()))
    }
}

#[derive(Debug, Deserialize)]
pub struct ContextParams {
    #[serde(default)]
    pub uri: Option<Uri>,
    #[serde(default)]
    pub position: Option<Position>,
    #[serde(default)]
    pub range: Option<Range>,
    /// The question to assemble for; a placeholder when absent.
    #[serde(default)]
    pub question: Option<String>,
}

/// What Mira would send the model for this spot: the exact request body (no credentials —
/// those travel in headers) and the token count of each context section.
#[derive(Debug, Serialize)]
pub struct ContextReport {
    pub provider: Option<String>,
    pub endpoint: Option<String>,
    pub body: Option<Value>,
    pub system: String,
    pub sections: Vec<crate::agent::context::SectionReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider_error: Option<String>,
}

impl Backend {
    /// `mira/context {uri?, position?, range?, question?}`: transparency about context.
    pub async fn context(&self, params: ContextParams) -> Result<ContextReport> {
        let state = &self.state;
        let session = state.session().ok_or_else(Error::invalid_request)?;
        let store = state.store().map_err(Error::invalid_params)?.clone();
        let args = AskArgs {
            question: params.question.unwrap_or_else(|| "(your question)".into()),
            uri: params.uri,
            range: params.range,
            position: params.position,
        };
        let editor = editor_context(state, &session.project.root, &args);
        let project = session.project.clone();
        let st = state.clone();
        let (req, sections) = tokio::task::spawn_blocking(move || {
            // Building the agent (HTTP client) is blocking work too.
            let agent = st.chat.agent(st.config(), &store);
            let project = chat_surface::project_info(&store, &project);
            let ask = Ask {
                turn: String::new(),
                question: args.question,
                project,
                editor,
                effort: None,
                source: "lsp",
            };
            let r = store.read(|c| agent.preview(c, &ask));
            r.map(|(req, sections)| {
                let body = agent.provider().ok().map(|c| {
                    (
                        c.settings().kind.as_str().to_string(),
                        c.endpoint(),
                        c.body(&req),
                    )
                });
                let err = agent.provider().err().map(|e| e.to_string());
                (req.system, (sections, body, err))
            })
        })
        .await
        .map_err(|e| Error::invalid_params(e.to_string()))?
        .map_err(|e| Error::invalid_params(e.to_string()))?;
        let (sections, body, provider_error) = sections;
        let (provider, endpoint, body) = match body {
            Some((p, e, b)) => (Some(p), Some(e), Some(b)),
            None => (None, None, None),
        };
        Ok(ContextReport {
            provider,
            endpoint,
            body,
            system: req,
            sections,
            provider_error,
        })
    }
}

fn editor_context(state: &ServerState, root: &Path, args: &AskArgs) -> Option<EditorContext> {
    let uri = args.uri.as_ref()?;
    let path = uri_to_path(uri)?;
    let enc = state.encoding();
    let docs = state.documents();
    let mut cx = EditorContext {
        path: Some(chat_surface::relative(root, &path)),
        ..Default::default()
    };
    let Some(doc) = docs.get(uri) else {
        return Some(cx);
    };
    cx.language = Some(doc.language_id().to_string());
    let rope = doc.rope();
    if let Some(r) = args.range.filter(|r| r.start != r.end) {
        let (a, b) = (
            position_to_char(rope, r.start, enc),
            position_to_char(rope, r.end, enc),
        );
        let sel: String = rope
            .slice(a.min(b)..a.max(b))
            .chars()
            .take(40_000)
            .collect();
        cx.selection = Some(sel);
        cx.line = Some(r.start.line + 1);
    } else if let Some(p) = args.position.or(args.range.map(|r| r.start)) {
        let line = (p.line as usize).min(rope.len_lines().saturating_sub(1));
        let from = line.saturating_sub(20);
        let to = (line + 21).min(rope.len_lines());
        cx.surrounding = Some(
            rope.slice(rope.line_to_char(from)..rope.line_to_char(to))
                .to_string(),
        );
        cx.line = Some(p.line + 1);
    }
    Some(cx)
}

struct LspHost {
    state: Arc<ServerState>,
    out: mpsc::UnboundedSender<Out>,
    turn: String,
}

impl LspHost {
    async fn propose(&self, edit: FileEdit) -> EditOutcome {
        let Ok(store) = self.state.store().cloned() else {
            return EditOutcome::Rejected("the store is unavailable".into());
        };
        let (turn, e) = (self.turn.clone(), edit.clone());
        let id =
            tokio::task::spawn_blocking(move || store.write(|tx| proposals::create(tx, &turn, &e)))
                .await;
        let id = match id {
            Ok(Ok(id)) => id,
            _ => return EditOutcome::Rejected("could not store the proposal".into()),
        };
        let root = self
            .state
            .session()
            .map(|s| s.project.root.clone())
            .unwrap_or_default();
        let shown = chat_surface::relative(&root, &edit.path);
        let _ = self.out.send(Out::Note {
            text: proposals::transcript_block(id, &shown, &edit.diff),
        });
        self.state.show(
            MessageType::INFO,
            format!("Mira proposes edit #{id} to {shown}: `mira.applyProposal {id}` applies it, `mira.rejectProposal {id}` drops it"),
        );
        EditOutcome::Proposed { id }
    }
}

fn proposal_store(state: &ServerState) -> std::result::Result<Store, String> {
    state
        .store()
        .cloned()
        .map_err(|e| format!("memory and conversation are unavailable: {e}"))
}

/// `mira.applyProposal {proposal}`: answers at once; the edit goes to the editor from a task,
/// and only if the file still holds the text the proposal was computed against.
pub async fn apply_proposal(
    state: &Arc<ServerState>,
    id: i64,
) -> std::result::Result<Value, String> {
    let store = proposal_store(state)?;
    let s = store.clone();
    let p = tokio::task::spawn_blocking(move || s.read(|c| proposals::get(c, id)))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("there is no proposal #{id}"))?;
    if p.status != ProposalStatus::Pending {
        return Err(format!("proposal #{id} is already {}", p.status.as_str()));
    }
    let st = state.clone();
    tokio::spawn(async move {
        let uri = path_to_uri(&p.path);
        let open = uri.and_then(|u| st.documents().get(&u).map(|d| (d.version(), d.text())));
        let (version, current) = match open {
            Some((v, t)) => (Some(v), Some(t)),
            None => {
                let path = p.path.clone();
                (
                    None,
                    tokio::task::spawn_blocking(move || std::fs::read_to_string(path).ok())
                        .await
                        .ok()
                        .flatten(),
                )
            }
        };
        let base = current.clone().unwrap_or_default();
        let settle = |status: ProposalStatus| {
            let s = store.clone();
            tokio::task::spawn_blocking(move || s.write(|tx| proposals::settle(tx, id, status)))
        };
        if proposals::hash(&base) != p.base_hash {
            let _ = settle(ProposalStatus::Stale).await;
            st.show(
                MessageType::WARNING,
                format!(
                    "Mira: proposal #{id} is stale: the file changed since it was made; ask again"
                ),
            );
            return;
        }
        let edit = FileEdit {
            path: p.path,
            base_version: version,
            base_text: base,
            new_text: p.new_text,
            create: current.is_none(),
            diff: p.diff,
        };
        match apply_file_edit(st.clone(), edit).await {
            EditOutcome::Applied => {
                let _ = settle(ProposalStatus::Applied).await;
                st.show(MessageType::INFO, format!("Mira: applied proposal #{id}"));
            }
            EditOutcome::Stale(why) => {
                let _ = settle(ProposalStatus::Stale).await;
                st.show(
                    MessageType::WARNING,
                    format!("Mira: proposal #{id} is stale: {why}"),
                );
            }
            EditOutcome::Rejected(why) => {
                st.show(
                    MessageType::WARNING,
                    format!("Mira: proposal #{id} was not applied: {why}"),
                );
            }
            // apply_file_edit applies or refuses; it never proposes.
            EditOutcome::Proposed { .. } => {}
        }
    });
    Ok(json!({ "proposal": id, "status": "applying" }))
}

/// `mira.rejectProposal {proposal}`.
pub async fn reject_proposal(
    state: &Arc<ServerState>,
    id: i64,
) -> std::result::Result<Value, String> {
    let store = proposal_store(state)?;
    let settled = tokio::task::spawn_blocking(move || {
        store.write(|tx| proposals::settle(tx, id, ProposalStatus::Rejected))
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| e.to_string())?;
    if !settled {
        return Err(format!("proposal #{id} does not exist or is not pending"));
    }
    state.show(MessageType::INFO, format!("Mira: rejected proposal #{id}"));
    Ok(json!({ "proposal": id, "status": "rejected" }))
}

impl TurnHost for LspHost {
    fn event(&self, event: TurnEvent) {
        let _ = self.out.send(Out::Event {
            turn: self.turn.clone(),
            event,
        });
    }

    fn open_document(&self, path: &Path) -> Option<OpenDocument> {
        let uri = path_to_uri(path)?;
        let docs = self.state.documents();
        docs.get(&uri).map(|d| OpenDocument {
            version: d.version(),
            text: d.text(),
        })
    }

    fn apply_edit(&self, edit: FileEdit) -> BoxFuture<'_, EditOutcome> {
        Box::pin(async move {
            let annotations = self
                .state
                .session()
                .and_then(|s| s.capabilities.workspace.as_ref())
                .and_then(|w| w.workspace_edit.as_ref())
                .is_some_and(|w| {
                    w.document_changes == Some(true) && w.change_annotation_support.is_some()
                });
            // Clients with change annotations confirm in their own preview; others get a
            // proposal to apply explicitly when the user asked for confirmation.
            if self.state.config().config.edits.confirm && !annotations {
                return self.propose(edit).await;
            }
            apply_file_edit(self.state.clone(), edit).await
        })
    }

    fn approve(&self, question: String) -> BoxFuture<'_, bool> {
        let client = self.state.client.clone();
        let can_ask = self
            .state
            .session()
            .and_then(|s| s.capabilities.window.as_ref())
            .and_then(|w| w.show_message.as_ref())
            .is_some();
        Box::pin(async move {
            if !can_ask {
                return false;
            }
            let actions = vec![
                MessageActionItem {
                    title: "Allow".into(),
                    properties: Default::default(),
                },
                MessageActionItem {
                    title: "Deny".into(),
                    properties: Default::default(),
                },
            ];
            matches!(client.show_message_request(MessageType::WARNING, question, Some(actions)).await, Ok(Some(a)) if a.title == "Allow")
        })
    }
}

/// The smallest single edit turning `base` into `new`: common prefix and suffix kept.
fn minimal_edit(base: &str, new: &str, enc: PositionEncoding) -> TextEdit {
    let b: Vec<char> = base.chars().collect();
    let n: Vec<char> = new.chars().collect();
    let prefix = b.iter().zip(&n).take_while(|(x, y)| x == y).count();
    let max_suffix = b.len().min(n.len()) - prefix;
    let suffix = b
        .iter()
        .rev()
        .zip(n.iter().rev())
        .take(max_suffix)
        .take_while(|(x, y)| x == y)
        .count();
    let rope = ropey::Rope::from_str(base);
    let start = char_to_position(&rope, prefix, enc);
    let end = char_to_position(&rope, b.len() - suffix, enc);
    TextEdit {
        range: Range { start, end },
        new_text: n[prefix..n.len() - suffix].iter().collect(),
    }
}

/// A model edit as a versioned `workspace/applyEdit`. Refused — never clobbering — when the
/// user changed the file since the tool read it; the editor also rejects a stale version.
async fn apply_file_edit(state: Arc<ServerState>, edit: FileEdit) -> EditOutcome {
    let Some(uri) = path_to_uri(&edit.path) else {
        return EditOutcome::Rejected(format!("{} is not a file path", edit.path.display()));
    };
    let current = state.documents().get(&uri).map(|d| (d.version(), d.text()));
    let version = match current {
        Some((v, text)) => {
            if edit.base_version.is_some_and(|b| b != v) || text != edit.base_text {
                return EditOutcome::Stale(
                    "you changed the file in the editor since Mira read it".into(),
                );
            }
            Some(v)
        }
        None => {
            let path = edit.path.clone();
            let on_disk = tokio::task::spawn_blocking(move || std::fs::read_to_string(path).ok())
                .await
                .ok()
                .flatten();
            match (&on_disk, edit.create) {
                (Some(t), false) if *t == edit.base_text => {}
                (None, true) => {}
                _ => {
                    return EditOutcome::Stale(
                        "the file on disk changed since Mira read it".into(),
                    );
                }
            }
            None
        }
    };
    let caps = state
        .session()
        .and_then(|s| s.capabilities.workspace.as_ref())
        .and_then(|w| w.workspace_edit.as_ref());
    let document_changes = caps.and_then(|c| c.document_changes).unwrap_or(false);
    let can_create = caps
        .and_then(|c| c.resource_operations.as_ref())
        .is_some_and(|ops| ops.contains(&ResourceOperationKind::Create));
    // Clients with change annotations (VS Code) show model edits in their refactor preview.
    let annotate = document_changes && caps.is_some_and(|c| c.change_annotation_support.is_some());
    let annotation = annotate.then(|| "mira".to_string());
    let text_edit = minimal_edit(&edit.base_text, &edit.new_text, state.encoding());
    if edit.create && !(document_changes && can_create) {
        // The client cannot create files: create it empty, then fill it through the editor.
        let path = edit.path.clone();
        let made = tokio::task::spawn_blocking(move || {
            path.parent().map(std::fs::create_dir_all).transpose()?;
            std::fs::write(&path, "")
        })
        .await;
        if !matches!(made, Ok(Ok(()))) {
            return EditOutcome::Rejected(format!("cannot create {}", edit.path.display()));
        }
    }
    let workspace_edit = if document_changes {
        let mut ops = Vec::new();
        if edit.create && can_create {
            ops.push(DocumentChangeOperation::Op(ResourceOp::Create(
                CreateFile {
                    uri: uri.clone(),
                    options: Some(CreateFileOptions {
                        overwrite: Some(false),
                        ignore_if_exists: Some(true),
                    }),
                    annotation_id: annotation.clone(),
                },
            )));
        }
        ops.push(DocumentChangeOperation::Edit(TextDocumentEdit {
            text_document: OptionalVersionedTextDocumentIdentifier {
                uri: uri.clone(),
                version,
            },
            edits: vec![match &annotation {
                Some(id) => OneOf::Right(AnnotatedTextEdit {
                    text_edit,
                    annotation_id: id.clone(),
                }),
                None => OneOf::Left(text_edit),
            }],
        }));
        let change_annotations = annotation.map(|id| {
            HashMap::from([(
                id,
                ChangeAnnotation {
                    label: "Mira".into(),
                    needs_confirmation: Some(true),
                    description: Some("an edit proposed by the model".into()),
                },
            )])
        });
        WorkspaceEdit {
            document_changes: Some(DocumentChanges::Operations(ops)),
            change_annotations,
            ..Default::default()
        }
    } else {
        WorkspaceEdit {
            changes: Some(HashMap::from([(uri.clone(), vec![text_edit])])),
            ..Default::default()
        }
    };
    let label = format!(
        "Mira: edit {}",
        edit.path
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default()
    );
    match state
        .client
        .send_request::<ApplyWorkspaceEdit>(ApplyWorkspaceEditParams {
            label: Some(label),
            edit: workspace_edit,
        })
        .await
    {
        Ok(r) if r.applied => EditOutcome::Applied,
        Ok(r) => EditOutcome::Rejected(
            r.failure_reason
                .unwrap_or_else(|| "the editor did not apply it".into()),
        ),
        Err(e) => {
            EditOutcome::Rejected(format!("the editor answered with an error: {}", e.message))
        }
    }
}

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

/// The single task that talks to the client about turns.
struct Writer {
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
    fn new(state: Arc<ServerState>) -> Writer {
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

    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Out>) {
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
                        .send_notification::<DeltaNote>(DeltaParams { turn, text: t })
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
            self.text = text;
        } else {
            self.text = current;
        }
    }

    async fn append(&mut self, chunk: &str) {
        if chunk.is_empty() {
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
            .and_then(|s| s.capabilities.workspace.as_ref())
            .and_then(|w| w.workspace_edit.as_ref())
            .and_then(|w| w.document_changes)
            .unwrap_or(false);
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
        let advertised = session
            .capabilities
            .window
            .as_ref()
            .and_then(|w| w.show_document.as_ref())
            .is_some_and(|s| s.support);
        let helix = session
            .client_name
            .as_deref()
            .is_some_and(|n| n.to_ascii_lowercase().contains("helix"));
        let Some(uri) = self.uri.clone() else { return };
        if !(advertised || helix) {
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
            .and_then(|s| s.capabilities.window.as_ref())
            .and_then(|w| w.work_done_progress)
            .unwrap_or(false);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimal_edits_touch_only_what_changed() {
        let e = minimal_edit(
            "fn a() {\n    41\n}\n",
            "fn a() {\n    42\n}\n",
            PositionEncoding::Utf16,
        );
        assert_eq!(
            e.range,
            Range {
                start: Position::new(1, 5),
                end: Position::new(1, 6)
            }
        );
        assert_eq!(e.new_text, "2");
        let e = minimal_edit("é😀x", "é😀yx", PositionEncoding::Utf16);
        assert_eq!(
            (e.range.start, e.new_text.as_str()),
            (Position::new(0, 3), "y")
        );
        let e = minimal_edit("aaa", "aa", PositionEncoding::Utf8);
        assert_eq!(
            (
                e.range.start.character,
                e.range.end.character,
                e.new_text.as_str()
            ),
            (2, 3, "")
        );
    }
}
