//! The disk side of the index: the cold crawl, then a debounced `notify` watcher for files
//! the editor has not opened (Helix only reports its own saves). Runs on its own thread
//! with its own SQLite connection; only finished results go to the actor.

use super::crawl::{self, FileUpdate};
use super::db;
use super::ignores::{IgnoreRules, is_ignore_file};
use super::service::{IndexOptions, IndexProgress, Request};
use crate::store::Store;
use notify::RecursiveMode;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc as std_mpsc};
use std::time::Duration;
use tokio::sync::mpsc;

/// Debounce window: a burst of writes (a save, a checkout) becomes one batch.
const DEBOUNCE: Duration = Duration::from_millis(150);
/// More changed paths than this in one batch (a branch switch) → a full crawl, which
/// checks size and mtime first and so re-reads only what changed.
const CRAWL_THRESHOLD: usize = 64;

pub(crate) enum DiskWork {
    Paths(Vec<PathBuf>),
    Crawl,
}

/// How a worker names its files to the actor. The project's own folder uses paths relative
/// to it (as stored); another workspace folder uses absolute paths, so keys from two roots
/// never collide and an open document's key (absolute outside the project) matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Keys {
    Relative,
    Absolute,
}

pub(crate) struct DiskWorkerSpec {
    pub store: Store,
    pub opts: IndexOptions,
    pub keys: Keys,
    pub actor: mpsc::UnboundedSender<Request>,
    pub work: std_mpsc::Receiver<DiskWork>,
    pub work_tx: std_mpsc::Sender<DiskWork>,
    pub progress: mpsc::UnboundedSender<IndexProgress>,
    pub shutdown: Arc<AtomicBool>,
}

pub(crate) fn start_disk_worker(spec: DiskWorkerSpec) {
    let DiskWorkerSpec {
        store,
        opts,
        keys,
        actor,
        work,
        work_tx,
        progress,
        shutdown,
    } = spec;
    let spawned = std::thread::Builder::new()
        .name("mira-index-disk".into())
        .spawn(move || {
            let mut worker = DiskWorker {
                store,
                opts,
                keys,
                actor,
                progress,
                ignore: None,
                exclude: None,
                project_id: 0,
                failed: false,
            };
            worker.run(work, work_tx, shutdown)
        });
    if let Err(e) = spawned {
        tracing::error!(error = %e, "cannot start the index disk thread");
    }
}

struct DiskWorker {
    store: Store,
    opts: IndexOptions,
    keys: Keys,
    actor: mpsc::UnboundedSender<Request>,
    progress: mpsc::UnboundedSender<IndexProgress>,
    ignore: Option<IgnoreRules>,
    exclude: Option<ignore::overrides::Override>,
    project_id: i64,
    /// The last setup or crawl failed: the next crawl (`mira.reindex`) is a retry, and the
    /// status shows the folder as indexing again.
    failed: bool,
}

impl DiskWorker {
    fn run(
        &mut self,
        work: std_mpsc::Receiver<DiskWork>,
        work_tx: std_mpsc::Sender<DiskWork>,
        shutdown: Arc<AtomicBool>,
    ) {
        let Some(mut conn) = self.open_until_ready(&work, &shutdown) else {
            return;
        };
        // Warm start: what was indexed before is queryable before anything is re-read.
        match db::load_project(&conn, self.project_id) {
            Ok(mut files) => {
                for f in &mut files {
                    f.path = self.key(std::mem::take(&mut f.path));
                }
                let _ = self.actor.send(Request::Loaded(files));
            }
            Err(e) => tracing::warn!(error = %e, "cannot load the persisted index; rebuilding"),
        }
        self.ignore = Some(IgnoreRules::new(&self.opts.root));
        self.exclude = self.opts.crawl.overrides(&self.opts.root);
        // Watch before crawling: a change made while the crawl runs is queued, not lost.
        // Kept alive for as long as this thread runs.
        let _watcher = if self.opts.watch {
            start_watcher(&self.opts.root, work_tx)
        } else {
            None
        };
        self.crawl(&mut conn);
        loop {
            let job = match work.recv_timeout(Duration::from_millis(500)) {
                Ok(job) => job,
                Err(std_mpsc::RecvTimeoutError::Timeout) => {
                    if shutdown.load(Ordering::Relaxed) || self.actor.is_closed() {
                        break;
                    }
                    continue;
                }
                Err(std_mpsc::RecvTimeoutError::Disconnected) => break,
            };
            if shutdown.load(Ordering::Relaxed) || self.actor.is_closed() {
                break;
            }
            // Coalesce whatever else is already queued.
            let mut paths = Vec::new();
            let mut full = false;
            let mut take = |job: DiskWork| match job {
                DiskWork::Paths(p) => paths.extend(p),
                DiskWork::Crawl => full = true,
            };
            take(job);
            while let Ok(more) = work.try_recv() {
                take(more);
            }
            paths.sort();
            paths.dedup();
            // New sensitive-file rules change which files may be indexed at all, and a
            // changed ignore file which ones are ignored: both need the whole walk.
            let root_rules = self.opts.root.join(crate::sensitive::PROJECT_FILE);
            full |= paths.contains(&root_rules);
            if paths.iter().any(|p| is_ignore_file(p)) {
                if let Some(rules) = &mut self.ignore {
                    rules.forget_cached();
                }
                full = true;
            }
            paths.retain(|p| !self.ignored(p));
            if full || paths.len() > CRAWL_THRESHOLD || paths.iter().any(|p| p.is_dir()) {
                self.crawl(&mut conn);
                continue;
            }
            let mut updates = Vec::new();
            let mut needs_crawl = false;
            for p in paths {
                if !p.exists() && super::registry::Lang::for_path(&p).is_none() {
                    // A directory went away (or was renamed): let the crawl sort it out.
                    needs_crawl = true;
                    continue;
                }
                match crawl::reindex_path(
                    &mut conn,
                    self.project_id,
                    &self.opts.root,
                    &p,
                    &self.opts.crawl,
                ) {
                    Ok(Some(u)) => updates.push(u),
                    Ok(None) => {}
                    Err(e) => tracing::warn!(path = %p.display(), error = %e, "reindex failed"),
                }
            }
            if !updates.is_empty() {
                self.send_updates(updates);
            }
            if needs_crawl {
                self.crawl(&mut conn);
            }
        }
    }

    /// Opens the database and records the project. On failure it says so and waits for
    /// `mira.reindex` (a crawl job) to try again, so a database fixed meanwhile needs no
    /// editor restart. `None` at shutdown.
    fn open_until_ready(
        &mut self,
        work: &std_mpsc::Receiver<DiskWork>,
        shutdown: &AtomicBool,
    ) -> Option<rusqlite::Connection> {
        loop {
            match self.open() {
                Ok(conn) => return Some(conn),
                Err(msg) => self.failed(msg),
            }
            loop {
                match work.recv_timeout(Duration::from_millis(500)) {
                    Ok(DiskWork::Crawl) => break,
                    // The crawl that follows a successful retry reads every file anyway.
                    Ok(DiskWork::Paths(_)) => {}
                    Err(std_mpsc::RecvTimeoutError::Timeout) => {
                        if shutdown.load(Ordering::Relaxed) || self.actor.is_closed() {
                            return None;
                        }
                    }
                    Err(std_mpsc::RecvTimeoutError::Disconnected) => return None,
                }
            }
            self.retrying();
        }
    }

    fn open(&mut self) -> Result<rusqlite::Connection, String> {
        let conn = self
            .store
            .connect()
            .map_err(|e| format!("cannot open the index database: {e}"))?;
        self.project_id =
            crate::store::projects::ensure(&conn, &self.opts.root, &self.opts.project_name)
                .map_err(|e| format!("cannot record the project in the database: {e}"))?;
        Ok(conn)
    }

    /// After a failure, the folder is indexing again (not failed) while the retry runs.
    fn retrying(&mut self) {
        if std::mem::take(&mut self.failed) {
            let _ = self.actor.send(Request::AddedRoot(self.opts.root.clone()));
        }
    }

    /// Tells the editor (progress ends, showMessage) and the actor, so `mira.status` shows
    /// the folder as failed instead of "indexing…" forever.
    fn failed(&mut self, msg: String) {
        self.failed = true;
        tracing::warn!(root = %self.opts.root.display(), "{msg}");
        let _ = self.actor.send(Request::RootFailed {
            root: self.opts.root.clone(),
            reason: msg.clone(),
        });
        let _ = self.progress.send(IndexProgress::Failed(msg));
    }

    /// The actor's key for a path relative to this worker's root.
    fn key(&self, rel: String) -> String {
        match self.keys {
            Keys::Relative => rel,
            Keys::Absolute => self.opts.root.join(&rel).display().to_string(),
        }
    }

    fn send_updates(&self, mut updates: Vec<FileUpdate>) {
        if self.keys == Keys::Absolute {
            for u in &mut updates {
                let (FileUpdate::Indexed { path, .. } | FileUpdate::Removed { path }) = u;
                *path = self.key(std::mem::take(path));
            }
        }
        let _ = self.actor.send(Request::Updates(updates));
    }

    fn ignored(&mut self, p: &Path) -> bool {
        let Ok(rel) = p.strip_prefix(&self.opts.root) else {
            return true;
        };
        if rel
            .components()
            .any(|c| c.as_os_str().to_string_lossy().starts_with('.'))
        {
            return true;
        }
        let is_dir = p.is_dir();
        self.exclude
            .as_ref()
            .is_some_and(|o| o.matched(p, is_dir).is_ignore())
            || self
                .ignore
                .as_mut()
                .is_some_and(|g| g.is_ignored(p, is_dir))
    }

    fn crawl(&mut self, conn: &mut rusqlite::Connection) {
        self.retrying();
        let _ = self.progress.send(IndexProgress::Started);
        let pending: Mutex<Vec<FileUpdate>> = Mutex::new(Vec::new());
        let flush = |force: bool| {
            let mut p = pending.lock().unwrap_or_else(|e| e.into_inner());
            if force || p.len() >= 256 {
                let batch = std::mem::take(&mut *p);
                if !batch.is_empty() {
                    self.send_updates(batch);
                }
            }
        };
        let result = crawl::crawl(
            conn,
            self.project_id,
            &self.opts.root,
            &self.opts.crawl,
            &|p| {
                flush(true);
                // The parsers are done and every update they sent is flushed: the table is
                // complete (references are still being stored).
                if p.symbols_just_parsed() {
                    let _ = self
                        .actor
                        .send(Request::SymbolsDone(self.opts.root.clone()));
                }
                let _ = self.progress.send(IndexProgress::Crawling(p));
            },
            // Called by the parsers as each file is parsed: the table fills at their pace.
            &|u| {
                pending.lock().unwrap_or_else(|e| e.into_inner()).push(u);
                flush(false);
            },
        );
        flush(true);
        match result {
            Ok(stats) => {
                let stats = Arc::new(stats);
                let _ = self.actor.send(Request::ColdDone {
                    root: self.opts.root.clone(),
                    stats: stats.clone(),
                });
                let _ = self.progress.send(IndexProgress::Finished(stats));
            }
            Err(e) => self.failed(format!("indexing failed: {e}")),
        }
    }
}

type Debouncer = notify_debouncer_full::Debouncer<
    notify::RecommendedWatcher,
    notify_debouncer_full::RecommendedCache,
>;

fn start_watcher(root: &Path, work: std_mpsc::Sender<DiskWork>) -> Option<Debouncer> {
    let handler = move |res: notify_debouncer_full::DebounceEventResult| match res {
        Ok(events) => {
            let paths: Vec<PathBuf> = events
                .into_iter()
                .filter(|e| !e.kind.is_access())
                .flat_map(|e| e.event.paths)
                .collect();
            if !paths.is_empty() {
                let _ = work.send(DiskWork::Paths(paths));
            }
        }
        Err(errors) => {
            for e in errors {
                tracing::warn!(error = %e, "file watcher error; re-crawling to stay consistent");
            }
            let _ = work.send(DiskWork::Crawl);
        }
    };
    let mut debouncer = match notify_debouncer_full::new_debouncer(DEBOUNCE, None, handler) {
        Ok(d) => d,
        Err(e) => {
            tracing::warn!(error = %e, "cannot watch files; unopened files update on `mira.reindex`");
            return None;
        }
    };
    if let Err(e) = debouncer.watch(root, RecursiveMode::Recursive) {
        tracing::warn!(
            error = %e,
            "cannot watch {} (raise fs.inotify.max_user_watches?); unopened files update on `mira.reindex`",
            root.display()
        );
        return None;
    }
    Some(debouncer)
}
