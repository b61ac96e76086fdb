//! The typed configuration. Every field has a default, so any layer may set any subset.
//! A new key is one field here; `mira doctor` and unknown-key detection pick it up.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

use crate::embed::{EmbedderConfig, EmbedderKind};
use crate::llm::{Effort, ProviderConfig};

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
pub struct IndexConfig {
    /// Files larger than this are skipped (and reported) by the indexer.
    pub max_file_bytes: u64,
    /// Extra gitignore-style globs to leave out of the index.
    pub exclude: Vec<String>,
    /// How many results workspace/symbol returns at most.
    pub workspace_symbol_limit: usize,
    /// Watch unopened files for changes.
    pub watch: bool,
    /// How long an open document's reparse may hold up a keystroke before it is finished
    /// in the background (the outline answers from the previous parse meanwhile); 0 waits.
    pub parse_budget_ms: u64,
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            max_file_bytes: 1024 * 1024,
            exclude: Vec::new(),
            workspace_symbol_limit: 128,
            watch: true,
            parse_budget_ms: 3,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct MemoryConfig {
    /// `[memory.embedder]`: vectors for recall (the built-in table unless configured).
    pub embedder: EmbedderConfig,
    /// `[memory.recall]`: fusion weights (defaults chosen by the eval harness).
    pub recall: RecallWeights,
}

/// `[memory.recall]`: weighted reciprocal-rank fusion of BM25 and vector recall.
/// Re-tune with `cargo run --release --example memory_eval` when the embedder changes.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RecallWeights {
    pub bm25: f64,
    /// Vector weight for natural-language queries.
    pub vector: f64,
    /// Vector weight for identifier-looking queries (`JoinHandle`, `parse_config`).
    pub vector_identifier: f64,
    /// The RRF constant k.
    pub rrf_k: f64,
}

/// Chosen with the built-in embedder on the LoCoMo-like dev set (`scripts/eval-recall`,
/// eval/recall/README.md): hit@5 0.520 and MRR 0.391 at vector 0.3, against 0.521 / 0.331 at
/// 1.0 and BM25 alone 0.510 / 0.393. A static model's neighbours are noisier than its
/// lexical matches, so it breaks ties and finds paraphrases BM25 cannot see, no more.
impl Default for RecallWeights {
    fn default() -> Self {
        RecallWeights {
            bm25: 1.0,
            vector: 0.3,
            vector_identifier: 0.1,
            rrf_k: 10.0,
        }
    }
}

impl RecallWeights {
    /// For a full sentence encoder (MiniLM, OpenAI, Ollama), chosen by `examples/memory_eval.rs`
    /// with all-MiniLM-L6-v2 on the 240-query set (recall@5 0.846 against BM25 0.667): its
    /// vectors lead natural-language queries.
    pub fn sentence_encoder() -> Self {
        RecallWeights {
            vector: 3.0,
            ..RecallWeights::default()
        }
    }
}

impl MemoryConfig {
    /// The fusion weights recall uses: `[memory.recall]` as written, or when left at its
    /// defaults, the defaults measured for the configured kind of embedder.
    pub fn recall_weights(&self) -> RecallWeights {
        match self.embedder.provider {
            EmbedderKind::Openai | EmbedderKind::Ollama | EmbedderKind::Local
                if self.recall == RecallWeights::default() =>
            {
                RecallWeights::sentence_encoder()
            }
            _ => self.recall,
        }
    }
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum BashPolicy {
    /// The bash tool is refused.
    #[default]
    Off,
    /// Each command is confirmed through window/showMessageRequest (refused if the client can't ask).
    Ask,
    On,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct AgentConfig {
    pub bash: BashPolicy,
    pub max_iterations: u32,
    pub max_tool_calls: u32,
    pub cost_cap_usd: f64,
    /// `mira chat` warns when one turn costs more than this (USD); the cap above still stops it.
    pub cost_warn_usd: f64,
    /// Reasoning effort: `auto` (`None`) lets a cheap classifier pick per question.
    #[serde(with = "effort_or_auto")]
    pub effort: Option<Effort>,
    /// Token budget for everything sent in one model call; a model with a smaller window
    /// (`provider.context_window`, or what its server says) gets less.
    pub context_tokens: usize,
    /// When the verbatim conversation passes this many tokens, its oldest half is summarised.
    pub summarize_after_tokens: usize,
    /// Tool outputs larger than this become artifacts with a preview.
    pub artifact_bytes: usize,
    /// Let the model's file tools read and write sensitive files (`.env`, keys, credentials,
    /// `.miraignore` matches). Their content is still redacted.
    pub allow_sensitive: bool,
}

/// `agent.effort`: `auto` or one of [`Effort`]'s names, refused in the words serde uses for
/// an unknown enum variant.
mod effort_or_auto {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    use crate::llm::Effort;

    const AUTO: &str = "auto";
    const NAMES: &[&str] = &[AUTO, "none", "low", "medium", "high", "xhigh"];

    pub fn serialize<S: Serializer>(e: &Option<Effort>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(e.map_or(AUTO, Effort::as_str))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Effort>, D::Error> {
        let name = String::deserialize(d)?;
        if name == AUTO {
            return Ok(None);
        }
        name.parse()
            .map(Some)
            .map_err(|_| D::Error::unknown_variant(&name, NAMES))
    }
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            bash: BashPolicy::Off,
            max_iterations: 24,
            max_tool_calls: 64,
            cost_cap_usd: 1.0,
            cost_warn_usd: 0.5,
            effort: None,
            context_tokens: 64_000,
            summarize_after_tokens: 24_000,
            artifact_bytes: 16 * 1024,
            allow_sensitive: false,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct EditsConfig {
    /// Store model edits as proposals to apply explicitly, instead of applying them.
    pub confirm: bool,
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

/// Which server answers inline completions (`[completion] provider`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum CompletionProvider {
    /// OpenAI-compatible `/v1/completions` with `suffix` (llama.cpp, vLLM, …); needs `base_url`.
    OpenaiCompletions,
    /// DeepSeek's FIM beta (`/beta/completions`), key from `DEEPSEEK_API_KEY`.
    Deepseek,
    /// Mistral's Codestral (`/v1/fim/completions`), key from `CODESTRAL_API_KEY`.
    Codestral,
    /// llama.cpp's `/infill`.
    LlamaCpp,
    /// Ollama's `/api/generate` with `suffix`.
    Ollama,
    /// The `[provider]` chat model with a fill-in-the-middle prompt.
    Chat,
}

/// `[completion]`: inline completion (ghost text). Off until `provider` is set.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct CompletionConfig {
    pub provider: Option<CompletionProvider>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// The environment variable holding the key (keys are never read from settings files);
    /// defaults: `DEEPSEEK_API_KEY`, `CODESTRAL_API_KEY`, else `MIRA_COMPLETION_API_KEY`.
    pub api_key_env: Option<String>,
    /// Cap on the tokens one completion may generate.
    pub max_tokens: u32,
    /// Wait this long after a keystroke before asking the model (automatic triggers only).
    pub debounce_ms: u64,
    /// Language ids to complete in (`rust`, `python`, …); empty means every language.
    pub languages: Vec<String>,
    /// Also answer plain `textDocument/completion` (for clients without inline completion: Helix).
    pub popup: bool,
    /// From sending a request to the first byte of the answer.
    pub timeout_ms: u64,
    /// Budgets, in tokens, for the text before and after the cursor and for the context header.
    pub prefix_tokens: usize,
    pub suffix_tokens: usize,
    pub context_tokens: usize,
    /// The completion model's window; learned from a llama.cpp or Ollama server when unset.
    /// All of the above shrink to fit it.
    pub context_window: Option<usize>,
}

impl Default for CompletionConfig {
    fn default() -> Self {
        CompletionConfig {
            provider: None,
            model: None,
            base_url: None,
            api_key_env: None,
            max_tokens: 128,
            debounce_ms: 75,
            languages: Vec::new(),
            popup: false,
            timeout_ms: 5_000,
            prefix_tokens: 1_500,
            suffix_tokens: 500,
            context_tokens: 400,
            context_window: None,
        }
    }
}
