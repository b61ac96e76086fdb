//! The cold index, pipelined and in two stages. Symbols first: a parallel gitignore-aware
//! walk feeds files as it finds them to the parsers (rayon, every core), which feed one
//! writer thread batching SQLite transactions of files, symbols and references; bounded
//! channels between them. Then code-search chunks (`chunks.rs`), at lower priority: they
//! start only once every symbol is stored. Unchanged files (same size and mtime, or same
//! content hash) are not parsed again. `CrawlStats::stages` says where time went.

mod budget;
mod checkpoint;
mod chunks;
mod first;
mod stages;
mod writer;

pub use first::OpenFolders;
pub use stages::StageTimes;

use super::db::{self, FileMeta, FileRow};
use super::model::FileSymbols;
use super::registry::Lang;
use super::search::Chunk;
use rayon::prelude::*;
use rusqlite::Connection;
use stages::{Stage, StageClock};
use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Sender, SyncSender};
use std::time::{Duration, Instant, UNIX_EPOCH};
use writer::{Examined, Shared, Writer};

/// Files found and not yet taken by a parser, at most.
const FOUND_QUEUE: usize = 1024;

/// Threads walking the tree, at most.
const WALK_THREADS: usize = 4;

/// Parse threads, at most, unless `RAYON_NUM_THREADS` says otherwise.
pub const PARSE_THREADS_MAX: usize = 8;

/// Builds the global rayon pool the crawl parses on: the cores, at most
/// [`PARSE_THREADS_MAX`], or `RAYON_NUM_THREADS` when set. Returns its size.
///
/// Each parsing thread keeps pages of its own in the allocator, so the cold index's peak
/// memory grows with threads (`mira lsp`, 1.13M lines, 16 cores: 131 MB pinned to 2, 140 MB
/// at 8, 149 MB at 16), while past 8 threads the serial writer, not parsing, sets when the
/// index is done (16 cores: symbols ready at 1.27–1.40× their floor on 8 threads, 1.57–1.62×
/// on 16; all done in 10.0 s on 8 threads, 9.9–13.2 s on 16).
/// Call once, before anything uses rayon; a pool built already is left as it is.
pub fn start_parse_pool() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = parse_threads(std::env::var("RAYON_NUM_THREADS").ok().as_deref(), cores);
    // Err only when a pool exists already (a test harness, a second call): it stays.
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global();
    rayon::current_num_threads()
}

/// One budget for every parse of the index's files in this process (crawls and re-indexes
/// alike): peak memory is the process's, however many crawls run.
static PARSING: budget::SourceBudget = budget::SourceBudget::new(budget::PARSE_BYTES);

#[derive(Clone, Debug)]
pub struct CrawlOptions {
    /// Files larger than this are skipped (generated code, data dumps).
    pub max_file_bytes: u64,
    /// Gitignore-style globs left out on top of the ignore files.
    pub exclude: Vec<String>,
    /// The editor's open files' folders, crawled before the rest (shared by clones).
    pub opened: OpenFolders,
}

impl Default for CrawlOptions {
    fn default() -> Self {
        CrawlOptions::from_config(&super::config::IndexConfig::default())
    }
}

impl CrawlOptions {
    pub fn from_config(cfg: &super::config::IndexConfig) -> Self {
        CrawlOptions {
            max_file_bytes: cfg.max_file_bytes,
            exclude: cfg.exclude.clone(),
            opened: OpenFolders::default(),
        }
    }

    pub(crate) fn overrides(&self, root: &Path) -> Option<ignore::overrides::Override> {
        if self.exclude.is_empty() {
            return None;
        }
        let mut b = ignore::overrides::OverrideBuilder::new(root);
        for glob in &self.exclude {
            if let Err(e) = b.add(&format!("!{glob}")) {
                tracing::warn!(glob, error = %e, "ignoring invalid index.exclude glob");
            }
        }
        b.build().ok()
    }
}

/// Symlinks are followed once: a link whose target is inside the root (walked anyway), holds
/// the root (a loop), or lies inside a directory already reached through another link is
/// not followed.
struct LinkedDirs {
    root: PathBuf,
    seen: std::sync::Mutex<HashSet<PathBuf>>,
}

impl LinkedDirs {
    fn new(root: &Path) -> LinkedDirs {
        LinkedDirs {
            root: std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf()),
            seen: std::sync::Mutex::new(HashSet::new()),
        }
    }

    fn follow(&self, link: &Path, is_dir: bool) -> bool {
        let Ok(target) = std::fs::canonicalize(link) else {
            return false;
        };
        if target.starts_with(&self.root) || self.root.starts_with(&target) {
            return false;
        }
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if seen.iter().any(|s| target.starts_with(s)) {
            return false;
        }
        !is_dir || seen.insert(target)
    }
}

/// Why a file was not indexed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkipReason {
    TooLarge { size: u64, limit: u64 },
    Binary,
    Minified,
    Unreadable(String),
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TooLarge { size, limit } => write!(
                f,
                "too large ({} KiB > {} KiB limit; raise index.max_file_bytes to include it)",
                size / 1024,
                limit / 1024
            ),
            Self::Binary => f.write_str("binary content"),
            Self::Minified => f.write_str("minified (very long lines)"),
            Self::Unreadable(e) => write!(f, "unreadable: {e}"),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Skipped {
    pub path: String,
    pub reason: SkipReason,
}

#[derive(Clone, Debug, Default)]
pub struct CrawlStats {
    /// Source files found by the walk.
    pub files: usize,
    pub parsed: usize,
    pub unchanged: usize,
    pub removed: usize,
    pub lines: u64,
    pub bytes: u64,
    pub symbols: u64,
    pub skipped: Vec<Skipped>,
    /// Files whose code-search chunks were written (the second stage).
    pub chunked: usize,
    /// From the start until every file's symbols were handed to the sink (the in-memory
    /// view that answers workspace/symbol, definitions and outlines).
    pub symbols_elapsed: Duration,
    /// From the start until every file's row, symbols and references were stored.
    pub stored_elapsed: Duration,
    pub elapsed: Duration,
    /// Where the time went.
    pub stages: StageTimes,
}

/// A change to the in-memory view, emitted as files are written.
#[derive(Clone, Debug)]
pub enum FileUpdate {
    Indexed {
        path: String,
        lang: Lang,
        ascii: bool,
        symbols: Arc<FileSymbols>,
    },
    Removed {
        path: String,
    },
}

/// Which stage of a crawl a progress report is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrawlStage {
    /// Files are parsed, and each one's symbols handed to the sink as it is; `done` counts
    /// the files stored.
    Symbols,
    /// Every file's symbols have been handed to the sink (workspace/symbol, definitions and
    /// outlines are complete); rows and references are still being stored. The first report
    /// of this stage, from the parsers, has `done` 0.
    References,
    /// Code-search chunks (FTS5). The first report of this stage says every symbol is stored.
    Search,
}

#[derive(Clone, Copy, Debug)]
pub struct CrawlProgress {
    pub stage: CrawlStage,
    pub done: usize,
    pub total: usize,
}

impl CrawlProgress {
    /// The parsers just finished: every file's symbols are with the sink (sent once per
    /// crawl, before the writer reports this stage).
    pub fn symbols_just_parsed(&self) -> bool {
        self.stage == CrawlStage::References && self.done == 0
    }

    /// The first report of the code-search stage: every symbol has just been stored (it is
    /// sent once per crawl, before any chunk is written).
    pub fn symbols_just_stored(&self) -> bool {
        self.stage == CrawlStage::Search && self.done == 0
    }
}

/// The result of looking at one file.
enum Outcome {
    Parsed {
        meta: FileMeta,
        /// Shared with the sink's update, sent as soon as the file is parsed.
        symbols: Arc<FileSymbols>,
        /// Each symbol's code-search chunk, when asked for (a crawl cuts them later).
        chunks: Option<Vec<Chunk>>,
        bytes: u64,
    },
    /// Same content as indexed; only the mtime moved.
    SameContent {
        mtime_ns: i64,
    },
    Skipped {
        meta: FileMeta,
        reason: SkipReason,
    },
    /// Deleted between the walk and the read.
    Vanished,
    Unreadable(String),
    /// Same size and mtime as indexed: trusted without reading (a warm restart reads nothing).
    Trusted,
}

struct Candidate {
    rel: String,
    abs: PathBuf,
    lang: Lang,
    size: u64,
    mtime_ns: i64,
    /// Same size and mtime as indexed.
    trusted: bool,
}

pub fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i64)
}

/// The path relative to the root, `/`-separated; `None` outside the root.
pub fn relative(root: &Path, abs: &Path) -> Option<String> {
    let rel = abs.strip_prefix(root).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// The sensitive-file rules for `root`; a broken `.miraignore` still leaves the built-in list
/// in force (`mira doctor` reports the error).
fn sensitive_rules(root: &Path) -> crate::sensitive::SensitiveFiles {
    crate::sensitive::load_for(root).unwrap_or_else(|e| {
        tracing::warn!("{e}; the index skips only the built-in sensitive files");
        crate::sensitive::SensitiveFiles::built_in_only(root)
    })
}

/// Walks `root`, indexes what changed since the last run, removes what is gone.
pub fn crawl(
    conn: &mut Connection,
    project_id: i64,
    root: &Path,
    opts: &CrawlOptions,
    progress: &(dyn Fn(CrawlProgress) + Sync),
    sink: &(dyn Fn(FileUpdate) + Sync),
) -> rusqlite::Result<CrawlStats> {
    let started = Instant::now();
    let clock = StageClock::default();
    let mut stats = checkpoint::beside(conn, &clock, |conn| {
        let out = crawl_stages(
            conn, project_id, root, opts, progress, sink, &clock, started,
        );
        // Every crawl, cold or not, whatever its stages returned. Last, not after the symbol
        // rows: the sort's memory then adds to a process no longer holding parse trees.
        let indexed = clock.time(Stage::Write, || db::ensure_name_index(conn));
        let out = out?;
        indexed?;
        Ok(out)
    })?;
    stats.stages = clock.times();
    stats.elapsed = started.elapsed();
    Ok(stats)
}

/// The crawl's two stages on `conn` (its checkpoints are done beside it).
#[allow(clippy::too_many_arguments)]
fn crawl_stages(
    conn: &mut Connection,
    project_id: i64,
    root: &Path,
    opts: &CrawlOptions,
    progress: &(dyn Fn(CrawlProgress) + Sync),
    sink: &(dyn Fn(FileUpdate) + Sync),
    clock: &StageClock,
    started: Instant,
) -> rusqlite::Result<CrawlStats> {
    let mut stats = CrawlStats::default();
    let known = db::file_rows(conn, project_id)?;
    let to_examine = AtomicUsize::new(0);
    let abort = AtomicBool::new(false);
    let limit = opts.max_file_bytes;
    // Bounded: a walk far ahead of the parsers holds only paths, but parsed files waiting
    // for the writer hold their symbols (tens of KB each), so that queue is short.
    let (found_tx, found_rx) = mpsc::sync_channel::<Found>(FOUND_QUEUE);
    // Unbounded: the parsers never wait for the writer, so symbols reach the sink at the
    // parse's pace. What waits holds little of its own: the symbols are shared with the
    // sink's view, and chunks are cut in the second stage.
    let (done_tx, done_rx) = mpsc::channel::<Examined>();
    let parsed_at = std::sync::Mutex::new(None);
    let parsed_all = AtomicBool::new(false);
    let writer_conn = &mut *conn;
    let (seen, parsed) = std::thread::scope(|scope| {
        let (known, clock, abort, to_examine) = (&known, clock, &abort, &to_examine);
        let walk = Walk {
            root,
            opts,
            known,
            clock,
            abort,
            to_examine,
        };
        scope.spawn(move || walk.run(found_tx));
        let pool = Pool {
            known,
            limit,
            clock,
            abort,
            sink,
        };
        let (parsed_at, parsed_all) = (&parsed_at, &parsed_all);
        scope.spawn(move || {
            pool.examine_all(found_rx, done_tx);
            parsed_all.store(true, Ordering::Relaxed);
            *parsed_at.lock().unwrap_or_else(|e| e.into_inner()) = Some(started.elapsed());
            progress(CrawlProgress {
                stage: CrawlStage::References,
                done: 0,
                total: to_examine.load(Ordering::Relaxed),
            });
            // The parse threads keep no dead trees once the crawl is done with them. Not
            // waited for: a thread still parsing another folder's crawl runs it only when
            // free, and this crawl's next stage must not wait for that.
            rayon::spawn_broadcast(|_| super::parse::release_scratch());
        });
        let writer = Writer {
            project_id,
            known,
            shared: Shared {
                clock,
                to_examine,
                abort,
                parsed_all,
            },
            progress,
            sink,
        };
        // The writer yields the CPU to the parsers: symbols first, their storage behind.
        let stats = &mut stats;
        scope
            .spawn(move || {
                super::priority::behind_parsers();
                writer.run(writer_conn, done_rx, stats)
            })
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })?;
    stats.files = seen.len();
    stats.skipped.sort_by(|a, b| a.path.cmp(&b.path));

    // Files indexed before and not found now have left the project.
    let gone: Vec<&String> = known.keys().filter(|p| !seen.contains(*p)).collect();
    if !gone.is_empty() {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        for path in &gone {
            db::remove_file(&tx, project_id, path)?;
        }
        tx.commit()?;
        for path in gone {
            stats.removed += 1;
            sink(FileUpdate::Removed { path: path.clone() });
        }
    }
    stats.stored_elapsed = started.elapsed();
    stats.symbols_elapsed = parsed_at
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .unwrap_or(stats.stored_elapsed);
    stats.chunked = chunks::run(conn, project_id, root, &parsed, clock, progress)?;
    drop(parsed);
    stats.symbols = conn.query_row(
        "SELECT count(*) FROM symbols s JOIN files f ON f.id = s.file_id WHERE f.project_id = ?1",
        [project_id],
        |r| r.get::<_, i64>(0),
    )? as u64;
    Ok(stats)
}

/// The parse pool: examines each file the walk finds (on every rayon thread), hands each
/// parsed file's symbols to the sink at once, and the file to the writer.
struct Pool<'a> {
    known: &'a HashMap<String, FileRow>,
    limit: u64,
    clock: &'a StageClock,
    abort: &'a AtomicBool,
    sink: &'a (dyn Fn(FileUpdate) + Sync),
}

impl Pool<'_> {
    fn examine_all(&self, found: mpsc::Receiver<Found>, done: Sender<Examined>) {
        found
            .into_iter()
            .par_bridge()
            .for_each_with(done, |tx, found| {
                if self.abort.load(Ordering::Relaxed) {
                    return;
                }
                let item = match found {
                    Found::File(c) if c.trusted => Examined::File(c, Outcome::Trusted),
                    Found::File(c) => {
                        let outcome = examine(
                            &c,
                            self.known.get(&c.rel),
                            self.limit,
                            self.clock,
                            Examiner::Crawl,
                        );
                        if let Outcome::Parsed { meta, symbols, .. } = &outcome {
                            (self.sink)(FileUpdate::Indexed {
                                path: c.rel.clone(),
                                lang: c.lang,
                                ascii: meta.ascii,
                                symbols: symbols.clone(),
                            });
                        }
                        Examined::File(c, outcome)
                    }
                    Found::Error(s) => Examined::WalkError(s),
                };
                let t = Instant::now();
                // The receiver only goes away on a database error; nothing left to do then.
                let _ = tx.send(item);
                self.clock.add(Stage::ParseBlocked, t.elapsed());
            });
    }
}

/// The parse pool's size: `RAYON_NUM_THREADS` when it is a positive number (rayon's own
/// rule), else the cores up to [`PARSE_THREADS_MAX`].
pub fn parse_threads(asked: Option<&str>, cores: usize) -> usize {
    asked
        .and_then(|t| t.trim().parse::<usize>().ok())
        .filter(|&t| t > 0)
        .unwrap_or(cores.min(PARSE_THREADS_MAX))
}

/// What the walk hands the parsers.
enum Found {
    File(Candidate),
    Error(Skipped),
}

/// The walk: gitignore-aware, on up to `WALK_THREADS` threads, sending each source file as
/// soon as it is found.
struct Walk<'a> {
    root: &'a Path,
    opts: &'a CrawlOptions,
    known: &'a HashMap<String, FileRow>,
    clock: &'a StageClock,
    abort: &'a AtomicBool,
    to_examine: &'a AtomicUsize,
}

impl Walk<'_> {
    fn run(self, found: SyncSender<Found>) {
        let started = Instant::now();
        let this = &self;
        let links = Arc::new(LinkedDirs::new(self.root));
        let overrides = self.opts.overrides(self.root);
        // The open files' folders first, one after another; the parallel walk skips them.
        let first = first::folders(
            self.root,
            &self.opts.opened,
            &sensitive_rules(self.root),
            overrides.as_ref(),
        );
        for dir in &first {
            for entry in self.builder(dir, &links, Vec::new()).build() {
                if self.abort.load(Ordering::Relaxed) {
                    return;
                }
                if let Some(item) = self.visit(entry)
                    && found.send(item).is_err()
                {
                    return;
                }
            }
        }
        let walk = self.builder(self.root, &links, first);
        walk.build_parallel().run(|| {
            let found = found.clone();
            Box::new(move |entry| {
                if this.abort.load(Ordering::Relaxed) {
                    return ignore::WalkState::Quit;
                }
                let Some(item) = this.visit(entry) else {
                    return ignore::WalkState::Continue;
                };
                match found.send(item) {
                    Ok(()) => ignore::WalkState::Continue,
                    Err(_) => ignore::WalkState::Quit,
                }
            })
        });
        self.clock.add(Stage::Walk, started.elapsed());
    }

    /// A walk from `start` (the root, or a folder under it walked first), leaving out the
    /// folders in `walked`.
    fn builder(
        &self,
        start: &Path,
        links: &Arc<LinkedDirs>,
        walked: Vec<PathBuf>,
    ) -> ignore::WalkBuilder {
        let root = self.root;
        let mut walk = ignore::WalkBuilder::new(start);
        // Four walkers keep ahead of any number of parsers (a walk costs a fraction of a
        // parse), and each thread that allocates holds pages of its own in the allocator:
        // sixteen walkers beside sixteen parsers added 60 MB to the peak.
        walk.require_git(false)
            .follow_links(true)
            .threads(rayon::current_num_threads().min(WALK_THREADS));
        // Sensitive files (.env, keys, .miraignore matches) are never indexed, so neither
        // symbols nor code search ever hold them; once indexed and now sensitive, they count
        // as gone.
        let sensitive = sensitive_rules(root);
        let links = links.clone();
        walk.filter_entry(move |e| {
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            if is_dir && walked.iter().any(|w| w == e.path()) {
                return false;
            }
            if e.path_is_symlink() && !links.follow(e.path(), is_dir) {
                return false;
            }
            let hit = if is_dir {
                sensitive.is_sensitive_dir(e.path())
            } else {
                sensitive.is_sensitive(e.path())
            };
            hit.is_none()
        });
        if let Some(ov) = self.opts.overrides(root) {
            walk.overrides(ov);
        }
        walk
    }

    fn visit(&self, entry: Result<ignore::DirEntry, ignore::Error>) -> Option<Found> {
        let entry = match entry {
            Ok(e) => e,
            Err(err) => {
                return Some(Found::Error(Skipped {
                    path: walk_error_path(&err, self.root),
                    reason: SkipReason::Unreadable(walk_error_message(&err)),
                }));
            }
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return None;
        }
        let lang = Lang::for_path(entry.path())?;
        let rel = relative(self.root, entry.path())?;
        let meta = entry.metadata().ok()?;
        let (size, mtime_ns) = (meta.len(), mtime_ns(&meta));
        // Same size and mtime as indexed: trust it without reading.
        let trusted = self.known.get(&rel).is_some_and(|row| {
            row.meta.size == size && row.meta.mtime_ns == mtime_ns && row.language == lang.name()
        });
        if !trusted {
            self.to_examine.fetch_add(1, Ordering::Relaxed);
        }
        Some(Found::File(Candidate {
            rel,
            abs: entry.into_path(),
            lang,
            size,
            mtime_ns,
            trusted,
        }))
    }
}

/// Who examines a file.
#[derive(Clone, Copy, PartialEq)]
enum Examiner {
    /// The cold crawl's parse pool: chunks are cut in the second stage, and trees are freed
    /// with the thread's scratch heap ([`super::parse::parse_once`]).
    Crawl,
    /// One changed file (the watcher): its chunks are cut at once and its tree freed at once.
    OneFile,
}

/// Reads, hashes and (when the content changed) parses one file; for one changed file,
/// cuts its code-search chunks too.
fn examine(
    c: &Candidate,
    old: Option<&FileRow>,
    limit: u64,
    clock: &StageClock,
    examiner: Examiner,
) -> Outcome {
    let skipped_meta = |size| FileMeta {
        size,
        mtime_ns: c.mtime_ns,
        hash: [0; 32],
        lines: 0,
        ascii: true,
    };
    if c.size > limit {
        return Outcome::Skipped {
            meta: skipped_meta(c.size),
            reason: SkipReason::TooLarge {
                size: c.size,
                limit,
            },
        };
    }
    let read = stages::thread_cpu();
    let bytes = match read_capped(&c.abs, limit) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Outcome::Vanished,
        Err(e) => return Outcome::Unreadable(e.to_string()),
    };
    if bytes.len() as u64 > limit {
        // It grew past the limit between stat and read.
        return Outcome::Skipped {
            meta: skipped_meta(bytes.len() as u64),
            reason: SkipReason::TooLarge {
                size: bytes.len() as u64,
                limit,
            },
        };
    }
    let hash = *blake3::hash(&bytes).as_bytes();
    clock.add(Stage::Read, stages::thread_cpu().saturating_sub(read));
    if let Some(old) = old
        && old.meta.hash == hash
        && old.skip_reason.is_none()
        && old.language == c.lang.name()
    {
        return Outcome::SameContent {
            mtime_ns: c.mtime_ns,
        };
    }
    let lines = count_lines(&bytes);
    let meta = FileMeta {
        size: bytes.len() as u64,
        mtime_ns: c.mtime_ns,
        hash,
        lines,
        ascii: bytes.is_ascii(),
    };
    if let Some(reason) = content_skip_reason(&c.rel, &bytes, lines) {
        return Outcome::Skipped { meta, reason };
    }
    // Held while the tree lives: the tree, not the file, is what costs memory.
    let waited = Instant::now();
    let room = PARSING.take(bytes.len() as u64);
    clock.add(Stage::ParseQueued, waited.elapsed());
    let started = stages::thread_cpu();
    let mut extracting = Duration::ZERO;
    let mut extract = |root: tree_sitter::Node<'_>| {
        let t = stages::thread_cpu();
        let mut symbols = super::extract::extract_root(c.lang, root, &bytes);
        symbols.compact();
        extracting = stages::thread_cpu().saturating_sub(t);
        symbols
    };
    // A tree freed here (one file) is parsing's cost, not the chunks'.
    let symbols = match examiner {
        Examiner::Crawl => super::parse::parse_once(c.lang, &bytes, extract),
        Examiner::OneFile => super::parse::parse(c.lang, &bytes).map(|t| extract(t.root_node())),
    };
    let parsing = stages::thread_cpu().saturating_sub(started);
    clock.add(Stage::Parse, parsing.saturating_sub(extracting));
    clock.add(Stage::Extract, extracting);
    drop(room);
    let Some(symbols) = symbols else {
        return Outcome::Unreadable("the parser gave up on this file".into());
    };
    let chunks = (examiner == Examiner::OneFile).then(|| {
        clock.time(Stage::Chunks, || {
            super::search::file_chunks(&symbols, &bytes)
        })
    });
    Outcome::Parsed {
        meta,
        chunks,
        symbols: Arc::new(symbols),
        bytes: bytes.len() as u64,
    }
}

fn read_capped(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let mut f = std::fs::File::open(path)?;
    let mut buf = Vec::new();
    f.by_ref().take(limit + 1).read_to_end(&mut buf)?;
    Ok(buf)
}

pub fn count_lines(bytes: &[u8]) -> u32 {
    let newlines = bytes.iter().filter(|&&b| b == b'\n').count() as u32;
    if bytes.last().is_some_and(|&b| b != b'\n') {
        newlines + 1
    } else {
        newlines
    }
}

/// Binary or minified content is not worth parsing: it yields noise and costs the most.
pub fn content_skip_reason(rel: &str, bytes: &[u8], lines: u32) -> Option<SkipReason> {
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return Some(SkipReason::Binary);
    }
    let minified_name = rel.ends_with(".min.js") || rel.ends_with(".min.mjs");
    if minified_name || (bytes.len() > 4096 && bytes.len() as u64 / lines.max(1) as u64 > 300) {
        return Some(SkipReason::Minified);
    }
    None
}

fn parse_skip_reason(stored: &str) -> SkipReason {
    match stored {
        "binary content" => SkipReason::Binary,
        s if s.starts_with("minified") => SkipReason::Minified,
        s => SkipReason::Unreadable(s.to_string()),
    }
}

fn walk_error_path(err: &ignore::Error, root: &Path) -> String {
    match err {
        ignore::Error::WithPath { path, .. } => {
            relative(root, path).unwrap_or_else(|| path.display().to_string())
        }
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            walk_error_path(err, root)
        }
        _ => String::from("?"),
    }
}

fn walk_error_message(err: &ignore::Error) -> String {
    match err {
        ignore::Error::WithPath { err, .. }
        | ignore::Error::WithDepth { err, .. }
        | ignore::Error::WithLineNumber { err, .. } => walk_error_message(err),
        other => other.to_string(),
    }
}

/// Indexes (or removes) one file after a change on disk; returns what changed.
pub fn reindex_path(
    conn: &mut Connection,
    project_id: i64,
    root: &Path,
    abs: &Path,
    opts: &CrawlOptions,
) -> rusqlite::Result<Option<FileUpdate>> {
    let Some(rel) = relative(root, abs) else {
        return Ok(None);
    };
    let Some(lang) = Lang::for_path(abs) else {
        return Ok(None);
    };
    let remove = |conn: &mut Connection| -> rusqlite::Result<Option<FileUpdate>> {
        let tx = conn.transaction()?;
        let existed = db::remove_file(&tx, project_id, &rel)?;
        tx.commit()?;
        Ok(existed.then(|| FileUpdate::Removed { path: rel.clone() }))
    };
    if sensitive_rules(root).is_sensitive(abs).is_some() {
        return remove(conn);
    }
    let meta = match std::fs::metadata(abs) {
        Ok(m) if m.is_file() => m,
        _ => return remove(conn),
    };
    let old = db::file_row(conn, project_id, &rel)?;
    let c = Candidate {
        rel: rel.clone(),
        abs: abs.to_path_buf(),
        lang,
        size: meta.len(),
        mtime_ns: mtime_ns(&meta),
        trusted: false,
    };
    let outcome = examine(
        &c,
        old.as_ref(),
        opts.max_file_bytes,
        &StageClock::default(),
        Examiner::OneFile,
    );
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let update = match outcome {
        Outcome::Parsed {
            meta,
            symbols,
            chunks,
            ..
        } => {
            let lang_name = lang.name();
            let chunks = chunks.unwrap_or_default();
            db::replace_file_with_chunks(
                &tx, project_id, &rel, lang_name, &meta, &symbols, &chunks,
            )?;
            Some(FileUpdate::Indexed {
                path: rel.clone(),
                lang,
                ascii: meta.ascii,
                symbols,
            })
        }
        Outcome::SameContent { mtime_ns } => {
            if let Some(row) = &old {
                db::touch_file(&tx, row.id, mtime_ns)?;
            }
            None
        }
        Outcome::Skipped { meta, reason } => {
            db::record_skipped(
                &tx,
                project_id,
                &rel,
                lang.name(),
                &meta,
                &reason.to_string(),
            )?;
            Some(FileUpdate::Removed { path: rel.clone() })
        }
        Outcome::Vanished => {
            db::remove_file(&tx, project_id, &rel)?;
            Some(FileUpdate::Removed { path: rel.clone() })
        }
        Outcome::Unreadable(e) => {
            tracing::warn!(path = %rel, error = %e, "cannot read changed file; keeping the old index");
            None
        }
        Outcome::Trusted => None,
    };
    tx.commit()?;
    Ok(update)
}
