//! State shared by every handler. Locks here are std mutexes held only for in-memory work,
//! never across an `.await`.

use crate::agent::TurnEvent;
use crate::complete::Completer;
use crate::config::{self, ConfigInputs, Env, Loaded};
use crate::documents::{DocEvent, Documents, PositionEncoding};
use crate::index::{IndexHandle, IndexProgress};
use crate::memory::MemoryService;
use crate::project::Project;
use crate::session::Turns;
use crate::session::anchors::Anchors;
use crate::store::Store;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock};
use std::time::Instant;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{ClientCapabilities, MessageType, Uri, WorkspaceFolder};

/// How the server is started: the environment it reads config from, and where it runs.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    pub env: Env,
    /// Fallback project location when the client names no workspace.
    pub cwd: PathBuf,
}

impl ServeOptions {
    pub fn from_process() -> Self {
        ServeOptions {
            env: Env::from_process(),
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
        }
    }
}

/// A place in a document the user pointed at.
#[derive(Clone, Debug, PartialEq)]
pub struct Focus {
    pub uri: tower_lsp_server::ls_types::Uri,
    pub range: tower_lsp_server::ls_types::Range,
}

/// Fixed once `initialize` has been answered.
pub struct Session {
    pub encoding: PositionEncoding,
    pub client_name: Option<String>,
    pub capabilities: ClientCapabilities,
    /// What the client can do, looked up once from `capabilities`.
    pub features: super::features::ClientFeatures,
    pub project: Project,
    /// The store, or why it could not be opened (shown to the user; Mira keeps serving
    /// documents without it).
    pub store: Result<Store, String>,
    pub session_row: Option<i64>,
}

/// Chat state of one server: the turns (`session::Turns`: the agent, rebuilt when the
/// configuration changes, and the running turns by id) and the writer task (`lsp/chat`).
#[derive(Default)]
pub struct Chat {
    pub(super) turns: Arc<Turns>,
    pub(super) writer: OnceLock<UnboundedSender<ChatOut>>,
}

/// What the chat's writer task is told, in order (`lsp/chat/writer.rs`).
pub(super) enum ChatOut {
    Event {
        turn: String,
        event: TurnEvent,
    },
    /// Text for the transcript outside the model's stream (a proposal's diff).
    Note {
        text: String,
    },
    Open,
    /// The client closed this document (didClose); the writer's if it is the transcript.
    Closed(Uri),
}

/// The index's place in the server state (`lsp/symbols.rs` starts it).
#[derive(Default)]
pub struct IndexSlot {
    pub(super) handle: OnceLock<IndexHandle>,
    pub(super) progress: Mutex<Option<UnboundedReceiver<IndexProgress>>>,
}

/// The completer, built once at `initialize` (or never, when no provider is configured;
/// `lsp/complete.rs`).
#[derive(Default)]
pub struct CompleteSlot {
    pub(super) completer: Mutex<Option<Arc<Completer>>>,
}

/// Editor-side bookkeeping for the actions (`lsp/editor.rs`).
#[derive(Default)]
pub struct EditorState {
    /// Memories anchored to symbols, watched through the index.
    pub anchors: Anchors,
    pub(super) pending_anchor: Mutex<Option<(Focus, Instant)>>,
    pub(super) proposals: Mutex<Vec<(i64, PathBuf)>>,
    /// Documents whose edits could not be read or applied: Mira's text drifted from the
    /// editor's, so their changes are ignored until the editor opens them again.
    pub(super) out_of_sync: Mutex<HashSet<Uri>>,
}

pub struct ServerState {
    pub client: Client,
    pub options: ServeOptions,
    /// Running turns, the agent and the transcript writer (lsp/chat.rs).
    pub chat: Chat,
    documents: Mutex<Documents>,
    session: OnceLock<Session>,
    config: RwLock<Arc<Loaded>>,
    folders: Mutex<Vec<WorkspaceFolder>>,
    doc_subscribers: Mutex<Vec<UnboundedSender<DocEvent>>>,
    shutdown_requested: AtomicBool,
    /// Where the user last was, as far as Mira can tell (hover, code actions): typed commands
    /// without a location (Helix's `:lsp-workspace-command mira.ask …`) act there.
    last_focus: Mutex<Option<Focus>>,
    pub index: IndexSlot,
    /// Anchored-memory bookkeeping and pending proposals for code actions.
    pub editor: EditorState,
    /// Set once the store is open (see `lsp::memory::start`).
    memory: OnceLock<MemoryService>,
    /// Inline completion (`lsp::complete`), when a provider is configured.
    pub complete: CompleteSlot,
    /// Said once `initialized` arrives: the client drops notifications sent earlier.
    startup_notes: Mutex<Vec<(MessageType, String)>>,
}

impl ServerState {
    pub fn new(client: Client, options: ServeOptions) -> Self {
        // Until initialize brings the project and editor layers, env + files from the cwd.
        let config = config::load(&ConfigInputs {
            env: options.env.clone(),
            ..Default::default()
        })
        .unwrap_or_else(|_| Loaded::defaults(&options.env));
        ServerState {
            client,
            options,
            chat: Default::default(),
            documents: Mutex::default(),
            session: OnceLock::new(),
            config: RwLock::new(Arc::new(config)),
            folders: Mutex::default(),
            doc_subscribers: Mutex::default(),
            shutdown_requested: AtomicBool::new(false),
            last_focus: Mutex::default(),
            index: Default::default(),
            editor: Default::default(),
            memory: OnceLock::new(),
            complete: Default::default(),
            startup_notes: Mutex::default(),
        }
    }

    /// Kept until `initialized`, when the client listens.
    pub(super) fn note(&self, typ: MessageType, message: String) {
        self.startup_notes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((typ, message));
    }

    pub(super) fn take_startup_notes(&self) -> Vec<(MessageType, String)> {
        std::mem::take(&mut *self.startup_notes.lock().unwrap_or_else(|e| e.into_inner()))
    }

    pub fn documents(&self) -> MutexGuard<'_, Documents> {
        self.documents.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn session(&self) -> Option<&Session> {
        self.session.get()
    }

    pub(super) fn set_session(&self, s: Session) {
        let _ = self.session.set(s);
    }

    /// UTF-16 until negotiated: the LSP default every client understands.
    pub fn encoding(&self) -> PositionEncoding {
        self.session()
            .map(|s| s.encoding)
            .unwrap_or(PositionEncoding::Utf16)
    }

    pub fn store(&self) -> Result<&Store, String> {
        match self.session() {
            None => Err("Mira is not initialized yet".into()),
            Some(s) => s.store.as_ref().map_err(Clone::clone),
        }
    }

    pub fn config(&self) -> Arc<Loaded> {
        self.config
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub(super) fn set_config(&self, loaded: Loaded) {
        *self.config.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(loaded);
    }

    pub fn folders(&self) -> MutexGuard<'_, Vec<WorkspaceFolder>> {
        self.folders.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Receive every document event in client order (the index actor subscribes here).
    pub fn subscribe_documents(&self, tx: UnboundedSender<DocEvent>) {
        self.doc_subscribers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(tx);
    }

    /// Synchronous: called in the handler's prefix, so events keep arrival order.
    pub(super) fn publish(&self, event: DocEvent) {
        let mut subs = self
            .doc_subscribers
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        subs.retain(|tx| tx.send(event.clone()).is_ok());
    }

    pub fn memory(&self) -> Option<&MemoryService> {
        self.memory.get()
    }

    pub(super) fn set_memory(&self, m: MemoryService) {
        let _ = self.memory.set(m);
    }

    pub fn set_focus(&self, focus: Focus) {
        *self.last_focus.lock().unwrap_or_else(|e| e.into_inner()) = Some(focus);
    }

    pub fn last_focus(&self) -> Option<Focus> {
        self.last_focus
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub fn request_shutdown(&self) {
        self.shutdown_requested.store(true, Ordering::SeqCst);
    }

    pub fn shutdown_requested(&self) -> bool {
        self.shutdown_requested.load(Ordering::SeqCst)
    }

    /// `window/logMessage`, sent from a task so no handler waits on the client.
    pub fn log(&self, typ: MessageType, message: impl Into<String>) {
        let message = message.into();
        match typ {
            MessageType::ERROR => tracing::error!("{message}"),
            MessageType::WARNING => tracing::warn!("{message}"),
            _ => tracing::info!("{message}"),
        }
        let client = self.client.clone();
        tokio::spawn(async move { client.log_message(typ, message).await });
    }

    /// `window/showMessage`: one short line the user sees (Helix: the status line).
    pub fn show(&self, typ: MessageType, message: impl Into<String>) {
        let message = message.into();
        let client = self.client.clone();
        tokio::spawn(async move { client.show_message(typ, message).await });
    }
}
