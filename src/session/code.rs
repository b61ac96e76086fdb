//! Code search by meaning: after a crawl, with an embedder that embeds code, the chunks
//! without a vector are embedded — by the language server in the background after each crawl
//! ([`CodeEmbedding`]), by `mira index` at the end of its run ([`embed_code`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::embed::Embedder;
use crate::memory::MemoryService;
use crate::store::{Store, projects};

/// Chunks per embedding request.
const BATCH: usize = 64;

/// Embeds the chunks of the project at `root` that have no vector yet. `Ok(None)`: the project
/// was never indexed.
pub async fn embed_code(
    store: &Store,
    embedder: &Embedder,
    root: &Path,
) -> Result<Option<usize>, String> {
    let (s, r) = (store.clone(), root.to_path_buf());
    let pid = tokio::task::spawn_blocking(move || s.read(|c| projects::find(c, &r)))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    let Some(pid) = pid else {
        return Ok(None);
    };
    crate::index::vectors::embed_pending(store, embedder, pid, root, BATCH)
        .await
        .map(Some)
}

/// The language server's job: one run at a time, started after each crawl.
pub struct CodeEmbedding {
    memory: Option<MemoryService>,
    root: PathBuf,
    running: Arc<AtomicBool>,
}

impl CodeEmbedding {
    pub fn new(memory: Option<MemoryService>, root: PathBuf) -> CodeEmbedding {
        CodeEmbedding {
            memory,
            root,
            running: Default::default(),
        }
    }

    /// Starts a run unless one is running. Call on the runtime.
    pub fn start(&self) {
        let Some(memory) = self.memory.clone() else {
            return;
        };
        if self.running.swap(true, Ordering::SeqCst) {
            return;
        }
        let (root, running) = (self.root.clone(), self.running.clone());
        tokio::spawn(async move {
            // A local model may still be loading: it is set on the service when ready.
            for _ in 0..60 {
                if memory.embedder().is_some() {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            }
            if let Some(embedder) = memory.embedder().filter(Embedder::embeds_code) {
                match embed_code(memory.store(), &embedder, &root).await {
                    Ok(Some(n)) if n > 0 => tracing::info!(chunks = n, "code chunks embedded"),
                    Ok(_) => {}
                    Err(e) => tracing::warn!(
                        "embedding code chunks stopped: {e}; code search uses full-text search for the rest"
                    ),
                }
            }
            running.store(false, Ordering::SeqCst);
        });
    }
}
