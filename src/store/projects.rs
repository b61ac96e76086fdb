//! Projects Mira has seen. Code context is scoped to one; memory and conversation are not.

use rusqlite::{Connection, OptionalExtension, params};
use std::path::Path;

/// The id of the project rooted at `root` (inserted on first sight).
pub fn ensure(conn: &Connection, root: &Path, name: &str) -> rusqlite::Result<i64> {
    let root = root.to_string_lossy();
    let now = super::now_millis();
    conn.execute(
        "INSERT INTO projects(root, name, created_at, last_seen_at) VALUES (?1, ?2, ?3, ?3)
         ON CONFLICT(root) DO UPDATE SET last_seen_at = excluded.last_seen_at",
        params![root, name, now],
    )?;
    conn.query_row("SELECT id FROM projects WHERE root = ?1", [root], |r| {
        r.get(0)
    })
}

pub fn find(conn: &Connection, root: &Path) -> rusqlite::Result<Option<i64>> {
    conn.query_row(
        "SELECT id FROM projects WHERE root = ?1",
        [root.to_string_lossy()],
        |r| r.get(0),
    )
    .optional()
}
