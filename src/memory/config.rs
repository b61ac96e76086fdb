//! `[memory]`: the embedder recall uses and the fusion weights.

use serde::{Deserialize, Serialize};

use crate::embed::{EmbedderConfig, EmbedderKind};

#[derive(Clone, Debug, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct MemoryConfig {
    /// `[memory.embedder]`: vectors for recall (the built-in table unless configured).
    pub embedder: EmbedderConfig,
    /// `[memory.recall]`: fusion weights (defaults chosen by the eval harness).
    pub recall: RecallWeights,
}

/// `[memory.recall]`: weighted reciprocal-rank fusion of BM25 and vector recall.
/// Re-tune with `cargo run --release --example memory_eval` when the embedder changes.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RecallWeights {
    pub bm25: f64,
    /// Vector weight for natural-language queries.
    pub vector: f64,
    /// Vector weight for identifier-looking queries (`JoinHandle`, `parse_config`).
    pub vector_identifier: f64,
    /// The RRF constant k.
    pub rrf_k: f64,
}

/// Chosen with the built-in embedder on the LoCoMo-like dev set (`scripts/eval-recall`,
/// eval/recall/README.md): hit@5 0.520 and MRR 0.391 at vector 0.3, against 0.521 / 0.331 at
/// 1.0 and BM25 alone 0.510 / 0.393. A static model's neighbours are noisier than its
/// lexical matches, so it breaks ties and finds paraphrases BM25 cannot see, no more.
impl Default for RecallWeights {
    fn default() -> Self {
        RecallWeights {
            bm25: 1.0,
            vector: 0.3,
            vector_identifier: 0.1,
            rrf_k: 10.0,
        }
    }
}

impl RecallWeights {
    /// For a full sentence encoder (MiniLM, OpenAI, Ollama), chosen by `examples/memory_eval.rs`
    /// with all-MiniLM-L6-v2 on the 240-query set (recall@5 0.846 against BM25 0.667): its
    /// vectors lead natural-language queries.
    pub fn sentence_encoder() -> Self {
        RecallWeights {
            vector: 3.0,
            ..RecallWeights::default()
        }
    }
}

impl MemoryConfig {
    /// The fusion weights recall uses: `[memory.recall]` as written, or when left at its
    /// defaults, the defaults measured for the configured kind of embedder.
    pub fn recall_weights(&self) -> RecallWeights {
        match self.embedder.provider {
            EmbedderKind::Openai | EmbedderKind::Ollama | EmbedderKind::Local
                if self.recall == RecallWeights::default() =>
            {
                RecallWeights::sentence_encoder()
            }
            _ => self.recall,
        }
    }
}
