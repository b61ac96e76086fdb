//! `Workspace::open`: the one way a face opens a project — the project detected from where it
//! starts, the effective configuration, the store, the memory service with the configured
//! embedder (built once, on first use), the API keys to redact, and for the editor the
//! session row. One error type, [`OpenError`], which knows its exit class.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::agent::ProjectInfo;
use crate::config::{self, ConfigError, ConfigInputs, Env, Loaded};
use crate::embed::{EmbedError, Embedder};
use crate::memory::MemoryService;
use crate::project::{self, Project};
use crate::redact::Redactor;
use crate::store::{Store, projects, sessions};

/// How an open failed, which decides the exit code: bad input or configuration is the user's
/// to fix (2); anything else is a failure (1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitClass {
    Usage,
    Failure,
}

impl ExitClass {
    pub fn code(self) -> u8 {
        match self {
            ExitClass::Usage => 2,
            ExitClass::Failure => 1,
        }
    }
}

/// Why a workspace could not be opened, worded so the user knows what to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenError {
    pub class: ExitClass,
    pub message: String,
}

impl OpenError {
    pub fn usage(message: impl Into<String>) -> OpenError {
        OpenError {
            class: ExitClass::Usage,
            message: message.into(),
        }
    }

    pub fn failure(message: impl Into<String>) -> OpenError {
        OpenError {
            class: ExitClass::Failure,
            message: message.into(),
        }
    }

    fn config(e: ConfigError) -> OpenError {
        OpenError::usage(format!(
            "{e}\nRun `mira doctor` to see the effective configuration."
        ))
    }

    fn embedder(e: EmbedError) -> OpenError {
        OpenError::usage(e.to_string())
    }
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for OpenError {}

/// An open project: what every command, `mira chat` and `mira mcp` work on.
pub struct Workspace {
    pub project: Project,
    pub loaded: Loaded,
    pub store: Store,
    memory: OnceLock<MemoryService>,
}

impl Workspace {
    /// Opens the project around `start` with the process's configuration (files and
    /// environment). Blocks (files, SQLite).
    pub fn open(start: &Path) -> Result<Workspace, OpenError> {
        Workspace::open_with(start, Env::from_process())
    }

    /// [`Workspace::open`] with the given environment.
    pub fn open_with(start: &Path, env: Env) -> Result<Workspace, OpenError> {
        let project = project::detect(start);
        let loaded = config::load(&ConfigInputs {
            env,
            user_file: None,
            project_root: Some(project.root.clone()),
            editor: None,
        })
        .map_err(OpenError::config)?;
        let store =
            Store::open(&loaded.database_path()).map_err(|e| OpenError::failure(e.to_string()))?;
        Ok(Workspace {
            project,
            loaded,
            store,
            memory: OnceLock::new(),
        })
    }

    /// The memory service with the configured embedder, built on first use (a local model
    /// loads here), so recall, context and the model's memory tools all rank alike.
    pub fn memory(&self) -> Result<MemoryService, OpenError> {
        if let Some(m) = self.memory.get() {
            return Ok(m.clone());
        }
        let memory = &self.loaded.config.memory;
        let embedder = Embedder::from_config(&memory.embedder, self.loaded.keys.openai.as_ref())
            .map_err(OpenError::embedder)?;
        let service = MemoryService::new(self.store.clone(), embedder, memory.recall_weights());
        Ok(self.memory.get_or_init(|| service).clone())
    }

    /// The project as the agent sees it, with its row in the store. Blocks (SQLite).
    pub fn project_info(&self) -> ProjectInfo {
        super::project_info(&self.store, &self.project)
    }

    /// The redaction rules plus the configured API keys: what everything Mira sends or shows
    /// passes through.
    pub fn redactor(&self) -> Redactor {
        Redactor::new(self.loaded.keys.secrets())
    }
}

/// What the editor's `initialize` asks for.
pub struct EditorOpen {
    /// The first workspace folder (else the root URI, else the server's directory).
    pub root: PathBuf,
    pub env: Env,
    /// `initializationOptions.mira`.
    pub editor: Option<serde_json::Value>,
    /// The client's name, recorded in the session row.
    pub client: Option<String>,
}

/// An editor's workspace: the language server keeps serving documents whatever fails, so
/// each part is its own result for the adapter to report.
pub struct EditorWorkspace {
    pub project: Project,
    pub loaded: Result<Loaded, ConfigError>,
    /// The store, or why it could not be opened.
    pub store: Result<Store, String>,
    /// This process in the store's `sessions` table, ended at shutdown.
    pub session_row: Option<i64>,
}

impl EditorWorkspace {
    /// Blocks (project detection, config files, SQLite): call off the async runtime.
    pub fn open(o: EditorOpen) -> EditorWorkspace {
        let project = project::detect(&o.root);
        let loaded = config::load(&ConfigInputs {
            env: o.env.clone(),
            user_file: None,
            project_root: Some(project.root.clone()),
            editor: o.editor,
        });
        let db = match &loaded {
            Ok(l) => l.database_path(),
            Err(_) => Loaded::defaults(&o.env).database_path(),
        };
        let store = Store::open(&db).map_err(|e| e.to_string());
        let session_row = store.as_ref().ok().and_then(|s| {
            s.write(|tx| {
                let pid = projects::ensure(tx, &project.root, &project.name)?;
                sessions::start(
                    tx,
                    sessions::SessionKind::Lsp,
                    o.client.as_deref(),
                    Some(pid),
                )
            })
            .ok()
        });
        EditorWorkspace {
            project,
            loaded,
            store,
            session_row,
        }
    }

    /// Marks the session row ended (at `shutdown`). Blocks (SQLite).
    pub fn end(store: &Store, row: i64) {
        let _ = store.write(|tx| sessions::end(tx, row));
    }
}

/// The store's schema version and how many Mira processes are attached to it (`mira.status`).
/// Blocks (SQLite).
pub fn store_facts(store: &Store) -> (Option<u32>, usize) {
    let schema = store.schema_version().ok();
    let live = store.read(sessions::live).map(|l| l.len()).unwrap_or(0);
    (schema, live)
}
