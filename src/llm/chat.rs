//! Chat Completions (`POST {base}/chat/completions`): OpenAI, DeepSeek, Ollama, llama.cpp,
//! vLLM, OpenRouter. Differences between servers are [`ChatFlavour`] decisions made here.

use eventsource_stream::Event;
use serde::Deserialize;
use serde_json::{Value, json};

use super::sse::{OpenAiUsage, StreamParser, decode};
use super::{
    ChatFlavour, Completion, Delta, Effort, Item, LlmError, ProviderKind, ProviderSettings,
    Reasoning, Request, StopReason, ToolCall, Usage, openai,
};

const KIND: ProviderKind = ProviderKind::OpenAiChat;

/// One assistant message being assembled from consecutive assistant items.
#[derive(Default)]
struct AssistantMsg {
    content: String,
    reasoning: String,
    calls: Vec<Value>,
}

impl AssistantMsg {
    fn is_empty(&self) -> bool {
        self.content.is_empty() && self.reasoning.is_empty() && self.calls.is_empty()
    }

    fn into_json(self, echo_reasoning: bool) -> Value {
        let mut m = json!({
            "role": "assistant",
            "content": if self.content.is_empty() { Value::Null } else { Value::String(self.content) },
        });
        if !self.calls.is_empty() {
            m["tool_calls"] = Value::Array(self.calls);
        }
        if echo_reasoning && !self.reasoning.is_empty() {
            m["reasoning_content"] = Value::String(self.reasoning);
        }
        m
    }
}

pub(super) fn body(s: &ProviderSettings, req: &Request) -> Value {
    let echo = s.flavour.echoes_reasoning(&s.model);
    let mut messages = vec![json!({"role": "system", "content": req.system})];
    let mut pending = AssistantMsg::default();
    let flush = |pending: &mut AssistantMsg, messages: &mut Vec<Value>| {
        if !pending.is_empty() {
            messages.push(std::mem::take(pending).into_json(echo));
        }
    };
    for item in &req.items {
        match item {
            Item::User(text) => {
                flush(&mut pending, &mut messages);
                messages.push(json!({"role": "user", "content": text}));
            }
            Item::Assistant(text) => pending.content.push_str(text),
            Item::Reasoning(r) if r.provider == KIND => pending.reasoning.push_str(&r.text),
            Item::Reasoning(_) => {}
            Item::ToolCall(c) => pending.calls.push(json!({
                "id": c.id, "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            })),
            Item::ToolResult(r) => {
                flush(&mut pending, &mut messages);
                messages
                    .push(json!({"role": "tool", "tool_call_id": r.call_id, "content": r.content}));
            }
        }
    }
    flush(&mut pending, &mut messages);

    let mut body = json!({
        "model": s.model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    // OpenAI's reasoning models reject `max_tokens`; everyone else knows only `max_tokens`.
    let max_key = if s.flavour == ChatFlavour::OpenAi {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    body[max_key] = json!(s.max_output_tokens);
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
            .collect();
        body["tools"] = Value::Array(tools);
        body["tool_choice"] = json!("auto");
    }
    if let Some(effort) = req.effort {
        match s.flavour {
            ChatFlavour::OpenAi => {
                if let Some(e) = openai::reasoning_effort(&s.model, effort) {
                    body["reasoning_effort"] = json!(e);
                }
            }
            ChatFlavour::DeepSeek
                if s.model != "deepseek-chat" && s.model != "deepseek-reasoner" =>
            {
                if effort == Effort::None {
                    body["thinking"] = json!({"type": "disabled"});
                } else {
                    body["thinking"] = json!({"type": "enabled"});
                    body["reasoning_effort"] =
                        json!(if effort == Effort::Low { "low" } else { "high" });
                }
            }
            ChatFlavour::Ollama if effort != Effort::None => {
                body["reasoning_effort"] = json!(effort.as_str().replace("xhigh", "high"));
            }
            _ => {}
        }
    }
    body
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
