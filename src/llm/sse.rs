//! The contract between the shared transport and each wire format's stream parser.

use eventsource_stream::Event;
use serde::de::DeserializeOwned;

use super::{Completion, Delta, LlmError, ProviderKind, Usage};

pub(super) trait StreamParser: Send {
    /// Feed one SSE event; `Ok(true)` when the provider has said the response is complete.
    fn feed(&mut self, event: &Event, out: &mut dyn FnMut(Delta)) -> Result<bool, LlmError>;
    /// Whether the stream may end here (some servers close without a terminal marker once
    /// they have sent a finish reason).
    fn is_complete(&self) -> bool;
    /// The assistant text streamed so far.
    fn partial_text(&self) -> &str;
    fn usage(&self) -> super::Usage;
    fn finish(self: Box<Self>) -> Result<Completion, LlmError>;
}

pub(super) fn decode<T: DeserializeOwned>(
    provider: ProviderKind,
    event: &Event,
) -> Result<T, LlmError> {
    serde_json::from_str(&event.data).map_err(|e| LlmError::Stream {
        provider,
        message: format!(
            "unreadable `{}` event ({e}): {}",
            event.event,
            shorten(&event.data)
        ),
    })
}

fn shorten(s: &str) -> String {
    if s.len() <= 200 {
        s.to_string()
    } else {
        let mut end = 200;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &s[..end])
    }
}

/// Usage counters as the OpenAI family reports them; every detail is optional because
/// compatible servers (and OpenAI's own mocks) send nulls or leave them out.
#[derive(serde::Deserialize, Default)]
pub(super) struct OpenAiUsage {
    #[serde(default, alias = "prompt_tokens")]
    pub input_tokens: Option<u64>,
    #[serde(default, alias = "completion_tokens")]
    pub output_tokens: Option<u64>,
    #[serde(default, alias = "prompt_tokens_details")]
    pub input_tokens_details: Option<InputDetails>,
    #[serde(default, alias = "completion_tokens_details")]
    pub output_tokens_details: Option<OutputDetails>,
    /// DeepSeek.
    #[serde(default)]
    pub prompt_cache_hit_tokens: Option<u64>,
}

#[derive(serde::Deserialize, Default)]
pub(super) struct InputDetails {
    #[serde(default)]
    pub cached_tokens: Option<u64>,
    #[serde(default)]
    pub cache_write_tokens: Option<u64>,
}

#[derive(serde::Deserialize, Default)]
pub(super) struct OutputDetails {
    #[serde(default)]
    pub reasoning_tokens: Option<u64>,
}

impl OpenAiUsage {
    /// Prompt counts here already include cached tokens, as `Usage` wants.
    pub fn normalise(&self) -> Usage {
        let details = self.input_tokens_details.as_ref();
        Usage {
            input_tokens: self.input_tokens.unwrap_or(0),
            cached_input_tokens: self
                .prompt_cache_hit_tokens
                .or_else(|| details.and_then(|d| d.cached_tokens))
                .unwrap_or(0),
            cache_write_tokens: details.and_then(|d| d.cache_write_tokens).unwrap_or(0),
            output_tokens: self.output_tokens.unwrap_or(0),
            reasoning_tokens: self
                .output_tokens_details
                .as_ref()
                .and_then(|d| d.reasoning_tokens)
                .unwrap_or(0),
        }
    }
}

/// Parse tool-call arguments for formats that need an object (Anthropic `input`). Invalid
/// JSON is kept as a string so the turn can hand the model a tool error instead of crashing.
pub(super) fn arguments_as_object(arguments: &str) -> serde_json::Value {
    if arguments.trim().is_empty() {
        return serde_json::json!({});
    }
    match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(v @ serde_json::Value::Object(_)) => v,
        _ => serde_json::json!({ "_invalid_arguments": arguments }),
    }
}
