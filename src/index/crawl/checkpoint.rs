//! The crawl's WAL checkpoints, on a thread of their own.
//!
//! SQLite checkpoints inside the commit that takes the WAL past `wal_autocheckpoint` pages
//! (1000 by default), on the committing thread: it reads the frames back, writes them into
//! the database and fsyncs both files. In a cold crawl that landed on the two serial
//! writers (symbol rows, then FTS5): on the bench's mixed corpus, 1.5 s of their CPU plus
//! every fsync's wait. WAL mode lets a passive checkpoint run beside a writer, so while the
//! crawl writes, a connection of its own checkpoints every [`PERIOD`]; the crawl's
//! connection keeps an autocheckpoint of its own at [`BACKSTOP_PAGES`] in case this one falls
//! behind, and gets its old setting back after.
//!
//! Crash safety is SQLite's: a checkpoint copies committed frames only, and one killed
//! half-way is redone from the WAL on the next open.

use super::stages::{Stage, StageClock, thread_cpu};
use rusqlite::{Connection, OpenFlags};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the checkpointer copies what was committed. A cold crawl commits every
/// 0.4-1 s; a passive checkpoint with nothing new to copy reads only the WAL index.
const PERIOD: Duration = Duration::from_millis(50);
/// The crawl connection's own autocheckpoint while the checkpointer runs (32 MB of WAL).
const BACKSTOP_PAGES: i64 = 8192;

/// Runs `f` on `conn` with WAL checkpoints done beside it, then puts the connection's
/// autocheckpoint back as it was, whatever `f` returned.
pub(super) fn beside<T>(
    conn: &mut Connection,
    clock: &StageClock,
    f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    let Some(path) = conn.path().filter(|p| !p.is_empty()).map(str::to_owned) else {
        return f(conn);
    };
    let was: i64 = conn.pragma_query_value(None, "wal_autocheckpoint", |r| r.get(0))?;
    conn.pragma_update(None, "wal_autocheckpoint", BACKSTOP_PAGES)?;
    let checkpointer = Checkpointer::start(path);
    let out = f(conn);
    if let Some(cpu) = checkpointer.finish() {
        clock.add(Stage::Checkpoint, cpu);
    }
    let restored = conn.pragma_update(None, "wal_autocheckpoint", was);
    let out = out?;
    restored?;
    Ok(out)
}

struct Checkpointer {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<Duration>>,
}

impl Checkpointer {
    fn start(path: String) -> Checkpointer {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let signal = stop.clone();
        let thread = std::thread::Builder::new()
            .name("mira-checkpoint".into())
            .spawn(move || run(&path, &signal))
            .map_err(|e| tracing::warn!("no checkpoint thread ({e}); the writer checkpoints"))
            .ok();
        Checkpointer { stop, thread }
    }

    /// Stops the thread (what is left in the WAL goes with the connection's next
    /// autocheckpoint); returns the CPU time it used.
    fn finish(mut self) -> Option<Duration> {
        self.signal_stop();
        self.thread.take()?.join().ok()
    }

    fn signal_stop(&self) {
        let (stopped, wake) = &*self.stop;
        *stopped.lock().unwrap_or_else(|e| e.into_inner()) = true;
        wake.notify_all();
    }
}

impl Drop for Checkpointer {
    /// A crawl unwinding from a panic still stops and joins its checkpointer.
    fn drop(&mut self) {
        self.signal_stop();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The checkpointer's loop; returns its CPU time. Any error only ends it: the crawl
/// connection's backstop autocheckpoint still holds the WAL's size.
fn run(path: &str, stop: &(Mutex<bool>, Condvar)) -> Duration {
    super::super::priority::background();
    let conn = match Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    ) {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!("the crawl's checkpointer could not open {path}: {e}");
            return thread_cpu();
        }
    };
    let (stopped, wake) = stop;
    loop {
        if let Err(e) = checkpoint(&conn) {
            tracing::warn!("the crawl's checkpointer stopped: {e}");
            break;
        }
        let done = stopped.lock().unwrap_or_else(|e| e.into_inner());
        if *done {
            break;
        }
        let (done, _) = wake
            .wait_timeout(done, PERIOD)
            .unwrap_or_else(|e| e.into_inner());
        if *done {
            break;
        }
    }
    thread_cpu()
}

/// One passive checkpoint: copies what no reader still needs, waits for no one.
fn checkpoint(conn: &Connection) -> rusqlite::Result<()> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;
    use std::time::Instant;

    fn autocheckpoint(conn: &Connection) -> i64 {
        conn.pragma_query_value(None, "wal_autocheckpoint", |r| r.get(0))
            .unwrap()
    }

    /// While `f` runs, what it commits reaches the database file without any commit of its
    /// own checkpointing (its backstop is 32 MB, it writes 2 MB); after, the connection's own
    /// setting is back.
    #[test]
    fn commits_reach_the_database_file_from_beside_the_writer() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join("mira.db");
        let store = Store::open(&path).unwrap();
        let mut conn = store.connect().unwrap();
        let before = autocheckpoint(&conn);
        let clock = StageClock::default();
        let grew = beside(&mut conn, &clock, |conn| {
            assert_eq!(autocheckpoint(conn), BACKSTOP_PAGES);
            let empty = std::fs::metadata(&path).unwrap().len();
            conn.execute_batch(
                "CREATE TABLE filler (b BLOB);
                 WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 512)
                 INSERT INTO filler SELECT randomblob(4096) FROM n;",
            )?;
            let deadline = Instant::now() + Duration::from_secs(20);
            while std::fs::metadata(&path).unwrap().len() < empty + 2_000_000 {
                if Instant::now() > deadline {
                    return Ok(false);
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            Ok(true)
        })
        .unwrap();
        assert!(
            grew,
            "nothing was checkpointed into the database file in 20 s"
        );
        assert_eq!(autocheckpoint(&conn), before);
    }

    /// A failing crawl still gets its connection's setting back, and its error out.
    #[test]
    fn a_failing_crawl_gets_its_setting_back() {
        let home = tempfile::tempdir().unwrap();
        let store = Store::open(&home.path().join("mira.db")).unwrap();
        let mut conn = store.connect().unwrap();
        let before = autocheckpoint(&conn);
        let clock = StageClock::default();
        let out: rusqlite::Result<()> = beside(&mut conn, &clock, |conn| {
            conn.execute_batch("SELECT * FROM no_such_table")
                .map(|_| ())
        });
        assert!(out.unwrap_err().to_string().contains("no_such_table"));
        assert_eq!(autocheckpoint(&conn), before);
    }

    /// A database with no file (in memory) has no WAL to checkpoint: `f` just runs.
    #[test]
    fn an_in_memory_database_runs_without_a_checkpointer() {
        let mut conn = Connection::open_in_memory().unwrap();
        let before = autocheckpoint(&conn);
        let clock = StageClock::default();
        let seen = beside(&mut conn, &clock, |conn| Ok(autocheckpoint(conn))).unwrap();
        assert_eq!(seen, before);
        assert_eq!(clock.times().checkpoint, Duration::ZERO);
    }
}
