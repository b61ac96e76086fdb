//! The index actor: one thread owns the symbol table and every open document's tree.
//!
//! Document events (in client order) and queries arrive on two channels; before answering
//! a query the actor drains every document event already sent, so a query always sees the
//! edits the client sent before it. The cold crawl and the file watcher run on their own
//! threads with their own SQLite connections and only send finished results here, so the
//! actor never waits on disk or on a whole-workspace parse.

use super::crawl::{self, CrawlOptions, CrawlProgress, CrawlStats, FileUpdate};
use super::db;
use super::live::{OpenDoc, ParseBudget, ParseJob, Parsed};
use super::model::{Span, Symbol, SymbolKind};
use super::parse::parse_and_extract;
use super::registry::Lang;
use super::table::SymbolHit;
use super::watch;
use crate::documents::{DocEvent, DocId};
use crate::store::Store;
use ropey::Rope;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use synced::{LiveTable, View};
use tokio::sync::{mpsc, oneshot};

mod focus;
mod reach;
mod synced;
pub use focus::{
    FocusError, Related, SymbolChange, SymbolContext, SymbolWatch, file_hashes, symbol_hash,
};
pub use reach::InReach;

#[derive(Clone, Debug)]
pub struct IndexOptions {
    pub root: PathBuf,
    /// Shown in the projects table when the project is first seen.
    pub project_name: String,
    pub crawl: CrawlOptions,
    pub watch: bool,
    /// How long an open document's reparse may hold up the actor (`index.parse_budget_ms`).
    pub parse_budget: ParseBudget,
}

impl IndexOptions {
    /// The options for `project` under the `[index]` configuration (every face indexes alike).
    pub fn for_project(
        project: &crate::project::Project,
        cfg: &super::config::IndexConfig,
    ) -> IndexOptions {
        IndexOptions {
            root: project.root.clone(),
            project_name: project.name.clone(),
            crawl: CrawlOptions::from_config(cfg),
            watch: cfg.watch,
            parse_budget: ParseBudget::from_ms(cfg.parse_budget_ms),
        }
    }
}

/// What the cold index reports while it runs (the LSP layer turns it into `$/progress`).
#[derive(Clone, Debug)]
pub enum IndexProgress {
    Started,
    Crawling(CrawlProgress),
    Finished(Arc<CrawlStats>),
    Failed(String),
}

/// A symbol where it is: a path and byte spans with (row, byte column) points. Showing it in
/// another encoding is the adapter's work (`lsp/to_proto.rs`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SymbolInfo {
    pub name: String,
    pub kind: SymbolKind,
    pub container: Option<String>,
    pub path: PathBuf,
    pub range: Span,
    pub selection: Span,
    pub signature: String,
    pub doc: Option<String>,
    pub declaration: bool,
    /// The file's text is known to be ASCII: a byte column is a column in every encoding.
    /// (An outline's symbols say `false`: its text comes with it.)
    pub ascii: bool,
}

impl SymbolInfo {
    pub fn from_hit(h: &SymbolHit, root: &Path) -> SymbolInfo {
        info(&h.symbol, &synced::path_for(root, &h.path), h.ascii)
    }

    /// The zero-based line the symbol's name is on.
    pub fn line(&self) -> u32 {
        self.selection.start.row
    }
}

/// Symbols, with the text of each open document among them: their spans are byte offsets
/// into exactly that text (unsaved edits included), which converting them needs.
#[derive(Clone, Debug, Default)]
pub struct Found {
    pub symbols: Vec<SymbolInfo>,
    pub open_texts: HashMap<PathBuf, Rope>,
}

/// A document outline node.
#[derive(Clone, Debug, PartialEq)]
pub struct OutlineNode {
    pub symbol: SymbolInfo,
    pub children: Vec<OutlineNode>,
}

/// An open document's outline, with the text its spans are offsets into.
#[derive(Clone, Debug)]
pub struct Outline {
    pub nodes: Vec<OutlineNode>,
    pub text: Rope,
}

#[derive(Clone, Debug, Default)]
pub struct IndexStatus {
    pub files: usize,
    pub symbols: usize,
    pub open_documents: usize,
    /// Every indexed folder finished its cold index.
    pub cold_index_done: bool,
    /// Every indexed folder's symbols are in the view (workspace/symbol, definitions and
    /// outlines are complete); references and code-search chunks may still be being stored.
    pub symbols_done: bool,
    /// The latest crawl of each indexed folder (the project's first), once it finished.
    pub roots: Vec<(PathBuf, Arc<CrawlStats>)>,
    /// Folders whose disk worker failed, with the reason (they are not being indexed).
    pub failed: Vec<(PathBuf, String)>,
}

impl IndexStatus {
    /// Files left out (too large, binary, minified, unreadable), with their folder.
    pub fn skipped(&self) -> impl Iterator<Item = (&Path, &crawl::Skipped)> {
        self.roots
            .iter()
            .flat_map(|(root, s)| s.skipped.iter().map(move |k| (root.as_path(), k)))
    }
}

pub(crate) enum Request {
    WorkspaceSymbols {
        query: String,
        kind: Option<SymbolKind>,
        limit: usize,
        reply: oneshot::Sender<Found>,
    },
    Outline {
        doc: DocId,
        reply: oneshot::Sender<Option<Outline>>,
    },
    Definition {
        doc: DocId,
        offset: usize,
        reply: oneshot::Sender<Found>,
    },
    Status {
        reply: oneshot::Sender<IndexStatus>,
    },
    SymbolAt {
        doc: DocId,
        offset: usize,
        reply: oneshot::Sender<Result<SymbolContext, FocusError>>,
    },
    Enclosing {
        doc: DocId,
        start: usize,
        end: usize,
        reply: oneshot::Sender<Result<SymbolContext, FocusError>>,
    },
    NameAt {
        doc: DocId,
        offset: usize,
        reply: oneshot::Sender<Option<String>>,
    },
    Watch(SymbolWatch),
    /// Report an open file's symbols to the watchers again (see [`IndexHandle::report_again`]).
    ReportAgain(String),
    InReach {
        doc: DocId,
        line: u32,
        limit: usize,
        reply: oneshot::Sender<Vec<reach::InReach>>,
    },
    Loaded(Vec<db::StoredFile>),
    Updates(Vec<FileUpdate>),
    /// A folder's crawl stored every symbol; its code-search chunks follow.
    SymbolsDone(PathBuf),
    ColdDone {
        root: PathBuf,
        stats: Arc<CrawlStats>,
    },
    /// A folder's disk worker failed before or during its crawl.
    RootFailed {
        root: PathBuf,
        reason: String,
    },
    /// Another workspace folder: its disk worker now runs (keys are absolute paths).
    AddedRoot(PathBuf),
    /// A workspace folder went away: its files leave the table (open buffers stay).
    RemovedRoot(PathBuf),
}

/// One indexed folder's disk worker, as the handle controls it.
struct RootWorker {
    work: std::sync::mpsc::Sender<watch::DiskWork>,
    shutdown: Arc<AtomicBool>,
}

/// A cheap, cloneable handle; all queries are answered by the actor in event order.
#[derive(Clone)]
pub struct IndexHandle {
    tx: mpsc::UnboundedSender<Request>,
    reindex: std::sync::mpsc::Sender<watch::DiskWork>,
    /// What starting another folder needs, and the folders started so far.
    folders: Arc<std::sync::Mutex<Folders>>,
}

struct Folders {
    store: Store,
    /// The project's options; another folder gets the same with its own root and name.
    base: IndexOptions,
    extra: HashMap<PathBuf, RootWorker>,
}

/// Why a workspace folder is not indexed on its own.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum FolderError {
    #[error("{0} is already indexed")]
    AlreadyIndexed(PathBuf),
    #[error("{0} is inside the indexed folder {1}")]
    Inside(PathBuf, PathBuf),
    #[error("{0} contains the indexed folder {1}; open it as its own window to index it")]
    Contains(PathBuf, PathBuf),
    #[error("{0} is not a directory")]
    NotADirectory(PathBuf),
}

#[derive(Debug, thiserror::Error)]
#[error("the index stopped (see the log for why); restart the language server")]
pub struct IndexGone;

impl IndexHandle {
    async fn ask<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<T>) -> Request,
    ) -> Result<T, IndexGone> {
        let (reply, rx) = oneshot::channel();
        self.tx.send(make(reply)).map_err(|_| IndexGone)?;
        rx.await.map_err(|_| IndexGone)
    }

    pub async fn workspace_symbols(
        &self,
        query: &str,
        kind: Option<SymbolKind>,
        limit: usize,
    ) -> Result<Found, IndexGone> {
        let query = query.to_string();
        self.ask(|reply| Request::WorkspaceSymbols {
            query,
            kind,
            limit,
            reply,
        })
        .await
    }

    /// The outline of an open document (`None` when it is not open or not a known language).
    pub async fn outline(&self, doc: &DocId) -> Result<Option<Outline>, IndexGone> {
        let doc = doc.clone();
        self.ask(|reply| Request::Outline { doc, reply }).await
    }

    /// Definitions of the identifier at byte `offset` of the open document `doc`, best first.
    pub async fn definition(&self, doc: &DocId, offset: usize) -> Result<Found, IndexGone> {
        let doc = doc.clone();
        self.ask(|reply| Request::Definition { doc, offset, reply })
            .await
    }

    /// What hover shows: the best definition of the identifier at byte `offset`.
    pub async fn hover(&self, doc: &DocId, offset: usize) -> Result<Option<SymbolInfo>, IndexGone> {
        Ok(self
            .definition(doc, offset)
            .await?
            .symbols
            .into_iter()
            .next())
    }

    pub async fn status(&self) -> Result<IndexStatus, IndexGone> {
        self.ask(|reply| Request::Status { reply }).await
    }

    /// Re-crawls the project and every other folder (`mira.reindex`); the project's
    /// progress arrives like the cold index's.
    pub fn reindex(&self) {
        let _ = self.reindex.send(watch::DiskWork::Crawl);
        for w in self.lock_folders().extra.values() {
            let _ = w.work.send(watch::DiskWork::Crawl);
        }
    }

    fn lock_folders(&self) -> std::sync::MutexGuard<'_, Folders> {
        self.folders.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Indexes another workspace folder beside the project (crawl, watcher, live edits);
    /// its symbols answer workspace/symbol and definition like the project's. A folder
    /// nested in (or holding) one already indexed is refused: its files would count twice.
    pub fn add_folder(&self, root: &Path) -> Result<(), FolderError> {
        let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        if !root.is_dir() {
            return Err(FolderError::NotADirectory(root));
        }
        let mut f = self.lock_folders();
        let indexed = std::iter::once(&f.base.root).chain(f.extra.keys());
        for r in indexed {
            if *r == root {
                return Err(FolderError::AlreadyIndexed(root));
            }
            if root.starts_with(r) {
                return Err(FolderError::Inside(root, r.clone()));
            }
            if r.starts_with(&root) {
                return Err(FolderError::Contains(root, r.clone()));
            }
        }
        let opts = IndexOptions {
            project_name: crate::project::folder_name(&root),
            root: root.clone(),
            ..f.base.clone()
        };
        let (work_tx, work) = std::sync::mpsc::channel();
        let shutdown = Arc::new(AtomicBool::new(false));
        let _ = self.tx.send(Request::AddedRoot(root.clone()));
        // Only the project's crawl shows progress; another folder's failures go to the log.
        let (progress, _) = mpsc::unbounded_channel();
        watch::start_disk_worker(watch::DiskWorkerSpec {
            store: f.store.clone(),
            opts,
            keys: watch::Keys::Absolute,
            actor: self.tx.clone(),
            work,
            work_tx: work_tx.clone(),
            progress,
            shutdown: shutdown.clone(),
        });
        f.extra.insert(
            root,
            RootWorker {
                work: work_tx,
                shutdown,
            },
        );
        Ok(())
    }

    /// Stops indexing a folder [`add_folder`](Self::add_folder) started; its files leave
    /// the table (what is stored stays, for when it is opened again). `false` when it was
    /// not indexed as another folder.
    pub fn remove_folder(&self, root: &Path) -> bool {
        let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        let Some(w) = self.lock_folders().extra.remove(&root) else {
            return false;
        };
        w.shutdown.store(true, Ordering::Relaxed);
        let _ = self.tx.send(Request::RemovedRoot(root));
        true
    }

    /// The folders indexed beside the project.
    pub fn extra_folders(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = self.lock_folders().extra.keys().cloned().collect();
        v.sort();
        v
    }
}

/// Starts the actor, the cold index and (if enabled) the watcher. Returns at once.
pub fn start(
    store: Store,
    opts: IndexOptions,
    docs: mpsc::UnboundedReceiver<DocEvent>,
    progress: mpsc::UnboundedSender<IndexProgress>,
) -> IndexHandle {
    let (tx, rx) = mpsc::unbounded_channel();
    let (parsed_tx, parsed_rx) = mpsc::unbounded_channel();
    let (disk_tx, disk_rx) = std::sync::mpsc::channel();
    let handle = IndexHandle {
        tx: tx.clone(),
        reindex: disk_tx.clone(),
        folders: Arc::new(std::sync::Mutex::new(Folders {
            store: store.clone(),
            base: opts.clone(),
            extra: HashMap::new(),
        })),
    };
    let actor = Actor {
        root: opts.root.clone(),
        max_bytes: opts.crawl.max_file_bytes,
        opened: opts.crawl.opened.clone(),
        symbols: LiveTable::default(),
        open: HashMap::new(),
        crawling: HashSet::from([opts.root.clone()]),
        symbols_pending: HashSet::from([opts.root.clone()]),
        failed: Vec::new(),
        stats: Vec::new(),
        disk: disk_tx.clone(),
        watchers: Vec::new(),
        parse_budget: opts.parse_budget,
        parser: BackgroundParser::new(parsed_tx),
    };
    let spawned = std::thread::Builder::new()
        .name("mira-index".into())
        .spawn(move || actor.run(docs, rx, parsed_rx));
    if let Err(e) = spawned {
        let _ = progress.send(IndexProgress::Failed(format!(
            "cannot start the index thread: {e}"
        )));
        return handle;
    }
    watch::start_disk_worker(watch::DiskWorkerSpec {
        store,
        opts,
        keys: watch::Keys::Relative,
        actor: tx,
        work: disk_rx,
        work_tx: disk_tx,
        progress,
        shutdown: Arc::new(AtomicBool::new(false)),
    });
    handle
}

struct OpenEntry {
    key: String,
    doc: OpenDoc,
}

struct Actor {
    root: PathBuf,
    /// Open documents larger than this are not parsed, like files the crawl skips: a
    /// 50 MB buffer must not stall every other document's symbols.
    max_bytes: u64,
    /// Where opened documents live: crawls walk those folders first.
    opened: crawl::OpenFolders,
    /// Every query reads it through [`Actor::view`], which syncs open buffers first.
    symbols: LiveTable,
    open: HashMap<DocId, OpenEntry>,
    /// Folders whose first crawl has not finished.
    crawling: HashSet<PathBuf>,
    /// Of `crawling`, those whose symbols are not all stored yet.
    symbols_pending: HashSet<PathBuf>,
    /// Folders whose disk worker failed, and why; a later successful crawl clears it.
    failed: Vec<(PathBuf, String)>,
    /// Each folder's latest finished crawl, the project's first.
    stats: Vec<(PathBuf, Arc<CrawlStats>)>,
    disk: std::sync::mpsc::Sender<watch::DiskWork>,
    /// Who wants to hear about symbol changes (anchored memories).
    watchers: Vec<SymbolWatch>,
    parse_budget: ParseBudget,
    /// Finishes the reparses that ran out of budget.
    parser: BackgroundParser,
}

/// Counts handled events, for tests that need to know the actor caught up.
pub static EVENTS_HANDLED: AtomicUsize = AtomicUsize::new(0);

impl Actor {
    fn run(
        mut self,
        mut docs: mpsc::UnboundedReceiver<DocEvent>,
        mut requests: mpsc::UnboundedReceiver<Request>,
        mut parsed: mpsc::UnboundedReceiver<(DocId, Parsed)>,
    ) {
        let rt = match tokio::runtime::Builder::new_current_thread().build() {
            Ok(rt) => rt,
            Err(e) => {
                tracing::error!(error = %e, "index actor cannot start its event loop");
                return;
            }
        };
        rt.block_on(async move {
            loop {
                tokio::select! {
                    biased;
                    ev = docs.recv() => match ev {
                        Some(ev) => self.on_doc(ev),
                        // The server is gone: stop, which also stops the disk worker.
                        None => break,
                    },
                    req = requests.recv() => match req {
                        Some(req) => {
                            // Every edit the client sent before this request is applied first.
                            while let Ok(ev) = docs.try_recv() {
                                self.on_doc(ev);
                            }
                            self.on_request(req);
                        }
                        None => break,
                    },
                    Some((doc, done)) = parsed.recv() => {
                        // Installed after every edit sent before it, which it replays.
                        while let Ok(ev) = docs.try_recv() {
                            self.on_doc(ev);
                        }
                        self.on_parsed(doc, done);
                    }
                }
                EVENTS_HANDLED.fetch_add(1, Ordering::Relaxed);
            }
        });
    }

    fn key_for(&self, path: &Path) -> String {
        crawl::relative(&self.root, path).unwrap_or_else(|| path.display().to_string())
    }

    fn path_for(&self, key: &str) -> PathBuf {
        synced::path_for(&self.root, key)
    }

    /// The index as queries see it: open buffers' latest symbols included.
    fn view(&mut self) -> View<'_> {
        self.symbols.view(&self.open, &self.root)
    }

    fn on_doc(&mut self, ev: DocEvent) {
        match ev {
            DocEvent::Opened {
                doc: id,
                path,
                version,
                language_id,
                text,
            } => {
                let Some(path) = path else {
                    return;
                };
                self.opened.note(&path);
                let Some(lang) = Lang::for_document(&language_id, &path) else {
                    return;
                };
                if text.len_bytes() as u64 > self.max_bytes {
                    tracing::info!(
                        path = %path.display(),
                        bytes = text.len_bytes(),
                        "open document over index.max_file_bytes: not indexed"
                    );
                    return;
                }
                let key = self.key_for(&path);
                if let Some(mut doc) = OpenDoc::open(lang, version, text) {
                    doc.set_parse_budget(self.parse_budget);
                    self.open.insert(id.clone(), OpenEntry { key, doc });
                    self.report_open(&id);
                    self.symbols.touch(id);
                }
            }
            DocEvent::Changed {
                doc: id,
                version,
                edits,
                text,
            } => {
                if let Some(entry) = self.open.get_mut(&id) {
                    entry.doc.apply(version, &edits, text);
                    let job = entry.doc.parse_job();
                    self.report_open(&id);
                    if let Some(job) = job {
                        self.parser.submit(id.clone(), job);
                    }
                    self.symbols.touch(id);
                }
            }
            DocEvent::Saved { path, .. } => {
                if let Some(path) = path {
                    let _ = self.disk.send(watch::DiskWork::Paths(vec![path]));
                }
            }
            DocEvent::Closed { doc: id } => {
                self.symbols.untouch(&id);
                if let Some(entry) = self.open.remove(&id) {
                    // The buffer's unsaved state leaves with it: back to what is on disk.
                    let path = self.path_for(&entry.key);
                    self.reload_from_disk(&entry.key, entry.doc.lang, &path);
                }
            }
        }
    }

    /// A background parse finished: catch the document up (a closed or since re-parsed
    /// document drops it), and parse again in the background if that ran out of budget.
    fn on_parsed(&mut self, id: DocId, done: Parsed) {
        let Some(entry) = self.open.get_mut(&id) else {
            return;
        };
        if entry.doc.install(done).is_none() {
            return;
        }
        if let Some(job) = entry.doc.parse_job() {
            self.parser.submit(id.clone(), job);
        }
        self.report_open(&id);
        self.symbols.touch(id);
    }

    fn reload_from_disk(&mut self, key: &str, lang: Lang, path: &Path) {
        match std::fs::read(path) {
            Ok(bytes) => match parse_and_extract(lang, &bytes) {
                Some(syms) => {
                    self.symbols
                        .upsert(key.to_string(), lang, bytes.is_ascii(), Arc::new(syms))
                }
                None => self.symbols.remove(key),
            },
            Err(_) => self.symbols.remove(key),
        }
    }

    /// A folder left the workspace: forget its files and its crawl, keep open buffers.
    fn drop_root(&mut self, root: &Path) {
        self.crawling.remove(root);
        self.symbols_pending.remove(root);
        self.failed.retain(|(r, _)| r != root);
        self.stats.retain(|(r, _)| r != root);
        for key in self.symbols.keys_under(root) {
            if !self.is_open_key(&key) {
                self.symbols.remove(&key);
            }
        }
    }

    fn is_open_key(&self, key: &str) -> bool {
        self.open.values().any(|e| e.key == key)
    }

    fn on_request(&mut self, req: Request) {
        match req {
            Request::Loaded(files) => {
                for f in files {
                    let Some(lang) = Lang::by_name(&f.language) else {
                        continue;
                    };
                    if !self.is_open_key(&f.path) {
                        self.symbols
                            .upsert(f.path, lang, f.ascii, Arc::new(f.symbols));
                    }
                }
            }
            Request::Updates(updates) => {
                for u in updates {
                    match u {
                        FileUpdate::Indexed {
                            path,
                            lang,
                            ascii,
                            symbols,
                        } => {
                            // Unsaved state wins over disk.
                            if !self.is_open_key(&path) {
                                self.report_disk(&path, Some((lang, &symbols)));
                                self.symbols.upsert(path, lang, ascii, symbols);
                            }
                        }
                        FileUpdate::Removed { path } => {
                            if !self.is_open_key(&path) {
                                self.report_disk(&path, None);
                                self.symbols.remove(&path);
                            }
                        }
                    }
                }
            }
            Request::SymbolsDone(root) => {
                self.symbols_pending.remove(&root);
            }
            Request::ColdDone { root, stats } => {
                self.crawling.remove(&root);
                self.symbols_pending.remove(&root);
                self.failed.retain(|(r, _)| *r != root);
                match self.stats.iter_mut().find(|(r, _)| *r == root) {
                    Some(slot) => slot.1 = stats,
                    None if root == self.root => self.stats.insert(0, (root, stats)),
                    None => self.stats.push((root, stats)),
                }
            }
            Request::RootFailed { root, reason } => {
                self.crawling.remove(&root);
                self.symbols_pending.remove(&root);
                self.failed.retain(|(r, _)| *r != root);
                self.failed.push((root, reason));
            }
            Request::AddedRoot(root) => {
                self.failed.retain(|(r, _)| *r != root);
                self.crawling.insert(root.clone());
                self.symbols_pending.insert(root);
            }
            Request::RemovedRoot(root) => self.drop_root(&root),
            Request::WorkspaceSymbols {
                query,
                kind,
                limit,
                reply,
            } => {
                let view = self.view();
                let hits = view.table.search(&query, kind, limit);
                let _ = reply.send(view.infos(hits));
            }
            Request::Outline { doc, reply } => {
                let outline = self.open.get(&doc).map(|e| {
                    let path = self.path_for(&e.key);
                    Outline {
                        nodes: outline(&e.doc.symbols.symbols, &path, false),
                        text: e.doc.rope.clone(),
                    }
                });
                let _ = reply.send(outline);
            }
            Request::Definition { doc, offset, reply } => {
                let result = self.view().definition(&doc, offset);
                let _ = reply.send(result);
            }
            Request::SymbolAt { doc, offset, reply } => {
                let _ = reply.send(self.view().symbol_at(&doc, offset));
            }
            Request::Enclosing {
                doc,
                start,
                end,
                reply,
            } => {
                let _ = reply.send(self.view().enclosing(&doc, start, end));
            }
            Request::NameAt { doc, offset, reply } => {
                let _ = reply.send(self.view().name_at(&doc, offset));
            }
            Request::Watch(w) => self.watchers.push(w),
            Request::ReportAgain(key) => {
                let open = self
                    .open
                    .iter()
                    .find(|(_, e)| e.key == key)
                    .map(|(id, _)| id.clone());
                if let Some(id) = open {
                    self.report_open(&id);
                }
            }
            Request::InReach {
                doc,
                line,
                limit,
                reply,
            } => {
                let _ = reply.send(self.view().in_reach(&doc, line, limit));
            }
            Request::Status { reply } => {
                let view = self.view();
                let (files, symbols) = (view.table.file_count(), view.table.symbol_count());
                let _ = reply.send(IndexStatus {
                    files,
                    symbols,
                    open_documents: self.open.len(),
                    cold_index_done: self.crawling.is_empty(),
                    symbols_done: self.symbols_pending.is_empty(),
                    roots: self.stats.clone(),
                    failed: self.failed.clone(),
                });
            }
        }
    }
}

impl View<'_> {
    fn definition(&self, doc: &DocId, offset: usize) -> Found {
        let Some(entry) = self.open.get(doc) else {
            return Found::default();
        };
        let Some(name) = identifier_at(&entry.doc, offset) else {
            return Found::default();
        };
        let hits = self.table.definitions(&name, Some(&entry.key), 16);
        self.infos(hits)
    }

    /// The hits as symbols, with the text of every open document among them (an O(1) clone).
    fn infos(&self, hits: Vec<SymbolHit>) -> Found {
        let mut open_texts = HashMap::new();
        let symbols = hits
            .iter()
            .map(|h| {
                let path = self.path_for(&h.path);
                if !open_texts.contains_key(&path)
                    && let Some(e) = self.open.values().find(|e| e.key == h.path)
                {
                    open_texts.insert(path.clone(), e.doc.rope.clone());
                }
                info(&h.symbol, &path, h.ascii)
            })
            .collect();
        Found {
            symbols,
            open_texts,
        }
    }
}

/// One thread, started on first use, that runs the open documents' parse jobs in order
/// (each document has at most one in flight) and sends each result to the actor.
struct BackgroundParser {
    jobs: Option<std::sync::mpsc::Sender<(DocId, ParseJob)>>,
    done: mpsc::UnboundedSender<(DocId, Parsed)>,
}

impl BackgroundParser {
    fn new(done: mpsc::UnboundedSender<(DocId, Parsed)>) -> Self {
        BackgroundParser { jobs: None, done }
    }

    fn submit(&mut self, doc: DocId, job: ParseJob) {
        let work = (doc, job);
        let work = match &self.jobs {
            Some(tx) => match tx.send(work) {
                Ok(()) => return,
                Err(std::sync::mpsc::SendError(work)) => work,
            },
            None => work,
        };
        let (tx, rx) = std::sync::mpsc::channel::<(DocId, ParseJob)>();
        let done = self.done.clone();
        let spawned = std::thread::Builder::new()
            .name("mira-parse".into())
            .spawn(move || {
                super::priority::background();
                for (doc, job) in rx {
                    if done.send((doc, job.run())).is_err() {
                        break;
                    }
                }
            });
        match spawned {
            Ok(_) => {
                let _ = tx.send(work);
                self.jobs = Some(tx);
            }
            // The document stays on its previous parse until an edit parses in time.
            Err(e) => tracing::error!(error = %e, "cannot start the background parse thread"),
        }
    }
}

/// The identifier under (or just before) `byte` in an open document.
fn identifier_at(doc: &OpenDoc, byte: usize) -> Option<String> {
    let text = doc.text();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80;
    let mut start = byte.min(text.len());
    if (start == text.len() || !is_ident(text[start])) && start > 0 && is_ident(text[start - 1]) {
        start -= 1;
    }
    if start >= text.len() || !is_ident(text[start]) {
        return None;
    }
    let mut s = start;
    while s > 0 && is_ident(text[s - 1]) {
        s -= 1;
    }
    let mut e = start;
    while e < text.len() && is_ident(text[e]) {
        e += 1;
    }
    std::str::from_utf8(&text[s..e]).ok().map(str::to_string)
}

fn info(s: &Symbol, path: &Path, ascii: bool) -> SymbolInfo {
    SymbolInfo {
        name: s.name.clone(),
        kind: s.kind,
        container: s.container.clone(),
        path: path.to_path_buf(),
        range: s.range,
        selection: s.selection,
        signature: s.signature.clone(),
        doc: s.doc.clone(),
        declaration: s.declaration,
        ascii,
    }
}

/// Builds the tree from parent indices (parents precede children).
fn outline(symbols: &[Symbol], path: &Path, ascii: bool) -> Vec<OutlineNode> {
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); symbols.len()];
    let mut roots = Vec::new();
    for (i, s) in symbols.iter().enumerate() {
        match s.parent {
            Some(p) if (p as usize) < i => children[p as usize].push(i),
            _ => roots.push(i),
        }
    }
    fn build(
        i: usize,
        symbols: &[Symbol],
        children: &[Vec<usize>],
        path: &Path,
        ascii: bool,
    ) -> OutlineNode {
        OutlineNode {
            symbol: info(&symbols[i], path, ascii),
            children: children[i]
                .iter()
                .map(|&c| build(c, symbols, children, path, ascii))
                .collect(),
        }
    }
    roots
        .into_iter()
        .map(|i| build(i, symbols, &children, path, ascii))
        .collect()
}
