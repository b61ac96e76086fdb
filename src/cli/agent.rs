//! `mira ask`, `mira history`, `mira usage`: the same global conversation from the terminal.

use std::io::{IsTerminal, Write};
use std::sync::Arc;

use super::project_index::ProjectIndex;
use crate::cli::edits;
use futures::future::BoxFuture;
use mira::agent::context::SectionReport;
use mira::agent::conversation::{self, MessageKind};
use mira::agent::{
    Agent, Ask, EditOutcome, FileEdit, TurnEvent, TurnHost, TurnStatus, new_turn_id,
};
use mira::config::{self, ConfigInputs, Loaded};
use mira::embed::Embedder;
use mira::llm::Effort;
use mira::memory::MemoryService;
use mira::session;
use mira::store::Store;
use tokio_util::sync::CancellationToken;

pub(crate) struct Context {
    pub loaded: Loaded,
    pub store: Store,
    pub project: mira::project::Project,
}

pub(crate) fn open() -> Result<Context, (i32, String)> {
    let cwd = std::env::current_dir()
        .map_err(|e| (1, format!("cannot read the current directory: {e}")))?;
    let project = mira::project::detect(&cwd);
    let loaded =
        config::load(&ConfigInputs::from_process(Some(project.root.clone()))).map_err(|e| {
            (
                2,
                format!("{e}\nRun `mira doctor` to see the effective configuration."),
            )
        })?;
    for u in &loaded.unknown {
        eprintln!("mira: warning: {u} (ignored)");
    }
    let store = Store::open(&loaded.database_path()).map_err(|e| (1, e.to_string()))?;
    Ok(Context {
        loaded,
        store,
        project,
    })
}

/// The memory service of the CLI: the configured embedder (a local model loads here), so
/// context recall and the model's memory tools match `mira recall`.
pub(crate) fn memory_service(cx: &Context) -> Result<MemoryService, (i32, String)> {
    let memory = &cx.loaded.config.memory;
    let embedder = Embedder::from_config(&memory.embedder, cx.loaded.keys.openai.as_ref())
        .map_err(|e| (2, e.to_string()))?;
    Ok(MemoryService::new(
        cx.store.clone(),
        embedder,
        memory.recall_weights(),
    ))
}

/// The agent every CLI turn (and `mira context`) uses: configuration plus memory.
pub(crate) fn build_agent(cx: &Context) -> Result<Agent, (i32, String)> {
    Ok(Agent::from_config(cx.store.clone(), &cx.loaded).with_memory(memory_service(cx)?))
}

/// Prints the sections of the context: name, tokens, what was cut, and the text.
pub(crate) fn print_sections(sections: &[SectionReport]) {
    for s in sections {
        let cut = if s.truncated { " (cut to budget)" } else { "" };
        let note = s
            .note
            .as_deref()
            .map(|n| format!(" — {n}"))
            .unwrap_or_default();
        eprintln!("── {} · {} tokens{cut}{note}", s.name, s.tokens);
        if !s.text.trim().is_empty() {
            eprintln!("{}", s.text.trim_end());
        }
    }
    let total: usize = sections.iter().map(|s| s.tokens).sum();
    eprintln!("── total {total} tokens\n");
}

pub(crate) fn fail((code, message): (i32, String)) -> i32 {
    eprintln!("mira: {message}");
    code
}

/// Prints the answer as it streams; tool activity and questions go to stderr so stdout is
/// just the answer (pipe-friendly). `mira ask` and `mira chat` both show turns through it.
pub(crate) struct CliHost {
    yes: bool,
    interactive: bool,
}

impl CliHost {
    /// `yes`: apply edits without asking; `interactive`: a terminal can answer questions.
    pub(crate) fn new(yes: bool, interactive: bool) -> CliHost {
        CliHost { yes, interactive }
    }
}

/// Asks a yes/no question on the terminal. Ctrl+C answers no at once (the turn is being
/// cancelled): the read gives up without taking the user's next line from stdin.
fn confirm(question: String) -> BoxFuture<'static, bool> {
    Box::pin(async move {
        eprint!("{question} [y/N] ");
        let _ = std::io::stderr().flush();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let reader = stop.clone();
        // Restored (to the answer's echo-off) when this returns, before the turn goes on.
        let _echo = super::terminal::Echo::on();
        let read = tokio::task::spawn_blocking(move || read_line_unless(&reader));
        tokio::select! {
            line = read => line
                .ok()
                .flatten()
                .is_some_and(|l| matches!(l.trim(), "y" | "Y" | "yes")),
            _ = tokio::signal::ctrl_c() => {
                stop.store(true, std::sync::atomic::Ordering::SeqCst);
                eprintln!("\n  not applied");
                false
            }
        }
    })
}

/// One line of stdin, or `None` once `stop` is set (polled, so nothing is read after).
fn read_line_unless(stop: &std::sync::atomic::AtomicBool) -> Option<String> {
    loop {
        if stop.load(std::sync::atomic::Ordering::SeqCst) {
            return None;
        }
        let mut fd = libc::pollfd {
            fd: libc::STDIN_FILENO,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll(2) on one pollfd on the stack.
        let ready = unsafe { libc::poll(&mut fd, 1, 100) };
        if ready > 0 {
            let mut line = String::new();
            return std::io::stdin().read_line(&mut line).ok().map(|_| line);
        }
        if ready < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return None;
        }
    }
}

impl TurnHost for CliHost {
    fn event(&self, event: TurnEvent) {
        match event {
            TurnEvent::Text(t) => {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(t.as_bytes());
                let _ = out.flush();
            }
            TurnEvent::ToolCall { summary, .. } => eprintln!("\n  → {summary}"),
            TurnEvent::ToolResult {
                ok: false, summary, ..
            } => eprintln!("  ✗ {summary}"),
            _ => {}
        }
    }

    fn apply_edit(&self, edit: FileEdit) -> BoxFuture<'_, EditOutcome> {
        Box::pin(async move {
            eprintln!("\n{}", edit.diff.trim_end());
            let ok = if self.yes {
                true
            } else if self.interactive {
                confirm(format!("Apply this change to {}?", edit.path.display())).await
            } else {
                return EditOutcome::Rejected(
                    "not confirmed; run `mira ask --yes` to apply edits without asking".into(),
                );
            };
            if !ok {
                return EditOutcome::Rejected("the user declined".into());
            }
            let outcome = tokio::task::spawn_blocking(move || edits::write_if_unchanged(&edit))
                .await
                .unwrap_or_else(|e| EditOutcome::Rejected(e.to_string()));
            if outcome == EditOutcome::Applied {
                eprintln!("  ✓ applied");
            }
            outcome
        })
    }

    fn approve(&self, question: String) -> BoxFuture<'_, bool> {
        if self.interactive {
            confirm(question)
        } else {
            Box::pin(async { false })
        }
    }
}

pub fn ask(question: Vec<String>, yes: bool, effort: Option<String>, show_context: bool) -> i32 {
    let question = question.join(" ");
    if question.trim().is_empty() {
        eprintln!("mira: nothing to ask; usage: mira ask \"why does the parser drop comments?\"");
        return 2;
    }
    let effort = match effort.map(|e| e.parse::<Effort>()).transpose() {
        Ok(e) => e,
        Err(e) => return fail((2, e)),
    };
    let cx = match open() {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    let project = session::project_info(&cx.store, &cx.project);
    let agent = match build_agent(&cx) {
        Ok(a) => a,
        Err(e) => return fail(e),
    };
    if let Err(e) = agent.provider() {
        return fail((2, e.to_string()));
    }
    let index = ProjectIndex::start(&cx, project.id);
    let agent = agent.with_index(index.handle.clone());
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail((1, format!("cannot start the async runtime: {e}"))),
    };
    let host = CliHost::new(yes, std::io::stdin().is_terminal());
    let ask = Ask {
        turn: new_turn_id(),
        question,
        project,
        editor: None,
        effort,
        source: "cli",
    };
    let agent = Arc::new(agent);
    if show_context {
        match runtime.block_on(agent.preview(&ask)) {
            Ok((_, sections)) => print_sections(&sections),
            Err(e) => return fail((1, e)),
        }
    }
    if let Some(note) = index.note() {
        eprintln!("mira: {note}");
    }
    let outcome = runtime.block_on(async {
        let cancel = CancellationToken::new();
        let c = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                c.cancel();
            }
        });
        agent.run(ask, &host, &cancel).await
    });
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    if !outcome.text.ends_with('\n') {
        println!();
    }
    let local = agent
        .provider()
        .is_ok_and(|p| p.settings().is_free_local(&p.settings().model));
    let cost = match outcome.cost_usd {
        _ if local => "free (local)".to_string(),
        Some(c) => format!("${c:.4}"),
        None => "cost unknown (no price for this model)".to_string(),
    };
    let u = outcome.usage;
    eprintln!(
        "\n— {} · {} tokens in ({} cached), {} out · {cost}",
        outcome.status.as_str(),
        u.input_tokens,
        u.cached_input_tokens,
        u.output_tokens
    );
    match outcome.status {
        TurnStatus::Completed => 0,
        _ => {
            eprintln!(
                "mira: {}",
                outcome
                    .error
                    .as_deref()
                    .unwrap_or("the turn did not complete")
            );
            1
        }
    }
}

pub fn history(limit: usize) -> i32 {
    match open() {
        Ok(cx) => print_history(&cx.store, limit),
        Err(e) => fail(e),
    }
}

/// The latest turns, oldest first (`mira history`, `/history` in `mira chat`).
pub(crate) fn print_history(store: &Store, limit: usize) -> i32 {
    let turns = match store.read(|c| conversation::history(c, limit, None)) {
        Ok(t) => t,
        Err(e) => return fail((1, e.to_string())),
    };
    if turns.is_empty() {
        println!(
            "No conversation yet. Start one with `mira chat`, `mira ask \"…\"` or mira.ask in your editor."
        );
        return 0;
    }
    for t in turns {
        let cost = t
            .cost_usd
            .map(|c| format!(" · ${c:.4}"))
            .unwrap_or_default();
        println!(
            "── {} · {} · {}/{}{cost}",
            t.turn,
            t.status.as_str(),
            t.provider,
            t.model
        );
        for e in &t.entries {
            match e.kind {
                MessageKind::User => println!("you:  {}", e.text.trim()),
                MessageKind::Assistant => println!("mira: {}", e.text.trim()),
                MessageKind::ToolCall => println!(
                    "      → {}",
                    e.summary.as_deref().or(e.tool.as_deref()).unwrap_or("tool")
                ),
                _ => {}
            }
        }
        if let Some(err) = &t.error {
            println!("      ({err})");
        }
        let answered = t.entries.iter().any(|e| e.kind == MessageKind::Assistant);
        if !answered && t.status != mira::agent::TurnStatus::Running {
            println!("      (no answer; this question is not sent to the model again)");
        }
        println!();
    }
    0
}

pub fn usage(days: u32) -> i32 {
    match open() {
        Ok(cx) => print_usage(&cx.store, days),
        Err(e) => fail(e),
    }
}

/// Tokens and cost per provider and model (`mira usage`, `/usage` in `mira chat`).
pub(crate) fn print_usage(store: &Store, days: u32) -> i32 {
    let since = conversation::now_ms() - i64::from(days) * 86_400_000;
    let rows = match store.read(|c| conversation::usage(c, since)) {
        Ok(r) => r,
        Err(e) => return fail((1, e.to_string())),
    };
    match days {
        1 => println!("Usage over the last day"),
        n => println!("Usage over the last {n} days"),
    }
    if rows.is_empty() {
        println!("  no turns");
        return completion_usage(store, since);
    }
    println!(
        "  {:<12} {:<28} {:>6} {:>12} {:>12} {:>10} {:>10}",
        "provider", "model", "turns", "input", "cached", "output", "cost"
    );
    let mut total = 0.0;
    for r in &rows {
        total += r.cost_usd;
        let unpriced = if r.unpriced_turns > 0 {
            format!(" ({} unpriced)", r.unpriced_turns)
        } else {
            String::new()
        };
        println!(
            "  {:<12} {:<28} {:>6} {:>12} {:>12} {:>10} {:>10}{unpriced}",
            r.provider,
            r.model,
            r.turns,
            r.input_tokens,
            r.cached_tokens,
            r.output_tokens,
            format!("${:.4}", r.cost_usd)
        );
    }
    println!("  total cost ${total:.4}");
    completion_usage(store, since)
}

/// Inline completions, apart from chat turns: calls, how many were shown or cancelled.
fn completion_usage(store: &mira::store::Store, since: i64) -> i32 {
    let rows = match store.read(|c| mira::complete::usage::usage(c, since)) {
        Ok(r) => r,
        Err(e) => return fail((1, e.to_string())),
    };
    println!("Completions");
    if rows.is_empty() {
        println!("  no completions");
        return 0;
    }
    println!(
        "  {:<20} {:<28} {:>6} {:>6} {:>9} {:>12} {:>10} {:>10}",
        "provider", "model", "calls", "shown", "cancelled", "input", "output", "cost"
    );
    for r in &rows {
        println!(
            "  {:<20} {:<28} {:>6} {:>6} {:>9} {:>12} {:>10} {:>10}",
            r.provider,
            r.model,
            r.calls,
            r.shown,
            r.cancelled,
            r.input_tokens,
            r.output_tokens,
            format!("${:.4}", r.cost_usd)
        );
    }
    0
}
