//! Memories about code point at symbols (path + name + content hash). The index reports what
//! it sees after (re)parsing a file, and an anchor whose symbol changed or vanished goes stale;
//! recall shows such memories flagged so nobody trusts an outdated note about code.

use rusqlite::{Connection, Transaction, params};

use super::MemoryError;
use super::model::{Scope, now_ms};

/// A symbol a memory is about, as the index identifies it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Anchor {
    /// Relative to the project root, `/`-separated.
    pub path: String,
    /// The symbol's (qualified) name as the index stores it.
    pub symbol: String,
    /// The index's content hash of the symbol when the memory was written.
    pub content_hash: String,
}

/// An anchor with its current state.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AnchorState {
    pub anchor: Anchor,
    pub stale_since: Option<i64>,
    pub gone: bool,
}

pub(crate) fn attach(
    tx: &Transaction<'_>,
    memory_id: i64,
    scope: Scope,
    a: &Anchor,
) -> Result<(), MemoryError> {
    let Scope::Project(project) = scope else {
        return Err(MemoryError::Invalid {
            field: "anchors",
            message: "a memory anchored to code must be project-scoped".into(),
        });
    };
    if a.path.is_empty() || a.symbol.is_empty() {
        return Err(MemoryError::Invalid {
            field: "anchor",
            message: "path and symbol must not be empty".into(),
        });
    }
    // Re-anchoring to the symbol's current hash makes the anchor fresh again.
    tx.execute(
        "INSERT INTO memory_anchors (memory_id, project_id, path, symbol, content_hash)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (memory_id, path, symbol)
         DO UPDATE SET content_hash = excluded.content_hash, stale_since = NULL, gone = 0",
        params![memory_id, project, a.path, a.symbol, a.content_hash],
    )?;
    Ok(())
}

pub(crate) fn copy(tx: &Transaction<'_>, from: i64, to: i64) -> Result<(), MemoryError> {
    tx.execute(
        "INSERT OR IGNORE INTO memory_anchors
                (memory_id, project_id, path, symbol, content_hash, stale_since, gone)
         SELECT ?2, project_id, path, symbol, content_hash, stale_since, gone
           FROM memory_anchors WHERE memory_id = ?1",
        params![from, to],
    )?;
    Ok(())
}

/// The index saw `symbol` in `path` with `content_hash` (`None`: the symbol is gone).
/// Anchors whose hash differs become stale; anchors that match again become fresh.
/// Returns how many anchors changed state. Cheap when nothing is anchored there (one indexed probe).
pub fn observe_symbol(
    tx: &Transaction<'_>,
    project: i64,
    path: &str,
    symbol: &str,
    content_hash: Option<&str>,
) -> Result<usize, MemoryError> {
    let now = now_ms();
    let changed = match content_hash {
        Some(hash) => {
            tx.execute(
                "UPDATE memory_anchors SET stale_since = ?5, gone = 0
                  WHERE project_id = ?1 AND path = ?2 AND symbol = ?3
                    AND content_hash != ?4 AND (stale_since IS NULL OR gone = 1)",
                params![project, path, symbol, hash, now],
            )? + tx.execute(
                "UPDATE memory_anchors SET stale_since = NULL, gone = 0
                  WHERE project_id = ?1 AND path = ?2 AND symbol = ?3
                    AND content_hash = ?4 AND stale_since IS NOT NULL",
                params![project, path, symbol, hash],
            )?
        }
        None => tx.execute(
            "UPDATE memory_anchors SET stale_since = coalesce(stale_since, ?4), gone = 1
              WHERE project_id = ?1 AND path = ?2 AND symbol = ?3 AND gone = 0",
            params![project, path, symbol, now],
        )?,
    };
    Ok(changed)
}

/// The index re-parsed `path` and found exactly `symbols` (name, content hash). Every anchor in
/// that file is checked: changed hashes and missing symbols go stale. Pass an empty slice when
/// the file was deleted.
pub fn observe_file(
    tx: &Transaction<'_>,
    project: i64,
    path: &str,
    symbols: &[(&str, &str)],
) -> Result<usize, MemoryError> {
    let anchored: Vec<String> = {
        let mut stmt = tx.prepare_cached(
            "SELECT DISTINCT symbol FROM memory_anchors WHERE project_id = ?1 AND path = ?2",
        )?;
        stmt.query_map(params![project, path], |r| r.get(0))?
            .collect::<Result<_, _>>()?
    };
    let mut changed = 0;
    for name in anchored {
        let hash = symbols.iter().find(|(n, _)| *n == name).map(|(_, h)| *h);
        changed += observe_symbol(tx, project, path, &name, hash)?;
    }
    Ok(changed)
}

/// The anchors of one memory.
pub fn of_memory(conn: &Connection, memory_id: i64) -> Result<Vec<AnchorState>, MemoryError> {
    let mut stmt = conn.prepare_cached(
        "SELECT path, symbol, content_hash, stale_since, gone FROM memory_anchors
          WHERE memory_id = ?1 ORDER BY path, symbol",
    )?;
    let rows = stmt.query_map([memory_id], |r| {
        Ok(AnchorState {
            anchor: Anchor {
                path: r.get(0)?,
                symbol: r.get(1)?,
                content_hash: r.get(2)?,
            },
            stale_since: r.get(3)?,
            gone: r.get(4)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Active memories anchored to this symbol (for hover: "Mira remembers: …").
pub fn memories_for_symbol(
    conn: &Connection,
    project: i64,
    path: &str,
    symbol: &str,
) -> Result<Vec<super::Memory>, MemoryError> {
    let sql = format!(
        "SELECT {} FROM memories m
          WHERE m.status = 'active' AND m.id IN
                (SELECT memory_id FROM memory_anchors WHERE project_id = ?1 AND path = ?2 AND symbol = ?3)
          ORDER BY m.id",
        super::model::MEMORY_COLUMNS
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params![project, path, symbol], super::Memory::from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The files holding anchors in a project (what the index is asked to watch).
pub fn anchored_paths(conn: &Connection, project: i64) -> Result<Vec<String>, MemoryError> {
    let mut stmt =
        conn.prepare_cached("SELECT DISTINCT path FROM memory_anchors WHERE project_id = ?1")?;
    let rows = stmt.query_map([project], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The anchors of several memories at once (recall output names them).
pub fn of_memories(
    conn: &Connection,
    ids: &[i64],
) -> Result<std::collections::HashMap<i64, Vec<AnchorState>>, MemoryError> {
    let mut out = std::collections::HashMap::new();
    for &id in ids {
        let a = of_memory(conn, id)?;
        if !a.is_empty() {
            out.insert(id, a);
        }
    }
    Ok(out)
}
