//! The typed arguments of each MCP tool. Their JSON Schemas (what `tools/list` shows) are
//! derived with schemars; the SDK rejects calls that do not match them with an MCP error
//! before any tool runs. Serialised again, each is exactly what the model's tool of the same
//! name takes (`agent::tools`), so both faces run one implementation.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Fact,
    Preference,
    Decision,
    Correction,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Fact => "fact",
            Kind::Preference => "preference",
            Kind::Decision => "decision",
            Kind::Correction => "correction",
        }
    }
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Remember {
    /// What to remember, in one or two sentences.
    pub text: String,
    /// fact (default), preference, decision, or correction (replaces an earlier memory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<Kind>,
    /// Only in this project; default: global, follows the user everywhere.
    #[serde(default)]
    pub project: bool,
    /// The id of the memory this one corrects (it is superseded, never recalled again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corrects: Option<i64>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Recall {
    /// What to look for (words, names, a question).
    pub query: String,
    /// At most this many memories (1-50, default 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Forget {
    /// The memory's id (`#12` in recall results is 12).
    pub id: i64,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Memories {
    /// Only this kind.
    #[serde(default)]
    pub kind: Option<Kind>,
    /// At most this many, newest first (default 50).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Also superseded and forgotten memories (an audit view).
    #[serde(default)]
    pub include_inactive: bool,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    List,
    Add,
    Update,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Goals {
    /// list, add (needs title) or update (needs id).
    pub action: Action,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// active, paused, done or abandoned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// low, normal, high or urgent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<String>,
    /// 0-100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<u8>,
    /// A new goal belongs to this project only (default: global).
    #[serde(default)]
    pub project: bool,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct Tasks {
    /// list (open tasks), add (needs title) or update (needs id).
    pub action: Action,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// todo, doing, done or cancelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// low, normal, high or urgent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<String>,
    /// The goal a task belongs to (list: only its tasks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<i64>,
    /// A new task belongs to this project only (default: global).
    #[serde(default)]
    pub project: bool,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct FindSymbol {
    /// A name or part of one (fuzzy).
    pub query: String,
    /// Only this kind: function, method, class, struct, interface, enum, constant, module, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// At most this many (1-200, default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct SymbolContext {
    /// The symbol's exact name.
    pub name: String,
    /// Prefer the definition in this project-relative file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub struct SearchCode {
    /// What the code does, or names in it.
    pub query: String,
    /// At most this many hits (1-30, default 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}
