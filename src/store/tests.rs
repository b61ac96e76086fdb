//! Unit tests of the store: private files in WAL mode, idempotent reopening, refusing a
//! newer database, concurrent first opens, rollback, and one snapshot per read.

use super::*;
use std::os::unix::fs::PermissionsExt;

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn open_creates_private_files_in_wal_mode_with_sqlite_vec() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("home/mira.db");
    let store = Store::open(&path).unwrap();
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    let (journal, vec): (String, String) = store
        .read(|c| {
            Ok((
                c.pragma_query_value(None, "journal_mode", |r| r.get(0))?,
                c.query_row("SELECT vec_version()", [], |r| r.get(0))?,
            ))
        })
        .unwrap();
    assert_eq!(journal, "wal");
    assert!(vec.starts_with('v'), "{vec}");
    assert_eq!(store.schema_version().unwrap(), *SCHEMA_VERSION);
    // -wal is created by the first write; it must be as private as the database.
    store
        .write(|tx| projects::ensure(tx, Path::new("/p"), "p"))
        .unwrap();
    assert_eq!(mode(&tmp.path().join("home/mira.db-wal")), 0o600);
}

#[test]
fn reopening_is_idempotent_and_keeps_data() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("mira.db");
    let id = Store::open(&path)
        .unwrap()
        .write(|tx| projects::ensure(tx, Path::new("/p"), "p"))
        .unwrap();
    let store = Store::open(&path).unwrap();
    assert_eq!(
        store.read(|c| projects::find(c, Path::new("/p"))).unwrap(),
        Some(id)
    );
}

#[test]
fn a_database_from_a_newer_mira_is_refused_with_a_clear_message() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("mira.db");
    drop(Store::open(&path).unwrap());
    let newer = *SCHEMA_VERSION + 3;
    rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", newer)
        .unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::TooNew { found, .. } if found == newer));
    let msg = err.to_string();
    assert!(
        msg.contains("newer Mira") && msg.contains("MIRA_HOME"),
        "{msg}"
    );
}

#[test]
fn threads_opening_a_fresh_database_at_once_all_succeed() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("mira.db");
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let path = path.clone();
            std::thread::spawn(move || Store::open(&path).map(|s| s.schema_version().unwrap()))
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap().unwrap(), *SCHEMA_VERSION);
    }
}

#[test]
fn failed_write_rolls_back() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(&tmp.path().join("mira.db")).unwrap();
    let r: Result<(), StoreError> = store.write(|tx| {
        projects::ensure(tx, Path::new("/gone"), "gone")?;
        Err(StoreError::Sql(rusqlite::Error::InvalidQuery))
    });
    assert!(r.is_err());
    assert_eq!(
        store
            .read(|c| projects::find(c, Path::new("/gone")))
            .unwrap(),
        None
    );
}

#[test]
fn unwritable_home_names_the_directory_and_the_fix() {
    let err = Store::open(Path::new("/proc/mira-cannot/mira.db")).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("/proc/mira-cannot") && msg.contains("MIRA_HOME"),
        "{msg}"
    );
}

#[test]
fn a_read_is_one_snapshot_even_while_another_process_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("mira.db");
    let store = Store::open(&db).unwrap();
    store
        .write(|tx| projects::ensure(tx, Path::new("/a"), "a"))
        .unwrap();
    let other = Store::open(&db).unwrap();
    let (first, second) = store
        .read(|c| {
            let count = |c: &rusqlite::Connection| {
                c.query_row("SELECT count(*) FROM projects", [], |r| r.get::<_, i64>(0))
            };
            let first = count(c)?;
            // Another connection (as another editor's process would) commits in between.
            other
                .write(|tx| projects::ensure(tx, Path::new("/b"), "b"))
                .unwrap();
            Ok((first, count(c)?))
        })
        .unwrap();
    assert_eq!(first, second, "both reads see the same snapshot");
    let after = store
        .read(|c| c.query_row("SELECT count(*) FROM projects", [], |r| r.get::<_, i64>(0)))
        .unwrap();
    assert_eq!(after, first + 1, "the next read sees the write");
}

/// Migration 10's FTS5 settings live in `code_fts`'s own config table, so a later migration
/// that rebuilds the table would drop them silently: the crawl's code-search stage would
/// cost its FTS5 CPU of before again (2.40-2.59 s against 2.02-2.07 s, docs/benchmarks.md).
#[test]
fn code_fts_keeps_its_bulk_write_settings() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(&tmp.path().join("mira.db")).unwrap();
    let setting = |k: &'static str| {
        store
            .read(|c| {
                c.query_row("SELECT v FROM code_fts_config WHERE k = ?1", [k], |r| {
                    r.get::<_, i64>(0)
                })
            })
            .unwrap()
    };
    assert_eq!(setting("hashsize"), 4 * 1024 * 1024);
    assert_eq!(setting("automerge"), 8);
}

/// What a write commits reaches the database file without that commit checkpointing: the
/// writing connection's autocheckpoint is the 32 MB backstop, the write is 2 MB (under
/// SQLite's default 4 MB too), and the store's checkpoint thread copies it.
#[test]
fn writes_reach_the_database_file_from_beside_the_writer() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("mira.db");
    let store = Store::open(&path).unwrap();
    let empty = std::fs::metadata(&path).unwrap().len();
    store
        .write(|tx| {
            tx.execute_batch(
                "CREATE TABLE filler (b BLOB);
                 WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 512)
                 INSERT INTO filler SELECT randomblob(4096) FROM n;",
            )
        })
        .unwrap();
    let own: i64 = store
        .read(|c| c.pragma_query_value(None, "wal_autocheckpoint", |r| r.get(0)))
        .unwrap();
    assert_eq!(own, checkpoint::BACKSTOP_PAGES);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while std::fs::metadata(&path).unwrap().len() < empty + 2_000_000 {
        assert!(
            std::time::Instant::now() < deadline,
            "nothing was checkpointed into the database file in 20 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}
