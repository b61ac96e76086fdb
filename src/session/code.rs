//! Code search by meaning: after a crawl, the chunks without a vector are embedded with the
//! built-in code model, and with the user's own embedder too when it embeds code — by the
//! language server in the background after each crawl ([`CodeEmbedding`]), by `mira index`
//! at the end of its run ([`embed_code`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::embed::{CodeEmbedder, Embedder};
use crate::memory::MemoryService;
use crate::store::{Store, projects};

/// Chunks per embedding request to a configured embedder (a server or a transformer).
const BATCH: usize = 64;
/// Chunks per batch of the built-in model: each batch is one read of what is pending and one
/// short write (the model itself takes microseconds a chunk).
const BUILTIN_BATCH: usize = 1024;

/// Embeds the chunks of the project at `root` that have no vector yet. `Ok(None)`: the project
/// was never indexed.
pub async fn embed_code(
    store: &Store,
    embedder: &CodeEmbedder,
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
    match embedder {
        CodeEmbedder::Builtin(model) => {
            let (store, root, model) = (store.clone(), root.to_path_buf(), *model);
            let (tx, rx) = tokio::sync::oneshot::channel();
            std::thread::Builder::new()
                .name("mira-code-vectors".into())
                .spawn(move || {
                    // Behind every request: this is catch-up work.
                    crate::index::priority::background();
                    let _ = tx.send(crate::index::vectors::embed_pending_builtin(
                        &store,
                        model,
                        pid,
                        &root,
                        BUILTIN_BATCH,
                    ));
                })
                .map_err(|e| format!("cannot start the code-vector thread: {e}"))?;
            rx.await
                .map_err(|_| "the code-vector thread stopped".to_string())?
                .map(Some)
        }
        CodeEmbedder::Configured(_) => {
            crate::index::vectors::embed_pending(store, embedder, pid, root, BATCH)
                .await
                .map(Some)
        }
    }
}

/// The embedders of a project's chunks: the built-in code model always, then the memory
/// embedder when the user chose one that embeds code.
pub fn code_embedders(memory: Option<&Embedder>) -> Vec<CodeEmbedder> {
    let mut out = vec![CodeEmbedder::builtin()];
    if let Some(e) = memory.filter(|e| e.embeds_code()) {
        out.push(CodeEmbedder::Configured(e.clone()));
    }
    out
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
            // The built-in model first: it needs nothing loaded and takes seconds.
            embed_logged(memory.store(), &CodeEmbedder::builtin(), &root).await;
            // A local model may still be loading: it is set on the service when ready.
            for _ in 0..60 {
                if memory.embedder().is_some() {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            }
            if let Some(embedder) = memory.embedder().filter(Embedder::embeds_code) {
                embed_logged(memory.store(), &CodeEmbedder::Configured(embedder), &root).await;
            }
            running.store(false, Ordering::SeqCst);
        });
    }
}

async fn embed_logged(store: &Store, embedder: &CodeEmbedder, root: &Path) {
    match embed_code(store, embedder, root).await {
        Ok(Some(n)) if n > 0 => {
            tracing::info!(chunks = n, model = %embedder.model_id(), "code chunks embedded")
        }
        Ok(_) => {}
        Err(e) => tracing::warn!(
            "embedding code chunks with {} stopped: {e}; code search uses full-text search for the rest",
            embedder.model_id()
        ),
    }
}
