//! Shared setup for agent tests: a real store in a tempdir, a project directory, an agent
//! pointed at the mock server, and a host that records what the turn showed.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use futures::future::BoxFuture;
use mira::agent::{
    Agent, AgentSettings, Ask, EditOutcome, FileEdit, ProjectInfo, TurnEvent, TurnHost, TurnOutcome,
};
use mira::llm::{ProviderSettings, RetryPolicy};
use mira::store::Store;
use secrecy::SecretString;
use tokio_util::sync::CancellationToken;

use super::mock_llm::MockLlm;

#[derive(Default)]
pub struct RecordingHost {
    pub events: Mutex<Vec<TurnEvent>>,
    pub edits: Mutex<Vec<FileEdit>>,
    /// Write accepted edits to disk (like `mira ask --yes`).
    pub apply: bool,
    pub approve: bool,
}

impl TurnHost for RecordingHost {
    fn event(&self, event: TurnEvent) {
        self.events.lock().unwrap().push(event);
    }

    fn apply_edit(&self, edit: FileEdit) -> BoxFuture<'_, EditOutcome> {
        Box::pin(async move {
            self.edits.lock().unwrap().push(edit.clone());
            if self.apply {
                std::fs::write(&edit.path, &edit.new_text).unwrap();
                EditOutcome::Applied
            } else {
                EditOutcome::Rejected("the test host rejects edits".into())
            }
        })
    }

    fn approve(&self, _q: String) -> BoxFuture<'_, bool> {
        let a = self.approve;
        Box::pin(async move { a })
    }
}

impl RecordingHost {
    pub fn tool_results(&self) -> Vec<(String, bool, String)> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                TurnEvent::ToolResult { name, ok, summary } => {
                    Some((name.clone(), *ok, summary.clone()))
                }
                _ => None,
            })
            .collect()
    }
}

pub struct Setup {
    /// Holds the temporary folder for the test's lifetime.
    pub _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub store: Store,
    pub project: ProjectInfo,
}

impl Setup {
    pub fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(
            root.join("src/main.rs"),
            "fn main() {\n    println!(\"hello\");\n}\n",
        )
        .unwrap();
        let root = root.canonicalize().unwrap();
        let store = Store::open(&dir.path().join("home/mira.db")).unwrap();
        let project = ProjectInfo {
            id: None,
            root: root.clone(),
            name: "project".into(),
        };
        Setup {
            _dir: dir,
            root,
            store,
            project,
        }
    }

    pub fn db_path(&self) -> PathBuf {
        self.store.path().to_path_buf()
    }

    pub fn agent(&self, mock: &MockLlm, settings: AgentSettings) -> Agent {
        let kind = mock.wire.provider().parse().unwrap();
        let mut p = ProviderSettings::new(kind, mock.base_url(), mock.wire.model())
            .with_key(SecretString::from("test-key-not-secret"));
        p.retry = RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(100),
        };
        Agent::new(self.store.clone(), Ok(p), settings)
    }

    pub fn ask(&self, question: &str) -> Ask {
        Ask {
            turn: mira::agent::new_turn_id(),
            question: question.into(),
            project: self.project.clone(),
            editor: None,
            effort: None,
            source: "test",
        }
    }

    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }
}

pub async fn run(agent: &Agent, ask: Ask, host: &RecordingHost) -> TurnOutcome {
    agent.run(ask, host, &CancellationToken::new()).await
}

/// Every byte of the database files, WAL included: what "never stored" is checked against.
pub fn db_bytes(db: &Path) -> Vec<u8> {
    let mut all = Vec::new();
    for suffix in ["", "-wal", "-shm"] {
        let p = PathBuf::from(format!("{}{suffix}", db.display()));
        if let Ok(b) = std::fs::read(&p) {
            all.extend(b);
        }
    }
    all
}

pub fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}
