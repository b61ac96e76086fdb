//! `mira remember / recall / forget / memories / goals / tasks`: parse, call the memory
//! service, print. Exit codes: 0 ok, 1 failure, 2 bad input or configuration.

use std::io::Read;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use mira::memory::goals::{GoalStatus, GoalUpdate, Priority, TaskStatus, TaskUpdate};
use mira::memory::{
    ListFilter, Memory, MemoryError, MemoryKind, MemoryService, ProjectRef, RememberRequest, Scope,
    Status,
};
use mira::project::Project;
use std::process::ExitCode;
use tokio::runtime::Runtime;

use super::{CliError, CliResult};

/// How long `mira remember` waits for the new memory's embedding before leaving it to the
/// next process (recall works on full-text search meanwhile).
const CLI_EMBED_WAIT: std::time::Duration = std::time::Duration::from_secs(15);

#[derive(Args)]
pub struct RememberArgs {
    /// The text to remember (several words are joined with spaces; `-` reads stdin)
    #[arg(required_unless_present = "file")]
    text: Vec<String>,
    /// fact, preference, decision or correction
    #[arg(long, short, default_value = "fact", value_parser = parse_kind)]
    kind: MemoryKind,
    /// Only remember it inside the current project (default: everywhere)
    #[arg(long)]
    project: bool,
    /// The id of the memory this corrects; the old one is kept but never recalled again
    #[arg(long, value_name = "ID")]
    corrects: Option<i64>,
    /// Read the text from a file (UTF-8)
    #[arg(long, value_name = "PATH", conflicts_with = "text")]
    file: Option<PathBuf>,
    /// Anchor it to the function, method or type enclosing this place (`src/lib.rs:42`);
    /// it is flagged stale when that code changes
    #[arg(long, value_name = "PATH:LINE", value_parser = parse_place)]
    at: Option<(PathBuf, u32)>,
}

fn parse_place(s: &str) -> Result<(PathBuf, u32), String> {
    let (path, line) = s
        .rsplit_once(':')
        .ok_or_else(|| format!("`{s}` is not PATH:LINE (e.g. src/lib.rs:42)"))?;
    let line: u32 = line
        .parse()
        .map_err(|_| format!("`{line}` is not a line number (PATH:LINE, e.g. src/lib.rs:42)"))?;
    Ok((PathBuf::from(path), line))
}

#[derive(Args)]
pub struct RecallArgs {
    /// What to look for: a question, keywords or an identifier
    #[arg(required = true)]
    query: Vec<String>,
    #[arg(long, short = 'n', default_value_t = 10)]
    limit: usize,
    /// Print JSON (one array of hits)
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct ForgetArgs {
    /// The memory's id (as `mira memories` or `mira recall` shows it)
    id: i64,
    /// Undo an earlier forget
    #[arg(long)]
    restore: bool,
}

#[derive(Args)]
pub struct MemoriesArgs {
    /// Include superseded and forgotten memories
    #[arg(long)]
    all: bool,
    #[arg(long, value_parser = parse_kind)]
    kind: Option<MemoryKind>,
    #[arg(long, short = 'n', default_value_t = 50)]
    limit: usize,
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand)]
pub enum GoalsCommand {
    /// List goals (active and paused; --all for finished ones too)
    List {
        #[arg(long)]
        all: bool,
        #[arg(long)]
        json: bool,
    },
    /// Add a goal
    Add {
        title: String,
        #[arg(long, short, default_value = "")]
        description: String,
        #[arg(long, short, default_value = "normal", value_parser = parse::<Priority>)]
        priority: Priority,
        /// Only in the current project
        #[arg(long)]
        project: bool,
    },
    /// Change a goal
    Update {
        id: i64,
        #[arg(long)]
        title: Option<String>,
        #[arg(long)]
        description: Option<String>,
        #[arg(long, value_parser = parse::<GoalStatus>)]
        status: Option<GoalStatus>,
        #[arg(long, value_parser = parse::<Priority>)]
        priority: Option<Priority>,
        /// Percent, 0 to 100
        #[arg(long)]
        progress: Option<u8>,
    },
    /// Add a milestone to a goal
    Milestone { goal: i64, title: String },
    /// Mark a milestone done (--undo to reopen it)
    MilestoneDone {
        milestone: i64,
        #[arg(long)]
        undo: bool,
    },
}

#[derive(Subcommand)]
pub enum TasksCommand {
    /// List open tasks (--all for done and cancelled too)
    List {
        #[arg(long)]
        all: bool,
        #[arg(long)]
        goal: Option<i64>,
        #[arg(long)]
        json: bool,
    },
    /// Add a task
    Add {
        title: String,
        #[arg(long, short, default_value = "normal", value_parser = parse::<Priority>)]
        priority: Priority,
        /// The goal it serves
        #[arg(long)]
        goal: Option<i64>,
        /// Only in the current project
        #[arg(long)]
        project: bool,
    },
    /// Change a task
    Update {
        id: i64,
        #[arg(long)]
        title: Option<String>,
        #[arg(long, value_parser = parse::<TaskStatus>)]
        status: Option<TaskStatus>,
        #[arg(long, value_parser = parse::<Priority>)]
        priority: Option<Priority>,
        #[arg(long)]
        goal: Option<i64>,
    },
    /// Mark a task done
    Done { id: i64 },
}

fn parse_kind(s: &str) -> Result<MemoryKind, String> {
    s.parse().map_err(|e: MemoryError| e.to_string())
}

fn parse<T: std::str::FromStr<Err = MemoryError>>(s: &str) -> Result<T, String> {
    s.parse().map_err(|e: MemoryError| e.to_string())
}

/// What every memory command needs: the service, and the project of the current directory.
struct Ctx {
    service: MemoryService,
    project: Project,
}

impl Ctx {
    fn open() -> Result<Ctx, CliError> {
        let ws = super::open(None)?;
        Ok(Ctx {
            service: ws.memory()?,
            project: ws.project,
        })
    }

    fn project(&self) -> Option<ProjectRef> {
        Some(ProjectRef::from(&self.project))
    }
}

/// Bad input is the user's to fix (2); anything else is a failure (1).
fn fail(e: MemoryError) -> CliError {
    match e {
        MemoryError::Empty
        | MemoryError::TooLong { .. }
        | MemoryError::UnknownKind(_)
        | MemoryError::Invalid { .. } => CliError::usage(e.to_string()),
        _ => CliError::failure(e.to_string()),
    }
}

/// The text to remember from the arguments, stdin (`-`) or a file; invalid UTF-8 is refused
/// with the byte offset rather than silently replaced.
fn read_text(args: &RememberArgs) -> Result<String, CliError> {
    let (bytes, origin) = match (&args.file, args.text.as_slice()) {
        (Some(path), _) => (
            std::fs::read(path)
                .map_err(|e| CliError::failure(format!("cannot read {}: {e}", path.display())))?,
            path.display().to_string(),
        ),
        (None, [dash]) if dash == "-" => {
            let mut buf = Vec::new();
            std::io::stdin()
                .read_to_end(&mut buf)
                .map_err(|e| CliError::failure(format!("cannot read stdin: {e}")))?;
            (buf, "stdin".to_string())
        }
        (None, words) => return Ok(words.join(" ")),
    };
    String::from_utf8(bytes).map_err(|e| {
        CliError::usage(format!(
            "{origin} is not valid UTF-8 (first bad byte at offset {}); memories are text. \
             Convert it first, e.g. `iconv -f latin1 -t utf-8`",
            e.utf8_error().valid_up_to()
        ))
    })
}

fn scope_label(m: &Memory) -> &'static str {
    match m.scope {
        Scope::Global => "global",
        Scope::Project(_) => "project",
    }
}

fn one_line(s: &str, max: usize) -> String {
    mira::memory::memories::short(s, max)
}

pub fn remember(rt: &Runtime, args: RememberArgs) -> CliResult {
    let text = read_text(&args)?;
    // validate before opening anything: bad input never touches the store
    mira::memory::memories::validate_body(&text).map_err(fail)?;
    let ctx = Ctx::open()?;
    let mut anchors = Vec::new();
    if let Some((path, line)) = &args.at {
        match mira::index::offline::enclosing_on_disk(&ctx.project.root, path, *line) {
            Ok(a) => anchors.push(mira::memory::anchors::Anchor {
                path: a.path,
                symbol: a.symbol,
                content_hash: a.content_hash,
            }),
            Err(e) => return Err(CliError::usage(e.to_string())),
        }
    }
    let anchored = anchors
        .first()
        .map(|a| format!(" about {}::{}", a.path, a.symbol))
        .unwrap_or_default();
    let req = RememberRequest {
        text,
        kind: args.kind,
        project_scoped: args.project,
        corrects: args.corrects,
        anchors,
    };
    let service = ctx.service.clone();
    let project = ctx.project();
    rt.block_on(async move {
        let r = service.remember(req, project).await.map_err(fail)?;
        println!("{}{anchored}", r.describe());
        if service.embedder().is_some() {
            match tokio::time::timeout(CLI_EMBED_WAIT, service.embed_pending()).await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => eprintln!(
                    "mira: note: embedding deferred ({e}); recall uses full-text search until it succeeds"
                ),
                Err(_) => eprintln!("mira: note: embedding is slow; it continues next time"),
            }
        }
        Ok(ExitCode::SUCCESS)
    })
}

pub fn recall(rt: &Runtime, args: RecallArgs) -> CliResult {
    let ctx = Ctx::open()?;
    let query = args.query.join(" ");
    let hits = rt
        .block_on(ctx.service.recall(&query, ctx.project(), args.limit))
        .map_err(fail)?;
    if args.json {
        let s =
            serde_json::to_string_pretty(&hits).map_err(|e| CliError::failure(e.to_string()))?;
        println!("{s}");
        return Ok(ExitCode::SUCCESS);
    }
    if hits.is_empty() {
        eprintln!("No memories match `{query}`.");
        return Ok(ExitCode::SUCCESS);
    }
    let ids: Vec<i64> = hits.iter().map(|h| h.memory.id).collect();
    let anchors = ctx
        .service
        .store()
        .read(|c| {
            mira::memory::anchors::of_memories(c, &ids)
                .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
        })
        .unwrap_or_default();
    for h in &hits {
        let m = &h.memory;
        let stale = if m.stale {
            " [stale: the code changed]"
        } else {
            ""
        };
        let corrects = m
            .supersedes
            .map(|n| format!(" (corrects #{n})"))
            .unwrap_or_default();
        println!(
            "#{:<5} {:<10} {:<7} {}{corrects}{stale}",
            m.id,
            m.kind.as_str(),
            scope_label(m),
            one_line(&m.body, 100)
        );
        for a in anchors.get(&m.id).into_iter().flatten() {
            let state = match (a.stale_since, a.gone) {
                (None, _) => "",
                (Some(_), false) => " (stale: the code changed)",
                (Some(_), true) => " (stale: the symbol is gone)",
            };
            println!("       @ {}::{}{state}", a.anchor.path, a.anchor.symbol);
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn forget(rt: &Runtime, args: ForgetArgs) -> CliResult {
    let ctx = Ctx::open()?;
    let r = if args.restore {
        rt.block_on(ctx.service.restore(args.id))
    } else {
        rt.block_on(ctx.service.forget(args.id))
    };
    match r.map_err(fail)? {
        m if args.restore => {
            println!("Restored #{}: {}", m.id, one_line(&m.body, 80));
        }
        m => {
            println!(
                "Forgot #{}: {} (undo with `mira forget --restore {}`)",
                m.id,
                one_line(&m.body, 80),
                m.id
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn memories(rt: &Runtime, args: MemoriesArgs) -> CliResult {
    let ctx = Ctx::open()?;
    let filter = ListFilter {
        project: None,
        include_inactive: args.all,
        kind: args.kind,
        limit: args.limit,
        ..Default::default()
    };
    let list = rt
        .block_on(ctx.service.list(ctx.project(), filter))
        .map_err(fail)?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&list).unwrap_or_default()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if list.is_empty() {
        eprintln!("No memories yet. Add one with `mira remember \"…\"`.");
    }
    for m in &list {
        let status = match (m.status, m.superseded_by) {
            (Status::Active, _) if m.stale => " [stale]".to_string(),
            (Status::Active, _) => String::new(),
            (Status::Superseded, Some(n)) => format!(" [superseded by #{n}]"),
            (s, _) => format!(" [{s}]"),
        };
        println!(
            "#{:<5} {:<10} {:<7} {}{status}",
            m.id,
            m.kind.as_str(),
            scope_label(m),
            one_line(&m.body, 100)
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub fn goals(rt: &Runtime, cmd: Option<GoalsCommand>) -> CliResult {
    let ctx = Ctx::open()?;
    let s = &ctx.service;
    let project = ctx.project();
    let cmd = cmd.unwrap_or(GoalsCommand::List {
        all: false,
        json: false,
    });
    let result = rt.block_on(async {
        match cmd {
            GoalsCommand::List { all, json } => {
                let goals = s.goals(project, all).await?;
                if json {
                    println!(
                        "{}",
                        serde_json::to_string_pretty(&goals).unwrap_or_default()
                    );
                } else if goals.is_empty() {
                    eprintln!("No goals. Add one with `mira goals add \"…\"`.");
                }
                for g in goals.iter().filter(|_| !json) {
                    println!(
                        "#{:<4} [{}] {:>3}% {} ({}){}",
                        g.id,
                        g.status,
                        g.progress,
                        g.title,
                        g.priority,
                        if g.description.is_empty() {
                            String::new()
                        } else {
                            format!(" — {}", one_line(&g.description, 60))
                        }
                    );
                    for m in &g.milestones {
                        println!(
                            "       {} #{} {}",
                            if m.done { "[x]" } else { "[ ]" },
                            m.id,
                            m.title
                        );
                    }
                }
                Ok(())
            }
            GoalsCommand::Add {
                title,
                description,
                priority,
                project: scoped,
            } => {
                let g = s
                    .add_goal(project.filter(|_| scoped), title, description, priority)
                    .await?;
                println!("Added goal #{}: {}", g.id, g.title);
                Ok(())
            }
            GoalsCommand::Update {
                id,
                title,
                description,
                status,
                priority,
                progress,
            } => {
                let g = s
                    .update_goal(
                        id,
                        GoalUpdate {
                            title,
                            description,
                            status,
                            priority,
                            progress,
                        },
                    )
                    .await?;
                println!("Goal #{} [{}] {}% {}", g.id, g.status, g.progress, g.title);
                Ok(())
            }
            GoalsCommand::Milestone { goal, title } => {
                let g = s.add_milestone(goal, title).await?;
                let m = g.milestones.last().map_or(0, |m| m.id);
                println!(
                    "Added milestone #{m} to goal #{} ({}% done)",
                    g.id, g.progress
                );
                Ok(())
            }
            GoalsCommand::MilestoneDone { milestone, undo } => {
                let g = s.set_milestone_done(milestone, !undo).await?;
                println!("Goal #{} is {}% done", g.id, g.progress);
                Ok(())
            }
        }
    });
    result.map_err(fail)?;
    Ok(ExitCode::SUCCESS)
}

pub fn tasks(rt: &Runtime, cmd: Option<TasksCommand>) -> CliResult {
    let ctx = Ctx::open()?;
    let s = &ctx.service;
    let project = ctx.project();
    let cmd = cmd.unwrap_or(TasksCommand::List {
        all: false,
        goal: None,
        json: false,
    });
    let result = rt.block_on(async {
        match cmd {
            TasksCommand::List { all, goal, json } => {
                let tasks = s.tasks(project, goal, all).await?;
                if json {
                    println!(
                        "{}",
                        serde_json::to_string_pretty(&tasks).unwrap_or_default()
                    );
                } else if tasks.is_empty() {
                    eprintln!("No open tasks. Add one with `mira tasks add \"…\"`.");
                }
                for t in tasks.iter().filter(|_| !json) {
                    let goal = t
                        .goal_id
                        .map(|g| format!(" (goal #{g})"))
                        .unwrap_or_default();
                    println!(
                        "#{:<4} [{}] {} ({}){goal}",
                        t.id, t.status, t.title, t.priority
                    );
                }
                Ok(())
            }
            TasksCommand::Add {
                title,
                priority,
                goal,
                project: scoped,
            } => {
                let t = s
                    .add_task(project.filter(|_| scoped), title, priority, goal)
                    .await?;
                println!("Added task #{}: {}", t.id, t.title);
                Ok(())
            }
            TasksCommand::Update {
                id,
                title,
                status,
                priority,
                goal,
            } => {
                let t = s
                    .update_task(
                        id,
                        TaskUpdate {
                            title,
                            status,
                            priority,
                            goal_id: goal.map(Some),
                        },
                    )
                    .await?;
                println!("Task #{} [{}] {}", t.id, t.status, t.title);
                Ok(())
            }
            TasksCommand::Done { id } => {
                let t = s
                    .update_task(
                        id,
                        TaskUpdate {
                            status: Some(TaskStatus::Done),
                            ..Default::default()
                        },
                    )
                    .await?;
                println!("Task #{} done: {}", t.id, t.title);
                Ok(())
            }
        }
    });
    result.map_err(fail)?;
    Ok(ExitCode::SUCCESS)
}
