//! The store's WAL checkpoints, on a thread of their own.
//!
//! SQLite checkpoints inside the commit that takes the WAL past `wal_autocheckpoint` pages
//! (1000 by default): that commit reads the frames back, writes them into the database and
//! fsyncs both files. On a turn's path (storing the question before the model is asked)
//! that was the tail of Mira's own time to first token: 10-20 ms once every hundred or so
//! turns in `benches/agent.rs`. So after each [`crate::store::Store::write`] commits, a
//! thread with a connection of its own runs a passive checkpoint, once the burst of commits
//! has settled; the writing connection keeps an autocheckpoint of [`BACKSTOP_PAGES`] in case
//! that thread falls behind or stops.
//!
//! Crash safety is SQLite's: a checkpoint copies committed frames only, and one killed
//! half-way is redone from the WAL on the next open. A passive checkpoint takes no lock a
//! writer or reader waits on.

use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::time::Duration;

/// The writing connection's own autocheckpoint once the thread runs (32 MB of WAL).
pub(super) const BACKSTOP_PAGES: i64 = 8192;
/// A turn commits a few rows in quick succession; one checkpoint after them copies them all.
const SETTLE: Duration = Duration::from_millis(100);

pub(super) struct Checkpoints {
    path: PathBuf,
    /// Started at the first commit: a process that only reads has no thread. `None`: the
    /// thread could not start, and SQLite's own autocheckpoint was left as it was.
    wake: OnceLock<Option<SyncSender<()>>>,
}

impl Checkpoints {
    pub(super) fn new(path: &Path) -> Checkpoints {
        Checkpoints {
            path: path.to_path_buf(),
            wake: OnceLock::new(),
        }
    }

    /// Called after `conn` committed: the thread copies it into the database soon. When the
    /// store is dropped, its sender goes and the thread ends.
    pub(super) fn committed(&self, conn: &Connection) {
        let wake = self.wake.get_or_init(|| {
            let wake = start(&self.path)?;
            if let Err(e) = conn.pragma_update(None, "wal_autocheckpoint", BACKSTOP_PAGES) {
                tracing::warn!("could not move the store's checkpoints off its writes: {e}");
            }
            Some(wake)
        });
        if let Some(wake) = wake {
            // Full: a wake is already pending, and one checkpoint serves both commits.
            let _ = wake.try_send(());
        }
    }
}

fn start(path: &Path) -> Option<SyncSender<()>> {
    let (wake, woken) = sync_channel(1);
    let path = path.to_path_buf();
    std::thread::Builder::new()
        .name("mira-wal".into())
        .spawn(move || run(&path, woken))
        .map_err(|e| tracing::warn!("no checkpoint thread ({e}); writes checkpoint themselves"))
        .ok()?;
    Some(wake)
}

/// Any error ends the thread; the backstop still bounds the WAL.
fn run(path: &Path, woken: Receiver<()>) {
    let conn = match Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    ) {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!(
                "the store's checkpointer could not open {}: {e}",
                path.display()
            );
            return;
        }
    };
    while woken.recv().is_ok() {
        std::thread::sleep(SETTLE);
        while woken.try_recv().is_ok() {}
        if let Err(e) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
            tracing::warn!("the store's checkpointer stopped: {e}");
            return;
        }
    }
}
