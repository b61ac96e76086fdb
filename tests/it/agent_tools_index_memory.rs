//! The tools backed by the index and memory: the model finds a symbol, reads its context
//! (definition, callers, anchored memories), remembers, recalls, and manages tasks — through
//! every provider's wire format, against a real SQLite store and an indexed project.

use crate::support::agent as agent_support;
use crate::support::mock_llm;

use agent_support::{RecordingHost, Setup, run};
use mira::agent::{AgentSettings, TurnStatus};
use mira::index::crawl::CrawlOptions;
use mira::index::offline;
use mock_llm::{MockLlm, Turn, Wire};

fn outputs(mock: &MockLlm, n: usize) -> Vec<String> {
    let body = &mock.requests()[n].body;
    let text = body.to_string();
    // Each wire format carries tool results differently; the tests only need their text.
    let mut out = Vec::new();
    for key in ["output", "content"] {
        let mut rest = text.as_str();
        let needle = format!("\"{key}\":\"");
        while let Some(i) = rest.find(&needle) {
            rest = &rest[i + needle.len()..];
            let end = rest
                .find("\",\"")
                .or_else(|| rest.find("\"}"))
                .unwrap_or(rest.len());
            out.push(rest[..end].replace("\\n", "\n").replace("\\t", "\t"));
        }
    }
    out
}

#[tokio::test]
async fn symbol_and_memory_tools_work_through_every_provider() {
    for wire in Wire::ALL {
        let s = Setup::new();
        s.write(
            "src/config.rs",
            "/// Parses the configuration text.\npub fn parse_config(text: &str) -> usize {\n    text.len()\n}\n\nfn load() -> usize {\n    parse_config(\"a = 1\")\n}\n",
        );
        let project = mira::project::detect(&s.root);
        offline::index_project(&s.store, &project, &CrawlOptions::default(), &|_| {}).unwrap();

        let mock = MockLlm::start(wire).await;
        mock.push_turn(
            &Turn::text(&["Looking."])
                .call("call_1", "find_symbol", r#"{"query":"parse_conf"}"#)
                .call("call_2", "symbol_context", r#"{"name":"parse_config"}"#)
                .call(
                    "call_3",
                    "remember",
                    r#"{"text":"the user prefers tabs","kind":"preference"}"#,
                ),
        );
        mock.push_turn(
            &Turn::text(&["Noted."])
                .call("call_4", "recall", r#"{"query":"tabs"}"#)
                .call(
                    "call_5",
                    "tasks",
                    r#"{"action":"add","title":"document parse_config"}"#,
                )
                .call(
                    "call_6",
                    "find_symbol",
                    r#"{"query":"parse","kind":"sandwich"}"#,
                )
                .call(
                    "call_7",
                    "goals",
                    r#"{"action":"add","title":"ship v1","priority":"high"}"#,
                ),
        );
        mock.push_turn(
            &Turn::text(&["Checking."])
                .call("call_8", "goals", r#"{"action":"list"}"#)
                .call("call_9", "tasks", r#"{"action":"list"}"#),
        );
        mock.push_turn(&Turn::text(&["Done."]));
        let agent = s.agent(&mock, AgentSettings::default());
        let host = RecordingHost::default();
        let out = run(&agent, s.ask("what parses the config?"), &host).await;
        assert_eq!(
            out.status,
            TurnStatus::Completed,
            "{wire:?}: {:?}",
            out.error
        );
        assert_eq!(mock.violations(), Vec::<String>::new(), "{wire:?}");

        let first = outputs(&mock, 1).join("\n---\n");
        assert!(
            first.contains("function parse_config — src/config.rs:2"),
            "{wire:?}: {first}"
        );
        assert!(
            first.contains("doc: Parses the configuration text."),
            "{wire:?}: {first}"
        );
        assert!(
            first.contains("2\tpub fn parse_config(text: &str) -> usize {"),
            "{wire:?}: {first}"
        );
        assert!(
            first.contains("src/config.rs:7 in load"),
            "{wire:?}: {first}"
        );
        assert!(first.contains("Remembered #"), "{wire:?}: {first}");

        let second = outputs(&mock, 2).join("\n---\n");
        assert!(
            second.contains("[preference] the user prefers tabs"),
            "{wire:?}: {second}"
        );
        assert!(
            second.contains("[todo normal] document parse_config"),
            "{wire:?}: {second}"
        );
        assert!(
            second.contains("unknown symbol kind `sandwich` (expected one of: module,"),
            "an unknown kind is an argument error, in `mira symbols --kind`'s words: {second}"
        );

        let third = outputs(&mock, 3).join("\n---\n");
        assert!(
            third.contains("[active high 0%] ship v1"),
            "{wire:?}: {third}"
        );
        assert!(third.contains("document parse_config"), "{wire:?}: {third}");

        // The same store the CLI reads: the memory and the task are really there.
        let remembered: i64 = s
            .store
            .read(|c| {
                c.query_row(
                    "SELECT count(*) FROM memories WHERE body = 'the user prefers tabs'",
                    [],
                    |r| r.get(0),
                )
            })
            .unwrap();
        assert_eq!(remembered, 1, "{wire:?}");
    }
}
