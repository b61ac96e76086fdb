//! Editor-side bookkeeping for the actions: the session's anchored memories
//! (`session::anchors`, started here once the index exists), the anchor a Helix user picked with "remember selection…", and pending proposals offered as
//! code actions. Everything a code action reads is in memory here: no SQLite on that path.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tower_lsp_server::ls_types::{Range, Uri};

use super::state::{EditorState, Focus, ServerState};
use crate::agent::proposals;
use crate::index::SymbolContext;
use crate::memory::anchors::Anchor;

/// A "remember selection…" without text (Helix) anchors the next typed `mira.remember` for
/// this long.
const PENDING_ANCHOR_FOR: Duration = Duration::from_secs(600);

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

/// Called from `initialize` once the index and the store exist: load the pending proposals,
/// and start the anchored memories (`session::anchors`).
pub fn start(state: &Arc<ServerState>) {
    let (Some(session), Some(index)) = (state.session(), state.index.handle()) else {
        return;
    };
    let Ok(store) = session.store.clone() else {
        return;
    };
    refresh_proposals(state);
    state.editor.anchors.start(store, &session.project, index);
}

/// Re-read the pending proposals in the background (at start).
pub fn refresh_proposals(state: &Arc<ServerState>) {
    let st = state.clone();
    tokio::spawn(async move { reload_proposals(&st).await });
}

/// Re-read the pending proposals (after one was made, applied or rejected). Awaited before
/// the message that says so: an editor asked for code actions right after "rejected
/// proposal #2" must not be offered #2 again (a race the Helix replay caught under load).
pub async fn reload_proposals(state: &ServerState) {
    let Ok(store) = state.store().cloned() else {
        return;
    };
    let read = tokio::task::spawn_blocking(move || store.read(proposals::pending)).await;
    if let Ok(Ok(list)) = read {
        *state
            .editor
            .proposals
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = list;
    }
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
    state.editor.anchors.watch(cx.key.clone());
    Ok((
        Anchor {
            path: cx.key.clone(),
            symbol: cx.qualified.clone(),
            content_hash: cx.hash.clone(),
        },
        cx,
    ))
}
