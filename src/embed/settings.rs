//! `[memory.embedder]`: which embedder recall uses and how to reach it. `config` composes it
//! into the memory section.

use std::path::PathBuf;

use secrecy::SecretString;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum EmbedderKind {
    /// Compiled into Mira: by meaning, offline, no setup (paraphrase-MiniLM-L3-v2 in 4 bits,
    /// or the static table with `model = "static"`).
    #[default]
    Builtin,
    /// Recall by full-text search alone.
    None,
    Openai,
    Ollama,
    Local,
}

/// `[memory.embedder]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct EmbedderConfig {
    pub provider: EmbedderKind,
    /// Model name sent to the server (defaults: `text-embedding-3-small`, `nomic-embed-text`);
    /// for `builtin`: `"paraphrase-MiniLM-L3-v2"` (the default) or `"static"`.
    pub model: Option<String>,
    /// `https://api.openai.com/v1` (openai) / `http://127.0.0.1:11434` (ollama) unless set.
    pub base_url: Option<String>,
    /// For `openai`; falls back to `$OPENAI_API_KEY`. Local OpenAI-compatible servers need none.
    #[serde(skip_serializing)]
    pub api_key: Option<SecretString>,
    /// Ask the server for shorter vectors (only models that support it).
    pub dimensions: Option<u32>,
    /// For `local`: a directory with all-MiniLM-L6-v2's `model.safetensors`, `config.json`, `vocab.txt`.
    pub model_dir: Option<PathBuf>,
    /// Texts per request.
    pub batch_size: usize,
    /// Per request, in seconds.
    pub timeout_secs: u64,
    /// Retries after 429 / 5xx / connection errors.
    pub max_retries: u32,
}

impl Default for EmbedderConfig {
    fn default() -> Self {
        EmbedderConfig {
            provider: EmbedderKind::Builtin,
            model: None,
            base_url: None,
            api_key: None,
            dimensions: None,
            model_dir: None,
            batch_size: 64,
            timeout_secs: 30,
            max_retries: 3,
        }
    }
}
