//! `[completion]`: inline completion (ghost text).

use serde::{Deserialize, Serialize};

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
