//! Embedding providers for recall: `builtin` (the default, compiled in: paraphrase-MiniLM-L3-v2
//! in 4 bits on candle, `local.rs`, or with `model = "static"` a static table, `builtin.rs`),
//! `none` (recall is BM25 only), `openai` (any OpenAI-compatible `/v1/embeddings`), `ollama`
//! (`/api/embed`) and `local` (all-MiniLM-L6-v2 from a directory, behind the
//! `local-embeddings` cargo feature).
//!
//! Every vector leaves this module L2-normalised, so cosine, dot product and L2 rank alike.

mod builtin;
mod code;
mod http;
mod local;
mod settings;
mod wordpiece;

use std::time::Duration;

use secrecy::SecretString;

pub use settings::{EmbedderConfig, EmbedderKind, EmbedderKind as Provider};

pub use builtin::BuiltinEmbedder;
pub use code::CodeModel;
pub use http::HttpEmbedder;
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
    /// Compiled in (the default); a `&'static` table, so cloning is free.
    Builtin(&'static BuiltinEmbedder),
    Http(HttpEmbedder),
    /// A BERT on this CPU: the bundled one (the default) or provider `local`'s.
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
            Provider::Builtin => match BuiltinModel::of(cfg)? {
                BuiltinModel::Static => Ok(Some(Embedder::Builtin(BuiltinEmbedder::get()))),
                BuiltinModel::MiniLmL3 => Ok(Some(Embedder::Local(bundled()?))),
            },
            Provider::Openai | Provider::Ollama => {
                Ok(Some(Embedder::Http(HttpEmbedder::new(cfg, openai_key)?)))
            }
            Provider::Local => {
                let dir = cfg.model_dir.as_ref().ok_or_else(local_needs_dir)?;
                Ok(Some(Embedder::Local(std::sync::Arc::new(
                    LocalEmbedder::load(dir)?,
                ))))
            }
        }
    }

    /// Whether building this embedder means loading a model (slow: do it off the startup path).
    pub fn loads_a_model(cfg: &EmbedderConfig) -> bool {
        match cfg.provider {
            Provider::Local => true,
            Provider::Builtin => BuiltinModel::of(cfg).is_ok_and(|m| m == BuiltinModel::MiniLmL3),
            _ => false,
        }
    }

    /// What can be checked without loading anything: the built-in model's name, the model
    /// directory is set and holds the model's files; HTTP settings are well-formed.
    pub fn check_config(cfg: &EmbedderConfig) -> Result<(), EmbedError> {
        match cfg.provider {
            Provider::None => Ok(()),
            Provider::Builtin => BuiltinModel::of(cfg).map(|_| ()),
            Provider::Openai | Provider::Ollama => HttpEmbedder::new(cfg, None).map(|_| ()),
            Provider::Local => {
                let dir = cfg.model_dir.as_ref().ok_or_else(local_needs_dir)?;
                LocalEmbedder::check_dir(dir)
            }
        }
    }

    /// Whether code chunks get vectors from this embedder. The built-in ones do not. The
    /// static table, on question → function search with docs stripped (examples/code_eval.rs,
    /// 300 pairs from eight registry crates), hit@5 0.262 alone against BM25's 0.528, and
    /// every fusion weight was level with BM25 or below it. The bundled transformer embeds a
    /// few hundred texts a second on 2 cores: a 400k-symbol project would keep them busy
    /// for half an hour. So code search stays lexical with them, and a project is never
    /// scanned for vectors that would not help.
    pub fn embeds_code(&self) -> bool {
        match self {
            Embedder::Builtin(_) => false,
            Embedder::Local(l) => l.model_id() != LocalEmbedder::BUNDLED_MODEL_ID,
            Embedder::Http(_) => true,
        }
    }

    /// Names the model whose vectors these are; stored with them so models never mix.
    pub fn model_id(&self) -> String {
        match self {
            Embedder::Builtin(_) => BuiltinEmbedder::MODEL_ID.to_string(),
            Embedder::Http(h) => h.model_id(),
            Embedder::Local(l) => l.model_id().to_string(),
        }
    }

    /// Embeds `texts` in order; every vector is L2-normalised.
    pub async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        match self {
            // Microseconds a text: a batch of a few hundred code chunks is still well under a
            // millisecond's worth of work per text, so it runs in place up to that size.
            Embedder::Builtin(b) if texts.len() <= 16 => Ok(b.embed(texts)),
            Embedder::Builtin(b) => {
                let (b, texts) = (*b, texts.to_vec());
                tokio::task::spawn_blocking(move || b.embed(&texts))
                    .await
                    .map_err(|e| EmbedError::Local(format!("embedding thread failed: {e}")))
            }
            Embedder::Http(h) => h.embed(texts).await,
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

/// What embeds code chunks: the built-in code model (always on: microseconds a chunk), or
/// an embedder the user configured that embeds code too (`Embedder::embeds_code`).
#[derive(Clone, Debug)]
pub enum CodeEmbedder {
    Builtin(&'static CodeModel),
    Configured(Embedder),
}

impl CodeEmbedder {
    pub fn builtin() -> CodeEmbedder {
        CodeEmbedder::Builtin(CodeModel::get())
    }

    pub fn model_id(&self) -> String {
        match self {
            CodeEmbedder::Builtin(_) => CodeModel::MODEL_ID.to_string(),
            CodeEmbedder::Configured(e) => e.model_id(),
        }
    }

    /// Vectors of code chunks, in order.
    pub async fn embed_chunks(&self, chunks: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        match self {
            CodeEmbedder::Builtin(m) if chunks.len() <= 16 => Ok(m.embed_chunks(chunks)),
            CodeEmbedder::Builtin(m) => {
                let (m, chunks) = (*m, chunks.to_vec());
                tokio::task::spawn_blocking(move || m.embed_chunks(&chunks))
                    .await
                    .map_err(|e| EmbedError::Local(format!("embedding thread failed: {e}")))
            }
            CodeEmbedder::Configured(e) => e.embed(chunks).await,
        }
    }
}

impl std::fmt::Debug for CodeModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(CodeModel::MODEL_ID)
    }
}

fn local_needs_dir() -> EmbedError {
    EmbedError::Config(
        "provider `local` needs memory.embedder.model_dir: a directory with \
         model.safetensors, config.json and vocab.txt (all-MiniLM-L6-v2)"
            .into(),
    )
}

/// Which of the two compiled-in models `provider = "builtin"` means (`memory.embedder.model`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuiltinModel {
    /// paraphrase-MiniLM-L3-v2 in 4 bits (the default; `model` unset or
    /// `"paraphrase-MiniLM-L3-v2"`).
    MiniLmL3,
    /// The static table (`model = "static"`): microseconds a text, far weaker on paraphrases.
    Static,
}

impl BuiltinModel {
    pub const MINILM_L3: &'static str = "paraphrase-MiniLM-L3-v2";
    pub const STATIC: &'static str = "static";

    pub fn of(cfg: &EmbedderConfig) -> Result<BuiltinModel, EmbedError> {
        match cfg.model.as_deref() {
            None | Some(Self::MINILM_L3) => Ok(BuiltinModel::MiniLmL3),
            Some(Self::STATIC) => Ok(BuiltinModel::Static),
            Some(other) => Err(EmbedError::Config(format!(
                "memory.embedder.model = \"{other}\" is not a built-in model; with provider \"builtin\" \
                 use \"{}\" (the default) or \"{}\"",
                Self::MINILM_L3,
                Self::STATIC
            ))),
        }
    }
}

/// The bundled transformer, loaded once per process and shared.
fn bundled() -> Result<std::sync::Arc<LocalEmbedder>, EmbedError> {
    static ONE: std::sync::OnceLock<Result<std::sync::Arc<LocalEmbedder>, String>> =
        std::sync::OnceLock::new();
    ONE.get_or_init(|| {
        LocalEmbedder::bundled()
            .map(std::sync::Arc::new)
            .map_err(|e| e.to_string())
    })
    .clone()
    .map_err(EmbedError::Local)
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

/// What `mira doctor` says about the embedder: which one, whether it works, how fast it is.
#[derive(Debug, Clone)]
pub struct Probe {
    pub provider: Provider,
    pub model_id: Option<String>,
    /// `Ok` when usable; the reason otherwise.
    pub state: Result<(), String>,
    /// Texts per second on a sample of memory-sized texts, measured in this process (only for
    /// the in-process embedders: a server is not called by a health check).
    pub texts_per_second: Option<f64>,
}

/// Builds the configured embedder and, when it runs in this process, times it.
pub fn probe(cfg: &EmbedderConfig) -> Probe {
    let mut probe = Probe {
        provider: cfg.provider,
        model_id: None,
        state: Ok(()),
        texts_per_second: None,
    };
    let embedder = match Embedder::check_config(cfg).and_then(|_| Embedder::from_config(cfg, None))
    {
        Ok(Some(e)) => e,
        Ok(None) => return probe,
        Err(e) => {
            probe.state = Err(e.to_string());
            return probe;
        }
    };
    probe.model_id = Some(embedder.model_id());
    let sample: Vec<String> = (0..200)
        .map(|i| format!("Memory {i}: the staging deploy runs every Friday and retries the invoice job {i} times"))
        .collect();
    if let Embedder::Builtin(b) = &embedder {
        b.embed_one("warm up"); // the table is parsed on first use: not part of the speed
    }
    let started = std::time::Instant::now();
    let embedded = match &embedder {
        Embedder::Builtin(b) => b.embed(&sample).len(),
        Embedder::Local(l) => l.embed(&sample[..32]).map(|v| v.len()).unwrap_or(0),
        Embedder::Http(_) => return probe,
    };
    probe.texts_per_second = Some(embedded as f64 / started.elapsed().as_secs_f64().max(1e-9));
    probe
}

#[cfg(test)]
mod tests;
