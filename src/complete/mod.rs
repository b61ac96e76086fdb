//! Inline completion (ghost text): the library behind `textDocument/inlineCompletion` and
//! the opt-in completion popup. Protocol-free: the LSP adapter reads the document, hands a
//! [`Place`] here and converts the answer.
//!
//! One request: language check → cache (re-typed or typed-through prefixes answer at once,
//! with no provider call) → take the document's flight (a newer request cancels the older
//! one, whose HTTP stream is dropped) → debounce (automatic triggers) while the context is
//! gathered (definitions in reach from the index, standing preferences) → one provider call,
//! no retries → shape the answer (one line inside a line, never the text after the cursor)
//! → cache it, record usage off the runtime.

pub mod cache;
pub mod config;
pub mod context;
pub mod fit;
pub mod flight;
pub mod provider;
pub mod shape;
pub mod usage;
pub mod window;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::documents::DocId;

use crate::index::IndexHandle;
use crate::llm::fim::{FimOutput, FimRequest};
use crate::store::Store;
use config::CompletionConfig;

pub use provider::{CallError, EnvLookup, Provider};
pub use window::Window;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// While typing: debounced.
    Automatic,
    /// The user asked: at once.
    Invoked,
}

/// Where to complete, read from the document before any `.await`.
#[derive(Clone, Debug)]
pub struct Place {
    pub doc: DocId,
    pub language_id: String,
    pub window: Window,
    pub trigger: Trigger,
}

/// Why there is nothing to show. Only `Failed` is worth telling the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoSuggestion {
    /// `completion.languages` leaves this language out.
    Language,
    /// A newer request for the same document (or a cancel) took over.
    Superseded,
    /// Rate limited: completions pause until the server allows more.
    Paused,
    /// The model had nothing useful (or only text already after the cursor).
    Empty,
    Failed(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suggestion {
    pub text: String,
    pub from_cache: bool,
}

/// What the completer needs from its surroundings.
pub struct Sources {
    pub store: Option<Store>,
    pub index: Option<IndexHandle>,
    pub project_root: PathBuf,
}

pub struct Completer {
    provider: Provider,
    cfg: CompletionConfig,
    cache: Mutex<cache::Cache>,
    flights: flight::Flights,
    standing: Arc<context::Standing>,
    reach: context::Reach,
    store: Option<Store>,
    paused_until: Mutex<Option<Instant>>,
    /// The budgets fitted to the model's window, once its server was asked.
    fitted: tokio::sync::OnceCell<fit::Budgets>,
}

impl Completer {
    pub fn new(provider: Provider, cfg: CompletionConfig, sources: Sources) -> Completer {
        Completer {
            provider,
            cfg,
            cache: Default::default(),
            flights: Default::default(),
            standing: context::Standing::new(sources.store.clone(), sources.project_root),
            reach: context::Reach::new(sources.index),
            store: sources.store,
            paused_until: Mutex::new(None),
            fitted: tokio::sync::OnceCell::new(),
        }
    }

    /// The budgets a place is cut with: fitted to the model's window once it is known (the
    /// configuration as is until then, and the first call trims its window to the fit).
    pub fn budgets(&self) -> fit::Budgets {
        self.fitted
            .get()
            .copied()
            .unwrap_or_else(|| fit::fit(&self.cfg, None))
    }

    async fn fitted(&self) -> fit::Budgets {
        *self
            .fitted
            .get_or_init(|| async {
                let window = if self.cfg.context_window.is_some() {
                    None
                } else {
                    self.provider.window().await.map(|w| w.tokens)
                };
                fit::fit(&self.cfg, window)
            })
            .await
    }

    pub fn config(&self) -> &CompletionConfig {
        &self.cfg
    }

    pub fn enabled_for(&self, language_id: &str) -> bool {
        self.cfg.languages.is_empty() || self.cfg.languages.iter().any(|l| l == language_id)
    }

    /// Complete at `place`. Dropping the future cancels the provider call (the stream closes).
    pub async fn complete(&self, place: Place) -> Result<Suggestion, NoSuggestion> {
        let started = Instant::now();
        if !self.enabled_for(&place.language_id) {
            return Err(NoSuggestion::Language);
        }
        let doc = place.doc.as_str().to_string();
        let budgets = self.fitted().await;
        let w = &place.window.within(budgets.prefix, budgets.suffix);
        let cached = self.lock_cache().get(&doc, &w.prefix, &w.suffix);
        if let Some(text) = cached {
            return Ok(Suggestion {
                text,
                from_cache: true,
            });
        }
        if self.paused() {
            return Err(NoSuggestion::Paused);
        }
        let ticket = self.flights.begin(&doc);
        let debounce = match place.trigger {
            Trigger::Automatic => Duration::from_millis(self.cfg.debounce_ms),
            Trigger::Invoked => Duration::ZERO,
        };
        // A zero sleep would still wait for the timer's next millisecond tick.
        let header = if debounce.is_zero() {
            self.header(&place).await
        } else {
            tokio::join!(self.header(&place), tokio::time::sleep(debounce)).0
        };
        if ticket.token.is_cancelled() {
            return Err(NoSuggestion::Superseded);
        }
        let req = FimRequest {
            header,
            prefix: w.prefix.clone(),
            suffix: w.suffix.clone(),
            max_tokens: budgets.max_tokens,
            single_line: w.mid_line(),
            file_name: place.doc.file_name().to_string(),
        };
        let mut guard = UsageGuard::new(self);
        let out = self.provider.call(&req, &ticket.token).await;
        let out = match out {
            Ok(out) => out,
            Err(CallError::Cancelled) => return Err(NoSuggestion::Superseded),
            Err(CallError::RateLimited(pause)) => {
                guard.finish(&FimOutput::default(), usage::Outcome::Error);
                *self.paused_until.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some(Instant::now() + pause);
                return Err(NoSuggestion::Failed(format!(
                    "the completion server is rate limiting; completions pause for {}s",
                    pause.as_secs().max(1)
                )));
            }
            Err(CallError::Failed(e)) => {
                guard.finish(&FimOutput::default(), usage::Outcome::Error);
                return Err(NoSuggestion::Failed(e));
            }
        };
        let text = shape::shape(&out.text, &w.line_rest, &w.suffix, w.mid_line());
        if text.trim().is_empty() {
            guard.finish(&out, usage::Outcome::Empty);
            return Err(NoSuggestion::Empty);
        }
        guard.finish(&out, usage::Outcome::Shown);
        self.lock_cache().put(&doc, &w.prefix, &w.suffix, &text);
        log_own_time(started, &out);
        Ok(Suggestion {
            text,
            from_cache: false,
        })
    }

    /// The header for this place: standing preferences and definitions in reach.
    pub async fn header(&self, place: &Place) -> String {
        let (standing, reach) = tokio::join!(
            self.standing.get(),
            self.reach.get(&place.doc, place.window.line)
        );
        context::header(
            &place.language_id,
            &standing,
            &reach,
            self.budgets().context,
        )
    }

    fn paused(&self) -> bool {
        let mut p = self.paused_until.lock().unwrap_or_else(|e| e.into_inner());
        match *p {
            Some(until) if Instant::now() < until => true,
            Some(_) => {
                *p = None;
                false
            }
            None => false,
        }
    }

    fn lock_cache(&self) -> std::sync::MutexGuard<'_, cache::Cache> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Calls in flight now (one per document at most).
    pub fn in_flight(&self) -> usize {
        self.flights.len()
    }
}

/// Mira's own time on a call, for the budget in docs/benchmarks.md (the completion bench reads
/// it with `MIRA_LOG=mira::complete::timing=debug`): from the request to the HTTP client,
/// and from the answer's last byte read to the suggestion.
fn log_own_time(started: Instant, out: &FimOutput) {
    let (Some(sent), Some(read)) = (out.sent, out.read) else {
        return;
    };
    tracing::debug!(
        target: "mira::complete::timing",
        to_call_us = sent.saturating_duration_since(started).as_micros() as u64,
        after_read_us = read.elapsed().as_micros() as u64,
        "completion served"
    );
}

/// Records the call when it ends; a call dropped midway (superseded, `$/cancelRequest`)
/// is recorded as cancelled.
struct UsageGuard<'a> {
    completer: &'a Completer,
    done: bool,
}

impl<'a> UsageGuard<'a> {
    fn new(completer: &'a Completer) -> Self {
        UsageGuard {
            completer,
            done: false,
        }
    }

    fn finish(&mut self, out: &FimOutput, outcome: usage::Outcome) {
        self.done = true;
        self.record(out, outcome);
    }

    fn record(&self, out: &FimOutput, outcome: usage::Outcome) {
        let Some(store) = &self.completer.store else {
            return;
        };
        let p = &self.completer.provider;
        usage::record(
            store,
            usage::Call {
                provider: p.name.to_string(),
                model: p.model.clone(),
                input_tokens: out.usage.input_tokens,
                output_tokens: out.usage.output_tokens,
                cost_usd: p.cost(&out.usage),
                outcome,
            },
        );
    }
}

impl Drop for UsageGuard<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.record(&FimOutput::default(), usage::Outcome::Cancelled);
        }
    }
}
