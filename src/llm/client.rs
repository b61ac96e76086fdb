//! The transport every wire format shares: POST, retries with backoff and jitter, the three
//! timeouts, cancellation, and feeding SSE events to the format's parser.

use std::sync::Once;
use std::time::Duration;

use eventsource_stream::Eventsource;
use futures::StreamExt;
use secrecy::ExposeSecret;
use tokio_util::sync::CancellationToken;

use super::sse::StreamParser;
use super::{
    Completion, Delta, Failure, ListedModel, LlmError, Previous, ProviderKind, ProviderSettings,
    Request, TimeoutKind, Window, WindowSource, anthropic, chat, local, openai,
};

/// A request body on its way out, in its provider's format, borrowing the request.
#[derive(serde::Serialize)]
#[serde(untagged)]
enum Body<'a> {
    Responses(openai::Body<'a>),
    Chat(chat::Body<'a>),
    Messages(anthropic::Body<'a>),
}

/// A configured provider. Cheap to clone (reqwest pools connections behind an Arc).
#[derive(Clone)]
pub struct Client {
    settings: ProviderSettings,
    http: reqwest::Client,
    /// The model's window, learned once from the server (a failed probe is not kept, so a
    /// server started later is asked again).
    window: std::sync::Arc<tokio::sync::OnceCell<Window>>,
}

/// reqwest is built with `rustls-no-provider`; the ring provider must be installed once per
/// process before the first client is built.
pub(super) fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Err means another part of the process installed one first, which is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

impl Client {
    pub fn new(settings: ProviderSettings) -> Result<Client, LlmError> {
        install_crypto_provider();
        let http = reqwest::Client::builder()
            .connect_timeout(settings.timeouts.connect)
            .user_agent(concat!("mira/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| LlmError::Connect {
                provider: settings.kind,
                url: settings.base_url.clone(),
                message: format!("could not build the HTTP client: {e}"),
            })?;
        Ok(Client {
            settings,
            http,
            window: Default::default(),
        })
    }

    pub fn settings(&self) -> &ProviderSettings {
        &self.settings
    }

    fn server(&self) -> local::ServerRef<'_> {
        let s = &self.settings;
        local::ServerRef {
            kind: s.kind,
            flavour: s.flavour,
            base_url: &s.base_url,
            model: &s.model,
            api_key: s.api_key.as_ref(),
        }
    }

    /// The model's context window: `provider.context_window`, else what the server says
    /// (asked once), else the published window of a hosted model, else [`Window::ASSUMED`].
    pub async fn window(&self) -> Window {
        if let Some(tokens) = self.settings.context_window {
            return Window {
                tokens,
                source: WindowSource::Configured,
            };
        }
        if let Some(w) = self.window.get() {
            return *w;
        }
        if let Some(w) = local::learn_window_cached(&self.http, &self.server()).await {
            return *self.window.get_or_init(|| async { w }).await;
        }
        match local::known_window(&self.settings.model) {
            Some(tokens) => Window {
                tokens,
                source: WindowSource::Known,
            },
            None => Window::ASSUMED,
        }
    }

    /// The models the server lists (`GET {base}/models`), sorted by id.
    pub async fn models(&self) -> Result<Vec<ListedModel>, LlmError> {
        local::list_models(&self.http, &self.server()).await
    }

    pub fn endpoint(&self) -> String {
        let base = &self.settings.base_url;
        match self.settings.kind {
            ProviderKind::OpenAi => format!("{base}/responses"),
            ProviderKind::OpenAiChat => format!("{base}/chat/completions"),
            ProviderKind::Anthropic => format!("{base}/messages"),
        }
    }

    /// The JSON body this client would send for `req`.
    pub fn body(&self, req: &Request) -> serde_json::Value {
        serde_json::to_value(self.body_after(req, None)).expect("request bodies serialise")
    }

    fn body_after<'a>(&'a self, req: &'a Request, previous: Option<&'a Previous>) -> Body<'a> {
        // Once the window is known, the answer's cap leaves room for the prompt (a small
        // local model must not be asked for 8,192 tokens out of 2,048).
        let configured = self.settings.context_window.map(|tokens| Window {
            tokens,
            source: WindowSource::Configured,
        });
        let max = self.settings.max_output_tokens;
        let max = match configured.as_ref().or(self.window.get()) {
            Some(w) if w.output_reserve(max) < max as usize => w.output_reserve(max) as u32,
            _ => max,
        };
        let s = &self.settings;
        match s.kind {
            ProviderKind::OpenAi => Body::Responses(openai::body(s, max, req, previous)),
            ProviderKind::OpenAiChat => Body::Chat(chat::body(s, max, req)),
            ProviderKind::Anthropic => Body::Messages(anthropic::body(s, max, req)),
        }
    }

    fn parser(&self) -> Box<dyn StreamParser> {
        match self.settings.kind {
            ProviderKind::OpenAi => Box::new(openai::Parser::new(&self.settings)),
            ProviderKind::OpenAiChat => Box::new(chat::Parser::new(&self.settings)),
            ProviderKind::Anthropic => Box::new(anthropic::Parser::new(&self.settings)),
        }
    }

    /// Run one model call, streaming deltas to `on_delta`. Retries happen only before any
    /// output has streamed; after that a broken stream is a [`Failure`] carrying the partial
    /// text, because the user has already seen it.
    pub async fn complete(
        &self,
        req: &Request,
        on_delta: &mut (dyn FnMut(Delta) + Send),
        cancel: &CancellationToken,
    ) -> Result<Completion, Failure> {
        self.complete_after(req, None, on_delta, cancel).await
    }

    /// Whether [`Client::complete_after`] can continue a chain from this completion.
    pub fn chains(&self, completion: &Completion) -> bool {
        self.settings.kind == ProviderKind::OpenAi
            && self.settings.responses_store
            && completion.response_id.is_some()
    }

    /// [`Client::complete`], continuing `previous` when given (Responses with `store` only;
    /// other formats always send the whole request).
    pub async fn complete_after(
        &self,
        req: &Request,
        previous: Option<&Previous>,
        on_delta: &mut (dyn FnMut(Delta) + Send),
        cancel: &CancellationToken,
    ) -> Result<Completion, Failure> {
        let known: Vec<&str> = self
            .settings
            .api_key
            .iter()
            .map(|k| k.expose_secret())
            .collect();
        let req = req.redacted(&known);
        let body =
            serde_json::to_vec(&self.body_after(&req, previous)).expect("request bodies serialise");
        let policy = self.settings.retry;
        let mut attempt = 1;
        let response = loop {
            let result = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(LlmError::Cancelled.into()),
                r = self.open(&body) => r,
            };
            match result {
                Ok(r) => break r,
                Err(e) if e.is_retryable() && attempt < policy.max_attempts => {
                    let delay = retry_delay(&policy, attempt, retry_after(&e));
                    tracing::warn!(provider = %self.settings.kind, attempt, ?delay, error = %e, "retrying model call");
                    tokio::select! {
                        _ = cancel.cancelled() => return Err(LlmError::Cancelled.into()),
                        _ = tokio::time::sleep(delay) => {}
                    }
                    attempt += 1;
                }
                Err(e) => return Err(e.into()),
            }
        };
        self.read(response, on_delta, cancel).await
    }

    async fn open(&self, body: &[u8]) -> Result<reqwest::Response, LlmError> {
        let s = &self.settings;
        let mut rb = self
            .http
            .post(self.endpoint())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .body(body.to_vec());
        if let Some(key) = &s.api_key {
            rb = match s.kind {
                ProviderKind::Anthropic => rb.header("x-api-key", key.expose_secret()),
                _ => rb.bearer_auth(key.expose_secret()),
            };
        }
        if s.kind == ProviderKind::Anthropic {
            rb = rb.header("anthropic-version", "2023-06-01");
        }
        let sent = tokio::time::timeout(s.timeouts.first_byte, rb.send()).await;
        let response = match sent {
            Err(_) => {
                return Err(LlmError::Timeout {
                    provider: s.kind,
                    kind: TimeoutKind::FirstByte,
                });
            }
            Ok(Err(e)) if e.is_timeout() => {
                return Err(LlmError::Timeout {
                    provider: s.kind,
                    kind: TimeoutKind::Connect,
                });
            }
            Ok(Err(e)) => {
                let url = self.endpoint();
                // reqwest names the URL in its own message; the error says it once.
                let message = error_chain(&e).replace(&format!(" for url ({url})"), "");
                return Err(LlmError::Connect {
                    provider: s.kind,
                    url,
                    message,
                });
            }
            Ok(Ok(r)) => r,
        };
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = parse_retry_after(response.headers());
        let text = tokio::time::timeout(s.timeouts.idle, response.text())
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        Err(LlmError::Http {
            provider: s.kind,
            status: status.as_u16(),
            message: error_message(&text),
            retry_after,
        })
    }

    async fn read(
        &self,
        response: reqwest::Response,
        on_delta: &mut (dyn FnMut(Delta) + Send),
        cancel: &CancellationToken,
    ) -> Result<Completion, Failure> {
        let provider = self.settings.kind;
        let idle = self.settings.timeouts.idle;
        let mut parser = self.parser();
        let mut events = response.bytes_stream().eventsource();
        let fail = |parser: &dyn StreamParser, error: LlmError| Failure {
            error,
            partial_text: parser.partial_text().to_string(),
            usage: parser.usage(),
        };
        loop {
            let next = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(fail(parser.as_ref(), LlmError::Cancelled)),
                n = tokio::time::timeout(idle, events.next()) => n,
            };
            let event = match next {
                Err(_) => {
                    return Err(fail(
                        parser.as_ref(),
                        LlmError::Timeout {
                            provider,
                            kind: TimeoutKind::Idle,
                        },
                    ));
                }
                Ok(None) => {
                    if parser.is_complete() {
                        break;
                    }
                    let message =
                        "the connection closed before the response was complete".to_string();
                    return Err(fail(
                        parser.as_ref(),
                        LlmError::Stream { provider, message },
                    ));
                }
                Ok(Some(Err(e))) => {
                    let message = match e {
                        eventsource_stream::EventStreamError::Transport(t) => error_chain(&t),
                        other => other.to_string(),
                    };
                    return Err(fail(
                        parser.as_ref(),
                        LlmError::Stream { provider, message },
                    ));
                }
                Ok(Some(Ok(event))) => event,
            };
            match parser.feed(&event, on_delta) {
                Ok(true) => break,
                Ok(false) => {}
                Err(e) => return Err(fail(parser.as_ref(), e)),
            }
        }
        let usage = parser.usage();
        let partial_text = parser.partial_text().to_string();
        parser.finish().map_err(|error| Failure {
            error,
            partial_text,
            usage,
        })
    }
}

fn retry_after(e: &LlmError) -> Option<Duration> {
    match e {
        LlmError::Http { retry_after, .. } => *retry_after,
        _ => None,
    }
}

/// Exponential backoff with jitter in [½·d, d]. A server's Retry-After is honoured (plus a
/// little jitter so parallel clients do not return in lockstep), capped at a minute so one bad
/// header cannot stall a turn for an hour.
pub(super) fn retry_delay(
    p: &super::RetryPolicy,
    attempt: u32,
    server: Option<Duration>,
) -> Duration {
    let exp = p
        .base_delay
        .saturating_mul(1u32 << (attempt - 1).min(16))
        .min(p.max_delay);
    let jittered = exp.mul_f64(0.5 + 0.5 * jitter_unit());
    match server {
        Some(s) => s.min(Duration::from_secs(60)) + p.base_delay.mul_f64(jitter_unit()),
        None => jittered,
    }
}

/// A number in [0, 1) good enough to spread retries; not for anything that needs randomness.
fn jitter_unit() -> f64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static STATE: AtomicU64 = AtomicU64::new(0);
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1);
    let mut x = STATE.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed) ^ seed;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    (x >> 11) as f64 / (1u64 << 53) as f64
}

pub(super) fn parse_retry_after(h: &reqwest::header::HeaderMap) -> Option<Duration> {
    let get = |name: &str| h.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return Some(Duration::from_secs_f64(ms.max(0.0) / 1000.0));
    }
    // HTTP-date values are rare from these APIs; seconds are what they send.
    get("retry-after")
        .and_then(|v| v.parse::<f64>().ok())
        .map(|s| Duration::from_secs_f64(s.max(0.0)))
}

/// The human part of an error body: `{"error":{"message":..}}` (OpenAI and compatibles),
/// `{"type":"error","error":{"message":..}}` (Anthropic), or the raw text, shortened.
pub(super) fn error_message(body: &str) -> String {
    #[derive(serde::Deserialize)]
    struct Envelope {
        error: Inner,
    }
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Inner {
        Object { message: String },
        Text(String),
    }
    match serde_json::from_str::<Envelope>(body) {
        Ok(Envelope {
            error: Inner::Object { message } | Inner::Text(message),
        }) => message,
        Err(_) => {
            let t = body.trim();
            if t.is_empty() {
                "(empty body)".to_string()
            } else {
                t.chars().take(300).collect()
            }
        }
    }
}

pub(super) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        source = inner.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::RetryPolicy;

    #[test]
    fn backoff_grows_is_jittered_and_capped() {
        let p = RetryPolicy {
            max_attempts: 10,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(1),
        };
        for attempt in 1..8 {
            let d = retry_delay(&p, attempt, None);
            let full = Duration::from_millis(100 * (1 << (attempt - 1))).min(p.max_delay);
            assert!(
                d >= full / 2 && d <= full,
                "attempt {attempt}: {d:?} vs {full:?}"
            );
        }
    }

    #[test]
    fn retry_after_is_honoured() {
        let p = RetryPolicy::default();
        let d = retry_delay(&p, 1, Some(Duration::from_secs(3)));
        assert!(d >= Duration::from_secs(3), "{d:?}");
        assert!(d <= Duration::from_secs(3) + p.base_delay, "{d:?}");
    }

    #[test]
    fn error_bodies_are_read_for_both_shapes() {
        assert_eq!(
            error_message(r#"{"error":{"message":"slow down","type":"x"}}"#),
            "slow down"
        );
        assert_eq!(
            error_message(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            ),
            "Overloaded"
        );
        assert_eq!(error_message("  "), "(empty body)");
    }
}
