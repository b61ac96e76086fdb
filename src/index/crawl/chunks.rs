//! The crawl's second stage: code-search chunks for the files the first stage wrote with
//! their symbols only (`files.chunks_done = 0`). It starts once every file's symbols are
//! committed, so workspace/symbol, definitions and outlines never wait for FTS5, and it
//! resumes from those rows after an interruption (kill -9, a closed editor) on the next crawl.
//!
//! Each file is read again and cut into chunks only if its content still has the hash its
//! symbols came from; the writer claims it in the same transaction as its chunks, so two
//! processes crawling one project never write a file's chunks twice.

use super::stages::{Stage, StageClock};
use super::{CrawlProgress, CrawlStage};
use crate::index::db::{self, PendingChunks};
use crate::index::model::FileSymbols;
use crate::index::search::{self, Chunk};
use rusqlite::{Connection, TransactionBehavior};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Chunked files per transaction at most: FTS5 flushes a segment per commit, so fewer,
/// larger commits leave it less to merge.
const BATCH: usize = 4096;
/// A transaction stays open at most this long (other processes' writers wait behind it).
const BATCH_TIME: Duration = Duration::from_millis(1000);
/// Chunked files waiting for the writer, at most (each holds its chunks' text).
const QUEUE: usize = 64;

/// What a parser hands the writer: the file and its chunks.
type Cut = (PendingChunks, Vec<Chunk>);

/// Writes the chunks of every file still waiting for them; `parsed` holds the symbols the
/// first stage just wrote (by path), so they need not be read back. Returns how many files
/// got their chunks.
pub(super) fn run(
    conn: &mut Connection,
    project_id: i64,
    root: &Path,
    parsed: &HashMap<String, Arc<FileSymbols>>,
    clock: &StageClock,
    progress: &(dyn Fn(CrawlProgress) + Sync),
) -> rusqlite::Result<usize> {
    let pending = db::pending_chunks(conn, project_id)?;
    let total = pending.len();
    progress(CrawlProgress {
        stage: CrawlStage::Search,
        done: 0,
        total,
    });
    if pending.is_empty() {
        return Ok(0);
    }
    // Symbols the first stage wrote in another run (an interrupted crawl) come from the
    // database, read here since the parsers have no connection.
    let mut work = Vec::with_capacity(total);
    for p in pending {
        let syms = match parsed.get(&p.path) {
            Some(s) => s.clone(),
            None => Arc::new(db::file_symbols(conn, p.id)?),
        };
        work.push((p, syms));
    }
    let (tx, rx) = mpsc::sync_channel::<Cut>(QUEUE);
    let cutters = cutters(rayon::current_num_threads());
    let work = std::sync::Mutex::new(work.into_iter());
    std::thread::scope(|scope| {
        let work = &work;
        scope.spawn(move || {
            rayon::scope(|s| {
                for _ in 0..cutters {
                    let tx = tx.clone();
                    s.spawn(move |_| {
                        // The lock is held only to take the next file, never while cutting.
                        let next = || work.lock().unwrap_or_else(|e| e.into_inner()).next();
                        while let Some((p, syms)) = next() {
                            if let Some(cut) = cut(root, p, &syms, clock)
                                && tx.send(cut).is_err()
                            {
                                return;
                            }
                        }
                    });
                }
            })
        });
        clock.time(Stage::SearchWrite, || {
            write_all(conn, rx, total, clock, progress)
        })
    })
}

/// Threads cutting chunks for a parse pool of `threads`: one fewer, so the serial writer,
/// which sets the stage's pace, keeps a core of its own. On 2 cores (the bench's mixed
/// corpus, 12.7k files, a shared machine) two cutters beside the writer took the stage from
/// 2.3-2.5 s wall to 3.3-4.8 s and its writer's CPU from 2.1-2.2 s to 3.1-3.3 s.
fn cutters(threads: usize) -> usize {
    threads.saturating_sub(1).max(1)
}

/// Reads a file and cuts its chunks; `None` when it changed or went away since its symbols
/// were written (the watcher or the next crawl reindexes it whole).
fn cut(root: &Path, p: PendingChunks, syms: &FileSymbols, clock: &StageClock) -> Option<Cut> {
    let read = super::stages::thread_cpu();
    let bytes = std::fs::read(root.join(&p.path)).ok()?;
    let same = *blake3::hash(&bytes).as_bytes() == p.hash;
    clock.add(
        Stage::Read,
        super::stages::thread_cpu().saturating_sub(read),
    );
    if !same {
        return None;
    }
    let chunks = clock.time(Stage::Chunks, || search::file_chunks(syms, &bytes));
    Some((p, chunks))
}

fn write_all(
    conn: &mut Connection,
    rx: mpsc::Receiver<Cut>,
    total: usize,
    clock: &StageClock,
    progress: &(dyn Fn(CrawlProgress) + Sync),
) -> rusqlite::Result<usize> {
    let mut done = 0;
    let mut rx = rx.into_iter().peekable();
    while rx.peek().is_some() {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let opened = Instant::now();
        let mut files = 0;
        for (p, chunks) in rx.by_ref() {
            if let Some(ids) = db::claim_chunks(&tx, p.id, &p.hash)? {
                // Zipping ids with other symbols' chunks would index text under the wrong
                // symbol: the file keeps no chunks until it changes and is indexed again.
                if ids.len() != chunks.len() {
                    tracing::warn!(path = %p.path, "stored symbols differ from the parsed ones; no chunks");
                } else {
                    clock.time(Stage::WriteFts, || {
                        search::insert_chunks(&tx, &ids, &chunks)
                    })?;
                }
            }
            files += 1;
            if files >= BATCH || opened.elapsed() >= BATCH_TIME {
                break;
            }
        }
        clock.time(Stage::Commit, || tx.commit())?;
        done += files;
        progress(CrawlProgress {
            stage: CrawlStage::Search,
            done,
            total,
        });
    }
    Ok(done)
}
