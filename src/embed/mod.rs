//! Embedding providers for memory recall: `none` (default: recall is BM25 only), `openai`
//! (any OpenAI-compatible `/v1/embeddings`), `ollama` (`/api/embed`) and `local`
//! (all-MiniLM-L6-v2 on candle, behind the `local-embeddings` cargo feature).
//!
//! Every vector leaves this module L2-normalised, so cosine, dot product and L2 rank alike.

mod http;
#[cfg(feature = "local-embeddings")]
mod local;
#[cfg(feature = "local-embeddings")]
mod wordpiece;

use std::time::Duration;

use secrecy::SecretString;

pub use crate::config::{EmbedderConfig, EmbedderKind as Provider};

pub use http::HttpEmbedder;
#[cfg(feature = "local-embeddings")]
pub use local::LocalEmbedder;

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("embedder configuration: {0}")]
    Config(String),
    #[error(
        "cannot reach the embedding server at {url}: {message}. Is it running? (memory.embedder.base_url)"
    )]
    Connect { url: String, message: String },
    #[error(
        "the embedding server at {url} rejected the credentials ({status}); set OPENAI_API_KEY or memory.embedder.api_key"
    )]
    Unauthorized { url: String, status: u16 },
    #[error("the embedding server at {url} is rate limiting{}; recall keeps working on full-text search meanwhile",
        retry_after.map(|d| format!(" (retry after {} s)", d.as_secs())).unwrap_or_default())]
    RateLimited {
        url: String,
        retry_after: Option<Duration>,
    },
    #[error("the embedding server at {url} answered {status}: {message}")]
    Status {
        url: String,
        status: u16,
        message: String,
    },
    #[error("the embedding server at {url} sent an unexpected response: {message}")]
    BadResponse { url: String, message: String },
    #[error("local embedder: {0}")]
    Local(String),
}

impl EmbedError {
    /// Worth another attempt later (the background embedder keeps the memory pending).
    pub fn is_transient(&self) -> bool {
        match self {
            EmbedError::Connect { .. } | EmbedError::RateLimited { .. } => true,
            EmbedError::Status { status, .. } => *status >= 500,
            _ => false,
        }
    }
}

/// A configured embedder. An enum rather than a trait object: the set is closed and the
/// async methods stay plain `async fn`.
#[derive(Clone)]
pub enum Embedder {
    Http(HttpEmbedder),
    #[cfg(feature = "local-embeddings")]
    Local(std::sync::Arc<LocalEmbedder>),
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Embedder").field(&self.model_id()).finish()
    }
}

impl Embedder {
    /// `Ok(None)` for provider `none`. `openai_key` is the `OPENAI_API_KEY` the config layer
    /// read, used when `memory.embedder.api_key` is unset.
    pub fn from_config(
        cfg: &EmbedderConfig,
        openai_key: Option<&SecretString>,
    ) -> Result<Option<Embedder>, EmbedError> {
        match cfg.provider {
            Provider::None => Ok(None),
            Provider::Openai | Provider::Ollama => {
                Ok(Some(Embedder::Http(HttpEmbedder::new(cfg, openai_key)?)))
            }
            #[cfg(feature = "local-embeddings")]
            Provider::Local => {
                let dir = cfg.model_dir.as_ref().ok_or_else(local_needs_dir)?;
                Ok(Some(Embedder::Local(std::sync::Arc::new(
                    LocalEmbedder::load(dir)?,
                ))))
            }
            #[cfg(not(feature = "local-embeddings"))]
            Provider::Local => Err(local_needs_feature()),
        }
    }

    /// Whether building this embedder means loading a model (slow: do it off the startup path).
    pub fn loads_a_model(cfg: &EmbedderConfig) -> bool {
        cfg.provider == Provider::Local
    }

    /// What can be checked without loading anything: the feature is compiled in, the model
    /// directory is set and holds the model's files; HTTP settings are well-formed.
    pub fn check_config(cfg: &EmbedderConfig) -> Result<(), EmbedError> {
        match cfg.provider {
            Provider::None => Ok(()),
            Provider::Openai | Provider::Ollama => HttpEmbedder::new(cfg, None).map(|_| ()),
            #[cfg(feature = "local-embeddings")]
            Provider::Local => {
                let dir = cfg.model_dir.as_ref().ok_or_else(local_needs_dir)?;
                LocalEmbedder::check_dir(dir)
            }
            #[cfg(not(feature = "local-embeddings"))]
            Provider::Local => Err(local_needs_feature()),
        }
    }

    /// Names the model whose vectors these are; stored with them so models never mix.
    pub fn model_id(&self) -> String {
        match self {
            Embedder::Http(h) => h.model_id(),
            #[cfg(feature = "local-embeddings")]
            Embedder::Local(l) => l.model_id().to_string(),
        }
    }

    /// Embeds `texts` in order; every vector is L2-normalised.
    pub async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        match self {
            Embedder::Http(h) => h.embed(texts).await,
            #[cfg(feature = "local-embeddings")]
            Embedder::Local(l) => {
                let l = l.clone();
                let texts = texts.to_vec();
                // CPU-bound: off the async runtime
                tokio::task::spawn_blocking(move || l.embed(&texts))
                    .await
                    .map_err(|e| EmbedError::Local(format!("embedding thread failed: {e}")))?
            }
        }
    }
}

#[cfg(feature = "local-embeddings")]
fn local_needs_dir() -> EmbedError {
    EmbedError::Config(
        "provider `local` needs memory.embedder.model_dir: a directory with \
         model.safetensors, config.json and vocab.txt (all-MiniLM-L6-v2)"
            .into(),
    )
}

#[cfg(not(feature = "local-embeddings"))]
fn local_needs_feature() -> EmbedError {
    EmbedError::Config(
        "provider `local` needs a Mira built with `--features local-embeddings`; \
         use `openai` or `ollama`, or rebuild"
            .into(),
    )
}

/// Scales `v` to unit length (a zero vector stays zero).
pub fn normalise(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// Cosine similarity of two vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}
