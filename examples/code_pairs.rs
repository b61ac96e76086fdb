//! Writes the training data of the built-in code-search tables (`scripts/train-code-model`):
//! real crates copied without doc comments and indexed as the code eval does, then one JSON
//! line per symbol with the word pieces of its chunk exactly as the code embedder sees them
//! (`index::vectors::pending`, `BuiltinEmbedder::piece_ids`: the file's path is its last
//! line), its path's pieces alone, and, for a
//! documented function, the pieces of its doc's first sentence: the query it answers.
//!
//!   cargo run --release --example code_pairs -- --out pairs.jsonl CRATE_DIR...
//!
//! Line: {"crate", "id", "chunk": [u32], "path": [u32], "query": [u32] | null}

#[allow(dead_code)]
#[path = "../tests/it/support/code_eval.rs"]
mod code_eval;

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

use mira::embed::BuiltinEmbedder;

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut out, mut dirs) = (None, Vec::new());
    while let Some(a) = args.next() {
        match a.as_str() {
            "--out" => out = args.next().map(PathBuf::from),
            _ => dirs.push(PathBuf::from(a)),
        }
    }
    let Some(out) = out.filter(|_| !dirs.is_empty()) else {
        eprintln!("usage: code_pairs --out FILE CRATE_DIR...");
        std::process::exit(2);
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("corpus");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let pairs = code_eval::prepare(&dirs, &root, usize::MAX);
    let ix = code_eval::index(&root, &tmp.path().join("mira.db"));
    let targets = code_eval::targets(&ix, &pairs);
    let mut query_of: HashMap<i64, &str> = HashMap::new();
    for (t, p) in targets.iter().zip(&pairs) {
        if let Some(t) = t {
            query_of.insert(*t, p.query.as_str());
        }
    }
    let (chunks, paths) = ix
        .store
        .read(|c| {
            let mut all = mira::index::vectors::PendingCursor::new(c, None, ix.project_id)?;
            let chunks =
                mira::index::vectors::pending(c, &mut all, ix.project_id, &ix.root, usize::MAX)?;
            let mut stmt = c.prepare(
                "SELECT s.id, f.path FROM symbols s JOIN files f ON f.id = s.file_id
                  WHERE f.project_id = ?1",
            )?;
            let paths: HashMap<i64, String> = stmt
                .query_map([ix.project_id], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?;
            Ok((chunks, paths))
        })
        .unwrap();
    let e = BuiltinEmbedder::get();
    let mut f = std::io::BufWriter::new(std::fs::File::create(&out).unwrap());
    let mut documented = 0;
    for p in &chunks {
        let path = paths.get(&p.symbol_id).map_or("", String::as_str);
        let krate = path.split('/').next().unwrap_or("");
        let query = query_of.get(&p.symbol_id).map(|q| e.piece_ids(q));
        documented += usize::from(query.is_some());
        let line = serde_json::json!({
            "crate": krate,
            "id": p.symbol_id,
            "chunk": e.piece_ids(&p.text),
            "path": e.piece_ids(path),
            "query": query,
        });
        writeln!(f, "{line}").unwrap();
    }
    eprintln!(
        "{} crates, {} symbols, {documented} with a query → {}",
        dirs.len(),
        chunks.len(),
        out.display()
    );
}
