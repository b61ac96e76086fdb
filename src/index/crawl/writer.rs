//! The crawl's one writer (first stage): takes examined files from the parsers as they come
//! and writes their rows, symbols and references in `BEGIN IMMEDIATE` transactions, each closed after [`BATCH`] written files or
//! [`BATCH_TIME`], whichever comes first, and at once when the parsers fall quiet.
//!
//! Crash safety: every transaction holds whole files (row, symbols and references together),
//! so a kill -9 leaves each file either as it was or fully replaced; the next crawl compares
//! size, mtime and hash and redoes only what is missing. Chunks come in the second stage
//! (`chunks.rs`), which resumes from `files.chunks_done`.
//!
//! A cold crawl into a small symbols table drops the name index first, and the crawl builds it
//! once at its end (`db::drop_name_index_for_bulk_load`, `db::ensure_name_index`); every crawl
//! ends by building it if missing, so a kill between the two costs only the next crawl a sort.

use super::stages::{Stage, StageClock};
use super::{
    Candidate, CrawlProgress, CrawlStage, CrawlStats, FileUpdate, Outcome, SkipReason, Skipped,
};
use crate::index::db::{self, FileRow};
use crate::index::model::FileSymbols;
use crate::index::search;
use rusqlite::{Connection, Transaction, TransactionBehavior};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Files per transaction at most. Commits cost little in WAL mode with `synchronous=NORMAL`,
/// but each one is a point where the sink and progress hear of what was written.
const BATCH: usize = 1024;
/// A transaction stays open at most this long: other processes' writers (memories, another
/// window's watcher) wait behind it, and the editor should see symbols arrive.
const BATCH_TIME: Duration = Duration::from_millis(400);
/// With nothing arriving for this long, what is written so far is committed.
const IDLE_FLUSH: Duration = Duration::from_millis(50);

/// What the parsers hand the writer.
pub(super) enum Examined {
    File(Candidate, Outcome),
    /// An entry the walk could not read.
    WalkError(Skipped),
}

/// Shared with the walk and the parsers.
pub(super) struct Shared<'a> {
    pub clock: &'a StageClock,
    /// Files that need a look (not trusted by size and mtime), found so far.
    pub to_examine: &'a AtomicUsize,
    /// Set when the writer fails: the walk and the parsers stop early.
    pub abort: &'a AtomicBool,
    /// Set when the parsers are done (every file's symbols are with the sink).
    pub parsed_all: &'a AtomicBool,
}

/// What one transaction wrote: the files parsed, for the second stage, and the files that
/// left the view (the parsers already sent the sink each parsed file's symbols).
#[derive(Default)]
struct Written1 {
    parsed: Vec<(String, Arc<FileSymbols>)>,
    removed: Vec<FileUpdate>,
}

pub(super) struct Writer<'a> {
    pub project_id: i64,
    pub known: &'a HashMap<String, FileRow>,
    pub shared: Shared<'a>,
    pub progress: &'a (dyn Fn(CrawlProgress) + Sync),
    pub sink: &'a (dyn Fn(FileUpdate) + Sync),
}

/// What the first stage leaves the second: every path the walk found, and the symbols of
/// each file parsed (shared with the sink's updates, so the second stage reads none back).
pub(super) type Written = (HashSet<String>, HashMap<String, Arc<FileSymbols>>);

/// The writer's running state across transactions.
#[derive(Default)]
struct Tally {
    seen: HashSet<String>,
    parsed: HashMap<String, Arc<FileSymbols>>,
    /// Files written (or recorded as skipped) so far.
    done: usize,
}

impl Writer<'_> {
    /// Writes everything the parsers send.
    pub fn run(
        &self,
        conn: &mut Connection,
        rx: Receiver<Examined>,
        stats: &mut CrawlStats,
    ) -> rusqlite::Result<Written> {
        let result = self.shared.clock.time(Stage::Write, || {
            without_foreign_key_checks(conn, |conn| self.write_all(conn, &rx, stats))
        });
        if result.is_err() {
            self.shared.abort.store(true, Ordering::Relaxed);
        }
        result
    }

    fn write_all(
        &self,
        conn: &mut Connection,
        rx: &Receiver<Examined>,
        stats: &mut CrawlStats,
    ) -> rusqlite::Result<Written> {
        let mut tally = Tally::default();
        // Decided at the first parsed file, not before: a folder with nothing to index (or
        // only files skipped) would otherwise drop and rebuild the index, and change the
        // schema under every other connection, on each start. Built again at the crawl's end.
        let mut bulk_load = self.known.is_empty();
        loop {
            let first = match self.next(rx) {
                Ok(item) => match self.take(item, &mut tally, stats) {
                    Some(file) => file,
                    None => continue,
                },
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => return Ok((tally.seen, tally.parsed)),
            };
            if bulk_load && matches!(first.1, Outcome::Parsed { .. }) {
                bulk_load = false;
                db::drop_name_index_for_bulk_load(conn)?;
            }
            if self.batch(conn, first, rx, &mut tally, stats)? {
                return Ok((tally.seen, tally.parsed));
            }
        }
    }

    /// One transaction: `first` and what follows, until the batch is full, the parsers fall
    /// quiet or they are done (then `true`).
    fn batch(
        &self,
        conn: &mut Connection,
        first: (Candidate, Outcome),
        rx: &Receiver<Examined>,
        tally: &mut Tally,
        stats: &mut CrawlStats,
    ) -> rusqlite::Result<bool> {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let opened = Instant::now();
        let mut out = Written1::default();
        self.write_one(&tx, &mut out, first, stats)?;
        let mut files = 1;
        let ended = loop {
            if files >= BATCH || opened.elapsed() >= BATCH_TIME {
                break false;
            }
            match self.next(rx) {
                Ok(item) => {
                    if let Some(file) = self.take(item, tally, stats) {
                        self.write_one(&tx, &mut out, file, stats)?;
                        files += 1;
                    }
                }
                // Quiet: commit what is there so the editor sees it.
                Err(RecvTimeoutError::Timeout) => break false,
                Err(RecvTimeoutError::Disconnected) => break true,
            }
        };
        self.shared.clock.time(Stage::Commit, || tx.commit())?;
        tally.done += files;
        for (path, symbols) in out.parsed {
            if !symbols.symbols.is_empty() {
                tally.parsed.insert(path, symbols);
            }
        }
        for u in out.removed {
            (self.sink)(u);
        }
        let total = self.shared.to_examine.load(Ordering::Relaxed);
        let parsed_all = self.shared.parsed_all.load(Ordering::Relaxed);
        (self.progress)(CrawlProgress {
            stage: if parsed_all {
                CrawlStage::References
            } else {
                CrawlStage::Symbols
            },
            done: tally.done,
            total: total.max(tally.done),
        });
        Ok(ended)
    }

    /// The next examined file; `Timeout` when nothing came for [`IDLE_FLUSH`],
    /// `Disconnected` when the parsers are done.
    fn next(&self, rx: &Receiver<Examined>) -> Result<Examined, RecvTimeoutError> {
        let waited = Instant::now();
        let item = rx.recv_timeout(IDLE_FLUSH);
        self.shared.clock.add(Stage::WriterIdle, waited.elapsed());
        item
    }

    /// Notes what needs no write (walk errors, trusted files); returns what does.
    fn take(
        &self,
        item: Examined,
        tally: &mut Tally,
        stats: &mut CrawlStats,
    ) -> Option<(Candidate, Outcome)> {
        match item {
            Examined::WalkError(s) => {
                stats.skipped.push(s);
                None
            }
            Examined::File(c, outcome) => {
                tally.seen.insert(c.rel.clone());
                if let Outcome::Trusted = outcome {
                    self.count_unchanged(&c, stats);
                    return None;
                }
                Some((c, outcome))
            }
        }
    }

    /// A file trusted by size and mtime: counted from its stored row, nothing read.
    fn count_unchanged(&self, c: &Candidate, stats: &mut CrawlStats) {
        stats.unchanged += 1;
        let Some(row) = self.known.get(&c.rel) else {
            return;
        };
        match &row.skip_reason {
            Some(reason) => stats.skipped.push(Skipped {
                path: c.rel.clone(),
                reason: super::parse_skip_reason(reason),
            }),
            None => {
                stats.lines += row.meta.lines as u64;
                stats.bytes += row.meta.size;
            }
        }
    }

    fn write_one(
        &self,
        tx: &Transaction<'_>,
        out: &mut Written1,
        (c, outcome): (Candidate, Outcome),
        stats: &mut CrawlStats,
    ) -> rusqlite::Result<()> {
        let old = self.known.get(&c.rel);
        match outcome {
            Outcome::Parsed {
                meta,
                symbols,
                chunks,
                bytes,
            } => {
                let lang = c.lang.name();
                let (_, ids) = db::replace_rows(
                    tx,
                    self.project_id,
                    &c.rel,
                    lang,
                    &meta,
                    &symbols,
                    chunks.is_some(),
                )?;
                if let Some(chunks) = chunks {
                    let clock = self.shared.clock;
                    clock.time(Stage::WriteFts, || search::insert_chunks(tx, &ids, &chunks))?;
                }
                stats.parsed += 1;
                stats.lines += meta.lines as u64;
                stats.bytes += bytes;
                // The parsers sent the sink its update; the second stage needs the symbols.
                out.parsed.push((c.rel, symbols));
            }
            Outcome::SameContent { mtime_ns } => {
                if let Some(row) = old {
                    db::touch_file(tx, row.id, mtime_ns)?;
                    stats.lines += row.meta.lines as u64;
                    stats.bytes += row.meta.size;
                }
                stats.unchanged += 1;
            }
            Outcome::Skipped { meta, reason } => {
                let lang = c.lang.name();
                db::record_skipped(
                    tx,
                    self.project_id,
                    &c.rel,
                    lang,
                    &meta,
                    &reason.to_string(),
                )?;
                if old.is_some_and(|r| r.skip_reason.is_none()) {
                    out.removed.push(FileUpdate::Removed {
                        path: c.rel.clone(),
                    });
                }
                stats.skipped.push(Skipped {
                    path: c.rel,
                    reason,
                });
            }
            Outcome::Vanished => {
                tracing::debug!(path = %c.rel, "file vanished during indexing");
            }
            Outcome::Unreadable(e) => {
                tracing::warn!(path = %c.rel, error = %e, "cannot read file; skipped");
                stats.skipped.push(Skipped {
                    path: c.rel,
                    reason: SkipReason::Unreadable(e),
                });
            }
            Outcome::Trusted => {}
        }
        Ok(())
    }
}

/// Runs `f` with SQLite's foreign-key enforcement off on `conn`, and turns it back on after,
/// whatever `f` returned.
///
/// Why it holds without the checks: every row the writer inserts references a row written
/// earlier in the same transaction (a symbol, its file) or one never deleted (a file, its
/// project); and it deletes no parent row (a changed file's symbols are deleted by name,
/// `db::clear_file_contents`, and `code_fts`'s rows by its trigger, which runs either way).
/// Cascades are what removing a file needs, and that happens after the writer, with the
/// checks back on. Looking each symbol's file up again cost the writer 0.02-0.23 s of CPU
/// on the bench's 408k symbols (six pairs of runs), all of it on the serial path; all done
/// came 0.1-0.6 s sooner.
fn without_foreign_key_checks<T>(
    conn: &mut Connection,
    f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    // A no-op inside a transaction; the writer opens its own.
    conn.pragma_update(None, "foreign_keys", "OFF")?;
    let out = f(conn);
    let back_on = conn.pragma_update(None, "foreign_keys", "ON");
    let out = out?;
    back_on?;
    Ok(out)
}
