//! The tool loop end to end, per provider, against the mock server and a real SQLite store.

use crate::support::agent as agent_support;
use crate::support::mock_llm;

use agent_support::{RecordingHost, Setup, run};
use mira::agent::{AgentSettings, TurnStatus, conversation};
use mock_llm::{MockLlm, Reply, Turn, Wire};
use serde_json::Value;

/// The text of every tool result the model received in request `n`, in each wire format.
fn tool_outputs(mock: &MockLlm, n: usize) -> Vec<String> {
    let body = &mock.requests()[n].body;
    let mut out = Vec::new();
    match mock.wire {
        Wire::Responses => {
            for i in body["input"].as_array().unwrap() {
                if i["type"] == "function_call_output" {
                    out.push(i["output"].as_str().unwrap().to_string());
                }
            }
        }
        Wire::Chat => {
            for m in body["messages"].as_array().unwrap() {
                if m["role"] == "tool" {
                    out.push(m["content"].as_str().unwrap().to_string());
                }
            }
        }
        Wire::Anthropic => {
            for m in body["messages"].as_array().unwrap() {
                for b in m["content"].as_array().unwrap_or(&Vec::new()) {
                    if b["type"] == "tool_result" {
                        out.push(b["content"].as_str().unwrap().to_string());
                    }
                }
            }
        }
    }
    out
}

#[tokio::test]
async fn a_two_tool_call_turn_completes_and_records_usage_and_cost() {
    for wire in Wire::ALL {
        let s = Setup::new();
        let mock = MockLlm::start(wire).await;
        mock.push_turn(
            &Turn::text(&["Let me look."])
                .call("call_a", "read_file", r#"{"path":"src/main.rs"}"#)
                .call("call_b", "grep", r#"{"pattern":"println"}"#),
        );
        mock.push_turn(&Turn::text(&["It prints ", "hello."]).usage(2000, 1500, 30));
        let agent = s.agent(&mock, AgentSettings::default());
        let host = RecordingHost::default();
        let out = run(&agent, s.ask("what does main print?"), &host).await;
        assert_eq!(
            out.status,
            TurnStatus::Completed,
            "{wire:?}: {:?}",
            out.error
        );
        assert_eq!(out.text, "Let me look.It prints hello.");
        assert_eq!(out.usage.input_tokens, 3200, "{wire:?}");
        assert_eq!(out.usage.cached_input_tokens, 2524, "{wire:?}");
        assert!(out.cost_usd.unwrap() > 0.0);
        assert_eq!(mock.violations(), Vec::<String>::new(), "{wire:?}");

        let outputs = tool_outputs(&mock, 1);
        assert_eq!(outputs.len(), 2, "{wire:?}");
        assert!(
            outputs[0].contains("println!(\"hello\")"),
            "{wire:?}: {}",
            outputs[0]
        );
        assert!(
            outputs[1].contains("src/main.rs:2:"),
            "{wire:?}: {}",
            outputs[1]
        );

        let history = s
            .store
            .read(|c| conversation::history(c, 10, None))
            .unwrap();
        assert_eq!(history.len(), 1);
        let t = &history[0];
        assert_eq!(t.status, TurnStatus::Completed);
        assert_eq!(
            (t.input_tokens, t.cached_tokens, t.output_tokens),
            (3200, 2524, 70),
            "{wire:?}"
        );
        assert!(t.cost_usd.unwrap() > 0.0);
        let kinds: Vec<_> = t.entries.iter().map(|e| format!("{:?}", e.kind)).collect();
        assert_eq!(
            kinds,
            [
                "User",
                "Assistant",
                "ToolCall",
                "ToolCall",
                "ToolResult",
                "ToolResult",
                "Assistant"
            ],
            "{wire:?}"
        );
        let calls: i64 = s
            .store
            .read(|c| {
                c.query_row(
                    "SELECT COUNT(*) FROM tool_calls WHERE status = 'ok'",
                    [],
                    |r| r.get(0),
                )
            })
            .unwrap();
        assert_eq!(calls, 2);
    }
}

#[tokio::test]
async fn a_cut_stream_fails_the_turn_keeps_the_partial_text_and_the_next_turn_works() {
    for wire in Wire::ALL {
        let s = Setup::new();
        let mock = MockLlm::start(wire).await;
        let turn = Turn::text(&["Half an ", "answer", " that never ends"]);
        let cut = mock_llm::render(wire, &turn)
            .iter()
            .position(|f| f.contains("\"answer\""))
            .unwrap()
            + 1;
        mock.push(Reply::turn(wire, &turn).cut_after(cut));
        let agent = s.agent(&mock, AgentSettings::default());
        let host = RecordingHost::default();
        let out = run(&agent, s.ask("first question"), &host).await;
        assert_eq!(out.status, TurnStatus::Failed, "{wire:?}");
        assert_eq!(out.text, "Half an answer");
        assert!(
            out.error.as_deref().unwrap().contains("stream broke"),
            "{:?}",
            out.error
        );

        let history = s
            .store
            .read(|c| conversation::history(c, 10, None))
            .unwrap();
        let partial = history[0].entries.last().unwrap();
        assert!(partial.partial, "{wire:?}");
        assert!(
            partial.text.starts_with("Half an answer\n\n[interrupted:"),
            "{}",
            partial.text
        );

        mock.push_turn(&Turn::text(&["Second answer."]));
        let out = run(&agent, s.ask("second question"), &host).await;
        assert_eq!(
            out.status,
            TurnStatus::Completed,
            "{wire:?}: {:?}",
            out.error
        );
        let raw = &mock.requests()[1].raw;
        assert!(
            raw.contains("Half an answer") && raw.contains("[interrupted:"),
            "{wire:?}: the partial answer stays in context"
        );
        assert_eq!(mock.violations(), Vec::<String>::new(), "{wire:?}");
    }
}

#[tokio::test]
async fn malformed_tool_arguments_go_back_to_the_model_as_a_tool_error() {
    for wire in Wire::ALL {
        let s = Setup::new();
        let mock = MockLlm::start(wire).await;
        mock.push_turn(&Turn::text(&["Reading."]).call(
            "call_bad",
            "read_file",
            r#"{"path": "src/main.rs""#,
        ));
        mock.push_turn(&Turn::text(&["Retrying."]).call(
            "call_good",
            "read_file",
            r#"{"path": "src/main.rs"}"#,
        ));
        mock.push_turn(&Turn::text(&["Done."]));
        let agent = s.agent(&mock, AgentSettings::default());
        let host = RecordingHost::default();
        let out = run(&agent, s.ask("read main"), &host).await;
        assert_eq!(
            out.status,
            TurnStatus::Completed,
            "{wire:?}: {:?}",
            out.error
        );
        let first = tool_outputs(&mock, 1);
        assert!(
            first[0].starts_with("error: invalid arguments: the arguments are not valid JSON"),
            "{wire:?}: {}",
            first[0]
        );
        let second = tool_outputs(&mock, 2);
        assert!(second[1].contains("fn main()"), "{wire:?}");
        assert_eq!(mock.violations(), Vec::<String>::new(), "{wire:?}");
    }
}

#[tokio::test]
async fn limits_end_the_turn_with_a_clear_message_and_valid_history() {
    let s = Setup::new();
    let mock = MockLlm::start(Wire::Chat).await;
    for i in 0..2 {
        mock.push_turn(&Turn::text(&["again"]).call(&format!("c{i}"), "list_files", "{}"));
    }
    let mut settings = AgentSettings::default();
    settings.limits.max_iterations = 2;
    let agent = s.agent(&mock, settings);
    let out = run(&agent, s.ask("loop forever"), &RecordingHost::default()).await;
    assert_eq!(out.status, TurnStatus::Limited);
    assert!(out.error.unwrap().contains("agent.max_iterations"));

    mock.push_turn(&Turn::text(&["ok"]));
    let out = run(&agent, s.ask("next"), &RecordingHost::default()).await;
    assert_eq!(out.status, TurnStatus::Completed);
    assert_eq!(mock.violations(), Vec::<String>::new());
}

#[tokio::test]
async fn large_outputs_become_artifacts_the_model_can_page() {
    let s = Setup::new();
    let big: String = (0..3000)
        .map(|i| format!("line {i} of a long generated file\n"))
        .collect();
    s.write("big.txt", &big);
    let mock = MockLlm::start(Wire::Responses).await;
    mock.push_turn(&Turn::text(&[]).call("c1", "read_file", r#"{"path":"big.txt"}"#));
    mock.push_turn(&Turn::text(&[]).call(
        "c2",
        "read_artifact",
        r#"{"id":1,"offset":50000,"length":100}"#,
    ));
    mock.push_turn(&Turn::text(&["seen"]));
    let agent = s.agent(&mock, AgentSettings::default());
    let out = run(&agent, s.ask("read big"), &RecordingHost::default()).await;
    assert_eq!(out.status, TurnStatus::Completed, "{:?}", out.error);
    let preview = &tool_outputs(&mock, 1)[0];
    assert!(
        preview.len() < 8 * 1024,
        "preview is {} bytes",
        preview.len()
    );
    assert!(preview.contains("stored as artifact #1"), "{preview}");
    let page = &tool_outputs(&mock, 2)[1];
    assert!(page.contains("line ") && page.len() < 400, "{page}");
}

#[tokio::test]
async fn the_stable_prefix_is_byte_identical_across_consecutive_turns() {
    for wire in Wire::ALL {
        let s = Setup::new();
        let mock = MockLlm::start(wire).await;
        let agent = s.agent(&mock, AgentSettings::default());
        for q in [
            "first question about parsing",
            "second question about lexing",
            "third question about typing",
        ] {
            mock.push_turn(&Turn::text(&["An answer."]));
            let out = run(&agent, s.ask(q), &RecordingHost::default()).await;
            assert_eq!(out.status, TurnStatus::Completed);
        }
        let reqs = mock.requests();
        let (b2, b3) = (&reqs[1].body, &reqs[2].body);
        let strip = |v: &Value| {
            let mut v = v.clone();
            strip_cache_control(&mut v);
            v
        };
        let (system, list) = match wire {
            Wire::Responses => ("instructions", "input"),
            Wire::Chat => ("messages", "messages"),
            Wire::Anthropic => ("system", "messages"),
        };
        assert_eq!(
            b2["tools"].to_string(),
            b3["tools"].to_string(),
            "{wire:?}: tools differ"
        );
        if wire != Wire::Chat {
            assert_eq!(
                b2[system].to_string(),
                b3[system].to_string(),
                "{wire:?}: system differs"
            );
        }
        let l2 = strip(&b2[list]);
        let l3 = strip(&b3[list]);
        let (l2, l3) = (l2.as_array().unwrap(), l3.as_array().unwrap());
        assert!(l3.len() > l2.len());
        for (i, item) in l2.iter().enumerate() {
            assert_eq!(
                item.to_string(),
                l3[i].to_string(),
                "{wire:?}: item {i} of the prefix changed"
            );
        }
    }
}

fn strip_cache_control(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.remove("cache_control");
            m.values_mut().for_each(strip_cache_control);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_cache_control),
        _ => {}
    }
}

#[tokio::test]
async fn without_a_provider_the_turn_says_how_to_configure_one() {
    let s = Setup::new();
    let agent = mira::agent::Agent::new(
        s.store.clone(),
        mira::llm::ProviderSettings::resolve(&Default::default(), &Default::default()),
        AgentSettings::default(),
    );
    let out = run(&agent, s.ask("hello"), &RecordingHost::default()).await;
    assert_eq!(out.status, TurnStatus::Failed);
    assert!(out.error.unwrap().contains("OPENAI_API_KEY"));
}

#[tokio::test]
async fn the_oldest_half_is_summarised_and_recalled_when_relevant() {
    let s = Setup::new();
    let mock = MockLlm::start(Wire::Chat).await;
    let settings = AgentSettings {
        summarize_after_tokens: 20,
        ..AgentSettings::default()
    };
    let agent = s.agent(&mock, settings);
    mock.push_turn(&Turn::text(&[
        "The flux capacitor lives in src/flux.rs and needs 1.21 gigawatts to run at all.",
    ]));
    mock.push_turn(&Turn::text(&[
        "SUMMARY: the user asked about the flux capacitor (src/flux.rs).",
    ]));
    let out = run(
        &agent,
        s.ask("where does the flux capacitor live in this codebase, and what does it need?"),
        &RecordingHost::default(),
    )
    .await;
    assert_eq!(out.status, TurnStatus::Completed);
    assert_eq!(mock.requests().len(), 2, "a summary call followed the turn");
    let summary_request = &mock.requests()[1].raw;
    assert!(
        summary_request.contains("flux capacitor lives in src/flux.rs"),
        "the summary request carries the old turn"
    );

    let sums = s.store.read(conversation::summaries).unwrap();
    assert_eq!(sums.len(), 1);
    let max_id: i64 = s
        .store
        .read(|c| c.query_row("SELECT MAX(id) FROM messages", [], |r| r.get(0)))
        .unwrap();
    assert_eq!(
        (sums[0].first_message_id, sums[0].last_message_id),
        (1, max_id),
        "no gap: every message is covered"
    );

    mock.push_turn(&Turn::text(&["Yes."]));
    let out = run(
        &agent,
        s.ask("remind me how many gigawatts the capacitor needed?"),
        &RecordingHost::default(),
    )
    .await;
    assert_eq!(out.status, TurnStatus::Completed);
    let body = &mock.requests()[2].body;
    let messages = body["messages"].as_array().unwrap();
    let system = messages[0]["content"].as_str().unwrap();
    assert!(
        system.contains("SUMMARY: the user asked about the flux capacitor"),
        "{system}"
    );
    assert_eq!(
        messages.len(),
        2,
        "summarised turns are not repeated verbatim: {messages:?}"
    );
    let user = messages[1]["content"].as_str().unwrap();
    assert!(
        user.contains("From earlier in the conversation") && user.contains("1.21 gigawatts"),
        "{user}"
    );
    assert_eq!(mock.violations(), Vec::<String>::new());
}

#[tokio::test]
async fn deepseek_reasoning_goes_back_with_its_tool_calls() {
    let s = Setup::new();
    let mock = MockLlm::start(Wire::Chat).await;
    mock.push_turn(
        &Turn::text(&[])
            .reasoning("I should read main.rs first.")
            .call("call_00_abc", "read_file", r#"{"path": "src/main.rs"}"#),
    );
    mock.push_turn(&Turn::text(&["It prints hello."]));
    let mut p = mira::llm::ProviderSettings::new(
        mira::llm::ProviderKind::OpenAiChat,
        mock.base_url(),
        "deepseek-v4-flash",
    )
    .with_key(secrecy::SecretString::from("k-test-deepseek"));
    p.flavour = mira::llm::ChatFlavour::DeepSeek;
    let agent = mira::agent::Agent::new(s.store.clone(), Ok(p), AgentSettings::default());
    let out = run(
        &agent,
        s.ask("what does main print?"),
        &RecordingHost::default(),
    )
    .await;
    assert_eq!(out.status, TurnStatus::Completed, "{:?}", out.error);
    let second = &mock.requests()[1].body;
    let assistant = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap()
        .clone();
    assert_eq!(
        assistant["reasoning_content"],
        "I should read main.rs first."
    );
    assert_eq!(assistant["tool_calls"][0]["id"], "call_00_abc");
    // …and in later turns too, from the store.
    mock.push_turn(&Turn::text(&["Yes."]));
    run(&agent, s.ask("sure?"), &RecordingHost::default()).await;
    let third = mock.requests()[2].raw.clone();
    assert!(
        third.contains("\"reasoning_content\":\"I should read main.rs first.\""),
        "{third}"
    );
    assert_eq!(mock.violations(), Vec::<String>::new());
}

#[tokio::test]
async fn sections_are_cut_to_their_budgets() {
    let s = Setup::new();
    let mock = MockLlm::start(Wire::Responses).await;
    let mut settings = AgentSettings::default();
    settings.budgets.editor = 200;
    let agent = s.agent(&mock, settings);
    let mut ask = s.ask("explain this selection");
    let selection: String = (0..2000)
        .map(|i| format!("let value_{i} = compute({i});\n"))
        .collect();
    ask.editor = Some(mira::agent::EditorContext {
        path: Some("src/main.rs".into()),
        selection: Some(selection),
        ..Default::default()
    });
    let (req, sections) = agent.preview(&ask).await.unwrap();
    let editor = sections.iter().find(|x| x.name == "editor").unwrap();
    assert!(editor.truncated && editor.tokens <= 200, "{editor:?}");
    let user = match req.items.last().unwrap() {
        mira::llm::Item::User(u) => u.clone(),
        other => panic!("{other:?}"),
    };
    assert!(
        user.contains("let value_0 = compute(0);") && !user.contains("value_1999"),
        "cut from the end"
    );
    assert!(
        user.ends_with("explain this selection"),
        "the question itself is never cut"
    );
    assert!(mock.requests().is_empty());
}

#[tokio::test]
async fn the_cost_cap_and_the_tool_call_limit_stop_the_turn() {
    let s = Setup::new();
    let mock = MockLlm::start(Wire::Anthropic).await;
    let mut capped = AgentSettings::default();
    capped.limits.cost_cap_usd = 0.001;
    let agent = s.agent(&mock, capped);
    mock.push_turn(
        &Turn::text(&["Working."])
            .call("t1", "list_files", "{}")
            .usage(200_000, 0, 1000),
    );
    let out = run(&agent, s.ask("expensive"), &RecordingHost::default()).await;
    assert_eq!(out.status, TurnStatus::Limited);
    assert!(
        out.error.as_deref().unwrap().contains("agent.cost_cap_usd"),
        "{:?}",
        out.error
    );
    assert_eq!(mock.requests().len(), 1, "no model call past the cap");

    let mut few = AgentSettings::default();
    few.limits.max_tool_calls = 1;
    let agent = s.agent(&mock, few);
    mock.push_turn(
        &Turn::text(&[])
            .call("a", "list_files", "{}")
            .call("b", "list_files", "{}"),
    );
    let host = RecordingHost::default();
    let out = run(&agent, s.ask("two calls"), &host).await;
    assert_eq!(out.status, TurnStatus::Limited);
    assert!(
        out.error
            .as_deref()
            .unwrap()
            .contains("agent.max_tool_calls")
    );
    assert_eq!(host.tool_results().len(), 1, "only one tool ran");
    mock.push_turn(&Turn::text(&["ok"]));
    run(&agent, s.ask("next"), &RecordingHost::default()).await;
    assert_eq!(
        mock.violations(),
        Vec::<String>::new(),
        "the unrun call still got a result"
    );
}

#[tokio::test]
async fn with_responses_store_the_tool_loop_continues_by_previous_response_id() {
    let s = Setup::new();
    let mock = MockLlm::start(Wire::Responses).await;
    mock.push_turn(
        &Turn::text(&["Looking."])
            .call("call_a", "read_file", r#"{"path":"src/main.rs"}"#)
            .call("call_b", "list_files", "{}"),
    );
    mock.push_turn(&Turn::text(&[]).call("call_c", "grep", r#"{"pattern":"main"}"#));
    mock.push_turn(&Turn::text(&["Done."]));
    let mut p = mira::llm::ProviderSettings::new(
        mira::llm::ProviderKind::OpenAi,
        mock.base_url(),
        "gpt-5.1",
    )
    .with_key(secrecy::SecretString::from("k-test"));
    p.responses_store = true;
    let agent = mira::agent::Agent::new(s.store.clone(), Ok(p), AgentSettings::default());
    let out = run(&agent, s.ask("look around"), &RecordingHost::default()).await;
    assert_eq!(out.status, TurnStatus::Completed, "{:?}", out.error);
    let reqs = mock.requests();
    assert_eq!(reqs[0].body["store"], true);
    assert!(reqs[0].body.get("previous_response_id").is_none());
    assert!(
        reqs[0].body.get("include").is_none(),
        "no encrypted reasoning needed when stored"
    );
    let first_id = reqs[1].body["previous_response_id"]
        .as_str()
        .unwrap()
        .to_string();
    let kinds: Vec<&str> = reqs[1].body["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["function_call_output", "function_call_output"],
        "only what is new"
    );
    assert_ne!(
        reqs[2].body["previous_response_id"].as_str().unwrap(),
        first_id,
        "the chain moves on"
    );
    assert_eq!(reqs[2].body["input"].as_array().unwrap().len(), 1);
    assert_eq!(mock.violations(), Vec::<String>::new());

    // A new turn starts a fresh chain from the stored conversation.
    mock.push_turn(&Turn::text(&["Again."]));
    run(&agent, s.ask("and now?"), &RecordingHost::default()).await;
    let last = mock
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.body.to_string().contains("and now?"))
        .unwrap()
        .body;
    assert!(last.get("previous_response_id").is_none());
    assert!(last["input"].as_array().unwrap().len() > 3);
    assert_eq!(mock.violations(), Vec::<String>::new());
}

/// A small window (configured here; learned from the server in tests/it/local_model.rs): the
/// request shrinks to fit, the tools are left out, the project's AGENTS.md stays whole, the
/// answer is capped, and a question that cannot fit fails before any request.
#[tokio::test]
async fn a_small_window_shrinks_the_request_and_refuses_a_question_that_cannot_fit() {
    let s = Setup::new();
    std::fs::write(s.root.join("AGENTS.md"), "Use tabs, never spaces.\n").unwrap();
    let mock = MockLlm::start(Wire::Chat).await;
    let settings = AgentSettings::default();
    let agent = {
        let kind = mock.wire.provider().parse().unwrap();
        let mut p = mira::llm::ProviderSettings::new(kind, mock.base_url(), mock.wire.model());
        p.context_window = Some(2048);
        let p = p.with_key(secrecy::SecretString::from("test-key-not-secret"));
        mira::agent::Agent::new(s.store.clone(), Ok(p), settings)
    };
    for i in 0..8 {
        // A small window summarises soon: a reply for the summary too, whenever it comes.
        mock.push_turn(&Turn::text(&["Noted."]));
        mock.push_turn(&Turn::text(&["Noted."]));
        let long = format!(
            "Question {i}: {}",
            "why does the retry loop back off exponentially? ".repeat(20)
        );
        let out = run(&agent, s.ask(&long), &RecordingHost::default()).await;
        assert_eq!(out.status, TurnStatus::Completed, "{:?}", out.error);
    }
    mock.push_turn(&Turn::text(&["Fine."]));
    mock.push_turn(&Turn::text(&["Fine."]));
    let out = run(&agent, s.ask("and now?"), &RecordingHost::default()).await;
    assert_eq!(out.status, TurnStatus::Completed, "{:?}", out.error);
    let last = mock
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.body.to_string().contains("and now?"))
        .unwrap()
        .body;
    assert!(last.get("tools").is_none(), "no room for the tools: {last}");
    assert_eq!(
        last["max_tokens"], 512,
        "a quarter of the window for the answer"
    );
    let sent = last["messages"].to_string();
    assert!(
        sent.contains("Use tabs, never spaces."),
        "AGENTS.md is sent whole"
    );
    assert!(sent.contains("and now?"));
    assert!(!sent.contains("Question 0:"), "the oldest history was cut");
    let prompt = mira::agent::tokens::count(&sent);
    assert!(prompt <= (2048 - 512) * 3 / 4 + 200, "{prompt} tokens sent");

    let before = mock.requests().len();
    let huge = "explain this: ".to_string() + &"a very long stack trace line\n".repeat(400);
    let out = run(&agent, s.ask(&huge), &RecordingHost::default()).await;
    assert_eq!(out.status, TurnStatus::Failed);
    let error = out.error.unwrap();
    assert!(
        error.contains("too long for the model") && error.contains("2048 tokens (configured)"),
        "{error}"
    );
    assert_eq!(mock.requests().len(), before, "nothing was sent");
    let kept = s.store.read(|c| conversation::history(c, 1, None)).unwrap();
    assert!(
        format!("{kept:?}").contains("a very long stack trace line"),
        "the question is kept"
    );
    assert_eq!(mock.violations(), Vec::<String>::new());
}
