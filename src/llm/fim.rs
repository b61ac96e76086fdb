//! Fill-in-the-middle clients for inline completion: the text before and after the cursor in,
//! the text between them out. Three wire formats, all streamed so that dropping the future
//! closes the connection at once (no tokens paid after a cancel):
//!
//! - `OpenAiCompletions`: `POST {base}/completions` with `prompt` + `suffix` (llama.cpp,
//!   vLLM, DeepSeek's beta endpoint); Codestral's `POST {base}/fim/completions` has the same
//!   request and streams chat-shaped chunks, which the parser also reads.
//! - `LlamaInfill`: llama.cpp's `POST {base}/infill` (`input_prefix`, `input_suffix`,
//!   `input_extra` for context chunks).
//! - `Ollama`: `POST {base}/api/generate` with `suffix`, newline-delimited JSON.
//!
//! Retries are deliberately absent: a completion that arrives late is worthless, and the next
//! keystroke asks again.

use std::time::{Duration, Instant};

use eventsource_stream::Eventsource;
use futures::StreamExt;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::Usage;

/// Which FIM wire format a server speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FimWire {
    OpenAiCompletions,
    /// Mistral's Codestral: `/fim/completions`, chat-shaped stream chunks.
    Codestral,
    LlamaInfill,
    Ollama,
}

impl FimWire {
    pub fn as_str(self) -> &'static str {
        match self {
            FimWire::OpenAiCompletions => "openai-completions",
            FimWire::Codestral => "codestral",
            FimWire::LlamaInfill => "llama-infill",
            FimWire::Ollama => "ollama",
        }
    }
}

/// Everything a [`FimClient`] needs. The key never shows in Debug output.
#[derive(Clone, Debug)]
pub struct FimSettings {
    pub wire: FimWire,
    pub base_url: String,
    pub model: String,
    pub api_key: Option<SecretString>,
    pub connect_timeout: Duration,
    /// From sending the request to the response headers.
    pub first_byte_timeout: Duration,
    /// Longest silence inside the stream.
    pub idle_timeout: Duration,
}

/// One fill-in-the-middle call. Texts must already be redacted ([`FimRequest::redacted`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FimRequest {
    /// Context that goes before the prefix: signatures in reach, standing preferences, as
    /// comments in the file's language.
    pub header: String,
    pub prefix: String,
    pub suffix: String,
    pub max_tokens: u32,
    /// Stop at the first newline: the cursor is inside a line.
    pub single_line: bool,
    /// The file name, for servers that take one (llama.cpp `input_extra`).
    pub file_name: String,
}

impl FimRequest {
    /// A copy with every text redacted; `known` are literal secrets (configured keys).
    pub fn redacted(&self, known: &[&str]) -> FimRequest {
        let r = |t: &str| crate::redact::redact_with(t, known).into_owned();
        FimRequest {
            header: r(&self.header),
            prefix: r(&self.prefix),
            suffix: r(&self.suffix),
            ..self.clone()
        }
    }
}

/// A finished FIM call.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FimOutput {
    pub text: String,
    pub usage: Usage,
    /// When the request went to the HTTP client, and when its answer was read: what lies
    /// between is the server's (and the network's) time, not Mira's.
    pub sent: Option<Instant>,
    pub read: Option<Instant>,
}

#[derive(Debug, thiserror::Error)]
pub enum FimError {
    #[error("{wire} answered HTTP {status}: {message}{}", hint(*status))]
    Http {
        wire: &'static str,
        status: u16,
        message: String,
        retry_after: Option<Duration>,
    },
    #[error(
        "could not reach the completion server at {url}: {message}; check `completion.base_url`"
    )]
    Connect { url: String, message: String },
    #[error("the completion server timed out ({0}); raise `completion.timeout_ms` if it is slow")]
    Timeout(&'static str),
    #[error("the completion stream broke: {0}")]
    Stream(String),
    #[error("cancelled")]
    Cancelled,
}

fn hint(status: u16) -> &'static str {
    match status {
        401 | 403 => "; check the completion API key (see `completion.api_key_env`)",
        404 => "; check `completion.base_url` and `completion.model`",
        429 => "; rate limited: completions pause until the server allows more",
        _ => "",
    }
}

/// A FIM endpoint. Cheap to clone.
#[derive(Clone)]
pub struct FimClient {
    settings: FimSettings,
    http: reqwest::Client,
}

impl FimClient {
    pub fn new(settings: FimSettings) -> Result<FimClient, FimError> {
        super::client::install_crypto_provider();
        let http = reqwest::Client::builder()
            .connect_timeout(settings.connect_timeout)
            .user_agent(concat!("mira/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| FimError::Connect {
                url: settings.base_url.clone(),
                message: format!("could not build the HTTP client: {e}"),
            })?;
        Ok(FimClient { settings, http })
    }

    pub fn settings(&self) -> &FimSettings {
        &self.settings
    }

    pub fn endpoint(&self) -> String {
        let base = self.settings.base_url.trim_end_matches('/');
        match self.settings.wire {
            FimWire::OpenAiCompletions => format!("{base}/completions"),
            FimWire::Codestral => format!("{base}/fim/completions"),
            FimWire::LlamaInfill => format!("{base}/infill"),
            FimWire::Ollama => format!("{base}/api/generate"),
        }
    }

    /// The JSON body sent for `req`.
    pub fn body(&self, req: &FimRequest) -> serde_json::Value {
        let s = &self.settings;
        let stop: Vec<&str> = if req.single_line { vec!["\n"] } else { vec![] };
        let prompt = format!("{}{}", req.header, req.prefix);
        match s.wire {
            FimWire::OpenAiCompletions | FimWire::Codestral => json!({
                "model": s.model,
                "prompt": prompt,
                "suffix": req.suffix,
                "max_tokens": req.max_tokens,
                "temperature": 0,
                "stream": true,
                "stream_options": {"include_usage": true},
                "stop": stop,
            }),
            FimWire::LlamaInfill => json!({
                "input_prefix": req.prefix,
                "input_suffix": req.suffix,
                "input_extra": if req.header.is_empty() { json!([]) } else {
                    json!([{"filename": "mira-context", "text": req.header}])
                },
                "prompt": "",
                "n_predict": req.max_tokens,
                "temperature": 0,
                "stream": true,
                "cache_prompt": true,
                "stop": stop,
            }),
            FimWire::Ollama => json!({
                "model": s.model,
                "prompt": prompt,
                "suffix": req.suffix,
                "raw": false,
                "stream": true,
                "options": {"num_predict": req.max_tokens, "temperature": 0, "stop": stop},
            }),
        }
    }

    /// Run one call. Dropping the returned future (or cancelling `cancel`) drops the HTTP
    /// response, which closes the connection mid-stream.
    pub async fn complete(
        &self,
        req: &FimRequest,
        cancel: &CancellationToken,
    ) -> Result<FimOutput, FimError> {
        let body = serde_json::to_vec(&self.body(req)).expect("FIM bodies serialise");
        let sent = Instant::now();
        let response = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(FimError::Cancelled),
            r = self.open(body) => r?,
        };
        let read = async {
            match self.settings.wire {
                FimWire::Ollama => self.read_ndjson(response, req.single_line).await,
                _ => self.read_sse(response, req.single_line).await,
            }
        };
        let mut out = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(FimError::Cancelled),
            r = read => r?,
        };
        out.sent = Some(sent);
        out.read = Some(Instant::now());
        Ok(out)
    }

    async fn open(&self, body: Vec<u8>) -> Result<reqwest::Response, FimError> {
        let s = &self.settings;
        let mut rb = self
            .http
            .post(self.endpoint())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        if let Some(key) = &s.api_key {
            rb = rb.bearer_auth(key.expose_secret());
        }
        let response = match tokio::time::timeout(s.first_byte_timeout, rb.send()).await {
            Err(_) => return Err(FimError::Timeout("waiting for the first byte")),
            Ok(Err(e)) if e.is_timeout() => return Err(FimError::Timeout("connecting")),
            Ok(Err(e)) => {
                return Err(FimError::Connect {
                    url: self.endpoint(),
                    message: super::client::error_chain(&e),
                });
            }
            Ok(Ok(r)) => r,
        };
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = super::client::parse_retry_after(response.headers());
        let text = tokio::time::timeout(s.idle_timeout, response.text())
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        Err(FimError::Http {
            wire: s.wire.as_str(),
            status: status.as_u16(),
            message: super::client::error_message(&text),
            retry_after,
        })
    }

    async fn read_sse(
        &self,
        response: reqwest::Response,
        single_line: bool,
    ) -> Result<FimOutput, FimError> {
        let idle = self.settings.idle_timeout;
        let mut events = response.bytes_stream().eventsource();
        let mut out = Collector::new(single_line);
        loop {
            let event = match tokio::time::timeout(idle, events.next()).await {
                Err(_) => return Err(FimError::Timeout("the stream went silent")),
                Ok(None) if out.done => break,
                Ok(None) => {
                    return Err(FimError::Stream(
                        "the connection closed before the completion was complete".into(),
                    ));
                }
                Ok(Some(Err(e))) => return Err(FimError::Stream(e.to_string())),
                Ok(Some(Ok(e))) => e,
            };
            if event.data.trim() == "[DONE]" {
                break;
            }
            let chunk: SseChunk = serde_json::from_str(&event.data).map_err(|e| {
                FimError::Stream(format!("unreadable event ({e}): {}", short(&event.data)))
            })?;
            if out.feed_sse(chunk) {
                // Enough text (a single line is complete): stop reading, which drops the
                // stream and closes the connection.
                break;
            }
        }
        Ok(out.finish())
    }

    async fn read_ndjson(
        &self,
        response: reqwest::Response,
        single_line: bool,
    ) -> Result<FimOutput, FimError> {
        let idle = self.settings.idle_timeout;
        let mut bytes = response.bytes_stream();
        let mut buf = Vec::new();
        let mut out = Collector::new(single_line);
        loop {
            while let Some(nl) = buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = buf.drain(..=nl).collect();
                let line = String::from_utf8_lossy(&line);
                if line.trim().is_empty() {
                    continue;
                }
                let chunk: OllamaChunk = serde_json::from_str(line.trim()).map_err(|e| {
                    FimError::Stream(format!("unreadable line ({e}): {}", short(&line)))
                })?;
                if let Some(error) = &chunk.error {
                    return Err(FimError::Stream(error.clone()));
                }
                if out.feed_ollama(chunk) {
                    return Ok(out.finish());
                }
            }
            match tokio::time::timeout(idle, bytes.next()).await {
                Err(_) => return Err(FimError::Timeout("the stream went silent")),
                Ok(None) if out.done => return Ok(out.finish()),
                Ok(None) => {
                    return Err(FimError::Stream(
                        "the connection closed before the completion was complete".into(),
                    ));
                }
                Ok(Some(Err(e))) => {
                    return Err(FimError::Stream(super::client::error_chain(&e)));
                }
                Ok(Some(Ok(b))) => buf.extend_from_slice(&b),
            }
        }
    }
}

fn short(s: &str) -> String {
    s.chars().take(200).collect()
}

/// Text and usage gathered from a stream; knows when a single-line completion is done.
struct Collector {
    text: String,
    usage: Usage,
    single_line: bool,
    /// The server said it finished.
    done: bool,
}

impl Collector {
    fn new(single_line: bool) -> Collector {
        Collector {
            text: String::new(),
            usage: Usage::default(),
            single_line,
            done: false,
        }
    }

    /// Append text; true when a single-line completion has its line.
    fn push(&mut self, t: &str) -> bool {
        self.text.push_str(t);
        self.single_line && self.text.contains('\n')
    }

    fn feed_sse(&mut self, c: SseChunk) -> bool {
        if let Some(u) = c.usage {
            self.usage.input_tokens = u.prompt_tokens;
            self.usage.output_tokens = u.completion_tokens;
        }
        if let (Some(n), Some(p)) = (c.tokens_predicted, c.tokens_evaluated) {
            self.usage.input_tokens = p;
            self.usage.output_tokens = n;
        }
        if c.stop == Some(true) {
            self.done = true;
        }
        let mut full = false;
        if let Some(t) = &c.content {
            full |= self.push(t);
        }
        for choice in c.choices {
            let t = choice.text.or(choice.delta.and_then(|d| d.content));
            if let Some(t) = t {
                full |= self.push(&t);
            }
            if choice.finish_reason.is_some() {
                self.done = true;
            }
        }
        full
    }

    fn feed_ollama(&mut self, c: OllamaChunk) -> bool {
        let full = self.push(&c.response);
        if c.done {
            self.done = true;
            self.usage.input_tokens = c.prompt_eval_count;
            self.usage.output_tokens = c.eval_count;
            return true;
        }
        full
    }

    fn finish(self) -> FimOutput {
        FimOutput {
            text: self.text,
            usage: self.usage,
            ..Default::default()
        }
    }
}

/// Every SSE shape the FIM servers send: `/completions` (`choices[].text`), Codestral
/// (`choices[].delta.content`), llama.cpp `/infill` (`content`, `stop`, token counts).
#[derive(Deserialize, Default)]
#[serde(default)]
struct SseChunk {
    choices: Vec<SseChoice>,
    usage: Option<WireUsage>,
    content: Option<String>,
    stop: Option<bool>,
    tokens_predicted: Option<u64>,
    tokens_evaluated: Option<u64>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct SseChoice {
    text: Option<String>,
    delta: Option<SseDelta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct SseDelta {
    content: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireUsage {
    prompt_tokens: u64,
    completion_tokens: u64,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct OllamaChunk {
    response: String,
    done: bool,
    prompt_eval_count: u64,
    eval_count: u64,
    error: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(wire: FimWire) -> FimClient {
        FimClient::new(FimSettings {
            wire,
            base_url: "http://127.0.0.1:1/v1/".into(),
            model: "m".into(),
            api_key: None,
            connect_timeout: Duration::from_secs(1),
            first_byte_timeout: Duration::from_secs(1),
            idle_timeout: Duration::from_secs(1),
        })
        .unwrap()
    }

    #[test]
    fn endpoints_per_wire() {
        assert_eq!(
            client(FimWire::OpenAiCompletions).endpoint(),
            "http://127.0.0.1:1/v1/completions"
        );
        assert_eq!(
            client(FimWire::Codestral).endpoint(),
            "http://127.0.0.1:1/v1/fim/completions"
        );
        assert_eq!(
            client(FimWire::LlamaInfill).endpoint(),
            "http://127.0.0.1:1/v1/infill"
        );
        assert_eq!(
            client(FimWire::Ollama).endpoint(),
            "http://127.0.0.1:1/v1/api/generate"
        );
    }

    #[test]
    fn bodies_carry_prefix_suffix_and_context() {
        let req = FimRequest {
            header: "// ctx\n".into(),
            prefix: "fn a(".into(),
            suffix: ")\n".into(),
            max_tokens: 32,
            single_line: true,
            file_name: "a.rs".into(),
        };
        let b = client(FimWire::OpenAiCompletions).body(&req);
        assert_eq!(b["prompt"], "// ctx\nfn a(");
        assert_eq!(b["suffix"], ")\n");
        assert_eq!(b["stop"], json!(["\n"]));
        let b = client(FimWire::LlamaInfill).body(&req);
        assert_eq!(b["input_prefix"], "fn a(");
        assert_eq!(b["input_extra"][0]["text"], "// ctx\n");
        let b = client(FimWire::Ollama).body(&req);
        assert_eq!(b["suffix"], ")\n");
        assert_eq!(b["options"]["num_predict"], 32);
    }

    #[test]
    fn single_line_stops_after_the_first_line() {
        let mut c = Collector::new(true);
        assert!(!c.push("foo"));
        assert!(c.push("bar\nbaz"));
        let mut c = Collector::new(false);
        assert!(!c.push("a\nb\n"));
    }
}
