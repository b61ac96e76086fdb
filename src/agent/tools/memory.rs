//! Memory tools: `remember`, `recall`, `forget`, `goals`, `tasks` — through the same
//! [`MemoryService`](crate::memory::MemoryService) as `mira remember` and `mira.remember`:
//! hybrid recall, dedup, corrections that find what they correct, the embedding worker woken
//! on every write. The model and the user share one memory and one wording.

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolOutput, arg_str, parse_args};
use crate::memory::goals::{self, GoalStatus, GoalUpdate, Priority, TaskStatus, TaskUpdate};
use crate::memory::{MemoryError, MemoryKind, ProjectRef, RememberRequest};

fn failed(e: MemoryError) -> ToolError {
    match e {
        MemoryError::Sql(e) => ToolError::Failed(format!("the memory store failed: {e}")),
        MemoryError::Internal(e) => ToolError::Failed(e),
        other => ToolError::InvalidArgs(other.to_string()),
    }
}

fn parse<T: std::str::FromStr<Err = MemoryError>>(v: Option<&str>) -> Result<Option<T>, ToolError> {
    v.map(str::parse).transpose().map_err(failed)
}

fn project(cx: &ToolContext) -> ProjectRef {
    ProjectRef::from(&crate::project::detect(cx.root))
}

/// Project-scoped writes name the project; global ones none.
fn scope(cx: &ToolContext, project_scoped: bool) -> Option<ProjectRef> {
    project_scoped.then(|| project(cx))
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
         (kind `correction`; give `corrects` with the id of the memory it replaces when you know \
         it, otherwise Mira finds the one it corrects and the result says which). Global unless \
         `project` is true. Remember what will matter in later conversations, not what is in \
         the code."
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
            let req = RememberRequest {
                text: a.text,
                kind,
                project_scoped: a.project,
                corrects: a.corrects,
                anchors: Vec::new(),
            };
            let r = cx
                .memory
                .remember(req, Some(project(cx)))
                .await
                .map_err(failed)?;
            Ok(ToolOutput {
                text: r.describe(),
                summary: format!("remembered #{}", r.memory.id),
            })
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
            let hits = cx
                .memory
                .recall(&a.query, Some(project(cx)), a.limit.unwrap_or(8).min(50))
                .await
                .map_err(failed)?;
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
            let m = cx.memory.forget(a.id).await.map_err(failed)?;
            Ok(ToolOutput {
                text: format!("memory #{} forgotten: {}", m.id, m.body),
                summary: format!("forgot #{}", m.id),
            })
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
            let line = |g: &goals::Goal| {
                format!(
                    "#{} [{} {} {}%] {}",
                    g.id, g.status, g.priority, g.progress, g.title
                )
            };
            let m = cx.memory;
            match a {
                GoalsArgs::List => {
                    let gs = m.goals(Some(project(cx)), false).await.map_err(failed)?;
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
                    let priority =
                        parse::<Priority>(priority.as_deref())?.unwrap_or(Priority::Normal);
                    let g = m
                        .add_goal(scope(cx, project), title, description, priority)
                        .await
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
                    let g = m.update_goal(id, u).await.map_err(failed)?;
                    Ok(ToolOutput {
                        summary: format!("updated goal #{}", g.id),
                        text: line(&g),
                    })
                }
            }
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
            let line = |t: &goals::Task| {
                let goal = t
                    .goal_id
                    .map(|g| format!(" (goal #{g})"))
                    .unwrap_or_default();
                format!("#{} [{} {}] {}{goal}", t.id, t.status, t.priority, t.title)
            };
            let m = cx.memory;
            match a {
                TasksArgs::List { goal } => {
                    let ts = m
                        .tasks(Some(project(cx)), goal, false)
                        .await
                        .map_err(failed)?;
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
                    let priority =
                        parse::<Priority>(priority.as_deref())?.unwrap_or(Priority::Normal);
                    let t = m
                        .add_task(scope(cx, project), title, priority, goal)
                        .await
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
                    let t = m.update_task(id, u).await.map_err(failed)?;
                    Ok(ToolOutput {
                        summary: format!("updated task #{}", t.id),
                        text: line(&t),
                    })
                }
            }
        })
    }
}
