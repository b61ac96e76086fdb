//! Vectors of code chunks: one sqlite-vec table per embedder model (`code_bits_<id>`, models
//! never mixed), partitioned by project, filled in the background by [`embed_pending`] and
//! emptied with the symbols by a trigger created with the table.
//!
//! A chunk is stored twice over in one row: its sign bits, which [`super::bitscan`] scans by
//! Hamming distance, and its vector in 8 bits, with which the nearest few by bits are ranked
//! again exactly. A float scan cost about 1 µs a chunk (20 ms over 21k symbols, 200 ms over
//! 400k: past code search's 30 ms); the bits are 32 bytes a chunk at 256 dimensions, and on
//! the code eval's dev crates the re-ranked top ten lost nothing against the float scan
//! (docs/benchmarks.md).

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::embed::CodeEmbedder;
use crate::store::Store;

/// The chunk-vector table of one embedder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeSpace {
    pub embedder_id: i64,
    pub model_id: String,
    pub dim: usize,
}

/// Each space's table is this prefix and its embedder's id.
const TABLE_PREFIX: &str = "code_bits_";
/// The float tables of earlier versions, dropped when a space is registered again.
const OLD_TABLE_PREFIX: &str = "code_vec_";
/// Chunks taken by Hamming distance before the exact ranking, at least: each costs one
/// lookup of its 8-bit vector. Code search keeps the best 32 of these 128: on the dev crates
/// that put more targets among the reranker's candidates than the best 32 of 32 (hit@5
/// +0.013, docs/benchmarks.md).
const COARSE: usize = 128;
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
    let bits = dim.div_ceil(8) * 8;
    let old = format!("{OLD_TABLE_PREFIX}{embedder_id}");
    tx.execute_batch(&format!(
        "DROP TRIGGER IF EXISTS {old}_ad;
         DROP TABLE IF EXISTS {old};
         CREATE VIRTUAL TABLE IF NOT EXISTS {t} USING vec0(
             symbol_id INTEGER PRIMARY KEY,
             project_id INTEGER PARTITION KEY,
             bits bit[{bits}],
             +vector BLOB);
         CREATE TRIGGER IF NOT EXISTS {t}_ad AFTER DELETE ON symbols BEGIN
             DELETE FROM {t} WHERE symbol_id = old.id;
         END;"
    ))?;
    Ok(space)
}

/// The sign bits of `v`, in sqlite-vec's order (bit i of byte j is dimension 8j + i),
/// padded to whole bytes.
fn sign_bits(v: &[f32]) -> Vec<u8> {
    let mut out = vec![0u8; v.len().div_ceil(8)];
    for (i, x) in v.iter().enumerate() {
        if *x > 0.0 {
            out[i / 8] |= 1 << (i % 8);
        }
    }
    out
}

/// `v` (unit length) in 8 bits a dimension: its dot product with a unit vector is 127 ×
/// their cosine.
fn quantise(v: &[f32]) -> Vec<u8> {
    v.iter()
        .map(|x| (x * 127.0).round().clamp(-127.0, 127.0) as i8 as u8)
        .collect()
}

fn dot_i8(query: &[f32], stored: &[u8]) -> f32 {
    query
        .iter()
        .zip(stored)
        .map(|(q, s)| q * f32::from(*s as i8))
        .sum()
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

/// The space a code search compares its question with, and the question's vector there:
/// the configured embedder's (`configured`: its model and the question's vector) when its
/// chunk vectors exist, else the built-in code model's when those exist. The built-in
/// model embeds the question here, in microseconds.
pub fn query_space(
    conn: &Connection,
    question: &str,
    configured: Option<(&str, &[f32])>,
) -> rusqlite::Result<Option<(CodeSpace, Vec<f32>)>> {
    if let Some((model, vector)) = configured
        && let Some(space) = lookup(conn, model)?
    {
        return Ok(Some((space, vector.to_vec())));
    }
    // The tables are parsed on first use: only where the project has their vectors.
    Ok(lookup(conn, crate::embed::CodeModel::MODEL_ID)?
        .map(|space| (space, crate::embed::CodeModel::get().embed_query(question))))
}

/// Symbol ids of `project_id` nearest to `query`, best first, with each one's dot product
/// against its 8-bit vector: the nearest by sign bits (`bitscan`, or vec0's own KNN where its
/// storage is not the one `bitscan` knows), ranked again by those dot products.
pub fn nearest(
    conn: &Connection,
    space: &CodeSpace,
    query: &[f32],
    project_id: i64,
    n: usize,
) -> rusqlite::Result<Vec<(i64, f32)>> {
    if query.len() != space.dim {
        return Ok(Vec::new());
    }
    let coarse = n.clamp(COARSE, 4096);
    let bits = sign_bits(query);
    let scanned = super::bitscan::nearest(
        conn,
        &space.table(),
        space.embedder_id,
        project_id,
        &bits,
        coarse,
    )?;
    let mut scored = match scanned {
        Some(ids) => {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT vector FROM {} WHERE symbol_id = ?1",
                space.table()
            ))?;
            let mut out = Vec::with_capacity(ids.len());
            for id in ids {
                let v: Vec<u8> = stmt.query_row([id], |r| r.get(0))?;
                out.push((id, dot_i8(query, &v)));
            }
            out
        }
        None => {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT symbol_id, vector FROM {}
                  WHERE bits MATCH vec_bit(?1) AND k = ?2 AND project_id = ?3",
                space.table()
            ))?;
            let rows = stmt.query_map(params![bits, coarse as i64, project_id], |r| {
                Ok((r.get::<_, i64>(0)?, dot_i8(query, &r.get::<_, Vec<u8>>(1)?)))
            })?;
            rows.collect::<rusqlite::Result<Vec<_>>>()?
        }
    };
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.truncate(n);
    Ok(scored)
}

/// A chunk still waiting for its vector.
pub struct Pending {
    pub symbol_id: i64,
    pub text: String,
}

/// Where a run of [`pending`] is: the last symbol id it read, and the symbols that had a
/// vector when the run began (read once: a `NOT IN` of the vector table per batch made a
/// cold run's cost grow with the square of the project).
pub struct PendingCursor {
    after: i64,
    have: std::collections::HashSet<i64>,
    /// No symbol is left to read.
    pub done: bool,
}

impl PendingCursor {
    pub fn new(
        conn: &Connection,
        space: Option<&CodeSpace>,
        project_id: i64,
    ) -> rusqlite::Result<PendingCursor> {
        let have = match space {
            Some(sp) => {
                let mut stmt = conn.prepare(&format!(
                    "SELECT symbol_id FROM {} WHERE project_id = ?1",
                    sp.table()
                ))?;
                stmt.query_map([project_id], |r| r.get(0))?
                    .collect::<rusqlite::Result<_>>()?
            }
            None => Default::default(),
        };
        Ok(PendingCursor {
            after: i64::MIN,
            have,
            done: false,
        })
    }
}

/// The next chunks of `project_id` without a vector, in symbol order, from at most `limit`
/// symbols read: what [`embed_pending`] embeds, and what a table trained for code search
/// must be trained on (`examples/code_pairs.rs`). Fewer (even none) come back while
/// `cursor.done` is false when the symbols read had vectors already.
pub fn pending(
    conn: &Connection,
    cursor: &mut PendingCursor,
    project_id: i64,
    root: &std::path::Path,
    limit: usize,
) -> rusqlite::Result<Vec<Pending>> {
    let mut stmt = conn.prepare_cached(
        "SELECT s.id, f.path, s.kind, s.name, s.container, s.signature, s.doc, s.start_line, s.end_line
           FROM symbols s JOIN files f ON f.id = s.file_id
          WHERE f.project_id = ?1 AND s.id > ?2
          ORDER BY s.id LIMIT ?3",
    )?;
    let mut files: std::collections::HashMap<String, Option<String>> = Default::default();
    let rows = stmt.query_map(params![project_id, cursor.after, limit as i64], |r| {
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
    let (mut out, mut read) = (Vec::new(), 0);
    for row in rows {
        let (id, path, kind, name, container, signature, doc, start, end) = row?;
        read += 1;
        cursor.after = id;
        if cursor.have.contains(&id) {
            continue;
        }
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
        // Last, so that a long chunk never cuts it: the built-in code model learnt what
        // folder and file names say (`dfa/dense.rs`), and was trained on this same text.
        text.push('\n');
        text.push_str(&path);
        out.push(Pending {
            symbol_id: id,
            text,
        });
    }
    cursor.done = read < limit;
    Ok(out)
}

/// Stores one batch's vectors; returns the space (registered on first use).
fn write_batch(
    tx: &Transaction,
    model: &str,
    project_id: i64,
    ids: &[i64],
    vectors: &[Vec<f32>],
) -> rusqlite::Result<CodeSpace> {
    let dim = vectors.first().map_or(0, Vec::len);
    let space = register(tx, model, dim)?;
    let table = space.table();
    let newest_before = super::bitscan::newest_chunk(tx, &table, project_id)?;
    let mut ins = tx.prepare_cached(&format!(
        "INSERT INTO {table} (symbol_id, project_id, bits, vector) VALUES (?1, ?2, vec_bit(?3), ?4)"
    ))?;
    for (id, v) in ids.iter().zip(vectors) {
        ins.execute(params![id, project_id, sign_bits(v), quantise(v)])?;
    }
    // Readers keep the bits in memory, chunk by chunk: this tells them which to read again.
    super::bitscan::count_inserts(tx, &table, space.embedder_id, project_id, newest_before)?;
    Ok(space)
}

/// [`embed_pending`] for the built-in code model, on the calling thread and its own
/// connection (`Store::connect`): the model is CPU work of microseconds a chunk, so the
/// whole run belongs on one low-priority thread (`session::code` starts it), and a
/// connection of its own means the language server's requests never queue behind it for
/// the store's lock. Each batch is one short write.
pub fn embed_pending_builtin(
    store: &Store,
    model: &crate::embed::CodeModel,
    project_id: i64,
    root: &std::path::Path,
    batch: usize,
) -> Result<usize, String> {
    let id = crate::embed::CodeModel::MODEL_ID;
    let mut conn = store.connect().map_err(|e| e.to_string())?;
    let space = lookup(&conn, id).map_err(|e| e.to_string())?;
    let mut cursor =
        PendingCursor::new(&conn, space.as_ref(), project_id).map_err(|e| e.to_string())?;
    let mut done = 0;
    while !cursor.done {
        let work = {
            let tx = conn.transaction().map_err(|e| e.to_string())?;
            pending(&tx, &mut cursor, project_id, root, batch).map_err(|e| e.to_string())?
        };
        if work.is_empty() {
            continue;
        }
        let texts: Vec<String> = work.iter().map(|p| p.text.clone()).collect();
        let ids: Vec<i64> = work.iter().map(|p| p.symbol_id).collect();
        let vectors = model.embed_chunks(&texts);
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| e.to_string())?;
        write_batch(&tx, id, project_id, &ids, &vectors).map_err(|e| e.to_string())?;
        tx.commit().map_err(|e| e.to_string())?;
        done += work.len();
    }
    Ok(done)
}

/// Embeds every chunk of the project that has no vector for `embedder` yet, in batches;
/// returns how many were embedded. Runs in the background (the language server after the
/// cold index, `mira index`); safe beside other processes (each batch is one write).
pub async fn embed_pending(
    store: &Store,
    embedder: &CodeEmbedder,
    project_id: i64,
    root: &std::path::Path,
    batch: usize,
) -> Result<usize, String> {
    let model = embedder.model_id();
    let mut done = 0;
    let mut cursor = {
        let (s, m) = (store.clone(), model.clone());
        tokio::task::spawn_blocking(move || {
            s.read(|c| PendingCursor::new(c, lookup(c, &m)?.as_ref(), project_id))
        })
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?
    };
    while !cursor.done {
        let (work, back) = {
            let (s, root) = (store.clone(), root.to_path_buf());
            tokio::task::spawn_blocking(move || {
                let work = s.read(|c| pending(c, &mut cursor, project_id, &root, batch));
                (work, cursor)
            })
            .await
            .map_err(|e| e.to_string())?
        };
        cursor = back;
        let work = work.map_err(|e| e.to_string())?;
        if work.is_empty() {
            continue;
        }
        let texts: Vec<String> = work.iter().map(|p| p.text.clone()).collect();
        let vectors = embedder
            .embed_chunks(&texts)
            .await
            .map_err(|e| e.to_string())?;
        if vectors.len() != work.len() {
            return Err("the embedder returned too few vectors".into());
        }
        let (s, m) = (store.clone(), model.clone());
        let ids: Vec<i64> = work.iter().map(|p| p.symbol_id).collect();
        tokio::task::spawn_blocking(move || {
            s.write(|tx| write_batch(tx, &m, project_id, &ids, &vectors))
        })
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
        done += work.len();
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_bits_are_in_sqlite_vecs_order_and_padded() {
        let v = [0.5, -0.1, 0.0, 0.2, -0.3, 0.1, 0.1, -0.9, 0.4];
        assert_eq!(sign_bits(&v), vec![0b0110_1001, 0b0000_0001]);
        assert_eq!(quantise(&[1.0, -1.0, 0.5, 2.0]), vec![127, 129, 64, 127]);
    }

    /// The shortlist by bits is ranked again by the 8-bit vectors: two chunks with the same
    /// bits come back in the order of their cosines, and a query of another dimension finds
    /// nothing rather than failing.
    #[test]
    fn nearest_ranks_the_bits_shortlist_by_cosine() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("mira.db")).unwrap();
        let unit = |v: [f32; 8]| {
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.map(|x| x / n).to_vec()
        };
        let near = unit([1.0, 0.9, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]);
        let nearer = unit([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.8]);
        let far = unit([-1.0, -1.0, -1.0, -1.0, 1.0, 1.0, 1.0, 1.0]);
        let space = store
            .write(|tx| write_batch(tx, "test-model", 1, &[1, 2, 3], &[far, near, nearer]))
            .unwrap();
        assert_eq!(space.dim, 8);
        let query = unit([1.0; 8]);
        let found = store.read(|c| nearest(c, &space, &query, 1, 3)).unwrap();
        let ids: Vec<i64> = found.iter().map(|x| x.0).collect();
        assert_eq!(ids, vec![3, 2, 1]);
        assert!(
            found[0].1 >= found[1].1 && found[1].1 >= found[2].1,
            "{found:?}"
        );
        let found = store.read(|c| nearest(c, &space, &query, 2, 3)).unwrap();
        assert!(found.is_empty(), "another project's chunks: {found:?}");
        let found = store.read(|c| nearest(c, &space, &[1.0; 4], 1, 3)).unwrap();
        assert!(found.is_empty());
    }

    /// `bitscan`'s boundary with sqlite-vec (its module doc): after every kind of write vec0
    /// does (batches, deletes anywhere, the newest chunk emptied so that inserts go back into
    /// an older chunk's holes, writes from another connection), the scan of the cached
    /// chunks equals a brute force over the rows vec0 itself returns, and vec0's own KNN
    /// finds the same distances.
    #[test]
    fn the_scan_equals_a_brute_force_over_vec0s_own_rows() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("mira.db")).unwrap();
        let other = store.connect().unwrap();
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let vector = |next: &mut dyn FnMut() -> u64| -> Vec<f32> {
            (0..256)
                .map(|_| (next() % 2001) as f32 / 1000.0 - 1.0)
                .collect()
        };
        let next_id = std::cell::Cell::new(1i64);
        let insert =
            |store: &Store, other: &Connection, n: usize, next: &mut dyn FnMut() -> u64| {
                let ids: Vec<i64> = (0..n as i64).map(|i| next_id.get() + i).collect();
                next_id.set(next_id.get() + n as i64);
                let vs: Vec<Vec<f32>> = ids.iter().map(|_| vector(next)).collect();
                let project = 1 + (ids[0] % 2);
                if ids[0] % 3 == 0 {
                    let tx = other.unchecked_transaction().unwrap();
                    write_batch(&tx, "test-model", project, &ids, &vs).unwrap();
                    tx.commit().unwrap();
                } else {
                    store
                        .write(|tx| write_batch(tx, "test-model", project, &ids, &vs))
                        .unwrap();
                }
            };
        for n in [900, 1500, 700, 40] {
            insert(&store, &other, n, &mut next);
        }
        let space = store.read(|c| lookup(c, "test-model")).unwrap().unwrap();
        let t = space.table();
        let hamming = |a: &[u8], b: &[u8]| -> u32 {
            a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
        };
        let check = |store: &Store, query: &[f32], project: i64, k: usize, round: usize| {
            let q = sign_bits(query);
            let (scanned, brute, knn) = store
                .read(|c| {
                    let scanned =
                        super::super::bitscan::nearest(c, &t, space.embedder_id, project, &q, k)?
                            .expect("a table of this sqlite-vec");
                    let mut all: Vec<(u32, i64)> = c
                        .prepare(&format!(
                            "SELECT symbol_id, bits FROM {t} WHERE project_id = ?1"
                        ))?
                        .query_map([project], |r| {
                            Ok((hamming(&r.get::<_, Vec<u8>>(1)?, &q), r.get::<_, i64>(0)?))
                        })?
                        .collect::<rusqlite::Result<_>>()?;
                    all.sort();
                    all.truncate(k);
                    let knn: Vec<u32> = c
                        .prepare(&format!(
                            "SELECT distance FROM {t}
                              WHERE bits MATCH vec_bit(?1) AND k = ?2 AND project_id = ?3"
                        ))?
                        .query_map(params![q, k as i64, project], |r| {
                            Ok(r.get::<_, f64>(0)? as u32)
                        })?
                        .collect::<rusqlite::Result<_>>()?;
                    Ok((scanned, all, knn))
                })
                .unwrap();
            let brute_ids: Vec<i64> = brute.iter().map(|(_, id)| *id).collect();
            assert_eq!(
                scanned, brute_ids,
                "round {round}, project {project}, k {k}"
            );
            let dists: Vec<u32> = brute.iter().map(|(d, _)| *d).collect();
            assert_eq!(knn, dists, "vec0's own distances, round {round}");
        };
        for round in 0..40 {
            match next() % 4 {
                0 => insert(&store, &other, 1 + (next() % 300) as usize, &mut next),
                1 => {
                    // Deletes anywhere, some from the other connection.
                    let fresh = store.connect().unwrap();
                    let conn = if round % 2 == 0 { &other } else { &fresh };
                    for _ in 0..(next() % 200) {
                        let id = 1 + (next() % next_id.get() as u64) as i64;
                        conn.execute(&format!("DELETE FROM {t} WHERE symbol_id = ?1"), [id])
                            .unwrap();
                    }
                }
                2 => {
                    // Empties a project's newest chunk: vec0 deletes it, and the next insert
                    // goes into the holes of the chunk before.
                    let project = 1 + (next() % 2) as i64;
                    store
                        .write(|tx| {
                            let newest = super::super::bitscan::newest_chunk(tx, &t, project)?;
                            tx.execute(
                                &format!(
                                    "DELETE FROM {t} WHERE symbol_id IN
                                      (SELECT id FROM {t}_rowids WHERE chunk_id = ?1)"
                                ),
                                [newest],
                            )?;
                            Ok::<_, rusqlite::Error>(())
                        })
                        .unwrap();
                }
                _ => {
                    // One slot freed and filled again at once: same validity, new bits.
                    let id = 1 + (next() % next_id.get() as u64) as i64;
                    other
                        .execute(&format!("DELETE FROM {t} WHERE symbol_id = ?1"), [id])
                        .unwrap();
                    insert(&store, &other, 1, &mut next);
                }
            }
            let query = vector(&mut next);
            for (project, k) in [(1, 1), (2, 7), (1, 32), (2, 200)] {
                check(&store, &query, project, k, round);
            }
        }
    }
}
