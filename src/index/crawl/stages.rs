//! Where a crawl's time goes, stage by stage. Per-file stages and the writer are charged
//! their thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`): on a busy machine wall time would
//! count the time a thread waited for a core. Cheap enough to stay on: two clock reads per
//! stage per file and one relaxed atomic add, against milliseconds of parsing.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// CPU time this thread has used so far.
pub(crate) fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec it is handed.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0;
    if !ok {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Time per stage. The per-file stages are CPU time summed over the threads that ran them;
/// `walk`, `writer_idle`, `parse_blocked` and `parse_queued` are wall time; `write` and `commit` are the
/// writer thread's CPU time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StageTimes {
    /// From the start of the walk to its last entry (it overlaps everything after it).
    pub walk: Duration,
    /// Reading and hashing files.
    pub read: Duration,
    /// tree-sitter parsing.
    pub parse: Duration,
    /// Walking the tree for symbols and references.
    pub extract: Duration,
    /// Building each symbol's code-search chunk (second stage, with its re-read): its code
    /// head (redacted) and the identifier parts of its columns.
    pub chunks: Duration,
    /// The writer's busy time: SQLite inserts and commits.
    pub write: Duration,
    /// The second stage's writer: claiming files and inserting their chunks (CPU).
    pub search_write: Duration,
    /// Of `search_write` (and of `write` for a one-shot reindex), inserting chunks into FTS5.
    pub write_fts: Duration,
    /// Of `write` and `search_write`, the time spent in COMMIT.
    pub commit: Duration,
    /// The writer waiting for parsed files (the writer is not the bottleneck while this grows).
    pub writer_idle: Duration,
    /// Parsers waiting for the writer to take their file (the writer is the bottleneck).
    pub parse_blocked: Duration,
    /// Parsers waiting for room in the source budget (`budget.rs`): large files parsed at once.
    pub parse_queued: Duration,
    /// The WAL checkpointer's CPU (`checkpoint.rs`), beside both writers.
    pub checkpoint: Duration,
}

#[derive(Clone, Copy)]
pub(crate) enum Stage {
    Walk,
    Read,
    Parse,
    Extract,
    Chunks,
    Write,
    SearchWrite,
    WriteFts,
    Commit,
    WriterIdle,
    ParseBlocked,
    ParseQueued,
    Checkpoint,
}

/// Shared counters the crawl's threads add to.
#[derive(Default)]
pub(crate) struct StageClock {
    nanos: [AtomicU64; 13],
}

impl StageClock {
    pub fn add(&self, stage: Stage, d: Duration) {
        self.nanos[stage as usize].fetch_add(d.as_nanos() as u64, Ordering::Relaxed);
    }

    /// Runs `f`, charging this thread's CPU time in it to `stage`.
    pub fn time<T>(&self, stage: Stage, f: impl FnOnce() -> T) -> T {
        let t = thread_cpu();
        let out = f();
        self.add(stage, thread_cpu().saturating_sub(t));
        out
    }

    pub fn times(&self) -> StageTimes {
        let get = |s: Stage| Duration::from_nanos(self.nanos[s as usize].load(Ordering::Relaxed));
        StageTimes {
            walk: get(Stage::Walk),
            read: get(Stage::Read),
            parse: get(Stage::Parse),
            extract: get(Stage::Extract),
            chunks: get(Stage::Chunks),
            write: get(Stage::Write),
            search_write: get(Stage::SearchWrite),
            write_fts: get(Stage::WriteFts),
            commit: get(Stage::Commit),
            writer_idle: get(Stage::WriterIdle),
            parse_blocked: get(Stage::ParseBlocked),
            parse_queued: get(Stage::ParseQueued),
            checkpoint: get(Stage::Checkpoint),
        }
    }
}
