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

pub fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help/version to stdout with exit 0, usage errors to stderr with 2.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let code = match cli.command {
        Command::Lsp => lsp(),
        Command::Mcp => mcp::mcp(),
        Command::Doctor { path } => doctor::run(path),
        Command::Models { json } => models::models(json),
        Command::Index { path } => index::index(path),
        Command::Symbols {
            query,
            kind,
            json,
            limit,
            path,
        } => index::symbols(query, kind, json, limit, path),
        Command::Remember(args) => memory::remember(args),
        Command::Recall(args) => memory::recall(args),
        Command::Forget(args) => memory::forget(args),
        Command::Memories(args) => memory::memories(args),
        Command::Goals { command } => memory::goals(command),
        Command::Tasks { command } => memory::tasks(command),
        Command::Ask {
            question,
            yes,
            effort,
            show_context,
        } => agent::ask(question, yes, effort, show_context),
        Command::Chat(args) => chat::chat(args),
        Command::Context { question, json } => context::context(question, json),
        Command::Search { query, json, limit } => context::search(query, json, limit),
        Command::History { limit } => agent::history(limit),
        Command::Usage { days } => agent::usage(days),
    };
    ExitCode::from(code as u8)
}

fn lsp() -> i32 {
    let options = mira::lsp::ServeOptions::from_process();
    let _guard = crate::logging::init_lsp(&options.env, "mira lsp");
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mira: cannot start the async runtime: {e}");
            return 1;
        }
    };
    let outcome = runtime.block_on(mira::lsp::serve_stdio(options));
    tracing::info!(clean = outcome.clean, "language server stopped");
    // Background work (watchers, turns) must not keep an editor-less process alive.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    outcome.exit_code()
}
