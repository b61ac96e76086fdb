//! Context assembly: what the model sees for one turn, most stable first so provider prompt
//! caches hit on the longest prefix (docs/guide.md, "What the model sees"):
//!
//! static instructions + tool docs → project → corrections/preferences → goals/tasks →
//! summaries (all of these form the system prompt) → recent messages (history items) →
//! query-dependent context (recalled conversation and memories, relevant code, the editor)
//! → the user's message (the last item).
//!
//! Each section has a token budget (tiktoken o200k), scaled to the model's window
//! ([`Budgets::for_window`]). Over the total, the lowest-priority sections are cut first
//! (past conversation, code, memories, history, summaries, then the editor, focus, goals and
//! project; corrections and preferences last). Mira's instructions, the project's own
//! instructions (`AGENTS.md` …) and the question are never cut: when they alone do not fit,
//! [`Assembled::too_long`] says so and no model is called.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use futures::future::BoxFuture;
use rusqlite::Connection;

use crate::llm::{Item, ToolSpec, Window};

use super::conversation::{self, StoredMessage};
use super::tokens;
use crate::redact::redact;

pub const INSTRUCTIONS: &str = "\
You are Mira, a coding assistant that lives in the user's editor (VS Code, Neovim, Helix) and \
in their terminal. There is one conversation with this user, across projects and editors, that \
never restarts: earlier parts appear below as summaries, and older exchanges may be recalled \
into the context when relevant.

How to work:
- Be direct and concrete. Answer in Markdown; cite code as `path:line`.
- Read before you change: use read_file, grep and list_files to check facts instead of guessing.
- Change files only with edit_file (exact replacement) or write_file. Edits go to the user's \
editor or are confirmed by the user; a result that says the edit was not applied means it \
was not, so do not claim otherwise.
- Tool output may be cut; large outputs are stored as artifacts you can page with read_artifact.
- Text shown as [REDACTED:…] was a secret removed before it reached you; never ask for it.
- Corrections and preferences below come from the user: they override your defaults.";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budgets {
    pub total: usize,
    pub project: usize,
    pub standing: usize,
    pub goals: usize,
    pub summaries: usize,
    pub history: usize,
    pub memories: usize,
    pub conversation: usize,
    pub code: usize,
    /// The symbol in focus (its definition, callers, callees, anchored memories).
    pub focus: usize,
    pub editor: usize,
}

impl Budgets {
    /// These budgets for a model with this window: the prompt gets the window minus the
    /// answer's reserve, never more than `self.total` (`agent.context_tokens`), and a smaller
    /// total scales every section down. `exact_tokenizer`: the model counts tokens as o200k
    /// does (OpenAI's); other models' tokenizers (Llama, Qwen, SmolLM, Claude) turn the same
    /// text into up to a third more tokens, so their prompt is planned at three quarters of
    /// its room.
    pub fn for_window(
        self,
        window: &Window,
        max_output_tokens: u32,
        exact_tokenizer: bool,
    ) -> Budgets {
        let room = window
            .tokens
            .saturating_sub(window.output_reserve(max_output_tokens));
        let room = if exact_tokenizer { room } else { room * 3 / 4 };
        if room >= self.total {
            self
        } else {
            self.scaled(room)
        }
    }

    /// Every section in proportion to a smaller `total`, but none below a sixth of it (or
    /// its own budget): in proportion, a 2k window would leave the goals 27 tokens, less than
    /// one goal. The sections then add up to more than the total, and assembly cuts the least
    /// important first.
    pub fn scaled(self, total: usize) -> Budgets {
        let floor = total / 6;
        let f = |n: usize| (n * total / self.total.max(1)).max(floor.min(n));
        Budgets {
            total,
            project: f(self.project),
            standing: f(self.standing),
            goals: f(self.goals),
            summaries: f(self.summaries),
            history: f(self.history),
            memories: f(self.memories),
            conversation: f(self.conversation),
            code: f(self.code),
            focus: f(self.focus),
            editor: f(self.editor),
        }
    }
}

impl Default for Budgets {
    fn default() -> Self {
        Budgets {
            total: 64_000,
            project: 1_000,
            standing: 3_000,
            goals: 1_500,
            summaries: 6_000,
            history: 32_000,
            memories: 2_000,
            conversation: 2_000,
            code: 6_000,
            focus: 6_000,
            editor: 8_000,
        }
    }
}

/// Where code context comes from. The conversation is global; the project is not.
#[derive(Clone, Debug, PartialEq)]
pub struct ProjectInfo {
    pub id: Option<i64>,
    /// Canonical root.
    pub root: PathBuf,
    pub name: String,
}

/// What the editor knows about where the user is.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EditorContext {
    /// Root-relative path of the focused file.
    pub path: Option<String>,
    pub language: Option<String>,
    /// 1-based line of the cursor or selection start.
    pub line: Option<u32>,
    pub selection: Option<String>,
    /// Text around the cursor when nothing is selected.
    pub surrounding: Option<String>,
    pub diagnostics: Vec<String>,
    /// The symbol the user asked about or is inside (editor actions).
    pub symbol: Option<super::focus::SymbolFocus>,
}

impl EditorContext {
    fn render(&self) -> String {
        let mut s = String::new();
        if let Some(p) = &self.path {
            s.push_str(&format!("File: {p}"));
            if let Some(l) = self.line {
                s.push_str(&format!(":{l}"));
            }
            if let Some(lang) = &self.language {
                s.push_str(&format!(" ({lang})"));
            }
            s.push('\n');
        }
        if let Some(sel) = &self.selection {
            s.push_str(&format!("Selection:\n```\n{sel}\n```\n"));
        } else if let Some(around) = &self.surrounding {
            s.push_str(&format!("Around the cursor:\n```\n{around}\n```\n"));
        }
        if !self.diagnostics.is_empty() {
            s.push_str("Diagnostics:\n");
            for d in &self.diagnostics {
                s.push_str(&format!("- {d}\n"));
            }
        }
        s
    }
}

/// The question's embedding, computed before the snapshot is read (embedding is network or
/// model work; the snapshot must stay short).
#[derive(Clone, Debug, PartialEq)]
pub struct QueryEmbedding {
    pub model_id: String,
    pub vector: Vec<f32>,
}

/// How the question was embedded.
#[derive(Clone, Debug, PartialEq)]
pub enum Embedded {
    /// No embedder is configured: full-text search only, as intended.
    Off,
    Ready(QueryEmbedding),
    /// An embedder is configured but did not answer: full-text search only, and the
    /// context report says why.
    Unavailable(String),
}

impl Embedded {
    pub fn vector(&self) -> Option<&QueryEmbedding> {
        match self {
            Embedded::Ready(q) => Some(q),
            _ => None,
        }
    }
}

/// What a source is asked about.
pub struct Query<'a> {
    pub text: &'a str,
    pub project: Option<i64>,
    /// Canonical project root (code is read from it).
    pub root: &'a Path,
    pub embedding: Option<&'a QueryEmbedding>,
    pub editor: Option<&'a EditorContext>,
}

/// Memory and code knowledge the turn draws on, read inside the turn's one snapshot.
/// `agent::knowledge::Knowledge` is the real one; [`NoSources`] is the empty one (tests).
pub trait ContextSources: Send + Sync {
    /// Corrections and preferences (all active ones, newest first, each with its `#id`).
    fn standing(&self, _conn: &Connection, _project: Option<i64>) -> Vec<String> {
        Vec::new()
    }
    /// Active goals with milestones, and open tasks.
    fn goals(&self, _conn: &Connection, _project: Option<i64>) -> Vec<String> {
        Vec::new()
    }
    /// Memories relevant to the question (hybrid recall), best first.
    fn recall(&self, _conn: &Connection, _q: &Query) -> Vec<String> {
        Vec::new()
    }
    /// Symbols and code relevant to the question (code search), best first.
    fn code(&self, _conn: &Connection, _q: &Query) -> Vec<String> {
        Vec::new()
    }
    /// Memories anchored to the symbols around the editor's cursor.
    fn anchored(&self, _conn: &Connection, _q: &Query) -> Vec<String> {
        Vec::new()
    }
    /// Embeds the question (off the snapshot, before it).
    fn embed<'a>(&'a self, _text: &'a str) -> BoxFuture<'a, Embedded> {
        Box::pin(async { Embedded::Off })
    }
}

pub struct NoSources;
impl ContextSources for NoSources {}

pub struct ContextInput<'a> {
    pub project: &'a ProjectInfo,
    pub question: &'a str,
    pub editor: Option<&'a EditorContext>,
    pub tools: &'a [ToolSpec],
    pub sources: &'a dyn ContextSources,
    pub embedded: &'a Embedded,
    /// The running turn, whose own messages are already stored.
    pub current_turn: Option<i64>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SectionReport {
    pub name: &'static str,
    pub tokens: usize,
    pub truncated: bool,
    /// Why a section is thinner than usual (e.g. recall without vectors).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Exactly what the section contributes (empty for instructions and history, which are
    /// the request's system prompt head and its earlier messages).
    pub text: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Assembled {
    pub system: String,
    /// Earlier messages, oldest first, ending before this turn's user message.
    pub history: Vec<Item>,
    /// The user's message with the query-dependent context in front of it.
    pub user: String,
    pub sections: Vec<SectionReport>,
    /// Whether the tools' definitions fit: a window too small for them (they would take
    /// more than half of it) gets a turn without tools rather than without context.
    pub with_tools: bool,
    /// What can never be cut does not fit the budget: the turn must not call the model.
    pub too_long: Option<TooLong>,
}

/// The instructions and the question alone are over the budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooLong {
    pub question: usize,
    /// Mira's instructions and the project's own (`AGENTS.md` …).
    pub instructions: usize,
    pub budget: usize,
}

impl TooLong {
    /// What the user reads, with what to do; `window` says which window the budget is from.
    pub fn message(&self, window: &Window) -> String {
        format!(
            "the question is too long for the model: it needs about {} tokens ({} for the \
             question, {} for Mira's and the project's instructions), and the model's window \
             of {} leaves about {} for the prompt. Shorten the question (or the project's \
             AGENTS.md), or use a model with a larger window (`provider.context_window` if the \
             server's is larger than Mira learned). Nothing was sent.",
            self.question + self.instructions,
            self.question,
            self.instructions,
            window.describe(),
            self.budget
        )
    }
}

static INSTRUCTION_TOKENS: LazyLock<usize> = LazyLock::new(|| tokens::count(INSTRUCTIONS));

/// A section's text cut to its budget.
struct Part {
    name: &'static str,
    text: String,
    tokens: usize,
    truncated: bool,
    note: Option<String>,
}

fn part(name: &'static str, text: String, budget: usize) -> Part {
    let full = tokens::count(&text);
    if full <= budget {
        return Part {
            name,
            text,
            tokens: full,
            truncated: false,
            note: None,
        };
    }
    let cut = tokens::truncate(&text, budget).to_string();
    let tokens = tokens::count(&cut);
    Part {
        name,
        text: cut,
        tokens,
        truncated: true,
        note: None,
    }
}

fn bullets(lines: &[String]) -> String {
    lines.iter().map(|l| format!("- {}\n", l.trim())).collect()
}

fn project_text(p: &ProjectInfo) -> String {
    let mut s = format!("Name: {}\nRoot: {}\n", p.name, p.root.display());
    if let Ok(rd) = std::fs::read_dir(&p.root) {
        let mut names: Vec<String> = rd
            .flatten()
            .filter_map(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                (!n.starts_with('.') || n == ".mira").then(|| {
                    if e.path().is_dir() {
                        format!("{n}/")
                    } else {
                        n
                    }
                })
            })
            .collect();
        names.sort();
        names.truncate(60);
        s.push_str(&format!("Top level: {}\n", names.join(", ")));
    }
    s
}

pub fn tool_docs(tools: &[ToolSpec]) -> String {
    tools
        .iter()
        .map(|t| format!("- {}: {}\n", t.name, t.description))
        .collect()
}

/// Older tool output is shortened in history: the model saw it whole when it mattered.
const HISTORY_TOOL_RESULT_BYTES: usize = 4 * 1024;

fn history_items(messages: Vec<StoredMessage>, budget: usize) -> (Vec<Item>, usize, bool) {
    // Whole turns, newest first, while they fit.
    let mut turns: Vec<Vec<StoredMessage>> = Vec::new();
    for m in messages {
        match turns.last_mut() {
            Some(t) if t[0].turn_id == m.turn_id => t.push(m),
            _ => turns.push(vec![m]),
        }
    }
    let mut used = 0;
    let mut keep = turns.len();
    for (i, t) in turns.iter().enumerate().rev() {
        // Tool results are shortened below, so they cost at most their shortened size.
        let cost: usize = t
            .iter()
            .map(|m| match m.item {
                Item::ToolResult(_) => m.tokens.min(HISTORY_TOOL_RESULT_BYTES / 3),
                _ => m.tokens,
            })
            .sum();
        if used + cost > budget {
            break;
        }
        used += cost;
        keep = i;
    }
    let truncated = keep > 0;
    let items = turns
        .into_iter()
        .skip(keep)
        .flatten()
        .map(|m| match m.item {
            Item::ToolResult(mut r) if r.content.len() > HISTORY_TOOL_RESULT_BYTES => {
                let mut end = HISTORY_TOOL_RESULT_BYTES;
                while !r.content.is_char_boundary(end) {
                    end -= 1;
                }
                r.content.truncate(end);
                r.content.push_str("\n… [shortened in history]");
                Item::ToolResult(r)
            }
            other => other,
        })
        .collect();
    (sanitise(items), used, truncated)
}

/// Drop tool calls without results and results without calls (a turn cut off mid-loop, in
/// this process or another), which every provider rejects.
pub fn sanitise(items: Vec<Item>) -> Vec<Item> {
    let answered: std::collections::HashSet<String> = items
        .iter()
        .filter_map(|i| match i {
            Item::ToolResult(r) => Some(r.call_id.clone()),
            _ => None,
        })
        .collect();
    let mut called = std::collections::HashSet::new();
    items
        .into_iter()
        .filter(|i| match i {
            Item::ToolCall(c) => answered.contains(&c.id) && called.insert(c.id.clone()),
            Item::ToolResult(r) => called.contains(&r.call_id),
            _ => true,
        })
        .collect()
}

/// Whole lines while they fit in `budget` (a cut line would be a half-truth).
fn lines_part(name: &'static str, lines: &[String], budget: usize) -> Part {
    let mut text = String::new();
    let mut used = 0;
    let mut truncated = false;
    for l in lines {
        let line = format!("- {}\n", l.trim());
        let t = tokens::count(&line);
        if used + t > budget {
            truncated = true;
            break;
        }
        used += t;
        text.push_str(&line);
    }
    Part {
        name,
        text,
        tokens: used,
        truncated,
        note: None,
    }
}

/// Blocks (code, several lines each) while they fit in `budget`.
fn blocks_part(name: &'static str, blocks: &[String], budget: usize) -> Part {
    let mut text = String::new();
    let mut used = 0;
    let mut truncated = false;
    for b in blocks {
        let t = tokens::count(b) + 1;
        if used + t > budget {
            truncated = true;
            continue;
        }
        used += t;
        text.push_str(b.trim_end());
        text.push_str("\n\n");
    }
    Part {
        name,
        text,
        tokens: used,
        truncated,
        note: None,
    }
}

fn summaries_part(conn: &Connection, budget: usize) -> rusqlite::Result<Part> {
    // The newest summaries are the most relevant; older ones stay searchable.
    let mut text = String::new();
    let mut used = 0;
    let mut truncated = false;
    for s in conversation::summaries(conn)?.iter().rev() {
        if used + s.tokens > budget {
            truncated = true;
            break;
        }
        used += s.tokens;
        text = format!("{}\n\n{text}", s.content.trim());
    }
    Ok(Part {
        name: "summaries",
        text,
        tokens: used,
        truncated,
        note: None,
    })
}

/// Earlier messages and summaries relevant to the question, older than the verbatim window.
fn conversation_lines(
    conn: &Connection,
    question: &str,
    before: Option<i64>,
) -> rusqlite::Result<Vec<String>> {
    Ok(conversation::search(conn, question, 4, before)?
        .into_iter()
        .map(|h| {
            let label = if h.from_summary {
                "earlier summary"
            } else {
                "earlier message"
            };
            let text: String = h.text.chars().take(600).collect();
            format!("({label}) {}", text.replace('\n', " "))
        })
        .collect())
}

/// Reads everything in one snapshot (the caller's read transaction) and lays it out most
/// stable first: the system prompt (instructions, tools, project, corrections and
/// preferences, goals, summaries), then history, then one user message carrying the
/// query-dependent context (memories, past conversation, code, the symbol in focus, the
/// editor) in front of the question.
pub fn assemble(
    conn: &Connection,
    input: &ContextInput,
    budgets: &Budgets,
) -> rusqlite::Result<Assembled> {
    let project_id = input.project.id;
    let src = input.sources;
    let query = Query {
        text: input.question,
        project: project_id,
        root: &input.project.root,
        embedding: input.embedded.vector(),
        editor: input.editor,
    };

    // Stable sections.
    let tools = tool_docs(input.tools);
    let project = part("project", project_text(input.project), budgets.project);
    let standing = lines_part(
        "standing",
        &src.standing(conn, project_id),
        budgets.standing,
    );
    let goals = lines_part("goals", &src.goals(conn, project_id), budgets.goals);
    let summaries = summaries_part(conn, budgets.summaries)?;

    // History.
    let verbatim = conversation::verbatim(conn, input.current_turn)?;
    let first_verbatim = verbatim.first().map(|m| m.id);
    let mut messages = verbatim;
    // This turn's own user message is stored already; it is sent as `user` below.
    if let Some(cur) = input.current_turn {
        messages.retain(|m| m.turn_id != cur);
    }
    let messages_kept = messages.clone();
    let (history, history_tokens, history_cut) = history_items(messages, budgets.history);

    // Query-dependent, most important first.
    let mut memories = lines_part("memories", &src.recall(conn, &query), budgets.memories);
    if let Embedded::Unavailable(why) = input.embedded {
        memories.note = Some(format!("full-text search only: {why}"));
    }
    let past = lines_part(
        "conversation",
        &conversation_lines(conn, input.question, first_verbatim)?,
        budgets.conversation,
    );
    let code = blocks_part("code", &src.code(conn, &query), budgets.code);
    // The symbol a code action is about carries its own anchored memories; otherwise the
    // memories anchored where the cursor is.
    let focus_text = match input.editor.and_then(|e| e.symbol.as_ref()) {
        Some(symbol) => symbol.render(),
        None => {
            let anchored = src.anchored(conn, &query);
            if anchored.is_empty() {
                String::new()
            } else {
                format!(
                    "Mira remembers about the code here:\n{}",
                    bullets(&anchored)
                )
            }
        }
    };
    let focus = part("focus", redact(&focus_text).into_owned(), budgets.focus);
    let editor = part(
        "editor",
        input
            .editor
            .map(|e| redact(&e.render()).into_owned())
            .unwrap_or_default(),
        budgets.editor,
    );

    let question_tokens = tokens::count(input.question);
    let project_files = super::instructions::gather(
        &input.project.root,
        input.editor.and_then(|e| e.path.as_deref()),
    );
    let project_rules = super::instructions::render(&project_files);
    let rules_tokens = tokens::count(&project_rules);
    let never_cut = *INSTRUCTION_TOKENS + rules_tokens + question_tokens;
    // The tools: their docs in the prompt and their schemas beside it (servers such as
    // llama.cpp render both into the model's prompt).
    let tool_tokens = tokens::count(&tools) + schema_tokens(input.tools);
    let with_tools = never_cut + tool_tokens <= budgets.total / 2;
    let tool_tokens = if with_tools { tool_tokens } else { 0 };

    // Over the total, cut in this order: what matters least for this question first.
    let (mut history, mut history_tokens, mut history_cut) = (history, history_tokens, history_cut);
    let mut parts = [
        past, code, memories, summaries, editor, focus, goals, project, standing,
    ];
    let total_of = |parts: &[Part], history_tokens: usize| {
        never_cut + tool_tokens + history_tokens + parts.iter().map(|p| p.tokens).sum::<usize>()
    };
    // Indexes into `parts`; `None` is the history, cut after the query-dependent context.
    const ORDER: [Option<usize>; 10] = [
        Some(0),
        Some(1),
        Some(2),
        None,
        Some(3),
        Some(4),
        Some(5),
        Some(6),
        Some(7),
        Some(8),
    ];
    for step in ORDER {
        let total = total_of(&parts, history_tokens);
        if total <= budgets.total {
            break;
        }
        let over = total - budgets.total;
        match step {
            None => {
                if history_tokens > 0 {
                    (history, history_tokens, _) =
                        history_items(messages_kept.clone(), history_tokens.saturating_sub(over));
                    history_cut = true;
                }
            }
            Some(i) => {
                let p = &mut parts[i];
                if p.tokens == 0 {
                    continue;
                }
                let cut = tokens::truncate(&p.text, p.tokens.saturating_sub(over)).to_string();
                p.tokens = tokens::count(&cut);
                p.text = cut;
                p.truncated = true;
            }
        }
    }
    let used = total_of(&parts, history_tokens);
    let [
        past,
        code,
        memories,
        summaries,
        editor,
        focus,
        goals,
        project,
        standing,
    ] = parts;
    let too_long = (never_cut > budgets.total || used > budgets.total).then_some(TooLong {
        question: question_tokens,
        instructions: *INSTRUCTION_TOKENS + rules_tokens,
        budget: budgets.total,
    });
    let tools = if with_tools { tools } else { String::new() };

    let mut system = String::with_capacity(INSTRUCTIONS.len() + tools.len() + 4096);
    system.push_str(INSTRUCTIONS);
    let mut section = |title: &str, body: &str| {
        if !body.trim().is_empty() {
            system.push_str("\n\n# ");
            system.push_str(title);
            system.push('\n');
            system.push_str(body.trim_end());
        }
    };
    section("Tools", &tools);
    section(
        "Project instructions (from the project's files; follow them)",
        &project_rules,
    );
    section("Project", &project.text);
    section(
        "Corrections and preferences (always follow these)",
        &standing.text,
    );
    section("Active goals and tasks", &goals.text);
    section("Summary of the earlier conversation", &summaries.text);

    let mut context = String::new();
    let mut block = |title: &str, body: &str| {
        if !body.trim().is_empty() {
            context.push_str(&format!("## {title}\n{}\n\n", body.trim_end()));
        }
    };
    block("Memories relevant to this question", &memories.text);
    block("From earlier in the conversation", &past.text);
    block("Relevant code (code search)", &code.text);
    block("Symbol in focus", &focus.text);
    block("Editor", &editor.text);
    let user = if context.is_empty() {
        input.question.to_string()
    } else {
        format!("<context>\n{}</context>\n\n{}", context, input.question)
    };

    let fixed_report = |name: &'static str, tokens: usize, truncated: bool| SectionReport {
        name,
        tokens,
        truncated,
        note: None,
        text: String::new(),
    };
    let tools_note = (!with_tools).then(|| {
        "no tools: their definitions would take more than half of the model's window".to_string()
    });
    let sections = vec![
        SectionReport {
            note: tools_note,
            ..fixed_report("instructions", *INSTRUCTION_TOKENS + tool_tokens, false)
        },
        SectionReport {
            text: project_rules.clone(),
            note: (!project_files.is_empty()).then(|| {
                project_files
                    .iter()
                    .map(|f| f.path.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            }),
            ..fixed_report("project instructions", rules_tokens, false)
        },
        report(&project),
        report(&standing),
        report(&goals),
        report(&summaries),
        fixed_report("history", history_tokens, history_cut),
        report(&memories),
        report(&past),
        report(&code),
        report(&focus),
        report(&editor),
        SectionReport {
            text: input.question.to_string(),
            ..fixed_report("question", question_tokens, false)
        },
    ];
    Ok(Assembled {
        system,
        history,
        user,
        sections,
        with_tools,
        too_long,
    })
}

/// The tools' JSON schemas as the server receives them.
fn schema_tokens(tools: &[ToolSpec]) -> usize {
    tools
        .iter()
        .map(|t| tokens::count(&t.parameters.to_string()))
        .sum()
}

fn report(p: &Part) -> SectionReport {
    SectionReport {
        name: p.name,
        tokens: p.tokens,
        truncated: p.truncated,
        note: p.note.clone(),
        text: p.text.clone(),
    }
}

/// Project name for display: the configured one, else the root folder's name.
pub fn project_name(root: &Path, configured: Option<&str>) -> String {
    configured
        .map(str::to_string)
        .or_else(|| root.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| root.display().to_string())
}

/// The session-start view (`mira mcp`'s prompt and resource): the stable head of every
/// turn's system prompt — project, corrections and preferences, active goals and tasks, the
/// latest summaries — with the same sources, budgets and titles as [`assemble`], so an agent
/// outside a turn starts from what a turn would see.
pub fn session_start(
    conn: &Connection,
    project: &ProjectInfo,
    sources: &dyn ContextSources,
    budgets: &Budgets,
) -> rusqlite::Result<String> {
    let rules = super::instructions::render(&super::instructions::gather(&project.root, None));
    let parts = [
        (
            "Project instructions (from the project's files; follow them)",
            Part {
                name: "project instructions",
                tokens: tokens::count(&rules),
                text: rules,
                truncated: false,
                note: None,
            },
        ),
        (
            "Project",
            part("project", project_text(project), budgets.project),
        ),
        (
            "Corrections and preferences (always follow these)",
            lines_part(
                "standing",
                &sources.standing(conn, project.id),
                budgets.standing,
            ),
        ),
        (
            "Active goals and tasks",
            lines_part("goals", &sources.goals(conn, project.id), budgets.goals),
        ),
        (
            "Summary of the earlier conversation",
            summaries_part(conn, budgets.summaries)?,
        ),
    ];
    let mut out = String::new();
    for (title, p) in parts {
        let body = if p.text.trim().is_empty() {
            "(none yet)"
        } else {
            p.text.trim_end()
        };
        out.push_str(&format!("# {title}\n{body}\n\n"));
    }
    Ok(out)
}
