//! Goals (with milestones) and tasks: what the user is working towards, injected into the
//! agent's context as "active goals/tasks" and managed from the CLI and LSP.

use std::fmt;
use std::str::FromStr;

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::MemoryError;
use super::model::{Scope, now_ms};

macro_rules! text_enum {
    ($(#[$m:meta])* $name:ident, $what:literal { $($variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, schemars::JsonSchema)]
        #[serde(rename_all = "lowercase")]
        pub enum $name { $($variant),+ }

        // Through `FromStr`: the model's tools and MCP accept the spellings the CLI does.
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.as_str()) }
        }

        impl FromStr for $name {
            type Err = MemoryError;
            fn from_str(s: &str) -> Result<Self, MemoryError> {
                let lower = s.trim().to_ascii_lowercase();
                $name::ALL.iter().copied().find(|v| v.as_str() == lower).ok_or_else(|| {
                    let all: Vec<&str> = $name::ALL.iter().map(|v| v.as_str()).collect();
                    MemoryError::Invalid {
                        field: $what,
                        message: format!("`{s}`; use one of: {}", all.join(", ")),
                    }
                })
            }
        }

        impl rusqlite::types::FromSql for $name {
            fn column_result(v: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
                let s = v.as_str()?;
                s.parse().map_err(|e: MemoryError| rusqlite::types::FromSqlError::Other(e.to_string().into()))
            }
        }
    };
}

text_enum!(
    /// Where a goal stands.
    GoalStatus, "goal status" { Active = "active", Paused = "paused", Done = "done", Abandoned = "abandoned" }
);
text_enum!(
    /// Where a task stands.
    TaskStatus, "task status" { Todo = "todo", Doing = "doing", Done = "done", Cancelled = "cancelled" }
);
text_enum!(
    /// Shared by goals and tasks; lists sort by it.
    Priority, "priority" { Low = "low", Normal = "normal", High = "high", Urgent = "urgent" }
);

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Milestone {
    pub id: i64,
    pub title: String,
    pub done: bool,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Goal {
    pub id: i64,
    pub scope: Scope,
    pub title: String,
    pub description: String,
    pub status: GoalStatus,
    pub priority: Priority,
    /// Percent. Follows the milestones when there are any.
    pub progress: u8,
    pub milestones: Vec<Milestone>,
    pub created_at: i64,
    pub updated_at: i64,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Task {
    pub id: i64,
    pub scope: Scope,
    pub goal_id: Option<i64>,
    pub title: String,
    pub status: TaskStatus,
    pub priority: Priority,
    pub created_at: i64,
    pub updated_at: i64,
}

/// Changes to a goal; `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct GoalUpdate {
    pub title: Option<String>,
    pub description: Option<String>,
    pub status: Option<GoalStatus>,
    pub priority: Option<Priority>,
    pub progress: Option<u8>,
}

/// Changes to a task; `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct TaskUpdate {
    pub title: Option<String>,
    pub status: Option<TaskStatus>,
    pub priority: Option<Priority>,
    /// `Some(None)` detaches the task from its goal.
    pub goal_id: Option<Option<i64>>,
}

fn title(s: &str) -> Result<&str, MemoryError> {
    let t = s.trim();
    if t.is_empty() {
        return Err(MemoryError::Invalid {
            field: "title",
            message: "it is empty".into(),
        });
    }
    if t.len() > 1024 {
        return Err(MemoryError::Invalid {
            field: "title",
            message: format!(
                "it is {} bytes; keep titles under 1024 bytes and put detail in the description",
                t.len()
            ),
        });
    }
    Ok(t)
}

pub fn add_goal(
    tx: &Transaction<'_>,
    scope: Scope,
    goal_title: &str,
    description: &str,
    priority: Priority,
) -> Result<Goal, MemoryError> {
    let t = title(goal_title)?;
    let now = now_ms();
    tx.execute(
        "INSERT INTO goals (project_id, title, description, priority, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
        params![
            scope.project_id(),
            t,
            description.trim(),
            priority.as_str(),
            now
        ],
    )?;
    get_goal(tx, tx.last_insert_rowid())
}

pub fn update_goal(tx: &Transaction<'_>, id: i64, u: &GoalUpdate) -> Result<Goal, MemoryError> {
    get_goal(tx, id)?;
    let new_title = u.title.as_deref().map(title).transpose()?;
    if let Some(p) = u.progress.filter(|p| *p > 100) {
        return Err(MemoryError::Invalid {
            field: "progress",
            message: format!("{p}; use a percentage from 0 to 100"),
        });
    }
    tx.execute(
        "UPDATE goals SET title = coalesce(?2, title), description = coalesce(?3, description),
                status = coalesce(?4, status), priority = coalesce(?5, priority),
                progress = coalesce(?6, CASE WHEN ?4 = 'done' THEN 100 ELSE progress END),
                updated_at = ?7
          WHERE id = ?1",
        params![
            id,
            new_title,
            u.description.as_deref().map(str::trim),
            u.status.map(GoalStatus::as_str),
            u.priority.map(Priority::as_str),
            u.progress,
            now_ms()
        ],
    )?;
    get_goal(tx, id)
}

pub fn add_milestone(
    tx: &Transaction<'_>,
    goal_id: i64,
    milestone_title: &str,
) -> Result<Goal, MemoryError> {
    get_goal(tx, goal_id)?;
    let t = title(milestone_title)?;
    tx.execute(
        "INSERT INTO milestones (goal_id, title, created_at) VALUES (?1, ?2, ?3)",
        params![goal_id, t, now_ms()],
    )?;
    refresh_progress(tx, goal_id)?;
    get_goal(tx, goal_id)
}

/// Marks a milestone done (or not done); the goal's progress follows its milestones.
pub fn set_milestone_done(
    tx: &Transaction<'_>,
    milestone_id: i64,
    done: bool,
) -> Result<Goal, MemoryError> {
    let goal_id: i64 = tx
        .query_row(
            "SELECT goal_id FROM milestones WHERE id = ?1",
            [milestone_id],
            |r| r.get(0),
        )
        .optional()?
        .ok_or(MemoryError::NoSuch {
            what: "milestone",
            id: milestone_id,
            hint: "`mira goals` lists goals with their milestones",
        })?;
    tx.execute(
        "UPDATE milestones SET done_at = CASE WHEN ?2 THEN coalesce(done_at, ?3) END WHERE id = ?1",
        params![milestone_id, done, now_ms()],
    )?;
    refresh_progress(tx, goal_id)?;
    get_goal(tx, goal_id)
}

fn refresh_progress(tx: &Transaction<'_>, goal_id: i64) -> rusqlite::Result<()> {
    tx.execute(
        "UPDATE goals SET updated_at = ?2, progress =
            (SELECT CASE WHEN count(*) = 0 THEN goals.progress
                         ELSE (100 * count(done_at)) / count(*) END
               FROM milestones WHERE goal_id = ?1)
          WHERE id = ?1",
        params![goal_id, now_ms()],
    )?;
    Ok(())
}

pub fn get_goal(conn: &Connection, id: i64) -> Result<Goal, MemoryError> {
    let goal = conn
        .query_row(
            "SELECT id, project_id, title, description, status, priority, progress, created_at, updated_at
               FROM goals WHERE id = ?1",
            [id],
            goal_from_row,
        )
        .optional()?
        .ok_or(MemoryError::NoSuch {
            what: "goal",
            id,
            hint: "`mira goals` lists them",
        })?;
    with_milestones(conn, goal)
}

fn goal_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Goal> {
    Ok(Goal {
        id: r.get(0)?,
        scope: Scope::from_project_id(r.get(1)?),
        title: r.get(2)?,
        description: r.get(3)?,
        status: r.get(4)?,
        priority: r.get(5)?,
        progress: r.get(6)?,
        milestones: Vec::new(),
        created_at: r.get(7)?,
        updated_at: r.get(8)?,
    })
}

fn with_milestones(conn: &Connection, mut goal: Goal) -> Result<Goal, MemoryError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, title, done_at IS NOT NULL FROM milestones WHERE goal_id = ?1 ORDER BY id",
    )?;
    goal.milestones = stmt
        .query_map([goal.id], |r| {
            Ok(Milestone {
                id: r.get(0)?,
                title: r.get(1)?,
                done: r.get(2)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(goal)
}

const PRIORITY_ORDER: &str =
    "CASE priority WHEN 'urgent' THEN 0 WHEN 'high' THEN 1 WHEN 'normal' THEN 2 ELSE 3 END";

/// Goals visible from `project` (its own plus global ones); finished ones only with `all`.
pub fn list_goals(
    conn: &Connection,
    project: Option<i64>,
    all: bool,
) -> Result<Vec<Goal>, MemoryError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT id, project_id, title, description, status, priority, progress, created_at, updated_at
           FROM goals
          WHERE (project_id IS NULL OR project_id = ?1)
            AND (?2 OR status IN ('active', 'paused'))
          ORDER BY status != 'active', {PRIORITY_ORDER}, id"
    ))?;
    let goals: Vec<Goal> = stmt
        .query_map(params![project, all], goal_from_row)?
        .collect::<Result<_, _>>()?;
    goals
        .into_iter()
        .map(|g| with_milestones(conn, g))
        .collect()
}

pub fn add_task(
    tx: &Transaction<'_>,
    scope: Scope,
    task_title: &str,
    priority: Priority,
    goal_id: Option<i64>,
) -> Result<Task, MemoryError> {
    let t = title(task_title)?;
    if let Some(g) = goal_id {
        get_goal(tx, g)?;
    }
    let now = now_ms();
    tx.execute(
        "INSERT INTO tasks (project_id, goal_id, title, priority, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
        params![scope.project_id(), goal_id, t, priority.as_str(), now],
    )?;
    get_task(tx, tx.last_insert_rowid())
}

pub fn update_task(tx: &Transaction<'_>, id: i64, u: &TaskUpdate) -> Result<Task, MemoryError> {
    let current = get_task(tx, id)?;
    let new_title = u.title.as_deref().map(title).transpose()?;
    if let Some(Some(g)) = u.goal_id {
        get_goal(tx, g)?;
    }
    let goal_id = u.goal_id.unwrap_or(current.goal_id);
    tx.execute(
        "UPDATE tasks SET title = coalesce(?2, title), status = coalesce(?3, status),
                priority = coalesce(?4, priority), goal_id = ?5, updated_at = ?6
          WHERE id = ?1",
        params![
            id,
            new_title,
            u.status.map(TaskStatus::as_str),
            u.priority.map(Priority::as_str),
            goal_id,
            now_ms()
        ],
    )?;
    get_task(tx, id)
}

pub fn get_task(conn: &Connection, id: i64) -> Result<Task, MemoryError> {
    conn.query_row(
        "SELECT id, project_id, goal_id, title, status, priority, created_at, updated_at
           FROM tasks WHERE id = ?1",
        [id],
        task_from_row,
    )
    .optional()?
    .ok_or(MemoryError::NoSuch {
        what: "task",
        id,
        hint: "`mira tasks` lists them",
    })
}

fn task_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Task> {
    Ok(Task {
        id: r.get(0)?,
        scope: Scope::from_project_id(r.get(1)?),
        goal_id: r.get(2)?,
        title: r.get(3)?,
        status: r.get(4)?,
        priority: r.get(5)?,
        created_at: r.get(6)?,
        updated_at: r.get(7)?,
    })
}

/// Tasks visible from `project`; open ones (todo/doing) unless `all`.
pub fn list_tasks(
    conn: &Connection,
    project: Option<i64>,
    goal_id: Option<i64>,
    all: bool,
) -> Result<Vec<Task>, MemoryError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT id, project_id, goal_id, title, status, priority, created_at, updated_at
           FROM tasks
          WHERE (project_id IS NULL OR project_id = ?1)
            AND (?2 IS NULL OR goal_id = ?2)
            AND (?3 OR status IN ('todo', 'doing'))
          ORDER BY status != 'doing', {PRIORITY_ORDER}, id"
    ))?;
    let rows = stmt.query_map(params![project, goal_id, all], task_from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}
