//! Wire-format tests on recorded-shape fixtures: every fixture is fed through
//! eventsource-stream in several chunk sizes, LF and CRLF, exactly as the client reads it.

use eventsource_stream::Eventsource;
use futures::StreamExt;
use serde_json::json;

use super::sse::StreamParser;
use super::*;

const OPENAI_RESPONSES: &str = include_str!("../../tests/fixtures/openai_responses_tool_call.sse");
const CHAT: &str = include_str!("../../tests/fixtures/chat_completions_tool_call.sse");
const DEEPSEEK: &str = include_str!("../../tests/fixtures/deepseek_thinking_tool_call.sse");
const ANTHROPIC: &str = include_str!("../../tests/fixtures/anthropic_tool_use.sse");

fn settings(kind: ProviderKind, base: &str, model: &str) -> ProviderSettings {
    ProviderSettings::new(kind, base, model)
}

/// The bodies as the wire sees them, at the configured answer cap.
fn chat_body(s: &ProviderSettings, req: &Request) -> serde_json::Value {
    serde_json::to_value(chat::body(s, s.max_output_tokens, req)).unwrap()
}

fn anthropic_body(s: &ProviderSettings, req: &Request) -> serde_json::Value {
    serde_json::to_value(anthropic::body(s, s.max_output_tokens, req)).unwrap()
}

fn parser(s: &ProviderSettings) -> Box<dyn StreamParser> {
    match s.kind {
        ProviderKind::OpenAi => Box::new(openai::Parser::new(s)),
        ProviderKind::OpenAiChat => Box::new(chat::Parser::new(s)),
        ProviderKind::Anthropic => Box::new(anthropic::Parser::new(s)),
    }
}

/// Parse `sse` delivered in `chunk`-byte pieces (splitting UTF-8 and CRLF pairs anywhere).
fn parse(s: &ProviderSettings, sse: &str, chunk: usize) -> (Completion, Vec<Delta>) {
    let bytes = sse.as_bytes().to_vec();
    let pieces: Vec<Result<Vec<u8>, std::io::Error>> =
        bytes.chunks(chunk).map(|c| Ok(c.to_vec())).collect();
    let mut events = futures::stream::iter(pieces).eventsource();
    let mut p = parser(s);
    let mut deltas = Vec::new();
    futures::executor::block_on(async {
        while let Some(ev) = events.next().await {
            if p.feed(&ev.unwrap(), &mut |d| deltas.push(d)).unwrap() {
                break;
            }
        }
    });
    (p.finish().unwrap(), deltas)
}

fn every_chunking(s: &ProviderSettings, sse: &str) -> Completion {
    let (reference, _) = parse(s, sse, sse.len());
    for crlf in [false, true] {
        let text = if crlf {
            sse.replace('\n', "\r\n")
        } else {
            sse.to_string()
        };
        for chunk in [1, 2, 3, 5, 7, 64, 1000] {
            let (c, _) = parse(s, &text, chunk);
            assert_eq!(c, reference, "chunk {chunk}, crlf {crlf}");
        }
    }
    reference
}

#[test]
fn responses_fixture() {
    let s = settings(ProviderKind::OpenAi, "http://x/v1", "gpt-5.2");
    let c = every_chunking(&s, OPENAI_RESPONSES);
    assert_eq!(c.text(), "Let me read the file – ünïcode ✓.");
    assert_eq!(c.response_id.as_deref(), Some("resp_001"));
    match &c.items[0] {
        Item::Reasoning(r) => assert_eq!(
            r.opaque.as_deref(),
            Some("gAAAAABexample=="),
            "taken from .done"
        ),
        other => panic!("{other:?}"),
    }
    let call = c.tool_calls().next().unwrap();
    assert_eq!(
        (call.id.as_str(), call.arguments.as_str()),
        ("call_001", r#"{"path":"src/main.rs"}"#)
    );
    assert_eq!(
        c.usage,
        Usage {
            input_tokens: 1200,
            cached_input_tokens: 1024,
            cache_write_tokens: 0,
            output_tokens: 58,
            reasoning_tokens: 32
        }
    );
    assert_eq!(c.stop, StopReason::ToolUse);

    // Stateless follow-up: the reasoning item and the call go back, then the output.
    let mut items = vec![Item::User("read main.rs".into())];
    items.extend(c.items.clone());
    items.push(Item::ToolResult(ToolResult {
        call_id: "call_001".into(),
        content: "fn main() {}\n".into(),
        is_error: false,
    }));
    let req = Request {
        system: "You are Mira.".into(),
        items,
        tools: Vec::new(),
        effort: Some(Effort::Medium),
    };
    let body = serde_json::to_value(openai::body(&s, s.max_output_tokens, &req, None)).unwrap();
    assert_eq!(body["store"], json!(false));
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(body["instructions"], "You are Mira.");
    assert_eq!(body["reasoning"]["effort"], "medium");
    let types: Vec<&str> = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "message",
            "reasoning",
            "message",
            "function_call",
            "function_call_output"
        ]
    );
    assert_eq!(body["input"][1]["encrypted_content"], "gAAAAABexample==");
}

#[test]
fn chat_completions_fixture() {
    let s = settings(
        ProviderKind::OpenAiChat,
        "https://api.openai.com/v1",
        "gpt-4.1",
    );
    let c = every_chunking(&s, CHAT);
    assert_eq!(c.text(), "Reading ünïcode ✓.");
    let call = c.tool_calls().next().unwrap();
    assert_eq!(
        (call.id.as_str(), call.arguments.as_str()),
        ("call_001", r#"{"path":"src/main.rs"}"#)
    );
    assert_eq!(
        (
            c.usage.input_tokens,
            c.usage.cached_input_tokens,
            c.usage.output_tokens
        ),
        (1200, 1024, 24)
    );
    let body = chat_body(
        &s,
        &Request {
            system: "s".into(),
            items: vec![Item::User("q".into())],
            tools: Vec::new(),
            effort: None,
        },
    );
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert!(body.get("max_completion_tokens").is_some() && body.get("max_tokens").is_none());
}

#[test]
fn deepseek_reasoning_is_read_and_echoed_after_tool_calls() {
    let s = settings(
        ProviderKind::OpenAiChat,
        "https://api.deepseek.com",
        "deepseek-v4-flash",
    );
    assert_eq!(s.flavour, ChatFlavour::DeepSeek);
    let c = every_chunking(&s, DEEPSEEK);
    assert_eq!(
        c.usage,
        Usage {
            input_tokens: 1200,
            cached_input_tokens: 1024,
            cache_write_tokens: 0,
            output_tokens: 40,
            reasoning_tokens: 12
        }
    );
    let mut items = vec![Item::User("read main".into())];
    items.extend(c.items.clone());
    items.push(Item::ToolResult(ToolResult {
        call_id: "call_00_abc".into(),
        content: "fn main() {}".into(),
        is_error: false,
    }));
    let body = chat_body(
        &s,
        &Request {
            system: "s".into(),
            items: items.clone(),
            tools: Vec::new(),
            effort: None,
        },
    );
    let assistant = &body["messages"][2];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["content"], json!(null));
    assert_eq!(
        assistant["reasoning_content"],
        "I should read main.rs first."
    );
    assert_eq!(assistant["tool_calls"][0]["id"], "call_00_abc");
    assert_eq!(
        body["messages"][3],
        json!({"role": "tool", "tool_call_id": "call_00_abc", "content": "fn main() {}"})
    );
    assert!(body.get("max_tokens").is_some());

    // The legacy reasoner rejects echoed reasoning; OpenAI never gets it.
    for (url, model) in [
        ("https://api.deepseek.com", "deepseek-reasoner"),
        ("https://api.openai.com/v1", "gpt-4.1"),
    ] {
        let s = settings(ProviderKind::OpenAiChat, url, model);
        let body = chat_body(
            &s,
            &Request {
                system: "s".into(),
                items: items.clone(),
                tools: Vec::new(),
                effort: None,
            },
        );
        assert!(
            body["messages"][2].get("reasoning_content").is_none(),
            "{model}"
        );
    }
}

#[test]
fn ollama_whole_parallel_calls_on_one_index_and_reasoning_field() {
    let s = settings(
        ProviderKind::OpenAiChat,
        "http://127.0.0.1:11434/v1",
        "qwen3",
    );
    assert_eq!(s.flavour, ChatFlavour::Ollama);
    let chunk = |delta: serde_json::Value, finish: serde_json::Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "qwen3", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    };
    let sse = [
        chunk(json!({"role": "assistant", "content": "", "reasoning": "Two files."}), json!(null)),
        chunk(json!({"tool_calls": [{"id": "call_a", "index": 0, "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}}]}), json!(null)),
        chunk(json!({"tool_calls": [{"id": "call_b", "index": 0, "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"b\"}"}}]}), json!(null)),
        chunk(json!({}), json!("tool_calls")),
        format!("data: {}\n\n", json!({"id": "chatcmpl-1", "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})),
        "data: [DONE]\n\n".to_string(),
    ]
    .concat();
    let c = every_chunking(&s, &sse);
    let calls: Vec<_> = c
        .tool_calls()
        .map(|c| (c.id.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(
        calls,
        [("call_a", r#"{"path":"a"}"#), ("call_b", r#"{"path":"b"}"#)]
    );
    assert!(matches!(&c.items[0], Item::Reasoning(r) if r.text == "Two files."));
    assert_eq!((c.usage.input_tokens, c.usage.cached_input_tokens), (10, 0));
}

#[test]
fn anthropic_fixture_usage_thinking_echo_and_cache_breakpoints() {
    let s = settings(
        ProviderKind::Anthropic,
        "https://api.anthropic.com/v1",
        "claude-sonnet-4-5",
    );
    let c = every_chunking(&s, ANTHROPIC);
    assert_eq!(c.text(), "Reading ünïcode ✓.");
    let call = c.tool_calls().next().unwrap();
    assert_eq!(
        (call.id.as_str(), call.arguments.as_str()),
        ("toolu_01XYZ", r#"{"path": "src/main.rs"}"#)
    );
    // input_tokens excludes cache reads there; here the prompt total includes them.
    assert_eq!(
        c.usage,
        Usage {
            input_tokens: 1200,
            cached_input_tokens: 1024,
            cache_write_tokens: 0,
            output_tokens: 65,
            reasoning_tokens: 0
        }
    );

    let thinking = Item::Reasoning(Reasoning {
        provider: ProviderKind::Anthropic,
        id: None,
        text: "hmm".into(),
        opaque: Some("sig".into()),
    });
    let items = vec![
        Item::User("q".into()),
        thinking,
        Item::ToolCall(ToolCall {
            id: "toolu_1".into(),
            name: "read_file".into(),
            arguments: "{broken".into(),
        }),
        Item::ToolResult(ToolResult {
            call_id: "toolu_1".into(),
            content: "error: invalid".into(),
            is_error: true,
        }),
    ];
    let body = anthropic_body(
        &s,
        &Request {
            system: "sys".into(),
            items,
            tools: Vec::new(),
            effort: Some(Effort::High),
        },
    );
    assert_eq!(
        body["system"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    let assistant = &body["messages"][1]["content"];
    assert_eq!(
        assistant[0],
        json!({"type": "thinking", "thinking": "hmm", "signature": "sig"})
    );
    assert_eq!(
        assistant[1]["input"],
        json!({"_invalid_arguments": "{broken"}),
        "invalid arguments still echo as an object"
    );
    let result = &body["messages"][2]["content"][0];
    assert_eq!(
        (result["type"].as_str(), result["is_error"].as_bool()),
        (Some("tool_result"), Some(true))
    );
    assert_eq!(
        result["cache_control"],
        json!({"type": "ephemeral"}),
        "the newest block is a cache breakpoint"
    );
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 16000})
    );
    assert!(body["max_tokens"].as_u64().unwrap() > 16000);
}

#[test]
fn responses_failures_are_provider_errors() {
    let s = settings(ProviderKind::OpenAi, "http://x/v1", "gpt-5.1");
    let mut p = parser(&s);
    let ev = eventsource_stream::Event {
        event: "response.failed".into(),
        data: json!({"type": "response.failed", "response": {"id": "r", "status": "failed", "error": {"code": "server_error", "message": "The model failed to generate a response."}}}).to_string(),
        id: String::new(),
        retry: None,
    };
    match p.feed(&ev, &mut |_| {}) {
        Err(LlmError::Provider { code, message, .. }) => {
            assert_eq!(code.as_deref(), Some("server_error"));
            assert!(message.contains("failed to generate"));
        }
        other => panic!("{other:?}"),
    }
}

/// The Responses body is serialised from borrowed fields; every item kind, the tools, the
/// effort and both `store` modes, field by field, as the wire format wants them.
#[test]
fn responses_body_on_the_wire() {
    let mut s = settings(ProviderKind::OpenAi, "http://x/v1", "gpt-5.2");
    let ours = |opaque: Option<&str>, id: Option<&str>, text: &str| {
        Item::Reasoning(Reasoning {
            provider: ProviderKind::OpenAi,
            id: id.map(Into::into),
            text: text.into(),
            opaque: opaque.map(Into::into),
        })
    };
    let req = Request {
        system: "You are Mira.".into(),
        items: vec![
            Item::User("read \"main.rs\"".into()),
            ours(Some("enc1"), Some("rs_1"), "Thinking."),
            ours(Some("enc2"), None, ""),
            ours(None, Some("rs_3"), "no continuation: dropped"),
            Item::Reasoning(Reasoning {
                provider: ProviderKind::Anthropic,
                id: None,
                text: "another provider's: dropped".into(),
                opaque: Some("sig".into()),
            }),
            Item::Assistant("Reading it.".into()),
            Item::ToolCall(ToolCall {
                id: "call_1".into(),
                name: "read_file".into(),
                arguments: r#"{"path":"main.rs"}"#.into(),
            }),
            Item::ToolResult(ToolResult {
                call_id: "call_1".into(),
                content: "fn main() {}\n".into(),
                is_error: true,
            }),
        ],
        tools: vec![ToolSpec {
            name: "read_file".into(),
            description: "Reads a file.".into(),
            parameters: json!({"title": "ReadFileArgs"}),
        }],
        effort: Some(Effort::High),
    };
    let body = serde_json::to_value(openai::body(&s, 1234, &req, None)).unwrap();
    assert_eq!(
        body,
        json!({
            "model": "gpt-5.2",
            "instructions": "You are Mira.",
            "input": [
                {"type": "message", "role": "user", "content": "read \"main.rs\""},
                {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Thinking."}],
                 "encrypted_content": "enc1", "id": "rs_1"},
                {"type": "reasoning", "summary": [], "encrypted_content": "enc2"},
                {"type": "message", "role": "assistant",
                 "content": [{"type": "output_text", "text": "Reading it.", "annotations": []}]},
                {"type": "function_call", "call_id": "call_1", "name": "read_file",
                 "arguments": "{\"path\":\"main.rs\"}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "fn main() {}\n"},
            ],
            "stream": true,
            "store": false,
            "max_output_tokens": 1234,
            "include": ["reasoning.encrypted_content"],
            "tools": [{"type": "function", "name": "read_file", "description": "Reads a file.",
                       "parameters": {"title": "ReadFileArgs"},
                       "strict": false}],
            "tool_choice": "auto",
            "parallel_tool_calls": true,
            "reasoning": {"effort": "high", "summary": "auto"},
        })
    );

    // Stored and chained: the server holds the first items; nothing optional is sent empty.
    s.responses_store = true;
    let plain = Request {
        tools: Vec::new(),
        effort: None,
        ..req
    };
    let previous = Previous {
        response_id: "resp_9".into(),
        items: 7,
    };
    let body = serde_json::to_value(openai::body(&s, 99, &plain, Some(&previous))).unwrap();
    assert_eq!(
        body,
        json!({
            "model": "gpt-5.2",
            "instructions": "You are Mira.",
            "input": [
                {"type": "function_call_output", "call_id": "call_1", "output": "fn main() {}\n"},
            ],
            "stream": true,
            "store": true,
            "max_output_tokens": 99,
            "previous_response_id": "resp_9",
        })
    );
}

/// Chat Completions, field by field: consecutive assistant items make one message (its
/// content `null` when it is only calls), DeepSeek's reasoning echoed, its thinking switch.
#[test]
fn chat_body_on_the_wire() {
    let s = settings(
        ProviderKind::OpenAiChat,
        "https://api.deepseek.com",
        "deepseek-v4-flash",
    );
    let call = |id: &str| {
        Item::ToolCall(ToolCall {
            id: id.into(),
            name: "read_file".into(),
            arguments: "{}".into(),
        })
    };
    let result = |id: &str| {
        Item::ToolResult(ToolResult {
            call_id: id.into(),
            content: "ok".into(),
            is_error: false,
        })
    };
    let req = Request {
        system: "sys".into(),
        items: vec![
            Item::User("q".into()),
            Item::Reasoning(Reasoning {
                provider: ProviderKind::OpenAiChat,
                id: None,
                text: "think".into(),
                opaque: None,
            }),
            Item::Assistant("Part one. ".into()),
            Item::Assistant("Part two.".into()),
            call("c1"),
            result("c1"),
            Item::Assistant(String::new()),
            call("c2"),
            result("c2"),
        ],
        tools: vec![ToolSpec {
            name: "read_file".into(),
            description: "Reads.".into(),
            parameters: json!({"title": "Args"}),
        }],
        effort: Some(Effort::Medium),
    };
    let function = json!({"name": "read_file", "arguments": "{}"});
    assert_eq!(
        serde_json::to_value(chat::body(&s, 77, &req)).unwrap(),
        json!({
            "model": "deepseek-v4-flash",
            "messages": [
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": "Part one. Part two.", "reasoning_content": "think",
                 "tool_calls": [{"id": "c1", "type": "function", "function": function}]},
                {"role": "tool", "tool_call_id": "c1", "content": "ok"},
                {"role": "assistant", "content": null,
                 "tool_calls": [{"id": "c2", "type": "function", "function": function}]},
                {"role": "tool", "tool_call_id": "c2", "content": "ok"},
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_tokens": 77,
            "tools": [{"type": "function", "function": {"name": "read_file", "description": "Reads.",
                                                        "parameters": {"title": "Args"}}}],
            "tool_choice": "auto",
            "reasoning_effort": "high",
            "thinking": {"type": "enabled"},
        })
    );
    // Ollama takes `reasoning_effort` with `xhigh` as `high`; no effort, no field.
    let ollama = settings(
        ProviderKind::OpenAiChat,
        "http://127.0.0.1:11434/v1",
        "qwen3",
    );
    let ask = |effort| Request {
        system: "s".into(),
        items: vec![Item::User("q".into())],
        tools: Vec::new(),
        effort,
    };
    let xhigh = chat_body(&ollama, &ask(Some(Effort::XHigh)));
    assert_eq!(xhigh["reasoning_effort"], "high");
    assert!(xhigh.get("thinking").is_none() && xhigh.get("tools").is_none());
    assert!(
        chat_body(&ollama, &ask(None))
            .get("reasoning_effort")
            .is_none()
    );
}

/// Anthropic Messages, field by field: both cache breakpoints, a redacted thinking block,
/// the answer's cap raised above the thinking budget.
#[test]
fn messages_body_on_the_wire() {
    let s = settings(
        ProviderKind::Anthropic,
        "https://api.anthropic.com/v1",
        "claude-sonnet-4-5",
    );
    let req = Request {
        system: "sys".into(),
        items: vec![
            Item::User("q".into()),
            Item::Reasoning(Reasoning {
                provider: ProviderKind::Anthropic,
                id: Some("redacted".into()),
                text: String::new(),
                opaque: Some("blob".into()),
            }),
            Item::Assistant(String::new()),
            Item::Assistant("A.".into()),
            Item::User("again".into()),
        ],
        tools: vec![ToolSpec {
            name: "grep".into(),
            description: "Searches.".into(),
            parameters: json!({"title": "Args"}),
        }],
        effort: Some(Effort::Medium),
    };
    assert_eq!(
        serde_json::to_value(anthropic::body(&s, 1000, &req)).unwrap(),
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 8192,
            "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "q"}]},
                {"role": "assistant", "content": [
                    {"type": "redacted_thinking", "data": "blob"},
                    {"type": "text", "text": "A."},
                ]},
                {"role": "user", "content": [
                    {"type": "text", "text": "again", "cache_control": {"type": "ephemeral"}},
                ]},
            ],
            "stream": true,
            "tools": [{"name": "grep", "description": "Searches.", "input_schema": {"title": "Args"}}],
            "thinking": {"type": "enabled", "budget_tokens": 4096},
        })
    );
}
