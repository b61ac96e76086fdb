//! Unit tests of config layering: precedence and provenance, errors that name file, line
//! and column, unknown keys, and secrets reported only as set or unset.

use super::*;
use std::path::Path;

fn inputs(
    tmp: &Path,
    user: Option<&str>,
    project: Option<&str>,
    env: &[(&str, &str)],
) -> ConfigInputs {
    let user_file = tmp.join("user.toml");
    if let Some(text) = user {
        std::fs::write(&user_file, text).unwrap();
    }
    let root = tmp.join("proj");
    std::fs::create_dir_all(root.join(".mira")).unwrap();
    if let Some(text) = project {
        std::fs::write(root.join(".mira/project.toml"), text).unwrap();
    }
    let mut env = env.to_vec();
    let home = tmp.join("home").to_string_lossy().to_string();
    env.push(("MIRA_HOME", Box::leak(home.into_boxed_str())));
    ConfigInputs {
        env: Env::from_pairs(env),
        user_file: user.map(|_| user_file),
        project_root: Some(root),
        editor: None,
    }
}

#[test]
fn layers_override_in_order_and_record_their_source() {
    let tmp = tempfile::tempdir().unwrap();
    let mut i = inputs(
        tmp.path(),
        Some(
            "[provider]\nmodel = \"from-user\"\nname = \"anthropic\"\n[index]\nworkspace_symbol_limit = 7\n",
        ),
        Some("[provider]\nmodel = \"from-project\"\n"),
        &[("MIRA_PROVIDER", "openai-chat")],
    );
    i.editor =
        Some(serde_json::json!({"index": {"workspace_symbol_limit": 9}, "notifications": true}));
    let l = load(&i).unwrap();
    assert_eq!(l.config.provider.model.as_deref(), Some("from-project"));
    assert!(matches!(
        l.source_of("provider.model"),
        Source::ProjectFile(_)
    ));
    assert_eq!(
        l.config.provider.name,
        Some(crate::llm::ProviderName::OpenaiChat)
    );
    assert_eq!(l.source_of("provider.name"), Source::Env("MIRA_PROVIDER"));
    assert_eq!(l.config.index.workspace_symbol_limit, 9);
    assert_eq!(l.source_of("index.workspace_symbol_limit"), Source::Editor);
    assert!(l.config.notifications);
    assert_eq!(l.source_of("index.max_file_bytes"), Source::Default);
    assert_eq!(l.config.store.home, tmp.path().join("home"));
    assert_eq!(l.source_of("store.home"), Source::Env("MIRA_HOME"));
    assert!(l.unknown.is_empty());
}

#[test]
fn bad_toml_names_file_line_and_column() {
    let tmp = tempfile::tempdir().unwrap();
    let err = load(&inputs(
        tmp.path(),
        Some("[provider]\nmodel = \n"),
        None,
        &[],
    ))
    .unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("user.toml"), "{msg}");
    assert!(msg.contains("line 2"), "{msg}");
    assert!(msg.contains("column"), "{msg}");
}

#[test]
fn wrong_types_name_the_key_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let err = load(&inputs(
        tmp.path(),
        None,
        Some("[index]\nmax_file_bytes = \"big\"\n"),
        &[],
    ))
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("project.toml") && err.contains("line 2"),
        "{err}"
    );
    let tmp = tempfile::tempdir().unwrap();
    let err = load(&inputs(
        tmp.path(),
        None,
        None,
        &[("MIRA_PROVIDER", "gemini")],
    ))
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("MIRA_PROVIDER") && err.contains("gemini"),
        "{err}"
    );
}

#[test]
fn unknown_keys_are_reported_with_their_file() {
    let tmp = tempfile::tempdir().unwrap();
    let l = load(&inputs(
        tmp.path(),
        Some("colour = \"blue\"\n[index]\nmax_file_byte = 3\n"),
        None,
        &[],
    ))
    .unwrap();
    let keys: Vec<_> = l.unknown.iter().map(|u| u.key.as_str()).collect();
    assert_eq!(keys, ["colour", "index.max_file_byte"]);
    assert!(l.unknown[0].to_string().contains("user.toml"));
}

#[test]
fn a_missing_explicit_config_file_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nope.toml");
    let i = ConfigInputs {
        env: Env::from_pairs([
            ("MIRA_CONFIG", missing.to_str().unwrap()),
            ("HOME", "/nonexistent"),
        ]),
        ..Default::default()
    };
    let msg = load(&i).unwrap_err().to_string();
    assert!(msg.contains("nope.toml"), "{msg}");
}

#[test]
fn secrets_are_reported_redacted_only() {
    let tmp = tempfile::tempdir().unwrap();
    let l = load(&inputs(
        tmp.path(),
        Some("[provider]\napi_key = \"sk-user-secret-123\"\n"),
        None,
        &[("OPENAI_API_KEY", "sk-env-secret-456")],
    ))
    .unwrap();
    let lines = report(&l);
    let text: String = lines
        .iter()
        .map(|r| format!("{} {} {}\n", r.key, r.value, r.source))
        .collect();
    assert!(
        !text.contains("sk-user") && !text.contains("sk-env"),
        "{text}"
    );
    assert!(text.contains("provider.api_key <redacted>"), "{text}");
    assert!(
        text.contains("keys.openai <redacted> environment OPENAI_API_KEY"),
        "{text}"
    );
    assert!(
        !format!("{l:?}").contains("sk-"),
        "Debug must not leak keys"
    );
}

/// `agent.effort` is `llm::Effort` or `auto` (no effort fixed): the words, the error and
/// what `mira doctor` shows are those of the enum config once kept for it.
#[test]
fn effort_is_the_llm_effort_or_auto() {
    use crate::llm::Effort;
    let tmp = tempfile::tempdir().unwrap();
    let effort = |toml: &str| load(&inputs(tmp.path(), Some(toml), None, &[]));
    assert_eq!(effort("").unwrap().config.agent.effort, None);
    assert_eq!(
        effort("[agent]\neffort = \"auto\"\n")
            .unwrap()
            .config
            .agent
            .effort,
        None
    );
    assert_eq!(
        effort("[agent]\neffort = \"xhigh\"\n")
            .unwrap()
            .config
            .agent
            .effort,
        Some(Effort::XHigh)
    );
    let msg = effort("[agent]\neffort = \"max\"\n")
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains(
            "unknown variant `max`, expected one of `auto`, `none`, `low`, `medium`, `high`, `xhigh`"
        ),
        "{msg}"
    );
    let shown = |l: &Loaded| {
        report(l)
            .into_iter()
            .find(|r| r.key == "agent.effort")
            .map(|r| r.value)
    };
    assert_eq!(shown(&effort("").unwrap()).as_deref(), Some("\"auto\""));
    assert_eq!(
        shown(&effort("[agent]\neffort = \"low\"\n").unwrap()).as_deref(),
        Some("\"low\"")
    );
}
