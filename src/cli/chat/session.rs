//! One `mira chat` session: the agent, the project, the effort override and what the session
//! spent; runs a question as a turn (Ctrl+C cancels it) and a slash command.

use std::path::Path;
use std::sync::Arc;

use mira::agent::{Agent, Ask, ProjectInfo, TurnOutcome, TurnStatus, new_turn_id};
use mira::llm::{Effort, Usage};
use mira::memory::{MemoryKind, MemoryService, ProjectRef, RememberRequest};
use mira::store::Store;
use tokio::runtime::Handle;
use tokio_util::sync::CancellationToken;

use super::slash::{self, Slash};
use crate::cli::agent::{CliHost, print_history, print_usage};
use crate::cli::project_index::ProjectIndex;

/// What the loop does after a line.
#[derive(PartialEq)]
pub enum Next {
    Continue,
    Quit,
}

pub struct Session {
    /// The CLI's one runtime.
    pub runtime: Handle,
    pub agent: Arc<Agent>,
    pub store: Store,
    pub memory: MemoryService,
    pub project: ProjectInfo,
    /// The project's live index, built in the background.
    pub index: ProjectIndex,
    pub host: CliHost,
    pub effort: Option<Effort>,
    pub ask_only: bool,
    /// `agent.cost_warn_usd`.
    pub cost_warn_usd: f64,
    pub spent: Spent,
    /// The missing price and the no-provider help are said once a session.
    pub said_unpriced: bool,
    pub said_no_provider: bool,
}

#[derive(Default)]
pub struct Spent {
    pub turns: u32,
    pub usage: Usage,
    pub cost_usd: f64,
    /// Turns whose model had no price.
    pub unpriced: u32,
}

impl Session {
    /// A slash command or a question.
    pub fn line(&mut self, line: &str) -> Next {
        let line = line.trim();
        if line.is_empty() {
            return Next::Continue;
        }
        if !line.starts_with('/') {
            self.ask(line.to_string());
            return Next::Continue;
        }
        match slash::parse(line) {
            Ok(cmd) => self.command(cmd),
            Err(e) => {
                eprintln!("mira: {e}");
                Next::Continue
            }
        }
    }

    /// The first line a user sees: where Mira is, which model answers, what it knows.
    pub fn banner(&self) -> String {
        let provider = match self.agent.provider() {
            Ok(c) => format!("{} · {}", c.settings().kind, c.settings().model),
            Err(_) => "no model yet (/status says how to set one)".into(),
        };
        let memories = self
            .runtime
            .block_on(self.memory.count_active(Some(self.scope())))
            .map_or_else(
                |_| "memories unavailable".into(),
                |n| format!("{n} memories"),
            );
        format!(
            "Mira · project {} · {provider} · {memories} · index {}",
            self.project.name,
            self.index.summary()
        )
    }

    /// One turn on the global conversation, streamed; Ctrl+C cancels it, not the session.
    pub fn ask(&mut self, question: String) {
        if let Some(note) = self.index.note() {
            eprintln!("mira: {note}");
        }
        let ask = Ask {
            turn: new_turn_id(),
            question,
            project: self.project.clone(),
            editor: None,
            effort: self.effort,
            source: "chat",
        };
        let (agent, host) = (self.agent.clone(), &self.host);
        // Type-ahead waits for the next prompt instead of landing inside the answer.
        let echo = crate::cli::terminal::Echo::off();
        let outcome = self.runtime.block_on(async {
            let cancel = CancellationToken::new();
            let turn = agent.run(ask, host, &cancel);
            tokio::pin!(turn);
            loop {
                tokio::select! {
                    outcome = &mut turn => break outcome,
                    signal = tokio::signal::ctrl_c() => {
                        if signal.is_err() {
                            break turn.await;
                        }
                        eprintln!("\n  ^C cancelling this answer…");
                        cancel.cancel();
                    }
                }
            }
        });
        drop(echo);
        self.report(&outcome);
    }

    fn report(&mut self, o: &TurnOutcome) {
        if !o.text.is_empty() && !o.text.ends_with('\n') {
            println!();
        }
        // A turn that never reached a model (no provider) cost nothing and is not counted.
        if o.status != TurnStatus::Failed || o.usage != Usage::default() {
            self.spent.turns += 1;
            self.spent.usage.add(&o.usage);
            match o.cost_usd {
                Some(c) => self.spent.cost_usd += c,
                None => self.spent.unpriced += 1,
            }
        }
        let cost = self.cost_label(o);
        match o.status {
            TurnStatus::Completed => eprintln!(
                "— {} tokens in ({} cached), {} out{cost}",
                o.usage.input_tokens, o.usage.cached_input_tokens, o.usage.output_tokens
            ),
            TurnStatus::Cancelled => eprintln!("— cancelled{cost}"),
            _ => self.failed(o),
        }
        if let Some(c) = o.cost_usd
            && c > self.cost_warn_usd
        {
            eprintln!(
                "mira: warning: that answer cost ${c:.2}, more than agent.cost_warn_usd \
                 (${:.2}); agent.cost_cap_usd stops a turn outright",
                self.cost_warn_usd
            );
        }
    }

    /// ` · $0.0012`, ` · free (local)`, or nothing: a missing price is said once a session,
    /// and a turn that used no tokens costs nothing worth a line.
    fn cost_label(&mut self, o: &TurnOutcome) -> String {
        if o.usage == Usage::default() {
            return String::new();
        }
        match (o.cost_usd, self.agent.provider()) {
            (_, Ok(p)) if p.settings().is_free_local(&p.settings().model) => {
                " · free (local)".into()
            }
            (Some(c), _) => format!(" · ${c:.4}"),
            (None, Ok(p)) if !self.said_unpriced => {
                self.said_unpriced = true;
                format!(
                    " · cost unknown: no price for {m} (set [provider.prices.\"{m}\"] in \
                     config.toml; said once)",
                    m = p.settings().model
                )
            }
            _ => String::new(),
        }
    }

    /// A failed turn's reason; the long no-provider help only the first time.
    fn failed(&mut self, o: &TurnOutcome) {
        let reason = o.error.as_deref().unwrap_or("the answer did not complete");
        if self.agent.provider().is_err() {
            if self.said_no_provider {
                eprintln!("mira: no model provider is set (see above, or run `mira doctor`)");
                return;
            }
            self.said_no_provider = true;
        }
        eprintln!("mira: {reason}");
    }

    fn scope(&self) -> ProjectRef {
        ProjectRef {
            root: self.project.root.clone(),
            name: self.project.name.clone(),
        }
    }

    fn command(&mut self, cmd: Slash) -> Next {
        let memory = self.memory.clone();
        let scope = Some(self.scope());
        match cmd {
            Slash::Quit => return Next::Quit,
            Slash::Help => println!("{}", slash::help()),
            Slash::Status => self.status(),
            Slash::Remember(text) => {
                let req = RememberRequest {
                    text,
                    kind: MemoryKind::Fact,
                    project_scoped: false,
                    corrects: None,
                    anchors: Vec::new(),
                };
                match self.runtime.block_on(memory.remember(req, scope)) {
                    Ok(r) => println!("{}", r.describe()),
                    Err(e) => eprintln!("mira: {e}"),
                }
            }
            Slash::Correct { text, corrects } => {
                let req = RememberRequest {
                    text,
                    kind: MemoryKind::Correction,
                    project_scoped: false,
                    corrects,
                    anchors: Vec::new(),
                };
                match self.runtime.block_on(memory.remember(req, scope)) {
                    Ok(r) => println!("{}", r.describe()),
                    Err(e) => eprintln!("mira: {e}"),
                }
            }
            Slash::Recall(query) => match self.runtime.block_on(memory.recall(&query, scope, 8)) {
                Ok(hits) if hits.is_empty() => println!("Nothing remembered about that."),
                Ok(hits) => {
                    for h in hits {
                        println!("#{} [{}] {}", h.memory.id, h.memory.kind, h.memory.body);
                    }
                }
                Err(e) => eprintln!("mira: {e}"),
            },
            Slash::Forget(id) => match self.runtime.block_on(memory.forget(id)) {
                Ok(m) => println!(
                    "Forgot #{}: {} (mira forget --restore {} undoes it)",
                    m.id, m.body, m.id
                ),
                Err(e) => eprintln!("mira: {e}"),
            },
            Slash::Goals => match self.runtime.block_on(memory.goals(scope, false)) {
                Ok(gs) if gs.is_empty() => println!("No active goals."),
                Ok(gs) => {
                    for g in gs {
                        println!(
                            "#{} [{} {} {}%] {}",
                            g.id, g.status, g.priority, g.progress, g.title
                        );
                    }
                }
                Err(e) => eprintln!("mira: {e}"),
            },
            Slash::Tasks => match self.runtime.block_on(memory.tasks(scope, None, false)) {
                Ok(ts) if ts.is_empty() => println!("No open tasks."),
                Ok(ts) => {
                    for t in ts {
                        println!("#{} [{} {}] {}", t.id, t.status, t.priority, t.title);
                    }
                }
                Err(e) => eprintln!("mira: {e}"),
            },
            Slash::History(n) => {
                if let Err(e) = print_history(&self.store, n) {
                    e.report();
                }
            }
            Slash::Usage => self.usage(),
            Slash::Effort(e) => {
                self.effort = e;
                match e {
                    Some(e) => println!("Reasoning effort {e} for the next questions."),
                    None => println!("Reasoning effort: automatic."),
                }
            }
            Slash::Switch(path) => self.switch(path.as_deref()),
        }
        Next::Continue
    }

    fn status(&self) {
        println!(
            "project   {} ({})",
            self.project.name,
            self.project.root.display()
        );
        match self.agent.provider() {
            Ok(c) => println!("provider  {} · {}", c.settings().kind, c.settings().model),
            Err(e) => println!(
                "provider  none: {} (`mira doctor` says how to set one)",
                e.to_string().lines().next().unwrap_or_default()
            ),
        }
        let effort = self.effort.map_or("auto".to_string(), |e| e.to_string());
        let mode = if self.ask_only {
            " · ask-only (no edits, writes or bash)"
        } else {
            ""
        };
        println!("effort    {effort}{mode}");
        println!("index     {}", self.index.summary());
        self.print_spent();
    }

    fn print_spent(&self) {
        let s = &self.spent;
        let unpriced = if s.unpriced > 0 {
            format!(" ({} unpriced)", s.unpriced)
        } else {
            String::new()
        };
        println!(
            "session   {} turns · {} tokens in ({} cached), {} out · ${:.4}{unpriced}",
            s.turns,
            s.usage.input_tokens,
            s.usage.cached_input_tokens,
            s.usage.output_tokens,
            s.cost_usd
        );
    }

    fn usage(&self) {
        self.print_spent();
        if let Err(e) = print_usage(&self.store, 1) {
            e.report();
        }
    }

    fn switch(&mut self, path: Option<&Path>) {
        let dir = match path {
            Some(p) => p.to_path_buf(),
            None => match std::env::current_dir() {
                Ok(d) => d,
                Err(e) => return eprintln!("mira: cannot read the current directory: {e}"),
            },
        };
        if !dir.is_dir() {
            return eprintln!("mira: {} is not a directory", dir.display());
        }
        let detected = mira::project::detect(&dir);
        self.project = mira::session::project_info(&self.store, &detected);
        println!(
            "Now in project {} ({}); the conversation stays the same.",
            self.project.name,
            self.project.root.display()
        );
    }
}
