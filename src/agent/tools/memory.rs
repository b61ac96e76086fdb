//! Memory tools: `remember`, `recall`, `forget`, `goals`, `tasks` — the same library calls as
//! `mira remember` and `mira.remember`, so the model and the user share one memory.
//!
//! Recall here is BM25 (identifier-aware); the embedder-backed fusion lives in the
//! `MemoryService` the LSP and CLI hold, which a turn does not carry.

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolOutput, arg_str, blocking, parse_args};
use crate::config::RecallWeights;
use crate::memory::goals::{self, GoalStatus, GoalUpdate, Priority, TaskStatus, TaskUpdate};
use crate::memory::memories::{self, NewMemory, Outcome};
use crate::memory::recall::{self, RecallQuery};
use crate::memory::{MemoryError, MemoryKind, Scope};
use crate::project;
use crate::store::{Store, projects};

fn failed(e: MemoryError) -> ToolError {
    match e {
        MemoryError::Sql(e) => ToolError::Failed(format!("the memory store failed: {e}")),
        other => ToolError::InvalidArgs(other.to_string()),
    }
}

fn project_id(store: &Store, root: &std::path::Path) -> Result<i64, ToolError> {
    let p = project::detect(root);
    store
        .write(|tx| projects::ensure(tx, &p.root, &p.name))
        .map_err(|e: rusqlite::Error| ToolError::Failed(e.to_string()))
}

/// A read through the memory library: store errors and memory errors, both as tool errors.
fn query<T>(
    store: &Store,
    f: impl FnOnce(&rusqlite::Connection) -> Result<T, MemoryError>,
) -> Result<T, ToolError> {
    store
        .read(|c| Ok(f(c)))
        .map_err(|e| ToolError::Failed(format!("the memory store failed: {e}")))?
        .map_err(failed)
}

fn parse<T: std::str::FromStr<Err = MemoryError>>(v: Option<&str>) -> Result<Option<T>, ToolError> {
    v.map(str::parse).transpose().map_err(failed)
}

fn scope(store: &Store, root: &std::path::Path, project: bool) -> Result<Scope, ToolError> {
    Ok(if project {
        Scope::Project(project_id(store, root)?)
    } else {
        Scope::Global
    })
}

pub struct Remember;

#[derive(Deserialize)]
struct RememberArgs {
    text: String,
    #[serde(default)]
    kind: Option<String>,
    /// Only in this project (default: global, follows the user everywhere).
    #[serde(default)]
    project: bool,
    /// The id of a memory this one corrects (it is superseded, never recalled again).
    #[serde(default)]
    corrects: Option<i64>,
}

impl Tool for Remember {
    fn name(&self) -> &'static str {
        "remember"
    }

    fn description(&self) -> &'static str {
        "Store a long-term memory: a fact, the user's preference, a decision, or a correction \
         (give `corrects` with the id of the memory it replaces). Global unless `project` is true. \
         Remember what will matter in later conversations, not what is in the code."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "kind": {"type": "string", "enum": ["fact", "preference", "decision", "correction"]},
                "project": {"type": "boolean"},
                "corrects": {"type": "integer"}
            },
            "required": ["text"],
            "additionalProperties": false
        })
    }

    fn describe(&self, args: &Value) -> String {
        format!("remember: {}", arg_str(args, "text"))
    }

    fn run<'a>(
        &'a self,
        args: Value,
        cx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let a: RememberArgs = parse_args(args)?;
            let kind = parse::<MemoryKind>(a.kind.as_deref())?.unwrap_or(match a.corrects {
                Some(_) => MemoryKind::Correction,
                None => MemoryKind::Fact,
            });
            let (store, root) = (cx.store.clone(), cx.root.to_path_buf());
            blocking(move || {
                let scope = scope(&store, &root, a.project)?;
                let text = crate::redact::redact(&a.text).into_owned();
                let (id, what) = store
                    .write(|tx| match a.corrects {
                        Some(old) => memories::correct(tx, old, &text)
                            .map(|m| (m.id, format!("#{old} is superseded by #{}", m.id))),
                        None => memories::remember(tx, &NewMemory::new(text.clone(), kind, scope))
                            .map(|r| {
                                let what = match r.outcome {
                                    Outcome::Created => "remembered".to_string(),
                                    other => format!("already known ({other:?})").to_lowercase(),
                                };
                                (r.memory.id, what)
                            }),
                    })
                    .map_err(failed)?;
                Ok(ToolOutput {
                    text: format!("memory #{id}: {what}"),
                    summary: format!("remembered #{id}"),
                })
            })
            .await
        })
    }
}

pub struct Recall;

#[derive(Deserialize)]
struct RecallArgs {
    query: String,
    #[serde(default)]
    limit: Option<usize>,
}

impl Tool for Recall {
    fn name(&self) -> &'static str {
        "recall"
    }

    fn description(&self) -> &'static str {
        "Search long-term memories (global ones and this project's): facts, preferences, \
         decisions and corrections from earlier conversations. Returns id, kind and text."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50}
            },
            "required": ["query"],
            "additionalProperties": false
        })
    }

    fn describe(&self, args: &Value) -> String {
        format!("recall {}", arg_str(args, "query"))
    }

    fn run<'a>(
        &'a self,
        args: Value,
        cx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let a: RecallArgs = parse_args(args)?;
            let (store, root) = (cx.store.clone(), cx.root.to_path_buf());
            blocking(move || {
                let pid = project_id(&store, &root)?;
                let q = RecallQuery {
                    text: &a.query,
                    project: Some(pid),
                    limit: a.limit.unwrap_or(8).min(50),
                };
                let hits = query(&store, |c| {
                    recall::recall(c, &q, None, &RecallWeights::default())
                })?;
                let lines: Vec<String> = hits
                    .iter()
                    .map(|h| format!("#{} [{}] {}", h.memory.id, h.memory.kind, h.memory.body))
                    .collect();
                Ok(ToolOutput {
                    summary: format!("{} memories for {}", hits.len(), a.query),
                    text: if lines.is_empty() {
                        "nothing remembered about that".into()
                    } else {
                        lines.join("\n")
                    },
                })
            })
            .await
        })
    }
}

pub struct Forget;

#[derive(Deserialize)]
struct ForgetArgs {
    id: i64,
}

impl Tool for Forget {
    fn name(&self) -> &'static str {
        "forget"
    }

    fn description(&self) -> &'static str {
        "Retract a memory the user no longer wants recalled (it is kept and can be restored). \
         For a memory that is wrong, prefer `remember` with `corrects`."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"id": {"type": "integer"}},
            "required": ["id"],
            "additionalProperties": false
        })
    }

    fn describe(&self, args: &Value) -> String {
        format!(
            "forget #{}",
            args.get("id").and_then(Value::as_i64).unwrap_or(0)
        )
    }

    fn run<'a>(
        &'a self,
        args: Value,
        cx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let a: ForgetArgs = parse_args(args)?;
            let store = cx.store.clone();
            blocking(move || {
                let m = store
                    .write(|tx| memories::forget(tx, a.id))
                    .map_err(failed)?;
                Ok(ToolOutput {
                    text: format!("memory #{} forgotten: {}", m.id, m.body),
                    summary: format!("forgot #{}", m.id),
                })
            })
            .await
        })
    }
}

pub struct Goals;

#[derive(Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
enum GoalsArgs {
    List,
    Add {
        title: String,
        #[serde(default)]
        description: String,
        #[serde(default)]
        priority: Option<String>,
        #[serde(default)]
        project: bool,
    },
    Update {
        id: i64,
        #[serde(default)]
        title: Option<String>,
        #[serde(default)]
        description: Option<String>,
        #[serde(default)]
        status: Option<String>,
        #[serde(default)]
        priority: Option<String>,
        #[serde(default)]
        progress: Option<u8>,
    },
}

impl Tool for Goals {
    fn name(&self) -> &'static str {
        "goals"
    }

    fn description(&self) -> &'static str {
        "The user's goals (global or per project): list them, add one, or update title, \
         description, status (active, paused, done, abandoned), priority (low, normal, high, \
         urgent) or progress (0-100)."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["list", "add", "update"]},
                "id": {"type": "integer"},
                "title": {"type": "string"},
                "description": {"type": "string"},
                "status": {"type": "string", "enum": ["active", "paused", "done", "abandoned"]},
                "priority": {"type": "string", "enum": ["low", "normal", "high", "urgent"]},
                "progress": {"type": "integer", "minimum": 0, "maximum": 100},
                "project": {"type": "boolean"}
            },
            "required": ["action"],
            "additionalProperties": false
        })
    }

    fn describe(&self, args: &Value) -> String {
        format!("goals: {}", arg_str(args, "action"))
    }

    fn run<'a>(
        &'a self,
        args: Value,
        cx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let a: GoalsArgs = parse_args(args)?;
            let (store, root) = (cx.store.clone(), cx.root.to_path_buf());
            blocking(move || {
                let line = |g: &goals::Goal| {
                    format!(
                        "#{} [{} {} {}%] {}",
                        g.id, g.status, g.priority, g.progress, g.title
                    )
                };
                match a {
                    GoalsArgs::List => {
                        let pid = project_id(&store, &root)?;
                        let gs = query(&store, |c| goals::list_goals(c, Some(pid), false))?;
                        let text: Vec<String> = gs.iter().map(line).collect();
                        Ok(ToolOutput {
                            summary: format!("{} goals", gs.len()),
                            text: if text.is_empty() {
                                "no open goals".into()
                            } else {
                                text.join("\n")
                            },
                        })
                    }
                    GoalsArgs::Add {
                        title,
                        description,
                        priority,
                        project,
                    } => {
                        let scope = scope(&store, &root, project)?;
                        let priority =
                            parse::<Priority>(priority.as_deref())?.unwrap_or(Priority::Normal);
                        let g = store
                            .write(|tx| goals::add_goal(tx, scope, &title, &description, priority))
                            .map_err(failed)?;
                        Ok(ToolOutput {
                            summary: format!("added goal #{}", g.id),
                            text: line(&g),
                        })
                    }
                    GoalsArgs::Update {
                        id,
                        title,
                        description,
                        status,
                        priority,
                        progress,
                    } => {
                        let u = GoalUpdate {
                            title,
                            description,
                            status: parse::<GoalStatus>(status.as_deref())?,
                            priority: parse::<Priority>(priority.as_deref())?,
                            progress,
                        };
                        let g = store
                            .write(|tx| goals::update_goal(tx, id, &u))
                            .map_err(failed)?;
                        Ok(ToolOutput {
                            summary: format!("updated goal #{}", g.id),
                            text: line(&g),
                        })
                    }
                }
            })
            .await
        })
    }
}

pub struct Tasks;

#[derive(Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
enum TasksArgs {
    List {
        #[serde(default)]
        goal: Option<i64>,
    },
    Add {
        title: String,
        #[serde(default)]
        priority: Option<String>,
        #[serde(default)]
        goal: Option<i64>,
        #[serde(default)]
        project: bool,
    },
    Update {
        id: i64,
        #[serde(default)]
        title: Option<String>,
        #[serde(default)]
        status: Option<String>,
        #[serde(default)]
        priority: Option<String>,
    },
}

impl Tool for Tasks {
    fn name(&self) -> &'static str {
        "tasks"
    }

    fn description(&self) -> &'static str {
        "The user's tasks (optionally under a goal): list open ones, add one, or update title, \
         status (todo, doing, done, cancelled) or priority."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["list", "add", "update"]},
                "id": {"type": "integer"},
                "title": {"type": "string"},
                "status": {"type": "string", "enum": ["todo", "doing", "done", "cancelled"]},
                "priority": {"type": "string", "enum": ["low", "normal", "high", "urgent"]},
                "goal": {"type": "integer"},
                "project": {"type": "boolean"}
            },
            "required": ["action"],
            "additionalProperties": false
        })
    }

    fn describe(&self, args: &Value) -> String {
        format!("tasks: {}", arg_str(args, "action"))
    }

    fn run<'a>(
        &'a self,
        args: Value,
        cx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let a: TasksArgs = parse_args(args)?;
            let (store, root) = (cx.store.clone(), cx.root.to_path_buf());
            blocking(move || {
                let line = |t: &goals::Task| {
                    let goal = t
                        .goal_id
                        .map(|g| format!(" (goal #{g})"))
                        .unwrap_or_default();
                    format!("#{} [{} {}] {}{goal}", t.id, t.status, t.priority, t.title)
                };
                match a {
                    TasksArgs::List { goal } => {
                        let pid = project_id(&store, &root)?;
                        let ts = query(&store, |c| goals::list_tasks(c, Some(pid), goal, false))?;
                        let text: Vec<String> = ts.iter().map(line).collect();
                        Ok(ToolOutput {
                            summary: format!("{} tasks", ts.len()),
                            text: if text.is_empty() {
                                "no open tasks".into()
                            } else {
                                text.join("\n")
                            },
                        })
                    }
                    TasksArgs::Add {
                        title,
                        priority,
                        goal,
                        project,
                    } => {
                        let scope = scope(&store, &root, project)?;
                        let priority =
                            parse::<Priority>(priority.as_deref())?.unwrap_or(Priority::Normal);
                        let t = store
                            .write(|tx| goals::add_task(tx, scope, &title, priority, goal))
                            .map_err(failed)?;
                        Ok(ToolOutput {
                            summary: format!("added task #{}", t.id),
                            text: line(&t),
                        })
                    }
                    TasksArgs::Update {
                        id,
                        title,
                        status,
                        priority,
                    } => {
                        let u = TaskUpdate {
                            title,
                            status: parse::<TaskStatus>(status.as_deref())?,
                            priority: parse::<Priority>(priority.as_deref())?,
                            goal_id: None,
                        };
                        let t = store
                            .write(|tx| goals::update_task(tx, id, &u))
                            .map_err(failed)?;
                        Ok(ToolOutput {
                            summary: format!("updated task #{}", t.id),
                            text: line(&t),
                        })
                    }
                }
            })
            .await
        })
    }
}
