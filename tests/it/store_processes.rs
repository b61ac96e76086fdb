//! Several processes on one database file: nothing lost, no "database is locked", and a
//! process killed with SIGKILL mid-write leaves a database that opens and checks clean.
//!
//! The writer processes are this test binary re-executed (`store_writer` with
//! MIRA_TEST_WRITER_DB set): real processes, real SQLite file, the library's own write path.

use mira::store::{Store, sessions};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Write session rows until the deadline, printing each committed id.
fn write_until(db: &Path, tag: &str, seconds: f64, out: &mut impl Write) -> usize {
    let store = Store::open(db).expect("open store");
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let mut n = 0;
    while Instant::now() < deadline {
        let id = store
            .write(|tx| sessions::start(tx, sessions::SessionKind::Cli, Some(tag), None))
            .unwrap_or_else(|e| panic!("write failed: {e}"));
        writeln!(out, "{id}").unwrap();
        out.flush().unwrap();
        n += 1;
    }
    n
}

/// In child mode (MIRA_TEST_WRITER_DB set) this is a writer process. Run directly, it checks
/// the same write path from two threads in one process.
#[test]
fn store_writer() {
    if let Ok(db) = std::env::var("MIRA_TEST_WRITER_DB") {
        let tag = std::env::var("MIRA_TEST_WRITER_TAG").unwrap();
        let secs: f64 = std::env::var("MIRA_TEST_WRITER_SECONDS")
            .unwrap()
            .parse()
            .unwrap();
        write_until(Path::new(&db), &tag, secs, &mut std::io::stdout());
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("mira.db");
    let handles: Vec<_> = ["t1", "t2"]
        .into_iter()
        .map(|tag| {
            let db = db.clone();
            std::thread::spawn(move || write_until(&db, tag, 0.5, &mut std::io::sink()))
        })
        .collect();
    let written: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    let rows: i64 = Store::open(&db)
        .unwrap()
        .read(|c| c.query_row("SELECT count(*) FROM sessions", [], |r| r.get(0)))
        .unwrap();
    assert_eq!(rows as usize, written);
}

fn spawn_writer(db: &Path, tag: &str, seconds: f64) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "store_processes::store_writer",
            "--nocapture",
            "--test-threads=1",
            "-q",
        ])
        .env("MIRA_TEST_WRITER_DB", db)
        .env("MIRA_TEST_WRITER_TAG", tag)
        .env("MIRA_TEST_WRITER_SECONDS", seconds.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Ids a writer reported as committed (libtest's own lines are not numbers).
fn ids(text: &str) -> Vec<i64> {
    text.lines().filter_map(|l| l.trim().parse().ok()).collect()
}

fn ids_in_db(db: &Path, tag: &str) -> HashSet<i64> {
    let store = Store::open(db).unwrap();
    store
        .read(|c| {
            let mut st = c.prepare("SELECT id FROM sessions WHERE client = ?1")?;
            st.query_map([tag], |r| r.get(0))?.collect()
        })
        .unwrap()
}

#[test]
fn two_processes_writing_for_ten_seconds_lose_nothing() {
    let seconds: f64 = std::env::var("MIRA_STRESS_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10.0);
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("mira.db");
    // Both start on a fresh file: migrations race too.
    let children: Vec<_> = ["A", "B"]
        .into_iter()
        .map(|tag| (tag, spawn_writer(&db, tag, seconds)))
        .collect();
    let mut total = 0;
    for (tag, child) in children {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "writer {tag} failed: {stderr}");
        assert!(!stderr.contains("locked"), "writer {tag}: {stderr}");
        let reported: HashSet<i64> = ids(&stdout).into_iter().collect();
        assert!(
            reported.len() > 100,
            "writer {tag} wrote only {}",
            reported.len()
        );
        assert_eq!(
            ids_in_db(&db, tag),
            reported,
            "writer {tag}: rows lost or invented"
        );
        total += reported.len();
    }
    eprintln!("two processes committed {total} transactions in {seconds} s");
}

#[test]
fn sigkill_during_writes_leaves_a_sound_database() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("mira.db");
    for round in 0..3 {
        let tag = format!("K{round}");
        let mut child = spawn_writer(&db, &tag, 60.0);
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut reported = HashSet::new();
        // Kill at a different depth each round, mid-stream of commits.
        while reported.len() < 150 * (round + 1) {
            let line = lines.next().expect("writer output").unwrap();
            if let Ok(id) = line.trim().parse::<i64>() {
                reported.insert(id);
            }
        }
        unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
        child.wait().unwrap();
        // Lines still in the pipe were committed before the kill, too.
        for line in lines.map_while(Result::ok) {
            if let Ok(id) = line.trim().parse::<i64>() {
                reported.insert(id);
            }
        }
        let store = Store::open(&db).expect("reopens after SIGKILL");
        let check: String = store
            .read(|c| c.query_row("PRAGMA integrity_check", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(check, "ok", "round {round}");
        let in_db = ids_in_db(&db, &tag);
        assert!(
            reported.is_subset(&in_db),
            "round {round}: a committed write was lost"
        );
    }
}
