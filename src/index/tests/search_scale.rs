//! Code search on an index where the query's words are common (each in more chunks than
//! code search scores in full): the results still carry every word, the rows a rare word
//! finds are the answer.

use crate::index::db::{self, FileMeta};
use crate::index::search;
use crate::index::{FileSymbols, Point, Span, Symbol, SymbolKind};
use crate::store::{Store, projects};

fn span(row: u32) -> Span {
    Span {
        start_byte: 0,
        end_byte: 0,
        start: Point { row, col: 0 },
        end: Point {
            row: row + 2,
            col: 1,
        },
    }
}

fn function(name: &str, row: u32) -> Symbol {
    Symbol {
        name: name.to_string(),
        kind: SymbolKind::Function,
        container: None,
        parent: None,
        range: span(row),
        selection: span(row),
        signature: format!("fn {name}()"),
        doc: None,
        declaration: false,
    }
}

/// 100 files × 100 functions; every name carries `ledger` and `posting`, a few `reconcile`.
fn fill(store: &Store, project: i64) {
    let mut conn = store.connect().unwrap();
    let tx = conn.transaction().unwrap();
    for f in 0..100 {
        let mut syms = FileSymbols::default();
        let mut heads = Vec::new();
        for i in 0..100u32 {
            let name = match (f, i) {
                (7, 3) => "reconcile_ledger_posting".to_string(),
                (9, 5) => "reconcile_totals".to_string(),
                _ => format!("ledger_posting_{f}_{i}"),
            };
            heads.push(format!("fn {name}() {{\n    audit();\n}}\n"));
            syms.symbols.push(function(&name, i * 4));
        }
        let meta = FileMeta {
            size: 1,
            mtime_ns: 1,
            hash: [0; 32],
            lines: 400,
            ascii: true,
        };
        db::replace_file(
            &tx,
            project,
            &format!("src/f{f}.rs"),
            "rust",
            &meta,
            &syms,
            &heads,
        )
        .unwrap();
    }
    tx.commit().unwrap();
}

#[test]
fn common_words_are_searched_within_bounds_and_rare_words_lead() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("mira.db")).unwrap();
    let root = dir.path().join("p");
    std::fs::create_dir_all(&root).unwrap();
    let pid = store.write(|tx| projects::ensure(tx, &root, "p")).unwrap();
    fill(&store, pid);
    let conn = store.connect().unwrap();

    // Only common words (10,000 chunks each, more than code search scores in full): still answered, every hit has both.
    let hits = search::search(&conn, pid, "ledger posting", 8, None, &Default::default()).unwrap();
    assert_eq!(hits.len(), 8, "{hits:?}");
    assert!(
        hits.iter().all(|h| h.name.contains("ledger_posting")),
        "{hits:?}"
    );

    // A rare word leads: the rows it found, not the 10,000 with only the common words.
    let hits = search::search(
        &conn,
        pid,
        "reconcile the ledger posting",
        8,
        None,
        &Default::default(),
    )
    .unwrap();
    let mut names: Vec<&str> = hits.iter().map(|h| h.name.as_str()).collect();
    names.sort();
    assert_eq!(
        names,
        ["reconcile_ledger_posting", "reconcile_totals"],
        "only the rows the rare word found: {names:?}"
    );
}
