//! Each provider client against the mock server speaking that provider's wire format.

use crate::support::mock_llm;

use std::time::{Duration, Instant};

use mira::llm::{
    Client, Delta, Item, LlmError, ProviderSettings, Request, RetryPolicy, StopReason, ToolResult,
};
use mock_llm::{MockLlm, Reply, Turn, Wire};
use secrecy::SecretString;
use tokio_util::sync::CancellationToken;

fn client(mock: &MockLlm) -> Client {
    let kind = mock.wire.provider().parse().unwrap();
    let mut s = ProviderSettings::new(kind, mock.base_url(), mock.wire.model())
        .with_key(SecretString::from("test-key"));
    s.retry = RetryPolicy {
        max_attempts: 3,
        base_delay: Duration::from_millis(20),
        max_delay: Duration::from_millis(200),
    };
    Client::new(s).unwrap()
}

fn request(items: Vec<Item>) -> Request {
    Request {
        system: "You are Mira.".into(),
        items,
        tools: Vec::new(),
        effort: None,
    }
}

#[tokio::test]
async fn every_provider_streams_text_two_tool_calls_and_usage() {
    for wire in Wire::ALL {
        let mock = MockLlm::start(wire).await;
        mock.push_turn(
            &Turn::text(&["Reading ", "ünïcode ✓."])
                .reasoning("I should read both files.")
                .call("call_1", "read_file", r#"{"path":"src/main.rs"}"#)
                .call("call_2", "grep", r#"{"pattern":"fn main"}"#),
        );
        let c = client(&mock);
        let mut deltas = Vec::new();
        let done = c
            .complete(
                &request(vec![Item::User("read main".into())]),
                &mut |d| deltas.push(d),
                &CancellationToken::new(),
            )
            .await
            .unwrap_or_else(|f| panic!("{wire:?}: {}", f.error));
        assert_eq!(done.text(), "Reading ünïcode ✓.", "{wire:?}");
        let calls: Vec<_> = done
            .tool_calls()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            calls,
            vec![
                ("call_1", "read_file", r#"{"path":"src/main.rs"}"#),
                ("call_2", "grep", r#"{"pattern":"fn main"}"#)
            ],
            "{wire:?}"
        );
        assert_eq!(done.stop, StopReason::ToolUse, "{wire:?}");
        assert_eq!(
            done.usage.input_tokens, 1200,
            "{wire:?}: prompt total includes cache reads"
        );
        assert_eq!(done.usage.cached_input_tokens, 1024, "{wire:?}");
        assert_eq!(done.usage.output_tokens, 40, "{wire:?}");
        assert!(
            deltas.contains(&Delta::Text("Reading ".into())),
            "{wire:?}: {deltas:?}"
        );
        assert!(
            deltas
                .iter()
                .any(|d| matches!(d, Delta::ToolCallStarted { name, .. } if name == "grep")),
            "{wire:?}"
        );
        let cost = c
            .settings()
            .prices
            .cost(&done.model, &done.usage)
            .expect("built-in price");
        assert!(cost > 0.0, "{wire:?}");

        // The follow-up carries both results; the mock checks each answers its call.
        let mut items = vec![Item::User("read main".into())];
        items.extend(done.items.clone());
        for id in ["call_1", "call_2"] {
            items.push(Item::ToolResult(ToolResult {
                call_id: id.into(),
                content: "fn main() {}".into(),
                is_error: false,
            }));
        }
        mock.push_turn(&Turn::text(&["Done."]));
        let second = c
            .complete(&request(items), &mut |_| {}, &CancellationToken::new())
            .await
            .map_err(|f| f.error)
            .unwrap();
        assert_eq!(second.text(), "Done.");
        assert_eq!(mock.violations(), Vec::<String>::new(), "{wire:?}");
    }
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried_honouring_retry_after() {
    for wire in Wire::ALL {
        let mock = MockLlm::start(wire).await;
        mock.push(Reply::status(429).retry_after("0.3"));
        mock.push(Reply::status(503));
        mock.push_turn(&Turn::text(&["ok"]));
        let started = Instant::now();
        let done = client(&mock)
            .complete(
                &request(vec![Item::User("hi".into())]),
                &mut |_| {},
                &CancellationToken::new(),
            )
            .await
            .map_err(|f| f.error)
            .unwrap();
        assert_eq!(done.text(), "ok");
        assert_eq!(mock.requests().len(), 3, "{wire:?}");
        assert!(
            started.elapsed() >= Duration::from_millis(300),
            "{wire:?}: Retry-After ignored"
        );
    }
}

#[tokio::test]
async fn retries_give_up_with_a_clear_error() {
    let mock = MockLlm::start(Wire::Chat).await;
    for _ in 0..3 {
        mock.push(Reply::status(429));
    }
    let err = client(&mock)
        .complete(
            &request(vec![Item::User("hi".into())]),
            &mut |_| {},
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err.error, LlmError::Http { status: 429, .. }),
        "{:?}",
        err.error
    );
    assert!(
        err.error.to_string().contains("rate limited"),
        "{}",
        err.error
    );
}

#[tokio::test]
async fn a_stream_cut_midway_fails_with_the_partial_text() {
    for wire in Wire::ALL {
        let mock = MockLlm::start(wire).await;
        let turn = Turn::text(&[
            "The first half",
            " and the second half",
            " and more",
            " and the end.",
        ]);
        let frames = mock_llm::render(wire, &turn);
        let cut = frames
            .iter()
            .position(|f| f.contains("second half"))
            .unwrap()
            + 1;
        mock.push(Reply::turn(wire, &turn).cut_after(cut));
        let c = client(&mock);
        let failure = c
            .complete(
                &request(vec![Item::User("hi".into())]),
                &mut |_| {},
                &CancellationToken::new(),
            )
            .await
            .unwrap_err();
        assert!(
            matches!(failure.error, LlmError::Stream { .. }),
            "{wire:?}: {:?}",
            failure.error
        );
        assert_eq!(
            failure.partial_text, "The first half and the second half",
            "{wire:?}"
        );
        assert_eq!(
            mock.requests().len(),
            1,
            "{wire:?}: a broken stream is not silently retried"
        );
    }
}

#[tokio::test]
async fn cancellation_stops_a_slow_stream_promptly() {
    let mock = MockLlm::start(Wire::Anthropic).await;
    mock.push(
        Reply::turn(Wire::Anthropic, &Turn::text(&["a", "b", "c"])).gap(Duration::from_secs(2)),
    );
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        c2.cancel();
    });
    let started = Instant::now();
    let err = client(&mock)
        .complete(
            &request(vec![Item::User("hi".into())]),
            &mut |_| {},
            &cancel,
        )
        .await
        .unwrap_err();
    assert!(matches!(err.error, LlmError::Cancelled));
    assert!(started.elapsed() < Duration::from_secs(1));
}

#[test]
fn no_provider_says_how_to_set_one() {
    use mira::llm::{ApiKeys, ProviderConfig};
    let err = ProviderSettings::resolve(&ProviderConfig::default(), &ApiKeys::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("OPENAI_API_KEY")
            && err.contains("ANTHROPIC_API_KEY")
            && err.contains("DEEPSEEK_API_KEY"),
        "{err}"
    );
    assert!(
        err.contains("[provider]") && err.contains("mira doctor"),
        "{err}"
    );
    let keys = ApiKeys {
        deepseek: Some(SecretString::from("sk-x-deepseek-key")),
        ..ApiKeys::default()
    };
    let deepseek = ProviderSettings::resolve(&ProviderConfig::default(), &keys).unwrap();
    assert_eq!(deepseek.base_url, "https://api.deepseek.com");
    assert_eq!(deepseek.flavour, mira::llm::ChatFlavour::DeepSeek);
    assert!(
        !format!("{deepseek:?}").contains("sk-x-deepseek-key"),
        "keys never show in Debug output"
    );
    let local = ProviderConfig {
        base_url: Some("http://127.0.0.1:11434/v1".into()),
        ..ProviderConfig::default()
    };
    let ollama = ProviderSettings::resolve(&local, &ApiKeys::default()).unwrap();
    assert_eq!(ollama.flavour, mira::llm::ChatFlavour::Ollama);
}

#[test]
fn the_config_the_message_suggests_actually_works() {
    use mira::config::{ConfigInputs, Env};
    use mira::llm::{ApiKeys, ProviderConfig};
    let err = ProviderSettings::resolve(&ProviderConfig::default(), &ApiKeys::default())
        .unwrap_err()
        .to_string();
    let snippet: String = err
        .lines()
        .skip_while(|l| l.trim() != "[provider]")
        .take_while(|l| l.starts_with("    "))
        .map(|l| format!("{}\n", l.trim()))
        .collect();
    assert!(snippet.starts_with("[provider]\n"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config.toml");
    std::fs::write(&file, &snippet).unwrap();
    let loaded = mira::config::load(&ConfigInputs {
        env: Env::from_pairs([("HOME", dir.path().to_str().unwrap())]),
        user_file: Some(file),
        project_root: None,
        editor: None,
    })
    .unwrap();
    assert!(loaded.unknown.is_empty(), "{:?}", loaded.unknown);
    let s = ProviderSettings::resolve(&loaded.config.provider, &loaded.keys).unwrap();
    assert_eq!(
        (s.base_url.as_str(), s.model.as_str()),
        ("http://127.0.0.1:11434/v1", "qwen3")
    );
}
