//! A scripted LLM server for tests: real HTTP/1.1 on 127.0.0.1, hand-written on tokio, that
//! replays turns in each provider's actual SSE wire format (Responses, Chat Completions,
//! Anthropic Messages) with delays, HTTP errors, cut streams and malformed tool arguments.
//!
//! Every request is captured and checked against the invariants real providers enforce (every
//! tool result answers an earlier call, every call gets a result, auth headers present).
//! Tests assert `mock.violations()` is empty.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    Responses,
    Chat,
    Anthropic,
}

impl Wire {
    pub const ALL: [Wire; 3] = [Wire::Responses, Wire::Chat, Wire::Anthropic];

    /// The `MIRA_PROVIDER` / `ProviderKind` name.
    pub fn provider(self) -> &'static str {
        match self {
            Wire::Responses => "openai",
            Wire::Chat => "openai-chat",
            Wire::Anthropic => "anthropic",
        }
    }

    pub fn model(self) -> &'static str {
        match self {
            Wire::Responses => "gpt-5.1",
            Wire::Chat => "gpt-4.1",
            Wire::Anthropic => "claude-sonnet-4-5",
        }
    }
}

/// One scripted model response, provider-neutral; rendered per wire format.
#[derive(Clone, Debug, Default)]
pub struct Turn {
    pub reasoning: Option<String>,
    /// Text deltas, streamed one event each.
    pub text: Vec<String>,
    /// (call id, tool name, raw argument text — may be invalid JSON on purpose).
    pub calls: Vec<(String, String, String)>,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
    /// The model the response names (Chat Completions; default gpt-4.1).
    pub model: Option<String>,
}

impl Turn {
    /// The response names this model (a local server answers with its own).
    pub fn model(mut self, model: &str) -> Turn {
        self.model = Some(model.into());
        self
    }

    pub fn text(parts: &[&str]) -> Turn {
        Turn {
            text: parts.iter().map(|s| s.to_string()).collect(),
            input_tokens: 1200,
            cached_tokens: 1024,
            output_tokens: 40,
            ..Turn::default()
        }
    }

    pub fn call(mut self, id: &str, name: &str, args: &str) -> Turn {
        self.calls.push((id.into(), name.into(), args.into()));
        self
    }

    pub fn reasoning(mut self, r: &str) -> Turn {
        self.reasoning = Some(r.into());
        self
    }

    pub fn usage(mut self, input: u64, cached: u64, output: u64) -> Turn {
        self.input_tokens = input;
        self.cached_tokens = cached;
        self.output_tokens = output;
        self
    }
}

#[derive(Clone, Debug)]
pub enum Reply {
    Stream {
        frames: Vec<String>,
        /// Before the response headers.
        first_byte_delay: Duration,
        /// Between two events.
        gap: Duration,
        /// Send only this many events, then drop the connection mid-body.
        cut_after: Option<usize>,
        /// Responses only: the response id and its call ids, for `previous_response_id`.
        response: Option<(String, Vec<String>)>,
    },
    Status {
        code: u16,
        body: String,
        retry_after: Option<String>,
    },
}

impl Reply {
    pub fn turn(wire: Wire, turn: &Turn) -> Reply {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static RESPONSES: AtomicUsize = AtomicUsize::new(1);
        let (frames, response) = match wire {
            Wire::Responses => {
                let id = format!("resp_mock_{}", RESPONSES.fetch_add(1, Ordering::Relaxed));
                let calls = turn.calls.iter().map(|c| c.0.clone()).collect();
                (render_responses(turn, &id), Some((id, calls)))
            }
            _ => (render(wire, turn), None),
        };
        Reply::Stream {
            frames,
            first_byte_delay: Duration::ZERO,
            gap: Duration::from_millis(2),
            cut_after: None,
            response,
        }
    }

    pub fn status(code: u16) -> Reply {
        Reply::Status {
            code,
            body: json!({"error": {"message": format!("mock says {code}"), "type": "mock", "param": null, "code": null}}).to_string(),
            retry_after: None,
        }
    }

    pub fn retry_after(mut self, value: &str) -> Reply {
        if let Reply::Status { retry_after, .. } = &mut self {
            *retry_after = Some(value.into());
        }
        self
    }

    pub fn delayed(mut self, d: Duration) -> Reply {
        if let Reply::Stream {
            first_byte_delay, ..
        } = &mut self
        {
            *first_byte_delay = d;
        }
        self
    }

    pub fn gap(mut self, d: Duration) -> Reply {
        if let Reply::Stream { gap, .. } = &mut self {
            *gap = d;
        }
        self
    }

    pub fn cut_after(mut self, n: usize) -> Reply {
        if let Reply::Stream { cut_after, .. } = &mut self {
            *cut_after = Some(n);
        }
        self
    }
}

use super::http;
/// A request as the mock received it.
pub use super::http::Request as Captured;

#[derive(Default)]
struct State {
    script: VecDeque<Reply>,
    requests: Vec<Captured>,
    violations: Vec<String>,
    /// Responses served so far: id → the call ids they made.
    responses: std::collections::HashMap<String, Vec<String>>,
    /// Per request, when each frame of its answer was written (benches: the spans between
    /// the provider's bytes and the client's are the client's own time).
    sent: Vec<Vec<std::time::Instant>>,
}

#[derive(Clone)]
pub struct MockLlm {
    pub addr: SocketAddr,
    pub wire: Wire,
    state: Arc<Mutex<State>>,
}

impl MockLlm {
    /// Bind 127.0.0.1:0 and serve on the current tokio runtime.
    pub async fn start(wire: Wire) -> MockLlm {
        let state = Arc::new(Mutex::new(State::default()));
        let st = state.clone();
        let addr = http::listen(move |sock| serve(wire, st.clone(), sock)).await;
        MockLlm { addr, wire, state }
    }

    /// Start on a dedicated thread with its own runtime, for tests that block (a spawned
    /// `mira` process, a headless editor) or run without tokio.
    pub fn start_in_background(wire: Wire) -> MockLlm {
        http::in_background(move || MockLlm::start(wire))
    }

    /// The base URL a client should use (`{base}/responses`, `{base}/chat/completions`,
    /// `{base}/messages`).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn push(&self, reply: Reply) -> &Self {
        self.state.lock().unwrap().script.push_back(reply);
        self
    }

    pub fn push_turn(&self, turn: &Turn) -> &Self {
        self.push(Reply::turn(self.wire, turn))
    }

    pub fn requests(&self) -> Vec<Captured> {
        self.state.lock().unwrap().requests.clone()
    }

    /// Request `n` (0-based), without copying the others.
    #[allow(dead_code)] // called by benches/agent.rs
    pub fn request(&self, n: usize) -> Option<Captured> {
        self.state.lock().unwrap().requests.get(n).cloned()
    }

    /// When each frame of the answer to request `n` (0-based) was written.
    #[allow(dead_code)] // called by benches/agent.rs
    pub fn frames_sent(&self, n: usize) -> Vec<std::time::Instant> {
        self.state
            .lock()
            .unwrap()
            .sent
            .get(n)
            .cloned()
            .unwrap_or_default()
    }

    pub fn violations(&self) -> Vec<String> {
        self.state.lock().unwrap().violations.clone()
    }

    pub fn remaining(&self) -> usize {
        self.state.lock().unwrap().script.len()
    }

    /// Environment for a `mira` process pointed at this server.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        let key_var = match self.wire {
            Wire::Anthropic => "ANTHROPIC_API_KEY",
            _ => "OPENAI_API_KEY",
        };
        vec![
            ("MIRA_PROVIDER", self.wire.provider().to_string()),
            ("MIRA_BASE_URL", self.base_url()),
            ("MIRA_MODEL", self.wire.model().to_string()),
            (key_var, "test-key-not-secret".to_string()),
        ]
    }
}

async fn serve(wire: Wire, state: Arc<Mutex<State>>, mut sock: TcpStream) {
    let Some(req) = http::read_request(&mut sock).await else {
        return;
    };
    if http::is_probe(&req.path) {
        http::not_found(&mut sock).await;
        let _ = sock.shutdown().await;
        return;
    }
    let reply = {
        let mut st = state.lock().unwrap();
        let mut problems = validate(wire, &req, &st.responses);
        let expected = match wire {
            Wire::Responses => "/v1/responses",
            Wire::Chat => "/v1/chat/completions",
            Wire::Anthropic => "/v1/messages",
        };
        if req.path != expected {
            problems.push(format!("request to {} (expected {expected})", req.path));
        }
        let n = st.requests.len();
        st.violations
            .extend(problems.into_iter().map(|p| format!("request #{n}: {p}")));
        st.requests.push(req);
        st.sent.push(Vec::new());
        (n, st.script.pop_front())
    };
    let (n, reply) = reply;
    let reply = reply.unwrap_or_else(|| {
        state
            .lock()
            .unwrap()
            .violations
            .push("a request arrived after the script ran out".into());
        Reply::status(599)
    });
    match reply {
        Reply::Status {
            code,
            body,
            retry_after,
        } => {
            http::status(&mut sock, code, &body, retry_after.as_deref()).await;
            let _ = sock.shutdown().await;
        }
        Reply::Stream {
            frames,
            first_byte_delay,
            gap,
            cut_after,
            response,
        } => {
            if let Some((id, calls)) = response {
                state.lock().unwrap().responses.insert(id, calls);
            }
            tokio::time::sleep(first_byte_delay).await;
            if http::stream_head(&mut sock, "text/event-stream", false)
                .await
                .is_err()
            {
                return;
            }
            for (i, frame) in frames.iter().enumerate() {
                if cut_after == Some(i) {
                    // Drop the socket without the terminating chunk: a broken stream.
                    let _ = sock.flush().await;
                    drop(sock);
                    return;
                }
                if http::chunk(&mut sock, frame).await.is_err() {
                    return;
                }
                state.lock().unwrap().sent[n].push(std::time::Instant::now());
                tokio::time::sleep(gap).await;
            }
            http::end_stream(&mut sock).await;
            let _ = sock.shutdown().await;
        }
    }
}

/// The request invariants providers enforce (400 otherwise), checked on every request.
fn validate(
    wire: Wire,
    req: &Captured,
    responses: &std::collections::HashMap<String, Vec<String>>,
) -> Vec<String> {
    let mut p = Vec::new();
    if req.body.is_null() {
        p.push("body is not JSON".into());
        return p;
    }
    if req.body["stream"] != json!(true) {
        p.push("stream is not true".into());
    }
    if req.body["model"].as_str().is_none() {
        p.push("no model".into());
    }
    match wire {
        Wire::Responses | Wire::Chat => {
            if !req
                .header("authorization")
                .is_some_and(|a| a.starts_with("Bearer "))
            {
                p.push("missing `Authorization: Bearer`".into());
            }
        }
        Wire::Anthropic => {
            if req.header("x-api-key").is_none() {
                p.push("missing x-api-key".into());
            }
            if req.header("anthropic-version") != Some("2023-06-01") {
                p.push("missing anthropic-version: 2023-06-01".into());
            }
            if req.body["max_tokens"].as_u64().is_none() {
                p.push("max_tokens is required".into());
            }
        }
    }
    let mut open: Vec<String> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    match wire {
        Wire::Responses => {
            if let Some(prev) = req.body["previous_response_id"].as_str() {
                match responses.get(prev) {
                    // Outputs in a chained request answer the previous response's calls.
                    Some(calls) => open.extend(calls.iter().cloned()),
                    None => p.push(format!(
                        "previous_response_id {prev} is not a response of this server"
                    )),
                }
                if req.body["store"] != json!(true) {
                    p.push("previous_response_id without store: true".into());
                }
            }
            for item in req.body["input"].as_array().cloned().unwrap_or_default() {
                match item["type"].as_str() {
                    Some("function_call") => {
                        let id = item["call_id"].as_str().unwrap_or_default().to_string();
                        if seen.contains(&id) {
                            p.push(format!("duplicate function_call {id}"));
                        }
                        if serde_json::from_str::<Value>(item["arguments"].as_str().unwrap_or(""))
                            .is_err()
                            && item["arguments"].as_str().is_none()
                        {
                            p.push(format!("function_call {id} arguments not a string"));
                        }
                        seen.push(id.clone());
                        open.push(id);
                    }
                    Some("function_call_output") => {
                        let id = item["call_id"].as_str().unwrap_or_default().to_string();
                        if !open.contains(&id) {
                            p.push(format!(
                                "function_call_output {id} answers no earlier function_call"
                            ));
                        }
                        open.retain(|o| *o != id);
                    }
                    Some("message") | Some("reasoning") => {}
                    other => p.push(format!("unexpected input item type {other:?}")),
                }
            }
        }
        Wire::Chat => {
            let msgs = req.body["messages"].as_array().cloned().unwrap_or_default();
            for (i, m) in msgs.iter().enumerate() {
                match m["role"].as_str() {
                    Some("assistant") => {
                        if !open.is_empty() {
                            p.push(format!(
                                "message {i}: assistant before tool results for {open:?}"
                            ));
                        }
                        for c in m["tool_calls"].as_array().cloned().unwrap_or_default() {
                            open.push(c["id"].as_str().unwrap_or_default().to_string());
                        }
                    }
                    Some("tool") => {
                        let id = m["tool_call_id"].as_str().unwrap_or_default().to_string();
                        if !open.contains(&id) {
                            p.push(format!(
                                "message {i}: tool result {id} answers no open call"
                            ));
                        }
                        open.retain(|o| *o != id);
                    }
                    Some("user") | Some("system") | Some("developer") => {
                        if !open.is_empty() {
                            p.push(format!(
                                "message {i}: user message before tool results for {open:?}"
                            ));
                        }
                    }
                    other => p.push(format!("message {i}: unexpected role {other:?}")),
                }
            }
        }
        Wire::Anthropic => {
            let msgs = req.body["messages"].as_array().cloned().unwrap_or_default();
            if msgs.first().is_some_and(|m| m["role"] != "user") {
                p.push("first message is not from the user".into());
            }
            let mut last_role = "";
            for (i, m) in msgs.iter().enumerate() {
                let role = m["role"].as_str().unwrap_or_default();
                if role == last_role {
                    p.push(format!("message {i}: two `{role}` messages in a row"));
                }
                last_role = if role == "user" { "user" } else { "assistant" };
                let blocks = m["content"].as_array().cloned().unwrap_or_default();
                if role == "user" {
                    for b in &blocks {
                        if b["type"] == "tool_result" {
                            let id = b["tool_use_id"].as_str().unwrap_or_default().to_string();
                            if !open.contains(&id) {
                                p.push(format!("message {i}: tool_result {id} answers no tool_use in the previous message"));
                            }
                            open.retain(|o| *o != id);
                        }
                    }
                    if !open.is_empty() {
                        p.push(format!(
                            "message {i}: tool_use without tool_result: {open:?}"
                        ));
                        open.clear();
                    }
                } else {
                    if !open.is_empty() {
                        p.push(format!("message {i}: unanswered tool_use {open:?}"));
                    }
                    for b in &blocks {
                        if b["type"] == "tool_use" {
                            if !b["input"].is_object() {
                                p.push(format!("message {i}: tool_use input is not an object"));
                            }
                            open.push(b["id"].as_str().unwrap_or_default().to_string());
                        }
                        if b["type"] == "text" && b["text"].as_str().is_some_and(str::is_empty) {
                            p.push(format!("message {i}: empty text block"));
                        }
                    }
                }
            }
        }
    }
    if !open.is_empty() && wire != Wire::Anthropic {
        p.push(format!("calls without results: {open:?}"));
    }
    p
}

fn split2(s: &str) -> [&str; 2] {
    let mut mid = s.len() / 2;
    while !s.is_char_boundary(mid) {
        mid += 1;
    }
    [&s[..mid], &s[mid..]]
}

/// Render a scripted turn as SSE frames (`event:`/`data:` lines plus the blank line).
pub fn render(wire: Wire, t: &Turn) -> Vec<String> {
    match wire {
        Wire::Responses => render_responses(t, "resp_mock"),
        Wire::Chat => render_chat(t),
        Wire::Anthropic => render_anthropic(t),
    }
}

fn ev(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

fn render_responses(t: &Turn, id: &str) -> Vec<String> {
    let mut f = Vec::new();
    let mut seq = 0;
    let mut next = |v: &mut Value| {
        v["sequence_number"] = json!(seq);
        seq += 1;
    };
    let mut push = |name: &str, mut v: Value, f: &mut Vec<String>| {
        v["type"] = json!(name);
        next(&mut v);
        f.push(ev(name, v));
    };
    let resp = |status: &str, output: Value, usage: Value| json!({"id": id, "object": "response", "created_at": 1767225600, "status": status, "model": "gpt-5.1", "output": output, "usage": usage, "error": null, "incomplete_details": null, "store": false});
    push(
        "response.created",
        json!({"response": resp("in_progress", json!([]), Value::Null)}),
        &mut f,
    );
    push(
        "response.in_progress",
        json!({"response": resp("in_progress", json!([]), Value::Null)}),
        &mut f,
    );
    let mut output = Vec::new();
    let mut idx = 0;
    if let Some(r) = &t.reasoning {
        push(
            "response.output_item.added",
            json!({"output_index": idx, "item": {"id": "rs_mock", "type": "reasoning", "summary": []}}),
            &mut f,
        );
        let item = json!({"id": "rs_mock", "type": "reasoning", "summary": [{"type": "summary_text", "text": r}], "encrypted_content": "gAAAAmock=="});
        push(
            "response.output_item.done",
            json!({"output_index": idx, "item": item.clone()}),
            &mut f,
        );
        output.push(item);
        idx += 1;
    }
    if !t.text.is_empty() {
        let full: String = t.text.concat();
        push(
            "response.output_item.added",
            json!({"output_index": idx, "item": {"id": "msg_mock", "type": "message", "status": "in_progress", "role": "assistant", "content": []}}),
            &mut f,
        );
        push(
            "response.content_part.added",
            json!({"item_id": "msg_mock", "output_index": idx, "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}),
            &mut f,
        );
        for d in &t.text {
            push(
                "response.output_text.delta",
                json!({"item_id": "msg_mock", "output_index": idx, "content_index": 0, "delta": d, "logprobs": []}),
                &mut f,
            );
        }
        push(
            "response.output_text.done",
            json!({"item_id": "msg_mock", "output_index": idx, "content_index": 0, "text": full, "logprobs": []}),
            &mut f,
        );
        let item = json!({"id": "msg_mock", "type": "message", "status": "completed", "role": "assistant", "content": [{"type": "output_text", "text": full, "annotations": []}]});
        push(
            "response.output_item.done",
            json!({"output_index": idx, "item": item.clone()}),
            &mut f,
        );
        output.push(item);
        idx += 1;
    }
    for (n, (id, name, args)) in t.calls.iter().enumerate() {
        let fc = format!("fc_mock{n}");
        push(
            "response.output_item.added",
            json!({"output_index": idx, "item": {"id": fc, "type": "function_call", "status": "in_progress", "call_id": id, "name": name, "arguments": ""}}),
            &mut f,
        );
        for piece in split2(args) {
            push(
                "response.function_call_arguments.delta",
                json!({"item_id": fc, "output_index": idx, "delta": piece}),
                &mut f,
            );
        }
        push(
            "response.function_call_arguments.done",
            json!({"item_id": fc, "output_index": idx, "name": name, "arguments": args}),
            &mut f,
        );
        let item = json!({"id": fc, "type": "function_call", "status": "completed", "call_id": id, "name": name, "arguments": args});
        push(
            "response.output_item.done",
            json!({"output_index": idx, "item": item.clone()}),
            &mut f,
        );
        output.push(item);
        idx += 1;
    }
    let usage = json!({"input_tokens": t.input_tokens, "input_tokens_details": {"cached_tokens": t.cached_tokens}, "output_tokens": t.output_tokens, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": t.input_tokens + t.output_tokens});
    push(
        "response.completed",
        json!({"response": resp("completed", Value::Array(output), usage)}),
        &mut f,
    );
    f
}

fn render_chat(t: &Turn) -> Vec<String> {
    let model = t.model.as_deref().unwrap_or("gpt-4.1");
    let chunk = |delta: Value, finish: Value| {
        let v = json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1767225600, "model": model, "system_fingerprint": "fp_mock", "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}], "usage": null});
        format!("data: {v}\n\n")
    };
    let mut f = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    if let Some(r) = &t.reasoning {
        f.push(chunk(
            json!({"content": null, "reasoning_content": r}),
            Value::Null,
        ));
    }
    for d in &t.text {
        f.push(chunk(json!({"content": d}), Value::Null));
    }
    for (n, (id, name, args)) in t.calls.iter().enumerate() {
        f.push(chunk(json!({"tool_calls": [{"index": n, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}), Value::Null));
        for piece in split2(args) {
            f.push(chunk(
                json!({"tool_calls": [{"index": n, "function": {"arguments": piece}}]}),
                Value::Null,
            ));
        }
    }
    let finish = if t.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    f.push(chunk(json!({}), json!(finish)));
    let usage = json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1767225600, "model": model, "choices": [], "usage": {"prompt_tokens": t.input_tokens, "completion_tokens": t.output_tokens, "total_tokens": t.input_tokens + t.output_tokens, "prompt_tokens_details": {"cached_tokens": t.cached_tokens, "audio_tokens": 0}, "completion_tokens_details": {"reasoning_tokens": 0}}});
    f.push(format!("data: {usage}\n\n"));
    f.push("data: [DONE]\n\n".to_string());
    f
}

fn render_anthropic(t: &Turn) -> Vec<String> {
    let mut f = Vec::new();
    let uncached = t.input_tokens - t.cached_tokens;
    f.push(ev("message_start", json!({"type": "message_start", "message": {"id": "msg_mock", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [], "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": uncached, "cache_creation_input_tokens": 0, "cache_read_input_tokens": t.cached_tokens, "output_tokens": 1}}})));
    let mut idx = 0;
    if let Some(r) = &t.reasoning {
        f.push(ev("content_block_start", json!({"type": "content_block_start", "index": idx, "content_block": {"type": "thinking", "thinking": ""}})));
        f.push(ev("content_block_delta", json!({"type": "content_block_delta", "index": idx, "delta": {"type": "thinking_delta", "thinking": r}})));
        f.push(ev("content_block_delta", json!({"type": "content_block_delta", "index": idx, "delta": {"type": "signature_delta", "signature": "sig-mock"}})));
        f.push(ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": idx}),
        ));
        idx += 1;
    }
    if !t.text.is_empty() {
        f.push(ev("content_block_start", json!({"type": "content_block_start", "index": idx, "content_block": {"type": "text", "text": ""}})));
        f.push(ev("ping", json!({"type": "ping"})));
        for d in &t.text {
            f.push(ev("content_block_delta", json!({"type": "content_block_delta", "index": idx, "delta": {"type": "text_delta", "text": d}})));
        }
        f.push(ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": idx}),
        ));
        idx += 1;
    }
    for (id, name, args) in &t.calls {
        f.push(ev("content_block_start", json!({"type": "content_block_start", "index": idx, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})));
        f.push(ev("content_block_delta", json!({"type": "content_block_delta", "index": idx, "delta": {"type": "input_json_delta", "partial_json": ""}})));
        for piece in split2(args) {
            f.push(ev("content_block_delta", json!({"type": "content_block_delta", "index": idx, "delta": {"type": "input_json_delta", "partial_json": piece}})));
        }
        f.push(ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": idx}),
        ));
        idx += 1;
    }
    let stop = if t.calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    f.push(ev("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": t.output_tokens}})));
    f.push(ev("message_stop", json!({"type": "message_stop"})));
    f
}
