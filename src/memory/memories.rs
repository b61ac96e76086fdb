//! Writing memories: remember (with dedup), correct (supersession), forget (retraction), restore.
//! Every function takes a transaction so callers decide the transaction boundary; every check
//! happens before the first write, so a rejected call writes nothing.

use rusqlite::{OptionalExtension, Transaction, params};

use super::model::{MEMORY_COLUMNS, Memory, MemoryKind, Scope, Status, now_ms};
use super::text::{identifier_tokens, norm_hash};
use super::{MemoryError, anchors};

/// A memory holds a fact, not a document: longer text is refused with advice.
pub const MAX_BODY_BYTES: usize = 16 * 1024;

/// What the caller wants remembered.
#[derive(Debug, Clone)]
pub struct NewMemory {
    pub body: String,
    pub kind: MemoryKind,
    pub scope: Scope,
    /// Code symbols this memory is about; it goes stale when one of them changes.
    pub anchors: Vec<anchors::Anchor>,
}

impl NewMemory {
    pub fn new(body: impl Into<String>, kind: MemoryKind, scope: Scope) -> NewMemory {
        NewMemory {
            body: body.into(),
            kind,
            scope,
            anchors: Vec::new(),
        }
    }
}

/// Whether `remember` created a memory or recognised a repeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Created,
    /// Same normalised text already active in that scope: its seen_count was bumped.
    Repeated,
    /// An active memory in that scope is nearly identical (embedding cosine ≥
    /// [`SIMILAR_COSINE`]) and the new text adds no word to it: its seen_count was bumped.
    Similar,
}

/// Embedding similarity above which a new memory may be a rewording of an existing one
/// (then [`super::text::adds_nothing`] decides: values and extra details are never merged away).
pub const SIMILAR_COSINE: f32 = 0.9;

#[derive(Debug, Clone, serde::Serialize)]
pub struct Remembered {
    pub outcome: Outcome,
    pub memory: Memory,
    /// The memory this correction superseded (given by id, or found: see `supersede.rs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded: Option<Memory>,
    /// A correction without an id that could correct several memories: none was superseded.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ambiguous: Vec<Memory>,
}

impl Remembered {
    pub fn new(outcome: Outcome, memory: Memory) -> Remembered {
        Remembered {
            outcome,
            memory,
            superseded: None,
            ambiguous: Vec::new(),
        }
    }

    /// The one wording of the outcome, shown by the CLI, the LSP and the model's tool.
    pub fn describe(&self) -> String {
        let m = &self.memory;
        let scope = match m.scope {
            Scope::Global => "global",
            Scope::Project(_) => "project",
        };
        let mut s = match self.outcome {
            Outcome::Created => format!("Remembered #{} ({}, {scope})", m.id, m.kind),
            Outcome::Repeated => {
                format!(
                    "Already remembered as #{} (seen {} times)",
                    m.id, m.seen_count
                )
            }
            Outcome::Similar => format!(
                "Already remembered in other words as #{} (seen {} times): {}",
                m.id,
                m.seen_count,
                short(&m.body, 80)
            ),
        };
        if let Some(old) = &self.superseded {
            s.push_str(&format!(
                "; supersedes #{}: {}",
                old.id,
                short(&old.body, 80)
            ));
        }
        if !self.ambiguous.is_empty() {
            let named: Vec<String> = self
                .ambiguous
                .iter()
                .map(|a| format!("#{} ({})", a.id, short(&a.body, 50)))
                .collect();
            s.push_str(&format!(
                "; it may correct {}: superseded none of them. Say which with --corrects ID \
                 (`corrects` in the editor and the model's tool)",
                named.join(" or ")
            ));
        }
        s
    }
}

/// One line of at most `max` characters.
pub fn short(s: &str, max: usize) -> String {
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        format!(
            "{}…",
            flat.chars().take(max.saturating_sub(1)).collect::<String>()
        )
    }
}

/// Validates and cleans memory text. Public so adapters can reject before opening a transaction.
pub fn validate_body(body: &str) -> Result<&str, MemoryError> {
    let trimmed = body.trim();
    if trimmed.is_empty() {
        return Err(MemoryError::Empty);
    }
    if trimmed.len() > MAX_BODY_BYTES {
        return Err(MemoryError::TooLong {
            len: trimmed.len(),
            max: MAX_BODY_BYTES,
        });
    }
    Ok(trimmed)
}

/// Stores a memory, or bumps the counter of the identical active memory in the same scope.
pub fn remember(tx: &Transaction<'_>, new: &NewMemory) -> Result<Remembered, MemoryError> {
    remember_with_vector(tx, new, None)
}

/// [`remember`] when the new text's embedding is known: also recognises a near-identical
/// rewording of an active memory in the same scope (see [`Outcome::Similar`]), and stores the
/// vector right away so the background embedder has nothing left to do.
pub fn remember_with_vector(
    tx: &Transaction<'_>,
    new: &NewMemory,
    vector: Option<(&super::vectors::VectorSpace, &[f32])>,
) -> Result<Remembered, MemoryError> {
    let body = crate::redact::redact(validate_body(&new.body)?);
    let body = body.as_ref();
    if !new.anchors.is_empty() && new.scope == Scope::Global {
        return Err(MemoryError::Invalid {
            field: "anchors",
            message: "a memory anchored to code must be project-scoped".into(),
        });
    }
    let hash = norm_hash(body);
    let now = now_ms();
    if let Some(existing) = active_with_hash(tx, new.scope, &hash)? {
        tx.execute(
            "UPDATE memories SET seen_count = seen_count + 1, last_seen_at = ?2 WHERE id = ?1",
            params![existing, now],
        )?;
        for a in &new.anchors {
            anchors::attach(tx, existing, new.scope, a)?;
        }
        return Ok(Remembered::new(Outcome::Repeated, get(tx, existing)?));
    }
    if let Some((space, v)) = vector {
        for (candidate, cosine) in super::vectors::nearest_in_scope(tx, space, v, new.scope, 3)? {
            if cosine < SIMILAR_COSINE {
                break;
            }
            let existing = get(tx, candidate)?;
            if super::text::adds_nothing(body, &existing.body) {
                tx.execute(
                    "UPDATE memories SET seen_count = seen_count + 1, last_seen_at = ?2 WHERE id = ?1",
                    params![candidate, now],
                )?;
                for a in &new.anchors {
                    anchors::attach(tx, candidate, new.scope, a)?;
                }
                return Ok(Remembered::new(Outcome::Similar, get(tx, candidate)?));
            }
        }
    }
    let id = insert(tx, body, new.kind, new.scope, &hash, None, now)?;
    for a in &new.anchors {
        anchors::attach(tx, id, new.scope, a)?;
    }
    if let Some((space, v)) = vector {
        super::vectors::store(tx, space, id, body, v)?;
    }
    Ok(Remembered::new(Outcome::Created, get(tx, id)?))
}

/// Records that `old_id` was wrong and `body` is right. The old memory is kept, marked
/// superseded, with `valid_to` set; it never surfaces in recall again. The correction inherits
/// the old memory's scope and anchors.
pub fn correct(tx: &Transaction<'_>, old_id: i64, body: &str) -> Result<Memory, MemoryError> {
    let body = crate::redact::redact(validate_body(body)?);
    let body = body.as_ref();
    let old = get(tx, old_id)?;
    match old.status {
        Status::Active => {}
        Status::Superseded => {
            return Err(MemoryError::WrongStatus {
                id: old_id,
                status: old.status,
                action: "corrected",
                hint: old
                    .superseded_by
                    .map(|n| format!("; it was already corrected by memory {n}: correct that one"))
                    .unwrap_or_default(),
            });
        }
        Status::Retracted => {
            return Err(MemoryError::WrongStatus {
                id: old_id,
                status: old.status,
                action: "corrected",
                hint: "; restore it first (`mira forget --restore ID`) or remember a new fact"
                    .into(),
            });
        }
    }
    let hash = norm_hash(body);
    if hash == norm_hash(&old.body) {
        return Err(MemoryError::Invalid {
            field: "correction",
            message: format!("it has the same text as memory {old_id}"),
        });
    }
    let now = now_ms();
    // If the corrected text is already remembered in this scope, that memory becomes the
    // correction instead of a duplicate.
    let new_id = match active_with_hash(tx, old.scope, &hash)? {
        Some(existing) => {
            tx.execute(
                "UPDATE memories SET seen_count = seen_count + 1, last_seen_at = ?2,
                        supersedes = coalesce(supersedes, ?3) WHERE id = ?1",
                params![existing, now, old_id],
            )?;
            existing
        }
        None => insert(
            tx,
            body,
            MemoryKind::Correction,
            old.scope,
            &hash,
            Some(old_id),
            now,
        )?,
    };
    tx.execute(
        "UPDATE memories SET status = 'superseded', superseded_by = ?2, valid_to = ?3 WHERE id = ?1",
        params![old_id, new_id, now],
    )?;
    super::vectors::remove(tx, old_id)?;
    anchors::copy(tx, old_id, new_id)?;
    get(tx, new_id)
}

/// Retracts a memory: kept, excluded from recall, restorable.
pub fn forget(tx: &Transaction<'_>, id: i64) -> Result<Memory, MemoryError> {
    let m = get(tx, id)?;
    if m.status != Status::Active {
        let hint = match (m.status, m.superseded_by) {
            (Status::Superseded, Some(n)) => format!("; it was corrected by memory {n}"),
            (Status::Retracted, _) => "; it is already forgotten".to_string(),
            _ => String::new(),
        };
        return Err(MemoryError::WrongStatus {
            id,
            status: m.status,
            action: "forgotten",
            hint,
        });
    }
    tx.execute(
        "UPDATE memories SET status = 'retracted', retracted_at = ?2 WHERE id = ?1",
        params![id, now_ms()],
    )?;
    super::vectors::remove(tx, id)?;
    get(tx, id)
}

/// Undoes [`forget`].
pub fn restore(tx: &Transaction<'_>, id: i64) -> Result<Memory, MemoryError> {
    let m = get(tx, id)?;
    if m.status != Status::Retracted {
        return Err(MemoryError::WrongStatus {
            id,
            status: m.status,
            action: "restored",
            hint: "; only forgotten memories can be restored".into(),
        });
    }
    if let Some(existing) = active_with_hash(tx, m.scope, &norm_hash(&m.body))? {
        return Err(MemoryError::DuplicateActive { id, existing });
    }
    tx.execute(
        "UPDATE memories SET status = 'active', retracted_at = NULL WHERE id = ?1",
        params![id],
    )?;
    get(tx, id)
}

/// Counts a use of these memories (the agent calls this when it injects them into a prompt).
pub fn mark_used(tx: &Transaction<'_>, ids: &[i64]) -> Result<(), MemoryError> {
    let mut stmt =
        tx.prepare_cached("UPDATE memories SET recall_count = recall_count + 1 WHERE id = ?1")?;
    for id in ids {
        stmt.execute([id])?;
    }
    Ok(())
}

/// One memory by id, whatever its status.
pub fn get(conn: &rusqlite::Connection, id: i64) -> Result<Memory, MemoryError> {
    conn.query_row(
        &format!("SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id = ?1"),
        [id],
        Memory::from_row,
    )
    .optional()?
    .ok_or(MemoryError::NotFound(id))
}

/// What [`list`] returns.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    /// Inside a project: its memories plus global ones. `None`: global ones only.
    pub project: Option<i64>,
    /// Also list superseded and retracted memories (an audit view).
    pub include_inactive: bool,
    /// Only memories in this state (wins over `include_inactive`): the forgotten ones a
    /// client offers to restore, say.
    pub status: Option<Status>,
    pub kind: Option<MemoryKind>,
    pub limit: usize,
}

/// How many active memories are visible from `project` (its own and the global ones).
pub fn count_active(
    conn: &rusqlite::Connection,
    project: Option<i64>,
) -> Result<usize, MemoryError> {
    let n: i64 = conn.query_row(
        "SELECT COUNT(*) FROM memories
          WHERE (project_id IS NULL OR project_id = ?1) AND status = 'active'",
        params![project],
        |r| r.get(0),
    )?;
    Ok(n as usize)
}

/// Memories visible from `filter.project`, newest first.
pub fn list(conn: &rusqlite::Connection, filter: &ListFilter) -> Result<Vec<Memory>, MemoryError> {
    let sql = format!(
        "SELECT {MEMORY_COLUMNS} FROM memories m
          WHERE (m.project_id IS NULL OR m.project_id = ?1)
            AND (CASE WHEN ?5 IS NULL THEN ?2 OR m.status = 'active' ELSE m.status = ?5 END)
            AND (?3 IS NULL OR m.kind = ?3)
          ORDER BY m.last_seen_at DESC, m.id DESC
          LIMIT ?4"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let limit = i64::try_from(filter.limit).unwrap_or(i64::MAX);
    let rows = stmt.query_map(
        params![
            filter.project,
            filter.include_inactive,
            filter.kind.map(MemoryKind::as_str),
            limit,
            filter.status.map(Status::as_str)
        ],
        Memory::from_row,
    )?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The active memories of these kinds in scope (global and the project's), newest first:
/// the standing corrections and preferences every turn carries. Unlike [`list`] it reaches
/// them through `memories_scope`, not by scanning every memory.
pub fn active_of_kinds(
    conn: &rusqlite::Connection,
    project: Option<i64>,
    kinds: &[MemoryKind],
    limit: usize,
) -> Result<Vec<Memory>, MemoryError> {
    let marks: Vec<String> = (0..kinds.len()).map(|i| format!("?{}", i + 3)).collect();
    let sql = format!(
        "SELECT {MEMORY_COLUMNS} FROM memories m
          WHERE (m.project_id IS NULL OR m.project_id = ?1)
            AND m.status = 'active'
            AND m.kind IN ({})
          ORDER BY m.created_at DESC, m.id DESC
          LIMIT ?2",
        marks.join(", ")
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut values: Vec<rusqlite::types::Value> = vec![
        project.into(),
        i64::try_from(limit).unwrap_or(i64::MAX).into(),
    ];
    values.extend(kinds.iter().map(|k| k.as_str().to_string().into()));
    let rows = stmt.query_map(rusqlite::params_from_iter(values), Memory::from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn active_with_hash(
    conn: &rusqlite::Connection,
    scope: Scope,
    hash: &[u8; 32],
) -> rusqlite::Result<Option<i64>> {
    conn.query_row(
        "SELECT id FROM memories
          WHERE coalesce(project_id, 0) = coalesce(?1, 0) AND norm_hash = ?2 AND status = 'active'",
        params![scope.project_id(), &hash[..]],
        |r| r.get(0),
    )
    .optional()
}

fn insert(
    tx: &Transaction<'_>,
    body: &str,
    kind: MemoryKind,
    scope: Scope,
    hash: &[u8; 32],
    supersedes: Option<i64>,
    now: i64,
) -> Result<i64, MemoryError> {
    tx.execute(
        "INSERT INTO memories (kind, body, idents, project_id, norm_hash, supersedes,
                               created_at, last_seen_at, valid_from)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?7)",
        params![
            kind.as_str(),
            body,
            identifier_tokens(body),
            scope.project_id(),
            &hash[..],
            supersedes,
            now
        ],
    )?;
    let id = tx.last_insert_rowid();
    link_neighbour(tx, id, body, scope, now)?;
    Ok(id)
}

/// Memories written this close together are one conversation: each carries its neighbours'
/// words in its `context` column (searched with a low weight, see `recall::bm25_ids`).
pub(crate) const NEIGHBOUR_WINDOW_MS: i64 = 10 * 60 * 1000;
/// Characters of a neighbour that go into the context (a reply rarely needs more).
const NEIGHBOUR_CHARS: usize = 400;

fn link_neighbour(
    tx: &Transaction<'_>,
    id: i64,
    body: &str,
    scope: Scope,
    now: i64,
) -> Result<(), MemoryError> {
    let prev: Option<(i64, String)> = tx
        .query_row(
            // The last rows by rowid only: the scope index would read every memory of the
            // scope and sort them, on every write.
            "SELECT id, body FROM (
                 SELECT id, body, project_id, status, created_at FROM memories
                  WHERE id < ?1 ORDER BY id DESC LIMIT 64)
              WHERE project_id IS ?2 AND status = 'active' AND created_at >= ?3
              ORDER BY id DESC LIMIT 1",
            params![id, scope.project_id(), now - NEIGHBOUR_WINDOW_MS],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let Some((prev_id, prev_body)) = prev else {
        return Ok(());
    };
    let clip = |t: &str| -> String { t.chars().take(NEIGHBOUR_CHARS).collect() };
    tx.execute(
        "UPDATE memories SET context = ?2 WHERE id = ?1",
        params![id, clip(&prev_body)],
    )?;
    tx.execute(
        "UPDATE memories SET context = trim(context || char(10) || ?2) WHERE id = ?1",
        params![prev_id, clip(body)],
    )?;
    Ok(())
}
