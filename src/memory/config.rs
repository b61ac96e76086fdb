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

/// `[memory.recall]`: weighted reciprocal-rank fusion of BM25 and vector recall, plus what a
/// memory carries (its speaker, its length, its neighbours) as additive terms (`recall.rs`).
/// Re-tune with `scripts/eval-recall` (any field can be set through `MIRA_EVAL_CONFIG`).
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
    /// Added to a memory said by someone the question names (`"Caroline: …"` for "What did
    /// Caroline adopt?"); a named speaker then leaves the BM25 query. 0 turns both off.
    pub speaker: f64,
    /// Share of its best neighbour's score a memory inherits (the memory written just before
    /// or after it, as in a conversation: the answer to a question that matched).
    pub neighbour: f64,
    /// A memory's score is multiplied by `1 + length × ln(1 + its word count)`: a longer
    /// memory carries more facts than a bare mention ("Dogs!").
    pub length: f64,
    /// For a question that asks when, a memory that says when (`"… last Saturday"`, `"… in
    /// 2019"`) has its score multiplied by `1 + temporal`.
    pub temporal: f64,
}

/// Chosen with the built-in embedder on the LoCoMo-like dev set (`scripts/eval-recall`,
/// eval/recall/README.md; docs/benchmarks.md has the grid) and checked on held-out LoCoMo.
/// hit@5 dev / LoCoMo: RRF alone (vector 0.3) 0.519 / 0.687; speaker 0.05, vector 0.2 0.546 /
/// 0.725; with length 0.3 0.562 / 0.727 (dev gains little above 0.3: 0.568 at 0.5). A static
/// model's neighbours are noisier than its lexical matches, so it breaks ties and finds
/// paraphrases BM25 cannot see, no more. The speaker weight stays a preference, not a filter:
/// at 0.08 dev rises to 0.579, whose questions always name the right person, but every turn of
/// the named person then outranks anyone else's best match (LoCoMo's adversarial questions,
/// which name the wrong one, fall from 0.74 to 0.21; to 0.45 at 0.05). `neighbour` is off: +0.02 on LoCoMo but
/// −0.006 on dev, so the dev set does not support it yet. `temporal` 0.5 ("When …?" prefers
/// "… last Saturday"): 0.577 / 0.728 (dev temporal 0.624 → 0.697, LoCoMo 0.763 → 0.776).
impl Default for RecallWeights {
    fn default() -> Self {
        RecallWeights {
            bm25: 1.0,
            vector: 0.2,
            vector_identifier: 0.1,
            rrf_k: 10.0,
            speaker: 0.05,
            neighbour: 0.0,
            length: 0.3,
            temporal: 0.5,
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
