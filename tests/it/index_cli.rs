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
