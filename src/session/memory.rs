//! The embedder policy of a long-running face (the language server): the memory service
//! starts at once on full-text search, and embeddings turn on when the configured embedder is
//! ready — a local model loads on a blocking thread (~100 ms) after the caller has answered.

use crate::config::Loaded;
use crate::embed::{EmbedError, Embedder};
use crate::memory::MemoryService;
use crate::store::Store;

/// The memory service, and what the user should be told about its embedder.
pub struct Started {
    pub service: MemoryService,
    /// Embeddings are off because the embedder settings are unusable (recall stays on
    /// full-text search).
    pub warning: Option<String>,
    /// A local model loading in the background: resolves to a warning when it fails.
    pub loading: Option<tokio::task::JoinHandle<Option<String>>>,
}

fn off(e: EmbedError) -> String {
    format!("Mira: embeddings are off, recall uses full-text search: {e}")
}

/// Builds the memory service and turns embeddings on when configured. Call on the runtime.
pub fn start(store: Store, loaded: &Loaded) -> Started {
    let memory = &loaded.config.memory;
    let service = MemoryService::new(store, None, memory.recall_weights());
    let started = |warning, loading| Started {
        service: service.clone(),
        warning,
        loading,
    };
    if let Err(e) = Embedder::check_config(&memory.embedder) {
        return started(Some(off(e)), None);
    }
    let cfg = memory.embedder.clone();
    let openai_key = loaded.keys.openai.clone();
    if !Embedder::loads_a_model(&cfg) {
        return match Embedder::from_config(&cfg, openai_key.as_ref()) {
            Ok(Some(e)) => {
                service.set_embedder(e);
                service.spawn_embedding_worker();
                started(None, None)
            }
            Ok(None) => started(None, None),
            Err(e) => started(Some(off(e)), None),
        };
    }
    if cfg.provider == crate::embed::Provider::Builtin {
        // The bundled encoder cannot be misconfigured past `check_config`: nothing to report
        // at startup, and nothing to hold in memory until memory is used.
        service.load_on_first_use(Box::new(move || {
            Embedder::from_config(&cfg, openai_key.as_ref())
        }));
        return started(None, None);
    }
    let background = service.clone();
    let loading = tokio::spawn(async move {
        let loaded =
            tokio::task::spawn_blocking(move || Embedder::from_config(&cfg, openai_key.as_ref()))
                .await;
        match loaded {
            Ok(Ok(Some(e))) => {
                tracing::info!(model = %e.model_id(), "embedder ready");
                background.set_embedder(e);
                background.spawn_embedding_worker();
                None
            }
            Ok(Ok(None)) => None,
            Ok(Err(e)) => Some(off(e)),
            Err(e) => Some(format!("Mira: loading the embedder failed: {e}")),
        }
    });
    started(None, Some(loading))
}
