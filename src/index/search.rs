//! Code search: a natural-language or identifier query → ranked symbols with their code.
//!
//! One chunk per symbol (kind, qualified name and its identifier parts, signature, doc, the
//! head of its code) lives in the FTS5 table `code_fts` (rowid = `symbols.id`), written with
//! the symbols by [`super::db::replace_file_with_chunks`] (chunks built by [`file_chunks`] on
//! the parse threads) — so the crawl and the watcher keep it current, off the edit path,
//! batched in their transactions. When an embedder is on, chunk vectors
//! live in one `code_vec_<embedder>` table per model (`vectors.rs`), and both rankings are
//! fused with weighted RRF (`examples/code_eval.rs` measures them).

use rusqlite::{Connection, Transaction, params};

use super::model::{FileSymbols, Symbol};
use super::stem::{stem_words, stemmed};
use crate::text::{fts_terms, identifier_tokens, is_identifier_query, split_identifier};

/// Lines of a symbol's code that go into its chunk. Four lines (at most [`HEAD_BYTES`]) rank
/// as well as sixteen (1,200 bytes) did on the code-search eval, dev hit@5 0.522 → 0.530,
/// held out 0.477 → 0.470, and cut the cold index's code-search stage by a quarter
/// (docs/benchmarks.md): most of a longer head is the body, whose words the name, signature
/// and doc already carry or that ranks noise.
pub const HEAD_LINES: usize = 4;
/// Bytes of a symbol's code that go into its chunk at most.
pub const HEAD_BYTES: usize = 400;
/// Candidates each retriever contributes before fusion.
pub const CANDIDATES: usize = 60;
/// Candidates from the vectors: the best of the 128 nearest by sign bits (`vectors::nearest`).
/// 64 or 128 of them measured no better in the reranker, and in RRF (k 10) a rank past 30 adds
/// under a quarter of a first rank's share (docs/benchmarks.md).
pub const VECTOR_CANDIDATES: usize = 32;

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
    // The head goes into code_fts: no secret literal in it.
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
    /// Each column's words stemmed here, on the thread that cut the chunk ([`super::stem`]).
    pub fn new(s: &Symbol, head: &str) -> Chunk {
        let column = |parts: &[&str]| {
            let mut out = String::with_capacity(parts.iter().map(|p| p.len()).sum());
            for p in parts {
                stem_words(p, &mut out);
            }
            out
        };
        Chunk {
            name: column(&[&name_column(s)]),
            signature: column(&[&s.signature, &identifier_tokens(&s.signature)]),
            doc: column(&[s.doc.as_deref().unwrap_or_default()]),
            body: column(&[head, &identifier_tokens(head)]),
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

/// Weights of the fused ranking, chosen by `scripts/code-eval.sh --grid` (docs/benchmarks.md)
/// on the 600 pairs of its dev crates, docs stripped, with the built-in code model: BM25
/// hit@5 0.547 / MRR@10 0.370, vectors 0.525 / 0.378, this fusion 0.637 / 0.449 — the best
/// of the grid (vector 0.5–3, k 10–60). (all-MiniLM-L6-v2's vectors, measured earlier on
/// ropey and regex-syntax, were best at vector 1.5, within a few pairs of 1.) BM25 leads
/// identifier queries as it does for memories.
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
            vector: 1.0,
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
/// The rare terms that lead a query match at most as many rows together (their document
/// frequencies summed) as a common term does alone; the others only add to those rows'
/// scores. On the code eval's dev crates nothing was lost, and over 513k chunks a long
/// question's BM25 went from p99 95 ms to 34 ms (docs/benchmarks.md).
const LEAD_ROWS: i64 = COMMON_TERM_ROWS;
/// The terms a query keeps, its rarest: mira_bm25 scores each phrase on every row it ranks,
/// and a pasted paragraph of sixty terms took 30 ms over 513k chunks.
const MAX_TERMS: usize = 32;
/// How long a common term's document frequency is reused: it moves slowly (a share of a
/// large index).
const DF_TTL: std::time::Duration = std::time::Duration::from_secs(300);
/// How long a rare term's is: an edit moves it more, and a question of sixty words counted
/// each of its terms afresh, 0.1–0.5 ms apiece over 513k chunks.
const RARE_DF_TTL: std::time::Duration = std::time::Duration::from_secs(30);
/// Column weights of the ranking (name, signature, doc, body): a name match counts most.
const COLUMN_WEIGHTS: [f64; 4] = [4.0, 2.0, 3.0, 1.0];

type DfKey = (String, String);
static DF_CACHE: std::sync::LazyLock<
    std::sync::Mutex<std::collections::HashMap<DfKey, (i64, std::time::Instant)>>,
> = std::sync::LazyLock::new(Default::default);

/// In how many chunks `term` occurs, counted up to [`COMMON_TERM_ROWS`] and estimated past
/// it: a chunk's rowid is its symbol's id, and FTS5 walks a doclist in rowid order, so the
/// share of the id range the first rows span says how many rows the whole doclist holds
/// (counting it exactly walked all of it: 7–12 ms for `self` or `fn` over 513k chunks). A
/// count is reused for [`DF_TTL`] in this process, a rare one for [`RARE_DF_TTL`]; a term
/// no chunk holds is counted again each time, so a name just written is found at once.
fn document_frequency(conn: &Connection, term: &str) -> rusqlite::Result<i64> {
    let key = conn
        .path()
        .filter(|p| !p.is_empty())
        .map(|p| (p.to_string(), term.to_string()));
    if let Some(k) = &key {
        let cache = DF_CACHE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((df, at)) = cache.get(k) {
            let ttl = if *df > COMMON_TERM_ROWS {
                DF_TTL
            } else {
                RARE_DF_TTL
            };
            if at.elapsed() < ttl {
                return Ok(*df);
            }
        }
    }
    let (capped, last): (i64, Option<i64>) = conn
        .prepare_cached(
            "SELECT count(*), max(rowid) FROM
               (SELECT rowid FROM code_fts WHERE code_fts MATCH ?1 LIMIT ?2)",
        )?
        .query_row(params![term, COMMON_TERM_ROWS + 1], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
    let df = match last {
        Some(last) if capped > COMMON_TERM_ROWS => {
            let (lo, hi): (i64, i64) = conn
                .prepare_cached(
                    "SELECT (SELECT min(id) FROM symbols), (SELECT max(id) FROM symbols)",
                )?
                .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            let span = (hi - lo + 1).max(1) as f64;
            let covered = (last - lo + 1).max(1) as f64;
            ((capped as f64 * span / covered) as i64).clamp(capped, span as i64)
        }
        _ => capped,
    };
    if let Some(k) = key.filter(|_| df > 0) {
        let mut cache = DF_CACHE.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() > 10_000 {
            cache.clear();
        }
        cache.insert(k, (df, std::time::Instant::now()));
    }
    Ok(df)
}

/// A MATCH expression and the document frequency of each of its phrases, in order
/// (negative for a repeated term, which `mira_bm25` counts once).
#[derive(Debug, PartialEq)]
struct MatchExpr {
    text: String,
    phrase_dfs: Vec<i64>,
    /// Each phrase's weight: 1 for the query's own words, less for their other spellings.
    phrase_weights: Vec<f64>,
    /// Every term is common: the rows it matches can be a large share of the index.
    only_common: bool,
}

/// At most this many rows of an all-common query are scored: the newest ones (a file
/// re-indexed after an edit gets new ids, so this leans to the code being worked on).
const COMMON_CANDIDATES: i64 = 1_000;

/// A query term: its quoted text, document frequency, the query word it spells, its weight.
type Term = (String, i64, usize, f64);

/// What an alternative spelling of a query word (`abbrev`) weighs against the word itself.
const ALTERNATIVE_WEIGHT: f64 = 0.5;

/// The MATCH expression: rare terms OR-ed (any of them is evidence), common terms AND-ed
/// (together they are), so the rows FTS5 has to score stay few. Every term still counts in
/// the score of the rows that match; terms no chunk contains are left out. A word's other
/// spellings in code (`abbrev`: "configuration" → `config`, `cfg`) are alternatives to it:
/// among the common terms they are OR-ed with the word, never required beside it.
fn match_expression(conn: &Connection, query: &str) -> rusqlite::Result<Option<MatchExpr>> {
    // Each a `Term`; common terms stay in word order (`all_common` groups them by word).
    let (mut rare, mut common) = (Vec::new(), Vec::new());
    for (word, spellings) in query_words(query).into_iter().enumerate() {
        for (i, t) in spellings.into_iter().enumerate() {
            let weight = if i == 0 { 1.0 } else { ALTERNATIVE_WEIGHT };
            match document_frequency(conn, &t)? {
                0 => {}
                df if df > COMMON_TERM_ROWS => common.push((t, df, word, weight)),
                df => rare.push((t, df, word, weight)),
            }
        }
    }
    keep_rarest(&mut rare, &mut common, MAX_TERMS);
    // A long question has many rare words, and FTS5 scores every row any of them matches:
    // the rarest lead, and the rest count only on the rows those found, as common words do.
    rare.sort_by_key(|t| t.1);
    common.extend(rare.split_off(leading(&rare)));
    let join = |terms: &[Term], op: &str| {
        let list: Vec<&str> = terms.iter().map(|(t, ..)| t.as_str()).collect();
        format!("({})", list.join(op))
    };
    // Each word's common spellings OR-ed, the words AND-ed; phrases in `common`'s order.
    let all_common = || {
        let words: Vec<String> = common
            .chunk_by(|a, b| a.2 == b.2)
            .map(|spellings| join(spellings, " OR "))
            .collect();
        format!("({})", words.join(" AND "))
    };
    let dfs = |terms: &[Term]| terms.iter().map(|t| t.1).collect::<Vec<_>>();
    let weights = |terms: &[Term]| terms.iter().map(|t| t.3).collect::<Vec<_>>();
    let repeats = |terms: &[Term]| vec![-1; terms.len()];
    let any_rare = join(&rare, " OR ");
    let (text, phrases, only_common) = match (rare.is_empty(), common.is_empty()) {
        (true, true) => return Ok(None),
        (false, true) => (any_rare, rare.clone(), false),
        // All common: together they are evidence; the rows are many, see `COMMON_CANDIDATES`.
        (true, false) => (all_common(), common.clone(), true),
        // Common words add their weight only to rows a rare word found: walking their
        // doclists is driven by the rare words' few rows.
        (false, false) => {
            let text = format!("{any_rare} OR ({} AND {any_rare})", join(&common, " OR "));
            (text, [rare.clone(), common.clone()].concat(), false)
        }
    };
    let mut phrase_dfs = dfs(&phrases);
    let mut phrase_weights = weights(&phrases);
    if !rare.is_empty() && !common.is_empty() {
        // The rare words' second appearance counts once (see `mira_bm25`).
        phrase_dfs.extend(repeats(&rare));
        phrase_weights.extend(weights(&rare));
    }
    Ok(Some(MatchExpr {
        text,
        phrase_dfs,
        phrase_weights,
        only_common,
    }))
}

/// Keeps the `max` rarest terms of both lists, each list in its order: a pasted paragraph
/// loses its commonest terms first, since each costs every row scored.
fn keep_rarest(rare: &mut Vec<Term>, common: &mut Vec<Term>, max: usize) {
    if rare.len() + common.len() <= max {
        return;
    }
    let mut dfs: Vec<i64> = rare.iter().chain(common.iter()).map(|t| t.1).collect();
    dfs.sort_unstable();
    let cut = dfs[max - 1];
    // Terms as frequent as the last one kept are kept in query order, while there is room.
    let mut room = max - dfs.iter().filter(|d| **d < cut).count();
    let mut keep = |t: &Term| {
        let kept = t.1 < cut || (t.1 == cut && room > 0);
        if t.1 == cut && kept {
            room -= 1;
        }
        kept
    };
    rare.retain(&mut keep);
    common.retain(&mut keep);
}

/// How many of `rare` (rarest first) lead the match: at least one, and no more than match
/// [`LEAD_ROWS`] rows together.
fn leading(rare: &[Term]) -> usize {
    let mut rows = 0;
    let within = rare
        .iter()
        .take_while(|t| {
            rows += t.1;
            rows <= LEAD_ROWS
        })
        .count();
    within.max(1).min(rare.len())
}

/// The query's FTS terms, each with its other spellings in code (quoted as `fts_terms`
/// quotes), one list per term; a spelling already in the query is not repeated.
fn query_words(query: &str) -> Vec<Vec<String>> {
    let terms = fts_terms(query);
    let mut seen: std::collections::HashSet<String> = terms.iter().cloned().collect();
    terms
        .into_iter()
        .map(|t| {
            let word = t.trim_matches('"').to_string();
            let mut spellings = vec![t];
            for alt in super::abbrev::alternatives(&word) {
                let quoted = format!("\"{alt}\"");
                if seen.insert(quoted.clone()) {
                    spellings.push(quoted);
                }
            }
            spellings.iter().filter_map(|s| stemmed_term(s)).collect()
        })
        .filter(|spellings: &Vec<String>| !spellings.is_empty())
        .collect()
}

/// A quoted term as the chunks were written: its words stemmed ([`super::stem`]), quoted
/// again (a phrase, should it hold several; stems are letters and digits, nothing to escape).
/// `None` when no word is left.
fn stemmed_term(quoted: &str) -> Option<String> {
    let text = quoted
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(quoted)
        .replace("\"\"", "\"");
    let words = stemmed(&text);
    (!words.is_empty()).then(|| format!("\"{words}\""))
}

/// What a question (more than one word) asks for is code: an impl block, a field or
/// constant, or a test scores this share of its BM25 score (scores are negative, so a factor
/// below 1 ranks lower). An impl block's chunk repeats the names of its methods; a field
/// carries its type's words; a test repeats the words of what it tests. Chosen on the dev
/// crates of `scripts/code-eval.sh` (docs/benchmarks.md): hit@5 0.462 → 0.520, each part
/// helping on its own (impl 0.5: 0.483; + fields 0.7: 0.498; + tests 0.5: 0.520).
fn kind_prior() -> &'static str {
    use super::model::SymbolKind as K;
    static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        // Spelled by `SymbolKind::as_str`, as the `symbols.kind` column stores them.
        let fields = [
            K::Field,
            K::EnumMember,
            K::Constant,
            K::Variable,
            K::Property,
        ]
        .map(|k| format!("'{}'", k.as_str()))
        .join(", ");
        format!(
            "CASE
        WHEN s.kind = '{impl_}' THEN 0.5
        WHEN s.kind IN ({fields}) THEN 0.7
        WHEN s.container = 'tests' OR s.container LIKE '%::tests' OR s.container LIKE '%.tests'
          OR s.name LIKE 'test\\_%' ESCAPE '\\' OR s.name GLOB 'test[A-Z]*'
          OR f.path LIKE 'tests/%' OR f.path LIKE '%/tests/%' THEN 0.5
        ELSE 1.0 END",
            impl_ = K::Impl.as_str()
        )
    });
    &SQL
}

/// Symbol ids of `project` whose chunk matches `query` by BM25, best first, with each one's
/// score (FTS5's sign: lower is better), kind prior applied.
pub fn bm25_scored(
    conn: &Connection,
    project_id: i64,
    query: &str,
    n: usize,
) -> rusqlite::Result<Vec<(i64, f64)>> {
    let Some(expr) = match_expression(conn, query)? else {
        return Ok(Vec::new());
    };
    // Rank inside FTS5 alone, then keep this project's: joining every match before the
    // limit costs three lookups per match — 0.3 s on 400k chunks. CROSS JOIN keeps that
    // order: left to itself the planner starts from the project's files and walks all of
    // their symbols to probe the few ranked rows (20 ms on 400k symbols). `mira_bm25` is FTS5's
    // bm25 fed the document frequencies counted above, so that FTS5 does not count them
    // again by walking each term's whole doclist (see store::fts_rank).
    let weights: Vec<String> = COLUMN_WEIGHTS.iter().map(|w| format!("{w:?}")).collect();
    let phrases = expr.phrase_dfs.len();
    let dfs: Vec<String> = (0..2 * phrases).map(|i| format!("?{}", i + 4)).collect();
    // An all-common expression scores only its newest matches: FTS5 walks the doclists
    // newest first and stops at the limit, so nothing counts the older matches.
    let scored = format!(
        "SELECT rowid AS id, mira_bm25(code_fts, {}, {}) AS score
           FROM code_fts WHERE code_fts MATCH ?1",
        weights.join(", "),
        dfs.join(", ")
    );
    let top = if expr.only_common {
        format!(
            "SELECT id, score FROM ({scored} ORDER BY rowid DESC LIMIT {COMMON_CANDIDATES})
              ORDER BY score LIMIT ?3 * 4"
        )
    } else {
        format!("{scored} ORDER BY score LIMIT ?3 * 4")
    };
    // One word (`parse_config`, `JoinHandle`) names what it wants, whatever its kind.
    let prior = if query.split_whitespace().nth(1).is_none() {
        "1.0"
    } else {
        kind_prior()
    };
    let sql = format!(
        "WITH top AS MATERIALIZED ({top})
         SELECT s.id, top.score * {prior} FROM top
          CROSS JOIN symbols s ON s.id = top.id
          CROSS JOIN files f ON f.id = s.file_id
          WHERE f.project_id = ?2
          ORDER BY top.score * {prior}, s.id
          LIMIT ?3"
    );
    let mut values: Vec<rusqlite::types::Value> =
        vec![expr.text.into(), project_id.into(), (n as i64).into()];
    values.extend(expr.phrase_dfs.iter().map(|df| (*df).into()));
    values.extend(expr.phrase_weights.iter().map(|w| (*w).into()));
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(values), |r| {
        Ok((r.get(0)?, r.get(1)?))
    })?;
    rows.collect()
}

/// A query embedded by the embedder whose chunk vectors live in `space`.
#[derive(Clone, Copy, Debug)]
pub struct CodeQueryVector<'a> {
    pub space: &'a super::vectors::CodeSpace,
    pub vector: &'a [f32],
}

/// Code search: BM25 always, vectors when given. A question over the built-in code model's
/// vectors is ordered by [`super::rerank`]; a one-word query and a configured embedder's
/// vectors are fused with weighted RRF.
pub fn search(
    conn: &Connection,
    project_id: i64,
    query: &str,
    limit: usize,
    qv: Option<CodeQueryVector<'_>>,
    weights: &CodeWeights,
) -> rusqlite::Result<Vec<CodeHit>> {
    let n = CANDIDATES.max(limit);
    let lexical = bm25_scored(conn, project_id, query, n)?;
    let semantic = match qv {
        Some(qv) => super::vectors::nearest(
            conn,
            qv.space,
            qv.vector,
            project_id,
            VECTOR_CANDIDATES.max(limit),
        )?,
        None => Vec::new(),
    };
    let fitted = qv.is_some_and(|qv| qv.space.model_id == super::rerank::FITTED_FOR);
    let lexical_ids: Vec<i64> = lexical.iter().map(|x| x.0).collect();
    let semantic_ids: Vec<i64> = semantic.iter().map(|x| x.0).collect();
    let rank_in = |ids: &[i64], id: i64| ids.iter().position(|x| *x == id).map(|p| p + 1);
    let mut stmt = conn.prepare_cached(
        "SELECT f.path, s.name, s.kind, s.container, s.signature, s.doc, s.start_line, s.end_line
           FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.id = ?1",
    )?;
    let mut read = |id: i64| {
        stmt.query_row([id], |r| {
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
                score: 0.0,
                bm25_rank: rank_in(&lexical_ids, id),
                vector_rank: rank_in(&semantic_ids, id),
            })
        })
    };
    let question = query.split_whitespace().nth(1).is_some();
    if fitted && question && !semantic.is_empty() {
        let mut ids = lexical_ids.clone();
        ids.extend(&semantic_ids);
        ids.sort_unstable();
        ids.dedup();
        let rows = ids
            .into_iter()
            .map(&mut read)
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let candidates: Vec<super::rerank::Candidate<'_>> = rows
            .iter()
            .map(|h| super::rerank::Candidate {
                id: h.symbol_id,
                name: &h.name,
                container: h.container.as_deref(),
                path: &h.path,
                lines: h.end_line.saturating_sub(h.start_line) + 1,
            })
            .collect();
        let question = super::rerank::Question::new(query);
        let order = super::rerank::rank(&question, &lexical, &semantic, &candidates);
        let mut by_id: std::collections::HashMap<i64, CodeHit> =
            rows.into_iter().map(|h| (h.symbol_id, h)).collect();
        return Ok(order
            .into_iter()
            .take(limit)
            .filter_map(|(id, score)| by_id.remove(&id).map(|h| CodeHit { score, ..h }))
            .collect());
    }
    let vector_weight = if is_identifier_query(query) {
        weights.vector_identifier
    } else {
        weights.vector
    };
    let fused = crate::fusion::weighted_rrf(
        &[(weights.bm25, &lexical_ids), (vector_weight, &semantic_ids)],
        weights.rrf_k,
    );
    fused
        .into_iter()
        .take(limit)
        .map(|(id, score)| read(id).map(|h| CodeHit { score, ..h }))
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    fn term(t: &str, df: i64, word: usize) -> Term {
        (t.to_string(), df, word, 1.0)
    }

    #[test]
    fn a_long_question_keeps_its_rarest_terms_in_order() {
        let mut rare = vec![term("a", 5, 0), term("b", 900, 1), term("c", 5, 2)];
        let mut common = vec![term("d", 90_000, 3), term("e", 5_000, 4)];
        keep_rarest(&mut rare, &mut common, 3);
        let names = |ts: &[Term]| ts.iter().map(|t| t.0.clone()).collect::<Vec<_>>();
        assert_eq!(names(&rare), ["a", "b", "c"]);
        assert!(common.is_empty());
        // Ties at the cut are kept in query order while there is room.
        let mut rare = vec![term("a", 7, 0), term("b", 7, 1), term("c", 7, 2)];
        let mut common = Vec::new();
        keep_rarest(&mut rare, &mut common, 2);
        assert_eq!(names(&rare), ["a", "b"]);
    }

    #[test]
    fn the_rarest_terms_lead_up_to_a_common_terms_rows() {
        let rare = [term("a", 3, 0), term("b", 1_500, 1), term("c", 1_900, 2)];
        assert_eq!(leading(&rare), 2);
        // One term always leads, however many rows it matches.
        assert_eq!(leading(&[term("a", 1_999, 0), term("b", 1_999, 1)]), 1);
        assert_eq!(leading(&[]), 0);
    }
}
