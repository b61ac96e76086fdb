//! A `mira index` killed with SIGKILL in the middle of its cold crawl leaves a consistent
//! database (every file whole or absent, search chunks matching symbols), and the next
//! crawl completes it (issue 13: the writer's batching must stay crash-safe).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FILES: usize = 6000;
const FNS_PER_FILE: usize = 12;

fn mira(home: &Path, cwd: &Path) -> Command {
    let mut c = crate::support::mira(crate::support::home_env(home), cwd);
    c.stdout(Stdio::null()).stderr(Stdio::null());
    c
}

fn count(conn: &rusqlite::Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// Whole files only: each stored file has all its symbols, each symbol its chunk.
fn assert_consistent(conn: &rusqlite::Connection, when: &str) {
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok", "{when}: integrity_check");
    let orphans = count(
        conn,
        "SELECT count(*) FROM symbols s LEFT JOIN files f ON f.id = s.file_id WHERE f.id IS NULL",
    );
    assert_eq!(orphans, 0, "{when}: symbols without their file");
    let partial = count(
        conn,
        &format!(
            "SELECT count(*) FROM (SELECT f.id FROM files f LEFT JOIN symbols s ON s.file_id = f.id
             GROUP BY f.id HAVING count(s.id) != {FNS_PER_FILE})"
        ),
    );
    assert_eq!(
        partial, 0,
        "{when}: files stored with only some of their symbols"
    );
    conn.execute(
        "INSERT INTO code_fts (code_fts) VALUES ('integrity-check')",
        [],
    )
    .unwrap_or_else(|e| panic!("{when}: code_fts integrity-check: {e}"));
    let chunks = count(
        conn,
        "SELECT count(*) FROM code_fts WHERE code_fts MATCH 'crashsafe'",
    );
    let symbols = count(conn, "SELECT count(*) FROM symbols");
    assert_eq!(
        chunks, symbols,
        "{when}: one search chunk per stored symbol"
    );
}

#[test]
fn a_crawl_killed_mid_way_leaves_a_consistent_database_that_the_next_crawl_completes() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let p = project.path();
    std::fs::create_dir_all(p.join(".git")).unwrap();
    for i in 0..FILES {
        let body: String = (0..FNS_PER_FILE)
            .map(|j| format!("/// Crashsafe helper {j}.\npub fn crashsafe_{i}_{j}(x: u32) -> u32 {{\n    x + {j}\n}}\n"))
            .collect();
        let dir = p.join(format!("m{}", i / 500));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("f{i}.rs")), body).unwrap();
    }
    let db = home.path().join("mira/mira.db");

    let mut child = mira(home.path(), p).arg("index").spawn().unwrap();
    // Kill it once the first batch is committed and before the last.
    let start = Instant::now();
    let stored_at_kill = loop {
        let stored = rusqlite::Connection::open(&db)
            .ok()
            .and_then(|c| {
                c.query_row("SELECT count(*) FROM files", [], |r| r.get::<_, i64>(0))
                    .ok()
            })
            .unwrap_or(0);
        if stored > 0 {
            child.kill().unwrap();
            break stored;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "mira index finished before the test saw its first commit: the project is too small to kill it mid-way"
        );
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no commit within 2 minutes"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    child.wait().unwrap();

    let conn = rusqlite::Connection::open(&db).unwrap();
    let stored = count(&conn, "SELECT count(*) FROM files");
    assert!(
        (stored_at_kill..FILES as i64).contains(&stored),
        "the kill landed mid-crawl: {stored} of {FILES} files stored"
    );
    assert_consistent(&conn, "after SIGKILL");
    drop(conn);

    let done = mira(home.path(), p).arg("index").status().unwrap();
    assert!(done.success(), "the next mira index succeeds");
    let conn = rusqlite::Connection::open(&db).unwrap();
    assert_eq!(count(&conn, "SELECT count(*) FROM files"), FILES as i64);
    assert_eq!(
        count(&conn, "SELECT count(*) FROM symbols"),
        (FILES * FNS_PER_FILE) as i64
    );
    assert_consistent(&conn, "after the next crawl");
}
