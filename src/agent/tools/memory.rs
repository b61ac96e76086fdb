//! Memory tools: `remember`, `recall`, `forget`, `goals`, `tasks` — through the same
//! [`MemoryService`](crate::memory::MemoryService) as `mira remember` and `mira.remember`:
//! hybrid recall, dedup, corrections that find what they correct, the embedding worker woken
//! on every write. The model and the user share one memory and one wording.

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{ToolContext, ToolError, ToolOutput, TypedTool, arg_str};
use crate::memory::goals::{self, GoalStatus, GoalUpdate, Priority, TaskStatus, TaskUpdate};
use crate::memory::{MemoryError, MemoryKind, ProjectRef, RememberRequest};

fn failed(e: MemoryError) -> ToolError {
    match e {
        MemoryError::Sql(e) => ToolError::Failed(format!("the memory store failed: {e}")),
        MemoryError::Internal(e) => ToolError::Failed(e),
        other => ToolError::InvalidArgs(other.to_string()),
    }
}

/// An argument the action needs, in the words serde uses for a missing field.
fn needed<T>(v: Option<T>, field: &str) -> Result<T, ToolError> {
    v.ok_or_else(|| ToolError::InvalidArgs(format!("missing field `{field}`")))
}

#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    List,
    Add,
    Update,
}

fn project(cx: &ToolContext) -> ProjectRef {
    ProjectRef::from(&crate::project::detect(cx.root))
}

/// Project-scoped writes name the project; global ones none.
fn scope(cx: &ToolContext, project_scoped: bool) -> Option<ProjectRef> {
    project_scoped.then(|| project(cx))
}

pub struct Remember;

#[derive(Deserialize, JsonSchema)]
pub struct RememberArgs {
    /// What to remember, in one or two sentences.
    text: String,
    /// fact (default), preference, decision, or correction (replaces an earlier memory).
    #[serde(default)]
    kind: Option<MemoryKind>,
    /// Only in this project; default: global, follows the user everywhere.
    #[serde(default)]
    project: bool,
    /// The id of the memory this one corrects (it is superseded, never recalled again).
    #[serde(default)]
    corrects: Option<i64>,
}

impl TypedTool for Remember {
    const NAME: &'static str = "remember";
    type Args = RememberArgs;

    fn description(&self) -> &'static str {
        "Store a long-term memory: a fact, the user's preference, a decision, or a correction \
         (kind `correction`; give `corrects` with the id of the memory it replaces when you know \
         it, otherwise Mira finds the one it corrects and the result says which). Global unless \
         `project` is true. Remember what will matter in later conversations, not what is in \
         the code."
    }

    fn describe(&self, args: &Value) -> String {
        format!("remember: {}", arg_str(args, "text"))
    }

    fn call<'a>(
        &'a self,
        a: Self::Args,
        cx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let kind = a.kind.unwrap_or(match a.corrects {
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

/// Also `mira.recall`'s arguments, whose default limit is its own.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
pub struct RecallArgs {
    /// What to look for (words, names, a question).
    pub query: String,
    /// At most this many memories (default 8).
    #[serde(default)]
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<usize>,
}

impl TypedTool for Recall {
    const NAME: &'static str = "recall";
    type Args = RecallArgs;

    fn description(&self) -> &'static str {
        "Search long-term memories (global ones and this project's): facts, preferences, \
         decisions and corrections from earlier conversations. Returns id, kind and text."
    }

    fn describe(&self, args: &Value) -> String {
        format!("recall {}", arg_str(args, "query"))
    }

    fn call<'a>(
        &'a self,
        a: Self::Args,
        cx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
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

#[derive(Deserialize, JsonSchema)]
pub struct ForgetArgs {
    /// The memory's id (`#12` in recall results is 12).
    id: i64,
}

impl TypedTool for Forget {
    const NAME: &'static str = "forget";
    type Args = ForgetArgs;

    fn description(&self) -> &'static str {
        "Retract a memory the user no longer wants recalled (it is kept and can be restored). \
         For a memory that is wrong, prefer `remember` with `corrects`."
    }

    fn describe(&self, args: &Value) -> String {
        format!(
            "forget #{}",
            args.get("id").and_then(Value::as_i64).unwrap_or(0)
        )
    }

    fn call<'a>(
        &'a self,
        a: Self::Args,
        cx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let m = cx.memory.forget(a.id).await.map_err(failed)?;
            Ok(ToolOutput {
                text: format!("memory #{} forgotten: {}", m.id, m.body),
                summary: format!("forgot #{}", m.id),
            })
        })
    }
}

pub struct Goals;

#[derive(Deserialize, JsonSchema)]
pub struct GoalsArgs {
    /// list, add (needs title) or update (needs id).
    action: Action,
    #[serde(default)]
    id: Option<i64>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    description: Option<String>,
    /// active, paused, done or abandoned.
    #[serde(default)]
    status: Option<GoalStatus>,
    /// low, normal, high or urgent.
    #[serde(default)]
    priority: Option<Priority>,
    /// Percent done.
    #[serde(default)]
    #[schemars(range(max = 100))]
    progress: Option<u8>,
    /// A new goal belongs to this project only (default: global).
    #[serde(default)]
    project: bool,
}

impl TypedTool for Goals {
    const NAME: &'static str = "goals";
    type Args = GoalsArgs;

    fn description(&self) -> &'static str {
        "The user's goals (global or per project): list them, add one, or update title, \
         description, status (active, paused, done, abandoned), priority (low, normal, high, \
         urgent) or progress (0-100)."
    }

    fn describe(&self, args: &Value) -> String {
        format!("goals: {}", arg_str(args, "action"))
    }

    fn call<'a>(
        &'a self,
        a: Self::Args,
        cx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let line = |g: &goals::Goal| {
                format!(
                    "#{} [{} {} {}%] {}",
                    g.id, g.status, g.priority, g.progress, g.title
                )
            };
            let m = cx.memory;
            match a.action {
                Action::List => {
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
                Action::Add => {
                    let title = needed(a.title, "title")?;
                    let description = a.description.unwrap_or_default();
                    let priority = a.priority.unwrap_or(Priority::Normal);
                    let g = m
                        .add_goal(scope(cx, a.project), title, description, priority)
                        .await
                        .map_err(failed)?;
                    Ok(ToolOutput {
                        summary: format!("added goal #{}", g.id),
                        text: line(&g),
                    })
                }
                Action::Update => {
                    let id = needed(a.id, "id")?;
                    let u = GoalUpdate {
                        title: a.title,
                        description: a.description,
                        status: a.status,
                        priority: a.priority,
                        progress: a.progress,
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

#[derive(Deserialize, JsonSchema)]
pub struct TasksArgs {
    /// list (open tasks), add (needs title) or update (needs id).
    action: Action,
    #[serde(default)]
    id: Option<i64>,
    #[serde(default)]
    title: Option<String>,
    /// todo, doing, done or cancelled.
    #[serde(default)]
    status: Option<TaskStatus>,
    /// low, normal, high or urgent.
    #[serde(default)]
    priority: Option<Priority>,
    /// The goal a task belongs to (list: only its tasks).
    #[serde(default)]
    goal: Option<i64>,
    /// A new task belongs to this project only (default: global).
    #[serde(default)]
    project: bool,
}

impl TypedTool for Tasks {
    const NAME: &'static str = "tasks";
    type Args = TasksArgs;

    fn description(&self) -> &'static str {
        "The user's tasks (optionally under a goal): list open ones, add one, or update title, \
         status (todo, doing, done, cancelled) or priority."
    }

    fn describe(&self, args: &Value) -> String {
        format!("tasks: {}", arg_str(args, "action"))
    }

    fn call<'a>(
        &'a self,
        a: Self::Args,
        cx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let line = |t: &goals::Task| {
                let goal = t
                    .goal_id
                    .map(|g| format!(" (goal #{g})"))
                    .unwrap_or_default();
                format!("#{} [{} {}] {}{goal}", t.id, t.status, t.priority, t.title)
            };
            let m = cx.memory;
            match a.action {
                Action::List => {
                    let ts = m
                        .tasks(Some(project(cx)), a.goal, false)
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
                Action::Add => {
                    let title = needed(a.title, "title")?;
                    let priority = a.priority.unwrap_or(Priority::Normal);
                    let t = m
                        .add_task(scope(cx, a.project), title, priority, a.goal)
                        .await
                        .map_err(failed)?;
                    Ok(ToolOutput {
                        summary: format!("added task #{}", t.id),
                        text: line(&t),
                    })
                }
                Action::Update => {
                    let id = needed(a.id, "id")?;
                    let u = TaskUpdate {
                        title: a.title,
                        status: a.status,
                        priority: a.priority,
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
