//! Recall: FTS5 BM25 (identifier-aware) and, when an embedder is on, sqlite-vec KNN, fused
//! with weighted RRF. Only active memories in scope ever surface: superseded and retracted
//! ones are filtered in SQL, project memories only inside their project.

use rusqlite::{Connection, params};

pub use super::config::RecallWeights;

use super::MemoryError;
use super::fusion::weighted_rrf;
use super::model::{MEMORY_COLUMNS, Memory};
use super::text::{fts_query, is_identifier_query};
use super::vectors::{self, VectorSpace};

/// How many candidates each retriever contributes before fusion.
pub const CANDIDATES: usize = 50;

/// A recall request.
#[derive(Debug, Clone)]
pub struct RecallQuery<'a> {
    pub text: &'a str,
    /// The current project: its memories and global ones surface. `None`: global only.
    pub project: Option<i64>,
    pub limit: usize,
}

/// The query embedded by the embedder whose vectors live in `space`.
#[derive(Debug, Clone, Copy)]
pub struct QueryVector<'a> {
    pub space: &'a VectorSpace,
    pub vector: &'a [f32],
}

/// One recalled memory with where it came from.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Hit {
    pub memory: Memory,
    pub score: f64,
    /// 1-based rank in the BM25 list, if it was there.
    pub bm25_rank: Option<usize>,
    /// 1-based rank in the vector list, if it was there.
    pub vector_rank: Option<usize>,
}

/// Ranked ids of active, in-scope memories matching `text` by BM25. Empty when the text has
/// nothing searchable (only stop words or punctuation).
pub fn bm25_ids(
    conn: &Connection,
    text: &str,
    project: Option<i64>,
    n: usize,
) -> Result<Vec<i64>, MemoryError> {
    let Some(expr) = fts_query(text) else {
        return Ok(Vec::new());
    };
    // body outweighs the identifier column (the split parts are a fallback, not a second
    // vote) and the neighbours' words (a hint of what was being talked about)
    let mut stmt = conn.prepare_cached(
        "SELECT m.id FROM memories_fts f JOIN memories m ON m.id = f.rowid
          WHERE memories_fts MATCH ?1 AND m.status = 'active'
            AND (m.project_id IS NULL OR m.project_id = ?2)
          ORDER BY bm25(memories_fts, 1.0, 0.6, 0.3), m.id
          LIMIT ?3",
    )?;
    let rows = stmt.query_map(params![expr, project, n as i64], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Full recall. Without a query vector this is BM25 alone (the embedder is off, or its vectors
/// are still being built): recall never depends on the embedder being up.
pub fn recall(
    conn: &Connection,
    q: &RecallQuery<'_>,
    qv: Option<QueryVector<'_>>,
    weights: &RecallWeights,
) -> Result<Vec<Hit>, MemoryError> {
    let n = CANDIDATES.max(q.limit);
    let lexical = bm25_ids(conn, q.text, q.project, n)?;
    let semantic = match qv {
        Some(qv) => vectors::nearest_ids(conn, qv.space, qv.vector, q.project, n)?,
        None => Vec::new(),
    };
    let vector_weight = if is_identifier_query(q.text) {
        weights.vector_identifier
    } else {
        weights.vector
    };
    let fused = weighted_rrf(
        &[(weights.bm25, &lexical), (vector_weight, &semantic)],
        weights.rrf_k,
    );
    let rank_in = |ids: &[i64], id: i64| ids.iter().position(|x| *x == id).map(|p| p + 1);
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id = ?1"
    ))?;
    let mut hits = Vec::with_capacity(q.limit);
    for (id, score) in fused.into_iter().take(q.limit) {
        let memory = stmt.query_row([id], Memory::from_row)?;
        hits.push(Hit {
            memory,
            score,
            bm25_rank: rank_in(&lexical, id),
            vector_rank: rank_in(&semantic, id),
        });
    }
    Ok(hits)
}
