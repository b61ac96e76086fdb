//! Vectors of code chunks: one sqlite-vec table per embedder model (`code_vec_<id>`, models
//! never mixed), partitioned by project, filled in the background by [`embed_pending`] and
//! emptied with the symbols by a trigger created with the table.

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::embed::Embedder;
use crate::store::Store;

/// The chunk-vector table of one embedder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeSpace {
    pub embedder_id: i64,
    pub model_id: String,
    pub dim: usize,
}

/// Each space's table is this prefix and its embedder's id.
const TABLE_PREFIX: &str = "code_vec_";
/// Lines of a symbol's code a chunk vector embeds: the fused ranking's weights were chosen
/// with sixteen (`CodeWeights`), so they stay, though the FTS5 chunk keeps four.
const EMBED_LINES: usize = 16;

impl CodeSpace {
    fn table(&self) -> String {
        // an integer we generated: safe to splice into SQL
        format!("{TABLE_PREFIX}{}", self.embedder_id)
    }
}

/// Finds or creates the space of `model_id` (the `embedders` registry is shared with memory).
pub fn register(tx: &Transaction, model_id: &str, dim: usize) -> rusqlite::Result<CodeSpace> {
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
            return Err(rusqlite::Error::InvalidParameterName(format!(
                "model `{model_id}` now returns {dim}-dimensional vectors but stored ones have {d}"
            )));
        }
        None => {
            tx.execute(
                "INSERT INTO embedders (model_id, dim, created_at) VALUES (?1, ?2, ?3)",
                params![model_id, dim as i64, crate::store::now_millis()],
            )?;
            tx.last_insert_rowid()
        }
    };
    let space = CodeSpace {
        embedder_id,
        model_id: model_id.to_string(),
        dim,
    };
    let t = space.table();
    tx.execute_batch(&format!(
        "CREATE VIRTUAL TABLE IF NOT EXISTS {t} USING vec0(
             symbol_id INTEGER PRIMARY KEY,
             project_id INTEGER PARTITION KEY,
             embedding float[{dim}] distance_metric=cosine);
         CREATE TRIGGER IF NOT EXISTS {t}_ad AFTER DELETE ON symbols BEGIN
             DELETE FROM {t} WHERE symbol_id = old.id;
         END;"
    ))?;
    Ok(space)
}

/// The space of `model_id` if its table exists (readers never create one).
pub fn lookup(conn: &Connection, model_id: &str) -> rusqlite::Result<Option<CodeSpace>> {
    let found: Option<(i64, i64)> = conn
        .query_row(
            "SELECT id, dim FROM embedders WHERE model_id = ?1",
            [model_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let Some((embedder_id, dim)) = found else {
        return Ok(None);
    };
    let space = CodeSpace {
        embedder_id,
        model_id: model_id.to_string(),
        dim: dim as usize,
    };
    let exists: bool = conn.query_row(
        "SELECT count(*) > 0 FROM sqlite_master WHERE name = ?1",
        [space.table()],
        |r| r.get(0),
    )?;
    Ok(exists.then_some(space))
}

/// Whether any embedder's code vectors exist: without them a code search has no use for
/// its question's vector, and embedding it would cost more than the search (the bundled
/// encoder: about 10 ms a question on a 2-core machine, against 2-3 ms of full-text search).
pub fn any_space(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master
                         WHERE type = 'table' AND name GLOB ?1 || '[0-9]*')",
        [TABLE_PREFIX],
        |r| r.get(0),
    )
}

/// Symbol ids of `project_id` nearest to `query`, best first.
pub fn nearest(
    conn: &Connection,
    space: &CodeSpace,
    query: &[f32],
    project_id: i64,
    n: usize,
) -> rusqlite::Result<Vec<i64>> {
    if query.len() != space.dim {
        return Ok(Vec::new());
    }
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT symbol_id FROM {} WHERE embedding MATCH ?1 AND k = ?2 AND project_id = ?3
          ORDER BY distance",
        space.table()
    ))?;
    let blob = crate::store::vec_blob::to_blob(query);
    let rows = stmt.query_map(params![blob, n.clamp(1, 4096) as i64, project_id], |r| {
        r.get(0)
    })?;
    rows.collect()
}

/// A chunk still waiting for its vector.
struct Pending {
    symbol_id: i64,
    text: String,
}

/// What a chunk's embedding is computed from: kind, qualified name, signature, doc and the
/// head of the code (read from the file, which the crawl just indexed).
fn pending(
    conn: &Connection,
    space: Option<&CodeSpace>,
    project_id: i64,
    root: &std::path::Path,
    limit: usize,
) -> rusqlite::Result<Vec<Pending>> {
    // Without a table yet, every symbol is pending.
    let missing = match space {
        Some(sp) => format!(
            "AND s.id NOT IN (SELECT symbol_id FROM {} WHERE project_id = ?1)",
            sp.table()
        ),
        None => String::new(),
    };
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT s.id, f.path, s.kind, s.name, s.container, s.signature, s.doc, s.start_line, s.end_line
           FROM symbols s JOIN files f ON f.id = s.file_id
          WHERE f.project_id = ?1 {missing}
          ORDER BY s.file_id, s.ordinal LIMIT ?2"
    ))?;
    let mut files: std::collections::HashMap<String, Option<String>> = Default::default();
    let rows = stmt.query_map(params![project_id, limit as i64], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, Option<String>>(4)?,
            r.get::<_, String>(5)?,
            r.get::<_, Option<String>>(6)?,
            r.get::<_, u32>(7)?,
            r.get::<_, u32>(8)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (id, path, kind, name, container, signature, doc, start, end) = row?;
        let text = files
            .entry(path.clone())
            .or_insert_with(|| std::fs::read_to_string(root.join(&path)).ok());
        let head: String = text
            .as_deref()
            .map(|t| {
                let n = (end.saturating_sub(start) as usize + 1).min(EMBED_LINES);
                t.lines()
                    .skip(start as usize)
                    .take(n)
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default();
        let qualified = container.map_or(name.clone(), |c| format!("{c}.{name}"));
        let mut text = format!("{kind} {qualified}\n{signature}\n");
        if let Some(d) = doc {
            text.push_str(&d);
            text.push('\n');
        }
        text.push_str(&head);
        // The embedder may be a remote API: no secret literal leaves in a chunk.
        let mut text = crate::redact::redact(&text).into_owned();
        // MiniLM sees 256 word pieces; the rest would only cost time.
        let cut = text.char_indices().nth(1500).map_or(text.len(), |(i, _)| i);
        text.truncate(cut);
        out.push(Pending {
            symbol_id: id,
            text,
        });
    }
    Ok(out)
}

/// Embeds every chunk of the project that has no vector for `embedder` yet, in batches;
/// returns how many were embedded. Runs in the background (the language server after the
/// cold index, `mira index`); safe beside other processes (each batch is one write).
pub async fn embed_pending(
    store: &Store,
    embedder: &Embedder,
    project_id: i64,
    root: &std::path::Path,
    batch: usize,
) -> Result<usize, String> {
    let model = embedder.model_id();
    let mut done = 0;
    let mut space: Option<CodeSpace> = {
        let (s, m) = (store.clone(), model.clone());
        tokio::task::spawn_blocking(move || s.read(|c| lookup(c, &m)))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?
    };
    loop {
        let work = {
            let (s, sp, root) = (store.clone(), space.clone(), root.to_path_buf());
            tokio::task::spawn_blocking(move || {
                s.read(|c| pending(c, sp.as_ref(), project_id, &root, batch))
            })
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?
        };
        if work.is_empty() {
            return Ok(done);
        }
        let texts: Vec<String> = work.iter().map(|p| p.text.clone()).collect();
        let vectors = embedder.embed(&texts).await.map_err(|e| e.to_string())?;
        if vectors.len() != work.len() {
            return Err("the embedder returned too few vectors".into());
        }
        let dim = vectors[0].len();
        let (s, m) = (store.clone(), model.clone());
        let ids: Vec<i64> = work.iter().map(|p| p.symbol_id).collect();
        let registered = tokio::task::spawn_blocking(move || {
            s.write(|tx| {
                let space = register(tx, &m, dim)?;
                let mut ins = tx.prepare_cached(&format!(
                    "INSERT INTO {} (symbol_id, project_id, embedding) VALUES (?1, ?2, ?3)",
                    space.table()
                ))?;
                for (id, v) in ids.iter().zip(&vectors) {
                    ins.execute(params![id, project_id, crate::store::vec_blob::to_blob(v)])?;
                }
                drop(ins);
                Ok::<_, rusqlite::Error>(space)
            })
        })
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
        done += work.len();
        space = Some(registered);
    }
}
