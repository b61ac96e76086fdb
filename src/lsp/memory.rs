//! Memory over LSP: `mira.remember`, `mira.recall`, `mira.forget` and the `mira/memories`
//! request. Thin: convert arguments, call [`MemoryService`], convert results. Helix ignores
//! command results, so each command also says its outcome in one `window/showMessage` line.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::{LSPAny, MessageType, Range, Uri};

use super::state::ServerState;
use crate::lsp::ext::{ForgetArgs, RecallArgs, RememberArgs, ScopeArg};
use crate::memory::anchors::AnchorState;
use crate::memory::{
    ListFilter, Memory, MemoryError, MemoryKind, MemoryService, Outcome, ProjectRef,
    RememberRequest, Status,
};

/// Builds the memory service once the session (store + config) exists, with the embedder
/// policy of `session::memory`. Returns a warning for the user when the embedder settings are
/// unusable (recall then stays on full-text search); a model that fails to load later says so.
pub fn start(state: &Arc<ServerState>) -> Option<String> {
    let session = state.session()?;
    let store = session.store.as_ref().ok()?;
    let started = crate::session::memory::start(store.clone(), &state.config());
    state.set_memory(started.service);
    if let Some(loading) = started.loading {
        let state = state.clone();
        tokio::spawn(async move {
            if let Ok(Some(warning)) = loading.await {
                state.show(MessageType::WARNING, warning);
            }
        });
    }
    started.warning
}

fn service(state: &ServerState) -> Result<MemoryService> {
    state.memory().cloned().ok_or_else(|| {
        let why = state
            .store()
            .err()
            .unwrap_or_else(|| "Mira is not initialized yet".into());
        Error::invalid_params(format!("memory is unavailable: {why}"))
    })
}

fn project(state: &ServerState) -> Option<ProjectRef> {
    state.session().map(|s| ProjectRef::from(&s.project))
}

/// A library error as an LSP error, also shown to the user (Helix shows nothing else).
fn fail(state: &ServerState, e: MemoryError) -> Error {
    let msg = e.to_string();
    state.show(MessageType::ERROR, format!("Mira: {msg}"));
    Error::invalid_params(msg)
}

fn to_any<T: Serialize>(v: &T) -> Result<Option<LSPAny>> {
    serde_json::to_value(v)
        .map(Some)
        .map_err(|e| Error::invalid_params(e.to_string()))
}

#[derive(Serialize)]
struct RememberResult<'a> {
    id: i64,
    outcome: Outcome,
    memory: &'a Memory,
    /// What this correction superseded.
    #[serde(skip_serializing_if = "Option::is_none")]
    superseded: Option<&'a Memory>,
    /// Memories this correction may correct; none was superseded.
    #[serde(skip_serializing_if = "<[Memory]>::is_empty")]
    ambiguous: &'a [Memory],
}

/// Where a memory is anchored: the given place, or the one a recent "remember selection…"
/// without text picked (Helix types the text afterwards).
fn anchor_place(state: &ServerState, args: &RememberArgs) -> Option<(Uri, Range)> {
    match (&args.uri, args.range) {
        (Some(u), Some(r)) => Some((u.clone(), r)),
        _ => state.editor.take_pending_anchor().map(|f| (f.uri, f.range)),
    }
}

pub async fn remember(state: &Arc<ServerState>, args: RememberArgs) -> Result<Option<LSPAny>> {
    let service = service(state)?;
    if args.text.trim().is_empty() {
        return match (&args.uri, args.range) {
            (Some(uri), Some(range)) => {
                // "Remember selection…" in a client that cannot prompt (Helix).
                state.editor.set_pending_anchor(super::Focus {
                    uri: uri.clone(),
                    range,
                });
                state.show(
                    MessageType::INFO,
                    "Mira: type `:lsp-workspace-command mira.remember \"<text>\"` to remember it about this code",
                );
                to_any(&serde_json::json!({ "needsText": true }))
            }
            _ => Err(fail(
                state,
                MemoryError::Invalid {
                    field: "text",
                    message: "`text` is empty".into(),
                },
            )),
        };
    }
    let mut anchors = Vec::new();
    let mut anchored_to = None;
    if let Some((uri, range)) = anchor_place(state, &args) {
        let (anchor, _) = super::editor::anchor_at(state, &uri, range)
            .await
            .map_err(|msg| {
                state.show(MessageType::ERROR, format!("Mira: {msg}"));
                Error::invalid_params(msg)
            })?;
        anchored_to = Some(format!("{}::{}", anchor.path, anchor.symbol));
        anchors.push(anchor);
    }
    let req = RememberRequest {
        text: args.text,
        kind: args.kind.unwrap_or(MemoryKind::Fact),
        project_scoped: args.scope == Some(ScopeArg::Project),
        corrects: args.corrects,
        anchors,
    };
    let anchored_path = req.anchors.first().map(|a| a.path.clone());
    let r = service
        .remember(req, project(state))
        .await
        .map_err(|e| fail(state, e))?;
    // The anchor holds its symbol's hash from before the embedding and the write: an edit
    // made meanwhile was observed before the anchor existed. Compare it with the code now.
    if let (Some(key), Some(index)) = (anchored_path, state.index.handle()) {
        index.report_again(key);
    }
    let m = &r.memory;
    let line = match &anchored_to {
        Some(at) => format!("Mira: {} about {at}", r.describe()),
        None => format!("Mira: {}", r.describe()),
    };
    state.show(MessageType::INFO, line);
    to_any(&RememberResult {
        id: m.id,
        outcome: r.outcome,
        memory: m,
        superseded: r.superseded.as_ref(),
        ambiguous: &r.ambiguous,
    })
}

/// One memory in a result list; `score` only when it came from a search.
#[derive(Serialize)]
pub struct MemoryItem {
    #[serde(flatten)]
    pub memory: Memory,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// The symbols it is anchored to (with whether each went stale).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub anchors: Vec<AnchorState>,
}

impl MemoryItem {
    /// `path::symbol`, and "(stale)" when the code changed: how recall names an anchor.
    fn anchor_label(&self) -> Option<String> {
        let a = self.anchors.first()?;
        let stale = if a.stale_since.is_some() {
            if a.gone { " (stale: gone)" } else { " (stale)" }
        } else {
            ""
        };
        Some(format!("@{}::{}{stale}", a.anchor.path, a.anchor.symbol))
    }
}

/// Fill in the anchors of the listed memories (one read off the runtime).
async fn with_anchors(state: &ServerState, mut items: Vec<MemoryItem>) -> Vec<MemoryItem> {
    let Ok(store) = state.store().cloned() else {
        return items;
    };
    let ids: Vec<i64> = items.iter().map(|m| m.memory.id).collect();
    if let Some(mut map) = crate::session::anchors::of_memories(store, ids).await {
        for item in &mut items {
            item.anchors = map.remove(&item.memory.id).unwrap_or_default();
        }
    }
    items
}

#[derive(Serialize)]
pub struct MemoriesResult {
    pub memories: Vec<MemoryItem>,
}

async fn search(
    state: &Arc<ServerState>,
    query: Option<&str>,
    status: Option<Status>,
    limit: usize,
) -> Result<MemoriesResult> {
    let service = service(state)?;
    let memories = match query.map(str::trim).filter(|q| !q.is_empty()) {
        Some(q) => service
            .recall(q, project(state), limit)
            .await
            .map_err(|e| fail(state, e))?
            .into_iter()
            .map(|h| MemoryItem {
                memory: h.memory,
                score: Some(h.score),
                anchors: Vec::new(),
            })
            .collect(),
        None => service
            .list(
                project(state),
                ListFilter {
                    limit,
                    status,
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| fail(state, e))?
            .into_iter()
            .map(|memory| MemoryItem {
                memory,
                score: None,
                anchors: Vec::new(),
            })
            .collect(),
    };
    let memories = with_anchors(state, memories).await;
    Ok(MemoriesResult { memories })
}

pub async fn recall(state: &Arc<ServerState>, args: RecallArgs) -> Result<Option<LSPAny>> {
    let result = search(state, Some(&args.query), None, args.limit.unwrap_or(10)).await?;
    let line = if result.memories.is_empty() {
        format!(
            "Mira remembers nothing about `{}`",
            crate::memory::memories::short(&args.query, 40)
        )
    } else {
        let top: Vec<String> = result
            .memories
            .iter()
            .take(3)
            .map(|m| match m.anchor_label() {
                Some(at) => format!(
                    "#{} {} {at}",
                    m.memory.id,
                    crate::memory::memories::short(&m.memory.body, 40)
                ),
                None => format!(
                    "#{} {}",
                    m.memory.id,
                    crate::memory::memories::short(&m.memory.body, 50)
                ),
            })
            .collect();
        format!("Mira recalls: {}", top.join(" · "))
    };
    // A client with Mira's notifications (VS Code, the Neovim plugin) lists the memories
    // itself; a plain one (Helix) sees them only in this line.
    if !state.config().config.notifications {
        state.show(MessageType::INFO, line);
    }
    to_any(&result)
}

pub async fn forget(state: &Arc<ServerState>, args: ForgetArgs) -> Result<Option<LSPAny>> {
    let service = service(state)?;
    let m = if args.restore {
        service.restore(args.id).await
    } else {
        service.forget(args.id).await
    }
    .map_err(|e| fail(state, e))?;
    let verb = if args.restore { "restored" } else { "forgot" };
    state.show(
        MessageType::INFO,
        format!(
            "Mira {verb} #{}: {}",
            m.id,
            crate::memory::memories::short(&m.body, 60)
        ),
    );
    to_any(&m)
}

/// `mira/memories {query?, limit?, status?}`: recall when a query is given, else the newest
/// memories — active ones, or those in `status` (`"retracted"`: what a client offers to restore).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoriesParams {
    #[serde(default)]
    pub query: Option<String>,
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(default)]
    pub status: Option<Status>,
}

pub async fn memories(state: &Arc<ServerState>, params: MemoriesParams) -> Result<MemoriesResult> {
    let query = params
        .query
        .as_deref()
        .map(str::trim)
        .filter(|q| !q.is_empty());
    if query.is_some() && params.status.is_some_and(|s| s != Status::Active) {
        return Err(Error::invalid_params(
            "`status` lists memories; it cannot be combined with `query` (recall searches active memories only)",
        ));
    }
    search(
        state,
        query,
        params.status,
        params.limit.unwrap_or(50).clamp(1, 500),
    )
    .await
}

/// `mira/goals {all?}` → `{goals: [...]}`: active goals (all with `all`), for clients' pickers.
#[derive(Debug, Default, Deserialize)]
pub struct GoalsParams {
    #[serde(default)]
    pub all: bool,
}

#[derive(Serialize)]
pub struct GoalsResult {
    pub goals: Vec<crate::memory::goals::Goal>,
}

pub async fn goals(state: &Arc<ServerState>, params: GoalsParams) -> Result<GoalsResult> {
    let service = service(state)?;
    let goals = service
        .goals(project(state), params.all)
        .await
        .map_err(|e| fail(state, e))?;
    Ok(GoalsResult { goals })
}

/// `mira/tasks {goal?, all?}` → `{tasks: [...]}`: open tasks (all with `all`), of one goal when
/// `goal` is given, for clients' trees and pickers.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TasksParams {
    #[serde(default)]
    pub goal: Option<i64>,
    #[serde(default)]
    pub all: bool,
}

#[derive(Serialize)]
pub struct TasksResult {
    pub tasks: Vec<crate::memory::goals::Task>,
}

pub async fn tasks(state: &Arc<ServerState>, params: TasksParams) -> Result<TasksResult> {
    let service = service(state)?;
    let tasks = service
        .tasks(project(state), params.goal, params.all)
        .await
        .map_err(|e| fail(state, e))?;
    Ok(TasksResult { tasks })
}
