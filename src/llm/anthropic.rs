//! Anthropic Messages (`POST {base}/messages`). The stable prefix (tools + system) carries a
//! `cache_control` breakpoint, and so does the newest message, so each call reads the
//! previous call's cache.

use std::collections::BTreeMap;

use eventsource_stream::Event;
use serde::{Deserialize, Serialize};
use serde_json::Value;

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

/// A Messages request body, borrowing the request's texts (no JSON tree built first).
#[derive(Serialize)]
pub(super) struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    system: [Part<'a>; 1],
    messages: Vec<Message<'a>>,
    stream: bool,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Thinking>,
}

#[derive(Serialize)]
struct Message<'a> {
    role: &'static str,
    content: Vec<Part<'a>>,
}

/// A content block, with a cache breakpoint or not.
#[derive(Serialize)]
struct Part<'a> {
    #[serde(flatten)]
    kind: BlockKind<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<Ephemeral>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockKind<'a> {
    Text {
        text: &'a str,
    },
    RedactedThinking {
        data: &'a str,
    },
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: Value,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: &'a str,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

#[derive(Serialize)]
struct Ephemeral {
    #[serde(rename = "type")]
    kind: &'static str,
}

const EPHEMERAL: Ephemeral = Ephemeral { kind: "ephemeral" };

#[derive(Serialize)]
struct Tool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
}

#[derive(Serialize)]
struct Thinking {
    #[serde(rename = "type")]
    kind: &'static str,
    budget_tokens: u32,
}

/// Consecutive items of one role, as one message.
struct Messages<'a> {
    out: Vec<Message<'a>>,
    role: &'static str,
    blocks: Vec<Part<'a>>,
}

impl<'a> Messages<'a> {
    fn push(&mut self, role: &'static str, kind: BlockKind<'a>) {
        if role != self.role && !self.blocks.is_empty() {
            self.flush();
        }
        self.role = role;
        self.blocks.push(Part {
            kind,
            cache_control: None,
        });
    }

    fn flush(&mut self) {
        if !self.blocks.is_empty() {
            let content = std::mem::take(&mut self.blocks);
            self.out.push(Message {
                role: self.role,
                content,
            });
        }
    }
}

/// `max_output_tokens` is the client's, fitted to the model's window.
pub(super) fn body<'a>(
    s: &'a ProviderSettings,
    max_output_tokens: u32,
    req: &'a Request,
) -> Body<'a> {
    let mut m = Messages {
        out: Vec::new(),
        role: "user",
        blocks: Vec::new(),
    };
    for item in &req.items {
        match item {
            Item::User(text) => m.push("user", BlockKind::Text { text }),
            Item::Assistant(text) if text.is_empty() => {}
            Item::Assistant(text) => m.push("assistant", BlockKind::Text { text }),
            Item::Reasoning(r) if r.provider == KIND => match (&r.opaque, r.id.as_deref()) {
                (Some(data), Some("redacted")) => {
                    m.push("assistant", BlockKind::RedactedThinking { data })
                }
                (Some(signature), _) => m.push(
                    "assistant",
                    BlockKind::Thinking {
                        thinking: &r.text,
                        signature,
                    },
                ),
                (None, _) => {}
            },
            Item::Reasoning(_) => {}
            Item::ToolCall(c) => m.push(
                "assistant",
                BlockKind::ToolUse {
                    id: &c.id,
                    name: &c.name,
                    input: arguments_as_object(&c.arguments),
                },
            ),
            Item::ToolResult(r) => m.push(
                "user",
                BlockKind::ToolResult {
                    tool_use_id: &r.call_id,
                    content: &r.content,
                    is_error: r.is_error,
                },
            ),
        }
    }
    m.flush();
    let mut messages = m.out;
    // Second breakpoint: the conversation so far, so the next call of the tool loop hits it.
    if let Some(last) = messages.last_mut().and_then(|msg| msg.content.last_mut()) {
        last.cache_control = Some(EPHEMERAL);
    }

    let budget = req.effort.and_then(|e| thinking_budget(&s.model, e));
    Body {
        model: &s.model,
        max_tokens: match budget {
            Some(b) => max_output_tokens.max(b + 4_096),
            None => max_output_tokens,
        },
        // First breakpoint: the stable prefix (tools and system).
        system: [Part {
            kind: BlockKind::Text { text: &req.system },
            cache_control: Some(EPHEMERAL),
        }],
        messages,
        stream: true,
        tools: req
            .tools
            .iter()
            .map(|t| Tool {
                name: &t.name,
                description: &t.description,
                input_schema: &t.parameters,
            })
            .collect(),
        thinking: budget.map(|budget_tokens| Thinking {
            kind: "enabled",
            budget_tokens,
        }),
    }
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
