//! The chat surface over LSP: `mira.ask` answers `{turn}` at once and the turn runs in a
//! task; `mira.cancel`, `mira.openConversation`, `mira/history`.
//!
//! Everything the user sees of a turn goes through one writer task, in order: the transcript
//! (`workspace/applyEdit` into `<data_dir>/conversation.md`, coalesced), `window/showDocument`,
//! `$/progress`, `window/showMessage`, and — when the client opted in — `mira/*`
//! notifications. Handlers only send to it; only the writer awaits the client.

mod actions;
mod host;
mod proposals;
mod writer;

pub use actions::{ask_symbol, edit, explain, fix};

pub use proposals::{apply_proposal, reject_proposal};

use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;

use super::state::{Chat, ChatOut as Out, ServerState};
use super::{from_proto, to_proto};
use crate::agent::conversation::{self, TurnView};
use crate::agent::{Agent, Ask, EditorContext};
use crate::index::crawl;
use crate::lsp::ext::{AskArgs, CancelArgs};
use crate::lsp::transcript;
use crate::session::{self, turns::TurnRequest};
use crate::store::Store;
use host::LspHost;
use writer::Writer;

impl Chat {
    /// The agent for the current configuration, over the server's memory service (its
    /// embedder, recall weights and embedding worker) and its live index.
    fn agent(&self, state: &ServerState, store: &Store) -> Arc<Agent> {
        self.turns.agent(state.config(), |config| {
            let mut agent = config.agent(store.clone());
            if let Some(memory) = state.memory() {
                agent = agent.with_memory(memory.clone());
            }
            if let Some(index) = state.index.handle() {
                agent = agent.with_index(index.clone());
            }
            agent
        })
    }

    /// didClose of `uri`, for the writer if it runs. The writer cannot tell a close from its
    /// own polls: a transcript shown, opened and closed before any turn looked like one the
    /// client still held, and the next answer went to it as edits. Neovim then loads it into
    /// a hidden, modified buffer that blocks `:qa`.
    pub(super) fn closed(&self, uri: &Uri) {
        if let Some(tx) = self.writer.get() {
            let _ = tx.send(Out::Closed(uri.clone()));
        }
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
}

/// `mira.ask`: start a turn and answer `{turn}` without waiting for anything.
pub fn ask(state: &Arc<ServerState>, mut args: AskArgs) -> std::result::Result<Value, String> {
    if args.question.trim().is_empty() {
        return Err("the question is empty".into());
    }
    // A question typed without a location is about where the user last was ("last focus").
    if args.uri.is_none()
        && let Some(f) = state.last_focus()
    {
        args.uri = Some(f.uri);
        args.position = Some(f.range.start);
        args.range = (f.range.start != f.range.end).then_some(f.range);
    }
    let session = state.session().ok_or("Mira is not initialized yet")?;
    let editor = editor_context(state, &session.project.root, &args);
    let effort = args.effort;
    start_turn(state, args.question, editor, None, effort)
}

/// Memories anchored to the symbol in focus are read in the turn's task, off the handler.
pub(super) struct FocusAnchor {
    pub key: String,
    pub qualified: String,
}

/// Start a turn in the global conversation and answer `{turn}` at once.
pub(super) fn start_turn(
    state: &Arc<ServerState>,
    question: String,
    editor: Option<EditorContext>,
    anchor: Option<FocusAnchor>,
    effort: Option<crate::llm::Effort>,
) -> std::result::Result<Value, String> {
    let session = state.session().ok_or("Mira is not initialized yet")?;
    let store = state
        .store()
        .map_err(|e| format!("memory and conversation are unavailable: {e}"))?
        .clone();
    let (turn, cancel) = state.chat.turns.begin();
    let host = LspHost {
        state: state.clone(),
        out: state.chat.writer(state),
        turn: turn.clone(),
    };
    let request = TurnRequest {
        question,
        editor,
        anchor: anchor.map(|a| (a.key, a.qualified)),
        effort,
        source: "lsp",
    };
    let project = session.project.clone();
    let st = state.clone();
    // Building the agent (HTTP client) and the project row are blocking work: off the
    // runtime, and never in the handler.
    let prepare = move || {
        (
            st.chat.agent(&st, &store),
            session::project_info(&store, &project),
        )
    };
    state.chat.turns.spawn(
        (turn.clone(), cancel),
        request,
        state.editor.anchors.clone(),
        prepare,
        host,
    );
    Ok(json!({ "turn": turn }))
}

/// `mira.cancel`: the named turn, or every running one.
pub fn cancel(state: &Arc<ServerState>, args: CancelArgs) -> Value {
    let cancelled = state.chat.turns.cancel(args.turn.as_deref());
    if cancelled.is_empty() {
        state.show(MessageType::INFO, "Mira: no turn is running");
    }
    json!({ "cancelled": cancelled })
}

/// `mira.openConversation`: regenerate the transcript if needed and show it.
pub fn open_conversation(state: &Arc<ServerState>) -> Value {
    let _ = state.chat.writer(state).send(Out::Open);
    let path = transcript::path(&state.config().config.store.home);
    json!({ "uri": to_proto::uri(&path).map(|u| u.as_str().to_string()) })
}

#[derive(Debug, Deserialize)]
pub struct HistoryParams {
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(default)]
    pub before: Option<String>,
}

/// `mira/history {limit, before?}` → the newest turns, oldest first.
pub async fn history(state: &ServerState, params: HistoryParams) -> Result<Vec<TurnView>> {
    let store = state.store().map_err(Error::invalid_params)?.clone();
    let limit = params.limit.unwrap_or(20).min(500);
    tokio::task::spawn_blocking(move || {
        store.read(|c| conversation::history(c, limit, params.before.as_deref()))
    })
    .await
    .map_err(|e| Error::invalid_params(e.to_string()))?
    .map_err(|e| Error::invalid_params(e.to_string()))
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

/// `mira/context {uri?, position?, range?, question?}`: transparency about context.
pub async fn context(state: &Arc<ServerState>, params: ContextParams) -> Result<ContextReport> {
    let session = state.session().ok_or_else(Error::invalid_request)?;
    let store = state.store().map_err(Error::invalid_params)?.clone();
    let args = AskArgs {
        question: params.question.unwrap_or_else(|| "(your question)".into()),
        uri: params.uri,
        range: params.range,
        position: params.position,
        effort: None,
    };
    let editor = editor_context(state, &session.project.root, &args);
    let project = session.project.clone();
    let st = state.clone();
    // Building the agent (HTTP client) and the project row are blocking work.
    let (agent, project) = tokio::task::spawn_blocking(move || {
        (
            st.chat.agent(&st, &store),
            session::project_info(&store, &project),
        )
    })
    .await
    .map_err(|e| Error::invalid_params(e.to_string()))?;
    let ask = Ask {
        turn: String::new(),
        question: args.question,
        project,
        editor,
        effort: None,
        source: "lsp",
    };
    let (req, sections) = agent.preview(&ask).await.map_err(Error::invalid_params)?;
    let (provider, endpoint, body) = match agent.provider() {
        Ok(c) => (
            Some(c.settings().kind.as_str().to_string()),
            Some(c.endpoint()),
            Some(c.body(&req)),
        ),
        Err(_) => (None, None, None),
    };
    let provider_error = agent.provider().err().map(|e| e.to_string());
    let req = req.system;
    Ok(ContextReport {
        provider,
        endpoint,
        body,
        system: req,
        sections,
        provider_error,
    })
}

pub(super) fn editor_context(
    state: &ServerState,
    root: &Path,
    args: &AskArgs,
) -> Option<EditorContext> {
    let uri = args.uri.as_ref()?;
    let path = from_proto::path(uri)?;
    let enc = state.encoding();
    let docs = state.documents();
    let mut cx = EditorContext {
        path: Some(crawl::relative(root, &path).unwrap_or_else(|| path.display().to_string())),
        ..Default::default()
    };
    let Some(doc) = docs.get(uri) else {
        return Some(cx);
    };
    cx.language = Some(doc.language_id().to_string());
    let rope = doc.rope();
    if let Some(r) = args.range.filter(|r| r.start != r.end) {
        let (a, b) = (
            from_proto::char_index(rope, r.start, enc),
            from_proto::char_index(rope, r.end, enc),
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
