//! Layered configuration: defaults < user file < project file < environment < editor.
//!
//! Every layer is checked on its own (so an error names the file, line and key that caused
//! it), then merged as TOML tables while recording which layer set each key; the merged
//! table is deserialised once into the typed [`Config`]. `mira doctor` prints that record.

mod compose;
mod layers;
mod report;
mod sections;

pub use layers::{ConfigInputs, Env, data_home, user_file};
pub use report::{ReportLine, report, unset_keys};
pub use sections::*;

use crate::llm::ApiKeys;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// Where a configuration value came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    Default,
    UserFile(PathBuf),
    ProjectFile(PathBuf),
    Env(&'static str),
    Editor,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::UserFile(p) => write!(f, "user config {}", p.display()),
            Source::ProjectFile(p) => write!(f, "project config {}", p.display()),
            Source::Env(var) => write!(f, "environment {var}"),
            Source::Editor => f.write_str("editor settings (initializationOptions.mira)"),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{source_name} is not valid: {message}")]
    Invalid {
        source_name: String,
        message: String,
    },
    #[error(
        "cannot find your home directory to place Mira's data: set HOME, or MIRA_HOME to a directory"
    )]
    NoHome,
}

/// A key no section knows: reported (by `mira doctor` as an error, by the LSP as a log line),
/// never silently ignored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownKey {
    pub key: String,
    pub source: Source,
}

impl fmt::Display for UnknownKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown key `{}` in {}", self.key, self.source)
    }
}

/// The effective configuration and how it came to be.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub config: Config,
    pub keys: ApiKeys,
    /// dotted key → the layer that set it last
    pub sources: BTreeMap<String, Source>,
    pub unknown: Vec<UnknownKey>,
    /// files that were read, in precedence order
    pub files: Vec<PathBuf>,
}

impl Loaded {
    /// Built-in defaults (plus `MIRA_HOME`), for when the configured layers cannot be read:
    /// the caller reports the error and keeps serving with these.
    pub fn defaults(env: &Env) -> Loaded {
        let mut config = Config::default();
        let mut sources = BTreeMap::new();
        if let Some(home) = env.get("MIRA_HOME") {
            config.store.home = PathBuf::from(home);
            sources.insert("store.home".to_string(), Source::Env("MIRA_HOME"));
        } else if let Some(home) = data_home(env) {
            config.store.home = home;
        }
        Loaded {
            config,
            keys: ApiKeys::default(),
            sources,
            unknown: Vec::new(),
            files: Vec::new(),
        }
    }

    pub fn source_of(&self, key: &str) -> Source {
        self.sources.get(key).cloned().unwrap_or(Source::Default)
    }

    /// `$MIRA_HOME/mira.db`.
    pub fn database_path(&self) -> PathBuf {
        self.config.store.home.join("mira.db")
    }
}

pub fn load(inputs: &ConfigInputs) -> Result<Loaded, ConfigError> {
    layers::load(inputs)
}

#[cfg(test)]
mod tests;
