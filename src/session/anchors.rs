//! Memories anchored to symbols, kept current while an editor is open: the files holding
//! anchors are watched through the live index, and the symbol changes it reports flag anchors
//! stale (or fresh again) in batched transactions. This sits on the session floor because it
//! joins `index` and `memory`, which share a floor and may not import each other.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Duration;

use tokio::sync::mpsc;

use crate::index::{IndexHandle, SymbolChange, SymbolInfo, SymbolWatch};
use crate::memory::anchors;
use crate::memory::{Memory, MemoryError};
use crate::project::Project;
use crate::store::{Store, projects};

/// Symbol changes arriving within this window are written in one transaction.
const OBSERVE_BATCH: Duration = Duration::from_millis(40);

/// The project's anchored memories as an editor session sees them. Cheap to clone; what a
/// code action or hover reads first (is this file anchored?) is in memory.
#[derive(Clone, Default)]
pub struct Anchors {
    /// Project-relative paths holding anchors: the index reports symbol changes there.
    paths: Arc<RwLock<HashSet<String>>>,
    /// The project's row, once known: reads need no write transaction.
    project: Arc<OnceLock<i64>>,
    /// The store and the project, once the session has them.
    place: Arc<OnceLock<(Store, PathBuf, String)>>,
}

impl Anchors {
    /// Loads the anchored paths and flags anchors stale as `index` reports changed symbols.
    /// Call on the runtime. The observer holds the store, not the caller: when the index
    /// stops, its channel closes and the task ends.
    pub fn start(&self, store: Store, project: &Project, index: &IndexHandle) {
        let (root, name) = (project.root.clone(), project.name.clone());
        let _ = self.place.set((store.clone(), root.clone(), name.clone()));
        let (tx, rx) = mpsc::unbounded_channel();
        let paths = self.paths.clone();
        index.watch_symbols(SymbolWatch {
            paths: paths.clone(),
            tx,
        });
        let known = self.project.clone();
        tokio::spawn(async move {
            let s = store.clone();
            let (r, n) = (root.clone(), name.clone());
            let loaded = tokio::task::spawn_blocking(move || {
                s.write(|tx| {
                    let pid = projects::ensure(tx, &r, &n)?;
                    Ok::<_, MemoryError>((pid, anchors::anchored_paths(tx, pid)?))
                })
            })
            .await;
            match loaded {
                Ok(Ok((pid, list))) => {
                    let _ = known.set(pid);
                    paths
                        .write()
                        .unwrap_or_else(|e| e.into_inner())
                        .extend(list);
                }
                Ok(Err(e)) => tracing::warn!("cannot read anchored memories: {e}"),
                Err(e) => tracing::warn!("cannot read anchored memories: {e}"),
            }
            observe(rx, store, root, name).await;
        });
    }

    pub fn is_anchored(&self, key: &str) -> bool {
        self.paths
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains(key)
    }

    /// Watch this project-relative path: a memory is being anchored there.
    pub fn watch(&self, key: String) {
        self.paths
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key);
    }

    /// Active memories anchored to (`key`, `qualified`), read off the runtime; empty when the
    /// file holds no anchors (no SQLite at all then).
    pub async fn memories(&self, key: String, qualified: String) -> Vec<Memory> {
        if !self.is_anchored(&key) {
            return Vec::new();
        }
        let Some((store, root, name)) = self.place.get().cloned() else {
            return Vec::new();
        };
        let known = self.project.get().copied();
        tokio::task::spawn_blocking(move || match known {
            Some(pid) => store
                .read(|c| {
                    anchors::memories_for_symbol(c, pid, &key, &qualified)
                        .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
                })
                .ok(),
            None => store
                .write(|tx| {
                    let pid = projects::ensure(tx, &root, &name)?;
                    anchors::memories_for_symbol(tx, pid, &key, &qualified)
                })
                .ok(),
        })
        .await
        .ok()
        .flatten()
        .unwrap_or_default()
    }
}

async fn observe(
    mut rx: mpsc::UnboundedReceiver<SymbolChange>,
    store: Store,
    root: PathBuf,
    name: String,
) {
    while let Some(first) = rx.recv().await {
        tokio::time::sleep(OBSERVE_BATCH).await;
        let mut latest = vec![first];
        while let Ok(more) = rx.try_recv() {
            latest.retain(|c| c.path != more.path);
            latest.push(more);
        }
        let (s, r, n) = (store.clone(), root.clone(), name.clone());
        let written = tokio::task::spawn_blocking(move || {
            s.write(|tx| {
                let pid = projects::ensure(tx, &r, &n)?;
                let mut changed = 0;
                for c in &latest {
                    let pairs: Vec<(&str, &str)> = c
                        .symbols
                        .iter()
                        .map(|(q, h)| (q.as_str(), h.as_str()))
                        .collect();
                    changed += anchors::observe_file(tx, pid, &c.path, &pairs)?;
                }
                Ok::<_, MemoryError>(changed)
            })
        })
        .await;
        match written {
            Ok(Ok(0)) => {}
            Ok(Ok(n)) => tracing::info!(anchors = n, "anchored memories changed state"),
            Ok(Err(e)) => tracing::warn!("cannot update anchored memories: {e}"),
            Err(e) => tracing::warn!("cannot update anchored memories: {e}"),
        }
    }
}

/// The anchors of the listed memories, read off the runtime (`None`: the read failed).
pub async fn of_memories(
    store: Store,
    ids: Vec<i64>,
) -> Option<std::collections::HashMap<i64, Vec<anchors::AnchorState>>> {
    tokio::task::spawn_blocking(move || {
        store.read(|c| {
            anchors::of_memories(c, &ids)
                .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
        })
    })
    .await
    .ok()?
    .ok()
}

/// Project-relative key and qualified name of a symbol as the index shows it.
pub fn symbol_key(root: &Path, info: &SymbolInfo) -> (String, String) {
    let key = crate::index::crawl::relative(root, &info.path)
        .unwrap_or_else(|| info.path.display().to_string());
    let sep = crate::index::Lang::for_path(&info.path).map_or(".", |l| l.spec().separator());
    let qualified = match &info.container {
        Some(c) => format!("{c}{sep}{}", info.name),
        None => info.name.clone(),
    };
    (key, qualified)
}

/// Memories anchored to code in files that changed on disk go stale (or fresh again when the
/// code is back): what the live index does in an editor session, for `mira index`. Blocks
/// (files, SQLite). Returns how many anchors changed state.
pub fn observe_on_disk(store: &Store, project: &Project) -> Result<usize, MemoryError> {
    use crate::index::{Lang, parse::parse_and_extract, service::file_hashes};
    let pid = store.write(|tx| projects::ensure(tx, &project.root, &project.name))?;
    let paths = store.read(|c| {
        anchors::anchored_paths(c, pid)
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
    })?;
    let seen: Vec<(String, Vec<(String, String)>)> = paths
        .into_iter()
        .map(|path| {
            let abs = project.root.join(&path);
            let symbols = match (Lang::for_path(&abs), std::fs::read(&abs)) {
                (Some(lang), Ok(bytes)) => parse_and_extract(lang, &bytes)
                    .map(|s| file_hashes(lang, &s, &bytes))
                    .unwrap_or_default(),
                _ => Vec::new(),
            };
            (path, symbols)
        })
        .collect();
    store.write(|tx| {
        let mut changed = 0;
        for (path, symbols) in &seen {
            let pairs: Vec<(&str, &str)> = symbols
                .iter()
                .map(|(q, h)| (q.as_str(), h.as_str()))
                .collect();
            changed += anchors::observe_file(tx, pid, path, &pairs)?;
        }
        Ok(changed)
    })
}
