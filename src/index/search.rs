//! Code search: a natural-language or identifier query → ranked symbols with their code.
//!
//! One chunk per symbol (kind, qualified name and its identifier parts, signature, doc, the
//! head of its code) lives in the FTS5 table `code_fts` (rowid = `symbols.id`), written with
//! the symbols by [`super::db::replace_file`] — so the crawl and the watcher keep it current,
//! off the edit path, batched in their transactions. When an embedder is on, chunk vectors
//! live in one `code_vec_<embedder>` table per model (`vectors.rs`), and both rankings are
//! fused with weighted RRF (`examples/code_eval.rs` measures them).

use rusqlite::{Connection, Transaction, params};

use super::model::{FileSymbols, Symbol};
use crate::text::{fts_terms, identifier_tokens, is_identifier_query, split_identifier};

/// Lines of a symbol's code that go into its chunk (and into what the model is shown).
pub const HEAD_LINES: usize = 16;
/// Bytes of a symbol's code that go into its chunk at most.
pub const HEAD_BYTES: usize = 1200;
/// Candidates each retriever contributes before fusion.
pub const CANDIDATES: usize = 60;

/// The head of each symbol's code, in the order of `syms.symbols`.
pub fn body_heads(syms: &FileSymbols, source: &[u8]) -> Vec<String> {
    syms.symbols.iter().map(|s| head_of(s, source)).collect()
}

/// The first [`HEAD_LINES`] lines (at most [`HEAD_BYTES`]) of a symbol's range, redacted.
pub fn head_of(s: &Symbol, source: &[u8]) -> String {
    let start = (s.range.start_byte as usize).min(source.len());
    let end = (s.range.end_byte as usize).clamp(start, source.len());
    let text = String::from_utf8_lossy(&source[start..end]);
    let mut out = String::new();
    for line in text.lines().take(HEAD_LINES) {
        if out.len() + line.len() > HEAD_BYTES {
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    // The head goes into code_fts and the embedder: no secret literal in either.
    crate::redact::redact(&out).into_owned()
}

/// The searchable name column: kind, qualified name, and the parts of both identifiers
/// (`parseConfig` → `parse config`), which unicode61 cannot split.
fn name_column(s: &Symbol) -> String {
    let qualified = match &s.container {
        Some(c) => format!("{c}.{}", s.name),
        None => s.name.clone(),
    };
    let mut parts = split_identifier(&s.name).join(" ");
    if let Some(c) = &s.container {
        parts.push(' ');
        parts.push_str(&identifier_tokens(c));
    }
    format!("{} {qualified} {parts}", s.kind.as_str())
}

/// One symbol's code-search chunk, its columns ready to insert. Built where the file is
/// parsed (every core during a crawl), so the writer only inserts.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    name: String,
    signature: String,
    doc: String,
    body: String,
}

impl Chunk {
    pub fn new(s: &Symbol, head: &str) -> Chunk {
        Chunk {
            name: name_column(s),
            signature: format!("{}\n{}", s.signature, identifier_tokens(&s.signature)),
            doc: s.doc.clone().unwrap_or_default(),
            body: format!("{head}\n{}", identifier_tokens(head)),
        }
    }
}

/// The chunk of each symbol, in the order of `syms.symbols`.
pub fn file_chunks(syms: &FileSymbols, source: &[u8]) -> Vec<Chunk> {
    syms.symbols
        .iter()
        .map(|s| Chunk::new(s, &head_of(s, source)))
        .collect()
}

/// Writes the chunks of stored symbols (`ids[i]` is the row of `chunks[i]`'s symbol).
pub fn insert_chunks(tx: &Transaction, ids: &[i64], chunks: &[Chunk]) -> rusqlite::Result<()> {
    let mut ins = tx.prepare_cached(
        "INSERT INTO code_fts (rowid, name, signature, doc, body) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for (id, c) in ids.iter().zip(chunks) {
        ins.execute(params![id, c.name, c.signature, c.doc, c.body])?;
    }
    Ok(())
}

/// Weights of the fused ranking. A starting point: `examples/code_eval.rs` prints the grid
/// to choose them from, but its vector runs have not finished on the 2-core machine yet
/// (see README); BM25 leads identifier queries as it does for memories.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodeWeights {
    pub bm25: f64,
    pub vector: f64,
    /// Vector weight for identifier-looking queries (`parse_config`, `JoinHandle`).
    pub vector_identifier: f64,
    pub rrf_k: f64,
}

impl Default for CodeWeights {
    fn default() -> Self {
        CodeWeights {
            bm25: 1.0,
            vector: 1.5,
            vector_identifier: 0.3,
            rrf_k: 10.0,
        }
    }
}

/// One found symbol, with where it came from in the fusion.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CodeHit {
    pub symbol_id: i64,
    /// Root-relative path.
    pub path: String,
    pub name: String,
    pub kind: String,
    pub container: Option<String>,
    pub signature: String,
    pub doc: Option<String>,
    /// Zero-based lines of the whole definition.
    pub start_line: u32,
    pub end_line: u32,
    pub score: f64,
    pub bm25_rank: Option<usize>,
    pub vector_rank: Option<usize>,
}

impl CodeHit {
    /// How the model and the terminal see a hit: where it is, what it is, its doc and code.
    pub fn render(&self, code: Option<&str>) -> String {
        let qualified = match &self.container {
            Some(c) => format!("{c}.{}", self.name),
            None => self.name.clone(),
        };
        let mut s = format!(
            "{} {qualified} — {}:{}\n",
            self.kind,
            self.path,
            self.start_line + 1
        );
        if let Some(doc) = self.doc.as_deref().filter(|d| !d.trim().is_empty()) {
            s.push_str(&format!("doc: {}\n", doc.trim()));
        }
        match code {
            // The code is read from the file now and goes to the terminal or the model.
            Some(c) if !c.trim().is_empty() => {
                s.push_str(&format!("```\n{}```\n", crate::redact::redact(c)))
            }
            _ => s.push_str(&format!(
                "`{}`\n",
                self.signature.lines().next().unwrap_or("")
            )),
        }
        s
    }
}

/// A term in more chunks than this is "common": FTS5 scores every row a query matches, so
/// an OR over common terms of a 400k-chunk index would score most of it (0.3 s).
const COMMON_TERM_ROWS: i64 = 2_000;

/// Whether `term` matches more than [`COMMON_TERM_ROWS`] chunks (counting stops there).
fn is_common(conn: &Connection, term: &str) -> rusqlite::Result<bool> {
    conn.prepare_cached(
        "SELECT count(*) FROM (SELECT rowid FROM code_fts WHERE code_fts MATCH ?1 LIMIT ?2)",
    )?
    .query_row(params![term, COMMON_TERM_ROWS + 1], |r| r.get::<_, i64>(0))
    .map(|n| n > COMMON_TERM_ROWS)
}

/// The MATCH expression: rare terms OR-ed (any of them is evidence), common terms AND-ed
/// (together they are), so the rows FTS5 has to score stay few. Every term still counts in
/// the bm25 of the rows that match.
fn match_expression(conn: &Connection, query: &str) -> rusqlite::Result<Option<String>> {
    let terms = fts_terms(query);
    let (mut rare, mut common) = (Vec::new(), Vec::new());
    for t in terms {
        if is_common(conn, &t)? {
            common.push(t);
        } else {
            rare.push(t);
        }
    }
    let any_rare = format!("({})", rare.join(" OR "));
    let all_common = format!("({})", common.join(" AND "));
    Ok(match (rare.is_empty(), common.len()) {
        (true, 0) => None,
        (true, _) => Some(all_common),
        (false, 0) => Some(any_rare),
        // One common word adds its weight only to rows a rare word found.
        (false, 1) => Some(format!("{any_rare} OR ({} AND {any_rare})", common[0])),
        (false, _) => Some(format!("{any_rare} OR {all_common}")),
    })
}

/// Ranked symbol ids of `project` whose chunk matches `query` by BM25.
pub fn bm25_ids(
    conn: &Connection,
    project_id: i64,
    query: &str,
    n: usize,
) -> rusqlite::Result<Vec<i64>> {
    let Some(expr) = match_expression(conn, query)? else {
        return Ok(Vec::new());
    };
    // Rank inside FTS5 alone (its `rank` is bm25 with the column weights set by the
    // migration: names, then docs, signatures, code), then keep this project's: joining every
    // match before the limit costs three lookups per match — 0.3 s on 400k chunks.
    let mut stmt = conn.prepare_cached(
        "WITH top AS MATERIALIZED (
             SELECT rowid AS id, rank FROM code_fts WHERE code_fts MATCH ?1
              ORDER BY rank LIMIT ?3 * 4)
         SELECT s.id FROM top
           JOIN symbols s ON s.id = top.id
           JOIN files f ON f.id = s.file_id
          WHERE f.project_id = ?2
          ORDER BY top.rank, s.id
          LIMIT ?3",
    )?;
    let rows = stmt.query_map(params![expr, project_id, n as i64], |r| r.get(0))?;
    rows.collect()
}

/// A query embedded by the embedder whose chunk vectors live in `space`.
#[derive(Clone, Copy, Debug)]
pub struct CodeQueryVector<'a> {
    pub space: &'a super::vectors::CodeSpace,
    pub vector: &'a [f32],
}

/// Code search: BM25 always, vectors when given, fused with weighted RRF.
pub fn search(
    conn: &Connection,
    project_id: i64,
    query: &str,
    limit: usize,
    qv: Option<CodeQueryVector<'_>>,
    weights: &CodeWeights,
) -> rusqlite::Result<Vec<CodeHit>> {
    let n = CANDIDATES.max(limit);
    let lexical = bm25_ids(conn, project_id, query, n)?;
    let semantic = match qv {
        Some(qv) => super::vectors::nearest(conn, qv.space, qv.vector, project_id, n)?,
        None => Vec::new(),
    };
    let vector_weight = if is_identifier_query(query) {
        weights.vector_identifier
    } else {
        weights.vector
    };
    let fused = crate::fusion::weighted_rrf(
        &[(weights.bm25, &lexical), (vector_weight, &semantic)],
        weights.rrf_k,
    );
    let rank_in = |ids: &[i64], id: i64| ids.iter().position(|x| *x == id).map(|p| p + 1);
    let mut stmt = conn.prepare_cached(
        "SELECT f.path, s.name, s.kind, s.container, s.signature, s.doc, s.start_line, s.end_line
           FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.id = ?1",
    )?;
    let mut hits = Vec::with_capacity(limit);
    for (id, score) in fused.into_iter().take(limit) {
        let hit = stmt.query_row([id], |r| {
            Ok(CodeHit {
                symbol_id: id,
                path: r.get(0)?,
                name: r.get(1)?,
                kind: r.get(2)?,
                container: r.get(3)?,
                signature: r.get(4)?,
                doc: r.get(5)?,
                start_line: r.get(6)?,
                end_line: r.get(7)?,
                score,
                bm25_rank: rank_in(&lexical, id),
                vector_rank: rank_in(&semantic, id),
            })
        })?;
        hits.push(hit);
    }
    Ok(hits)
}

/// Symbols of `project` named exactly `name` (case-insensitive through the name index),
/// definitions before declarations: what `find_symbol` answers from SQLite on the CLI.
pub fn by_name(
    conn: &Connection,
    project_id: i64,
    name: &str,
    limit: usize,
) -> rusqlite::Result<Vec<CodeHit>> {
    let mut stmt = conn.prepare_cached(
        "SELECT s.id, f.path, s.name, s.kind, s.container, s.signature, s.doc, s.start_line, s.end_line
           FROM symbols s JOIN files f ON f.id = s.file_id
          WHERE s.name = ?2 COLLATE NOCASE AND f.project_id = ?1
          ORDER BY s.name = ?2 DESC, s.declaration, f.path, s.start_line
          LIMIT ?3",
    )?;
    let rows = stmt.query_map(params![project_id, name, limit as i64], |r| {
        Ok(CodeHit {
            symbol_id: r.get(0)?,
            path: r.get(1)?,
            name: r.get(2)?,
            kind: r.get(3)?,
            container: r.get(4)?,
            signature: r.get(5)?,
            doc: r.get(6)?,
            start_line: r.get(7)?,
            end_line: r.get(8)?,
            score: 0.0,
            bm25_rank: None,
            vector_rank: None,
        })
    })?;
    rows.collect()
}

/// The lines `[start, end]` (zero-based, inclusive) of a file, at most `max_lines`, for
/// showing a hit's code. `None` when the file cannot be read.
pub fn read_lines(
    path: &std::path::Path,
    start: u32,
    end: u32,
    max_lines: usize,
) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut out = String::new();
    let count = (end.saturating_sub(start) as usize + 1).min(max_lines);
    for line in text.lines().skip(start as usize).take(count) {
        out.push_str(line);
        out.push('\n');
    }
    if end.saturating_sub(start) as usize + 1 > max_lines {
        out.push_str("…\n");
    }
    Some(out)
}

/// Names of the symbols of `path` whose definition contains the zero-based `line`,
/// innermost first (what "the code at the cursor" is about).
pub fn enclosing(
    conn: &Connection,
    project_id: i64,
    path: &str,
    line: u32,
) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(
        "SELECT s.name FROM symbols s JOIN files f ON f.id = s.file_id
          WHERE f.project_id = ?1 AND f.path = ?2 AND s.start_line <= ?3 AND s.end_line >= ?3
          ORDER BY s.end_line - s.start_line LIMIT 4",
    )?;
    let rows = stmt.query_map(params![project_id, path, line], |r| r.get(0))?;
    rows.collect()
}
