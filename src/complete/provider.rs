//! The model behind completions, resolved from `[completion]`: a FIM server
//! (`llm::fim`), or the `[provider]` chat model with a fill-in-the-middle prompt.

use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use tokio_util::sync::CancellationToken;

use super::config::{CompletionConfig, CompletionProvider};
use crate::llm::fim::{FimClient, FimError, FimOutput, FimRequest, FimSettings, FimWire};
use crate::llm::{self, ApiKeys, Item, LlmError, PriceTable, ProviderConfig, ProviderSettings};

enum Backend {
    Fim(FimClient),
    Chat(llm::Client),
}

/// A configured completion model.
pub struct Provider {
    backend: Backend,
    /// `ollama`, `deepseek`, … as shown in `mira usage`.
    pub name: &'static str,
    pub model: String,
    prices: PriceTable,
    /// Literal secrets redacted from whatever is sent (the configured keys).
    known: Vec<SecretString>,
}

/// Why a call produced nothing the editor should see.
#[derive(Debug)]
pub enum CallError {
    Cancelled,
    /// Rate limited: pause completions this long.
    RateLimited(Duration),
    Failed(String),
}

const FIM_SYSTEM: &str = "You are a code completion engine. The user shows a file with the \
cursor marked <CURSOR>. Answer with exactly the text to insert at the cursor and nothing else: \
no explanation, no Markdown fences, and never the text that already follows the cursor.";

/// An environment variable's value, set and non-empty (`config::Env::get`).
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

fn key_from_env(env: EnvLookup, cfg: &CompletionConfig, default_var: &str) -> Option<SecretString> {
    let var = cfg.api_key_env.as_deref().unwrap_or(default_var);
    env(var).map(SecretString::from)
}

impl Provider {
    /// `None` when `[completion]` names no provider (completion is off); an error says what
    /// to set when it names one that cannot work. `chat` and `keys` are `[provider]` and its
    /// keys (the `chat` provider and the price table); `env` finds a FIM server's key.
    pub fn resolve(
        cfg: &CompletionConfig,
        chat: &ProviderConfig,
        keys: &ApiKeys,
        env: EnvLookup,
    ) -> Result<Option<Provider>, String> {
        let Some(kind) = cfg.provider else {
            return Ok(None);
        };
        if kind == CompletionProvider::Chat {
            return Self::chat(cfg, chat, keys).map(Some);
        }
        let (wire, name, base, model, key_var) = match kind {
            CompletionProvider::OpenaiCompletions => (
                FimWire::OpenAiCompletions,
                "openai-completions",
                None,
                "default",
                "MIRA_COMPLETION_API_KEY",
            ),
            CompletionProvider::Deepseek => (
                FimWire::OpenAiCompletions,
                "deepseek",
                Some("https://api.deepseek.com/beta"),
                "deepseek-chat",
                "DEEPSEEK_API_KEY",
            ),
            CompletionProvider::Codestral => (
                FimWire::Codestral,
                "codestral",
                Some("https://codestral.mistral.ai/v1"),
                "codestral-latest",
                "CODESTRAL_API_KEY",
            ),
            CompletionProvider::LlamaCpp => (
                FimWire::LlamaInfill,
                "llama.cpp",
                Some("http://127.0.0.1:8080"),
                "default",
                "MIRA_COMPLETION_API_KEY",
            ),
            CompletionProvider::Ollama => (
                FimWire::Ollama,
                "ollama",
                Some("http://127.0.0.1:11434"),
                "qwen2.5-coder:1.5b-base",
                "MIRA_COMPLETION_API_KEY",
            ),
            CompletionProvider::Chat => unreachable!("handled above"),
        };
        let base_url = match (cfg.base_url.as_deref(), base) {
            (Some(b), _) | (None, Some(b)) => b.trim_end_matches('/').to_string(),
            (None, None) => {
                return Err(format!(
                    "completion provider `{name}` needs `completion.base_url` (e.g. \
                     \"http://127.0.0.1:8080/v1\" for llama.cpp's server)"
                ));
            }
        };
        let api_key = key_from_env(env, cfg, key_var);
        let hosted = matches!(
            kind,
            CompletionProvider::Deepseek | CompletionProvider::Codestral
        );
        if hosted && api_key.is_none() && cfg.base_url.is_none() {
            let var = cfg.api_key_env.as_deref().unwrap_or(key_var);
            return Err(format!(
                "completion provider `{name}` needs an API key: `export {var}=...`"
            ));
        }
        let settings = FimSettings {
            wire,
            base_url,
            model: cfg.model.clone().unwrap_or_else(|| model.to_string()),
            api_key: api_key.clone(),
            connect_timeout: Duration::from_millis(cfg.timeout_ms.min(10_000)),
            first_byte_timeout: Duration::from_millis(cfg.timeout_ms),
            idle_timeout: Duration::from_millis(cfg.timeout_ms),
        };
        let model = settings.model.clone();
        let client = FimClient::new(settings).map_err(|e| e.to_string())?;
        Ok(Some(Provider {
            backend: Backend::Fim(client),
            name,
            model,
            prices: prices_from(chat),
            known: api_key.into_iter().collect(),
        }))
    }

    fn chat(
        cfg: &CompletionConfig,
        chat: &ProviderConfig,
        keys: &ApiKeys,
    ) -> Result<Provider, String> {
        let mut s = ProviderSettings::resolve(chat, keys).map_err(|e| e.to_string())?;
        // A stale completion is worthless: one attempt, short timeouts.
        s.retry.max_attempts = 1;
        s.max_output_tokens = cfg.max_tokens;
        s.timeouts.first_byte = Duration::from_millis(cfg.timeout_ms);
        s.timeouts.idle = Duration::from_millis(cfg.timeout_ms);
        if let Some(m) = &cfg.model {
            s.model = m.clone();
        }
        let known = s.api_key.iter().cloned().collect();
        let model = s.model.clone();
        let prices = s.prices.clone();
        let client = llm::Client::new(s).map_err(|e| e.to_string())?;
        Ok(Provider {
            backend: Backend::Chat(client),
            name: "chat",
            model,
            prices,
            known,
        })
    }

    /// The completion model's window, asked of its server (`None`: it did not say, or a
    /// hosted FIM API whose windows dwarf any completion prompt).
    pub async fn window(&self) -> Option<llm::Window> {
        match &self.backend {
            Backend::Chat(c) => Some(c.window().await),
            Backend::Fim(c) => {
                let s = c.settings();
                let flavour = match s.wire {
                    FimWire::LlamaInfill => llm::ChatFlavour::LlamaCpp,
                    FimWire::Ollama => llm::ChatFlavour::Ollama,
                    FimWire::OpenAiCompletions => llm::ChatFlavour::Generic,
                    FimWire::Codestral => return None,
                };
                llm::local::learn_window_once(&llm::local::ServerRef {
                    kind: llm::ProviderKind::OpenAiChat,
                    flavour,
                    base_url: &s.base_url,
                    model: &s.model,
                    api_key: s.api_key.as_ref(),
                })
                .await
            }
        }
    }

    /// Cost of a call in USD, when the model has a price.
    pub fn cost(&self, usage: &llm::Usage) -> Option<f64> {
        self.prices.cost(&self.model, usage)
    }

    /// One call: redacted, cancellable, no retries.
    pub async fn call(
        &self,
        req: &FimRequest,
        cancel: &CancellationToken,
    ) -> Result<FimOutput, CallError> {
        let known: Vec<&str> = self.known.iter().map(|k| k.expose_secret()).collect();
        let req = req.redacted(&known);
        match &self.backend {
            Backend::Fim(c) => c.complete(&req, cancel).await.map_err(|e| match e {
                FimError::Cancelled => CallError::Cancelled,
                FimError::Http {
                    status: 429,
                    retry_after,
                    ..
                } => CallError::RateLimited(
                    retry_after
                        .unwrap_or(Duration::from_secs(10))
                        .min(Duration::from_secs(60)),
                ),
                other => CallError::Failed(other.to_string()),
            }),
            Backend::Chat(c) => chat_call(c, &req, cancel).await,
        }
    }
}

fn prices_from(provider: &ProviderConfig) -> PriceTable {
    let mut t = PriceTable::default();
    for (model, p) in &provider.prices {
        t.set(
            model.clone(),
            llm::Price {
                input: p.input,
                cached_input: p.cached_input,
                cache_write: p.cache_write,
                output: p.output,
            },
        );
    }
    t
}

async fn chat_call(
    client: &llm::Client,
    req: &FimRequest,
    cancel: &CancellationToken,
) -> Result<FimOutput, CallError> {
    let line = if req.single_line {
        "\nComplete only the rest of the current line."
    } else {
        ""
    };
    let user = format!(
        "{}<file name=\"{}\">\n{}<CURSOR>{}\n</file>{line}",
        req.header, req.file_name, req.prefix, req.suffix
    );
    let request = llm::Request {
        system: FIM_SYSTEM.to_string(),
        items: vec![Item::User(user)],
        tools: Vec::new(),
        effort: None,
    };
    match client
        .complete(&request, &mut |_: llm::Delta| {}, cancel)
        .await
    {
        Ok(c) => Ok(FimOutput {
            text: strip_fences(&c.text()),
            usage: c.usage,
            ..Default::default()
        }),
        Err(f) => Err(match f.error {
            LlmError::Cancelled => CallError::Cancelled,
            LlmError::Http {
                status: 429,
                retry_after,
                ..
            } => CallError::RateLimited(
                retry_after
                    .unwrap_or(Duration::from_secs(10))
                    .min(Duration::from_secs(60)),
            ),
            other => CallError::Failed(other.to_string()),
        }),
    }
}

/// Chat models wrap code in fences despite being told not to.
fn strip_fences(text: &str) -> String {
    let t = text.trim_start_matches('\n');
    if let Some(rest) = t.strip_prefix("```") {
        let body = rest.split_once('\n').map_or("", |(_, b)| b);
        let body = body.trim_end();
        return body.strip_suffix("```").unwrap_or(body).to_string();
    }
    text.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_are_stripped() {
        assert_eq!(strip_fences("```rust\nlet x = 1;\n```"), "let x = 1;\n");
        assert_eq!(strip_fences(" + 1"), " + 1");
    }
}
