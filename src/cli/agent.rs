//! `mira ask`, `mira history`, `mira usage`: the same global conversation from the terminal.

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::project_index::ProjectIndex;
use crate::cli::edits;
use futures::future::BoxFuture;
use mira::agent::context::SectionReport;
use mira::agent::conversation::{self, MessageKind};
use mira::agent::{
    Agent, Ask, EditOutcome, FileEdit, TurnEvent, TurnHost, TurnStatus, new_turn_id,
};
use mira::llm::Effort;
use mira::memory::MemoryService;
use mira::session::Workspace;
use std::process::ExitCode;
use tokio::runtime::Runtime;

use super::{CliError, CliResult};
use mira::store::Store;
use tokio_util::sync::CancellationToken;

/// The memory service of the CLI: the configured embedder (a local model loads here), so
/// context recall and the model's memory tools match `mira recall`.
pub(crate) fn memory_service(cx: &Workspace) -> Result<MemoryService, CliError> {
    Ok(cx.memory()?)
}

/// The agent every CLI turn (and `mira context`) uses: configuration plus memory.
pub(crate) fn build_agent(cx: &Workspace) -> Result<Agent, CliError> {
    Ok(cx
        .loaded
        .agent(cx.store.clone())
        .with_memory(memory_service(cx)?))
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
        let stop = Arc::new(AtomicBool::new(false));
        let reader = stop.clone();
        // Restored (to the answer's echo-off) when this returns, before the turn goes on.
        let _echo = super::terminal::Echo::on();
        let mut read =
            tokio::task::spawn_blocking(move || read_line_unless(libc::STDIN_FILENO, &reader));
        tokio::select! {
            line = &mut read => line
                .ok()
                .flatten()
                .is_some_and(|l| matches!(l.trim(), "y" | "Y" | "yes")),
            _ = tokio::signal::ctrl_c() => {
                stop.store(true, Ordering::SeqCst);
                // The reader stops within one poll (100 ms). Until it has, the REPL's line
                // editor must not read the terminal beside it: keys typed at the next prompt
                // went to whichever read woke first, and a `mira chat` lost them.
                let _ = read.await;
                eprintln!("\n  not applied");
                false
            }
        }
    })
}

/// One line from `fd`, or `None` once `stop` is set. Polled, so nothing is read after
/// `stop` (a line typed then belongs to the next prompt), and read a byte at a time, so
/// nothing past the line is taken from the line editor that reads the terminal next.
fn read_line_unless(fd: std::os::fd::RawFd, stop: &AtomicBool) -> Option<String> {
    let mut line = Vec::new();
    loop {
        if stop.load(Ordering::SeqCst) {
            return None;
        }
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll(2) on one pollfd on the stack.
        let ready = unsafe { libc::poll(&mut p, 1, 100) };
        if ready < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return None;
        }
        if ready <= 0 || stop.load(Ordering::SeqCst) {
            continue;
        }
        let mut byte = 0u8;
        // SAFETY: read(2) of one byte into a byte on the stack.
        let n = unsafe { libc::read(fd, (&raw mut byte).cast(), 1) };
        match n {
            1 if byte == b'\n' => break,
            1 => line.push(byte),
            0 => break,
            _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
            _ => return None,
        }
    }
    Some(String::from_utf8_lossy(&line).into_owned())
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

pub fn ask(
    runtime: &Runtime,
    question: Vec<String>,
    yes: bool,
    effort: Option<String>,
    show_context: bool,
) -> CliResult {
    let question = question.join(" ");
    if question.trim().is_empty() {
        return Err(CliError::usage(
            "nothing to ask; usage: mira ask \"why does the parser drop comments?\"",
        ));
    }
    let effort = effort
        .map(|e| e.parse::<Effort>())
        .transpose()
        .map_err(CliError::usage)?;
    let cx = super::open(None)?;
    let project = cx.project_info();
    let agent = build_agent(&cx)?;
    if let Err(e) = agent.provider() {
        return Err(CliError::usage(e.to_string()));
    }
    let index = ProjectIndex::start(&cx, project.id);
    let agent = agent.with_index(index.handle.clone());
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
        let (_, sections) = runtime
            .block_on(agent.preview(&ask))
            .map_err(CliError::failure)?;
        print_sections(&sections);
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
        TurnStatus::Completed => Ok(ExitCode::SUCCESS),
        _ => Err(CliError::failure(
            outcome
                .error
                .as_deref()
                .unwrap_or("the turn did not complete"),
        )),
    }
}

pub fn history(limit: usize) -> CliResult {
    print_history(&super::open(None)?.store, limit)?;
    Ok(ExitCode::SUCCESS)
}

/// The latest turns, oldest first (`mira history`, `/history` in `mira chat`).
pub(crate) fn print_history(store: &Store, limit: usize) -> Result<(), CliError> {
    let turns = store
        .read(|c| conversation::history(c, limit, None))
        .map_err(|e| CliError::failure(e.to_string()))?;
    if turns.is_empty() {
        println!(
            "No conversation yet. Start one with `mira chat`, `mira ask \"…\"` or mira.ask in your editor."
        );
        return Ok(());
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
    Ok(())
}

pub fn usage(days: u32) -> CliResult {
    print_usage(&super::open(None)?.store, days)?;
    Ok(ExitCode::SUCCESS)
}

/// Tokens and cost per provider and model (`mira usage`, `/usage` in `mira chat`).
pub(crate) fn print_usage(store: &Store, days: u32) -> Result<(), CliError> {
    let since = conversation::now_ms() - i64::from(days) * 86_400_000;
    let rows = store
        .read(|c| conversation::usage(c, since))
        .map_err(|e| CliError::failure(e.to_string()))?;
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
fn completion_usage(store: &mira::store::Store, since: i64) -> Result<(), CliError> {
    let rows = store
        .read(|c| mira::complete::usage::usage(c, since))
        .map_err(|e| CliError::failure(e.to_string()))?;
    println!("Completions");
    if rows.is_empty() {
        println!("  no completions");
        return Ok(());
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::read_line_unless;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::sync::atomic::AtomicBool;

    fn pipe() -> (OwnedFd, std::fs::File) {
        let mut fds = [0; 2];
        // SAFETY: pipe(2) fills the two descriptors, which are then owned here.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: both are fresh descriptors owned by nothing else.
        unsafe {
            (
                OwnedFd::from_raw_fd(fds[0]),
                std::fs::File::from_raw_fd(fds[1]),
            )
        }
    }

    fn rest(fd: &OwnedFd) -> String {
        let mut buf = [0u8; 64];
        // SAFETY: read(2) into a buffer on the stack, of its length.
        let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        String::from_utf8_lossy(&buf[..n.max(0) as usize]).into_owned()
    }

    /// The answer's line is read and nothing after it: what follows is the next prompt's.
    #[test]
    fn a_confirmation_reads_its_line_and_not_the_next() {
        use std::io::Write;
        let (r, mut w) = pipe();
        w.write_all(b"y\n/remember next\n").unwrap();
        let line = read_line_unless(r.as_raw_fd(), &AtomicBool::new(false));
        assert_eq!(line.as_deref(), Some("y"));
        assert_eq!(rest(&r), "/remember next\n");
    }

    /// Once cancelled (Ctrl+C), a line typed next is left where the line editor reads it,
    /// even when it is already waiting.
    #[test]
    fn a_cancelled_confirmation_takes_nothing() {
        use std::io::Write;
        let (r, mut w) = pipe();
        w.write_all(b"/remember typed after Ctrl+C\n").unwrap();
        assert_eq!(
            read_line_unless(r.as_raw_fd(), &AtomicBool::new(true)),
            None
        );
        assert_eq!(rest(&r), "/remember typed after Ctrl+C\n");

        // Cancelled while it waits, with the line arriving in the same poll: it still leaves
        // the line (it used to read it, then block in a read nothing would end).
        let (r, mut w) = pipe();
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let (fd, flag) = (r.as_raw_fd(), stop.clone());
        let reader = std::thread::spawn(move || read_line_unless(fd, &flag));
        std::thread::sleep(std::time::Duration::from_millis(30));
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        w.write_all(b"zzz\n").unwrap();
        assert_eq!(reader.join().unwrap(), None);
        assert_eq!(rest(&r), "zzz\n");
    }
}
