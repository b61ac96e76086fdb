//! `mira chat`: the terminal REPL on the one global conversation — the same agent, turn and
//! `CliHost` as `mira ask`, the same `MemoryService` as `mira remember`. A terminal gets a
//! line editor (history in `$MIRA_HOME/chat_history`, Tab completes slash commands); a pipe
//! on stdin is read one question per line and answered plainly, for scripts.

mod line;
mod session;
mod slash;

use std::io::{BufRead, IsTerminal};
use std::sync::Arc;

use std::process::ExitCode;

use tokio::runtime::Runtime;

use super::agent::{CliHost, build_agent};
use super::open;
use super::project_index::ProjectIndex;
use super::{CliError, CliResult};
use line::{LineEditor, Read};
use session::{Next, Session, Spent};

/// The tools `--ask-only` takes away, and what the model is told about it.
const EDIT_TOOLS: [&str; 3] = ["edit_file", "write_file", "bash"];
const ASK_ONLY_NOTE: &str = "The user started this session in ask-only mode: you cannot change \
files or run commands (edit_file, write_file and bash are not available). Answer, explain and \
show proposed changes as code blocks or diffs the user can apply themselves.";

#[derive(clap::Args)]
pub struct ChatArgs {
    /// Apply file edits without asking (otherwise each diff is confirmed)
    #[arg(long, short = 'y')]
    yes: bool,
    /// No edit, write or bash tools (the model is told): questions and answers only
    #[arg(long)]
    ask_only: bool,
    /// Reasoning effort: none, low, medium, high, xhigh (default: auto; /effort changes it)
    #[arg(long)]
    effort: Option<String>,
}

pub fn chat(runtime: &Runtime, args: ChatArgs) -> CliResult {
    let effort = args
        .effort
        .map(|e| e.parse())
        .transpose()
        .map_err(CliError::usage)?;
    let cx = open(None)?;
    let project = cx.project_info();
    let index = ProjectIndex::start(&cx, project.id);
    let mut agent = build_agent(&cx)?.with_index(index.handle.clone());
    if args.ask_only {
        for tool in EDIT_TOOLS {
            agent.tools_mut().remove(tool);
        }
        agent = agent.with_note(ASK_ONLY_NOTE);
    }
    let no_provider = agent.provider().is_err();
    if let Err(e) = agent.provider() {
        // Slash commands still work; a question says so in one line.
        eprintln!("mira: {e}");
    }
    let terminal = std::io::stdin().is_terminal();
    let mut session = Session {
        runtime: runtime.handle().clone(),
        memory: agent.memory().clone(),
        agent: Arc::new(agent),
        project,
        index,
        store: cx.store.clone(),
        host: CliHost::new(args.yes, terminal),
        effort,
        ask_only: args.ask_only,
        cost_warn_usd: cx.loaded.config.agent.cost_warn_usd,
        spent: Spent::default(),
        said_unpriced: false,
        said_no_provider: no_provider,
    };
    if terminal {
        let history = cx.loaded.config.store.home.join("chat_history");
        repl(&mut session, history)
    } else {
        piped(&mut session)
    }
}

fn repl(session: &mut Session, history: std::path::PathBuf) -> CliResult {
    let mut editor = LineEditor::open(history).map_err(CliError::failure)?;
    eprintln!("{}", session.banner());
    eprintln!("/help for commands, Ctrl+C cancels an answer, Ctrl+D leaves");
    loop {
        match editor.read("mira> ") {
            Read::Line(line) => {
                editor.remember(&line);
                if session.line(&line) == Next::Quit {
                    return Ok(ExitCode::SUCCESS);
                }
            }
            Read::Interrupted => eprintln!("(Ctrl+D or /quit leaves)"),
            Read::Eof => return Ok(ExitCode::SUCCESS),
        }
    }
}

/// Not a terminal: one question (or slash command) per line; answers on stdout.
fn piped(session: &mut Session) -> CliResult {
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| CliError::failure(format!("cannot read stdin: {e}")))?;
        if session.line(&line) == Next::Quit {
            break;
        }
    }
    Ok(ExitCode::SUCCESS)
}
