//! `workspace/executeCommand`: parse into a typed command, dispatch, answer at once.
//! Anything slow is spawned; the reply never waits for the client or a model.

use super::state::ServerState;
use crate::llm::{ProviderSettings, server_report};
use crate::lsp::ext::{self as commands, Command};
use crate::lsp::status::{IndexSummary, Status};
use serde::Serialize;
use std::sync::Arc;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::{ExecuteCommandParams, LSPAny, MessageType};

pub async fn execute(
    state: &Arc<ServerState>,
    params: ExecuteCommandParams,
) -> Result<Option<LSPAny>> {
    let command = commands::parse(&params.command, params.arguments).map_err(|e| {
        let msg = e.to_string();
        // Helix ignores command results: say it where the user looks.
        state.show(MessageType::ERROR, format!("Mira: {msg}"));
        Error::invalid_params(msg)
    })?;
    match command {
        Command::Remember(args) => super::memory::remember(state, args).await,
        Command::Recall(args) => super::memory::recall(state, args).await,
        Command::Forget(args) => super::memory::forget(state, args).await,
        Command::Ask(args) => report(state, super::chat::ask(state, args)),
        Command::AskSymbol(args) => report(state, super::chat::ask_symbol(state, args).await),
        Command::Explain(args) => report(state, super::chat::explain(state, args).await),
        Command::Fix(args) => report(state, super::chat::fix(state, args).await),
        Command::Edit(args) => report(state, super::chat::edit(state, args).await),
        Command::Cancel(args) => Ok(Some(super::chat::cancel(state, args))),
        Command::ApplyProposal(a) => {
            report(state, super::chat::apply_proposal(state, a.proposal).await)
        }
        Command::RejectProposal(a) => {
            report(state, super::chat::reject_proposal(state, a.proposal).await)
        }
        Command::OpenConversation => Ok(Some(super::chat::open_conversation(state))),
        Command::Status => status(state).await,
        Command::Reindex => super::symbols::reindex(state),
        Command::Models => report(state, models(state).await),
    }
}

/// A command's result, or its error said where Helix users look too.
fn report(
    state: &Arc<ServerState>,
    r: std::result::Result<LSPAny, String>,
) -> Result<Option<LSPAny>> {
    r.map(Some).map_err(|msg| {
        state.show(MessageType::ERROR, format!("Mira: {msg}"));
        Error::invalid_params(msg)
    })
}

async fn status(state: &Arc<ServerState>) -> Result<Option<LSPAny>> {
    let session = state.session().ok_or_else(Error::invalid_request)?;
    let (schema_version, attached) = match &session.store {
        Ok(store) => {
            let store = store.clone();
            tokio::task::spawn_blocking(move || crate::session::store_facts(&store))
                .await
                .unwrap_or((None, 0))
        }
        Err(_) => (None, 0),
    };
    let index = match state.index.handle() {
        Some(h) => tokio::time::timeout(std::time::Duration::from_millis(40), h.status())
            .await
            .ok()
            .and_then(|r| r.ok())
            .map(|s| IndexSummary::new(&s, &h.extra_folders())),
        None => None,
    };
    let config = state.config();
    let report = Status {
        index,
        version: env!("CARGO_PKG_VERSION"),
        pid: std::process::id(),
        project: (&session.project).into(),
        database: session
            .store
            .as_ref()
            .ok()
            .map(|s| s.path().display().to_string()),
        schema_version,
        store_error: session.store.as_ref().err().cloned(),
        attached_processes: attached,
        position_encoding: session.encoding.name(),
        open_documents: state.documents().len(),
        provider: config.config.provider.name.map(|p| p.as_str().to_string()),
    };
    state.show(MessageType::INFO, report.summary());
    serde_json::to_value(&report)
        .map(Some)
        .map_err(|e| Error::invalid_params(e.to_string()))
}

/// `mira.models`: what the configured provider's server lists, and the model in use.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelList {
    /// The model Mira asks for (`provider.model`, the editor's setting included).
    pub model: String,
    pub base_url: String,
    /// Whether the server lists `model` (llama.cpp serves one model under any name).
    pub available: bool,
    /// The window Mira budgets for `model`, in tokens, and that said with where it came from.
    pub window: usize,
    pub window_described: String,
    /// Sorted by id.
    pub models: Vec<ListedModelInfo>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedModelInfo {
    pub id: String,
    /// The window the listing states, when it states one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<usize>,
    /// This is the model Mira asks for.
    pub in_use: bool,
}

/// How long `mira.models` waits for the model server in all (a loopback server that is down
/// refuses at once; one that hangs must not leave the editor's picker waiting).
const MODELS_PATIENCE: std::time::Duration = std::time::Duration::from_secs(5);

/// Asks the provider's server for its models (`llm::server_report`, as `mira models` does).
/// Only the configuration snapshot is taken from the state: no lock is held while waiting.
async fn models(state: &Arc<ServerState>) -> std::result::Result<LSPAny, String> {
    let config = state.config();
    let mut settings = ProviderSettings::resolve(&config.config.provider, &config.keys)
        .map_err(|e| format!("cannot list models: {e}"))?;
    settings.timeouts.connect = settings.timeouts.connect.min(MODELS_PATIENCE);
    let base_url = settings.base_url.clone();
    let report = tokio::time::timeout(MODELS_PATIENCE, server_report(settings))
        .await
        .map_err(|_| {
            format!(
                "the model server at {base_url} did not answer within {}s",
                MODELS_PATIENCE.as_secs()
            )
        })?
        .map_err(|e| e.to_string())?;
    let available = report.has_model();
    let listed = report
        .models
        .map_err(|e| format!("cannot list the models at {base_url}: {e}"))?;
    let list = ModelList {
        available,
        window: report.window.tokens,
        window_described: report.window.describe(),
        models: listed
            .into_iter()
            .map(|m| ListedModelInfo {
                in_use: m.id == report.model,
                id: m.id,
                window: m.window,
            })
            .collect(),
        model: report.model,
        base_url: report.base_url,
    };
    serde_json::to_value(&list).map_err(|e| e.to_string())
}
