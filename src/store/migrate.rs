//! Forward-only migrations from the top-level `migrations/NN-name/up.sql`, embedded at build
//! time. The schema version is `PRAGMA user_version`.
//!
//! All pending migrations run in one `BEGIN IMMEDIATE` transaction that re-reads the version
//! after taking the write lock: two editors starting at once on a fresh database must not
//! both apply migration 1.

use super::StoreError;
use include_dir::{Dir, include_dir};
use rusqlite::{Connection, TransactionBehavior};
use std::path::Path;
use std::sync::LazyLock;

static MIGRATIONS_DIR: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/migrations");

struct Migration {
    id: u32,
    name: &'static str,
    sql: &'static str,
}

static MIGRATIONS: LazyLock<Vec<Migration>> = LazyLock::new(load);

/// The schema version this build of Mira migrates to.
pub static SCHEMA_VERSION: LazyLock<u32> = LazyLock::new(|| MIGRATIONS.len() as u32);

fn load() -> Vec<Migration> {
    let mut out: Vec<Migration> = MIGRATIONS_DIR
        .dirs()
        .filter_map(|d| {
            let name = d.path().file_name()?.to_str()?;
            let id = name.split('-').next()?.parse().ok()?;
            let sql = d.get_file(d.path().join("up.sql"))?.contents_utf8()?;
            Some(Migration { id, name, sql })
        })
        .collect();
    out.sort_by_key(|m| m.id);
    // Holes or duplicates are a build mistake, caught by the unit test below and here.
    for (i, m) in out.iter().enumerate() {
        assert_eq!(
            m.id as usize,
            i + 1,
            "migration ids must run 1, 2, 3…: {}",
            m.name
        );
    }
    out
}

pub fn schema_version(conn: &Connection) -> rusqlite::Result<u32> {
    conn.pragma_query_value(None, "user_version", |r| r.get(0))
}

pub(super) fn to_latest(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let known = *SCHEMA_VERSION;
    // Cheap check first, without the write lock: the common case is "already current".
    let found = schema_version(conn)?;
    if found > known {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found,
            known,
        });
    }
    if found == known {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let found = schema_version(&tx)?;
    if found > known {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found,
            known,
        });
    }
    for m in MIGRATIONS.iter().skip(found as usize) {
        tx.execute_batch(m.sql)
            .map_err(|source| StoreError::Migration {
                path: path.to_path_buf(),
                name: m.name.to_string(),
                source,
            })?;
        tracing::info!(migration = m.name, "applied");
    }
    tx.pragma_update(None, "user_version", known)?;
    tx.execute(
        "INSERT INTO meta(key, value) VALUES ('migrated_by', ?1)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [env!("CARGO_PKG_VERSION")],
    )?;
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn migrations_are_consecutive_and_non_empty() {
        let all = &*super::MIGRATIONS;
        assert!(!all.is_empty());
        assert!(all.iter().all(|m| !m.sql.trim().is_empty()));
    }
}
