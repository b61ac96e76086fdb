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
