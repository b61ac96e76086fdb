//! The dispatch table: every LSP method Mira answers, and the handler that answers it.
//!
//! Handlers are plain functions over `&ServerState` in the feature modules; each entry here
//! only forwards. Text-sync handlers are synchronous functions (`text_sync`), so a document
//! is changed before the entry's future first yields: tower-lsp-server polls handlers
//! concurrently and would otherwise interleave them (tower-lsp#284).

use super::state::ServerState;
use super::text_sync::{self, DocumentState, DocumentStateParams, OutOfSyncParams};
use super::{chat, complete, lifecycle, memory, transport};
use std::sync::Arc;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, ClientSocket, LanguageServer, LspService};

pub struct Backend {
    pub state: Arc<ServerState>,
}

/// The standard methods are `LanguageServer`'s; Mira's own are registered here.
pub fn build(options: super::ServeOptions) -> (LspService<Backend>, ClientSocket) {
    LspService::build(|client| Backend::new(client, options))
        .custom_method("mira/documentState", Backend::document_state)
        .custom_method("mira/memories", Backend::memories)
        .custom_method("mira/goals", Backend::goals)
        .custom_method("mira/tasks", Backend::tasks)
        .custom_method(transport::OUT_OF_SYNC, Backend::out_of_sync)
        .custom_method("mira/history", Backend::history)
        .custom_method("mira/context", Backend::context)
        .custom_method("textDocument/inlineCompletion", Backend::inline_completion)
        .finish()
}

impl Backend {
    fn new(client: Client, options: super::ServeOptions) -> Self {
        Backend {
            state: Arc::new(ServerState::new(client, options)),
        }
    }

    async fn document_state(&self, params: DocumentStateParams) -> Result<DocumentState> {
        text_sync::document_state(&self.state, params)
    }

    async fn out_of_sync(&self, params: OutOfSyncParams) {
        text_sync::out_of_sync(&self.state, params)
    }

    async fn memories(&self, params: memory::MemoriesParams) -> Result<memory::MemoriesResult> {
        memory::memories(&self.state, params).await
    }

    async fn goals(&self, params: memory::GoalsParams) -> Result<memory::GoalsResult> {
        memory::goals(&self.state, params).await
    }

    async fn tasks(&self, params: memory::TasksParams) -> Result<memory::TasksResult> {
        memory::tasks(&self.state, params).await
    }

    async fn history(
        &self,
        params: chat::HistoryParams,
    ) -> Result<Vec<crate::agent::conversation::TurnView>> {
        chat::history(&self.state, params).await
    }

    async fn context(&self, params: chat::ContextParams) -> Result<chat::ContextReport> {
        chat::context(&self.state, params).await
    }

    async fn inline_completion(
        &self,
        params: InlineCompletionParams,
    ) -> Result<Option<InlineCompletionResponse>> {
        complete::inline_completion(&self.state, params).await
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        lifecycle::initialize(&self.state, params).await
    }

    async fn initialized(&self, _: InitializedParams) {
        lifecycle::initialized(&self.state)
    }

    async fn shutdown(&self) -> Result<()> {
        lifecycle::shutdown(&self.state).await
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        text_sync::did_open(&self.state, params)
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        text_sync::did_change(&self.state, params)
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        text_sync::did_save(&self.state, params)
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        text_sync::did_close(&self.state, params)
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        lifecycle::did_change_workspace_folders(&self.state, params)
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        lifecycle::did_change_configuration(&self.state, params)
    }

    /// Once initialized, `lsp::direct` answers documentSymbol with the same handler and
    /// never reaches this entry (tower-lsp-server would serialize through a `Value`).
    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        super::symbols::document_symbol(&self.state, params).await
    }

    async fn symbol(
        &self,
        params: WorkspaceSymbolParams,
    ) -> Result<Option<WorkspaceSymbolResponse>> {
        super::symbols::workspace_symbol(&self.state, params).await
    }

    async fn goto_definition(
        &self,
        params: GotoDefinitionParams,
    ) -> Result<Option<GotoDefinitionResponse>> {
        super::symbols::goto_definition(&self.state, params).await
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        super::symbols::hover(&self.state, params).await
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        super::actions::code_action(&self.state, params).await
    }

    async fn code_action_resolve(&self, params: CodeAction) -> Result<CodeAction> {
        super::actions::resolve(params).await
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        super::commands::execute(&self.state, params).await
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        super::complete::completion(&self.state, params).await
    }
}
