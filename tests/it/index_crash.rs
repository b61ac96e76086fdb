//! A `mira index` killed with SIGKILL in the middle of its cold crawl leaves a consistent
//! database (every file whole or absent, search chunks matching symbols), and the next
//! crawl completes it (issue 13: the writer's batching must stay crash-safe), whether the
//! kill lands while symbols are written or while code-search chunks are (issue 22).

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
    // Chunks are stored stemmed (`index::stem`, FTS5's porter): "crashsafe" as `crashsaf`.
    let chunks = count(
        conn,
        "SELECT count(*) FROM code_fts WHERE code_fts MATCH 'crashsaf'",
    );
    // Chunks come in the crawl's second stage: a file has all of them or none yet.
    let symbols = count(
        conn,
        "SELECT count(*) FROM symbols s JOIN files f ON f.id = s.file_id WHERE f.chunks_done = 1",
    );
    assert_eq!(
        chunks, symbols,
        "{when}: one search chunk per symbol of each file whose chunks are written"
    );
}

/// A project big enough that its crawl commits several times in each stage.
fn project() -> tempfile::TempDir {
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
    project
}

/// Runs `mira index`, kills it with SIGKILL as soon as `killed_when` (a count) is positive,
/// checks what it left, and lets the next `mira index` complete it.
fn kill_and_resume(killed_when: &str, stage: &str) {
    let home = tempfile::tempdir().unwrap();
    let project = project();
    let p = project.path();
    let db = home.path().join("mira/mira.db");

    let mut child = mira(home.path(), p).arg("index").spawn().unwrap();
    let start = Instant::now();
    let stored_at_kill = loop {
        let seen = rusqlite::Connection::open(&db).ok().and_then(|c| {
            let n = c.query_row(killed_when, [], |r| r.get::<_, i64>(0)).ok()?;
            let files = c.query_row("SELECT count(*) FROM files", [], |r| r.get::<_, i64>(0));
            (n > 0).then_some(files.ok()?)
        });
        if let Some(stored) = seen {
            child.kill().unwrap();
            break stored;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "mira index finished before the test saw {stage}: the project is too small to kill it mid-way"
        );
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "{stage} not seen within 2 minutes"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    child.wait().unwrap();

    let conn = rusqlite::Connection::open(&db).unwrap();
    let stored = count(&conn, "SELECT count(*) FROM files");
    assert!(stored >= stored_at_kill, "{stage}: committed files stay");
    let unfinished = count(&conn, "SELECT count(*) FROM files WHERE chunks_done = 0");
    assert!(
        stored < FILES as i64 || unfinished > 0,
        "the kill landed mid-crawl ({stage}): {stored} of {FILES} files stored, {unfinished} without chunks"
    );
    assert_consistent(&conn, &format!("after SIGKILL {stage}"));
    drop(conn);

    let done = mira(home.path(), p).arg("index").status().unwrap();
    assert!(done.success(), "the next mira index succeeds");
    let conn = rusqlite::Connection::open(&db).unwrap();
    assert_eq!(count(&conn, "SELECT count(*) FROM files"), FILES as i64);
    assert_eq!(
        count(&conn, "SELECT count(*) FROM symbols"),
        (FILES * FNS_PER_FILE) as i64
    );
    assert_eq!(
        count(&conn, "SELECT count(*) FROM files WHERE chunks_done = 0"),
        0,
        "every file has its chunks after the next crawl"
    );
    assert_consistent(&conn, "after the next crawl");
}

#[test]
fn a_crawl_killed_mid_way_leaves_a_consistent_database_that_the_next_crawl_completes() {
    kill_and_resume("SELECT count(*) FROM files", "its first commit");
}

#[test]
fn a_crawl_killed_while_it_writes_search_chunks_is_resumed_by_the_next() {
    kill_and_resume(
        "SELECT count(*) FROM files WHERE chunks_done = 1",
        "its first chunks",
    );
}
