//! The command line: parse arguments, call the library, print. No business logic here.

mod agent;
mod chat;
mod context;
mod doctor;
mod edits;
mod index;
mod mcp;
mod memory;
mod models;
pub mod pipe;
mod project_index;
mod terminal;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

use mira::session::{OpenError, Workspace};
use tokio::runtime::Runtime;

#[derive(Parser)]
#[command(
    name = "mira",
    version,
    about = "One persistent coding assistant for every editor, as a language server",
    long_about = "Mira is a language server: editors start `mira lsp` and talk to it over stdio.\n\
                  The other subcommands use the same store (one SQLite file, $MIRA_HOME/mira.db) \
                  from the terminal.",
    after_help = "Exit codes: 0 ok, 1 failure, 2 usage or configuration error.\n\
                  Configuration: ~/.config/mira/config.toml < <project>/.mira/project.toml < \
                  environment (MIRA_HOME, MIRA_PROVIDER, MIRA_MODEL, MIRA_BASE_URL, MIRA_LOG) < editor settings."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the language server on stdin/stdout (this is what editors start)
    Lsp,
    /// Serve memory, goals, tasks and the code index over MCP on stdin/stdout (for agents
    /// such as Claude Code: `claude mcp add mira -- mira mcp`)
    Mcp,
    /// Check the configuration (with the source of every value), the project, the database
    Doctor {
        /// The directory whose project to check (default: the current directory)
        path: Option<PathBuf>,
    },
    /// The models the provider's server has (Ollama, llama.cpp, LM Studio, vLLM, OpenAI, …)
    /// and the context window Mira uses for the configured one
    Models {
        /// Print JSON ({base_url, model, window, models})
        #[arg(long)]
        json: bool,
    },
    /// Index the project's source files (only what changed since the last run)
    Index {
        /// A directory inside the project (default: the current directory)
        path: Option<PathBuf>,
    },
    /// Find symbols by name (fuzzy: exact > prefix > word starts > subsequence)
    Symbols {
        query: String,
        /// Only this kind (function, method, class, struct, interface, enum, constant, …)
        #[arg(long)]
        kind: Option<String>,
        /// Print JSON instead of a table
        #[arg(long)]
        json: bool,
        /// At most this many results
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// A directory inside the project (default: the current directory)
        #[arg(long)]
        path: Option<PathBuf>,
    },
    /// Remember a fact, preference, decision or correction (global unless --project)
    Remember(memory::RememberArgs),
    /// Search your memories
    Recall(memory::RecallArgs),
    /// Forget a memory (kept, never recalled; --restore undoes it)
    Forget(memory::ForgetArgs),
    /// List memories (newest first)
    Memories(memory::MemoriesArgs),
    /// Goals and their milestones (default: list)
    Goals {
        #[command(subcommand)]
        command: Option<memory::GoalsCommand>,
    },
    /// Tasks (default: list open ones)
    Tasks {
        #[command(subcommand)]
        command: Option<memory::TasksCommand>,
    },
    /// Ask Mira in the one global conversation; the answer streams to stdout
    Ask {
        /// The question (several words are joined)
        #[arg(required = true)]
        question: Vec<String>,
        /// Apply file edits without asking (otherwise each diff is confirmed)
        #[arg(long, short = 'y')]
        yes: bool,
        /// Reasoning effort for this question: none, low, medium, high, xhigh (default: auto)
        #[arg(long)]
        effort: Option<String>,
        /// Print the context sections (token counts, what was cut) to stderr first
        #[arg(long)]
        show_context: bool,
    },
    /// The terminal REPL on the same global conversation (slash commands: /help)
    Chat(chat::ChatArgs),
    /// Show exactly what Mira would send the model for a question, section by section
    Context {
        #[arg(required = true)]
        question: Vec<String>,
        /// Print JSON (sections with token counts and text, and the system prompt)
        #[arg(long)]
        json: bool,
    },
    /// Search the project's code by meaning or name (run `mira index` first)
    Search {
        #[arg(required = true)]
        query: Vec<String>,
        /// Print JSON (one array of hits)
        #[arg(long)]
        json: bool,
        /// At most this many results
        #[arg(long, short = 'n', default_value_t = 10)]
        limit: usize,
    },
    /// Show the latest turns of the conversation
    History {
        #[arg(long, short = 'n', default_value_t = 10)]
        limit: usize,
    },
    /// Tokens and cost per provider and model
    Usage {
        /// How many days back
        #[arg(long, default_value_t = 30)]
        days: u32,
    },
}

/// A command that did not succeed: its exit code, and what to tell the user.
#[derive(Debug)]
pub struct CliError {
    code: u8,
    /// `None`: the command has said why already.
    message: Option<String>,
}

impl CliError {
    /// Bad input or configuration: exit code 2.
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError {
            code: 2,
            message: Some(message.into()),
        }
    }

    /// Anything else: exit code 1.
    pub fn failure(message: impl Into<String>) -> CliError {
        CliError {
            code: 1,
            message: Some(message.into()),
        }
    }

    /// Says the message (`mira: …` on stderr) and gives the exit code.
    pub fn report(self) -> ExitCode {
        if let Some(m) = &self.message {
            eprintln!("mira: {m}");
        }
        ExitCode::from(self.code)
    }
}

impl From<OpenError> for CliError {
    fn from(e: OpenError) -> CliError {
        CliError {
            code: e.class.code(),
            message: Some(e.message),
        }
    }
}

/// The one way a command opens the project: around `path`, else the current directory,
/// through `session::Workspace::open`. Unknown configuration keys are warned about.
pub(crate) fn open(path: Option<PathBuf>) -> Result<Workspace, CliError> {
    let start = match path {
        Some(p) if !p.exists() => {
            return Err(CliError::usage(format!("{} does not exist", p.display())));
        }
        Some(p) => p,
        None => std::env::current_dir()
            .map_err(|e| CliError::failure(format!("cannot read the current directory: {e}")))?,
    };
    let ws = Workspace::open(&start)?;
    for u in &ws.loaded.unknown {
        eprintln!("mira: warning: {u} (ignored)");
    }
    Ok(ws)
}

/// What every command returns: its exit code, or why it failed.
type CliResult = Result<ExitCode, CliError>;

/// Parses the arguments and runs the command on the one async runtime.
pub fn run() -> CliResult {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help/version to stdout with exit 0, usage errors to stderr with 2.
            let _ = e.print();
            return Ok(ExitCode::from(if e.use_stderr() { 2 } else { 0 }));
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::failure(format!("cannot start the async runtime: {e}")))?;
    let rt = &runtime;
    let result = match cli.command {
        Command::Lsp => lsp(rt),
        Command::Mcp => mcp::mcp(rt),
        Command::Doctor { path } => doctor::run(rt, path),
        Command::Models { json } => models::models(rt, json),
        Command::Index { path } => index::index(rt, path),
        Command::Symbols {
            query,
            kind,
            json,
            limit,
            path,
        } => index::symbols(query, kind, json, limit, path),
        Command::Remember(args) => memory::remember(rt, args),
        Command::Recall(args) => memory::recall(rt, args),
        Command::Forget(args) => memory::forget(rt, args),
        Command::Memories(args) => memory::memories(rt, args),
        Command::Goals { command } => memory::goals(rt, command),
        Command::Tasks { command } => memory::tasks(rt, command),
        Command::Ask {
            question,
            yes,
            effort,
            show_context,
        } => agent::ask(rt, question, yes, effort, show_context),
        Command::Chat(args) => chat::chat(rt, args),
        Command::Context { question, json } => context::context(rt, question, json),
        Command::Search { query, json, limit } => context::search(rt, query, json, limit),
        Command::History { limit } => agent::history(limit),
        Command::Usage { days } => agent::usage(days),
    };
    // Background work (watchers, turns, the embedding worker) must not keep the process alive.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    result
}

fn lsp(runtime: &Runtime) -> CliResult {
    let options = mira::lsp::ServeOptions::from_process();
    let _guard = crate::logging::init_lsp(&options.env, "mira lsp");
    let outcome = runtime.block_on(mira::lsp::serve_stdio(options));
    tracing::info!(clean = outcome.clean, "language server stopped");
    Ok(ExitCode::from(outcome.exit_code() as u8))
}
