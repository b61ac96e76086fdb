//! What a model server says about itself: the models it serves and the context window of the
//! one Mira uses. Local servers differ in where they say it (llama.cpp `/props`, Ollama
//! `/api/show`, LM Studio `/api/v0/models`, vLLM and llama.cpp in `/v1/models`); hosted models
//! have known windows. A configured `provider.context_window` overrides all of them.

use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;

use super::{ChatFlavour, LlmError, ProviderKind};

/// A model's context window in tokens, and how Mira knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub tokens: usize,
    pub source: WindowSource,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowSource {
    /// `provider.context_window` (or `completion.context_window`).
    Configured,
    /// Asked the server; the endpoint that answered.
    Server(&'static str),
    /// The window published for this hosted model.
    Known,
    /// Nothing said otherwise: Mira's default budget.
    Assumed,
}

impl Window {
    /// The window when nothing is known: as large as Mira's default budget, so hosted models
    /// behave as before.
    pub const ASSUMED: Window = Window {
        tokens: 64_000,
        source: WindowSource::Assumed,
    };

    /// "2048 tokens (llama.cpp /props)".
    pub fn describe(&self) -> String {
        let from = match self.source {
            WindowSource::Configured => "configured".to_string(),
            WindowSource::Server(endpoint) => format!("from the server's {endpoint}"),
            WindowSource::Known => "known for this model".to_string(),
            WindowSource::Assumed => {
                "assumed: the server did not say; set provider.context_window".to_string()
            }
        };
        format!("{} tokens ({from})", self.tokens)
    }

    /// Tokens kept free for the answer: the configured output cap, but never more than a
    /// quarter of a small window (a 2,048-token model answers in at most 512).
    pub fn output_reserve(&self, max_output_tokens: u32) -> usize {
        (max_output_tokens as usize).min((self.tokens / 4).max(256))
    }
}

/// Published windows of hosted models, by model-name prefix (longest prefix wins).
const KNOWN: &[(&str, usize)] = &[
    ("gpt-5", 400_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("claude", 200_000),
    ("deepseek", 128_000),
];

/// The published window of a hosted model, if Mira knows it.
pub fn known_window(model: &str) -> Option<usize> {
    let name = model.rsplit('/').next().unwrap_or(model);
    KNOWN
        .iter()
        .filter(|(prefix, _)| name.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|&(_, tokens)| tokens)
}

/// Where to ask: the server's root and its OpenAI-compatible base.
#[derive(Clone, Debug)]
pub struct ServerRef<'a> {
    pub kind: ProviderKind,
    pub flavour: ChatFlavour,
    /// As configured, e.g. `http://127.0.0.1:8080/v1`.
    pub base_url: &'a str,
    pub model: &'a str,
    pub api_key: Option<&'a SecretString>,
}

impl ServerRef<'_> {
    /// The server's root: the base URL without a trailing `/v1`.
    fn root(&self) -> &str {
        let base = self.base_url.trim_end_matches('/');
        base.strip_suffix("/v1").unwrap_or(base)
    }

    fn get(&self, http: &reqwest::Client, url: String) -> reqwest::RequestBuilder {
        let mut rb = http.get(url).timeout(PROBE_TIMEOUT);
        if let Some(key) = self.api_key {
            rb = match self.kind {
                ProviderKind::Anthropic => rb
                    .header("x-api-key", key.expose_secret())
                    .header("anthropic-version", "2023-06-01"),
                _ => rb.bearer_auth(key.expose_secret()),
            };
        }
        rb
    }
}

/// A probe must never hold up a turn for long: a server that does not answer in this time is
/// treated as silent (the model call that follows says what is wrong).
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// Asks the server for the model's window. `None`: it did not say (or could not be reached).
pub async fn learn_window(http: &reqwest::Client, s: &ServerRef<'_>) -> Option<Window> {
    if s.kind != ProviderKind::OpenAiChat
        || matches!(s.flavour, ChatFlavour::OpenAi | ChatFlavour::DeepSeek)
    {
        return None;
    }
    let server = |tokens: usize, endpoint| {
        (tokens > 0).then_some(Window {
            tokens,
            source: WindowSource::Server(endpoint),
        })
    };
    match s.flavour {
        ChatFlavour::Ollama => {
            if let Some(t) = ollama_show(http, s).await {
                return server(t, "/api/show");
            }
        }
        ChatFlavour::LmStudio => {
            if let Some(t) = lmstudio_model(http, s).await {
                return server(t, "/api/v0/models");
            }
        }
        _ => {
            if let Some(t) = llama_props(http, s).await {
                return server(t, "/props");
            }
        }
    }
    // vLLM (`max_model_len`), llama.cpp (`meta.n_ctx`), OpenRouter (`context_length`).
    let listed = list_models(http, s).await.ok()?;
    let entry = listed
        .iter()
        .find(|m| m.id == s.model)
        .or_else(|| (listed.len() == 1).then(|| &listed[0]))?;
    server(entry.window?, "/v1/models")
}

/// How long a learned window is trusted in this process: an editor's server builds a client
/// per turn, and a model server restarted with another context size is noticed soon after.
const LEARNED_FOR: Duration = Duration::from_secs(60);

type Learned = std::collections::HashMap<(String, String), (std::time::Instant, Window)>;
static LEARNED: std::sync::LazyLock<std::sync::Mutex<Learned>> =
    std::sync::LazyLock::new(Default::default);

/// [`learn_window`], remembered per server and model for [`LEARNED_FOR`].
pub async fn learn_window_cached(http: &reqwest::Client, s: &ServerRef<'_>) -> Option<Window> {
    let key = (s.base_url.to_string(), s.model.to_string());
    let lock = || LEARNED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((at, w)) = lock().get(&key)
        && at.elapsed() < LEARNED_FOR
    {
        return Some(*w);
    }
    let w = learn_window(http, s).await?;
    tracing::info!(window = w.tokens, source = ?w.source, model = %s.model, "learned the model's context window");
    lock().insert(key, (std::time::Instant::now(), w));
    Some(w)
}

/// [`learn_window`] with a client of its own (callers without a [`super::Client`]: the
/// completion servers).
pub async fn learn_window_once(s: &ServerRef<'_>) -> Option<Window> {
    super::client::install_crypto_provider();
    let http = reqwest::Client::builder().build().ok()?;
    learn_window(&http, s).await
}

async fn json<T: for<'de> Deserialize<'de>>(rb: reqwest::RequestBuilder) -> Option<T> {
    let resp = rb.send().await.ok()?;
    if !resp.status().is_success() {
        return None;
    }
    resp.json::<T>().await.ok()
}

/// llama.cpp: `GET /props` → `default_generation_settings.n_ctx` (per slot, what a request
/// may use).
async fn llama_props(http: &reqwest::Client, s: &ServerRef<'_>) -> Option<usize> {
    #[derive(Deserialize)]
    struct Props {
        #[serde(default)]
        default_generation_settings: Option<Gen>,
        #[serde(default)]
        n_ctx: Option<usize>,
    }
    #[derive(Deserialize)]
    struct Gen {
        #[serde(default)]
        n_ctx: Option<usize>,
    }
    let p: Props = json(s.get(http, format!("{}/props", s.root()))).await?;
    p.default_generation_settings
        .and_then(|g| g.n_ctx)
        .or(p.n_ctx)
}

/// Ollama's default window when neither the model nor the request sets `num_ctx`.
const OLLAMA_DEFAULT_NUM_CTX: usize = 4096;

/// Ollama: `POST /api/show {model}` → `num_ctx` from the model's parameters when set, else
/// Ollama's default capped by what the model was trained for (`<arch>.context_length`).
/// A server started with a larger `OLLAMA_CONTEXT_LENGTH` does not say so: set
/// `provider.context_window` then.
async fn ollama_show(http: &reqwest::Client, s: &ServerRef<'_>) -> Option<usize> {
    #[derive(Deserialize)]
    struct Show {
        #[serde(default)]
        parameters: Option<String>,
        #[serde(default)]
        model_info: std::collections::BTreeMap<String, serde_json::Value>,
    }
    let rb = http
        .post(format!("{}/api/show", s.root()))
        .timeout(PROBE_TIMEOUT)
        .json(&serde_json::json!({ "model": s.model }));
    let show: Show = json(rb).await?;
    let num_ctx = show.parameters.as_deref().and_then(|p| {
        p.lines().find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("num_ctx"))
                .then(|| w.next()?.parse().ok())
                .flatten()
        })
    });
    let trained = show
        .model_info
        .iter()
        .find(|(k, _)| k.ends_with(".context_length"))
        .and_then(|(_, v)| v.as_u64())
        .map(|v| v as usize);
    num_ctx.or_else(|| trained.map(|t| t.min(OLLAMA_DEFAULT_NUM_CTX)))
}

/// LM Studio: `GET /api/v0/models/{model}` → `loaded_context_length`, else `max_context_length`.
async fn lmstudio_model(http: &reqwest::Client, s: &ServerRef<'_>) -> Option<usize> {
    #[derive(Deserialize)]
    struct Model {
        #[serde(default)]
        loaded_context_length: Option<usize>,
        #[serde(default)]
        max_context_length: Option<usize>,
    }
    let url = format!("{}/api/v0/models/{}", s.root(), s.model);
    let m: Model = json(s.get(http, url)).await?;
    m.loaded_context_length.or(m.max_context_length)
}

/// One model a server lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedModel {
    pub id: String,
    /// The window the listing states, when it states one.
    pub window: Option<usize>,
}

/// `GET {base}/models`: every OpenAI-compatible server (Ollama, llama.cpp, LM Studio, vLLM)
/// and OpenAI and Anthropic themselves.
pub async fn list_models(
    http: &reqwest::Client,
    s: &ServerRef<'_>,
) -> Result<Vec<ListedModel>, LlmError> {
    #[derive(Deserialize)]
    struct List {
        #[serde(default)]
        data: Vec<Entry>,
    }
    #[derive(Deserialize)]
    struct Entry {
        id: String,
        #[serde(default)]
        max_model_len: Option<usize>,
        #[serde(default)]
        context_length: Option<usize>,
        #[serde(default)]
        meta: Option<Meta>,
    }
    #[derive(Deserialize)]
    struct Meta {
        #[serde(default)]
        n_ctx: Option<usize>,
    }
    let url = format!("{}/models", s.base_url.trim_end_matches('/'));
    let resp = s
        .get(http, url.clone())
        .send()
        .await
        .map_err(|e| LlmError::Connect {
            provider: s.kind,
            url: url.clone(),
            // reqwest names the URL in its own message; the error says it once.
            message: super::client::error_chain(&e).replace(&format!(" for url ({url})"), ""),
        })?;
    let status = resp.status();
    if !status.is_success() {
        let message = resp.text().await.unwrap_or_default();
        return Err(LlmError::Http {
            provider: s.kind,
            status: status.as_u16(),
            message: message.chars().take(300).collect(),
            retry_after: None,
        });
    }
    let list: List = resp.json().await.map_err(|e| LlmError::Stream {
        provider: s.kind,
        message: format!("unreadable model list from {url}: {e}"),
    })?;
    let mut models: Vec<ListedModel> = list
        .data
        .into_iter()
        .map(|e| ListedModel {
            window: e
                .meta
                .and_then(|m| m.n_ctx)
                .or(e.max_model_len)
                .or(e.context_length),
            id: e.id,
        })
        .collect();
    models.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(models)
}

/// What `mira models` and `mira doctor` say about the configured provider's server.
#[derive(Clone, Debug)]
pub struct ServerReport {
    /// The model Mira asks for.
    pub model: String,
    pub base_url: String,
    pub window: Window,
    /// The server's models, or why it could not list them (with what to do).
    pub models: Result<Vec<ListedModel>, String>,
}

impl ServerReport {
    /// Whether the server lists the configured model (llama.cpp serves one model under any
    /// name, so a single listed model counts).
    pub fn has_model(&self) -> bool {
        match &self.models {
            Ok(list) => list.len() == 1 || list.iter().any(|m| m.id == self.model),
            Err(_) => false,
        }
    }
}

/// Asks the provider's server for its models and the model's window (both at once).
pub async fn server_report(settings: super::ProviderSettings) -> Result<ServerReport, LlmError> {
    let client = super::Client::new(settings)?;
    let (window, models) = tokio::join!(client.window(), client.models());
    let s = client.settings();
    Ok(ServerReport {
        model: s.model.clone(),
        base_url: s.base_url.clone(),
        window,
        models: models.map_err(|e| e.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosted_windows_are_known_by_the_longest_prefix() {
        assert_eq!(known_window("gpt-4.1-mini"), Some(1_047_576));
        assert_eq!(known_window("claude-sonnet-4-5"), Some(200_000));
        assert_eq!(known_window("openai/gpt-5.1"), Some(400_000));
        assert_eq!(known_window("qwen3:8b"), None);
    }

    #[test]
    fn a_small_window_keeps_a_quarter_for_the_answer() {
        let w = Window {
            tokens: 2048,
            source: WindowSource::Configured,
        };
        assert_eq!(w.output_reserve(8192), 512);
        assert_eq!(Window::ASSUMED.output_reserve(8192), 8192);
        assert_eq!(w.output_reserve(100), 100);
    }
}
