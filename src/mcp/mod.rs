//! `mira mcp`: the same memory, goals, tasks and code index as an MCP server over stdio (the
//! official `rmcp` SDK), so terminal agents — Claude Code, Codex CLI, Gemini CLI — share one
//! memory with the editors. Adapter only: each tool runs the model's own tool of the same name
//! (`agent::tools`, i.e. `MemoryService`, code search and the index) or `MemoryService`
//! directly; the session-start view is `agent::context::session_start`. stdout carries only
//! the protocol; everything sent passes `redact`.

mod project;
mod server;

use std::path::PathBuf;

use futures::future::BoxFuture;
use rmcp::ServiceExt;

use crate::agent::context::Budgets;
use crate::agent::{EditOutcome, FileEdit, TurnEvent, TurnHost};
use crate::memory::MemoryService;
use crate::store::Store;

pub use server::MiraMcp;

/// What the server runs on, opened by the CLI.
pub struct McpSetup {
    pub store: Store,
    pub memory: MemoryService,
    /// The project when the client names no root.
    pub cwd: PathBuf,
    /// Context budgets (the session-start view uses the turn's).
    pub budgets: Budgets,
    /// The rules plus the configured API keys, applied to everything sent.
    pub redactor: crate::redact::Redactor,
}

/// Serves on stdin/stdout until the client closes stdin.
pub async fn serve_stdio(setup: McpSetup) -> Result<(), String> {
    let service = MiraMcp::new(setup)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("the MCP session did not start: {e}"))?;
    let reason = service
        .waiting()
        .await
        .map_err(|e| format!("the MCP server stopped: {e}"))?;
    tracing::info!(?reason, "MCP session ended");
    Ok(())
}

/// The tools run without an editor: nothing is open, no edit is applied (MCP exposes none).
struct NoEditor;

impl TurnHost for NoEditor {
    fn event(&self, _event: TurnEvent) {}

    fn apply_edit(&self, _edit: FileEdit) -> BoxFuture<'_, EditOutcome> {
        Box::pin(async { EditOutcome::Rejected("no edits over MCP".into()) })
    }
}
