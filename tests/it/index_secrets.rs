//! A secret literal in an ordinary source file: `mira index` stores no copy of it (symbols,
//! code-search chunks — mira.db nor its WAL), and `mira search` does not print it.

use assert_cmd::Command;
use std::path::Path;

const TOKEN: &str = "ghp_Vt7Rk2Mx9Lq4Wn8Pz3Hs6Jd1Fb5Yc0Ga2Ke4";

fn mira(home: &Path, cwd: &Path) -> Command {
    Command::from_std(crate::support::mira(crate::support::home_env(home), cwd))
}

fn files_under(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.display().to_string(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn a_secret_in_source_never_reaches_the_index_or_search_output() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let p = project.path();
    std::fs::create_dir_all(p.join(".git")).unwrap();
    // Inside a body, so only the code head (the chunk) carries it, not a signature.
    std::fs::write(
        p.join("client.py"),
        format!(
            "def connect_to_github(url):\n    token = \"{TOKEN}\"\n    return open_session(url, token)\n"
        ),
    )
    .unwrap();
    mira(home.path(), p).arg("index").assert().success();

    let stored = files_under(&home.path().join("mira"));
    assert!(
        stored.iter().any(|(n, _)| n.ends_with("mira.db")),
        "no mira.db under {:?}",
        stored.iter().map(|(n, _)| n).collect::<Vec<_>>()
    );
    // The chunk is stored (its other words are searchable) …
    assert!(
        stored
            .iter()
            .any(|(n, b)| n.contains("mira.db") && contains(b, "open_session")),
        "the code head was not stored at all"
    );
    // … but no file (db, -wal, -shm) holds the token or a long piece of it.
    // FTS5 keeps lowercased tokens, so look for those too.
    let lower = TOKEN.to_lowercase();
    for (name, bytes) in &stored {
        for piece in [
            TOKEN,
            &TOKEN[4..],
            &TOKEN[10..30],
            &lower[4..],
            &lower[10..30],
        ] {
            assert!(!contains(bytes, piece), "{name} holds {piece}");
        }
    }

    let out = mira(home.path(), p)
        .args(["search", "connect to github session"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("connect_to_github"), "{out}");
    assert!(out.contains("open_session"), "the code is shown: {out}");
    assert!(!out.contains(&TOKEN[10..30]), "{out}");
}
