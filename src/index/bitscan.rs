//! The nearest code chunks by sign bits: our own scan over sqlite-vec's storage.
//!
//! sqlite-vec's KNN keeps its k nearest with a selection that costs k steps for every row it
//! scans (`min_idx`). At 513k chunks that was 46 ms a question at k = 32, past code search's
//! 30 ms budget by itself (docs/benchmarks.md). Here each row costs four XORs and popcounts,
//! and a bounded heap keeps the k nearest. Reading the 16 MB of bits out of SQLite costs
//! another 12–17 ms a question, so each process keeps them in memory, chunk by chunk. Only
//! the chunks written since are read again.
//!
//! # The boundary with sqlite-vec (0.1.x, compiled in: `Cargo.lock` pins it)
//! This module reads vec0's shadow tables. Writes still go through vec0 alone. It relies on
//! the following; `tests::the_scan_equals_a_brute_force_over_vec0s_own_rows` breaks if any
//! of it stops holding.
//! - `{t}_chunks(chunk_id, size, sequence_id, partition00, validity, rowids)` holds one row
//!   per chunk of `size` slots. Slot i is live iff bit i % 8 of `validity[i / 8]` is set;
//!   its id is the little-endian i64 at `rowids[8i..]`.
//! - `{t}_vector_chunks00(rowid = chunk_id, vectors)`: slot i's bits are at
//!   `vectors[i·w..(i+1)·w]`, with w the vector's width in bytes.
//! - **A delete** only clears a slot's validity bit; a chunk left empty is deleted.
//! - **An insert** fills a free slot of the partition's newest chunk, or a new chunk.
//!   Chunk ids are AUTOINCREMENT, so an id is never used twice.
//! - **Nothing is updated in place.** Mira only inserts and deletes (`vectors::write_batch`
//!   and the symbols' delete trigger).
//!
//! So a cached chunk stays right under deletes, since its live slots are read fresh each
//! time. Only an insert can change what a slot holds. `vectors::write_batch` therefore
//! counts, in `code_chunk_gen`, each insert into every chunk it may have touched (the newest
//! before the batch, and every one after). A chunk whose count moved is read again.
//!
//! Where a table was made by another sqlite-vec than 0.1.x, [`nearest`] answers `None` and
//! the caller asks vec0 itself.

use std::collections::{BinaryHeap, HashMap};
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension, params};

/// One chunk as last read.
struct Chunk {
    writes: i64,
    rowids: Vec<i64>,
    bits: Vec<u64>,
}

/// One space's chunks of one project, in one database.
#[derive(Default)]
struct Cached {
    chunks: HashMap<i64, Chunk>,
}

/// Whose chunks: the database file, the space (with its creation time, so that a database
/// made again at the same path is not taken for the old one) and the project.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    db: String,
    embedder_id: i64,
    created_at: i64,
    project_id: i64,
}

/// Projects whose bits one process keeps: an editor has one or two open; tests open many.
const KEPT: usize = 4;

type Cache = Mutex<HashMap<Key, Arc<Mutex<Cached>>>>;

fn cache() -> &'static Cache {
    static CACHE: std::sync::OnceLock<Cache> = std::sync::OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// Records in `tx`, once a batch is inserted into `table`'s partition `project_id`, that
/// every chunk it can have touched was written: `newest_before` is [`newest_chunk`] as it
/// was before the batch.
pub fn count_inserts(
    tx: &Connection,
    table: &str,
    embedder_id: i64,
    project_id: i64,
    newest_before: Option<i64>,
) -> rusqlite::Result<()> {
    // The newest chunk before the batch took its first rows; any chunk made since has an id
    // above it (AUTOINCREMENT).
    tx.execute(
        &format!(
            "INSERT INTO code_chunk_gen (embedder_id, chunk_id, gen)
             SELECT ?1, chunk_id, 1 FROM {table}_chunks
              WHERE partition00 = ?2 AND chunk_id >= ?3
             ON CONFLICT (embedder_id, chunk_id) DO UPDATE SET gen = gen + 1"
        ),
        params![embedder_id, project_id, newest_before.unwrap_or(i64::MIN)],
    )?;
    Ok(())
}

/// The newest chunk of `table`'s partition `project_id`: where vec0 puts the next insert.
pub fn newest_chunk(
    tx: &Connection,
    table: &str,
    project_id: i64,
) -> rusqlite::Result<Option<i64>> {
    tx.query_row(
        &format!("SELECT max(chunk_id) FROM {table}_chunks WHERE partition00 = ?1"),
        [project_id],
        |r| r.get(0),
    )
}

/// Whether `table` was made by a sqlite-vec whose storage this module knows.
fn known_layout(conn: &Connection, table: &str) -> rusqlite::Result<bool> {
    let version: Option<String> = conn
        .query_row(
            &format!("SELECT value FROM {table}_info WHERE key = 'CREATE_VERSION'"),
            [],
            |r| r.get(0),
        )
        .optional()?;
    Ok(version.is_some_and(|v| v.starts_with("v0.1.")))
}

/// The ids of the `k` chunks of `project_id` nearest to `query` (sign bits, as stored)
/// by Hamming distance, nearest first, ties by id. `None` where the table's storage is not
/// the one described above.
pub fn nearest(
    conn: &Connection,
    table: &str,
    embedder_id: i64,
    project_id: i64,
    query: &[u8],
    k: usize,
) -> rusqlite::Result<Option<Vec<i64>>> {
    // Bits scanned a 64-bit word at a time: other widths (none Mira makes: 256 and 384
    // dimensions are 4 and 6 words) are left to vec0.
    if query.is_empty() || !query.len().is_multiple_of(8) || !known_layout(conn, table)? {
        return Ok(None);
    }
    let created_at: i64 = conn.query_row(
        "SELECT created_at FROM embedders WHERE id = ?1",
        [embedder_id],
        |r| r.get(0),
    )?;
    let q: Vec<u64> = words(query);
    let entry = match conn.path().filter(|p| !p.is_empty()) {
        Some(db) => {
            let key = Key {
                db: db.to_string(),
                embedder_id,
                created_at,
                project_id,
            };
            let mut all = cache().lock().unwrap_or_else(|e| e.into_inner());
            if !all.contains_key(&key) && all.len() >= KEPT {
                all.clear();
            }
            all.entry(key).or_default().clone()
        }
        // An in-memory database has no name to key it by: read it whole each time.
        None => Arc::new(Mutex::new(Cached::default())),
    };
    let mut cached = entry.lock().unwrap_or_else(|e| e.into_inner());
    refresh_and_scan(conn, table, embedder_id, project_id, &mut cached, &q, k).map(Some)
}

fn words(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")))
        .collect()
}

/// Reads each chunk's live slots, reads again the chunks written since they were cached,
/// forgets the deleted ones, and scans.
fn refresh_and_scan(
    conn: &Connection,
    table: &str,
    embedder_id: i64,
    project_id: i64,
    cached: &mut Cached,
    q: &[u64],
    k: usize,
) -> rusqlite::Result<Vec<i64>> {
    let mut list = conn.prepare_cached(&format!(
        "SELECT c.chunk_id, c.validity, coalesce(g.gen, 0) FROM {table}_chunks c
           LEFT JOIN code_chunk_gen g ON g.embedder_id = ?2 AND g.chunk_id = c.chunk_id
          WHERE c.partition00 = ?1"
    ))?;
    let mut read = conn.prepare_cached(&format!(
        "SELECT c.rowids, v.vectors FROM {table}_chunks c
           JOIN {table}_vector_chunks00 v ON v.rowid = c.chunk_id WHERE c.chunk_id = ?1"
    ))?;
    let mut heap = Nearest::new(k);
    let mut seen = Vec::new();
    let mut rows = list.query(params![project_id, embedder_id])?;
    while let Some(row) = rows.next()? {
        let (id, writes): (i64, i64) = (row.get(0)?, row.get(2)?);
        seen.push(id);
        if cached.chunks.get(&id).is_none_or(|c| c.writes != writes) {
            let chunk = read.query_row([id], |r| {
                let rowids = r.get_ref(0)?.as_blob()?;
                Ok(Chunk {
                    writes,
                    rowids: rowids
                        .chunks_exact(8)
                        .map(|w| i64::from_le_bytes(w.try_into().expect("8 bytes")))
                        .collect(),
                    bits: words(r.get_ref(1)?.as_blob()?),
                })
            })?;
            cached.chunks.insert(id, chunk);
        }
        let chunk = &cached.chunks[&id];
        heap.scan(row.get_ref(1)?.as_blob()?, chunk, q);
    }
    if cached.chunks.len() != seen.len() {
        seen.sort_unstable();
        cached.chunks.retain(|id, _| seen.binary_search(id).is_ok());
    }
    Ok(heap.into_sorted())
}

/// The k nearest seen so far: a max-heap on (distance, id), so its top is the one to drop.
struct Nearest {
    k: usize,
    heap: BinaryHeap<(u32, i64)>,
}

impl Nearest {
    fn new(k: usize) -> Nearest {
        Nearest {
            k,
            heap: BinaryHeap::with_capacity(k + 1),
        }
    }

    /// Offers every live slot of `chunk`. The distance comes first, the validity bit only
    /// for a slot near enough to enter: a deleted slot's bits are zeros, never out of bounds.
    fn scan(&mut self, validity: &[u8], chunk: &Chunk, q: &[u64]) {
        let w = q.len();
        let slots = chunk.rowids.len().min(chunk.bits.len() / w);
        let live = |i: usize| validity.get(i / 8).is_some_and(|b| b >> (i % 8) & 1 == 1);
        let mut bound = self.bound();
        let mut offer = |this: &mut Nearest, i: usize, d: u32| {
            if d <= bound && live(i) {
                this.offer(d, chunk.rowids[i]);
                bound = this.bound();
            }
        };
        if let Ok(q4) = <&[u64; 4]>::try_from(q) {
            // 256 dimensions, the built-in code model's: unrolled, and with the CPU's popcount
            // where it has one (x86-64's baseline has none: a scan took twice as long).
            let bits = &chunk.bits[..slots * 4];
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("popcnt") {
                // SAFETY: the CPU was just found to have the instruction the function may use.
                unsafe { distances4_popcnt(bits, q4, |i, d| offer(self, i, d)) };
                return;
            }
            distances4(bits, q4, |i, d| offer(self, i, d));
        } else {
            for (i, v) in chunk.bits[..slots * w].chunks_exact(w).enumerate() {
                let d = v.iter().zip(q).map(|(a, b)| (a ^ b).count_ones()).sum();
                offer(self, i, d);
            }
        }
    }

    /// The farthest distance that can still enter.
    fn bound(&self) -> u32 {
        match self.heap.peek() {
            Some((d, _)) if self.heap.len() >= self.k => *d,
            _ => u32::MAX,
        }
    }

    fn offer(&mut self, d: u32, id: i64) {
        if self.k == 0 {
            return;
        }
        if self.heap.len() < self.k {
            self.heap.push((d, id));
        } else if self.heap.peek().is_some_and(|top| (d, id) < *top) {
            self.heap.pop();
            self.heap.push((d, id));
        }
    }

    fn into_sorted(self) -> Vec<i64> {
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|(_, id)| id)
            .collect()
    }
}

/// Calls `f(slot, distance)` for each 4-word vector of `bits`.
#[inline(always)]
fn distances4(bits: &[u64], q: &[u64; 4], mut f: impl FnMut(usize, u32)) {
    for (i, v) in bits.chunks_exact(4).enumerate() {
        let d = (v[0] ^ q[0]).count_ones()
            + (v[1] ^ q[1]).count_ones()
            + (v[2] ^ q[2]).count_ones()
            + (v[3] ^ q[3]).count_ones();
        f(i, d);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn distances4_popcnt(bits: &[u64], q: &[u64; 4], f: impl FnMut(usize, u32)) {
    distances4(bits, q, f)
}
