//! OpenAI-compatible `/v1/embeddings` and Ollama `/api/embed` over reqwest, with retries that
//! honour Retry-After on 429 and back off on 5xx and connection errors.

use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};

use super::{EmbedError, EmbedderConfig, Provider, normalise};

/// Retry-After longer than this is not waited out in-line: the caller keeps the work pending.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);
const BASE_BACKOFF: Duration = Duration::from_millis(250);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wire {
    OpenAi,
    Ollama,
}

/// An embedder reached over HTTP.
#[derive(Clone)]
pub struct HttpEmbedder {
    client: reqwest::Client,
    wire: Wire,
    url: String,
    model: String,
    api_key: Option<SecretString>,
    dimensions: Option<u32>,
    batch_size: usize,
    max_retries: u32,
}

impl HttpEmbedder {
    pub fn new(
        cfg: &EmbedderConfig,
        openai_key: Option<&SecretString>,
    ) -> Result<HttpEmbedder, EmbedError> {
        let (wire, default_base, default_model, path) = match cfg.provider {
            Provider::Openai => (
                Wire::OpenAi,
                "https://api.openai.com/v1",
                "text-embedding-3-small",
                "/embeddings",
            ),
            Provider::Ollama => (
                Wire::Ollama,
                "http://127.0.0.1:11434",
                "nomic-embed-text",
                "/api/embed",
            ),
            other => {
                return Err(EmbedError::Config(format!(
                    "{other:?} is not an HTTP embedder"
                )));
            }
        };
        let base = cfg
            .base_url
            .as_deref()
            .unwrap_or(default_base)
            .trim_end_matches('/');
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(EmbedError::Config(format!(
                "base_url `{base}` must start with http:// or https://"
            )));
        }
        // OPENAI_API_KEY is for OpenAI: a server on this machine never receives it (only a
        // key written in memory.embedder.api_key is sent there).
        let api_key = cfg.api_key.clone().or_else(|| {
            openai_key
                .filter(|_| wire == Wire::OpenAi && !crate::text::is_loopback_url(base))
                .cloned()
        });
        // reqwest is built without a bundled crypto provider; ring is the one we link
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(cfg.timeout_secs.max(1)))
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| EmbedError::Config(format!("cannot build the HTTP client: {e}")))?;
        Ok(HttpEmbedder {
            client,
            wire,
            url: format!("{base}{path}"),
            model: cfg
                .model
                .clone()
                .unwrap_or_else(|| default_model.to_string()),
            api_key,
            dimensions: cfg.dimensions,
            batch_size: cfg.batch_size.clamp(1, 2048),
            max_retries: cfg.max_retries,
        })
    }

    pub fn model_id(&self) -> String {
        let provider = match self.wire {
            Wire::OpenAi => "openai",
            Wire::Ollama => "ollama",
        };
        match self.dimensions {
            Some(d) => format!("{provider}:{}@{d}", self.model),
            None => format!("{provider}:{}", self.model),
        }
    }

    pub async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.batch_size) {
            let mut vectors = self.embed_batch_with_retries(batch).await?;
            if vectors.len() != batch.len() {
                return Err(self.bad(format!(
                    "{} vectors for {} inputs",
                    vectors.len(),
                    batch.len()
                )));
            }
            if let Some(first) = vectors.first() {
                let dim = first.len();
                if dim == 0 || vectors.iter().any(|v| v.len() != dim) {
                    return Err(self.bad("vectors of differing or zero length".into()));
                }
            }
            vectors.iter_mut().for_each(|v| normalise(v));
            out.extend(vectors);
        }
        Ok(out)
    }

    async fn embed_batch_with_retries(
        &self,
        batch: &[String],
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut attempt = 0;
        loop {
            match self.embed_batch(batch).await {
                Ok(v) => return Ok(v),
                Err(e) if attempt < self.max_retries && e.is_transient() => {
                    let wait = match &e {
                        EmbedError::RateLimited {
                            retry_after: Some(d),
                            ..
                        } => {
                            if *d > MAX_RETRY_AFTER {
                                return Err(e);
                            }
                            *d
                        }
                        _ => backoff(attempt),
                    };
                    tracing::debug!(error = %e, ?wait, attempt, "embedding request failed; retrying");
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    async fn embed_batch(&self, batch: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let body = match self.wire {
            Wire::OpenAi => serde_json::to_vec(&OpenAiRequest {
                model: &self.model,
                input: batch,
                dimensions: self.dimensions,
                encoding_format: "float",
            }),
            Wire::Ollama => serde_json::to_vec(&OllamaRequest {
                model: &self.model,
                input: batch,
                truncate: true,
                dimensions: self.dimensions,
            }),
        }
        .map_err(|e| EmbedError::Config(format!("cannot encode the request: {e}")))?;
        let mut req = self
            .client
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        if let Some(key) = &self.api_key {
            req = req.bearer_auth(key.expose_secret());
        }
        let resp = req.send().await.map_err(|e| EmbedError::Connect {
            url: self.url.clone(),
            message: error_chain(&e),
        })?;
        let status = resp.status();
        if status == reqwest::StatusCode::TOO_MANY_REQUESTS {
            return Err(EmbedError::RateLimited {
                url: self.url.clone(),
                retry_after: retry_after(resp.headers()),
            });
        }
        if status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN {
            return Err(EmbedError::Unauthorized {
                url: self.url.clone(),
                status: status.as_u16(),
            });
        }
        let bytes = resp.bytes().await.map_err(|e| EmbedError::Connect {
            url: self.url.clone(),
            message: error_chain(&e),
        })?;
        if !status.is_success() {
            return Err(EmbedError::Status {
                url: self.url.clone(),
                status: status.as_u16(),
                message: error_message(&bytes),
            });
        }
        match self.wire {
            Wire::OpenAi => {
                let r: OpenAiResponse =
                    serde_json::from_slice(&bytes).map_err(|e| self.bad(format!("{e}")))?;
                let mut data = r.data;
                // the API documents `index`; do not trust the order
                data.sort_by_key(|d| d.index);
                if data.iter().enumerate().any(|(i, d)| d.index != i) {
                    return Err(self.bad("indices are not 0..n".into()));
                }
                Ok(data.into_iter().map(|d| d.embedding).collect())
            }
            Wire::Ollama => {
                let r: OllamaResponse =
                    serde_json::from_slice(&bytes).map_err(|e| self.bad(format!("{e}")))?;
                Ok(r.embeddings)
            }
        }
    }

    fn bad(&self, message: String) -> EmbedError {
        EmbedError::BadResponse {
            url: self.url.clone(),
            message,
        }
    }
}

fn backoff(attempt: u32) -> Duration {
    let base = BASE_BACKOFF * 2u32.saturating_pow(attempt.min(6));
    // jitter without a RNG dependency: the clock's sub-second nanos are unpredictable enough
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    base + Duration::from_millis(u64::from(nanos % 1000) * base.as_millis() as u64 / 4000)
}

/// Retry-After in seconds (the HTTP-date form falls back to our own backoff).
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
}

/// The provider's error message if the body is `{"error": {"message": …}}` / `{"error": "…"}`,
/// else the start of the body.
fn error_message(body: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct Envelope {
        error: ErrorField,
    }
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum ErrorField {
        Text(String),
        Object { message: String },
    }
    match serde_json::from_slice::<Envelope>(body) {
        Ok(Envelope {
            error: ErrorField::Text(m) | ErrorField::Object { message: m },
        }) => m,
        Err(_) => String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned(),
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        src = inner.source();
    }
    s
}

#[derive(serde::Serialize)]
struct OpenAiRequest<'a> {
    model: &'a str,
    input: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    dimensions: Option<u32>,
    encoding_format: &'static str,
}

#[derive(serde::Deserialize)]
struct OpenAiResponse {
    data: Vec<OpenAiEmbedding>,
}

#[derive(serde::Deserialize)]
struct OpenAiEmbedding {
    index: usize,
    embedding: Vec<f32>,
}

#[derive(serde::Serialize)]
struct OllamaRequest<'a> {
    model: &'a str,
    input: &'a [String],
    truncate: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    dimensions: Option<u32>,
}

#[derive(serde::Deserialize)]
struct OllamaResponse {
    embeddings: Vec<Vec<f32>>,
}
