//! One turn of the global conversation: store the question, assemble context, then loop —
//! call the model, run the tools it asks for, feed the results back — until it answers, a
//! limit stops it, the user cancels, or the provider fails. Every item is stored as it
//! happens, so a crash or a broken stream loses nothing that was already said.

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::config::{AgentConfig, BashPolicy};
use crate::llm::{
    ApiKeys, Client, Completion, Delta, Effort, Item, LlmError, NoProvider, Previous,
    ProviderConfig, ProviderSettings, Request, ToolCall, ToolResult, ToolSpec, Usage, Window,
};
use crate::store::{Store, StoreError};

use super::context::{
    self, Assembled, Budgets, ContextInput, ContextSources, EditorContext, Embedded, ProjectInfo,
};
use super::conversation::{self, NewTurn, ToolCallRecord, ToolOutcome, TurnEnd, TurnStatus};
use super::host::{TurnEvent, TurnHost, TurnOutcome};
use super::knowledge::Knowledge;
use super::router;
use super::summarize;
use super::tools::{FileGuard, Registry, ToolContext, ToolError};
use crate::index::IndexHandle;
use crate::memory::MemoryService;
use crate::redact::Redactor;

#[derive(Clone, Debug)]
pub struct Limits {
    pub max_iterations: u32,
    pub max_tool_calls: u32,
    /// Stop before another model call once the turn has cost this much (USD).
    pub cost_cap_usd: f64,
}

#[derive(Clone, Debug)]
pub struct AgentSettings {
    pub limits: Limits,
    pub bash: BashPolicy,
    /// `None`: the router picks per question.
    pub effort: Option<Effort>,
    pub budgets: Budgets,
    pub summarize_after_tokens: usize,
    pub artifact_bytes: usize,
    /// `agent.allow_sensitive`: file tools may open sensitive files (content still redacted).
    pub allow_sensitive: bool,
}

impl Default for AgentSettings {
    fn default() -> Self {
        AgentSettings::from_config(&AgentConfig::default())
    }
}

impl AgentSettings {
    pub fn from_config(c: &AgentConfig) -> AgentSettings {
        AgentSettings {
            limits: Limits {
                max_iterations: c.max_iterations.max(1),
                max_tool_calls: c.max_tool_calls,
                cost_cap_usd: c.cost_cap_usd,
            },
            bash: c.bash,
            effort: c.effort,
            budgets: Budgets {
                total: c.context_tokens,
                ..Budgets::default()
            },
            summarize_after_tokens: c.summarize_after_tokens,
            artifact_bytes: c.artifact_bytes.max(1024),
            allow_sensitive: c.allow_sensitive,
        }
    }
}

/// One question to the conversation.
#[derive(Clone, Debug)]
pub struct Ask {
    pub turn: String,
    pub question: String,
    pub project: ProjectInfo,
    pub editor: Option<EditorContext>,
    /// Per-request override of the reasoning effort.
    pub effort: Option<Effort>,
    /// Who asked: "cli", "lsp".
    pub source: &'static str,
}

pub struct Agent {
    store: Store,
    provider: Result<Client, NoProvider>,
    settings: AgentSettings,
    tools: Registry,
    sources: Arc<dyn ContextSources>,
    /// The one memory front end: context recall and the model's memory tools.
    memory: MemoryService,
    /// The live index (editor faces): symbol tools see unsaved text. `None`: SQLite by name.
    index: Option<IndexHandle>,
    /// The rules plus the configured API keys, applied to anything stored or sent.
    redactor: Redactor,
    /// Said after the instructions of every turn (`mira chat --ask-only`: which tools are gone).
    note: Option<String>,
}

/// A fresh turn id: unique across processes sharing the store (time, pid, counter).
pub fn new_turn_id() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("t{:x}-{:x}-{n}", conversation::now_ms(), std::process::id())
}

impl Agent {
    pub fn new(
        store: Store,
        provider: Result<ProviderSettings, NoProvider>,
        settings: AgentSettings,
    ) -> Agent {
        let mut redactor = Redactor::default();
        let provider = provider.and_then(|p| {
            if let Some(key) = p.api_key.clone() {
                redactor.add(key);
            }
            Client::new(p).map_err(|e| NoProvider::Invalid(e.to_string()))
        });
        let memory = MemoryService::new(store.clone(), None, Default::default());
        Agent {
            store,
            provider,
            settings,
            tools: Registry::standard(),
            sources: Arc::new(Knowledge::new(memory.clone())),
            memory,
            index: None,
            redactor,
            note: None,
        }
    }

    /// From the sections it reads: `[provider]` and its keys, and `[agent]` (limits, budgets,
    /// bash policy). `config::Loaded::agent` passes them from the effective configuration.
    pub fn configured(
        store: Store,
        provider: &ProviderConfig,
        keys: &ApiKeys,
        config: &AgentConfig,
    ) -> Agent {
        let mut agent = Agent::new(
            store,
            ProviderSettings::resolve(provider, keys),
            AgentSettings::from_config(config),
        );
        for key in keys.secrets() {
            agent.redactor.add(key);
        }
        agent
    }

    pub fn with_sources(mut self, sources: Arc<dyn ContextSources>) -> Agent {
        self.sources = sources;
        self
    }

    /// Use this memory service (its embedder, its recall weights) for context and tools.
    pub fn with_memory(mut self, memory: MemoryService) -> Agent {
        self.sources = Arc::new(Knowledge::new(memory.clone()));
        self.memory = memory;
        self
    }

    /// Symbol tools read this live index (the editor's unsaved text wins).
    pub fn with_index(mut self, index: IndexHandle) -> Agent {
        self.index = Some(index);
        self
    }

    /// A standing note for the model, appended to the system prompt of every turn (it stays
    /// the same across turns, so the cached prefix does too).
    pub fn with_note(mut self, note: impl Into<String>) -> Agent {
        self.note = Some(note.into());
        self
    }

    fn system_prompt(&self, assembled: &str) -> String {
        match &self.note {
            Some(note) => format!("{assembled}\n\n# Note for this session\n{note}"),
            None => assembled.to_string(),
        }
    }

    pub fn memory(&self) -> &MemoryService {
        &self.memory
    }

    pub fn tools_mut(&mut self) -> &mut Registry {
        &mut self.tools
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn provider(&self) -> Result<&Client, &NoProvider> {
        self.provider.as_ref()
    }

    fn redact(&self, text: &str) -> String {
        self.redactor.redact(text).into_owned()
    }

    /// Tool-call arguments: each JSON string value is redacted as the text it decodes to.
    fn redact_args(&self, text: &str) -> String {
        self.redactor.redact_json(text).into_owned()
    }

    async fn db<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Store) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, String> {
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || f(&store))
            .await
            .map_err(|e| format!("internal error: {e}"))?
            .map_err(|e| format!("database error: {e}"))
    }

    /// Exactly what the first model call of a turn would send for this question, without
    /// storing or sending anything (`mira/context`, `mira context`, `mira ask --show-context`).
    pub async fn preview(
        &self,
        ask: &Ask,
    ) -> Result<(Request, Vec<context::SectionReport>), String> {
        let question = self.redact(&ask.question);
        let specs = self.tools.specs();
        let embedded = self.sources.embed(&question).await;
        let (project, editor) = (ask.project.clone(), ask.editor.clone());
        let (budgets, window) = self.budgets().await;
        let sources = self.sources.clone();
        let (q, sp) = (question.clone(), specs.clone());
        let assembled = self
            .db(move |store| {
                store.read(|c| {
                    context::assemble(
                        c,
                        &ContextInput {
                            project: &project,
                            question: &q,
                            editor: editor.as_ref(),
                            tools: &sp,
                            sources: sources.as_ref(),
                            embedded: &embedded,
                            current_turn: None,
                        },
                        &budgets,
                    )
                })
            })
            .await?;
        if let Some(too_long) = assembled.too_long {
            return Err(too_long.message(&window.unwrap_or(Window::ASSUMED)));
        }
        let effort = self.effort_for(ask, &question);
        let known = self.redactor.known();
        let (request, sections) = self.first_request(assembled, specs, effort);
        // The client redacts every request once more; the preview shows the same bytes.
        Ok((request.redacted(&known).into_owned(), sections))
    }

    /// A turn's first model call from its assembled context: the preview shows what the turn
    /// sends because both build it here.
    fn first_request(
        &self,
        assembled: Assembled,
        specs: Vec<ToolSpec>,
        effort: Effort,
    ) -> (Request, Vec<context::SectionReport>) {
        let mut items = assembled.history;
        items.push(Item::User(assembled.user));
        let request = Request {
            system: self.system_prompt(&assembled.system),
            items,
            tools: if assembled.with_tools {
                specs
            } else {
                Vec::new()
            },
            effort: Some(effort),
        };
        (request, assembled.sections)
    }

    /// The budgets for this provider's model: its window (learned from the server once, or
    /// configured, or known) within `agent.context_tokens`.
    async fn budgets(&self) -> (Budgets, Option<Window>) {
        match &self.provider {
            Ok(client) => {
                let window = client.window().await;
                let s = client.settings();
                // o200k is OpenAI's own tokenizer; every other model counts more tokens.
                let exact = s.kind == crate::llm::ProviderKind::OpenAi
                    || s.flavour == crate::llm::ChatFlavour::OpenAi;
                let budgets = self
                    .settings
                    .budgets
                    .for_window(&window, s.max_output_tokens, exact);
                (budgets, Some(window))
            }
            Err(_) => (self.settings.budgets, None),
        }
    }

    /// The model's window as Mira will use it (`None`: no provider).
    pub async fn window(&self) -> Option<Window> {
        self.budgets().await.1
    }

    fn effort_for(&self, ask: &Ask, question: &str) -> Effort {
        ask.effort
            .or(self.settings.effort)
            .unwrap_or_else(|| router::route(question, ask.editor.as_ref()))
    }

    /// Run a turn to its end. Never panics on provider or tool trouble: the outcome says what
    /// happened and what to do, and the host saw every step as it happened.
    pub async fn run(
        &self,
        ask: Ask,
        host: &dyn TurnHost,
        cancel: &CancellationToken,
    ) -> TurnOutcome {
        host.event(TurnEvent::Started {
            turn: ask.turn.clone(),
            question: self.redact(&ask.question),
        });
        let outcome = match &self.provider {
            Err(e) => TurnOutcome {
                turn: ask.turn.clone(),
                status: TurnStatus::Failed,
                text: String::new(),
                usage: Usage::default(),
                cost_usd: None,
                error: Some(e.to_string()),
            },
            Ok(client) => self.run_with(client, &ask, host, cancel).await,
        };
        host.event(TurnEvent::Finished(outcome.clone()));
        if outcome.status == TurnStatus::Completed
            && let Ok(client) = &self.provider
        {
            // A small window summarises sooner: what is summarised must fit in one call.
            let after = self
                .settings
                .summarize_after_tokens
                .min(self.budgets().await.0.total / 2);
            match summarize::maybe_summarise(&self.store, client, after, cancel).await {
                Ok(Some((first, last))) => tracing::info!(
                    first,
                    last,
                    "summarised the oldest part of the conversation"
                ),
                Ok(None) => {}
                Err(e) => tracing::warn!("could not summarise the conversation: {e}"),
            }
        }
        outcome
    }

    async fn run_with(
        &self,
        client: &Client,
        ask: &Ask,
        host: &dyn TurnHost,
        cancel: &CancellationToken,
    ) -> TurnOutcome {
        let mut out = TurnOutcome {
            turn: ask.turn.clone(),
            status: TurnStatus::Failed,
            text: String::new(),
            usage: Usage::default(),
            cost_usd: None,
            error: None,
        };
        let question = self.redact(&ask.question);
        let effort = self.effort_for(ask, &question);
        let specs = self.tools.specs();
        let (row, assembled, window) =
            match self.begin(client, ask, &question, effort, &specs).await {
                Ok(begun) => begun,
                Err(e) => {
                    out.error = Some(e);
                    return out;
                }
            };
        if let Some(too_long) = assembled.too_long {
            // The question is stored (nothing the user typed is lost); no model is called.
            let error = too_long.message(&window);
            out.error = Some(error.clone());
            self.end_unanswered(client, ask, row, error).await;
            return out;
        }
        let (request, _) = self.first_request(assembled, specs, effort);
        let files = FileGuard::load(&ask.project.root, self.settings.allow_sensitive);
        let cx = ToolContext {
            root: &ask.project.root,
            store: &self.store,
            project: ask.project.id,
            memory: &self.memory,
            index: self.index.as_ref(),
            turn: row,
            host,
            bash: self.settings.bash,
            cancel,
            files: &files,
        };
        let mut turn = Turn {
            agent: self,
            client,
            host,
            cancel,
            row,
            request,
            out,
            model_calls: 0,
            tool_calls: 0,
            cost: 0.0,
            priced: true,
            model: client.settings().model.clone(),
            previous: None,
        };
        let status = turn.run(&cx).await;
        turn.finish(status, &ask.turn).await
    }

    /// Stores the question and reads the latest conversation in one trip off the runtime,
    /// after embedding the question (network or model work, never inside the snapshot) and
    /// learning the model's window (asked once per client). Returns the turn's row.
    async fn begin(
        &self,
        client: &Client,
        ask: &Ask,
        question: &str,
        effort: Effort,
        specs: &[ToolSpec],
    ) -> Result<(i64, Assembled, Window), String> {
        let (embedded, (budgets, window)): (Embedded, _) =
            tokio::join!(self.sources.embed(question), self.budgets());
        let window = window.unwrap_or(Window::ASSUMED);
        let settings = client.settings();
        let public = ask.turn.clone();
        let project = ask.project.clone();
        let editor = ask.editor.clone();
        let sources = self.sources.clone();
        let (provider, model, source) = (settings.kind, settings.model.clone(), ask.source);
        let question = question.to_string();
        let specs = specs.to_vec();
        let (row, assembled) = self
            .db(move |store| {
                let turn = store.write(|tx| {
                    conversation::close_abandoned(tx, &conversation::process_alive)?;
                    let turn = conversation::begin_turn(
                        tx,
                        &NewTurn {
                            public_id: &public,
                            project_id: project.id,
                            source,
                            provider,
                            model: &model,
                            effort: Some(effort),
                        },
                    )?;
                    conversation::append(tx, turn, &Item::User(question.clone()), false)?;
                    Ok::<_, StoreError>(turn)
                })?;
                let assembled = store.read(|c| {
                    context::assemble(
                        c,
                        &ContextInput {
                            project: &project,
                            question: &question,
                            editor: editor.as_ref(),
                            tools: &specs,
                            sources: sources.as_ref(),
                            embedded: &embedded,
                            current_turn: Some(turn),
                        },
                        &budgets,
                    )
                })?;
                Ok((turn, assembled))
            })
            .await?;
        Ok((row, assembled, window))
    }

    /// Ends a turn whose question could not be sent: failed, free, no model call.
    async fn end_unanswered(&self, client: &Client, ask: &Ask, row: i64, error: String) {
        let model = client.settings().model.clone();
        let r = self
            .db(move |s| {
                s.write(|tx| {
                    let end = TurnEnd {
                        status: TurnStatus::Failed,
                        error: Some(&error),
                        usage: Usage::default(),
                        cost_usd: Some(0.0),
                        model_calls: 0,
                        model: &model,
                    };
                    conversation::finish_turn(tx, row, &end).map_err(StoreError::from)
                })
            })
            .await;
        if let Err(e) = r {
            tracing::error!("could not record the end of turn {}: {e}", ask.turn);
        }
    }

    /// Run one tool call and store its result. Bad arguments, unknown tools, refusals and
    /// tool failures all become error results the model can react to; only a database
    /// failure ends the turn.
    async fn call_tool(
        &self,
        call: &ToolCall,
        cx: &ToolContext<'_>,
        turn: i64,
    ) -> Result<ToolResult, String> {
        let started = Instant::now();
        let parsed: Result<Value, ToolError> = if call.arguments.trim().is_empty() {
            Ok(Value::Object(Default::default()))
        } else {
            match serde_json::from_str::<Value>(&call.arguments) {
                Ok(v @ Value::Object(_)) => Ok(v),
                Ok(_) => Err(ToolError::InvalidArgs(
                    "the arguments must be one JSON object".into(),
                )),
                Err(e) => Err(ToolError::InvalidArgs(format!(
                    "the arguments are not valid JSON ({e}); send the call again with one complete JSON object"
                ))),
            }
        };
        let tool = self.tools.get(&call.name);
        let summary = match (&parsed, tool) {
            (Ok(args), Some(t)) => t.describe(args),
            _ => call.name.clone(),
        };
        cx.host.event(TurnEvent::ToolCall {
            name: call.name.clone(),
            summary: summary.clone(),
        });
        let result = match (parsed, tool) {
            (_, None) => Err(ToolError::InvalidArgs(format!(
                "there is no tool `{}`; available: {}",
                call.name,
                self.tools.names().collect::<Vec<_>>().join(", ")
            ))),
            (Err(e), _) => Err(e),
            (Ok(args), Some(t)) => t.run(args, cx).await,
        };
        let (outcome, content, line) = match result {
            Ok(o) => (ToolOutcome::Ok, o.text, o.summary),
            Err(e @ ToolError::Refused(_)) => {
                (ToolOutcome::Refused, format!("error: {e}"), e.to_string())
            }
            Err(e) => (ToolOutcome::Error, format!("error: {e}"), e.to_string()),
        };
        let content = self.redact(&content);
        let line = self.redact(&line);
        let ok = outcome == ToolOutcome::Ok;
        // Large output: keep it whole as an artifact, send a preview and how to page it.
        let (content, artifact) = if content.len() > self.settings.artifact_bytes {
            let label = format!("{} {}", call.name, summary);
            let whole = content.clone();
            let id = self
                .db(move |s| {
                    s.write(|tx| {
                        conversation::store_artifact(tx, turn, &label, &whole)
                            .map_err(StoreError::from)
                    })
                })
                .await?;
            let mut end = (self.settings.artifact_bytes / 4).min(content.len());
            while !content.is_char_boundary(end) {
                end -= 1;
            }
            let end = content[..end].rfind('\n').map_or(end, |n| n + 1);
            let preview = format!(
                "{}\n… [output is {} bytes; stored as artifact #{id}. Read more with read_artifact {{\"id\": {id}, \"offset\": {end}}}]",
                &content[..end],
                content.len()
            );
            (preview, Some(id))
        } else {
            (content, None)
        };
        let result = ToolResult {
            call_id: call.id.clone(),
            content,
            is_error: !ok,
        };
        self.store_result(
            turn,
            call,
            &result,
            outcome,
            &line,
            artifact,
            started.elapsed().as_millis() as u64,
        )
        .await?;
        cx.host.event(TurnEvent::ToolResult {
            name: call.name.clone(),
            ok,
            summary: line,
        });
        Ok(result)
    }

    #[allow(clippy::too_many_arguments)]
    async fn store_result(
        &self,
        turn: i64,
        call: &ToolCall,
        result: &ToolResult,
        outcome: ToolOutcome,
        summary: &str,
        artifact: Option<i64>,
        duration_ms: u64,
    ) -> Result<(), String> {
        let (call, result, summary) = (call.clone(), result.clone(), summary.to_string());
        let arguments = self.redact_args(&call.arguments);
        self.db(move |s| {
            s.write(|tx| {
                conversation::append(tx, turn, &Item::ToolResult(result.clone()), false)?;
                conversation::record_tool_call(
                    tx,
                    turn,
                    &ToolCallRecord {
                        call_id: &call.id,
                        name: &call.name,
                        arguments: &arguments,
                        outcome,
                        summary: &summary,
                        output_bytes: result.content.len(),
                        artifact_id: artifact,
                        duration_ms,
                    },
                )?;
                Ok::<_, StoreError>(())
            })
        })
        .await
    }
}

/// A turn under way: what it sends, what it has spent against its limits, and the outcome so
/// far. Each step that stops the turn says why in `out.error` and returns the status.
struct Turn<'a> {
    agent: &'a Agent,
    client: &'a Client,
    host: &'a dyn TurnHost,
    cancel: &'a CancellationToken,
    /// The turn's row.
    row: i64,
    /// What the next model call sends: the history grows by each answer and tool result.
    request: Request,
    out: TurnOutcome,
    model_calls: u32,
    tool_calls: u32,
    cost: f64,
    /// Every call so far had a known price.
    priced: bool,
    /// The model that answered last.
    model: String,
    /// Within the tool loop the chain head is always ours: with `responses_store`, each call
    /// after the first sends only what is new since the previous response.
    previous: Option<Previous>,
}

impl Turn<'_> {
    /// Calls the model and runs the tools it asks for, again and again, until it answers or
    /// something stops the turn.
    async fn run(&mut self, cx: &ToolContext<'_>) -> TurnStatus {
        loop {
            if let Some(stop) = self.over_limit() {
                return stop;
            }
            let completion = match self.call_model().await {
                Ok(c) => c,
                Err(stop) => return stop,
            };
            let calls = match self.take(completion).await {
                Ok(calls) => calls,
                Err(stop) => return stop,
            };
            if calls.is_empty() {
                return TurnStatus::Completed;
            }
            if let Err(stop) = self.run_tools(calls, cx).await {
                return stop;
            }
        }
    }

    /// Checked before each model call.
    fn over_limit(&mut self) -> Option<TurnStatus> {
        let limits = &self.agent.settings.limits;
        let model_calls = self.model_calls;
        if model_calls >= limits.max_iterations {
            self.out.error = Some(format!(
                "stopped after {model_calls} model calls (agent.max_iterations); ask again to let Mira continue"
            ));
            return Some(TurnStatus::Limited);
        }
        let cost = self.cost;
        if cost >= limits.cost_cap_usd {
            self.out.error = Some(format!(
                "stopped at ${cost:.4}, the per-turn cost cap (agent.cost_cap_usd = {}); ask again to continue",
                limits.cost_cap_usd
            ));
            return Some(TurnStatus::Limited);
        }
        None
    }

    /// One model call, its text streamed to the host. A failed call keeps what was said.
    async fn call_model(&mut self) -> Result<Completion, TurnStatus> {
        let req = &self.request;
        self.model_calls += 1;
        let host = self.host;
        let text = &mut self.out.text;
        let mut on_delta = |d: Delta| match d {
            Delta::Text(t) => {
                text.push_str(&t);
                host.event(TurnEvent::Text(t));
            }
            Delta::Reasoning(r) => host.event(TurnEvent::Reasoning(r)),
            Delta::ToolCallStarted { .. } => {}
        };
        let result = self
            .client
            .complete_after(req, self.previous.as_ref(), &mut on_delta, self.cancel)
            .await;
        let f = match result {
            Ok(c) => return Ok(c),
            Err(f) => f,
        };
        self.out.usage.add(&f.usage);
        let cancelled = matches!(f.error, LlmError::Cancelled);
        let message = if cancelled {
            "cancelled".to_string()
        } else {
            f.error.to_string()
        };
        if !f.partial_text.is_empty() {
            let kept = format!(
                "{}\n\n[interrupted: {message}]",
                self.agent.redact(&f.partial_text)
            );
            let row = self.row;
            let _ = self
                .agent
                .db(move |s| {
                    s.write(|tx| {
                        conversation::append(tx, row, &Item::Assistant(kept), true)
                            .map_err(StoreError::from)
                    })
                })
                .await;
        }
        self.out.error = Some(message);
        Err(if cancelled {
            TurnStatus::Cancelled
        } else {
            TurnStatus::Failed
        })
    }

    /// Takes in the model's answer: its usage and cost, what it said (redacted and stored),
    /// and the tool calls it made.
    async fn take(&mut self, completion: Completion) -> Result<Vec<ToolCall>, TurnStatus> {
        self.out.usage.add(&completion.usage);
        self.model = completion.model.clone();
        match self.client.settings().cost(&self.model, &completion.usage) {
            Some(c) => self.cost += c,
            None => self.priced = false,
        }
        let chain_from = self
            .client
            .chains(&completion)
            .then(|| completion.response_id.clone())
            .flatten();
        let agent = self.agent;
        let produced: Vec<Item> = completion
            .items
            .into_iter()
            .map(|i| match i {
                Item::Assistant(t) => Item::Assistant(agent.redact(&t)),
                Item::ToolCall(mut c) => {
                    // Replacements keep JSON valid: the marker has no quotes or backslashes.
                    c.arguments = agent.redact_args(&c.arguments);
                    Item::ToolCall(c)
                }
                Item::Reasoning(mut r) => {
                    r.text = agent.redact(&r.text);
                    Item::Reasoning(r)
                }
                other => other,
            })
            .collect();
        let (stored, row) = (produced.clone(), self.row);
        if let Err(e) = agent
            .db(move |s| {
                s.write(|tx| {
                    for i in &stored {
                        conversation::append(tx, row, i, false)?;
                    }
                    Ok::<_, StoreError>(())
                })
            })
            .await
        {
            self.out.error = Some(e);
            return Err(TurnStatus::Failed);
        }
        let calls: Vec<ToolCall> = produced
            .iter()
            .filter_map(|i| match i {
                Item::ToolCall(c) => Some(c.clone()),
                _ => None,
            })
            .collect();
        self.request.items.extend(produced);
        self.previous = chain_from.map(|response_id| Previous {
            response_id,
            items: self.request.items.len(),
        });
        Ok(calls)
    }

    /// Runs the calls in order, up to the turn's tool-call limit.
    async fn run_tools(
        &mut self,
        calls: Vec<ToolCall>,
        cx: &ToolContext<'_>,
    ) -> Result<(), TurnStatus> {
        let max_tool_calls = self.agent.settings.limits.max_tool_calls;
        let mut limited = false;
        for call in calls {
            // Every call gets a result, even past the limit, or the next request is invalid.
            let result = if limited || self.tool_calls >= max_tool_calls {
                limited = true;
                let r = ToolResult {
                    call_id: call.id.clone(),
                    content: "error: not run: the per-turn tool-call limit was reached".into(),
                    is_error: true,
                };
                let _ = self
                    .agent
                    .store_result(
                        self.row,
                        &call,
                        &r,
                        ToolOutcome::Refused,
                        "not run (limit)",
                        None,
                        0,
                    )
                    .await;
                r
            } else {
                self.tool_calls += 1;
                match self.agent.call_tool(&call, cx, self.row).await {
                    Ok(r) => r,
                    Err(e) => {
                        self.out.error = Some(e);
                        return Err(TurnStatus::Failed);
                    }
                }
            };
            self.request.items.push(Item::ToolResult(result));
        }
        if limited {
            self.out.error = Some(format!(
                "stopped after {} tool calls (agent.max_tool_calls); ask again to let Mira continue",
                self.tool_calls
            ));
            return Err(TurnStatus::Limited);
        }
        if self.cancel.is_cancelled() {
            self.out.error = Some("cancelled".into());
            return Err(TurnStatus::Cancelled);
        }
        Ok(())
    }

    /// Records how the turn ended, its error redacted like everything else stored.
    async fn finish(mut self, status: TurnStatus, public: &str) -> TurnOutcome {
        self.out.status = status;
        self.out.cost_usd = self.priced.then_some(self.cost);
        let end_error = self.out.error.as_deref().map(|e| self.agent.redact(e));
        self.out.error = end_error.clone();
        let (usage, cost_usd, model_calls) = (self.out.usage, self.out.cost_usd, self.model_calls);
        let (model, row) = (std::mem::take(&mut self.model), self.row);
        let r = self
            .agent
            .db(move |s| {
                s.write(|tx| {
                    conversation::finish_turn(
                        tx,
                        row,
                        &TurnEnd {
                            status,
                            error: end_error.as_deref(),
                            usage,
                            cost_usd,
                            model_calls,
                            model: &model,
                        },
                    )
                    .map_err(StoreError::from)
                })
            })
            .await;
        if let Err(e) = r {
            tracing::error!("could not record the end of turn {public}: {e}");
        }
        self.out
    }
}
