//! `mira doctor`: the effective configuration with sources, the project, the store, the
//! provider — and every problem, worded so the user knows what to do.

use mira::config::{self, ConfigInputs, Loaded, ReportLine};
use mira::project::{self, Project};
use mira::store::{SCHEMA_VERSION, Store, sessions};
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub enum Problem {
    /// The configuration cannot be used (exit code 2).
    Config(String),
    /// Something else is broken (exit code 1).
    Runtime(String),
}

#[derive(Debug)]
pub struct StoreReport {
    pub path: PathBuf,
    pub schema_version: u32,
    pub attached: usize,
    pub integrity: String,
}

/// What keeps secrets on the machine: redaction rules and the sensitive-file lists.
#[derive(Debug)]
pub struct SecretsReport {
    pub redaction_rules: usize,
    /// Sensitive-file rules in force, built-in ones included.
    pub file_rules: usize,
    /// The `.miraignore` files in force, project first.
    pub miraignore: Vec<PathBuf>,
    /// `agent.allow_sensitive`: the model's file tools may open sensitive files.
    pub allow_sensitive: bool,
}

/// Where the servers log, and the last crash or panic they recorded.
#[derive(Debug)]
pub struct LogsReport {
    /// `mira lsp` and `mira mcp` write `mira.log.<YYYY-MM-DD>` here (UTC days).
    pub dir: PathBuf,
    /// The newest daily log file, if any.
    pub latest: Option<PathBuf>,
    pub crashes: PathBuf,
    pub last_crash: Option<mira::crashlog::Crash>,
}

#[derive(Debug)]
pub struct Doctor {
    pub project: Project,
    pub config: Option<Loaded>,
    pub lines: Vec<ReportLine>,
    /// (file, whether it exists) in precedence order
    pub files: Vec<(PathBuf, bool)>,
    pub store: Option<StoreReport>,
    pub provider: String,
    /// A local model server, asked for its models and the model's window (hosted providers
    /// are not called: the doctor works offline; `mira models` asks them).
    pub server: Option<mira::llm::ServerReport>,
    /// The project's own instructions for the model (`AGENTS.md` …), as a turn at the
    /// project root reads them.
    pub instructions: Vec<mira::agent::instructions::InstructionFile>,
    pub secrets: SecretsReport,
    pub logs: Option<LogsReport>,
    pub problems: Vec<Problem>,
}

impl Doctor {
    pub fn exit_code(&self) -> u8 {
        if self
            .problems
            .iter()
            .any(|p| matches!(p, Problem::Config(_)))
        {
            2
        } else if self.problems.is_empty() {
            0
        } else {
            1
        }
    }
}

pub fn run(rt: &tokio::runtime::Runtime, inputs: ConfigInputs, start: &Path) -> Doctor {
    let project = project::detect(start);
    let inputs = ConfigInputs {
        project_root: Some(project.root.clone()),
        ..inputs
    };
    let mut problems = Vec::new();
    let project_file = project.root.join(".mira/project.toml");
    let mut files = Vec::new();
    let loaded = match config::load(&inputs) {
        Ok(l) => {
            for u in &l.unknown {
                problems.push(Problem::Config(format!(
                    "{u}: remove it or fix its spelling (see docs/guide.md, Configuration)"
                )));
            }
            Some(l)
        }
        Err(e) => {
            problems.push(Problem::Config(e.to_string()));
            None
        }
    };
    if let Some(l) = &loaded {
        files = l.files.iter().map(|f| (f.clone(), true)).collect();
    }
    if let (Some(user), _) = config::user_file(&inputs)
        && !files.iter().any(|(f, _)| f == &user)
    {
        files.insert(0, (user, false));
    }
    if !files.iter().any(|(f, _)| f == &project_file) {
        files.push((project_file, false));
    }
    let lines = loaded.as_ref().map(config::report).unwrap_or_default();

    let store = loaded.as_ref().and_then(|l| {
        let path = l.database_path();
        match Store::open(&path) {
            Ok(store) => {
                let integrity = store
                    .read(|c| c.query_row("PRAGMA quick_check", [], |r| r.get::<_, String>(0)))
                    .unwrap_or_else(|e| e.to_string());
                if integrity != "ok" {
                    problems.push(Problem::Runtime(format!(
                        "the database {} fails its integrity check: {integrity}",
                        path.display()
                    )));
                }
                Some(StoreReport {
                    schema_version: store.schema_version().unwrap_or(0),
                    attached: store.read(sessions::live).map(|s| s.len()).unwrap_or(0),
                    integrity,
                    path,
                })
            }
            Err(e) => {
                problems.push(Problem::Runtime(e.to_string()));
                None
            }
        }
    });

    let provider = match &loaded {
        Some(l) => describe_provider(l),
        None => "unknown (configuration not loaded)".into(),
    };
    let server = loaded
        .as_ref()
        .and_then(|l| local_server(rt, l, &mut problems));
    let instructions = mira::agent::instructions::gather(&project.root, None);
    let secrets = secrets_report(&project.root, loaded.as_ref(), &mut problems);
    let logs = loaded.as_ref().map(|l| logs_report(&l.config.store.home));
    Doctor {
        logs,
        project,
        secrets,
        config: loaded,
        lines,
        files,
        store,
        provider,
        server,
        instructions,
        problems,
    }
}

/// Asks a loopback provider's server what it serves; a server that is down or lacks the
/// configured model is a problem worded with the fix.
fn local_server(
    rt: &tokio::runtime::Runtime,
    l: &Loaded,
    problems: &mut Vec<Problem>,
) -> Option<mira::llm::ServerReport> {
    let settings = mira::llm::ProviderSettings::resolve(&l.config.provider, &l.keys).ok()?;
    if !settings.is_local() {
        return None;
    }
    let report = rt.block_on(mira::llm::server_report(settings)).ok()?;
    match &report.models {
        Err(e) => problems.push(Problem::Runtime(e.clone())),
        Ok(list) if !report.has_model() => problems.push(Problem::Config(format!(
            "the server at {} has no model `{}`; it has: {}. Set `provider.model` to one of them",
            report.base_url,
            report.model,
            list.iter()
                .map(|m| m.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
        Ok(_) => {}
    }
    Some(report)
}

fn secrets_report(root: &Path, l: Option<&Loaded>, problems: &mut Vec<Problem>) -> SecretsReport {
    let files = mira::sensitive::load_for(root).unwrap_or_else(|e| {
        problems.push(Problem::Config(e.to_string()));
        mira::sensitive::SensitiveFiles::built_in_only(root)
    });
    SecretsReport {
        redaction_rules: mira::redact::rule_count(),
        file_rules: files.rule_count(),
        miraignore: files.sources().into_iter().map(Path::to_path_buf).collect(),
        allow_sensitive: l.is_some_and(|l| l.config.agent.allow_sensitive),
    }
}

fn logs_report(home: &Path) -> LogsReport {
    let dir = home.join("logs");
    let latest = std::fs::read_dir(&dir).ok().and_then(|entries| {
        entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("mira.log."))
            })
            // `mira.log.YYYY-MM-DD`: the names sort by day.
            .max()
    });
    LogsReport {
        latest,
        crashes: mira::crashlog::path(home),
        last_crash: mira::crashlog::last(home),
        dir,
    }
}

fn describe_provider(l: &Loaded) -> String {
    let p = &l.config.provider;
    match p.name {
        Some(kind) => format!(
            "{} (model {}, base_url {})",
            kind.as_str(),
            p.model.as_deref().unwrap_or("provider default"),
            p.base_url.as_deref().unwrap_or("provider default")
        ),
        None if l.keys.openai.is_some() => "openai (from OPENAI_API_KEY)".into(),
        None if l.keys.anthropic.is_some() => "anthropic (from ANTHROPIC_API_KEY)".into(),
        None if l.keys.deepseek.is_some() => {
            "openai-chat / DeepSeek (from DEEPSEEK_API_KEY)".into()
        }
        None => "not configured. Index, symbols and memory work offline; to chat, export \
                 OPENAI_API_KEY, ANTHROPIC_API_KEY or DEEPSEEK_API_KEY, or set [provider] name, \
                 model and base_url in ~/.config/mira/config.toml (e.g. a local Ollama)"
            .into(),
    }
}

/// Schema version this build migrates to (for "schema 3 (this Mira: 3)").
pub fn known_schema() -> u32 {
    *SCHEMA_VERSION
}
