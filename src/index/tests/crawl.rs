//! Cold index, restart and bad input, on real files and a real SQLite store.

use crate::index::crawl::{CrawlOptions, CrawlStats, FileUpdate, SkipReason, crawl, reindex_path};
use crate::index::db;
use crate::store::{Store, projects};
use std::path::Path;
use std::sync::Mutex;

struct Fixture {
    _home: tempfile::TempDir,
    root: tempfile::TempDir,
    store: Store,
    project: i64,
}

fn fixture() -> Fixture {
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let store = Store::open(&home.path().join("mira.db")).unwrap();
    let project = store
        .write(|tx| projects::ensure(tx, root.path(), "fixture"))
        .unwrap();
    Fixture {
        _home: home,
        root,
        store,
        project,
    }
}

impl Fixture {
    fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let p = self.root.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }

    fn crawl(&self, opts: &CrawlOptions) -> (CrawlStats, Vec<FileUpdate>) {
        let mut conn = self.store.connect().unwrap();
        let updates = Mutex::new(Vec::new());
        let stats = crawl(
            &mut conn,
            self.project,
            self.root.path(),
            opts,
            &|_| {},
            &|u| updates.lock().unwrap().push(u),
        )
        .unwrap();
        (stats, updates.into_inner().unwrap())
    }

    fn symbol_names(&self, path: &str) -> Vec<String> {
        self.store
            .read(|c| {
                let mut st = c.prepare(
                    "SELECT s.name FROM symbols s JOIN files f ON f.id = s.file_id
                     WHERE f.project_id = ?1 AND f.path = ?2 ORDER BY s.ordinal",
                )?;
                st.query_map(rusqlite::params![self.project, path], |r| r.get(0))?
                    .collect()
            })
            .unwrap()
    }
}

fn set_mtime(path: &Path, secs_ago: u64) {
    let t = std::time::SystemTime::now() - std::time::Duration::from_secs(secs_ago);
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(t).unwrap();
}

#[test]
fn restart_reparses_nothing_then_exactly_the_changed_file() {
    let fx = fixture();
    fx.write("src/a.rs", "fn alpha() {}\n");
    fx.write("src/b.py", "def beta():\n    pass\n");
    fx.write("web/c.ts", "export const gamma = () => 1;\n");
    fx.write("README.md", "# not source\n");
    fx.write(".gitignore", "ignored/\n");
    fx.write("ignored/d.rs", "fn delta() {}\n");

    let (first, updates) = fx.crawl(&CrawlOptions::default());
    assert_eq!((first.files, first.parsed, first.unchanged), (3, 3, 0));
    assert_eq!(updates.len(), 3);
    assert_eq!(first.lines, 4);
    assert!(first.symbols >= 3);
    assert_eq!(fx.symbol_names("src/a.rs"), vec!["alpha"]);
    assert!(
        fx.symbol_names("ignored/d.rs").is_empty(),
        "gitignored files are not indexed"
    );

    let (again, updates) = fx.crawl(&CrawlOptions::default());
    assert_eq!((again.files, again.parsed, again.unchanged), (3, 0, 3));
    assert!(updates.is_empty());
    assert_eq!(again.lines, 4);

    // One file's content changes: exactly one parse.
    fx.write("src/a.rs", "fn alpha() {}\nfn alpha2() {}\n");
    set_mtime(&fx.root.path().join("src/a.rs"), 0);
    // Another is touched with identical content: hashed, not parsed.
    set_mtime(&fx.root.path().join("src/b.py"), 100);
    let (third, updates) = fx.crawl(&CrawlOptions::default());
    assert_eq!((third.parsed, third.unchanged), (1, 2));
    assert_eq!(updates.len(), 1);
    assert_eq!(fx.symbol_names("src/a.rs"), vec!["alpha", "alpha2"]);

    // A removed file leaves the index.
    std::fs::remove_file(fx.root.path().join("web/c.ts")).unwrap();
    let (fourth, updates) = fx.crawl(&CrawlOptions::default());
    assert_eq!((fourth.files, fourth.parsed, fourth.removed), (2, 0, 1));
    assert!(matches!(&updates[..], [FileUpdate::Removed { path }] if path == "web/c.ts"));
    assert!(fx.symbol_names("web/c.ts").is_empty());
    let rows = fx.store.read(|c| db::file_rows(c, fx.project)).unwrap();
    assert!(!rows.contains_key("web/c.ts"));
}

#[test]
fn bad_input_is_skipped_with_reasons_never_a_crash() {
    let fx = fixture();
    fx.write("ok.rs", "fn fine() {}\n");
    // 50 MB of valid-looking source.
    let big = "fn f() {}\n".repeat(5 * 1024 * 1024);
    fx.write("huge.rs", &big);
    // Binary content behind a source extension.
    let mut bin = b"\x7fELF\x02\x01\x01\x00\x00\x00".to_vec();
    bin.extend(std::iter::repeat_n(0u8, 4096));
    fx.write("tool.py", &bin);
    // Invalid UTF-8: indexed lossily.
    fx.write(
        "latin1.rs",
        b"// caf\xe9\nfn still_here() {}\nfn \xff() {}\n",
    );
    // Minified JavaScript.
    let minified: String = (0..2000)
        .map(|i| format!("function f{i}(a){{return a+{i}}};"))
        .collect();
    fx.write("bundle.js", &minified);
    fx.write("app.min.js", "function small(){}\n");
    // An unreadable directory.
    fx.write("locked/secret.rs", "fn hidden() {}\n");
    let locked = fx.root.path().join("locked");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let locked_is_unreadable = std::fs::read_dir(&locked).is_err(); // root can read anything

    let opts = CrawlOptions {
        max_file_bytes: 1024 * 1024,
        ..CrawlOptions::default()
    };
    let (stats, _) = fx.crawl(&opts);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();

    let reason = |p: &str| {
        stats
            .skipped
            .iter()
            .find(|s| s.path == p)
            .map(|s| s.reason.clone())
    };
    assert!(
        matches!(reason("huge.rs"), Some(SkipReason::TooLarge { size, limit }) if size > 50_000_000 && limit == 1024 * 1024)
    );
    assert_eq!(reason("tool.py"), Some(SkipReason::Binary));
    assert_eq!(reason("bundle.js"), Some(SkipReason::Minified));
    assert_eq!(reason("app.min.js"), Some(SkipReason::Minified));
    assert!(reason("too large message").is_none());
    assert!(
        SkipReason::TooLarge {
            size: 52428800,
            limit: 1048576
        }
        .to_string()
        .contains("raise index.max_file_bytes")
    );
    assert_eq!(fx.symbol_names("ok.rs"), vec!["fine"]);
    let latin = fx.symbol_names("latin1.rs");
    assert!(latin.contains(&"still_here".to_string()), "{latin:?}");
    if locked_is_unreadable {
        assert!(
            matches!(reason("locked"), Some(SkipReason::Unreadable(_))),
            "{:?}",
            stats.skipped
        );
    } else {
        assert_eq!(fx.symbol_names("locked/secret.rs"), vec!["hidden"]);
    }

    // Skipped files are remembered: a restart reads none of them again.
    let (again, _) = fx.crawl(&opts);
    assert_eq!(again.parsed, 0);
    assert!(again.skipped.iter().any(|s| s.path == "huge.rs"));
}

#[test]
fn a_file_deleted_between_walk_and_read_is_dropped_quietly() {
    let fx = fixture();
    fx.write("gone.rs", "fn soon_gone() {}\n");
    fx.crawl(&CrawlOptions::default());
    assert_eq!(fx.symbol_names("gone.rs"), vec!["soon_gone"]);
    let abs = fx.root.path().join("gone.rs");
    std::fs::remove_file(&abs).unwrap();
    // The watcher path: an event for a file that no longer exists.
    let mut conn = fx.store.connect().unwrap();
    let update = reindex_path(
        &mut conn,
        fx.project,
        fx.root.path(),
        &abs,
        &CrawlOptions::default(),
    )
    .unwrap();
    assert!(matches!(update, Some(FileUpdate::Removed { path }) if path == "gone.rs"));
    assert!(fx.symbol_names("gone.rs").is_empty());
    // Deleting while the crawl runs: many files, removed from another thread mid-crawl.
    for i in 0..400 {
        fx.write(&format!("many/f{i}.rs"), format!("fn f{i}() {{}}\n"));
    }
    let root = fx.root.path().to_path_buf();
    let deleter = std::thread::spawn(move || {
        for i in (0..400).step_by(2) {
            let _ = std::fs::remove_file(root.join(format!("many/f{i}.rs")));
        }
    });
    let (stats, _) = fx.crawl(&CrawlOptions::default());
    deleter.join().unwrap();
    assert!(stats.files >= 200);
    // Whatever the interleaving, a second crawl converges on exactly what is on disk.
    let (after, _) = fx.crawl(&CrawlOptions::default());
    assert_eq!(after.files, 200);
    let rows = fx.store.read(|c| db::file_rows(c, fx.project)).unwrap();
    assert_eq!(rows.len(), 200);
}

#[test]
fn sensitive_files_are_never_indexed_and_leave_when_miraignore_names_them() {
    let f = fixture();
    f.write("src/app.py", "def run():\n    pass\n");
    f.write("src/prod_settings.py", "def database_url():\n    pass\n");
    f.write("deploy/secrets.yaml", "name: x\n");
    f.write(
        "src/config.py",
        "API_KEY = \"sk_live_51Hx9QaZk2Lp8Mn4Bv6Cx0Rt\"\n",
    );
    f.crawl(&CrawlOptions::default());
    assert_eq!(f.symbol_names("src/prod_settings.py"), vec!["database_url"]);
    assert!(
        f.symbol_names("deploy/secrets.yaml").is_empty(),
        "built-in list"
    );
    // A constant's signature holds its value: stored redacted.
    let sig: String = f
        .store
        .read(|c| {
            c.query_row(
                "SELECT signature FROM symbols WHERE name = 'API_KEY'",
                [],
                |r| r.get(0),
            )
        })
        .unwrap();
    assert!(
        sig.contains("[REDACTED:") && !sig.contains("51Hx9"),
        "{sig}"
    );

    f.write(".miraignore", "src/prod_settings.py\n");
    let (_, updates) = f.crawl(&CrawlOptions::default());
    assert!(f.symbol_names("src/prod_settings.py").is_empty());
    assert!(
        updates
            .iter()
            .any(|u| matches!(u, FileUpdate::Removed { path } if path == "src/prod_settings.py")),
        "{updates:?}"
    );
    let mut conn = f.store.connect().unwrap();
    let abs = f.root.path().join("src/prod_settings.py");
    std::fs::write(&abs, "def other():\n    pass\n").unwrap();
    reindex_path(
        &mut conn,
        f.project,
        f.root.path(),
        &abs,
        &CrawlOptions::default(),
    )
    .unwrap();
    assert!(
        f.symbol_names("src/prod_settings.py").is_empty(),
        "the watcher path skips it too"
    );
    assert_eq!(f.symbol_names("src/app.py"), vec!["run"]);
}

#[test]
fn the_parse_pool_stops_at_eight_threads_unless_rayon_num_threads_says_more() {
    use crate::index::crawl::{PARSE_THREADS_MAX, parse_threads};
    // Many cores: capped, since each parsing thread keeps allocator pages of its own.
    assert_eq!(parse_threads(None, 16), PARSE_THREADS_MAX);
    assert_eq!(parse_threads(None, 64), PARSE_THREADS_MAX);
    // Few cores: all of them.
    assert_eq!(parse_threads(None, 2), 2);
    assert_eq!(parse_threads(None, 1), 1);
    // The user's RAYON_NUM_THREADS wins, above the cap too.
    assert_eq!(parse_threads(Some("16"), 16), 16);
    assert_eq!(parse_threads(Some(" 3 "), 16), 3);
    // What rayon ignores is ignored here too.
    assert_eq!(parse_threads(Some("0"), 4), 4);
    assert_eq!(parse_threads(Some("many"), 12), PARSE_THREADS_MAX);
}

/// The crawl's writer turns foreign-key checks off for its own inserts
/// (`writer::without_foreign_key_checks`) and back on after: on the same connection, a
/// file that left the project still takes its symbols with it (the cascade), and a row
/// pointing at no file is still refused.
#[test]
fn the_writer_leaves_foreign_key_checks_on() {
    let fx = fixture();
    fx.write("keep.rs", "fn kept() {}\n");
    fx.write("gone.py", "def soon_gone():\n    pass\n");
    let mut conn = fx.store.connect().unwrap();
    let run = |conn: &mut rusqlite::Connection| {
        crawl(
            conn,
            fx.project,
            fx.root.path(),
            &CrawlOptions::default(),
            &|_| {},
            &|_| {},
        )
        .unwrap()
    };
    run(&mut conn);
    let on: i64 = conn
        .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
        .unwrap();
    assert_eq!(on, 1);
    assert_eq!(fx.symbol_names("gone.py"), ["soon_gone"]);

    std::fs::remove_file(fx.root.path().join("gone.py")).unwrap();
    assert_eq!(run(&mut conn).removed, 1);
    let orphans: i64 = conn
        .query_row(
            "SELECT count(*) FROM symbols WHERE file_id NOT IN (SELECT id FROM files)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(orphans, 0, "the removed file's symbols stayed");
    assert_eq!(fx.symbol_names("keep.rs"), ["kept"]);
    let orphan = conn.execute(
        "INSERT INTO symbols (file_id, ordinal, name, kind, start_byte, end_byte, start_line,
           start_col, end_line, end_col, sel_start_byte, sel_end_byte, sel_start_line,
           sel_start_col, sel_end_line, sel_end_col, signature, declaration)
         VALUES (987654, 0, 'x', 'function', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '', 0)",
        [],
    );
    assert!(orphan.is_err(), "a symbol of no file was accepted");
}

fn name_index_sql(conn: &rusqlite::Connection) -> Option<String> {
    use rusqlite::OptionalExtension;
    conn.query_row(
        "SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = 'symbols_name'",
        [],
        |r| r.get(0),
    )
    .optional()
    .unwrap()
}

/// A cold crawl drops the symbol name index for its bulk load and builds it again after
/// (`db::drop_name_index_for_bulk_load`): what it leaves is the migration's own index, and
/// a lookup by name (the CLI and MCP's find_symbol) goes through it.
#[test]
fn a_cold_crawl_leaves_the_name_index_the_migration_made() {
    let fx = fixture();
    let conn = fx.store.connect().unwrap();
    let migrated = name_index_sql(&conn);
    assert_eq!(migrated.as_deref(), Some(db::NAME_INDEX_SQL));
    fx.write("a.rs", "fn alpha_beta() {}\nstruct Gamma;\n");
    fx.write("b.py", "def alpha_beta():\n    pass\n");
    fx.crawl(&CrawlOptions::default());
    assert_eq!(name_index_sql(&conn), migrated);
    let plan: Vec<String> = conn
        .prepare("EXPLAIN QUERY PLAN SELECT id FROM symbols WHERE name = ?1 COLLATE NOCASE")
        .unwrap()
        .query_map(["x"], |r| r.get(3))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(
        plan.iter().any(|step| step.contains("symbols_name")),
        "a lookup by name scans: {plan:?}"
    );
    let hits = crate::index::search::by_name(&conn, fx.project, "ALPHA_BETA", 5).unwrap();
    let mut paths: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
    paths.sort();
    assert_eq!(paths, ["a.rs", "b.py"]);
}

/// A crawl killed between dropping the name index and building it again leaves none; the
/// next crawl builds it even when it has nothing else to do.
#[test]
fn the_next_crawl_builds_the_name_index_a_killed_one_left_dropped() {
    let fx = fixture();
    fx.write("a.rs", "fn alpha() {}\n");
    fx.crawl(&CrawlOptions::default());
    let conn = fx.store.connect().unwrap();
    conn.execute_batch("DROP INDEX symbols_name").unwrap();
    let (stats, _) = fx.crawl(&CrawlOptions::default());
    assert_eq!(stats.parsed, 0, "the second crawl had nothing to parse");
    assert_eq!(name_index_sql(&conn).as_deref(), Some(db::NAME_INDEX_SQL));
}

/// Over 100k stored symbols (other projects'), rebuilding the index would cost more than a
/// cold crawl saves, so it stays; under that, it is dropped.
#[test]
fn a_cold_crawl_keeps_the_name_index_of_a_full_table() {
    let fx = fixture();
    let conn = fx.store.connect().unwrap();
    let other = projects::ensure(&conn, Path::new("/elsewhere"), "other").unwrap();
    conn.execute_batch(&format!(
        "INSERT INTO files (id, project_id, path, language, size, mtime_ns, hash, lines, ascii)
           VALUES (1, {other}, 'other.rs', 'rust', 0, 0, x'', 0, 1);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
         INSERT INTO symbols (file_id, ordinal, name, kind, start_byte, end_byte, start_line,
           start_col, end_line, end_col, sel_start_byte, sel_end_byte, sel_start_line,
           sel_start_col, sel_end_line, sel_end_col, signature, declaration)
         SELECT 1, i, 'n' || i, 'function', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '', 0 FROM n;"
    ))
    .unwrap();
    assert!(!db::drop_name_index_for_bulk_load(&conn).unwrap());
    assert!(name_index_sql(&conn).is_some());
    conn.execute("DELETE FROM symbols WHERE ordinal > 99000", [])
        .unwrap();
    assert!(db::drop_name_index_for_bulk_load(&conn).unwrap());
    assert!(name_index_sql(&conn).is_none());
}

/// A folder with nothing to parse is cold on every start: its crawl must not drop and rebuild
/// the name index each time, since that changes the schema under every other connection.
#[test]
fn a_crawl_with_nothing_to_parse_leaves_the_schema_alone() {
    let fx = fixture();
    fx.write("README.md", "no source here\n");
    fx.write("data.bin", [0u8, 1, 2, 3]);
    let conn = fx.store.connect().unwrap();
    let version = |c: &rusqlite::Connection| -> i64 {
        c.query_row("PRAGMA schema_version", [], |r| r.get(0))
            .unwrap()
    };
    let before = version(&conn);
    fx.crawl(&CrawlOptions::default());
    fx.crawl(&CrawlOptions::default());
    assert_eq!(version(&conn), before, "the crawl changed the schema");
    assert_eq!(name_index_sql(&conn).as_deref(), Some(db::NAME_INDEX_SQL));
}
