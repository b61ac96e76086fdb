//! The session's life over LSP: `initialize` opens the workspace and starts the services,
//! `initialized` says what could not be said earlier, `shutdown` ends the session row, and
//! the workspace notifications (folders, settings) reach the services.

use super::capabilities;
use super::from_proto;
use super::state::{ServerState, Session};
use crate::config::{self, ConfigInputs, Loaded};
use crate::documents::PositionEncoding;
use crate::session::{EditorOpen, EditorWorkspace};
use std::sync::Arc;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;

pub async fn initialize(
    state: &Arc<ServerState>,
    params: InitializeParams,
) -> Result<InitializeResult> {
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
        .unwrap_or_else(|| state.options.cwd.clone());
    let editor = params
        .initialization_options
        .as_ref()
        .and_then(|o| o.get("mira"))
        .cloned();
    *state.folders() = folders;

    let open = EditorOpen {
        root,
        env: state.options.env.clone(),
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

    report_config(state, &loaded);
    if let Err(e) = &store {
        state.note(
            MessageType::ERROR,
            format!("Mira: memory and conversation are unavailable: {e}"),
        );
    }
    state.set_config(loaded.unwrap_or_else(|_| Loaded::defaults(&state.options.env)));
    tracing::info!(
        client = client_name.as_deref().unwrap_or("unknown"),
        encoding = encoding.name(),
        project = %project.root.display(),
        "initialize"
    );
    let features =
        super::features::ClientFeatures::of(&params.capabilities, client_name.as_deref());
    state.set_session(Session {
        encoding,
        client_name,
        capabilities: params.capabilities,
        features,
        project,
        store,
        session_row,
    });
    Ok(InitializeResult {
        capabilities: start_services(state, encoding, &features),
        server_info: Some(ServerInfo {
            name: "mira".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        }),
        offset_encoding: None,
    })
}

/// Index, memory, anchors and completion; what each could start decides what is advertised.
fn start_services(
    state: &Arc<ServerState>,
    encoding: PositionEncoding,
    features: &super::features::ClientFeatures,
) -> ServerCapabilities {
    super::symbols::start_index(state);
    if let Some(warning) = super::memory::start(state) {
        state.note(MessageType::WARNING, warning);
    }
    super::editor::start(state);
    let mut capabilities = capabilities::server_capabilities(encoding, features);
    if let Some(warning) = super::complete::start(state, &mut capabilities) {
        state.note(MessageType::WARNING, warning);
    }
    capabilities
}

fn report_config(state: &ServerState, loaded: &std::result::Result<Loaded, config::ConfigError>) {
    match loaded {
        Ok(l) => {
            for u in &l.unknown {
                state.note(MessageType::WARNING, format!("Mira: {u} (ignored)"));
            }
        }
        Err(e) => state.note(
            MessageType::ERROR,
            format!("Mira: configuration error, using defaults: {e}"),
        ),
    }
}

pub fn initialized(state: &ServerState) {
    super::symbols::report_progress(state);
    for (typ, message) in state.take_startup_notes() {
        state.log(typ, message.clone());
        if typ == MessageType::ERROR {
            state.show(typ, message);
        }
    }
}

pub async fn shutdown(state: &ServerState) -> Result<()> {
    state.request_shutdown();
    let Some(session) = state.session() else {
        return Ok(());
    };
    if let (Ok(store), Some(id)) = (&session.store, session.session_row) {
        let store = store.clone();
        let _ = tokio::task::spawn_blocking(move || EditorWorkspace::end(&store, id)).await;
    }
    Ok(())
}

pub fn did_change_workspace_folders(state: &ServerState, params: DidChangeWorkspaceFoldersParams) {
    let event = params.event;
    {
        let mut folders = state.folders();
        folders.retain(|f| !event.removed.iter().any(|r| r.uri == f.uri));
        folders.extend(event.added.iter().cloned());
    }
    super::symbols::folders_changed(state, &event.added, &event.removed);
}

pub fn did_change_configuration(state: &ServerState, params: DidChangeConfigurationParams) {
    // Clients send either {mira: {...}} or the section itself.
    let editor = params
        .settings
        .get("mira")
        .cloned()
        .unwrap_or(params.settings);
    let Some(project_root) = state.session().map(|s| s.project.root.clone()) else {
        return;
    };
    let inputs = ConfigInputs {
        env: state.options.env.clone(),
        user_file: None,
        project_root: Some(project_root),
        editor: Some(editor),
    };
    match config::load(&inputs) {
        Ok(loaded) => {
            for u in &loaded.unknown {
                state.log(MessageType::WARNING, format!("Mira: {u} (ignored)"));
            }
            state.set_config(loaded);
        }
        Err(e) => state.show(
            MessageType::ERROR,
            format!("Mira: new settings rejected, keeping the previous ones: {e}"),
        ),
    }
}
