//! File tools stay inside the project, secrets never leave the machine or reach the database,
//! and bash only runs when the user allowed it.

use crate::support::agent as agent_support;
use crate::support::mock_llm;

use agent_support::{RecordingHost, Setup, contains, db_bytes, run};
use mira::agent::{AgentSettings, TurnStatus};
use mira::config::BashPolicy;
use mock_llm::{MockLlm, Turn, Wire};

#[tokio::test]
async fn paths_outside_the_root_and_escaping_symlinks_are_refused() {
    let s = Setup::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("private.txt"), "outside secret words").unwrap();
    std::os::unix::fs::symlink(outside.path(), s.root.join("escape")).unwrap();
    let mock = MockLlm::start(Wire::Chat).await;
    mock.push_turn(
        &Turn::text(&[])
            .call("c1", "read_file", r#"{"path":"../../etc/passwd"}"#)
            .call("c2", "read_file", r#"{"path":"escape/private.txt"}"#)
            .call(
                "c3",
                "write_file",
                r#"{"path":"escape/new.txt","content":"x"}"#,
            )
            .call("c4", "grep", r#"{"pattern":"secret","path":"/etc"}"#),
    );
    mock.push_turn(&Turn::text(&["I cannot read those."]));
    let agent = s.agent(&mock, AgentSettings::default());
    let host = RecordingHost {
        apply: true,
        ..Default::default()
    };
    let out = run(&agent, s.ask("read some files"), &host).await;
    assert_eq!(out.status, TurnStatus::Completed, "{:?}", out.error);
    let results = host.tool_results();
    assert_eq!(results.len(), 4);
    for (name, ok, summary) in &results {
        assert!(!ok, "{name} was allowed: {summary}");
        assert!(summary.starts_with("refused:"), "{name}: {summary}");
    }
    let raw = &mock.requests()[1].raw;
    assert!(!raw.contains("root:x:0:0") && !raw.contains("outside secret words"));
    // Refusals name no place outside the project (neither the link target nor /etc).
    let outside_path = outside.path().canonicalize().unwrap();
    assert!(
        !raw.contains(outside_path.to_str().unwrap())
            && raw.contains("refused: `…/etc` is outside"),
        "{raw}"
    );
    assert!(!outside.path().join("new.txt").exists());
    assert!(host.edits.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_key_inside_a_file_never_reaches_the_provider_or_the_database() {
    const KEY: &str = "sk-proj-Zx8Qw3Er5Ty7Ui9Op1As2Df4Gh6Jk8Lz";
    for wire in Wire::ALL {
        let s = Setup::new();
        // An ordinary file (a `.env` is withheld outright: tests/it/secrets_e2e.rs).
        s.write(
            "config/local.ini",
            &format!("OPENAI_API_KEY={KEY}\nDEBUG=1\n"),
        );
        let mock = MockLlm::start(wire).await;
        mock.push_turn(&Turn::text(&["Reading it."]).call(
            "c1",
            "read_file",
            r#"{"path":"config/local.ini"}"#,
        ));
        mock.push_turn(&Turn::text(&["It sets DEBUG and a key."]).call(
            "c2",
            "grep",
            r#"{"pattern":"sk-proj"}"#,
        ));
        mock.push_turn(&Turn::text(&["Done."]));
        let agent = s.agent(&mock, AgentSettings::default());
        let host = RecordingHost::default();
        // The user pastes the key into the question too.
        let out = run(
            &agent,
            s.ask(&format!("what is in config/local.ini? my key is {KEY}")),
            &host,
        )
        .await;
        assert_eq!(
            out.status,
            TurnStatus::Completed,
            "{wire:?}: {:?}",
            out.error
        );
        let requests = mock.requests();
        assert_eq!(requests.len(), 3);
        for r in &requests {
            assert!(
                !r.raw.contains(KEY),
                "{wire:?}: the key was sent to the provider"
            );
        }
        assert!(
            requests[1].raw.contains("[REDACTED:api-key]"),
            "{wire:?}: the redacted file content was sent"
        );
        assert!(
            requests[1].raw.contains("DEBUG=1"),
            "{wire:?}: the rest of the file was sent"
        );
        s.store
            .read(|c| c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)"))
            .unwrap();
        let bytes = db_bytes(&s.db_path());
        assert!(!bytes.is_empty());
        assert!(
            !contains(&bytes, KEY),
            "{wire:?}: the key reached the database"
        );
        assert!(
            !contains(&bytes, "Zx8Qw3Er5Ty7"),
            "{wire:?}: part of the key reached the database"
        );
    }
}

#[tokio::test]
async fn bash_is_refused_unless_allowed() {
    let s = Setup::new();
    let mock = MockLlm::start(Wire::Anthropic).await;
    let agent = s.agent(&mock, AgentSettings::default());
    mock.push_turn(&Turn::text(&[]).call("b1", "bash", r#"{"command":"touch ran.txt"}"#));
    mock.push_turn(&Turn::text(&["Not allowed."]));
    let host = RecordingHost::default();
    run(&agent, s.ask("run it"), &host).await;
    assert!(!s.root.join("ran.txt").exists());
    let (_, ok, summary) = &host.tool_results()[0];
    assert!(
        !ok && summary.contains("bash is off") && summary.contains("agent.bash"),
        "{summary}"
    );

    // `ask`: the host is asked; a host that says no (or cannot ask) refuses.
    let ask = AgentSettings {
        bash: BashPolicy::Ask,
        ..AgentSettings::default()
    };
    let agent = s.agent(&mock, ask.clone());
    mock.push_turn(&Turn::text(&[]).call("b2", "bash", r#"{"command":"touch ran.txt"}"#));
    mock.push_turn(&Turn::text(&["Declined."]));
    let host = RecordingHost {
        approve: false,
        ..Default::default()
    };
    run(&agent, s.ask("run it"), &host).await;
    assert!(!s.root.join("ran.txt").exists());
    assert!(host.tool_results()[0].2.contains("did not allow"));

    let agent = s.agent(&mock, ask);
    mock.push_turn(&Turn::text(&[]).call(
        "b3",
        "bash",
        r#"{"command":"touch ran.txt && echo made it"}"#,
    ));
    mock.push_turn(&Turn::text(&["Ran."]));
    let host = RecordingHost {
        approve: true,
        ..Default::default()
    };
    run(&agent, s.ask("run it"), &host).await;
    assert!(
        s.root.join("ran.txt").exists(),
        "approved bash runs in the project root"
    );
    let last = mock.requests().last().unwrap().raw.clone();
    assert!(
        last.contains("exit status: 0") && last.contains("made it"),
        "{last}"
    );
    assert_eq!(mock.violations(), Vec::<String>::new());
}

#[tokio::test]
async fn edits_go_through_the_host_and_are_written_only_when_accepted() {
    let s = Setup::new();
    let mock = MockLlm::start(Wire::Responses).await;
    let args = r#"{"path":"src/main.rs","old_string":"println!(\"hello\")","new_string":"println!(\"bye\")"}"#;
    mock.push_turn(&Turn::text(&[]).call("e1", "edit_file", args));
    mock.push_turn(&Turn::text(&["Rejected."]));
    let agent = s.agent(&mock, AgentSettings::default());
    let host = RecordingHost::default();
    run(&agent, s.ask("say bye"), &host).await;
    assert!(
        std::fs::read_to_string(s.root.join("src/main.rs"))
            .unwrap()
            .contains("hello")
    );
    let edit = host.edits.lock().unwrap()[0].clone();
    assert!(
        edit.diff.contains("-    println!(\"hello\");")
            && edit.diff.contains("+    println!(\"bye\");"),
        "{}",
        edit.diff
    );
    assert!(host.tool_results()[0].2.contains("was not applied"));

    mock.push_turn(&Turn::text(&[]).call("e2", "edit_file", args));
    mock.push_turn(&Turn::text(&["Changed."]));
    let host = RecordingHost {
        apply: true,
        ..Default::default()
    };
    run(&agent, s.ask("say bye"), &host).await;
    assert!(
        std::fs::read_to_string(s.root.join("src/main.rs"))
            .unwrap()
            .contains("bye")
    );
    assert!(
        mock.requests()
            .last()
            .unwrap()
            .raw
            .contains("applied: src/main.rs")
    );
}
