//! The project an MCP session serves: the client's first `file://` root (roots/list, asked
//! once when the client says it is initialized), else the server's working directory.
//! Protocol 2026-07-28 forbids server-to-client requests, so there the working directory is it.

use std::path::PathBuf;
use std::time::Duration;

use rmcp::{Peer, RoleServer};
use tokio::sync::OnceCell;

use crate::agent::ProjectInfo;
use crate::store::Store;

/// A client that advertises roots but does not answer within this is not waited for.
const ROOTS_TIMEOUT: Duration = Duration::from_secs(3);

pub struct Projects {
    store: Store,
    cwd: PathBuf,
    current: OnceCell<ProjectInfo>,
}

impl Projects {
    pub fn new(store: Store, cwd: PathBuf) -> Projects {
        Projects {
            store,
            cwd,
            current: OnceCell::new(),
        }
    }

    /// The session's project (the working directory's if the client named no root).
    pub async fn current(&self) -> &ProjectInfo {
        self.current
            .get_or_init(|| resolve(self.store.clone(), self.cwd.clone()))
            .await
    }

    /// Asks the client for its roots when it has them; a tool call waits for the answer.
    pub async fn ask_client(&self, peer: &Peer<RoleServer>) {
        let has_roots = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        if !has_roots {
            return;
        }
        self.current
            .get_or_init(|| async {
                let dir = first_root(peer).await.unwrap_or_else(|| self.cwd.clone());
                resolve(self.store.clone(), dir).await
            })
            .await;
    }
}

#[allow(deprecated)] // roots are deprecated by SEP-2577, and still what today's agents send
async fn first_root(peer: &Peer<RoleServer>) -> Option<PathBuf> {
    let roots = match tokio::time::timeout(ROOTS_TIMEOUT, peer.list_roots()).await {
        Ok(Ok(r)) => r.roots,
        Ok(Err(e)) => {
            tracing::info!("roots/list failed ({e}); serving the working directory");
            return None;
        }
        Err(_) => {
            tracing::warn!("roots/list unanswered; serving the working directory");
            return None;
        }
    };
    roots
        .iter()
        .find_map(|r| crate::documents::file_uri_to_path(&r.uri).filter(|p| p.is_dir()))
}

async fn resolve(store: Store, dir: PathBuf) -> ProjectInfo {
    let detected = crate::project::detect(&dir);
    tokio::task::spawn_blocking(move || crate::session::project_info(&store, &detected))
        .await
        .unwrap_or_else(|_| ProjectInfo {
            id: None,
            root: dir.clone(),
            name: crate::agent::context::project_name(&dir, None),
        })
}
