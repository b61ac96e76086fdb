//! The code-search eval on real crates, by hand (it takes minutes with an embedder):
//!
//!   scripts/code-eval.sh            # picks crates from the cargo registry, runs this
//!   cargo run --release --features local-embeddings --example code_eval -- \
//!       --model-dir "$(scripts/fetch-minilm)" [--max-pairs 600] CRATE_DIR...
//!
//! Each crate is copied without doc comments and indexed; each documented function's doc
//! (first sentence) is the query for that function. Prints hit@5 and MRR@10 for BM25,
//! vectors (all-MiniLM-L6-v2 over the chunks) and weighted RRF over a grid of weights; the
//! defaults in `index::search::CodeWeights` were chosen from this table.

#[allow(dead_code)]
#[path = "../tests/it/support/code_eval.rs"]
mod code_eval;

use std::path::PathBuf;

use mira::embed::Embedder;
use mira::embed::{EmbedderConfig, EmbedderKind};
use mira::index::search::CodeWeights;

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut dirs, mut model_dir, mut max_pairs) = (Vec::new(), None, 600usize);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--model-dir" => model_dir = args.next().map(PathBuf::from),
            "--max-pairs" => max_pairs = args.next().and_then(|v| v.parse().ok()).unwrap_or(600),
            _ => dirs.push(PathBuf::from(a)),
        }
    }
    if dirs.is_empty() {
        eprintln!("usage: code_eval [--model-dir DIR] [--max-pairs N] CRATE_DIR...");
        std::process::exit(2);
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("corpus");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let pairs = code_eval::prepare(&dirs, &root, max_pairs);
    let ix = code_eval::index(&root, &tmp.path().join("mira.db"));
    let targets = code_eval::targets(&ix, &pairs);
    println!(
        "{} crates, {} symbols, {} doc → function pairs ({} targets indexed)",
        dirs.len(),
        ix.symbols,
        pairs.len(),
        targets.iter().filter(|t| t.is_some()).count()
    );
    let mut lists = code_eval::bm25_lists(&ix, &pairs);
    let row = |name: &str, ranked: &[Vec<i64>]| {
        let s = code_eval::score(&targets, ranked);
        println!("{name:<44} hit@5 {:.3}  MRR@10 {:.3}", s.hit5, s.mrr10);
        s
    };
    row(
        "BM25",
        &lists.iter().map(|l| l.bm25.clone()).collect::<Vec<_>>(),
    );

    // the built-in embedder unless a MiniLM directory is given
    let cfg = match model_dir {
        Some(dir) => EmbedderConfig {
            provider: EmbedderKind::Local,
            model_dir: Some(dir),
            ..Default::default()
        },
        None => EmbedderConfig::default(),
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
    println!("embedder: {}", embedder.model_id());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let started = std::time::Instant::now();
    let n = rt
        .block_on(mira::index::vectors::embed_pending(
            &ix.store,
            &embedder,
            ix.project_id,
            &ix.root,
            64,
        ))
        .unwrap();
    println!(
        "embedded {n} chunks in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let queries: Vec<String> = pairs.iter().map(|p| p.query.clone()).collect();
    let vectors = rt.block_on(embedder.embed(&queries)).unwrap();
    let space = ix
        .store
        .read(|c| mira::index::vectors::lookup(c, &embedder.model_id()))
        .unwrap()
        .unwrap();
    ix.store
        .read(|c| {
            for (l, v) in lists.iter_mut().zip(&vectors) {
                l.vector = mira::index::vectors::nearest(c, &space, v, ix.project_id, 60)?;
            }
            Ok(())
        })
        .unwrap();
    row(
        "vectors",
        &lists.iter().map(|l| l.vector.clone()).collect::<Vec<_>>(),
    );
    let mut best = (0.0, CodeWeights::default());
    for bm25 in [1.0] {
        for vector in [0.5, 1.0, 1.5, 2.0, 3.0] {
            for k in [10.0, 30.0, 60.0] {
                let w = CodeWeights {
                    bm25,
                    vector,
                    vector_identifier: 0.3,
                    rrf_k: k,
                };
                let s = row(
                    &format!("RRF bm25 {bm25} vector {vector} k {k}"),
                    &code_eval::fuse(&lists, &w),
                );
                if s.hit5 + s.mrr10 > best.0 {
                    best = (s.hit5 + s.mrr10, w);
                }
            }
        }
    }
    println!("best: {:?}", best.1);
    row(
        "default CodeWeights",
        &code_eval::fuse(&lists, &CodeWeights::default()),
    );
}
