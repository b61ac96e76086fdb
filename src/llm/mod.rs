//! Provider clients for chat models, hand-written on reqwest + eventsource-stream.
//!
//! Three wire formats sit behind one [`Client`]: OpenAI Responses (`openai`), Chat
//! Completions (`openai-chat`: OpenAI, DeepSeek, Ollama, llama.cpp, vLLM, OpenRouter) and
//! Anthropic Messages (`anthropic`). Callers speak only the provider-neutral types of this
//! module ([`Request`], [`Item`], [`Delta`], [`Completion`], [`Usage`]); every wire quirk
//! (cached-token accounting, reasoning echo rules, argument streaming) stays in the
//! per-format module.

mod anthropic;
mod chat;
mod client;
pub mod fim;
pub mod local;
mod openai;
pub mod price;
mod redacted;
mod settings;
mod sse;

pub use client::Client;
pub use local::{ListedModel, ServerReport, Window, WindowSource, server_report};
pub use price::{Price, PriceTable};
pub use settings::{
    ApiKeys, ChatFlavour, NoProvider, ProviderConfig, ProviderKind, ProviderName, ProviderSettings,
    RetryPolicy, Timeouts,
};

use std::fmt;
use std::time::Duration;

/// One entry of the conversation as the model sees it.
///
/// The order of items is the order the model produced or received them. Chat Completions and
/// Anthropic group consecutive assistant items (reasoning, text, tool calls) into one message;
/// that grouping happens in their serialisers, not here.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    User(String),
    Assistant(String),
    Reasoning(Reasoning),
    ToolCall(ToolCall),
    ToolResult(ToolResult),
}

/// Reasoning the provider asks us to echo back (Responses `reasoning` items with
/// `encrypted_content`, Anthropic `thinking` blocks with their signature, DeepSeek
/// `reasoning_content`). It is only ever sent back to the kind of provider that made it.
#[derive(Clone, Debug, PartialEq)]
pub struct Reasoning {
    pub provider: ProviderKind,
    pub id: Option<String>,
    pub text: String,
    /// Provider-opaque continuation: `encrypted_content` or the thinking `signature`.
    pub opaque: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments exactly as the model streamed them: a JSON object text, possibly invalid.
    pub arguments: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ToolResult {
    pub call_id: String,
    pub content: String,
    pub is_error: bool,
}

/// A function the model may call. `parameters` is a JSON Schema object; it is wire content,
/// so it stays a JSON value.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: serde_json::Value,
}

/// How hard the model should think. Providers support different subsets; each serialiser maps
/// the level to the nearest thing its API accepts. Config (`agent.effort`, where `auto` is
/// `None`), `mira.ask` and the CLI all speak these names.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Effort {
    None,
    Low,
    Medium,
    High,
    XHigh,
}

impl Effort {
    pub const ALL: [Effort; 5] = [
        Effort::None,
        Effort::Low,
        Effort::Medium,
        Effort::High,
        Effort::XHigh,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Effort::None => "none",
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
            Effort::XHigh => "xhigh",
        }
    }
}

impl std::str::FromStr for Effort {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Effort::ALL
            .into_iter()
            .find(|e| e.as_str() == s)
            .ok_or_else(|| {
                format!("unknown effort `{s}`; expected one of none, low, medium, high, xhigh")
            })
    }
}

impl fmt::Display for Effort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One model call.
#[derive(Clone, Debug)]
pub struct Request {
    /// The cache-stable prefix: instructions, tool docs, project, corrections, goals, summaries.
    pub system: String,
    pub items: Vec<Item>,
    pub tools: Vec<ToolSpec>,
    pub effort: Option<Effort>,
}

/// A Responses chain to continue: the server already holds the first `items` items of the
/// request under `response_id` (only with `store`, and only when that response was ours).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Previous {
    pub response_id: String,
    pub items: usize,
}

/// Streamed progress, forwarded to the user as it arrives.
#[derive(Clone, Debug, PartialEq)]
pub enum Delta {
    Text(String),
    Reasoning(String),
    ToolCallStarted { id: String, name: String },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
    ContentFilter,
    Refusal,
    Other,
}

/// Token usage normalised across providers: `input_tokens` is the whole prompt, cache reads
/// and writes included (Anthropic reports them separately; we add them back).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    pub cache_write_tokens: u64,
    pub output_tokens: u64,
    pub reasoning_tokens: u64,
}

impl Usage {
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.output_tokens += other.output_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
    }
}

/// A finished model call.
#[derive(Clone, Debug, PartialEq)]
pub struct Completion {
    pub items: Vec<Item>,
    pub usage: Usage,
    pub stop: StopReason,
    pub model: String,
    pub response_id: Option<String>,
}

impl Completion {
    pub fn text(&self) -> String {
        self.items
            .iter()
            .filter_map(|i| match i {
                Item::Assistant(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }

    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.items.iter().filter_map(|i| match i {
            Item::ToolCall(c) => Some(c),
            _ => None,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutKind {
    Connect,
    FirstByte,
    Idle,
}

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("{0}")]
    NoProvider(#[from] NoProvider),
    #[error("{provider} answered HTTP {status}: {message}{}", hint_for_status(*status, message))]
    Http {
        provider: ProviderKind,
        status: u16,
        message: String,
        retry_after: Option<Duration>,
    },
    #[error(
        "could not reach {provider} at {url}: {message}; {}",
        hint_for_unreachable(url)
    )]
    Connect {
        provider: ProviderKind,
        url: String,
        message: String,
    },
    #[error("{provider} timed out ({}); raise `provider.timeouts` if the model is slow", match .kind {
        TimeoutKind::Connect => "connecting",
        TimeoutKind::FirstByte => "waiting for the first token",
        TimeoutKind::Idle => "stream went silent",
    })]
    Timeout {
        provider: ProviderKind,
        kind: TimeoutKind,
    },
    #[error("the {provider} stream broke: {message}")]
    Stream {
        provider: ProviderKind,
        message: String,
    },
    #[error("{provider} reported an error: {message}")]
    Provider {
        provider: ProviderKind,
        code: Option<String>,
        message: String,
    },
    #[error("cancelled")]
    Cancelled,
}

fn hint_for_unreachable(url: &str) -> &'static str {
    if settings::is_loopback_url(url) {
        "is the local model server running? (`ollama serve`, `llama-server -m MODEL.gguf`, \
         or LM Studio's server); `mira doctor` checks it"
    } else {
        "check `base_url` and your network"
    }
}

fn hint_for_status(status: u16, message: &str) -> &'static str {
    let m = message.to_ascii_lowercase();
    match status {
        400 if m.contains("context") => {
            "; the prompt is larger than the model's window: set `provider.context_window` to \
             the server's context size (`mira doctor` shows what Mira uses)"
        }
        404 if m.contains("model") => {
            "; the server does not have this model: `mira models` lists the ones it has \
             (Ollama: `ollama pull MODEL`)"
        }
        503 if m.contains("loading") => {
            "; the server is still loading the model, try again in a moment"
        }
        401 | 403 => "; check the API key (env var or `provider.api_key`)",
        404 => "; check `provider.base_url` and `provider.model`",
        429 => "; rate limited, retries exhausted",
        500..=599 => "; the provider is failing, try again later",
        _ => "",
    }
}

impl LlmError {
    /// Worth another attempt with the same request (before any output was streamed).
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::Http { status, .. } => *status == 429 || *status >= 500,
            LlmError::Connect { .. } => true,
            LlmError::Timeout { kind, .. } => *kind != TimeoutKind::Idle,
            _ => false,
        }
    }
}

/// A model call that ended without completing. What streamed before the failure is kept, so
/// the turn can store it (marked as interrupted) instead of losing it.
#[derive(Debug)]
pub struct Failure {
    pub error: LlmError,
    pub partial_text: String,
    pub usage: Usage,
}

impl From<LlmError> for Failure {
    fn from(error: LlmError) -> Self {
        Failure {
            error,
            partial_text: String::new(),
            usage: Usage::default(),
        }
    }
}

#[cfg(test)]
mod tests;
