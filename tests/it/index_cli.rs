//! `mira index` and `mira symbols` as a user runs them.

use assert_cmd::Command;
use predicates::prelude::*;
use std::path::Path;

fn mira(home: &Path, cwd: &Path) -> Command {
    Command::from_std(crate::support::mira(crate::support::home_env(home), cwd))
}

#[test]
fn index_prints_stats_and_symbols_finds_by_fuzzy_name() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let p = project.path();
    std::fs::create_dir_all(p.join(".git")).unwrap();
    std::fs::write(
        p.join("lib.rs"),
        "pub struct HashMapLike;\nimpl HashMapLike {\n    pub fn insert_item(&mut self) {}\n}\n",
    )
    .unwrap();
    std::fs::write(
        p.join("util.py"),
        "def parse_config(path):\n    return path\n",
    )
    .unwrap();
    std::fs::write(p.join("blob.c"), b"int x;\0\0\0binary").unwrap();

    mira(home.path(), p)
        .arg("index")
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "files     3 (2 parsed, 0 unchanged, 0 removed)",
        ))
        .stdout(predicate::str::contains("lines     6"))
        .stdout(predicate::str::contains("skipped   1"))
        .stdout(predicate::str::contains("blob.c: binary content"));
    // Second run: nothing parsed.
    mira(home.path(), p)
        .arg("index")
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "(0 parsed, 3 unchanged, 0 removed)",
        ));

    mira(home.path(), p)
        .args(["symbols", "hml"])
        .assert()
        .success()
        .stdout(predicate::str::contains("struct      HashMapLike"))
        .stdout(predicate::str::contains("lib.rs:1:12"));
    mira(home.path(), p)
        .args(["symbols", "insert", "--kind", "method"])
        .assert()
        .success()
        .stdout(predicate::str::contains("HashMapLike › insert_item"));
    let out = mira(home.path(), p)
        .args(["symbols", "parse_config", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v[0]["name"], "parse_config");
    assert_eq!(v[0]["kind"], "function");
    assert_eq!(
        v[0]["selection"]["start"],
        serde_json::json!({"line": 0, "character": 4})
    );
    assert!(v[0]["path"].as_str().unwrap().ends_with("util.py"));

    mira(home.path(), p)
        .args(["symbols", "x", "--kind", "gadget"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown symbol kind `gadget`"));
    mira(home.path(), p)
        .args(["symbols", "zzzqqq"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no symbols match"));
}

/// tree-sitter and SQLite allocate through mimalloc in the binary (`src/c_alloc.rs`) and
/// through glibc with `MIRA_ALLOCATOR=system`: both index the same project to the same
/// symbols, and neither crashes on a block the other allocator made.
#[test]
fn both_allocators_index_the_same_symbols() {
    let project = tempfile::tempdir().unwrap();
    let p = project.path();
    std::fs::create_dir_all(p.join(".git")).unwrap();
    let files = [
        (
            "a.rs",
            "pub struct Grid { cells: Vec<u8> }\nimpl Grid {\n    pub fn cell_at(&self, i: usize) -> u8 { self.cells[i] }\n}\n",
        ),
        (
            "b.py",
            "class Loader:\n    def load_all(self, paths):\n        return [open(p) for p in paths]\n",
        ),
        (
            "c.ts",
            "export interface Shape { area(): number }\nexport class Square implements Shape {\n  constructor(private side: number) {}\n  area() { return this.side * this.side }\n}\n",
        ),
        (
            "d.go",
            "package main\n\nfunc sumAll(xs []int) int {\n\tt := 0\n\tfor _, x := range xs { t += x }\n\treturn t\n}\n",
        ),
    ];
    for (name, text) in files {
        std::fs::write(p.join(name), text.repeat(50)).unwrap();
    }
    let symbols = |system: bool| {
        let home = tempfile::tempdir().unwrap();
        let with = |mut c: Command| {
            if system {
                c.env("MIRA_ALLOCATOR", "system");
            }
            c
        };
        with(mira(home.path(), p)).arg("index").assert().success();
        let out = with(mira(home.path(), p))
            .args(["symbols", "", "--json", "--limit", "1000"])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        v
    };
    let (mimalloc, glibc) = (symbols(false), symbols(true));
    assert!(
        mimalloc.as_array().is_some_and(|a| a.len() >= 8),
        "{mimalloc}"
    );
    assert_eq!(mimalloc, glibc);
}

/// The cold index parses into scratch heaps and frees a heap's trees all at once every few
/// megabytes (`index::parse::parse_once`); with `MIRA_ALLOCATOR=system` every tree is freed
/// node by node. A project big enough for many heaps (this crate's own sources, its editor
/// plugins, generated Python and Go) indexes to the same rows both ways: every symbol, every
/// reference and every file's row. A tree read after its heap was destroyed would differ,
/// or crash.
#[test]
fn scratch_heaps_index_the_same_rows_as_freeing_each_tree() {
    let project = tempfile::tempdir().unwrap();
    let p = project.path();
    std::fs::create_dir_all(p.join(".git")).unwrap();
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut bytes = 0;
    for dir in ["src", "editors/vscode/src", "editors/nvim"] {
        bytes += copy_tree(&here.join(dir), &p.join(dir));
    }
    for i in 0..40 {
        let py = format!(
            "class Store{i}:\n    def load_{i}(self, key):\n        return self.cache.get(key) or fetch_{i}(key)\n\n"
        );
        let go = format!(
            "func Sum{i}(xs []int) int {{\n\tt := 0\n\tfor _, x := range xs {{ t += scale{i}(x) }}\n\treturn t\n}}\n\n"
        );
        std::fs::write(p.join(format!("m{i}.py")), py.repeat(60)).unwrap();
        std::fs::write(
            p.join(format!("g{i}.go")),
            format!("package main\n\n{}", go.repeat(60)),
        )
        .unwrap();
        bytes += py.len() * 60 + go.len() * 60;
    }
    // tree-sitter asks for many times the source: this is dozens of 4 MB heaps.
    assert!(bytes > 2_000_000, "only {bytes} bytes of source");
    let rows = |system: bool| {
        let home = tempfile::tempdir().unwrap();
        let mut c = mira(home.path(), p);
        if system {
            c.env("MIRA_ALLOCATOR", "system");
        }
        c.arg("index").assert().success();
        dump_index(&home.path().join("mira/mira.db"))
    };
    let (scratch, freed) = (rows(false), rows(true));
    assert!(scratch.len() > 5_000, "{} rows", scratch.len());
    assert_eq!(scratch.len(), freed.len());
    for (a, b) in scratch.iter().zip(&freed) {
        assert_eq!(a, b);
    }
}

/// Copies the files under `from` to `to`; returns their bytes.
fn copy_tree(from: &Path, to: &Path) -> usize {
    let mut bytes = 0;
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        if path.is_dir() {
            bytes += copy_tree(&path, &to.join(entry.file_name()));
        } else {
            bytes += std::fs::copy(&path, to.join(entry.file_name())).unwrap() as usize;
        }
    }
    bytes
}

/// Every file's row (but its id and mtime), every symbol and every reference, in order.
fn dump_index(db: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let queries = [
        "SELECT path, language, size, hash, lines, ascii, skip_reason, refs FROM files ORDER BY path",
        "SELECT f.path, s.ordinal, s.parent, s.name, s.kind, s.container, s.start_byte,
                s.end_byte, s.start_line, s.start_col, s.end_line, s.end_col, s.sel_start_byte,
                s.sel_end_byte, s.sel_start_line, s.sel_start_col, s.sel_end_line,
                s.sel_end_col, s.signature, s.doc, s.declaration
         FROM symbols s JOIN files f ON f.id = s.file_id ORDER BY f.path, s.ordinal",
    ];
    let mut out = Vec::new();
    for q in queries {
        let mut stmt = conn.prepare(q).unwrap();
        let n = stmt.column_count();
        let rows = stmt
            .query_map([], |r| {
                (0..n)
                    .map(|i| {
                        r.get::<_, rusqlite::types::Value>(i)
                            .map(|v| format!("{v:?}"))
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map(|v| v.join("\t"))
            })
            .unwrap();
        out.extend(rows.map(Result::unwrap));
    }
    out
}
