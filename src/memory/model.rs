//! The typed vocabulary of long-term memory: kinds, scopes, statuses and the memory row.

use std::fmt;
use std::str::FromStr;

use rusqlite::Row;

use super::MemoryError;

/// What a memory is. Stored as lower-case text; parsed with a clear error for anything else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MemoryKind {
    Fact,
    Preference,
    Decision,
    Correction,
}

impl MemoryKind {
    pub const ALL: [MemoryKind; 4] = [
        MemoryKind::Fact,
        MemoryKind::Preference,
        MemoryKind::Decision,
        MemoryKind::Correction,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            MemoryKind::Fact => "fact",
            MemoryKind::Preference => "preference",
            MemoryKind::Decision => "decision",
            MemoryKind::Correction => "correction",
        }
    }
}

impl fmt::Display for MemoryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Through [`FromStr`], so every face (the model's tools, MCP, LSP commands) accepts the same
/// spellings and gets the same error.
impl<'de> serde::Deserialize<'de> for MemoryKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl FromStr for MemoryKind {
    type Err = MemoryError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase();
        MemoryKind::ALL
            .into_iter()
            .find(|k| k.as_str() == lower)
            .ok_or_else(|| MemoryError::UnknownKind(s.to_string()))
    }
}

/// Lifecycle of a memory. Nothing is ever deleted: corrections supersede, `forget` retracts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Active,
    Superseded,
    Retracted,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Active => "active",
            Status::Superseded => "superseded",
            Status::Retracted => "retracted",
        }
    }

    fn parse(s: &str) -> Option<Status> {
        match s {
            "active" => Some(Status::Active),
            "superseded" => Some(Status::Superseded),
            "retracted" => Some(Status::Retracted),
            _ => None,
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a memory is visible. Global memories follow the user into every project;
/// project memories surface only inside their project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Scope {
    #[default]
    Global,
    Project(i64),
}

impl Scope {
    pub(crate) fn project_id(self) -> Option<i64> {
        match self {
            Scope::Global => None,
            Scope::Project(id) => Some(id),
        }
    }

    pub(crate) fn from_project_id(id: Option<i64>) -> Scope {
        id.map_or(Scope::Global, Scope::Project)
    }
}

impl serde::Serialize for Scope {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Scope::Global => s.serialize_str("global"),
            Scope::Project(id) => s.serialize_str(&format!("project:{id}")),
        }
    }
}

/// One stored memory, as read back from the database.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Memory {
    pub id: i64,
    pub kind: MemoryKind,
    pub body: String,
    pub scope: Scope,
    pub status: Status,
    /// The memory this one corrects.
    pub supersedes: Option<i64>,
    /// The correction that replaced this memory.
    pub superseded_by: Option<i64>,
    /// How many times the same text was remembered (dedup bumps this instead of inserting).
    pub seen_count: i64,
    pub recall_count: i64,
    /// Unix milliseconds.
    pub created_at: i64,
    pub last_seen_at: i64,
    pub valid_from: i64,
    pub valid_to: Option<i64>,
    pub retracted_at: Option<i64>,
    /// An anchored symbol changed or disappeared since the memory was written.
    pub stale: bool,
}

/// The column list every memory query selects, in the order [`Memory::from_row`] reads.
pub(crate) const MEMORY_COLUMNS: &str = "m.id, m.kind, m.body, m.project_id, m.status, m.supersedes, \
     m.superseded_by, m.seen_count, m.recall_count, m.created_at, m.last_seen_at, m.valid_from, \
     m.valid_to, m.retracted_at, \
     EXISTS (SELECT 1 FROM memory_anchors a WHERE a.memory_id = m.id AND a.stale_since IS NOT NULL)";

impl Memory {
    pub(crate) fn from_row(row: &Row<'_>) -> rusqlite::Result<Memory> {
        let kind: String = row.get(1)?;
        let status: String = row.get(4)?;
        Ok(Memory {
            id: row.get(0)?,
            kind: kind.parse().map_err(|e| bad_column(1, e))?,
            body: row.get(2)?,
            scope: Scope::from_project_id(row.get(3)?),
            status: Status::parse(&status)
                .ok_or_else(|| bad_column(4, format!("unknown status {status:?}")))?,
            supersedes: row.get(5)?,
            superseded_by: row.get(6)?,
            seen_count: row.get(7)?,
            recall_count: row.get(8)?,
            created_at: row.get(9)?,
            last_seen_at: row.get(10)?,
            valid_from: row.get(11)?,
            valid_to: row.get(12)?,
            retracted_at: row.get(13)?,
            stale: row.get(14)?,
        })
    }
}

fn bad_column(idx: usize, e: impl ToString) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        idx,
        rusqlite::types::Type::Text,
        e.to_string().into(),
    )
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
