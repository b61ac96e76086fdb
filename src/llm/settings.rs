//! A provider, resolved: which wire format, where, which model, which key, how patient.

use std::fmt;
use std::time::Duration;

use secrecy::SecretString;

use super::price::PriceTable;

/// The wire format. `openai-chat` covers every Chat Completions server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    OpenAi,
    OpenAiChat,
    Anthropic,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::OpenAiChat => "openai-chat",
            ProviderKind::Anthropic => "anthropic",
        }
    }

    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::OpenAi | ProviderKind::OpenAiChat => "https://api.openai.com/v1",
            ProviderKind::Anthropic => "https://api.anthropic.com/v1",
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ProviderKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "openai" | "openai-responses" => Ok(ProviderKind::OpenAi),
            "openai-chat" | "chat" | "deepseek" | "ollama" => Ok(ProviderKind::OpenAiChat),
            "anthropic" => Ok(ProviderKind::Anthropic),
            other => Err(format!(
                "unknown provider `{other}`; expected openai, openai-chat or anthropic"
            )),
        }
    }
}

/// Chat Completions servers differ in small ways that matter: where reasoning text comes in
/// and whether it must (DeepSeek thinking mode with tool calls) or must not be echoed back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChatFlavour {
    OpenAi,
    DeepSeek,
    Ollama,
    Generic,
}

impl ChatFlavour {
    /// Guess from the base URL and model; `provider.flavour` in config overrides it.
    pub fn detect(base_url: &str, model: &str) -> ChatFlavour {
        let url = base_url.to_ascii_lowercase();
        if url.contains("deepseek") || model.starts_with("deepseek") {
            ChatFlavour::DeepSeek
        } else if url.contains(":11434") || url.contains("ollama") {
            ChatFlavour::Ollama
        } else if url.contains("api.openai.com") {
            ChatFlavour::OpenAi
        } else {
            ChatFlavour::Generic
        }
    }

    /// DeepSeek's legacy `deepseek-reasoner` answers 400 when reasoning comes back; its
    /// thinking-mode models answer 400 when it does not (after tool calls).
    pub fn echoes_reasoning(self, model: &str) -> bool {
        match self {
            ChatFlavour::DeepSeek => model != "deepseek-reasoner",
            _ => false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    pub connect: Duration,
    /// From sending the request to the response headers.
    pub first_byte: Duration,
    /// Longest silence allowed between two stream chunks.
    pub idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(10),
            first_byte: Duration::from_secs(120),
            idle: Duration::from_secs(90),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in total, the first one included.
    pub max_attempts: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

/// Everything a [`super::Client`] needs. The key is a `SecretString`: it never shows in Debug
/// output, logs or the database.
#[derive(Clone, Debug)]
pub struct ProviderSettings {
    pub kind: ProviderKind,
    pub base_url: String,
    pub model: String,
    pub api_key: Option<SecretString>,
    pub flavour: ChatFlavour,
    pub max_output_tokens: u32,
    pub timeouts: Timeouts,
    pub retry: RetryPolicy,
    pub prices: PriceTable,
}

impl ProviderSettings {
    pub fn new(kind: ProviderKind, base_url: impl Into<String>, model: impl Into<String>) -> Self {
        let base_url = base_url.into().trim_end_matches('/').to_string();
        let model = model.into();
        ProviderSettings {
            kind,
            flavour: ChatFlavour::detect(&base_url, &model),
            base_url,
            model,
            api_key: None,
            max_output_tokens: 8192,
            timeouts: Timeouts::default(),
            retry: RetryPolicy::default(),
            prices: PriceTable::default(),
        }
    }

    pub fn with_key(mut self, key: SecretString) -> Self {
        self.api_key = Some(key);
        self
    }

    /// Resolve a provider from the environment alone, in the order DESIGN §7 gives:
    /// `MIRA_PROVIDER`/`MIRA_MODEL`/`MIRA_BASE_URL` pick explicitly; otherwise the first of
    /// `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `DEEPSEEK_API_KEY` that is set.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<ProviderSettings, NoProvider> {
        let var = |k: &str| env(k).filter(|v| !v.trim().is_empty());
        let explicit = match var("MIRA_PROVIDER") {
            Some(p) => Some(p.parse::<ProviderKind>().map_err(NoProvider::Invalid)?),
            None => None,
        };
        let base_url = var("MIRA_BASE_URL");
        let model = var("MIRA_MODEL");
        let (kind, key_var, default_url, default_model) = match explicit {
            Some(ProviderKind::Anthropic) => (
                ProviderKind::Anthropic,
                "ANTHROPIC_API_KEY",
                ProviderKind::Anthropic.default_base_url(),
                "claude-sonnet-4-5",
            ),
            Some(ProviderKind::OpenAi) => (
                ProviderKind::OpenAi,
                "OPENAI_API_KEY",
                ProviderKind::OpenAi.default_base_url(),
                "gpt-5.1",
            ),
            Some(ProviderKind::OpenAiChat) => {
                if var("DEEPSEEK_API_KEY").is_some() && var("OPENAI_API_KEY").is_none() {
                    (
                        ProviderKind::OpenAiChat,
                        "DEEPSEEK_API_KEY",
                        "https://api.deepseek.com",
                        "deepseek-chat",
                    )
                } else {
                    (
                        ProviderKind::OpenAiChat,
                        "OPENAI_API_KEY",
                        ProviderKind::OpenAiChat.default_base_url(),
                        "gpt-4.1",
                    )
                }
            }
            None => {
                if var("OPENAI_API_KEY").is_some() {
                    (
                        ProviderKind::OpenAi,
                        "OPENAI_API_KEY",
                        ProviderKind::OpenAi.default_base_url(),
                        "gpt-5.1",
                    )
                } else if var("ANTHROPIC_API_KEY").is_some() {
                    (
                        ProviderKind::Anthropic,
                        "ANTHROPIC_API_KEY",
                        ProviderKind::Anthropic.default_base_url(),
                        "claude-sonnet-4-5",
                    )
                } else if var("DEEPSEEK_API_KEY").is_some() {
                    (
                        ProviderKind::OpenAiChat,
                        "DEEPSEEK_API_KEY",
                        "https://api.deepseek.com",
                        "deepseek-chat",
                    )
                } else {
                    return Err(NoProvider::Missing);
                }
            }
        };
        let key = var(key_var);
        // A local server (Ollama, llama.cpp) needs no key; a hosted default does.
        if key.is_none() && base_url.is_none() {
            return Err(NoProvider::MissingKey { kind, var: key_var });
        }
        let mut s = ProviderSettings::new(
            kind,
            base_url.as_deref().unwrap_or(default_url),
            model.as_deref().unwrap_or(default_model),
        );
        s.api_key = key.map(SecretString::from);
        Ok(s)
    }
}

/// Why no provider could be set up, phrased as what to do about it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NoProvider {
    #[error(
        "no LLM provider is configured.\n\
         Set one of these environment variables:\n\
         \x20   export OPENAI_API_KEY=sk-...        (OpenAI, Responses API)\n\
         \x20   export ANTHROPIC_API_KEY=sk-ant-... (Anthropic)\n\
         \x20   export DEEPSEEK_API_KEY=sk-...      (DeepSeek)\n\
         or add a [provider] section to ~/.config/mira/config.toml, e.g. for a local Ollama:\n\
         \x20   [provider]\n\
         \x20   kind = \"openai-chat\"\n\
         \x20   base_url = \"http://127.0.0.1:11434/v1\"\n\
         \x20   model = \"qwen3\"\n\
         Then run `mira doctor` to check."
    )]
    Missing,
    #[error(
        "provider `{kind}` is selected but has no API key.\n\
         Set it with `export {var}=...` (or `provider.api_key` in ~/.config/mira/config.toml), \
         or point `MIRA_BASE_URL` / `provider.base_url` at a local server that needs none."
    )]
    MissingKey {
        kind: ProviderKind,
        var: &'static str,
    },
    #[error("{0}\nSet `MIRA_PROVIDER` or `provider.kind` to openai, openai-chat or anthropic.")]
    Invalid(String),
}
