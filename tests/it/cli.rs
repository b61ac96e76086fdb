//! The CLI as a user meets it: version, help, doctor on a fresh machine and on a broken one.

use assert_cmd::Command;
use predicates::prelude::*;
use std::path::Path;

fn mira(home: &Path) -> Command {
    // No MIRA_HOME: these tests check where Mira puts its data by default.
    Command::from_std(crate::support::mira([("HOME", home)], home))
}

fn tree(root: &Path) -> Vec<String> {
    let mut out = vec![];
    for e in walk(root) {
        out.push(e.strip_prefix(root).unwrap().display().to_string());
    }
    out.sort();
    out
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![];
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        out.push(p.clone());
        if p.is_dir() {
            out.extend(walk(&p));
        }
    }
    out
}

#[test]
fn version_and_help() {
    let tmp = tempfile::tempdir().unwrap();
    mira(tmp.path())
        .arg("--version")
        .assert()
        .success()
        .stdout(predicate::str::starts_with("mira 0."));
    mira(tmp.path())
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("lsp").and(predicate::str::contains("doctor")))
        .stdout(predicate::str::contains("Exit codes"));
    mira(tmp.path())
        .arg("frobnicate")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unrecognized subcommand"));
}

#[test]
fn doctor_on_a_fresh_home_creates_only_the_data_dir_and_database() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(work.join(".git")).unwrap();
    mira(&home)
        .current_dir(&work)
        .arg("doctor")
        .assert()
        .success()
        .stdout(predicate::str::contains("found by   git root"))
        .stdout(predicate::str::contains(".local/share/mira/mira.db"))
        .stdout(predicate::str::contains("integrity  ok"))
        .stdout(predicate::str::contains("store.home"))
        // Token budgets are numbers, not secrets.
        .stdout(predicate::str::is_match(r"agent\.context_tokens\s+= \d+").unwrap())
        .stdout(predicate::str::is_match(r"agent\.summarize_after_tokens\s+= \d+").unwrap())
        .stdout(predicate::str::contains("No problems found."));
    assert_eq!(
        tree(&home),
        [
            ".local",
            ".local/share",
            ".local/share/mira",
            ".local/share/mira/mira.db"
        ]
    );
    assert_eq!(tree(&work), [".git"]);
}

#[test]
fn doctor_names_file_line_and_problem_of_a_broken_config() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join(".config/mira");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(
        cfg.join("config.toml"),
        "[provider]\nname = \"openai\"\nmodel = \n",
    )
    .unwrap();
    mira(tmp.path())
        .current_dir(tmp.path())
        .arg("doctor")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(".config/mira/config.toml"))
        .stderr(predicate::str::contains("line 3"));

    std::fs::write(cfg.join("config.toml"), "[index]\nmax_file_size = 10\n").unwrap();
    mira(tmp.path())
        .current_dir(tmp.path())
        .arg("doctor")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "unknown key `index.max_file_size`",
        ));

    std::fs::write(cfg.join("config.toml"), "[provider]\nname = \"gemini\"\n").unwrap();
    mira(tmp.path())
        .current_dir(tmp.path())
        .arg("doctor")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("gemini").and(predicate::str::contains("line 2")));
}

#[test]
fn doctor_shows_sources_and_never_prints_keys() {
    let tmp = tempfile::tempdir().unwrap();
    mira(tmp.path())
        .current_dir(tmp.path())
        .env("MIRA_MODEL", "gpt-5.2")
        .env("OPENAI_API_KEY", "sk-test-very-secret")
        .arg("doctor")
        .assert()
        .success()
        .stdout(
            predicate::str::contains("provider.model")
                .and(predicate::str::contains("environment MIRA_MODEL")),
        )
        .stdout(predicate::str::contains("keys.openai"))
        .stdout(predicate::str::contains("sk-test").not());
}

#[test]
fn doctor_refuses_a_database_from_a_newer_mira() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    mira(tmp.path())
        .env("MIRA_HOME", &data)
        .arg("doctor")
        .assert()
        .success();
    rusqlite::Connection::open(data.join("mira.db"))
        .unwrap()
        .pragma_update(None, "user_version", 999)
        .unwrap();
    mira(tmp.path())
        .env("MIRA_HOME", &data)
        .arg("doctor")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("newer Mira").and(predicate::str::contains("schema 999")));
}

/// `mira … | head -1`: the reader is gone before Mira writes; it exits quietly (no panic).
#[test]
fn a_closed_stdout_ends_the_program_quietly() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mira"))
        .arg("doctor")
        .env_clear()
        .env("HOME", &home)
        .env("MIRA_HOME", tmp.path().join("mira"))
        .current_dir(tmp.path())
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("panicked") && !err.contains("Broken pipe"),
        "{err}"
    );
    assert_eq!(out.status.code(), Some(0), "{err}");
}

#[test]
fn doctor_reports_redaction_rules_and_the_miraignore_files_in_force() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::write(project.join(".miraignore"), "config/prod.toml\n").unwrap();
    std::fs::create_dir_all(tmp.path().join(".config/mira")).unwrap();
    std::fs::write(tmp.path().join(".config/mira/miraignore"), "*.secret\n").unwrap();
    let out = mira(tmp.path())
        .current_dir(&project)
        .arg("doctor")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let rules = mira::redact::rule_count();
    assert!(rules > 40, "{rules}");
    assert!(
        stdout.contains(&format!("redaction  {rules} rules")),
        "{stdout}"
    );
    let project_file = project.canonicalize().unwrap().join(".miraignore");
    assert!(
        stdout.contains(&format!("miraignore {}", project_file.display())),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "miraignore {}",
            tmp.path().join(".config/mira/miraignore").display()
        )),
        "{stdout}"
    );
    assert!(stdout.contains("sensitive files withheld"), "{stdout}");

    // A broken rule is a configuration problem that names the file and line.
    std::fs::write(project.join(".miraignore"), "bad{.txt\n").unwrap();
    let out = mira(tmp.path())
        .current_dir(&project)
        .arg("doctor")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(".miraignore") && stderr.contains("line 1"),
        "{stderr}"
    );
}
