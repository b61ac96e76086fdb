//! A scripted fill-in-the-middle server for tests and the completion bench: real HTTP/1.1 on
//! 127.0.0.1 speaking each FIM wire format Mira uses — OpenAI-compatible `/v1/completions`
//! (SSE, `choices[].text`), Codestral `/v1/fim/completions` (SSE, `choices[].delta.content`),
//! llama.cpp `/infill` (SSE, `content`/`stop`) and Ollama `/api/generate` (NDJSON) — with
//! delays, cut streams and HTTP errors.
//!
//! It watches each connection while it streams: a client that closes before the body is
//! finished is recorded ([`Served::ClosedByClient`]), which is how tests prove a cancelled
//! completion stops paying for tokens.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::http;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FimWire {
    Completions,
    Codestral,
    Infill,
    Ollama,
}

impl FimWire {
    pub const ALL: [FimWire; 4] = [
        FimWire::Completions,
        FimWire::Codestral,
        FimWire::Infill,
        FimWire::Ollama,
    ];

    /// The `completion.provider` value that speaks this wire.
    pub fn provider(self) -> &'static str {
        match self {
            FimWire::Completions => "openai-completions",
            FimWire::Codestral => "codestral",
            FimWire::Infill => "llama-cpp",
            FimWire::Ollama => "ollama",
        }
    }

    pub fn path(self) -> &'static str {
        match self {
            FimWire::Completions => "/v1/completions",
            FimWire::Codestral => "/v1/fim/completions",
            FimWire::Infill => "/infill",
            FimWire::Ollama => "/api/generate",
        }
    }

    fn ndjson(self) -> bool {
        self == FimWire::Ollama
    }

    /// The text-before-the-cursor field of a request body (context header included).
    pub fn prompt_of(self, body: &Value) -> String {
        match self {
            FimWire::Infill => format!(
                "{}{}",
                body["input_extra"][0]["text"].as_str().unwrap_or_default(),
                body["input_prefix"].as_str().unwrap_or_default()
            ),
            _ => body["prompt"].as_str().unwrap_or_default().to_string(),
        }
    }

    pub fn suffix_of(self, body: &Value) -> String {
        let key = if self == FimWire::Infill {
            "input_suffix"
        } else {
            "suffix"
        };
        body[key].as_str().unwrap_or_default().to_string()
    }
}

#[derive(Clone, Debug)]
pub enum Reply {
    Stream {
        parts: Vec<String>,
        first_byte_delay: Duration,
        gap: Duration,
        /// Drop the connection after this many parts (a broken stream).
        cut_after: Option<usize>,
    },
    Status {
        code: u16,
        retry_after: Option<String>,
    },
}

impl Reply {
    pub fn text(parts: &[&str]) -> Reply {
        Reply::Stream {
            parts: parts.iter().map(|s| s.to_string()).collect(),
            first_byte_delay: Duration::ZERO,
            gap: Duration::from_millis(1),
            cut_after: None,
        }
    }

    /// Many parts, slowly: a stream that takes `n × gap` to finish.
    pub fn slow(n: usize, gap: Duration) -> Reply {
        Reply::Stream {
            parts: (0..n).map(|i| format!("t{i} ")).collect(),
            first_byte_delay: Duration::ZERO,
            gap,
            cut_after: None,
        }
    }

    pub fn status(code: u16, retry_after: Option<&str>) -> Reply {
        Reply::Status {
            code,
            retry_after: retry_after.map(str::to_string),
        }
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

    pub fn cut_after(mut self, n: usize) -> Reply {
        if let Reply::Stream { cut_after, .. } = &mut self {
            *cut_after = Some(n);
        }
        self
    }
}

/// How the server's side of one request ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Served {
    /// Still streaming.
    Open,
    Finished,
    /// The client closed the connection after `after` of `of` parts.
    ClosedByClient {
        after: usize,
        of: usize,
    },
    /// The script cut the stream on purpose.
    Cut,
    Status(u16),
}

#[derive(Clone, Debug)]
pub struct Captured {
    #[allow(dead_code)] // for a failing test's message
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
    pub served: Served,
    /// When the request's body was read, and when the last frame of the answer was written.
    #[allow(dead_code)] // read by benches/completion.rs
    pub arrived: Instant,
    pub last_byte: Option<Instant>,
    /// When the connection was accepted (before the request was read).
    #[allow(dead_code)] // read by benches/completion.rs
    pub accepted: Instant,
}

#[derive(Default)]
struct State {
    script: VecDeque<Reply>,
    requests: Vec<Captured>,
    violations: Vec<String>,
}

#[derive(Clone)]
pub struct MockFim {
    pub addr: SocketAddr,
    pub wire: FimWire,
    state: Arc<Mutex<State>>,
}

impl MockFim {
    pub async fn start(wire: FimWire) -> MockFim {
        Self::start_with(wire, false).await
    }

    async fn start_with(wire: FimWire, keep_alive: bool) -> MockFim {
        let state: Arc<Mutex<State>> = Default::default();
        let st = state.clone();
        let addr = http::listen(move |sock| {
            let m = Server {
                wire,
                state: st.clone(),
                keep_alive,
            };
            async move { m.serve(sock).await }
        })
        .await;
        MockFim { addr, wire, state }
    }

    /// On its own thread and runtime, for benches and blocking tests.
    pub fn start_in_background(wire: FimWire) -> MockFim {
        http::in_background(move || MockFim::start_with(wire, false))
    }

    /// Like [`MockFim::start_in_background`], serving many requests per connection.
    #[allow(dead_code)] // benches/completion.rs
    pub fn keep_alive_in_background(wire: FimWire) -> MockFim {
        http::in_background(move || MockFim::start_with(wire, true))
    }

    /// `completion.base_url` for this server.
    pub fn base_url(&self) -> String {
        match self.wire {
            FimWire::Completions | FimWire::Codestral => format!("http://{}/v1", self.addr),
            FimWire::Infill | FimWire::Ollama => format!("http://{}", self.addr),
        }
    }

    pub fn push(&self, reply: Reply) -> &Self {
        self.state.lock().unwrap().script.push_back(reply);
        self
    }

    pub fn requests(&self) -> Vec<Captured> {
        self.state.lock().unwrap().requests.clone()
    }

    pub fn violations(&self) -> Vec<String> {
        self.state.lock().unwrap().violations.clone()
    }

    /// Wait (up to 10 s) until `n` requests arrived.
    pub async fn wait_requests(&self, n: usize) -> Vec<Captured> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let r = self.requests();
            if r.len() >= n || Instant::now() > deadline {
                return r;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Wait (up to 10 s) until request `i` is no longer being served; its outcome.
    pub async fn wait_served(&self, i: usize) -> Served {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let s = self.requests().get(i).map(|c| c.served);
            match s {
                Some(Served::Open) | None if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(5)).await
                }
                other => return other.unwrap_or(Served::Open),
            }
        }
    }
}

/// One connection's side of the mock: the wire, the shared script and log.
struct Server {
    wire: FimWire,
    state: Arc<Mutex<State>>,
    /// Keep connections open after a finished answer, as llama.cpp and vLLM do, so the
    /// client's pool reuses them (the bench); tests close each one to watch it end.
    keep_alive: bool,
}

impl Server {
    fn set_served(&self, i: usize, served: Served, last_byte: Instant) {
        let mut st = self.state.lock().unwrap();
        st.requests[i].served = served;
        st.requests[i].last_byte = Some(last_byte);
    }

    /// Serve the connection's requests: one, or with keep-alive every one until the client
    /// closes it or an answer does not finish.
    async fn serve(&self, mut sock: TcpStream) {
        let mut accepted = Instant::now();
        while self.serve_one(&mut sock, accepted).await == Served::Finished && self.keep_alive {
            accepted = Instant::now();
        }
        let _ = sock.shutdown().await;
    }

    async fn serve_one(&self, sock: &mut TcpStream, accepted: Instant) -> Served {
        let Some(http::Request {
            path,
            headers,
            body,
            ..
        }) = http::read_request(sock).await
        else {
            return Served::Cut;
        };
        // Mira asks a completion server for its window once (llama.cpp `/props`, Ollama
        // `/api/show`, `/v1/models`); the mock has none to tell, and a probe is no completion.
        if http::is_probe(&path) {
            http::not_found(sock).await;
            return Served::Cut;
        }
        let (i, reply) = {
            let mut st = self.state.lock().unwrap();
            if path != self.wire.path() {
                let msg = format!("request to {path} (expected {})", self.wire.path());
                st.violations.push(msg);
            }
            if body["stream"] != json!(true) {
                st.violations.push("stream is not true".into());
            }
            st.requests.push(Captured {
                path,
                headers,
                body,
                served: Served::Open,
                arrived: Instant::now(),
                last_byte: None,
                accepted,
            });
            let reply = st.script.pop_front().unwrap_or_else(|| {
                st.violations
                    .push("a request arrived after the script ran out".into());
                Reply::status(599, None)
            });
            (st.requests.len() - 1, reply)
        };
        match reply {
            Reply::Status { code, retry_after } => {
                let body = json!({"error": {"message": format!("mock says {code}")}}).to_string();
                http::status(sock, code, &body, retry_after.as_deref()).await;
                self.set_served(i, Served::Status(code), Instant::now());
                Served::Status(code)
            }
            Reply::Stream {
                parts,
                first_byte_delay,
                gap,
                cut_after,
            } => {
                let frames = render(self.wire, &parts);
                let (served, last_byte) = stream(
                    sock,
                    &frames,
                    first_byte_delay,
                    gap,
                    cut_after,
                    self.wire.ndjson(),
                    self.keep_alive,
                )
                .await;
                self.set_served(i, served, last_byte);
                served
            }
        }
    }
}

/// Wait `d`, or less if the client closes the connection (read returns 0 or fails: after
/// its request an HTTP/1.1 client sends nothing, so any read result means it left).
async fn wait_or_closed(sock: &mut TcpStream, d: Duration) -> bool {
    if d.is_zero() {
        // A zero sleep would still wait for the timer's next millisecond tick.
        return false;
    }
    let mut b = [0u8; 64];
    tokio::select! {
        _ = tokio::time::sleep(d) => false,
        r = sock.read(&mut b) => matches!(r, Ok(0) | Err(_)),
    }
}

async fn stream(
    sock: &mut TcpStream,
    frames: &[String],
    first_byte_delay: Duration,
    gap: Duration,
    cut_after: Option<usize>,
    ndjson: bool,
    keep_alive: bool,
) -> (Served, Instant) {
    let of = frames.len();
    if wait_or_closed(sock, first_byte_delay).await {
        return (Served::ClosedByClient { after: 0, of }, Instant::now());
    }
    let ctype = if ndjson {
        "application/x-ndjson"
    } else {
        "text/event-stream"
    };
    if http::stream_head(sock, ctype, keep_alive).await.is_err() {
        return (Served::ClosedByClient { after: 0, of }, Instant::now());
    }
    // When the last frame of the answer left: what a client waits for.
    let mut last_byte = Instant::now();
    for (i, frame) in frames.iter().enumerate() {
        if cut_after == Some(i) {
            let _ = sock.flush().await;
            return (Served::Cut, Instant::now());
        }
        // Taken before the write, so a client's time after it is never understated.
        last_byte = Instant::now();
        if http::chunk(sock, frame).await.is_err() {
            return (Served::ClosedByClient { after: i, of }, Instant::now());
        }
        if i + 1 < of && wait_or_closed(sock, gap).await {
            return (Served::ClosedByClient { after: i + 1, of }, Instant::now());
        }
    }
    http::end_stream(sock).await;
    (Served::Finished, last_byte)
}

/// The frames of one answer in `wire`'s format, usage on the last.
pub fn render(wire: FimWire, parts: &[String]) -> Vec<String> {
    let sse = |v: Value| format!("data: {v}\n\n");
    let n = parts.len();
    let mut out = Vec::new();
    match wire {
        FimWire::Completions => {
            for p in parts {
                out.push(sse(
                    json!({"id": "cmpl-1", "object": "text_completion", "model": "mock",
                    "choices": [{"index": 0, "text": p, "finish_reason": null}]}),
                ));
            }
            out.push(sse(
                json!({"id": "cmpl-1", "object": "text_completion", "model": "mock",
                "choices": [{"index": 0, "text": "", "finish_reason": "stop"}]}),
            ));
            out.push(sse(json!({"id": "cmpl-1", "object": "text_completion", "model": "mock",
                "choices": [], "usage": {"prompt_tokens": 300, "completion_tokens": n, "total_tokens": 300 + n}})));
            out.push("data: [DONE]\n\n".into());
        }
        FimWire::Codestral => {
            for p in parts {
                out.push(sse(json!({"id": "c1", "object": "chat.completion.chunk", "model": "codestral-latest",
                    "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": null}]})));
            }
            out.push(sse(
                json!({"id": "c1", "object": "chat.completion.chunk", "model": "codestral-latest",
                "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 300, "completion_tokens": n, "total_tokens": 300 + n}}),
            ));
            out.push("data: [DONE]\n\n".into());
        }
        FimWire::Infill => {
            for p in parts {
                out.push(sse(json!({"content": p, "stop": false})));
            }
            out.push(sse(json!({"content": "", "stop": true, "tokens_predicted": n, "tokens_evaluated": 300})));
        }
        FimWire::Ollama => {
            for p in parts {
                out.push(format!(
                    "{}\n",
                    json!({"model": "mock", "response": p, "done": false})
                ));
            }
            out.push(format!(
                "{}\n",
                json!({"model": "mock", "response": "", "done": true,
                "prompt_eval_count": 300, "eval_count": n})
            ));
        }
    }
    out
}
