//! Processes attached to the store, so a second editor on the same database is visible.

use rusqlite::{Connection, params};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionKind {
    Lsp,
    Cli,
}

impl SessionKind {
    fn as_sql(self) -> &'static str {
        match self {
            SessionKind::Lsp => "lsp",
            SessionKind::Cli => "cli",
        }
    }
}

pub fn start(
    conn: &Connection,
    kind: SessionKind,
    client: Option<&str>,
    project_id: Option<i64>,
) -> rusqlite::Result<i64> {
    conn.execute(
        "INSERT INTO sessions(pid, kind, client, project_id, started_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            std::process::id(),
            kind.as_sql(),
            client,
            project_id,
            super::now_millis()
        ],
    )?;
    Ok(conn.last_insert_rowid())
}

pub fn end(conn: &Connection, id: i64) -> rusqlite::Result<()> {
    conn.execute(
        "UPDATE sessions SET ended_at = ?2 WHERE id = ?1 AND ended_at IS NULL",
        params![id, super::now_millis()],
    )?;
    Ok(())
}

/// Sessions not marked ended whose process is still alive (a killed editor leaves its row
/// open; checking the pid keeps `mira doctor` honest about it).
pub fn live(conn: &Connection) -> rusqlite::Result<Vec<(i64, u32, String)>> {
    let mut stmt = conn.prepare(
        "SELECT id, pid, COALESCE(client, kind) FROM sessions WHERE ended_at IS NULL ORDER BY id",
    )?;
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<Vec<(i64, u32, String)>>>()?;
    Ok(rows
        .into_iter()
        .filter(|(_, pid, _)| pid_alive(*pid))
        .collect())
}

fn pid_alive(pid: u32) -> bool {
    // Signal 0 checks existence without sending anything.
    unsafe { libc::kill(pid as libc::pid_t, 0) == 0 }
}
