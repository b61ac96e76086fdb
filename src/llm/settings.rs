//! A provider, resolved: which wire format, where, which model, which key, how patient.

use std::fmt;
use std::time::Duration;

use secrecy::SecretString;
use serde::{Deserialize, Serialize};

use super::price::{Price, PriceTable};

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

/// Any name `provider.name` takes, plus the older spellings stored rows may hold.
impl std::str::FromStr for ProviderKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "openai-responses" => Ok(ProviderKind::OpenAi),
            "chat" | "deepseek" => Ok(ProviderKind::OpenAiChat),
            other => ProviderName::ALL
                .into_iter()
                .find(|n| n.as_str() == other)
                .map(ProviderName::wire)
                .ok_or_else(|| {
                    format!(
                        "unknown provider `{other}`; expected openai, openai-chat, anthropic, \
                         ollama, llama-cpp or lmstudio"
                    )
                }),
        }
    }
}

/// What `provider.name` (or `MIRA_PROVIDER`) names: a wire format, or a local server Mira
/// knows by its usual address. [`ProviderName::wire`] is the format it speaks.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ProviderName {
    /// OpenAI Responses API.
    Openai,
    /// Chat Completions: OpenAI, DeepSeek, vLLM, OpenRouter, any compatible `base_url`.
    OpenaiChat,
    Anthropic,
    /// A local Ollama (`http://127.0.0.1:11434/v1` unless `base_url` says otherwise).
    Ollama,
    /// llama.cpp's `llama-server` (`http://127.0.0.1:8080/v1`).
    LlamaCpp,
    /// LM Studio's server (`http://127.0.0.1:1234/v1`).
    Lmstudio,
}

impl ProviderName {
    pub const ALL: [ProviderName; 6] = [
        ProviderName::Openai,
        ProviderName::OpenaiChat,
        ProviderName::Anthropic,
        ProviderName::Ollama,
        ProviderName::LlamaCpp,
        ProviderName::Lmstudio,
    ];

    pub fn wire(self) -> ProviderKind {
        match self {
            ProviderName::Openai => ProviderKind::OpenAi,
            ProviderName::Anthropic => ProviderKind::Anthropic,
            ProviderName::OpenaiChat
            | ProviderName::Ollama
            | ProviderName::LlamaCpp
            | ProviderName::Lmstudio => ProviderKind::OpenAiChat,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ProviderName::Openai => "openai",
            ProviderName::OpenaiChat => "openai-chat",
            ProviderName::Anthropic => "anthropic",
            ProviderName::Ollama => "ollama",
            ProviderName::LlamaCpp => "llama-cpp",
            ProviderName::Lmstudio => "lmstudio",
        }
    }
}

/// `[provider]`.
#[derive(Clone, Debug, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct ProviderConfig {
    pub name: Option<ProviderName>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// Prefer the provider's environment variable; a key here is accepted but never printed.
    #[serde(skip_serializing)]
    pub api_key: Option<SecretString>,
    /// Cap on the model's output per call.
    pub max_output_tokens: Option<u32>,
    /// The model's context window in tokens. Mira asks local servers (llama.cpp `/props`,
    /// Ollama `/api/show`, LM Studio, vLLM) and knows hosted models; this overrides both.
    pub context_window: Option<usize>,
    pub connect_timeout_secs: Option<u64>,
    /// From sending a request to the response headers.
    pub first_byte_timeout_secs: Option<u64>,
    /// Longest silence allowed inside a streamed answer.
    pub idle_timeout_secs: Option<u64>,
    /// Attempts per model call on 429/5xx/connection errors (first one included).
    pub max_attempts: Option<u32>,
    /// `openai` only: store responses at OpenAI so tool loops continue with
    /// `previous_response_id` instead of resending the conversation (off: nothing is stored).
    pub responses_store: Option<bool>,
    /// Prices in USD per million tokens, keyed by model-name prefix; extend or override the
    /// built-in table, e.g. `[provider.prices."my-model"] input = 1.0, output = 2.0`.
    pub prices: std::collections::BTreeMap<String, Price>,
}

/// API keys from the environment. Never logged, stored or printed.
#[derive(Clone, Default)]
pub struct ApiKeys {
    pub openai: Option<SecretString>,
    pub anthropic: Option<SecretString>,
    pub deepseek: Option<SecretString>,
}

impl ApiKeys {
    /// Every configured key: what redaction removes verbatim from all Mira sends or shows.
    pub fn secrets(&self) -> Vec<SecretString> {
        [&self.openai, &self.anthropic, &self.deepseek]
            .into_iter()
            .flatten()
            .cloned()
            .collect()
    }
}

impl fmt::Debug for ApiKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = |k: &Option<SecretString>| if k.is_some() { "set" } else { "unset" };
        f.debug_struct("ApiKeys")
            .field("openai", &s(&self.openai))
            .field("anthropic", &s(&self.anthropic))
            .field("deepseek", &s(&self.deepseek))
            .finish()
    }
}

/// Chat Completions servers differ in small ways that matter: where reasoning text comes in,
/// whether it must (DeepSeek thinking mode with tool calls) or must not be echoed back, and
/// where a local server states its context window (`llm::local`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChatFlavour {
    OpenAi,
    DeepSeek,
    Ollama,
    /// llama.cpp's `llama-server`.
    LlamaCpp,
    LmStudio,
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
        } else if url.contains(":1234") {
            ChatFlavour::LmStudio
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
    /// `provider.context_window`: the model's window, overriding what the server says.
    pub context_window: Option<usize>,
    /// Responses API only: let OpenAI keep responses (`store: true`) so a tool loop sends
    /// `previous_response_id` and the new items instead of the whole conversation.
    pub responses_store: bool,
    pub timeouts: Timeouts,
    pub retry: RetryPolicy,
    pub prices: PriceTable,
}

impl ProviderSettings {
    /// Whether the model runs on this machine (a loopback `base_url`): it costs nothing.
    pub fn is_local(&self) -> bool {
        is_loopback_url(&self.base_url)
    }

    /// What a call cost in USD: the price table's figure; a model without a price served on
    /// this machine costs nothing (a loopback proxy to a hosted model keeps its price);
    /// `None` when a remote model has no price.
    pub fn cost(&self, model: &str, usage: &super::Usage) -> Option<f64> {
        self.prices
            .cost(model, usage)
            .or_else(|| self.is_local().then_some(0.0))
    }

    /// Whether this call was free because the model runs here (for "free (local)").
    pub fn is_free_local(&self, model: &str) -> bool {
        self.is_local() && self.prices.lookup(model).is_none()
    }

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
            context_window: None,
            responses_store: false,
            timeouts: Timeouts::default(),
            retry: RetryPolicy::default(),
            prices: PriceTable::default(),
        }
    }

    pub fn with_key(mut self, key: SecretString) -> Self {
        self.api_key = Some(key);
        self
    }

    /// Resolve the provider from configuration (whose environment layer already mapped
    /// `MIRA_PROVIDER`, `MIRA_MODEL`, `MIRA_BASE_URL`) and the API keys from the environment.
    /// Without an explicit provider, the first key set picks one: OpenAI, Anthropic, DeepSeek.
    pub fn resolve(cfg: &ProviderConfig, keys: &ApiKeys) -> Result<ProviderSettings, NoProvider> {
        const DEEPSEEK: &str = "https://api.deepseek.com";
        if let Some(local) = cfg.name.and_then(LocalServer::of) {
            return local.resolve(cfg, keys);
        }
        let kind = match cfg.name {
            Some(name) => name.wire(),
            None if keys.openai.is_some() => ProviderKind::OpenAi,
            None if keys.anthropic.is_some() => ProviderKind::Anthropic,
            None if keys.deepseek.is_some() || cfg.base_url.is_some() => ProviderKind::OpenAiChat,
            None => return Err(NoProvider::Missing),
        };
        let deepseek = kind == ProviderKind::OpenAiChat
            && (cfg
                .base_url
                .as_deref()
                .is_some_and(|u| u.contains("deepseek"))
                || (cfg.base_url.is_none() && keys.deepseek.is_some() && keys.openai.is_none()));
        let (key, key_var) = match kind {
            ProviderKind::OpenAi => (keys.openai.clone(), "OPENAI_API_KEY"),
            ProviderKind::Anthropic => (keys.anthropic.clone(), "ANTHROPIC_API_KEY"),
            ProviderKind::OpenAiChat if deepseek => (keys.deepseek.clone(), "DEEPSEEK_API_KEY"),
            ProviderKind::OpenAiChat => (keys.openai.clone(), "OPENAI_API_KEY"),
        };
        let key = cfg.api_key.clone().or(key);
        // A local server (Ollama, llama.cpp) needs no key; a hosted default does.
        if key.is_none() && cfg.base_url.is_none() {
            return Err(NoProvider::MissingKey { kind, var: key_var });
        }
        let base_url = cfg.base_url.clone().unwrap_or_else(|| {
            if deepseek {
                DEEPSEEK.to_string()
            } else {
                kind.default_base_url().to_string()
            }
        });
        let model = cfg.model.clone().unwrap_or_else(|| {
            match kind {
                ProviderKind::OpenAi => "gpt-5.1",
                ProviderKind::Anthropic => "claude-sonnet-4-5",
                ProviderKind::OpenAiChat if deepseek => "deepseek-chat",
                ProviderKind::OpenAiChat => "gpt-4.1",
            }
            .to_string()
        });
        let mut s = ProviderSettings::new(kind, base_url, model);
        s.api_key = key;
        s.apply(cfg);
        Ok(s)
    }

    /// The settings every provider shares: output cap, window, timeouts, retries, prices.
    fn apply(&mut self, cfg: &ProviderConfig) {
        let s = self;
        s.context_window = cfg.context_window;
        if let Some(n) = cfg.max_output_tokens {
            s.max_output_tokens = n;
        }
        let secs = |v: Option<u64>, d: Duration| v.map(Duration::from_secs).unwrap_or(d);
        s.timeouts = Timeouts {
            connect: secs(cfg.connect_timeout_secs, s.timeouts.connect),
            first_byte: secs(cfg.first_byte_timeout_secs, s.timeouts.first_byte),
            idle: secs(cfg.idle_timeout_secs, s.timeouts.idle),
        };
        s.responses_store = cfg.responses_store.unwrap_or(false);
        if let Some(n) = cfg.max_attempts {
            s.retry.max_attempts = n.max(1);
        }
        for (model, p) in &cfg.prices {
            s.prices.set(model.clone(), *p);
        }
    }
}

/// The local servers Mira knows by name: each has its usual address, needs no key, and says
/// its context window in its own way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LocalServer {
    Ollama,
    LlamaCpp,
    LmStudio,
}

impl LocalServer {
    fn of(name: ProviderName) -> Option<LocalServer> {
        match name {
            ProviderName::Ollama => Some(LocalServer::Ollama),
            ProviderName::LlamaCpp => Some(LocalServer::LlamaCpp),
            ProviderName::Lmstudio => Some(LocalServer::LmStudio),
            _ => None,
        }
    }

    fn resolve(self, cfg: &ProviderConfig, keys: &ApiKeys) -> Result<ProviderSettings, NoProvider> {
        let (name, base, flavour) = match self {
            LocalServer::Ollama => ("ollama", "http://127.0.0.1:11434/v1", ChatFlavour::Ollama),
            LocalServer::LlamaCpp => (
                "llama-cpp",
                "http://127.0.0.1:8080/v1",
                ChatFlavour::LlamaCpp,
            ),
            LocalServer::LmStudio => (
                "lmstudio",
                "http://127.0.0.1:1234/v1",
                ChatFlavour::LmStudio,
            ),
        };
        // llama-server serves the one model it was started with, whatever the name; Ollama
        // and LM Studio serve many and need to be told which.
        let model = match (&cfg.model, self) {
            (Some(m), _) => m.clone(),
            (None, LocalServer::LlamaCpp) => "default".to_string(),
            (None, _) => return Err(NoProvider::MissingModel { provider: name }),
        };
        let base_url = cfg.base_url.as_deref().unwrap_or(base);
        let mut s = ProviderSettings::new(ProviderKind::OpenAiChat, base_url, model);
        s.flavour = flavour;
        // A server behind a proxy may want a key; a loopback one never does.
        s.api_key = cfg.api_key.clone().or_else(|| {
            (!is_loopback_url(&s.base_url))
                .then(|| keys.openai.clone())
                .flatten()
        });
        s.apply(cfg);
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
         \x20   name = \"ollama\"      # or \"llama-cpp\", \"lmstudio\"\n\
         \x20   model = \"qwen3\"      # `mira models` lists what the server has\n\
         Then run `mira doctor` to check."
    )]
    Missing,
    #[error(
        "provider `{kind}` is selected but has no API key.\n\
         Set it with `export {var}=...`, or point `MIRA_BASE_URL` / `provider.base_url` at a \
         local server that needs none (Ollama, llama.cpp)."
    )]
    MissingKey {
        kind: ProviderKind,
        var: &'static str,
    },
    #[error(
        "provider `{provider}` needs a model: set `provider.model` (or `MIRA_MODEL`) to one \
         the server has; `mira models` lists them."
    )]
    MissingModel { provider: &'static str },
    #[error(
        "{0}\nSet `MIRA_PROVIDER` or `provider.name` to openai, openai-chat, anthropic, ollama, \
         llama-cpp or lmstudio."
    )]
    Invalid(String),
}

pub(super) use crate::text::is_loopback_url;

#[cfg(test)]
mod local_tests {
    use super::*;

    #[test]
    fn loopback_base_urls_are_local() {
        let with = is_loopback_url;
        assert!(with("http://127.0.0.1:8080/v1"));
        assert!(with("http://localhost:11434"));
        assert!(with("http://[::1]:8000/v1"));
        assert!(!with("https://api.openai.com/v1"));
        assert!(!with("http://127.example.com/v1"));
        assert!(!with("http://10.0.0.5:8000"));
    }
}
