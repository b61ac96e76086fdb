//! The code-search eval on a corpus that ships with the repository: Mira's own sources,
//! doc comments stripped from what is indexed, each doc comment's first sentence as the
//! query. Prints hit@5 and MRR@10 for BM25 (CI has no embedder for code; the weights of the
//! fusion were chosen with `examples/code_eval.rs` on crates from the cargo registry).

use crate::support::code_eval;

#[test]
fn doc_comments_find_their_functions_in_miras_own_sources() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("corpus");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let pairs = code_eval::prepare(&[src], &root, 300);
    assert!(pairs.len() >= 100, "only {} pairs", pairs.len());
    let ix = code_eval::index(&root, &dir.path().join("mira.db"));
    let targets = code_eval::targets(&ix, &pairs);
    let found = targets.iter().filter(|t| t.is_some()).count();
    assert!(
        found * 10 >= pairs.len() * 9,
        "{found} of {} targets indexed",
        pairs.len()
    );
    let lists = code_eval::bm25_lists(&ix, &pairs);
    let ranked: Vec<Vec<i64>> = lists.iter().map(|l| l.bm25.clone()).collect();
    let s = code_eval::score(&targets, &ranked);
    println!(
        "{} pairs over {} symbols: BM25 hit@5 {:.3}, MRR@10 {:.3}",
        pairs.len(),
        ix.symbols,
        s.hit5,
        s.mrr10
    );
    // No doc comment is indexed: what finds the function is its name, signature and code.
    let leaked = ix
        .store
        .read(|c| {
            c.query_row(
                "SELECT count(*) FROM symbols WHERE doc IS NOT NULL",
                [],
                |r| r.get::<_, i64>(0),
            )
        })
        .unwrap();
    assert_eq!(leaked, 0, "doc comments were stripped before indexing");
    assert!(s.hit5 >= 0.3, "BM25 hit@5 {:.3}", s.hit5);
}
