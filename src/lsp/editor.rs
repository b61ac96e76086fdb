//! Editor-side bookkeeping for the actions: memories anchored to symbols (which files the
//! index watches, flagging anchors stale as code changes, "Mira remembers" on hover), the
//! anchor a Helix user picked with "remember selection…", and pending proposals offered as
//! code actions. Everything a code action reads is in memory here: no SQLite on that path.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tower_lsp_server::ls_types::{Range, Uri};

use super::state::{Focus, ServerState};
use crate::agent::proposals;
use crate::index::{SymbolChange, SymbolContext, SymbolInfo, SymbolWatch};
use crate::memory::anchors::{self, Anchor};
use crate::store::{Store, projects};

/// A "remember selection…" without text (Helix) anchors the next typed `mira.remember` for
/// this long.
const PENDING_ANCHOR_FOR: Duration = Duration::from_secs(600);
/// Symbol changes arriving within this window are written in one transaction.
const OBSERVE_BATCH: Duration = Duration::from_millis(40);

#[derive(Default)]
pub struct EditorState {
    /// Project-relative paths holding anchors: the index reports symbol changes there.
    anchored: Arc<RwLock<HashSet<String>>>,
    pending_anchor: Mutex<Option<(Focus, Instant)>>,
    proposals: Mutex<Vec<(i64, PathBuf)>>,
    /// The project's row, once known: hover reads anchors without a write transaction.
    project: Arc<OnceLock<i64>>,
    /// Documents whose edits could not be read or applied: Mira's text drifted from the
    /// editor's, so their changes are ignored until the editor opens them again.
    out_of_sync: Mutex<HashSet<Uri>>,
}

impl EditorState {
    /// Mark `uri` out of sync; true the first time (the user is told once).
    pub fn mark_out_of_sync(&self, uri: &Uri) -> bool {
        self.out_of_sync
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(uri.clone())
    }

    pub fn is_out_of_sync(&self, uri: &Uri) -> bool {
        self.out_of_sync
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(uri)
    }

    /// didOpen brings the whole text again.
    pub fn resynced(&self, uri: &Uri) {
        self.out_of_sync
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(uri);
    }

    pub fn pending_proposals_for(&self, path: &Path) -> Vec<i64> {
        self.proposals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(_, p)| p == path)
            .map(|(id, _)| *id)
            .collect()
    }

    pub fn is_anchored(&self, key: &str) -> bool {
        self.anchored
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains(key)
    }

    fn watch(&self, key: String) {
        self.anchored
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key);
    }

    pub fn set_pending_anchor(&self, focus: Focus) {
        *self
            .pending_anchor
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some((focus, Instant::now()));
    }

    /// The anchor picked by a recent "remember selection…" without text, used once.
    pub fn take_pending_anchor(&self) -> Option<Focus> {
        let taken = self
            .pending_anchor
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        taken
            .filter(|(_, at)| at.elapsed() < PENDING_ANCHOR_FOR)
            .map(|(f, _)| f)
    }
}

/// Called from `initialize` once the index and the store exist: load the anchored paths and
/// pending proposals, and flag anchors stale as the index reports changed symbols.
pub fn start(state: &Arc<ServerState>) {
    let (Some(session), Some(index)) = (state.session(), state.index.handle()) else {
        return;
    };
    let Ok(store) = session.store.clone() else {
        return;
    };
    let (tx, rx) = mpsc::unbounded_channel();
    let paths = state.editor.anchored.clone();
    index.watch_symbols(SymbolWatch {
        paths: paths.clone(),
        tx,
    });
    refresh_proposals(state);
    let root = session.project.root.clone();
    let name = session.project.name.clone();
    let project = state.editor.project.clone();
    // Holds the store, not the server state: when the session ends the index stops, the
    // channel closes and this task ends.
    tokio::spawn(async move {
        let s = store.clone();
        let (r, n) = (root.clone(), name.clone());
        let loaded = tokio::task::spawn_blocking(move || {
            s.write(|tx| {
                let pid = projects::ensure(tx, &r, &n)?;
                Ok::<_, crate::memory::MemoryError>((pid, anchors::anchored_paths(tx, pid)?))
            })
        })
        .await;
        match loaded {
            Ok(Ok((pid, list))) => {
                let _ = project.set(pid);
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
                Ok::<_, crate::memory::MemoryError>(changed)
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

/// Re-read the pending proposals (after one was made, applied or rejected).
pub fn refresh_proposals(state: &Arc<ServerState>) {
    let Ok(store) = state.store().cloned() else {
        return;
    };
    let st = state.clone();
    tokio::spawn(async move {
        let read = tokio::task::spawn_blocking(move || store.read(proposals::pending)).await;
        if let Ok(Ok(list)) = read {
            *st.editor
                .proposals
                .lock()
                .unwrap_or_else(|e| e.into_inner()) = list;
        }
    });
}

/// The anchor for a memory about the code at `range`: the innermost enclosing symbol.
pub async fn anchor_at(
    state: &ServerState,
    uri: &Uri,
    range: Range,
) -> Result<(Anchor, SymbolContext), String> {
    let index = state
        .index
        .handle()
        .ok_or("the symbol index is unavailable (run `mira doctor`)")?;
    let (start, end) =
        super::from_proto::focus_range(&state.documents(), state.encoding(), uri, range)
            .map_err(|e| e.to_string())?;
    let cx = index
        .enclosing(&super::from_proto::doc(uri), start, end)
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    state.editor.watch(cx.key.clone());
    Ok((
        Anchor {
            path: cx.key.clone(),
            symbol: cx.qualified.clone(),
            content_hash: cx.hash.clone(),
        },
        cx,
    ))
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

/// Active memories anchored to (`key`, `qualified`), read off the runtime; empty when the
/// file holds no anchors (no SQLite at all then).
pub async fn anchored_memories(
    state: &ServerState,
    key: String,
    qualified: String,
) -> Vec<crate::memory::Memory> {
    if !state.editor.is_anchored(&key) {
        return Vec::new();
    }
    let (Some(session), Ok(store)) = (state.session(), state.store().cloned()) else {
        return Vec::new();
    };
    let (root, name) = (session.project.root.clone(), session.project.name.clone());
    let known = state.editor.project.get().copied();
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

/// The hover addition for a symbol with anchored memories.
pub fn hover_note(memories: &[crate::memory::Memory]) -> Option<String> {
    if memories.is_empty() {
        return None;
    }
    let mut s = String::from("\n\n---\n**Mira remembers:**\n");
    for m in memories {
        let stale = if m.stale {
            " *(stale: the code changed since)*"
        } else {
            ""
        };
        s.push_str(&format!("\n- #{} {}{stale}", m.id, m.body.trim()));
    }
    Some(s)
}
