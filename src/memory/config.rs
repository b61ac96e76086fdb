//! `[memory]`: the embedder recall uses and the fusion weights.

use serde::{Deserialize, Serialize};

use crate::embed::{BuiltinModel, EmbedderConfig, EmbedderKind};

#[derive(Clone, Debug, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct MemoryConfig {
    /// `[memory.embedder]`: vectors for recall (the bundled transformer unless configured).
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

/// Chosen with the default embedder (the bundled paraphrase-MiniLM-L3-v2) on the LoCoMo-like
/// dev set (`scripts/eval-recall`, eval/recall/README.md; docs/benchmarks.md has the grid) and
/// checked on held-out LoCoMo. hit@5 dev / LoCoMo by vector weight: 0.5 0.627 / 0.734, 0.7
/// 0.647, **1.0 0.681 / 0.724**, 1.5 0.677, 2.0 0.668, 3.0 0.651; the static table's best
/// (vector 0.2) was 0.577 / 0.728. The encoder finds dev's paraphrases (no shared word:
/// 0.077 → 0.345) that BM25 cannot see; above 1.0 its near misses start to outrank exact
/// lexical hits. The other terms were chosen with the static table and re-checked with the
/// encoder. The speaker weight stays a preference, not a filter: at 0.08 dev rises to
/// 0.687, whose questions always name the right person, but every turn of the named person
/// then outranks anyone else's best match (LoCoMo's adversarial questions, which name the
/// wrong one, fell from 0.74 to 0.21 with the static table; 0.45 at 0.05). `neighbour` is
/// off: +0.02 on LoCoMo but −0.01 on dev (0.673 at 0.2), so the dev set does not support it
/// yet. `temporal` 0.5 ("When …?" prefers "… last Saturday"). `length` 0.3.
impl Default for RecallWeights {
    fn default() -> Self {
        RecallWeights {
            bm25: 1.0,
            vector: 1.0,
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

    /// For the static table (`model = "static"`): its neighbours are noisier than its
    /// lexical matches, so it breaks ties and finds a few paraphrases, no more (dev / LoCoMo
    /// hit@5 0.577 / 0.728 at 0.2; 0.561 / 0.723 at 0.3).
    pub fn static_table() -> Self {
        RecallWeights {
            vector: 0.2,
            ..RecallWeights::default()
        }
    }
}

impl MemoryConfig {
    /// The fusion weights recall uses: `[memory.recall]` as written, or when left at its
    /// defaults, the defaults measured for the configured kind of embedder.
    pub fn recall_weights(&self) -> RecallWeights {
        if self.recall != RecallWeights::default() {
            return self.recall;
        }
        match self.embedder.provider {
            EmbedderKind::Openai | EmbedderKind::Ollama | EmbedderKind::Local => {
                RecallWeights::sentence_encoder()
            }
            EmbedderKind::Builtin
                if matches!(BuiltinModel::of(&self.embedder), Ok(BuiltinModel::Static)) =>
            {
                RecallWeights::static_table()
            }
            EmbedderKind::Builtin | EmbedderKind::None => self.recall,
        }
    }
}
