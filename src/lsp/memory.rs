//! Memory over LSP: `mira.remember`, `mira.recall`, `mira.forget` and the `mira/memories`
//! request. Thin: convert arguments, call [`MemoryService`], convert results. Helix ignores
//! command results, so each command also says its outcome in one `window/showMessage` line.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::{LSPAny, MessageType};

use super::state::ServerState;
use crate::embed::{EmbedError, Embedder};
use crate::memory::{
    ListFilter, Memory, MemoryError, MemoryKind, MemoryService, Outcome, ProjectRef,
    RememberRequest,
};
use crate::surface::commands::{ForgetArgs, MemoryKindArg, RecallArgs, RememberArgs, ScopeArg};

/// Builds the memory service once the session (store + config) exists, and turns embeddings
/// on when configured. A local model loads on a blocking thread after `initialize` has
/// answered (loading takes ~100 ms); recall uses BM25 until it is ready. Returns a warning for
/// the user when the embedder settings are unusable (recall then stays on full-text search).
pub fn start(state: &Arc<ServerState>) -> Option<String> {
    let session = state.session()?;
    let store = session.store.as_ref().ok()?;
    let loaded = state.config();
    let memory = &loaded.config.memory;
    let service = MemoryService::new(store.clone(), None, memory.recall);
    state.set_memory(service.clone());
    let warn =
        |e: EmbedError| format!("Mira: embeddings are off, recall uses full-text search: {e}");
    if let Err(e) = Embedder::check_config(&memory.embedder) {
        return Some(warn(e));
    }
    let cfg = memory.embedder.clone();
    let openai_key = loaded.keys.openai.clone();
    if !Embedder::loads_a_model(&cfg) {
        return match Embedder::from_config(&cfg, openai_key.as_ref()) {
            Ok(Some(e)) => {
                service.set_embedder(e);
                service.spawn_embedding_worker();
                None
            }
            Ok(None) => None,
            Err(e) => Some(warn(e)),
        };
    }
    let state = state.clone();
    tokio::spawn(async move {
        let loaded =
            tokio::task::spawn_blocking(move || Embedder::from_config(&cfg, openai_key.as_ref()))
                .await;
        match loaded {
            Ok(Ok(Some(e))) => {
                tracing::info!(model = %e.model_id(), "embedder ready");
                service.set_embedder(e);
                service.spawn_embedding_worker();
            }
            Ok(Ok(None)) => {}
            Ok(Err(e)) => state.show(MessageType::WARNING, warn(e)),
            Err(e) => state.show(
                MessageType::WARNING,
                format!("Mira: loading the embedder failed: {e}"),
            ),
        }
    });
    None
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

fn kind(k: MemoryKindArg) -> MemoryKind {
    match k {
        MemoryKindArg::Fact => MemoryKind::Fact,
        MemoryKindArg::Preference => MemoryKind::Preference,
        MemoryKindArg::Decision => MemoryKind::Decision,
        MemoryKindArg::Correction => MemoryKind::Correction,
    }
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

pub async fn remember(state: &Arc<ServerState>, args: RememberArgs) -> Result<Option<LSPAny>> {
    let service = service(state)?;
    let req = RememberRequest {
        text: args.text,
        kind: args.kind.map_or(MemoryKind::Fact, kind),
        project_scoped: args.scope == Some(ScopeArg::Project),
        corrects: args.corrects,
        anchors: Vec::new(),
    };
    let r = service
        .remember(req, project(state))
        .await
        .map_err(|e| fail(state, e))?;
    let m = &r.memory;
    let line = format!("Mira: {}", r.describe());
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
}

#[derive(Serialize)]
pub struct MemoriesResult {
    pub memories: Vec<MemoryItem>,
}

async fn search(
    state: &Arc<ServerState>,
    query: Option<&str>,
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
            })
            .collect(),
        None => service
            .list(
                project(state),
                ListFilter {
                    limit,
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| fail(state, e))?
            .into_iter()
            .map(|memory| MemoryItem {
                memory,
                score: None,
            })
            .collect(),
    };
    Ok(MemoriesResult { memories })
}

pub async fn recall(state: &Arc<ServerState>, args: RecallArgs) -> Result<Option<LSPAny>> {
    let result = search(state, Some(&args.query), args.limit.unwrap_or(10)).await?;
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
            .map(|m| {
                format!(
                    "#{} {}",
                    m.memory.id,
                    crate::memory::memories::short(&m.memory.body, 50)
                )
            })
            .collect();
        format!("Mira recalls: {}", top.join(" · "))
    };
    state.show(MessageType::INFO, line);
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

/// `mira/memories {query?, limit?}`: recall when a query is given, else the newest memories.
#[derive(Debug, Default, Deserialize)]
pub struct MemoriesParams {
    #[serde(default)]
    pub query: Option<String>,
    #[serde(default)]
    pub limit: Option<usize>,
}

pub async fn memories(state: &Arc<ServerState>, params: MemoriesParams) -> Result<MemoriesResult> {
    search(
        state,
        params.query.as_deref(),
        params.limit.unwrap_or(50).clamp(1, 500),
    )
    .await
}
