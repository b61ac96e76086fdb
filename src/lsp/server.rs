//! The `LanguageServer` implementation: protocol in, library calls out.
//!
//! Text-sync notifications mutate documents in their synchronous prefix — before any
//! `.await` — because tower-lsp-server polls handlers concurrently and would otherwise
//! interleave them (tower-lsp#284).

use super::capabilities;
use super::from_proto;
use super::state::{ServerState, Session};
use crate::config::{self, ConfigInputs, Loaded};
use crate::documents::{PositionEncoding, VersionCheck};
use crate::session::{EditorOpen, EditorWorkspace};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

pub struct Backend {
    pub state: Arc<ServerState>,
    /// Said once `initialized` arrives: the client drops notifications sent earlier.
    startup_notes: std::sync::Mutex<Vec<(MessageType, String)>>,
}

impl Backend {
    pub fn new(client: Client, options: super::ServeOptions) -> Self {
        Backend {
            state: Arc::new(ServerState::new(client, options)),
            startup_notes: Default::default(),
        }
    }

    fn note(&self, typ: MessageType, message: String) {
        self.startup_notes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((typ, message));
    }

    fn report_config(&self, loaded: &std::result::Result<Loaded, config::ConfigError>) {
        match loaded {
            Ok(l) => {
                for u in &l.unknown {
                    self.note(MessageType::WARNING, format!("Mira: {u} (ignored)"));
                }
            }
            Err(e) => self.note(
                MessageType::ERROR,
                format!("Mira: configuration error, using defaults: {e}"),
            ),
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct DocumentStateParams {
    pub uri: Uri,
}

#[derive(Debug, Serialize)]
pub struct DocumentState {
    pub version: i32,
    pub text: String,
}

impl Backend {
    /// `mira/documentState {uri}` → `{version, text}`: Mira's view of an open document.
    pub async fn document_state(&self, params: DocumentStateParams) -> Result<DocumentState> {
        let docs = self.state.documents();
        let doc = docs
            .get(&params.uri)
            .ok_or_else(|| Error::invalid_params(format!("{} is not open", params.uri.as_str())))?;
        Ok(DocumentState {
            version: doc.version(),
            text: doc.text(),
        })
    }
}

/// What the transport sends in place of a didChange it could not read.
#[derive(Debug, Deserialize)]
pub struct OutOfSyncParams {
    pub uri: String,
    pub reason: String,
}

impl Backend {
    /// `mira/documentOutOfSync {uri, reason}` (from `lsp::transport`): an edit was lost.
    pub async fn out_of_sync(&self, params: OutOfSyncParams) {
        match params.uri.parse::<Uri>() {
            Ok(uri) => lost_track(&self.state, &uri, &params.reason),
            Err(_) => self.state.show(
                MessageType::ERROR,
                format!(
                    "Mira: an edit could not be read and names no document ({}); reopen your files",
                    params.reason
                ),
            ),
        }
    }
}

/// Mira's copy of `uri` no longer matches the editor's: stop applying edits to it and say so
/// once, with the way out (LSP has no request for the full text; reopening sends it).
fn lost_track(state: &ServerState, uri: &Uri, why: &str) {
    if !state.editor.mark_out_of_sync(uri) {
        return;
    }
    let name = uri
        .as_str()
        .rsplit('/')
        .next()
        .unwrap_or(uri.as_str())
        .to_string();
    state.log(
        MessageType::ERROR,
        format!("Mira: {} is out of sync: {why}", uri.as_str()),
    );
    state.show(
        MessageType::ERROR,
        format!(
            "Mira lost track of {name}: an edit could not be applied ({why}). Close and reopen it \
             (`:e!` in Neovim, `:reload` in Helix) so Mira reads it again"
        ),
    );
}

impl Backend {
    /// `mira/memories {query?, limit?}` → `{memories: [...]}`.
    pub async fn memories(
        &self,
        params: super::memory::MemoriesParams,
    ) -> Result<super::memory::MemoriesResult> {
        super::memory::memories(&self.state, params).await
    }

    /// `mira/goals {all?}` → `{goals: [...]}`.
    pub async fn goals(
        &self,
        params: super::memory::GoalsParams,
    ) -> Result<super::memory::GoalsResult> {
        super::memory::goals(&self.state, params).await
    }

    /// `mira/tasks {goal?, all?}` → `{tasks: [...]}`.
    pub async fn tasks(
        &self,
        params: super::memory::TasksParams,
    ) -> Result<super::memory::TasksResult> {
        super::memory::tasks(&self.state, params).await
    }

    /// `mira/history {limit, before?}` → the newest turns, oldest first.
    pub async fn history(
        &self,
        params: super::chat::HistoryParams,
    ) -> Result<Vec<crate::agent::conversation::TurnView>> {
        super::chat::history(&self.state, params).await
    }

    /// `mira/context {uri?, position?, range?, question?}`: what Mira would send the model.
    pub async fn context(
        &self,
        params: super::chat::ContextParams,
    ) -> Result<super::chat::ContextReport> {
        super::chat::context(&self.state, params).await
    }

    /// `textDocument/inlineCompletion` → `InlineCompletionList` (empty when superseded).
    pub async fn inline_completion(
        &self,
        params: InlineCompletionParams,
    ) -> Result<Option<InlineCompletionResponse>> {
        super::complete::inline_completion(&self.state, params).await
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let encoding = PositionEncoding::negotiate(
            params
                .capabilities
                .general
                .as_ref()
                .and_then(|g| g.position_encodings.as_deref()),
        );
        let client_name = params.client_info.as_ref().map(|c| c.name.clone());
        let folders = params.workspace_folders.clone().unwrap_or_default();
        #[allow(deprecated)]
        let root = folders
            .first()
            .and_then(|f| from_proto::path(&f.uri))
            .or_else(|| params.root_uri.as_ref().and_then(from_proto::path))
            .unwrap_or_else(|| self.state.options.cwd.clone());
        let editor = params
            .initialization_options
            .as_ref()
            .and_then(|o| o.get("mira"))
            .cloned();
        *self.state.folders() = folders;

        let open = EditorOpen {
            root,
            env: self.state.options.env.clone(),
            editor,
            client: client_name.clone(),
        };
        // Project detection, config files and SQLite are blocking work: off the runtime.
        let EditorWorkspace {
            project,
            loaded,
            store,
            session_row,
        } = tokio::task::spawn_blocking(move || EditorWorkspace::open(open))
            .await
            .map_err(|e| Error {
                code: tower_lsp_server::jsonrpc::ErrorCode::InternalError,
                message: format!("initialization failed: {e}").into(),
                data: None,
            })?;

        self.report_config(&loaded);
        if let Err(e) = &store {
            self.note(
                MessageType::ERROR,
                format!("Mira: memory and conversation are unavailable: {e}"),
            );
        }
        self.state
            .set_config(loaded.unwrap_or_else(|_| Loaded::defaults(&self.state.options.env)));
        tracing::info!(
            client = client_name.as_deref().unwrap_or("unknown"),
            encoding = encoding.name(),
            project = %project.root.display(),
            "initialize"
        );
        let features =
            super::features::ClientFeatures::of(&params.capabilities, client_name.as_deref());
        self.state.set_session(Session {
            encoding,
            client_name,
            capabilities: params.capabilities,
            features,
            project,
            store,
            session_row,
        });
        super::symbols::start_index(&self.state);
        if let Some(warning) = super::memory::start(&self.state) {
            self.note(MessageType::WARNING, warning);
        }
        super::editor::start(&self.state);
        let mut capabilities = capabilities::server_capabilities(encoding, &features);
        if let Some(warning) = super::complete::start(&self.state, &mut capabilities) {
            self.note(MessageType::WARNING, warning);
        }
        Ok(InitializeResult {
            capabilities,
            server_info: Some(ServerInfo {
                name: "mira".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        super::symbols::report_progress(&self.state);
        let notes =
            std::mem::take(&mut *self.startup_notes.lock().unwrap_or_else(|e| e.into_inner()));
        for (typ, message) in notes {
            self.state.log(typ, message.clone());
            if typ == MessageType::ERROR {
                self.state.show(typ, message);
            }
        }
    }

    async fn shutdown(&self) -> Result<()> {
        self.state.request_shutdown();
        end_session(&self.state).await;
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let d = params.text_document;
        self.state.editor.resynced(&d.uri);
        let event = self
            .state
            .documents()
            .open(d.uri, d.language_id, d.version, &d.text);
        self.state.publish(event);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        let version = params.text_document.version;
        if self.state.editor.is_out_of_sync(&uri) {
            // Applying more edits to a drifted copy would only make it worse.
            return;
        }
        let result = self.state.documents().change(
            &uri,
            version,
            &params.content_changes,
            self.state.encoding(),
        );
        match result {
            Ok((event, check)) => {
                self.state.publish(event);
                if let VersionCheck::NotIncreasing { previous } = check {
                    self.state.log(
                        MessageType::WARNING,
                        format!(
                            "Mira: {} went from version {previous} to {version}; applied in arrival order",
                            uri.as_str()
                        ),
                    );
                }
            }
            Err(e) => lost_track(&self.state, &uri, &e.to_string()),
        }
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        self.state
            .publish(crate::documents::DocEvent::saved(&params.text_document.uri));
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let event = self.state.documents().close(&params.text_document.uri);
        if let Some(event) = event {
            self.state.publish(event);
        }
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        let event = params.event;
        {
            let mut folders = self.state.folders();
            folders.retain(|f| !event.removed.iter().any(|r| r.uri == f.uri));
            folders.extend(event.added.iter().cloned());
        }
        super::symbols::folders_changed(&self.state, &event.added, &event.removed);
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        // Clients send either {mira: {...}} or the section itself.
        let editor = params
            .settings
            .get("mira")
            .cloned()
            .unwrap_or(params.settings);
        let Some(project_root) = self.state.session().map(|s| s.project.root.clone()) else {
            return;
        };
        let inputs = ConfigInputs {
            env: self.state.options.env.clone(),
            user_file: None,
            project_root: Some(project_root),
            editor: Some(editor),
        };
        match config::load(&inputs) {
            Ok(loaded) => {
                for u in &loaded.unknown {
                    self.state
                        .log(MessageType::WARNING, format!("Mira: {u} (ignored)"));
                }
                self.state.set_config(loaded);
            }
            Err(e) => self.state.show(
                MessageType::ERROR,
                format!("Mira: new settings rejected, keeping the previous ones: {e}"),
            ),
        }
    }

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

async fn end_session(state: &ServerState) {
    let Some(session) = state.session() else {
        return;
    };
    if let (Ok(store), Some(id)) = (&session.store, session.session_row) {
        let store = store.clone();
        let _ = tokio::task::spawn_blocking(move || EditorWorkspace::end(&store, id)).await;
    }
}
