//! OpenAI Responses API (`POST {base}/responses`), stateless (`store: false`): every call
//! resends the conversation, with reasoning items carried as `encrypted_content`.

use std::collections::HashMap;

use eventsource_stream::Event;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::sse::{OpenAiUsage, StreamParser, decode};
use super::{
    Completion, Delta, Effort, Item, LlmError, Previous, ProviderKind, ProviderSettings, Reasoning,
    Request, StopReason, ToolCall, Usage,
};

const KIND: ProviderKind = ProviderKind::OpenAi;

/// Reasoning models take `reasoning.effort`; others reject the field outright.
pub(super) fn reasoning_effort(model: &str, effort: Effort) -> Option<&'static str> {
    let m = model.rsplit('/').next().unwrap_or(model);
    let reasons =
        m.starts_with("gpt-5") || m.starts_with('o') && m[1..].starts_with(char::is_numeric);
    if !reasons {
        return None;
    }
    // gpt-5 before 5.1 rejects `none`; `minimal` is its floor.
    let before_5_1 = m == "gpt-5" || m.starts_with("gpt-5-") || m.starts_with('o');
    Some(match effort {
        Effort::None if before_5_1 => "minimal",
        Effort::XHigh if before_5_1 => "high",
        e => e.as_str(),
    })
}

/// A Responses request body, borrowing the request's texts: serialised straight to bytes, not
/// built as a `serde_json::Value` tree first (a copy of every text and an allocation per node:
/// 0.7 ms of a 180 KB request, most of it, on the way to the first token).
#[derive(Serialize)]
pub(super) struct Body<'a> {
    model: &'a str,
    instructions: &'a str,
    input: Vec<Input<'a>>,
    stream: bool,
    store: bool,
    max_output_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    previous_response_id: Option<&'a str>,
    /// Stateless: reasoning must travel with the conversation, encrypted.
    #[serde(skip_serializing_if = "Option::is_none")]
    include: Option<[&'static str; 1]>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel_tool_calls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<ReasoningParam>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Input<'a> {
    Message {
        role: &'static str,
        content: Content<'a>,
    },
    Reasoning {
        summary: Vec<Text<'a>>,
        encrypted_content: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<&'a str>,
    },
    FunctionCall {
        call_id: &'a str,
        name: &'a str,
        arguments: &'a str,
    },
    FunctionCallOutput {
        call_id: &'a str,
        output: &'a str,
    },
}

#[derive(Serialize)]
#[serde(untagged)]
enum Content<'a> {
    Text(&'a str),
    Parts([OutputText<'a>; 1]),
}

#[derive(Serialize)]
struct OutputText<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
    annotations: &'static [()],
}

#[derive(Serialize)]
struct Text<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

#[derive(Serialize)]
struct Tool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
    strict: bool,
}

#[derive(Serialize)]
struct ReasoningParam {
    effort: &'static str,
    summary: &'static str,
}

/// `max_output_tokens` is the client's, fitted to the model's window.
pub(super) fn body<'a>(
    s: &'a ProviderSettings,
    max_output_tokens: u32,
    req: &'a Request,
    previous: Option<&'a Previous>,
) -> Body<'a> {
    let chained = previous.filter(|p| s.responses_store && p.items <= req.items.len());
    let skip = chained.map_or(0, |p| p.items);
    let input = req.items[skip..].iter().filter_map(input).collect();
    let tools: Vec<Tool<'a>> = req
        .tools
        .iter()
        .map(|t| Tool {
            kind: "function",
            name: &t.name,
            description: &t.description,
            parameters: &t.parameters,
            strict: false,
        })
        .collect();
    let with_tools = !tools.is_empty();
    Body {
        model: &s.model,
        instructions: &req.system,
        input,
        stream: true,
        store: s.responses_store,
        max_output_tokens,
        previous_response_id: chained.map(|p| p.response_id.as_str()),
        include: (!s.responses_store).then_some(["reasoning.encrypted_content"]),
        tools,
        tool_choice: with_tools.then_some("auto"),
        parallel_tool_calls: with_tools.then_some(true),
        reasoning: req
            .effort
            .and_then(|e| reasoning_effort(&s.model, e))
            .map(|effort| ReasoningParam {
                effort,
                summary: "auto",
            }),
    }
}

/// One conversation item as a Responses input item; `None` for reasoning that is not this
/// provider's to read (or carries nothing to echo).
fn input(item: &Item) -> Option<Input<'_>> {
    Some(match item {
        Item::User(text) => Input::Message {
            role: "user",
            content: Content::Text(text),
        },
        Item::Assistant(text) => Input::Message {
            role: "assistant",
            content: Content::Parts([OutputText {
                kind: "output_text",
                text,
                annotations: &[],
            }]),
        },
        Item::Reasoning(r) if r.provider == KIND => Input::Reasoning {
            summary: if r.text.is_empty() {
                Vec::new()
            } else {
                vec![Text {
                    kind: "summary_text",
                    text: &r.text,
                }]
            },
            encrypted_content: r.opaque.as_deref()?,
            id: r.id.as_deref(),
        },
        Item::Reasoning(_) => return None,
        Item::ToolCall(c) => Input::FunctionCall {
            call_id: &c.id,
            name: &c.name,
            arguments: &c.arguments,
        },
        Item::ToolResult(r) => Input::FunctionCallOutput {
            call_id: &r.call_id,
            output: &r.content,
        },
    })
}

#[derive(Deserialize)]
#[serde(tag = "type")]
enum Ev {
    #[serde(rename = "response.created")]
    Created { response: Resp },
    #[serde(rename = "response.output_text.delta")]
    TextDelta { delta: String },
    #[serde(
        rename = "response.reasoning_summary_text.delta",
        alias = "response.reasoning_text.delta"
    )]
    ReasoningDelta { delta: String },
    #[serde(rename = "response.output_item.added")]
    ItemAdded { item: OutItem },
    #[serde(rename = "response.output_item.done")]
    ItemDone { item: OutItem },
    #[serde(rename = "response.function_call_arguments.delta")]
    ArgsDelta { item_id: String, delta: String },
    #[serde(rename = "response.completed")]
    Completed { response: Resp },
    #[serde(rename = "response.incomplete")]
    Incomplete { response: Resp },
    #[serde(rename = "response.failed")]
    Failed { response: Resp },
    #[serde(rename = "error")]
    Error {
        #[serde(default)]
        code: Option<String>,
        #[serde(default)]
        message: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct Resp {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    usage: Option<OpenAiUsage>,
    #[serde(default)]
    error: Option<RespError>,
    #[serde(default)]
    incomplete_details: Option<Incomplete>,
}

#[derive(Deserialize)]
struct RespError {
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    message: String,
}

#[derive(Deserialize)]
struct Incomplete {
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(tag = "type")]
enum OutItem {
    #[serde(rename = "message")]
    Message {
        #[serde(default)]
        content: Vec<Part>,
    },
    #[serde(rename = "function_call")]
    FunctionCall {
        #[serde(default)]
        id: Option<String>,
        call_id: String,
        name: String,
        #[serde(default)]
        arguments: String,
    },
    #[serde(rename = "reasoning")]
    Reasoning {
        #[serde(default)]
        id: Option<String>,
        #[serde(default)]
        summary: Vec<Part>,
        #[serde(default)]
        encrypted_content: Option<String>,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type")]
enum Part {
    #[serde(rename = "output_text", alias = "summary_text")]
    Text { text: String },
    #[serde(rename = "refusal")]
    Refusal { refusal: String },
    #[serde(other)]
    Other,
}

fn join_text(parts: &[Part]) -> String {
    parts
        .iter()
        .filter_map(|p| match p {
            Part::Text { text } => Some(text.as_str()),
            Part::Refusal { refusal } => Some(refusal.as_str()),
            Part::Other => None,
        })
        .collect()
}

pub(super) struct Parser {
    model: String,
    text: String,
    items: Vec<Item>,
    /// `fc_…` item id → index into `items`-to-be; argument deltas are keyed by item id.
    pending_args: HashMap<String, String>,
    usage: Usage,
    response_id: Option<String>,
    stop: Option<StopReason>,
}

impl Parser {
    pub(super) fn new(s: &ProviderSettings) -> Self {
        Parser {
            model: s.model.clone(),
            text: String::new(),
            items: Vec::new(),
            pending_args: HashMap::new(),
            usage: Usage::default(),
            response_id: None,
            stop: None,
        }
    }

    fn absorb(&mut self, r: &Resp) {
        if let Some(id) = &r.id {
            self.response_id = Some(id.clone());
        }
        if let Some(m) = &r.model {
            self.model = m.clone();
        }
        if let Some(u) = &r.usage {
            self.usage = u.normalise();
        }
    }
}

impl StreamParser for Parser {
    fn feed(&mut self, event: &Event, out: &mut dyn FnMut(Delta)) -> Result<bool, LlmError> {
        match decode::<Ev>(KIND, event)? {
            Ev::Created { response } => self.absorb(&response),
            Ev::TextDelta { delta } => {
                self.text.push_str(&delta);
                out(Delta::Text(delta));
            }
            Ev::ReasoningDelta { delta } => out(Delta::Reasoning(delta)),
            Ev::ItemAdded { item } => {
                if let OutItem::FunctionCall {
                    id, call_id, name, ..
                } = item
                {
                    self.pending_args
                        .insert(id.unwrap_or_else(|| call_id.clone()), String::new());
                    out(Delta::ToolCallStarted { id: call_id, name });
                }
            }
            Ev::ArgsDelta { item_id, delta } => {
                self.pending_args
                    .entry(item_id)
                    .or_default()
                    .push_str(&delta);
            }
            Ev::ItemDone { item } => match item {
                OutItem::Message { content } => {
                    self.items.push(Item::Assistant(join_text(&content)))
                }
                OutItem::FunctionCall {
                    id,
                    call_id,
                    name,
                    arguments,
                } => {
                    let streamed = self.pending_args.remove(id.as_deref().unwrap_or(&call_id));
                    // `.done` carries the full arguments; the deltas are a fallback.
                    let arguments = if arguments.is_empty() {
                        streamed.unwrap_or_default()
                    } else {
                        arguments
                    };
                    self.items.push(Item::ToolCall(ToolCall {
                        id: call_id,
                        name,
                        arguments,
                    }));
                }
                OutItem::Reasoning {
                    id,
                    summary,
                    encrypted_content,
                } => {
                    self.items.push(Item::Reasoning(Reasoning {
                        provider: KIND,
                        id,
                        text: join_text(&summary),
                        opaque: encrypted_content,
                    }));
                }
                OutItem::Other => {}
            },
            Ev::Completed { response } => {
                self.absorb(&response);
                let calls = self.items.iter().any(|i| matches!(i, Item::ToolCall(_)));
                self.stop = Some(if calls {
                    StopReason::ToolUse
                } else {
                    StopReason::EndTurn
                });
                return Ok(true);
            }
            Ev::Incomplete { response } => {
                self.absorb(&response);
                let reason = response.incomplete_details.and_then(|d| d.reason);
                self.stop = Some(match reason.as_deref() {
                    Some("max_output_tokens") => StopReason::MaxTokens,
                    Some("content_filter") => StopReason::ContentFilter,
                    _ => StopReason::Other,
                });
                return Ok(true);
            }
            Ev::Failed { response } => {
                self.absorb(&response);
                let (code, message) = match response.error {
                    Some(e) => (e.code, e.message),
                    None => (None, "the response failed without a reason".to_string()),
                };
                return Err(LlmError::Provider {
                    provider: KIND,
                    code,
                    message,
                });
            }
            Ev::Error { code, message } => {
                return Err(LlmError::Provider {
                    provider: KIND,
                    code,
                    message,
                });
            }
            Ev::Other => {}
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

    fn finish(mut self: Box<Self>) -> Result<Completion, LlmError> {
        let stop = self.stop.ok_or_else(|| LlmError::Stream {
            provider: KIND,
            message: "the stream ended without `response.completed`".into(),
        })?;
        if !self.text.is_empty() && !self.items.iter().any(|i| matches!(i, Item::Assistant(_))) {
            self.items
                .insert(0, Item::Assistant(std::mem::take(&mut self.text)));
        }
        Ok(Completion {
            items: self.items,
            usage: self.usage,
            stop,
            model: self.model,
            response_id: self.response_id,
        })
    }
}
