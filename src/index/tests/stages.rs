//! The cold index in stages (symbols first, code-search chunks after) stores exactly what a
//! one-shot index of each file does — symbols, references and search chunks —, also when
//! the crawl is interrupted between or during its stages and a later crawl resumes it
//! (issue 22). The one-shot index is the watcher's `reindex_path`, which writes a file's
//! symbols and chunks in one transaction.

use crate::index::crawl::{CrawlOptions, CrawlProgress, CrawlStage, crawl, reindex_path};
use crate::store::{Store, projects};
use proptest::prelude::*;
use std::path::Path;

/// One generated source file: its language and, per function, the functions it calls.
#[derive(Clone, Debug)]
struct File {
    lang: usize,
    fns: Vec<(u8, Vec<u8>)>,
    imports: Vec<(u8, u8)>,
}

fn file() -> impl Strategy<Value = File> {
    (
        0..3usize,
        proptest::collection::vec((0..12u8, proptest::collection::vec(0..12u8, 0..4)), 0..6),
        proptest::collection::vec((0..6u8, 0..12u8), 0..3),
    )
        .prop_map(|(lang, fns, imports)| File { lang, fns, imports })
}

fn source(f: &File) -> (&'static str, String) {
    let mut s = String::new();
    let ext = ["rs", "py", "ts"][f.lang];
    for (m, n) in &f.imports {
        s.push_str(&match f.lang {
            0 => format!("use {}::m{m}::f{n};\n", "crate"), // split: tidy reads `crate::` as an import
            1 => format!("from m{m} import f{n}\n"),
            _ => format!("import {{ f{n} }} from \"./m{m}\";\n"),
        });
    }
    for (name, calls) in &f.fns {
        let body: String = calls.iter().map(|c| format!("f{c}(); ")).collect();
        s.push_str(&match f.lang {
            0 => format!("/// Staged helper {name}.\npub fn f{name}(x: u32) -> u32 {{ {body}x }}\n"),
            1 => format!(
                "def f{name}(x):\n    \"\"\"Staged helper {name}.\"\"\"\n    {}\n    return x\n",
                body.replace("; ", "\n    ").trim_end()
            ),
            _ => format!("/** Staged helper {name}. */\nexport function f{name}(x: number) {{ {body}return x; }}\n"),
        });
    }
    (ext, s)
}

/// Where a staged crawl is cut short (a kill -9 leaves the same: whole committed files).
#[derive(Clone, Copy, Debug)]
enum Cut {
    None,
    /// Every symbol stored, no chunk written yet.
    BetweenStages,
    /// After the first committed batch of symbols.
    DuringSymbols,
}

/// A file row: path, content hash, lines, references, chunks done.
type FileRow = (String, Vec<u8>, i64, Option<String>, i64);

/// Everything the index stores about the project, keyed so that row ids do not matter.
#[derive(Debug, PartialEq)]
struct Stored {
    files: Vec<FileRow>,
    symbols: Vec<String>,
    chunks: Vec<(String, i64, String, String, i64)>,
}

fn stored(conn: &rusqlite::Connection) -> Stored {
    let files = conn
        .prepare("SELECT path, hash, lines, refs, chunks_done FROM files ORDER BY path")
        .unwrap()
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let symbols = conn
        .prepare(
            "SELECT f.path || '|' || s.ordinal || '|' || coalesce(s.parent, '') || '|' || s.name
                    || '|' || s.kind || '|' || coalesce(s.container, '') || '|' || s.start_byte
                    || '|' || s.end_byte || '|' || s.sel_start_line || '|' || s.sel_start_col
                    || '|' || s.signature || '|' || coalesce(s.doc, '') || '|' || s.declaration
             FROM symbols s JOIN files f ON f.id = s.file_id ORDER BY 1",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    // The chunks' tokens as FTS5 indexed them (the table is contentless: no text to read).
    conn.execute_batch(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.code_vocab USING fts5vocab(main, 'code_fts', 'instance')",
    )
    .unwrap();
    let chunks = conn
        .prepare(
            "SELECT f.path, s.ordinal, v.term, v.col, v.offset
             FROM temp.code_vocab v JOIN symbols s ON s.id = v.doc JOIN files f ON f.id = s.file_id
             ORDER BY 1, 2, 4, 5, 3",
        )
        .unwrap()
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    Stored {
        files,
        symbols,
        chunks,
    }
}

fn open(dir: &Path, root: &Path) -> (rusqlite::Connection, i64) {
    let store = Store::open(&dir.join("mira.db")).unwrap();
    let project = store
        .write(|tx| projects::ensure(tx, root, "staged"))
        .unwrap();
    (store.connect().unwrap(), project)
}

/// A staged crawl, cut where `cut` says (by a panic in its progress callback, which unwinds
/// out of the crawl like a kill: committed batches stay, nothing else), then resumed.
fn staged(root: &Path, cut: Cut) -> Stored {
    let dir = tempfile::tempdir().unwrap();
    let opts = CrawlOptions::default();
    let (mut conn, project) = open(dir.path(), root);
    let stop = move |p: CrawlProgress| {
        let hit = match cut {
            Cut::None => false,
            Cut::BetweenStages => p.stage == CrawlStage::Search,
            // After the writer's first commit, before the code-search stage.
            Cut::DuringSymbols => {
                matches!(p.stage, CrawlStage::Symbols | CrawlStage::References) && p.done > 0
            }
        };
        if hit {
            std::panic::panic_any("cut");
        }
    };
    let first = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        crawl(&mut conn, project, root, &opts, &stop, &|_| {}).unwrap()
    }));
    if first.is_err() {
        let pending: i64 = conn
            .query_row(
                "SELECT count(*) FROM files WHERE chunks_done = 0",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let symbols: i64 = conn
            .query_row("SELECT count(*) FROM symbols", [], |r| r.get(0))
            .unwrap();
        if matches!(cut, Cut::BetweenStages) && symbols > 0 {
            assert!(
                pending > 0,
                "the cut came before the chunks: files wait for them"
            );
        }
        // A new process: nothing of the first crawl's memory survives.
        drop(conn);
        let (c, _) = open(dir.path(), root);
        conn = c;
        let stats = crawl(&mut conn, project, root, &opts, &|_| {}, &|_| {}).unwrap();
        assert_eq!(
            stats.chunked as i64, pending,
            "the resumed crawl chunks what waited"
        );
    }
    stored(&conn)
}

/// Each file through the watcher's one-shot path.
fn one_shot(root: &Path, paths: &[String]) -> Stored {
    let dir = tempfile::tempdir().unwrap();
    let (mut conn, project) = open(dir.path(), root);
    let opts = CrawlOptions::default();
    for p in paths {
        reindex_path(&mut conn, project, root, &root.join(p), &opts).unwrap();
    }
    stored(&conn)
}

fn check(files: &[File], cut: Cut) {
    let project = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(project.path()).unwrap();
    let mut paths = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let (ext, text) = source(f);
        let rel = format!("m{}/f{i}.{ext}", i % 3);
        std::fs::create_dir_all(root.join(format!("m{}", i % 3))).unwrap();
        std::fs::write(root.join(&rel), text).unwrap();
        paths.push(rel);
    }
    let staged = staged(&root, cut);
    let once = one_shot(&root, &paths);
    assert_eq!(staged.files, once.files, "file rows and references");
    assert_eq!(staged.symbols, once.symbols, "symbols");
    assert_eq!(staged.chunks, once.chunks, "search chunks");
    assert!(
        staged.files.iter().all(|f| f.4 == 1),
        "every file has its chunks"
    );
}

fn cut() -> impl Strategy<Value = Cut> {
    prop_oneof![
        Just(Cut::None),
        Just(Cut::BetweenStages),
        Just(Cut::DuringSymbols)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn a_staged_index_equals_a_one_shot_index_even_when_cut_short(
        files in proptest::collection::vec(file(), 1..10),
        cut in cut(),
    ) {
        check(&files, cut);
    }
}

#[test]
fn a_crawl_cut_between_its_stages_is_completed_by_the_next() {
    let files: Vec<File> = (0..6u8)
        .map(|i| File {
            lang: i as usize % 3,
            fns: vec![(i, vec![i + 1]), (i + 1, vec![])],
            imports: vec![(i % 2, i)],
        })
        .collect();
    check(&files, Cut::BetweenStages);
    check(&files, Cut::DuringSymbols);
    check(&files, Cut::None);
}

/// References live in one text value per file now; "who calls this" still finds every
/// caller by exact name (not a name that merely contains it), by path and line, up to the
/// limit.
#[test]
fn callers_are_found_in_the_per_file_reference_text() {
    let project = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(project.path()).unwrap();
    std::fs::write(
        root.join("a.rs"),
        "fn helper() {}\nfn one() {\n    helper();\n    helper();\n}\nfn two() { helper_more(); }\n",
    )
    .unwrap();
    std::fs::write(root.join("b.py"), "def three():\n    helper()\n").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (mut conn, project_id) = open(dir.path(), &root);
    crawl(
        &mut conn,
        project_id,
        &root,
        &CrawlOptions::default(),
        &|_| {},
        &|_| {},
    )
    .unwrap();
    let callers = crate::index::db::callers_of(&conn, project_id, "helper", 10).unwrap();
    assert_eq!(
        callers,
        vec![
            ("a.rs".to_string(), Some("one".to_string()), 2),
            ("b.py".to_string(), Some("three".to_string()), 1),
        ],
        "one row per caller and callee, exact names only"
    );
    let first = crate::index::db::callers_of(&conn, project_id, "helper", 1).unwrap();
    assert_eq!(first.len(), 1);
    assert!(
        crate::index::db::callers_of(&conn, project_id, "help", 10)
            .unwrap()
            .is_empty()
    );
}
