//! Vector storage for memories: one sqlite-vec `vec0` table per embedder (models are never
//! mixed), an embedding cache keyed by text hash, and the bookkeeping the background embedder
//! uses to find memories that still lack a vector.

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::MemoryError;
use super::model::now_ms;

/// The vector table of one embedder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VectorSpace {
    pub embedder_id: i64,
    pub model_id: String,
    pub dim: usize,
}

impl VectorSpace {
    fn table(&self) -> String {
        // the id is an integer we generated: safe to splice into SQL
        format!("memory_vec_{}", self.embedder_id)
    }
}

/// Finds or creates the vector space for `model_id`. A model that reports a different
/// dimension than before is refused: its old vectors would be meaningless next to new ones.
pub fn register(
    tx: &Transaction<'_>,
    model_id: &str,
    dim: usize,
) -> Result<VectorSpace, MemoryError> {
    if dim == 0 || dim > 8192 {
        return Err(MemoryError::Invalid {
            field: "embedding dimension",
            message: format!("{dim}; expected 1..=8192"),
        });
    }
    let existing: Option<(i64, i64)> = tx
        .query_row(
            "SELECT id, dim FROM embedders WHERE model_id = ?1",
            [model_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let embedder_id = match existing {
        Some((id, d)) if d as usize == dim => id,
        Some((_, d)) => {
            return Err(MemoryError::Invalid {
                field: "embedder",
                message: format!(
                    "model `{model_id}` now returns {dim}-dimensional vectors but stored ones have {d}; \
                     set `memory.embedder.dimensions` to {d} or use a different model name"
                ),
            });
        }
        None => {
            tx.execute(
                "INSERT INTO embedders (model_id, dim, created_at) VALUES (?1, ?2, ?3)",
                params![model_id, dim as i64, now_ms()],
            )?;
            tx.last_insert_rowid()
        }
    };
    let space = VectorSpace {
        embedder_id,
        model_id: model_id.to_string(),
        dim,
    };
    // chunk_size 64: memories are few; the default 1024-slot chunks would waste space
    tx.execute_batch(&format!(
        "CREATE VIRTUAL TABLE IF NOT EXISTS {} USING vec0(
             memory_id INTEGER PRIMARY KEY,
             project_id INTEGER,
             embedding float[{dim}] distance_metric=cosine,
             chunk_size=64)",
        space.table()
    ))?;
    Ok(space)
}

/// The space already registered for `model_id`, if any (read-only callers such as recall).
pub fn lookup(conn: &Connection, model_id: &str) -> Result<Option<VectorSpace>, MemoryError> {
    Ok(conn
        .query_row(
            "SELECT id, dim FROM embedders WHERE model_id = ?1",
            [model_id],
            |r| {
                Ok(VectorSpace {
                    embedder_id: r.get(0)?,
                    model_id: model_id.to_string(),
                    dim: r.get::<_, i64>(1)? as usize,
                })
            },
        )
        .optional()?)
}

/// The cache key of a text: blake3 of the exact text (not normalised: case can change meaning
/// for a model).
pub fn text_hash(text: &str) -> [u8; 32] {
    *blake3::hash(text.as_bytes()).as_bytes()
}

/// A memory still waiting for its vector.
#[derive(Debug, Clone)]
pub struct Pending {
    pub memory_id: i64,
    pub body: String,
    /// The cached vector of this exact text, if any: no embedder call needed.
    pub cached: Option<Vec<f32>>,
}

/// Up to `limit` active memories without a vector in `space`, oldest first.
pub fn pending(
    conn: &Connection,
    space: &VectorSpace,
    limit: usize,
) -> Result<Vec<Pending>, MemoryError> {
    let mut stmt = conn.prepare_cached(
        "SELECT m.id, m.body FROM memories m
          WHERE m.status = 'active'
            AND NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE v.embedder_id = ?1 AND v.memory_id = m.id)
          ORDER BY m.id LIMIT ?2",
    )?;
    let rows: Vec<(i64, String)> = stmt
        .query_map(params![space.embedder_id, limit as i64], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?
        .collect::<Result<_, _>>()?;
    let mut cache = conn.prepare_cached(
        "SELECT vector FROM embedding_cache WHERE embedder_id = ?1 AND text_hash = ?2",
    )?;
    rows.into_iter()
        .map(|(memory_id, body)| {
            let cached = cache
                .query_row(params![space.embedder_id, &text_hash(&body)[..]], |r| {
                    r.get::<_, Vec<u8>>(0)
                })
                .optional()?
                .map(|b| from_blob(&b));
            Ok(Pending {
                memory_id,
                body,
                cached,
            })
        })
        .collect()
}

/// Up to `limit` active memories, oldest first: the first batch for an embedder whose
/// table does not exist yet (its dimension is learnt from that batch).
pub fn first_unembedded(conn: &Connection, limit: usize) -> Result<Vec<Pending>, MemoryError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, body FROM memories WHERE status = 'active' ORDER BY id LIMIT ?1",
    )?;
    let rows = stmt.query_map([limit as i64], |r| {
        Ok(Pending {
            memory_id: r.get(0)?,
            body: r.get(1)?,
            cached: None,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// How many active memories still lack a vector in `space`.
pub fn pending_count(conn: &Connection, space: &VectorSpace) -> Result<usize, MemoryError> {
    let n: i64 = conn.query_row(
        "SELECT count(*) FROM memories m WHERE m.status = 'active'
            AND NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE v.embedder_id = ?1 AND v.memory_id = m.id)",
        [space.embedder_id],
        |r| r.get(0),
    )?;
    Ok(n as usize)
}

/// Stores the vector of a memory (and caches it by text hash). Idempotent.
pub fn store(
    tx: &Transaction<'_>,
    space: &VectorSpace,
    memory_id: i64,
    body: &str,
    vector: &[f32],
) -> Result<(), MemoryError> {
    if vector.len() != space.dim {
        return Err(MemoryError::Invalid {
            field: "embedding",
            message: format!(
                "`{}` returned {} dimensions, expected {}",
                space.model_id,
                vector.len(),
                space.dim
            ),
        });
    }
    let blob = to_blob(vector);
    let project: Option<i64> = tx.query_row(
        "SELECT project_id FROM memories WHERE id = ?1",
        [memory_id],
        |r| r.get(0),
    )?;
    tx.execute(
        "INSERT OR REPLACE INTO embedding_cache (embedder_id, text_hash, vector) VALUES (?1, ?2, ?3)",
        params![space.embedder_id, &text_hash(body)[..], blob],
    )?;
    // vec0 supports neither INSERT OR REPLACE nor OR IGNORE (sqlite-vec#259): delete, then insert
    let table = space.table();
    tx.execute(
        &format!("DELETE FROM {table} WHERE memory_id = ?1"),
        [memory_id],
    )?;
    tx.execute(
        &format!("INSERT INTO {table} (memory_id, project_id, embedding) VALUES (?1, ?2, ?3)"),
        params![memory_id, project.unwrap_or(0), blob],
    )?;
    tx.execute(
        "INSERT OR IGNORE INTO memory_vectors (embedder_id, memory_id) VALUES (?1, ?2)",
        params![space.embedder_id, memory_id],
    )?;
    Ok(())
}

/// Removes a memory's vectors from every embedder's table (it was retracted or superseded).
/// The embedding cache keeps them, so a restore re-embeds without calling the embedder.
pub fn remove(tx: &Transaction<'_>, memory_id: i64) -> Result<(), MemoryError> {
    let tables: Vec<i64> = {
        let mut stmt =
            tx.prepare_cached("SELECT embedder_id FROM memory_vectors WHERE memory_id = ?1")?;
        stmt.query_map([memory_id], |r| r.get(0))?
            .collect::<Result<_, _>>()?
    };
    for embedder_id in tables {
        tx.execute(
            &format!("DELETE FROM memory_vec_{embedder_id} WHERE memory_id = ?1"),
            [memory_id],
        )?;
    }
    tx.execute(
        "DELETE FROM memory_vectors WHERE memory_id = ?1",
        [memory_id],
    )?;
    Ok(())
}

/// Ranked ids of active, in-scope memories nearest to `query` (KNN inside vec0, then the
/// status filter; inactive rows are few, so over-fetching twice the need is enough).
pub fn nearest_ids(
    conn: &Connection,
    space: &VectorSpace,
    query: &[f32],
    project: Option<i64>,
    n: usize,
) -> Result<Vec<i64>, MemoryError> {
    if query.len() != space.dim {
        return Err(MemoryError::Invalid {
            field: "query embedding",
            message: format!("{} dimensions, expected {}", query.len(), space.dim),
        });
    }
    let k = (n * 2).clamp(1, 4096);
    let mut stmt = conn.prepare_cached(&format!(
        "WITH knn AS MATERIALIZED (
             SELECT memory_id, distance FROM {}
              WHERE embedding MATCH ?1 AND k = ?2 AND project_id IN (0, ?3))
         SELECT knn.memory_id FROM knn JOIN memories m ON m.id = knn.memory_id
          WHERE m.status = 'active' AND knn.distance <= ?5
          ORDER BY knn.distance, knn.memory_id
          LIMIT ?4",
        space.table()
    ))?;
    let max_distance = 1.0 - min_similarity(&space.model_id);
    let rows = stmt.query_map(
        params![
            to_blob(query),
            k as i64,
            project.unwrap_or(0),
            n as i64,
            max_distance
        ],
        |r| r.get(0),
    )?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Below this cosine a neighbour is not recalled at all: every query has nearest neighbours,
/// and for the built-in static table those under ~0.3 are unrelated texts (a memory about the
/// parser answering "deploy"). Sentence encoders keep every neighbour: fusion ranks them.
fn min_similarity(model_id: &str) -> f64 {
    if model_id == crate::embed::BuiltinEmbedder::MODEL_ID {
        0.3
    } else {
        -1.0
    }
}

/// Active memories of exactly `scope` nearest to `query`, with their cosine similarity,
/// most similar first (for similarity dedup on write).
pub fn nearest_in_scope(
    conn: &Connection,
    space: &VectorSpace,
    query: &[f32],
    scope: super::Scope,
    n: usize,
) -> Result<Vec<(i64, f32)>, MemoryError> {
    if query.len() != space.dim {
        return Ok(Vec::new());
    }
    let mut stmt = conn.prepare_cached(&format!(
        "WITH knn AS MATERIALIZED (
             SELECT memory_id, distance FROM {}
              WHERE embedding MATCH ?1 AND k = ?2 AND project_id = ?3)
         SELECT knn.memory_id, knn.distance FROM knn JOIN memories m ON m.id = knn.memory_id
          WHERE m.status = 'active'
          ORDER BY knn.distance, knn.memory_id",
        space.table()
    ))?;
    let project = match scope {
        super::Scope::Global => 0,
        super::Scope::Project(p) => p,
    };
    let rows = stmt.query_map(
        params![to_blob(query), (n * 2).clamp(1, 4096) as i64, project],
        |r| Ok((r.get::<_, i64>(0)?, 1.0 - r.get::<_, f64>(1)? as f32)),
    )?;
    let mut out: Vec<(i64, f32)> = rows.collect::<Result<_, _>>()?;
    out.truncate(n);
    Ok(out)
}

pub use crate::store::vec_blob::{from_blob, to_blob};
