//! Chat Completions (`POST {base}/chat/completions`): OpenAI, DeepSeek, Ollama, llama.cpp,
//! vLLM, OpenRouter. Differences between servers are [`ChatFlavour`] decisions made here.

use eventsource_stream::Event;
use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::sse::{OpenAiUsage, StreamParser, decode};
use super::{
    ChatFlavour, Completion, Delta, Effort, Item, LlmError, ProviderKind, ProviderSettings,
    Reasoning, Request, StopReason, ToolCall, Usage, openai,
};

const KIND: ProviderKind = ProviderKind::OpenAiChat;

/// A Chat Completions request body, borrowing the request's texts (as the Responses body
/// does: no JSON tree built first).
#[derive(Serialize)]
pub(super) struct Body<'a> {
    model: &'a str,
    messages: Vec<Message<'a>>,
    stream: bool,
    stream_options: StreamOptions,
    /// OpenAI's reasoning models reject `max_tokens`; everyone else knows only `max_tokens`.
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Thinking>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum Message<'a> {
    System {
        content: &'a str,
    },
    User {
        content: &'a str,
    },
    Assistant {
        /// `null` when the message is only tool calls.
        content: Option<Cow<'a, str>>,
        #[serde(skip_serializing_if = "<[_]>::is_empty")]
        tool_calls: Vec<Call<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        reasoning_content: Option<Cow<'a, str>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

#[derive(Serialize)]
struct Call<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: CallFunction<'a>,
}

#[derive(Serialize)]
struct CallFunction<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Serialize)]
struct Tool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: ToolFunction<'a>,
}

#[derive(Serialize)]
struct ToolFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

#[derive(Serialize)]
struct Thinking {
    #[serde(rename = "type")]
    kind: &'static str,
}

/// One assistant message being assembled from consecutive assistant items.
#[derive(Default)]
struct AssistantMsg<'a> {
    content: Cow<'a, str>,
    reasoning: Cow<'a, str>,
    calls: Vec<Call<'a>>,
}

impl<'a> AssistantMsg<'a> {
    fn is_empty(&self) -> bool {
        self.content.is_empty() && self.reasoning.is_empty() && self.calls.is_empty()
    }

    fn into_message(self, echo_reasoning: bool) -> Message<'a> {
        let text = |c: Cow<'a, str>| (!c.is_empty()).then_some(c);
        Message::Assistant {
            content: text(self.content),
            tool_calls: self.calls,
            reasoning_content: text(self.reasoning).filter(|_| echo_reasoning),
        }
    }
}

/// Appends without copying the first piece (most assistant messages are one text).
fn append<'a>(to: &mut Cow<'a, str>, text: &'a str) {
    if to.is_empty() {
        *to = Cow::Borrowed(text);
    } else {
        to.to_mut().push_str(text);
    }
}

/// `max_output_tokens` is the client's, fitted to the model's window.
pub(super) fn body<'a>(
    s: &'a ProviderSettings,
    max_output_tokens: u32,
    req: &'a Request,
) -> Body<'a> {
    let echo = s.flavour.echoes_reasoning(&s.model);
    let mut messages = vec![Message::System {
        content: &req.system,
    }];
    let mut pending = AssistantMsg::default();
    let flush = |pending: &mut AssistantMsg<'a>, messages: &mut Vec<Message<'a>>| {
        if !pending.is_empty() {
            messages.push(std::mem::take(pending).into_message(echo));
        }
    };
    for item in &req.items {
        match item {
            Item::User(text) => {
                flush(&mut pending, &mut messages);
                messages.push(Message::User { content: text });
            }
            Item::Assistant(text) => append(&mut pending.content, text),
            Item::Reasoning(r) if r.provider == KIND => append(&mut pending.reasoning, &r.text),
            Item::Reasoning(_) => {}
            Item::ToolCall(c) => pending.calls.push(Call {
                id: &c.id,
                kind: "function",
                function: CallFunction {
                    name: &c.name,
                    arguments: &c.arguments,
                },
            }),
            Item::ToolResult(r) => {
                flush(&mut pending, &mut messages);
                messages.push(Message::Tool {
                    tool_call_id: &r.call_id,
                    content: &r.content,
                });
            }
        }
    }
    flush(&mut pending, &mut messages);

    let openai_flavour = s.flavour == ChatFlavour::OpenAi;
    let tools: Vec<Tool<'a>> = req
        .tools
        .iter()
        .map(|t| Tool {
            kind: "function",
            function: ToolFunction {
                name: &t.name,
                description: &t.description,
                parameters: &t.parameters,
            },
        })
        .collect();
    let (reasoning_effort, thinking) = req.effort.map_or((None, None), |e| effort(s, e));
    Body {
        model: &s.model,
        messages,
        stream: true,
        stream_options: StreamOptions {
            include_usage: true,
        },
        max_completion_tokens: openai_flavour.then_some(max_output_tokens),
        max_tokens: (!openai_flavour).then_some(max_output_tokens),
        tool_choice: (!tools.is_empty()).then_some("auto"),
        tools,
        reasoning_effort,
        thinking,
    }
}

/// Each server's way of taking an effort: `reasoning_effort`, DeepSeek's `thinking` switch.
fn effort(s: &ProviderSettings, effort: Effort) -> (Option<&'static str>, Option<Thinking>) {
    match s.flavour {
        ChatFlavour::OpenAi => (openai::reasoning_effort(&s.model, effort), None),
        ChatFlavour::DeepSeek if s.model != "deepseek-chat" && s.model != "deepseek-reasoner" => {
            if effort == Effort::None {
                (None, Some(Thinking { kind: "disabled" }))
            } else {
                let level = if effort == Effort::Low { "low" } else { "high" };
                (Some(level), Some(Thinking { kind: "enabled" }))
            }
        }
        ChatFlavour::Ollama if effort != Effort::None => (
            Some(match effort {
                Effort::XHigh => "high",
                e => e.as_str(),
            }),
            None,
        ),
        _ => (None, None),
    }
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<OpenAiUsage>,
    /// llama.cpp's own counters; `cache_n` is the prompt tokens it reused from its cache
    /// (servers too old to fill `prompt_tokens_details` still send it).
    #[serde(default)]
    timings: Option<Timings>,
    #[serde(default)]
    error: Option<ChunkError>,
}

#[derive(Deserialize)]
struct Timings {
    #[serde(default)]
    cache_n: Option<u64>,
}

#[derive(Deserialize)]
struct ChunkError {
    #[serde(default)]
    message: String,
    #[serde(default)]
    code: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Option<ChoiceDelta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct ChoiceDelta {
    #[serde(default)]
    content: Option<String>,
    /// DeepSeek, llama.cpp (`--reasoning-format deepseek`), vLLM.
    #[serde(default)]
    reasoning_content: Option<String>,
    /// Ollama.
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<CallDelta>>,
}

#[derive(Deserialize)]
struct CallDelta {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FnDelta>,
}

#[derive(Deserialize)]
struct FnDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

struct Slot {
    index: usize,
    id: String,
    name: String,
    arguments: String,
}

pub(super) struct Parser {
    model: String,
    response_id: Option<String>,
    text: String,
    reasoning: String,
    slots: Vec<Slot>,
    usage: Usage,
    stop: Option<StopReason>,
}

impl Parser {
    pub(super) fn new(s: &ProviderSettings) -> Self {
        Parser {
            model: s.model.clone(),
            response_id: None,
            text: String::new(),
            reasoning: String::new(),
            slots: Vec::new(),
            usage: Usage::default(),
            stop: None,
        }
    }

    fn call_delta(&mut self, d: CallDelta, out: &mut dyn FnMut(Delta)) {
        let index = d.index.unwrap_or(0);
        let new_id = d.id.filter(|id| !id.is_empty());
        // Accumulate by index; some servers reuse index 0 for a parallel batch and tell calls
        // apart only by id, so a new id at an occupied index opens a new slot.
        let slot = self.slots.iter().rposition(|s| s.index == index);
        let slot = match (slot, &new_id) {
            (Some(i), Some(id)) if self.slots[i].id != *id => None,
            (found, _) => found,
        };
        let i = match slot {
            Some(i) => i,
            None => {
                let n = self.slots.len();
                self.slots.push(Slot {
                    index,
                    id: new_id.clone().unwrap_or_else(|| format!("call_{n}")),
                    name: String::new(),
                    arguments: String::new(),
                });
                n
            }
        };
        if let Some(f) = d.function {
            if let Some(name) = f.name.filter(|n| !n.is_empty()) {
                let slot = &mut self.slots[i];
                let first = slot.name.is_empty();
                slot.name.push_str(&name);
                if first {
                    out(Delta::ToolCallStarted {
                        id: slot.id.clone(),
                        name,
                    });
                }
            }
            if let Some(a) = f.arguments {
                self.slots[i].arguments.push_str(&a);
            }
        }
    }
}

impl StreamParser for Parser {
    fn feed(&mut self, event: &Event, out: &mut dyn FnMut(Delta)) -> Result<bool, LlmError> {
        if event.data.trim() == "[DONE]" {
            if self.stop.is_none() {
                // A server that skips finish_reason but ends cleanly still finished.
                self.stop = Some(if self.slots.is_empty() {
                    StopReason::EndTurn
                } else {
                    StopReason::ToolUse
                });
            }
            return Ok(true);
        }
        let chunk: Chunk = decode(KIND, event)?;
        if let Some(e) = chunk.error {
            let code = e.code.map(|c| match c {
                Value::String(s) => s,
                other => other.to_string(),
            });
            return Err(LlmError::Provider {
                provider: KIND,
                code,
                message: e.message,
            });
        }
        if let Some(m) = chunk.model {
            self.model = m;
        }
        if chunk.id.is_some() {
            self.response_id = chunk.id;
        }
        // Usage may ride on the finish chunk (DeepSeek) or on a `choices: []` chunk (OpenAI).
        if let Some(u) = chunk.usage {
            self.usage = u.normalise();
        }
        if let Some(cache_n) = chunk.timings.and_then(|t| t.cache_n)
            && self.usage.cached_input_tokens == 0
        {
            self.usage.cached_input_tokens = cache_n.min(self.usage.input_tokens);
        }
        for choice in chunk.choices {
            if let Some(d) = choice.delta {
                if let Some(r) = d
                    .reasoning_content
                    .or(d.reasoning)
                    .filter(|r| !r.is_empty())
                {
                    self.reasoning.push_str(&r);
                    out(Delta::Reasoning(r));
                }
                if let Some(t) = d.content.filter(|t| !t.is_empty()) {
                    self.text.push_str(&t);
                    out(Delta::Text(t));
                }
                for call in d.tool_calls.unwrap_or_default() {
                    self.call_delta(call, out);
                }
            }
            if let Some(reason) = choice.finish_reason {
                self.stop = Some(match reason.as_str() {
                    "stop" => StopReason::EndTurn,
                    "tool_calls" | "function_call" => StopReason::ToolUse,
                    "length" => StopReason::MaxTokens,
                    "content_filter" => StopReason::ContentFilter,
                    _ => StopReason::Other,
                });
            }
        }
        Ok(false)
    }

    fn is_complete(&self) -> bool {
        self.stop.is_some()
    }

    fn partial_text(&self) -> &str {
        &self.text
    }

    fn usage(&self) -> Usage {
        self.usage
    }

    fn finish(self: Box<Self>) -> Result<Completion, LlmError> {
        let stop = self.stop.ok_or_else(|| LlmError::Stream {
            provider: KIND,
            message: "the stream ended without a finish reason or `[DONE]`".into(),
        })?;
        let mut items = Vec::new();
        if !self.reasoning.is_empty() {
            items.push(Item::Reasoning(Reasoning {
                provider: KIND,
                id: None,
                text: self.reasoning,
                opaque: None,
            }));
        }
        if !self.text.is_empty() {
            items.push(Item::Assistant(self.text));
        }
        for s in self.slots {
            items.push(Item::ToolCall(ToolCall {
                id: s.id,
                name: s.name,
                arguments: s.arguments,
            }));
        }
        Ok(Completion {
            items,
            usage: self.usage,
            stop,
            model: self.model,
            response_id: self.response_id,
        })
    }
}
