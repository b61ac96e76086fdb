//! Edit proposals: a model edit stored for the user to apply or reject later, for clients
//! without a diff preview (Helix) when `edits.confirm = true`. Applying checks that the file
//! still holds exactly the text the edit was computed against.

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::agent::FileEdit;
use crate::agent::conversation::now_ms;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProposalStatus {
    Pending,
    Applied,
    Rejected,
    Stale,
}

impl ProposalStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ProposalStatus::Pending => "pending",
            ProposalStatus::Applied => "applied",
            ProposalStatus::Rejected => "rejected",
            ProposalStatus::Stale => "stale",
        }
    }

    fn parse(s: &str) -> ProposalStatus {
        match s {
            "applied" => ProposalStatus::Applied,
            "rejected" => ProposalStatus::Rejected,
            "stale" => ProposalStatus::Stale,
            _ => ProposalStatus::Pending,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Proposal {
    pub id: i64,
    pub status: ProposalStatus,
    pub path: std::path::PathBuf,
    pub base_hash: String,
    pub new_text: String,
    pub diff: String,
}

pub fn hash(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex().to_string()
}

/// Store `edit` as a pending proposal of the turn with public id `turn`.
pub fn create(tx: &Transaction, turn: &str, edit: &FileEdit) -> rusqlite::Result<i64> {
    tx.execute(
        "INSERT INTO proposals (turn_id, created_at, status, path, base_hash, new_text, diff)
         VALUES ((SELECT id FROM turns WHERE public_id = ?1), ?2, 'pending', ?3, ?4, ?5, ?6)",
        params![
            turn,
            now_ms(),
            edit.path.to_string_lossy(),
            hash(&edit.base_text),
            edit.new_text,
            edit.diff
        ],
    )?;
    Ok(tx.last_insert_rowid())
}

pub fn get(conn: &Connection, id: i64) -> rusqlite::Result<Option<Proposal>> {
    conn.query_row(
        "SELECT id, status, path, base_hash, new_text, diff FROM proposals WHERE id = ?1",
        [id],
        |r| {
            Ok(Proposal {
                id: r.get(0)?,
                status: ProposalStatus::parse(&r.get::<_, String>(1)?),
                path: std::path::PathBuf::from(r.get::<_, String>(2)?),
                base_hash: r.get(3)?,
                new_text: r.get(4)?,
                diff: r.get(5)?,
            })
        },
    )
    .optional()
}

/// Every pending proposal: (id, path), oldest first (code actions offer them per file).
pub fn pending(conn: &Connection) -> rusqlite::Result<Vec<(i64, std::path::PathBuf)>> {
    let mut stmt =
        conn.prepare_cached("SELECT id, path FROM proposals WHERE status = 'pending' ORDER BY id")?;
    let rows = stmt.query_map([], |r| {
        Ok((r.get(0)?, std::path::PathBuf::from(r.get::<_, String>(1)?)))
    })?;
    rows.collect()
}

/// Move a pending proposal to `status`; false when it was not pending any more.
pub fn settle(tx: &Transaction, id: i64, status: ProposalStatus) -> rusqlite::Result<bool> {
    Ok(tx.execute(
        "UPDATE proposals SET status = ?2 WHERE id = ?1 AND status = 'pending'",
        params![id, status.as_str()],
    )? == 1)
}

/// How a proposal appears in the transcript.
pub fn transcript_block(id: i64, shown_path: &str, diff: &str) -> String {
    format!(
        "\n\n**Proposed edit #{id}** to `{shown_path}` — apply with `mira.applyProposal {id}`, \
         reject with `mira.rejectProposal {id}`:\n\n```diff\n{}\n```\n\n",
        diff.trim_end()
    )
}
