//! Anthropic Messages (`POST {base}/messages`). The stable prefix (tools + system) carries a
//! `cache_control` breakpoint, and so does the newest message, so each call reads the
//! previous call's cache.

use std::collections::BTreeMap;

use eventsource_stream::Event;
use serde::Deserialize;
use serde_json::{Value, json};

use super::sse::{StreamParser, arguments_as_object, decode};
use super::{
    Completion, Delta, Effort, Item, LlmError, ProviderKind, ProviderSettings, Reasoning, Request,
    StopReason, ToolCall, Usage,
};

const KIND: ProviderKind = ProviderKind::Anthropic;

fn thinking_budget(model: &str, effort: Effort) -> Option<u32> {
    let old = model.starts_with("claude-3-5")
        || model.starts_with("claude-3-haiku")
        || model.starts_with("claude-3-opus");
    if old {
        return None;
    }
    match effort {
        Effort::None | Effort::Low => None,
        Effort::Medium => Some(4_096),
        Effort::High => Some(16_000),
        Effort::XHigh => Some(32_000),
    }
}

struct Messages {
    out: Vec<Value>,
    role: &'static str,
    blocks: Vec<Value>,
}

impl Messages {
    fn push(&mut self, role: &'static str, block: Value) {
        if role != self.role && !self.blocks.is_empty() {
            self.flush();
        }
        self.role = role;
        self.blocks.push(block);
    }

    fn flush(&mut self) {
        if !self.blocks.is_empty() {
            let content = std::mem::take(&mut self.blocks);
            self.out
                .push(json!({"role": self.role, "content": content}));
        }
    }
}

pub(super) fn body(s: &ProviderSettings, req: &Request) -> Value {
    let mut m = Messages {
        out: Vec::new(),
        role: "user",
        blocks: Vec::new(),
    };
    for item in &req.items {
        match item {
            Item::User(text) => m.push("user", json!({"type": "text", "text": text})),
            Item::Assistant(text) if text.is_empty() => {}
            Item::Assistant(text) => m.push("assistant", json!({"type": "text", "text": text})),
            Item::Reasoning(r) if r.provider == KIND => match (&r.opaque, r.id.as_deref()) {
                (Some(data), Some("redacted")) => m.push("assistant", json!({"type": "redacted_thinking", "data": data})),
                (Some(sig), _) => m.push("assistant", json!({"type": "thinking", "thinking": r.text, "signature": sig})),
                (None, _) => {}
            },
            Item::Reasoning(_) => {}
            Item::ToolCall(c) => m.push(
                "assistant",
                json!({"type": "tool_use", "id": c.id, "name": c.name, "input": arguments_as_object(&c.arguments)}),
            ),
            Item::ToolResult(r) => {
                let mut b = json!({"type": "tool_result", "tool_use_id": r.call_id, "content": r.content});
                if r.is_error {
                    b["is_error"] = json!(true);
                }
                m.push("user", b)
            }
        }
    }
    m.flush();
    let mut messages = m.out;
    // Second breakpoint: the conversation so far, so the next call of the tool loop hits it.
    if let Some(last) = messages
        .last_mut()
        .and_then(|msg| msg["content"].as_array_mut())
        .and_then(|c| c.last_mut())
    {
        last["cache_control"] = json!({"type": "ephemeral"});
    }

    let budget = req.effort.and_then(|e| thinking_budget(&s.model, e));
    let max_tokens = match budget {
        Some(b) => s.max_output_tokens.max(b + 4_096),
        None => s.max_output_tokens,
    };
    let mut body = json!({
        "model": s.model,
        "max_tokens": max_tokens,
        "system": [{"type": "text", "text": req.system, "cache_control": {"type": "ephemeral"}}],
        "messages": messages,
        "stream": true,
    });
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        body["tools"] = Value::Array(tools);
    }
    if let Some(b) = budget {
        body["thinking"] = json!({"type": "enabled", "budget_tokens": b});
    }
    body
}

#[derive(Deserialize)]
#[serde(tag = "type")]
enum Ev {
    #[serde(rename = "message_start")]
    MessageStart { message: StartMessage },
    #[serde(rename = "content_block_start")]
    BlockStart {
        index: usize,
        content_block: BlockStart,
    },
    #[serde(rename = "content_block_delta")]
    BlockDelta { index: usize, delta: BlockDelta },
    #[serde(rename = "content_block_stop")]
    BlockStop { index: usize },
    #[serde(rename = "message_delta")]
    MessageDelta {
        #[serde(default)]
        delta: MessageDeltaBody,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    #[serde(rename = "message_stop")]
    MessageStop,
    #[serde(rename = "error")]
    Error { error: WireError },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct StartMessage {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize, Default)]
struct MessageDeltaBody {
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireError {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    message: String,
}

/// Anthropic counts cache reads and writes outside `input_tokens`; message_delta's numbers
/// are cumulative, so later values replace earlier ones field by field.
#[derive(Deserialize, Default)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
}

#[derive(Deserialize)]
#[serde(tag = "type")]
enum BlockStart {
    #[serde(rename = "text")]
    Text {
        #[serde(default)]
        text: String,
    },
    #[serde(rename = "tool_use")]
    ToolUse { id: String, name: String },
    #[serde(rename = "thinking")]
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: Option<String>,
    },
    #[serde(rename = "redacted_thinking")]
    RedactedThinking { data: String },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type")]
enum BlockDelta {
    #[serde(rename = "text_delta")]
    Text { text: String },
    #[serde(rename = "input_json_delta")]
    Json { partial_json: String },
    #[serde(rename = "thinking_delta")]
    Thinking { thinking: String },
    #[serde(rename = "signature_delta")]
    Signature { signature: String },
    #[serde(other)]
    Other,
}

enum Block {
    Text(String),
    Tool {
        id: String,
        name: String,
        json: String,
    },
    Thinking {
        text: String,
        signature: String,
    },
    Redacted(String),
    Ignored,
}

pub(super) struct Parser {
    model: String,
    response_id: Option<String>,
    text: String,
    blocks: BTreeMap<usize, Block>,
    items: Vec<Item>,
    input: u64,
    cache_read: u64,
    cache_write: u64,
    output: u64,
    stop: Option<StopReason>,
    finished: bool,
}

impl Parser {
    pub(super) fn new(s: &ProviderSettings) -> Self {
        Parser {
            model: s.model.clone(),
            response_id: None,
            text: String::new(),
            blocks: BTreeMap::new(),
            items: Vec::new(),
            input: 0,
            cache_read: 0,
            cache_write: 0,
            output: 0,
            stop: None,
            finished: false,
        }
    }

    fn take_usage(&mut self, u: WireUsage) {
        if let Some(v) = u.input_tokens {
            self.input = v;
        }
        if let Some(v) = u.cache_read_input_tokens {
            self.cache_read = v;
        }
        if let Some(v) = u.cache_creation_input_tokens {
            self.cache_write = v;
        }
        if let Some(v) = u.output_tokens {
            self.output = v;
        }
    }

    fn close(&mut self, index: usize) {
        let Some(block) = self.blocks.remove(&index) else {
            return;
        };
        match block {
            Block::Text(t) if !t.is_empty() => self.items.push(Item::Assistant(t)),
            Block::Tool { id, name, json } => self.items.push(Item::ToolCall(ToolCall {
                id,
                name,
                arguments: json,
            })),
            Block::Thinking { text, signature } => self.items.push(Item::Reasoning(Reasoning {
                provider: KIND,
                id: None,
                text,
                opaque: Some(signature),
            })),
            Block::Redacted(data) => self.items.push(Item::Reasoning(Reasoning {
                provider: KIND,
                id: Some("redacted".into()),
                text: String::new(),
                opaque: Some(data),
            })),
            Block::Text(_) | Block::Ignored => {}
        }
    }
}

impl StreamParser for Parser {
    fn feed(&mut self, event: &Event, out: &mut dyn FnMut(Delta)) -> Result<bool, LlmError> {
        match decode::<Ev>(KIND, event)? {
            Ev::MessageStart { message } => {
                self.response_id = message.id;
                if let Some(m) = message.model {
                    self.model = m;
                }
                if let Some(u) = message.usage {
                    self.take_usage(u);
                }
            }
            Ev::BlockStart {
                index,
                content_block,
            } => {
                let block = match content_block {
                    BlockStart::Text { text } => {
                        if !text.is_empty() {
                            self.text.push_str(&text);
                            out(Delta::Text(text.clone()));
                        }
                        Block::Text(text)
                    }
                    BlockStart::ToolUse { id, name } => {
                        out(Delta::ToolCallStarted {
                            id: id.clone(),
                            name: name.clone(),
                        });
                        Block::Tool {
                            id,
                            name,
                            json: String::new(),
                        }
                    }
                    BlockStart::Thinking {
                        thinking,
                        signature,
                    } => Block::Thinking {
                        text: thinking,
                        signature: signature.unwrap_or_default(),
                    },
                    BlockStart::RedactedThinking { data } => Block::Redacted(data),
                    BlockStart::Other => Block::Ignored,
                };
                self.blocks.insert(index, block);
            }
            Ev::BlockDelta { index, delta } => match (self.blocks.get_mut(&index), delta) {
                (Some(Block::Text(t)), BlockDelta::Text { text }) => {
                    t.push_str(&text);
                    self.text.push_str(&text);
                    out(Delta::Text(text));
                }
                (Some(Block::Tool { json, .. }), BlockDelta::Json { partial_json }) => {
                    json.push_str(&partial_json)
                }
                (Some(Block::Thinking { text, .. }), BlockDelta::Thinking { thinking }) => {
                    text.push_str(&thinking);
                    out(Delta::Reasoning(thinking));
                }
                (
                    Some(Block::Thinking { signature, .. }),
                    BlockDelta::Signature { signature: s },
                ) => signature.push_str(&s),
                _ => {}
            },
            Ev::BlockStop { index } => self.close(index),
            Ev::MessageDelta { delta, usage } => {
                if let Some(u) = usage {
                    self.take_usage(u);
                }
                if let Some(reason) = delta.stop_reason {
                    self.stop = Some(match reason.as_str() {
                        "end_turn" | "stop_sequence" | "pause_turn" => StopReason::EndTurn,
                        "tool_use" => StopReason::ToolUse,
                        "max_tokens" | "model_context_window_exceeded" => StopReason::MaxTokens,
                        "refusal" => StopReason::Refusal,
                        _ => StopReason::Other,
                    });
                }
            }
            Ev::MessageStop => {
                self.finished = true;
                return Ok(true);
            }
            Ev::Error { error } => {
                return Err(LlmError::Provider {
                    provider: KIND,
                    code: error.kind,
                    message: error.message,
                });
            }
            Ev::Other => {}
        }
        Ok(false)
    }

    fn is_complete(&self) -> bool {
        self.finished
    }

    fn partial_text(&self) -> &str {
        &self.text
    }

    fn usage(&self) -> Usage {
        Usage {
            input_tokens: self.input + self.cache_read + self.cache_write,
            cached_input_tokens: self.cache_read,
            cache_write_tokens: self.cache_write,
            output_tokens: self.output,
            reasoning_tokens: 0,
        }
    }

    fn finish(mut self: Box<Self>) -> Result<Completion, LlmError> {
        if !self.finished {
            return Err(LlmError::Stream {
                provider: KIND,
                message: "the stream ended without `message_stop`".into(),
            });
        }
        let open: Vec<usize> = self.blocks.keys().copied().collect();
        for index in open {
            self.close(index);
        }
        let usage = self.usage();
        let calls = self.items.iter().any(|i| matches!(i, Item::ToolCall(_)));
        let stop = self.stop.unwrap_or(if calls {
            StopReason::ToolUse
        } else {
            StopReason::EndTurn
        });
        Ok(Completion {
            items: self.items,
            usage,
            stop,
            model: self.model,
            response_id: self.response_id,
        })
    }
}
