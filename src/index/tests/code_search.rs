//! Code search as a question asks it (issue 21): words meet their other forms (stemming), a
//! question ranks code above the fields, impl blocks and tests that repeat its words, and a
//! database from before the stemmed table gets its chunks again on the next crawl.

use crate::index::crawl::CrawlOptions;
use crate::index::db::{self, FileMeta};
use crate::index::search::{self, CodeHit};
use crate::index::{FileSymbols, Point, Span, Symbol, SymbolKind};
use crate::project::Project;
use crate::store::{Store, projects};
use std::path::Path;

const LIB: &str = "pub struct Parser {
    depth: usize,
}

impl Parser {
    pub fn parse_headers(&self, input: &str) -> Vec<String> {
        input.lines().map(str::to_string).collect()
    }
}

pub fn connect_socket(addr: &str) -> bool {
    addr.is_empty()
}
";

fn index(store: &Store, root: &Path) -> i64 {
    let project = Project {
        root: root.to_path_buf(),
        ..crate::project::detect(root)
    };
    crate::index::offline::index_project(store, &project, &CrawlOptions::default(), &|_| {})
        .unwrap();
    store.read(|c| projects::find(c, root)).unwrap().unwrap()
}

fn ask(store: &Store, pid: i64, query: &str) -> Vec<CodeHit> {
    store
        .read(|c| search::search(c, pid, query, 5, None, &Default::default()))
        .unwrap()
}

fn project_with_lib(dir: &Path) -> std::path::PathBuf {
    let root = dir.join("p");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/lib.rs"), LIB).unwrap();
    root
}

/// "parsing" and "header" are in no chunk as written (`parse_headers`): only their stems
/// meet.
#[test]
fn a_question_finds_a_function_by_other_forms_of_its_words() {
    let dir = tempfile::tempdir().unwrap();
    let root = project_with_lib(dir.path());
    let store = Store::open(&dir.path().join("mira.db")).unwrap();
    let pid = index(&store, &root);
    let hits = ask(&store, pid, "parsing header");
    assert_eq!(
        hits.first().map(|h| h.name.as_str()),
        Some("parse_headers"),
        "{hits:?}"
    );
}

/// Code abbreviates what a question spells out: "configuration" meets `cfg`, and an
/// abbreviation in the question meets the word spelled out. The word the question used still
/// counts for more than its other spellings.
#[test]
fn a_question_meets_the_abbreviations_code_uses() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(
        root.join("server.rs"),
        "pub fn server_cfg() -> u32 { 1 }\n\
         pub fn server_port() -> u32 { 2 }\n\
         pub fn connection_pool() -> u32 { 3 }\n\
         pub fn conn_limit() -> u32 { 4 }\n",
    )
    .unwrap();
    let store = Store::open(&dir.path().join("mira.db")).unwrap();
    let pid = index(&store, &root);
    let first = |q: &str| ask(&store, pid, q).first().map(|h| h.name.clone());
    assert_eq!(
        first("configuration of the server").as_deref(),
        Some("server_cfg")
    );
    assert_eq!(
        first("the pool of each conn").as_deref(),
        Some("connection_pool")
    );
    assert_eq!(first("connection limit").as_deref(), Some("conn_limit"));
    let conn = ask(&store, pid, "connection");
    assert_eq!(
        conn.iter().map(|h| h.name.as_str()).collect::<Vec<_>>(),
        ["connection_pool", "conn_limit"],
        "the word as asked ranks above its abbreviation"
    );
}

/// A database of schema 8 (code_fts without stemming) is migrated: the table is rebuilt
/// empty for chunks stemmed by Mira (migration 11: no `porter` of its own, 10's settings
/// kept), every file waits for its chunks, and the next crawl writes them without a change
/// to any file.
#[test]
fn an_older_index_gets_stemmed_chunks_on_the_next_crawl() {
    let dir = tempfile::tempdir().unwrap();
    let root = project_with_lib(dir.path());
    let db_path = dir.path().join("mira.db");
    {
        let store = Store::open(&db_path).unwrap();
        index(&store, &root);
    }
    // Back to schema 8: 05's table, unstemmed.
    let conn = rusqlite::Connection::open(&db_path).unwrap();
    conn.execute_batch(
        "DROP TABLE code_fts;
         CREATE VIRTUAL TABLE code_fts USING fts5(name, signature, doc, body, content = '',
           contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2');
         PRAGMA user_version = 8;",
    )
    .unwrap();
    drop(conn);

    let store = Store::open(&db_path).unwrap();
    let (sql, waiting, hashsize): (String, i64, i64) = store
        .read(|c| {
            Ok((
                c.query_row(
                    "SELECT sql FROM sqlite_master WHERE name = 'code_fts'",
                    [],
                    |r| r.get(0),
                )?,
                c.query_row(
                    "SELECT count(*) FROM files WHERE chunks_done = 0",
                    [],
                    |r| r.get(0),
                )?,
                c.query_row(
                    "SELECT v FROM code_fts_config WHERE k = 'hashsize'",
                    [],
                    |r| r.get(0),
                )?,
            ))
        })
        .unwrap();
    assert!(!sql.contains("porter"), "chunks arrive stemmed: {sql}");
    assert_eq!(hashsize, 4 << 20, "10's setting survives the rebuild");
    assert_eq!(waiting, 1, "the file waits for its chunks");
    let pid = store.read(|c| projects::find(c, &root)).unwrap().unwrap();
    assert!(ask(&store, pid, "parsing header").is_empty());

    index(&store, &root);
    let hits = ask(&store, pid, "parsing header");
    assert_eq!(
        hits.first().map(|h| h.name.as_str()),
        Some("parse_headers"),
        "{hits:?}"
    );
}

fn symbol(name: &str, kind: SymbolKind, container: Option<&str>, row: u32) -> Symbol {
    let span = Span {
        start_byte: 0,
        end_byte: 0,
        start: Point { row, col: 0 },
        end: Point {
            row: row + 2,
            col: 1,
        },
    };
    Symbol {
        name: name.to_string(),
        kind,
        container: container.map(str::to_string),
        parent: None,
        range: span,
        selection: span,
        signature: match kind {
            SymbolKind::Field => format!("{name}: Duration"),
            _ => format!("fn {name}(&self) -> Duration"),
        },
        doc: None,
        declaration: false,
    }
}

/// A field named like the question, and a test that repeats its words, score higher by
/// BM25 than the function that computes it (their chunks are short); a question gets the
/// function first, and an identifier still gets the field it names.
#[test]
fn a_question_ranks_code_above_fields_and_tests() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("mira.db")).unwrap();
    let root = dir.path().join("p");
    std::fs::create_dir_all(&root).unwrap();
    let pid = store.write(|tx| projects::ensure(tx, &root, "p")).unwrap();
    let syms = FileSymbols {
        symbols: vec![
            symbol("retry_backoff", SymbolKind::Field, Some("Client"), 1),
            symbol("next_retry_backoff", SymbolKind::Method, Some("Client"), 5),
            symbol(
                "retry_backoff_doubles",
                SymbolKind::Function,
                Some("tests"),
                20,
            ),
        ],
        refs: Vec::new(),
    };
    let heads = [
        "retry_backoff: Duration,\n".to_string(),
        "fn next_retry_backoff(&self) -> Duration {\n    let base = self.retry_backoff;\n    \
         let jitter = self.jitter_for(self.attempts);\n    base * 2 + jitter\n}\n"
            .to_string(),
        "fn retry_backoff_doubles() {\n    assert_eq!(client().retry_backoff, 2);\n}\n".to_string(),
    ];
    let meta = FileMeta {
        size: 1,
        mtime_ns: 1,
        hash: [0; 32],
        lines: 30,
        ascii: true,
    };
    store
        .write(|tx| db::replace_file(tx, pid, "src/client.rs", "rust", &meta, &syms, &heads))
        .unwrap();
    let names =
        |q: &str| -> Vec<String> { ask(&store, pid, q).into_iter().map(|h| h.name).collect() };
    assert_eq!(
        names("the retry backoff"),
        [
            "next_retry_backoff",
            "retry_backoff",
            "retry_backoff_doubles"
        ]
    );
    assert_eq!(names("retry_backoff")[0], "retry_backoff");
}
