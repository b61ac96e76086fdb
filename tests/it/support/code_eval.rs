//! The code-search eval: doc comment → function pairs from real Rust crates. The crates are
//! copied with every doc comment removed, indexed as a project, and each doc comment's first
//! sentence is asked as a query; a hit is the function it documented (same file and name).
//! Prints hit@5 and MRR@10 per retriever: BM25, vectors (with an embedder), weighted RRF.
//! Used by `examples/code_eval.rs` (by hand, on crates from the cargo registry) and by
//! `tests/it/code_search_eval.rs` (CI, on this repository's own sources).

use std::path::{Path, PathBuf};

use mira::index::crawl::CrawlOptions;
use mira::index::search;
use mira::index::{Lang, SymbolKind};
use mira::project::Project;
use mira::store::{Store, projects};

/// One query and the function it should find.
#[derive(Clone, Debug)]
pub struct Pair {
    pub query: String,
    pub path: String,
    pub name: String,
}

/// Copies the `.rs` files under `src_dirs` into `dest/<crate>/…` without doc comments and
/// returns the pairs: documented functions and methods whose doc's first sentence has at
/// least four words; names that repeat inside a file are left out (ambiguous targets).
pub fn prepare(src_dirs: &[PathBuf], dest: &Path, max_pairs: usize) -> Vec<Pair> {
    let mut pairs = Vec::new();
    for dir in src_dirs {
        // `…/tokio-1.54.1/src` is copied to `tokio-1.54.1/…`: naming every copy `src` put
        // each crate's `lib.rs` over the last one's.
        let named = match dir.file_name() {
            Some(n) if n == "src" => dir.parent().and_then(Path::file_name),
            n => n,
        };
        let krate = named.unwrap().to_string_lossy().into_owned();
        for entry in walk(dir) {
            let rel = entry.strip_prefix(dir).unwrap();
            let Ok(bytes) = std::fs::read(&entry) else {
                continue;
            };
            let Some(lang) = Lang::for_path(&entry) else {
                continue;
            };
            let target_rel = format!("{krate}/{}", rel.display());
            let stripped = strip_docs(&String::from_utf8_lossy(&bytes));
            let out = dest.join(&target_rel);
            std::fs::create_dir_all(out.parent().unwrap()).unwrap();
            std::fs::write(&out, stripped).unwrap();
            let Some(syms) = mira::index::parse::parse_and_extract(lang, &bytes) else {
                continue;
            };
            let mut seen = std::collections::HashMap::<&str, usize>::new();
            for s in &syms.symbols {
                *seen.entry(s.name.as_str()).or_default() += 1;
            }
            for s in &syms.symbols {
                if !matches!(s.kind, SymbolKind::Function | SymbolKind::Method)
                    || seen[s.name.as_str()] > 1
                {
                    continue;
                }
                let Some(doc) = s.doc.as_deref() else {
                    continue;
                };
                let query = first_sentence(doc);
                if query.split_whitespace().count() < 4 {
                    continue;
                }
                pairs.push(Pair {
                    query,
                    path: target_rel.clone(),
                    name: s.name.clone(),
                });
            }
        }
    }
    // A deterministic sample spread over all crates.
    if pairs.len() > max_pairs {
        let step = pairs.len() as f64 / max_pairs as f64;
        pairs = (0..max_pairs)
            .map(|i| pairs[(i as f64 * step) as usize].clone())
            .collect();
    }
    pairs
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            let name = p.file_name().unwrap().to_string_lossy();
            if p.is_dir() {
                if !matches!(
                    name.as_ref(),
                    "target" | "tests" | "benches" | "examples" | ".git"
                ) {
                    stack.push(p);
                }
            } else if name.ends_with(".rs") {
                out.push(p);
            }
        }
    }
    out
}

/// Removes `///`, `//!` and `/** */` doc comments and `#[doc = …]` lines.
pub fn strip_docs(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_block = false;
    for line in text.lines() {
        let t = line.trim_start();
        if in_block {
            if t.contains("*/") {
                in_block = false;
            }
            out.push('\n');
            continue;
        }
        if t.starts_with("/**") || t.starts_with("/*!") {
            in_block = !t.contains("*/");
            out.push('\n');
            continue;
        }
        if t.starts_with("///")
            || t.starts_with("//!")
            || t.starts_with("#[doc")
            || t.starts_with("#![doc")
        {
            out.push('\n');
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn first_sentence(doc: &str) -> String {
    let flat = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    let end = flat.find(". ").map_or(flat.len(), |i| i + 1);
    flat[..end].trim_end_matches('.').replace('`', "")
}

/// The prepared copy, indexed as a project of a fresh store.
pub struct Indexed {
    pub store: Store,
    pub project_id: i64,
    #[allow(dead_code)] // read by examples/code_eval.rs
    pub root: PathBuf,
    pub symbols: u64,
}

pub fn index(root: &Path, db: &Path) -> Indexed {
    let store = Store::open(db).unwrap();
    if let Ok(tok) = std::env::var("MIRA_EVAL_TOKENIZE") {
        let c = rusqlite::Connection::open(db).unwrap();
        c.execute_batch(&format!(
            "DROP TABLE code_fts; CREATE VIRTUAL TABLE code_fts USING fts5(name, signature, doc, body, content = '', contentless_delete = 1, tokenize = '{tok}');"
        ))
        .unwrap();
    }
    let project = mira::project::detect(root);
    let project = Project {
        root: root.to_path_buf(),
        ..project
    };
    let stats =
        mira::index::offline::index_project(&store, &project, &CrawlOptions::default(), &|_| {})
            .unwrap();
    let project_id = store.read(|c| projects::find(c, root)).unwrap().unwrap();
    Indexed {
        store,
        project_id,
        root: root.to_path_buf(),
        symbols: stats.symbols,
    }
}

/// Ranked candidate ids of one query, per retriever.
pub struct Lists {
    pub bm25: Vec<i64>,
    #[allow(dead_code)] // read by examples/code_eval.rs
    pub vector: Vec<i64>,
    #[allow(dead_code)] // read by examples/code_eval.rs
    pub identifier: bool,
}

/// hit@1/5/10 and MRR@10 of a ranking over all pairs.
#[derive(Clone, Copy, Debug)]
pub struct Score {
    #[allow(dead_code)] // read by examples/code_eval.rs
    pub hit1: f64,
    pub hit5: f64,
    #[allow(dead_code)] // read by examples/code_eval.rs
    pub hit10: f64,
    pub mrr10: f64,
    /// Pairs whose target is indexed.
    #[allow(dead_code)] // read by examples/code_eval.rs
    pub n: usize,
}

/// The id of each pair's target (`None` when the index does not have it).
pub fn targets(ix: &Indexed, pairs: &[Pair]) -> Vec<Option<i64>> {
    ix.store
        .read(|c| {
            let mut stmt = c.prepare(
                "SELECT s.id FROM symbols s JOIN files f ON f.id = s.file_id
                  WHERE f.project_id = ?1 AND f.path = ?2 AND s.name = ?3 LIMIT 1",
            )?;
            pairs
                .iter()
                .map(|p| {
                    use rusqlite::OptionalExtension;
                    stmt.query_row(rusqlite::params![ix.project_id, p.path, p.name], |r| {
                        r.get(0)
                    })
                    .optional()
                })
                .collect()
        })
        .unwrap()
}

pub fn bm25_lists(ix: &Indexed, pairs: &[Pair]) -> Vec<Lists> {
    ix.store
        .read(|c| {
            pairs
                .iter()
                .map(|p| {
                    Ok(Lists {
                        bm25: search::bm25_scored(c, ix.project_id, &p.query, search::CANDIDATES)?
                            .into_iter()
                            .map(|(id, _)| id)
                            .collect(),
                        vector: Vec::new(),
                        identifier: mira::text::is_identifier_query(&p.query),
                    })
                })
                .collect()
        })
        .unwrap()
}

pub fn score(targets: &[Option<i64>], ranked: &[Vec<i64>]) -> Score {
    let (mut hit1, mut hit5, mut hit10, mut mrr) = (0.0, 0.0, 0.0, 0.0);
    for (t, r) in targets.iter().zip(ranked) {
        let Some(t) = t else { continue };
        if let Some(pos) = r.iter().position(|x| x == t) {
            hit1 += f64::from(pos < 1);
            hit5 += f64::from(pos < 5);
            hit10 += f64::from(pos < 10);
            if pos < 10 {
                mrr += 1.0 / (pos + 1) as f64;
            }
        }
    }
    let n = targets.iter().filter(|t| t.is_some()).count();
    let d = n.max(1) as f64;
    Score {
        hit1: hit1 / d,
        hit5: hit5 / d,
        hit10: hit10 / d,
        mrr10: mrr / d,
        n,
    }
}

#[allow(dead_code)] // called by examples/code_eval.rs
pub fn fuse(lists: &[Lists], w: &search::CodeWeights) -> Vec<Vec<i64>> {
    lists
        .iter()
        .map(|l| {
            let vw = if l.identifier {
                w.vector_identifier
            } else {
                w.vector
            };
            mira::fusion::weighted_rrf(&[(w.bm25, &l.bm25), (vw, &l.vector)], w.rrf_k)
                .into_iter()
                .map(|(id, _)| id)
                .collect()
        })
        .collect()
}
