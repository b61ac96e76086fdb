//! The typed configuration. Every field has a default, so any layer may set any subset.
//! Each section's type lives in the module that reads it (`[provider]` in `llm`,
//! `[index]` in `index`, `[agent]` in `agent`, …); `Config` composes them. A new key is one
//! field in its section; `mira doctor` and unknown-key detection pick it up.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

pub use crate::agent::config::{AgentConfig, BashPolicy, EditsConfig};
pub use crate::complete::config::{CompletionConfig, CompletionProvider};
pub use crate::index::config::IndexConfig;
use crate::llm::ProviderConfig;
pub use crate::memory::config::{MemoryConfig, RecallWeights};

#[derive(Clone, Debug, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Config {
    /// Send Mira's own notifications (mira/delta, mira/turnFinished, …). Richer clients
    /// (our VS Code extension and Neovim plugin) turn this on in initializationOptions.
    pub notifications: bool,
    pub project: ProjectSection,
    pub store: StoreConfig,
    pub provider: ProviderConfig,
    pub index: IndexConfig,
    pub memory: MemoryConfig,
    pub agent: AgentConfig,
    pub edits: EditsConfig,
    pub log: LogConfig,
    pub completion: CompletionConfig,
}

/// Settings that only make sense in `.mira/project.toml`.
#[derive(Clone, Debug, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct ProjectSection {
    /// Shown in the transcript and `mira doctor`; defaults to the root folder's name.
    pub name: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct StoreConfig {
    /// Where `mira.db`, the transcript and logs live (`MIRA_HOME`).
    pub home: PathBuf,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            home: super::layers::default_home().unwrap_or_else(|| PathBuf::from(".mira-data")),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct LogConfig {
    /// tracing filter for Mira's log file (`MIRA_LOG`), e.g. "info" or "mira=debug".
    pub level: String,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            level: "info".into(),
        }
    }
}
