//! The code-search eval on real crates: question → function, with the doc comments removed
//! from what is indexed.
//!
//!   scripts/code-eval.sh                 # dev crates from the cargo registry, default build
//!   scripts/code-eval.sh --held-out      # tokio, hyper, regex-automata, serde_json
//!   cargo run --release --example code_eval -- [--max-pairs 600] \
//!       [--grid] [--latency-corpus DIR] CRATE_DIR...
//!   cargo run --release --features local-embeddings --example code_eval -- \
//!       --model-dir "$(scripts/fetch-minilm)" CRATE_DIR...
//!
//! Each crate is copied without doc comments and indexed; each documented function's doc
//! (first sentence) is the query for that function. The chunks are embedded by the built-in
//! code model, as `mira index` does. The first table is code search as Mira runs it in the
//! default build (`index::search::search`: BM25 and the code model's vectors, fused):
//! hit@1/5/10 and MRR@10 per crate and in all, and the latency of each query, p50 and p99.
//! `--latency-corpus DIR` indexes and embeds DIR as well (read only; the index is a temporary
//! file) and times the same queries over it. `--grid` prints BM25 alone, the vectors alone and
//! weighted RRF over a grid of weights (the defaults in `index::search::CodeWeights` were
//! chosen from that table); `--model-dir` does the same for all-MiniLM-L6-v2's vectors.
//! `--dump FILE` writes each question's candidates and stops (`scripts/fit-code-rerank`).
//!
//! `CODE_EVAL_MISSES=1` lists each query whose function is not in the first five, with the
//! first three found; `MIRA_EVAL_TOKENIZE='ascii'` rebuilds `code_fts` with another tokenizer
//! before indexing. Chunks and queries arrive stemmed (`index::stem`, migration 11), so the
//! unstemmed "before" row of docs/benchmarks.md can no longer be made this way.

#[allow(dead_code)]
#[path = "../tests/it/support/code_eval.rs"]
mod code_eval;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mira::embed::{CodeEmbedder, Embedder};
use mira::embed::{EmbedderConfig, EmbedderKind};
use mira::index::search::{self, CodeWeights};

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i].as_secs_f64() * 1e3
}

fn print_row(name: &str, s: &code_eval::Score, lat: Option<&mut Vec<Duration>>) {
    let lat = match lat {
        Some(l) => {
            l.sort();
            format!(
                "  p50 {:.2} ms  p99 {:.2} ms",
                percentile(l, 0.50),
                percentile(l, 0.99)
            )
        }
        None => String::new(),
    };
    println!(
        "{name:<36} n {:>4}  hit@1 {:.3}  hit@5 {:.3}  hit@10 {:.3}  MRR@10 {:.3}{lat}",
        s.n, s.hit1, s.hit5, s.hit10, s.mrr10
    );
}

/// Runs every query through `search::search` as the product does; returns the ranked ids
/// and each query's time (query embedding included: the built-in code model's inside the
/// read, or `configured`'s when the index has vectors of its model).
fn run_search(
    ix: &code_eval::Indexed,
    queries: &[String],
    configured: Option<(&Embedder, &tokio::runtime::Runtime)>,
    weights: &CodeWeights,
) -> (Vec<Vec<i64>>, Vec<Duration>) {
    let has_space = configured.is_some_and(|(e, _)| {
        ix.store
            .read(|c| mira::index::vectors::lookup(c, &e.model_id()))
            .unwrap()
            .is_some()
    });
    let mut ranked = Vec::new();
    let mut times = Vec::new();
    for q in queries {
        let started = Instant::now();
        // As the product does (`agent::knowledge::code_search`).
        let v = configured.filter(|_| has_space).map(|(e, rt)| {
            (
                e.model_id(),
                rt.block_on(e.embed(std::slice::from_ref(q))).unwrap(),
            )
        });
        let hits = ix
            .store
            .read(|c| {
                let configured = v.as_ref().map(|(m, v)| (m.as_str(), v[0].as_slice()));
                let space = mira::index::vectors::query_space(c, q, configured)?;
                let qv = space
                    .as_ref()
                    .map(|(space, vector)| search::CodeQueryVector { space, vector });
                search::search(c, ix.project_id, q, 10, qv, weights)
            })
            .unwrap();
        times.push(started.elapsed());
        ranked.push(hits.iter().map(|h| h.symbol_id).collect());
    }
    (ranked, times)
}

/// Embeds every chunk with `embedder`, as the language server and `mira index` do after a crawl.
fn embed_all(ix: &code_eval::Indexed, embedder: &CodeEmbedder, rt: &tokio::runtime::Runtime) {
    let started = Instant::now();
    let n = rt
        .block_on(mira::session::code::embed_code(
            &ix.store, embedder, &ix.root,
        ))
        .unwrap()
        .unwrap_or(0);
    println!(
        "embedded {n} chunks with {} in {:.2} s",
        embedder.model_id(),
        started.elapsed().as_secs_f64()
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut dirs, mut model_dir, mut max_pairs) = (Vec::new(), None, 600usize);
    let (mut grid, mut latency_corpus, mut dump) = (false, None, None);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--model-dir" => model_dir = args.next().map(PathBuf::from),
            "--max-pairs" => max_pairs = args.next().and_then(|v| v.parse().ok()).unwrap_or(600),
            "--grid" => grid = true,
            "--latency-corpus" => latency_corpus = args.next().map(PathBuf::from),
            "--dump" => dump = args.next().map(PathBuf::from),
            _ => dirs.push(PathBuf::from(a)),
        }
    }
    if dirs.is_empty() {
        eprintln!(
            "usage: code_eval [--grid] [--model-dir DIR] [--max-pairs N] \
             [--latency-corpus DIR] CRATE_DIR..."
        );
        std::process::exit(2);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("corpus");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let pairs = code_eval::prepare(&dirs, &root, max_pairs);
    let started = Instant::now();
    let ix = code_eval::index(&root, &tmp.path().join("mira.db"));
    let index_s = started.elapsed().as_secs_f64();
    let targets = code_eval::targets(&ix, &pairs);
    println!(
        "{} crates, {} symbols (indexed in {index_s:.1} s), {} doc → function pairs ({} targets indexed)",
        dirs.len(),
        ix.symbols,
        pairs.len(),
        targets.iter().filter(|t| t.is_some()).count()
    );
    let builtin = CodeEmbedder::builtin();
    embed_all(&ix, &builtin, &rt);
    let queries: Vec<String> = pairs.iter().map(|p| p.query.clone()).collect();
    let weights = CodeWeights::default();
    if let Some(out) = dump {
        dump_candidates(&ix, &pairs, &targets, &out);
        return;
    }

    // ---- code search as the default build runs it ---------------------------------------
    println!(
        "== code search (index::search::search, default build: BM25 + the built-in code model) =="
    );
    let (ranked, mut times) = run_search(&ix, &queries, None, &weights);
    let mut crates: Vec<String> = pairs
        .iter()
        .map(|p| p.path.split('/').next().unwrap_or("").to_string())
        .collect();
    crates.dedup();
    for krate in &crates {
        let keep: Vec<usize> = (0..pairs.len())
            .filter(|&i| pairs[i].path.split('/').next() == Some(krate.as_str()))
            .collect();
        let t: Vec<Option<i64>> = keep.iter().map(|&i| targets[i]).collect();
        let r: Vec<Vec<i64>> = keep.iter().map(|&i| ranked[i].clone()).collect();
        print_row(krate, &code_eval::score(&t, &r), None);
    }
    print_row(
        "all",
        &code_eval::score(&targets, &ranked),
        Some(&mut times),
    );
    if std::env::var_os("CODE_EVAL_MISSES").is_some() {
        let name_of = |id: i64| {
            ix.store
                .read(|c| {
                    c.query_row(
                        "SELECT coalesce(container || '.', '') || name || ' [' || kind || ']' FROM symbols WHERE id = ?1",
                        [id],
                        |r| r.get::<_, String>(0),
                    )
                })
                .unwrap_or_default()
        };
        for (i, p) in pairs.iter().enumerate() {
            let pos = targets[i].and_then(|t| ranked[i].iter().position(|x| *x == t));
            if pos.is_some_and(|p| p < 5) {
                continue;
            }
            let top: Vec<String> = ranked[i].iter().take(3).map(|id| name_of(*id)).collect();
            println!(
                "MISS {:?} -> {} ({}) | rank {:?} | top: {}",
                p.query,
                p.name,
                p.path,
                pos.map(|p| p + 1),
                top.join(", ")
            );
        }
    }
    // The same queries again: the document frequencies of common words are cached now, as
    // in a language server that has answered a few questions.
    let (_, mut warm) = run_search(&ix, &queries, None, &weights);
    warm.sort();
    println!(
        "{:<36} p50 {:.2} ms  p99 {:.2} ms",
        "latency, second pass",
        percentile(&warm, 0.5),
        percentile(&warm, 0.99)
    );

    if let Some(dir) = latency_corpus {
        let started = Instant::now();
        let big = code_eval::index(&dir, &tmp.path().join("latency.db"));
        println!(
            "latency corpus {}: {} symbols, indexed in {:.0} s",
            dir.display(),
            big.symbols,
            started.elapsed().as_secs_f64()
        );
        embed_all(&big, &builtin, &rt);
        for pass in ["first pass", "second pass"] {
            let (_, t) = run_search(&big, &queries, None, &weights);
            print_latency(
                &format!("latency over the corpus, {pass}"),
                t,
                " (query embedding included)",
            );
        }
        stage_latency(&big, &queries);
    }

    if grid {
        println!("== the built-in code model: each list, and the fusion over a grid of weights ==");
        fusion_grid(&ix, &pairs, &targets, &queries, None, &rt);
    }
    let Some(dir) = model_dir else {
        return;
    };
    let cfg = EmbedderConfig {
        provider: EmbedderKind::Local,
        model_dir: Some(dir),
        ..Default::default()
    };
    let embedder = match Embedder::from_config(&cfg, None) {
        Ok(Some(e)) => e,
        Ok(None) => unreachable!(),
        Err(e) => {
            eprintln!(
                "the local embedder is unavailable ({e}); build with --features local-embeddings"
            );
            std::process::exit(2);
        }
    };
    println!("== vectors: {} ==", embedder.model_id());
    embed_all(&ix, &CodeEmbedder::Configured(embedder.clone()), &rt);
    fusion_grid(&ix, &pairs, &targets, &queries, Some(&embedder), &rt);
    let (_, mut t) = run_search(&ix, &queries, Some((&embedder, &rt)), &weights);
    t.sort();
    println!(
        "{:<36} p50 {:.2} ms  p99 {:.2} ms (query embedding included)",
        "latency with vectors",
        percentile(&t, 0.5),
        percentile(&t, 0.99)
    );
}

/// Where a search's time goes: BM25 alone, and the built-in model's vectors alone (the
/// question's embedding, the bits scan and the 8-bit ranking), each p50 / p99 / max.
fn stage_latency(ix: &code_eval::Indexed, queries: &[String]) {
    let (mut bm25, mut vec) = (Vec::new(), Vec::new());
    for q in queries {
        ix.store
            .read(|c| {
                let t = Instant::now();
                search::bm25_scored(c, ix.project_id, q, search::CANDIDATES)?;
                bm25.push(t.elapsed());
                let t = Instant::now();
                if let Some((space, v)) = mira::index::vectors::query_space(c, q, None)? {
                    mira::index::vectors::nearest(
                        c,
                        &space,
                        &v,
                        ix.project_id,
                        search::VECTOR_CANDIDATES,
                    )?;
                }
                vec.push(t.elapsed());
                Ok(())
            })
            .unwrap();
    }
    print_latency("  BM25 alone", bm25, "");
    print_latency("  vectors alone", vec, "");
}

/// One row of latencies: p50, p99 and max.
fn print_latency(label: &str, mut t: Vec<Duration>, note: &str) {
    t.sort();
    println!(
        "{label:<36} p50 {:.2} ms  p99 {:.2} ms  max {:.2} ms{note}",
        percentile(&t, 0.5),
        percentile(&t, 0.99),
        t.last().map_or(0.0, |d| d.as_secs_f64() * 1e3)
    );
}

/// BM25 alone, the vectors of one space alone (`configured`'s, else the built-in model's),
/// and weighted RRF over a grid of weights: how `CodeWeights::default` is chosen.
fn fusion_grid(
    ix: &code_eval::Indexed,
    pairs: &[code_eval::Pair],
    targets: &[Option<i64>],
    queries: &[String],
    configured: Option<&Embedder>,
    rt: &tokio::runtime::Runtime,
) {
    let mut lists = code_eval::bm25_lists(ix, pairs);
    print_row(
        "BM25",
        &code_eval::score(
            targets,
            &lists.iter().map(|l| l.bm25.clone()).collect::<Vec<_>>(),
        ),
        None,
    );
    let vectors: Vec<(String, Vec<f32>)> = match configured {
        Some(e) => rt
            .block_on(e.embed(queries))
            .unwrap()
            .into_iter()
            .map(|v| (e.model_id(), v))
            .collect(),
        None => Vec::new(),
    };
    let started = Instant::now();
    ix.store
        .read(|c| {
            for (i, (l, q)) in lists.iter_mut().zip(queries).enumerate() {
                let configured = vectors.get(i).map(|(m, v)| (m.as_str(), v.as_slice()));
                if let Some((space, v)) = mira::index::vectors::query_space(c, q, configured)? {
                    l.vector = mira::index::vectors::nearest(c, &space, &v, ix.project_id, 60)?
                        .into_iter()
                        .map(|(id, _)| id)
                        .collect();
                }
            }
            Ok(())
        })
        .unwrap();
    println!(
        "vector search alone: {:.2} ms a query (query embedding included)",
        started.elapsed().as_secs_f64() * 1e3 / queries.len().max(1) as f64
    );
    print_row(
        "vectors",
        &code_eval::score(
            targets,
            &lists.iter().map(|l| l.vector.clone()).collect::<Vec<_>>(),
        ),
        None,
    );
    for vector in [0.5, 0.75, 1.0, 1.5, 2.0, 3.0] {
        for k in [10.0, 30.0, 60.0] {
            let w = CodeWeights {
                bm25: 1.0,
                vector,
                vector_identifier: 0.3,
                rrf_k: k,
            };
            print_row(
                &format!("RRF bm25 1 vector {vector} k {k}"),
                &code_eval::score(targets, &code_eval::fuse(&lists, &w)),
                None,
            );
        }
    }
}

/// How long a dumped list is: search's own length unless `var` says otherwise.
fn list_size(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `--dump FILE`: per question, both candidate lists with their scores (as long as search's
/// own, or `DUMP_BM25` / `DUMP_VECTORS`), what each candidate is, and what `search::search`
/// found (`found`), one JSON object a line: what `scripts/fit_code_rerank.py` fits on.
fn dump_candidates(
    ix: &code_eval::Indexed,
    pairs: &[code_eval::Pair],
    targets: &[Option<i64>],
    out: &std::path::Path,
) {
    use std::io::Write;
    let mut w = std::io::BufWriter::new(std::fs::File::create(out).unwrap());
    for (p, t) in pairs.iter().zip(targets) {
        let line = ix
            .store
            .read(|c| {
                let bm25 = search::bm25_scored(c, ix.project_id, &p.query, list_size("DUMP_BM25", search::CANDIDATES))?;
                let vector = match mira::index::vectors::query_space(c, &p.query, None)? {
                    Some((space, v)) => mira::index::vectors::nearest(
                        c,
                        &space,
                        &v,
                        ix.project_id,
                        list_size("DUMP_VECTORS", search::VECTOR_CANDIDATES),
                    )?,
                    None => Vec::new(),
                };
                let found: Vec<i64> = {
                    let space = mira::index::vectors::query_space(c, &p.query, None)?;
                    let qv = space
                        .as_ref()
                        .map(|(space, vector)| search::CodeQueryVector { space, vector });
                    search::search(c, ix.project_id, &p.query, 10, qv, &CodeWeights::default())?
                        .iter()
                        .map(|h| h.symbol_id)
                        .collect()
                };
                let mut ids: Vec<i64> = bm25.iter().map(|x| x.0).collect();
                ids.extend(vector.iter().map(|x| x.0));
                ids.sort();
                ids.dedup();
                let mut stmt = c.prepare_cached(
                    "SELECT s.name, s.kind, s.container, f.path, s.signature, s.start_line, s.end_line
                       FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.id = ?1",
                )?;
                let mut cand = serde_json::Map::new();
                for id in ids {
                    let v = stmt.query_row([id], |r| {
                        Ok(serde_json::json!({
                            "name": r.get::<_, String>(0)?,
                            "kind": r.get::<_, String>(1)?,
                            "container": r.get::<_, Option<String>>(2)?,
                            "path": r.get::<_, String>(3)?,
                            "signature": r.get::<_, String>(4)?,
                            "lines": r.get::<_, i64>(6)? - r.get::<_, i64>(5)? + 1,
                        }))
                    })?;
                    cand.insert(id.to_string(), v);
                }
                Ok(serde_json::json!({
                    "crate": p.path.split('/').next().unwrap_or(""),
                    "query": p.query,
                    "target": t,
                    "bm25": bm25,
                    "vector": vector,
                    "cand": cand,
                    "found": found,
                }))
            })
            .unwrap();
        writeln!(w, "{line}").unwrap();
    }
    println!("dumped {} questions to {}", pairs.len(), out.display());
}
