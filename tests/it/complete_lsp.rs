//! Inline completion end to end: the real `mira lsp` binary over stdio against the loopback
//! mock FIM server in every wire format. Completions arrive; a `$/cancelRequest` closes the
//! provider's stream (seen at the mock); a superseded request is answered empty, never late;
//! the cache answers a typed-through or re-typed prefix with no provider call; the suggestion
//! never repeats the text after the cursor; the prompt carries an imported symbol's
//! signature and a standing preference; usage shows in `mira usage`; the popup for Helix.
//! Every item has only the fields LSP 3.18 gives an InlineCompletionItem.

use crate::support as common;
use crate::support::mock_fim;
use crate::support::mock_llm;

use std::time::Duration;

use common::{Sandbox, TestServer};
use mock_fim::{FimWire, MockFim, Reply, Served};
use serde_json::{Value, json};

const MAIN: &str = "fn main() {\n    let total = compute(\n}\n";

async fn start(sandbox: &Sandbox, mock: &MockFim, extra: Value) -> (TestServer, Value) {
    let mut completion = json!({
        "provider": mock.wire.provider(),
        "base_url": mock.base_url(),
        "debounce_ms": 0,
    });
    for (k, v) in extra.as_object().cloned().unwrap_or_default() {
        completion[k] = v;
    }
    let mut server = TestServer::binary(sandbox);
    let init = server
        .initialize(json!({
            "processId": null,
            "rootUri": sandbox.project_uri(),
            "workspaceFolders": [{"uri": sandbox.project_uri(), "name": "project"}],
            "capabilities": {"textDocument": {"inlineCompletion": {}}},
            "clientInfo": {"name": "mira-tests"},
            "initializationOptions": {"mira": {"completion": completion}}
        }))
        .await;
    (server, init)
}

fn inline_params(uri: &str, line: u32, character: u32, trigger: u32) -> Value {
    json!({
        "textDocument": {"uri": uri},
        "position": {"line": line, "character": character},
        "context": {"triggerKind": trigger}
    })
}

async fn inline(s: &mut TestServer, uri: &str, line: u32, character: u32) -> Vec<String> {
    let r = s
        .request(
            "textDocument/inlineCompletion",
            inline_params(uri, line, character, 1),
        )
        .await
        .expect("inlineCompletion answers");
    texts(&r)
}

/// LSP 3.18's InlineCompletionItem: no other field (`insertTextFormat` is not one).
const ITEM_FIELDS: &[&str] = &["insertText", "filterText", "range", "command"];

fn texts(r: &Value) -> Vec<String> {
    let items = r["items"]
        .as_array()
        .unwrap_or_else(|| panic!("an InlineCompletionList: {r}"));
    for item in items {
        let fields = item.as_object().unwrap().keys();
        let extra: Vec<&String> = fields
            .filter(|k| !ITEM_FIELDS.contains(&k.as_str()))
            .collect();
        assert!(
            extra.is_empty(),
            "not in LSP 3.18's InlineCompletionItem: {extra:?}"
        );
    }
    items
        .iter()
        .map(|i| i["insertText"].as_str().unwrap().to_string())
        .collect()
}

async fn change(
    s: &mut TestServer,
    uri: &str,
    version: i32,
    line: u32,
    ch: u32,
    end_ch: u32,
    text: &str,
) {
    s.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": {"line": line, "character": ch},
                "end": {"line": line, "character": end_ch}}, "text": text}]
        }),
    )
    .await;
}

/// Wait for a `window/logMessage` containing `needle` (other log lines are skipped).
async fn wait_log(s: &mut TestServer, needle: &str) -> String {
    let mut seen = Vec::new();
    for _ in 0..20 {
        let n = s.notification("window/logMessage").await;
        let m = n["params"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if m.contains(needle) {
            return m;
        }
        seen.push(m);
    }
    panic!("no log line with `{needle}`: {seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completions_arrive_in_every_wire_format() {
    for wire in FimWire::ALL {
        let sandbox = Sandbox::new();
        let mock = MockFim::start(wire).await;
        mock.push(Reply::text(&["1, ", "2", ");"]));
        let (mut s, init) = start(&sandbox, &mock, json!({})).await;
        assert_eq!(
            init["capabilities"]["inlineCompletionProvider"],
            json!(true),
            "{wire:?}: advertised once a provider is configured"
        );
        assert!(
            init["capabilities"]["completionProvider"].is_null(),
            "popup is opt-in"
        );
        let uri = sandbox.file_uri("src/main.rs");
        s.open(&uri, "rust", MAIN).await;
        let got = inline(&mut s, &uri, 1, 24).await;
        assert_eq!(got, vec!["1, 2);".to_string()], "{wire:?}");
        let reqs = mock.requests();
        assert_eq!(reqs.len(), 1, "{wire:?}");
        let prompt = wire.prompt_of(&reqs[0].body);
        assert!(
            prompt.ends_with("let total = compute("),
            "{wire:?}: {prompt}"
        );
        assert_eq!(wire.suffix_of(&reqs[0].body), "\n}\n", "{wire:?}");
        assert!(
            mock.violations().is_empty(),
            "{wire:?}: {:?}",
            mock.violations()
        );
        assert_eq!(s.shutdown().await, 0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_is_advertised_without_a_provider() {
    let sandbox = Sandbox::new();
    let mut s = TestServer::binary(&sandbox);
    let init = s.initialize_default(&sandbox, &["utf-16"]).await;
    assert!(init["capabilities"]["inlineCompletionProvider"].is_null());
    assert!(init["capabilities"]["completionProvider"].is_null());
    assert_eq!(s.shutdown().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_that_cannot_work_is_reported_and_not_advertised() {
    let sandbox = Sandbox::new();
    let mut s = TestServer::binary(&sandbox);
    let init = s
        .initialize(json!({
            "processId": null,
            "rootUri": sandbox.project_uri(),
            "capabilities": {},
            "initializationOptions": {"mira": {"completion": {"provider": "openai-completions"}}}
        }))
        .await;
    assert!(init["capabilities"]["inlineCompletionProvider"].is_null());
    wait_log(&mut s, "completion.base_url").await;
    assert_eq!(s.shutdown().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_request_closes_the_provider_stream() {
    for wire in [FimWire::Completions, FimWire::Ollama] {
        let sandbox = Sandbox::new();
        let mock = MockFim::start(wire).await;
        mock.push(Reply::slow(200, Duration::from_millis(50)));
        let (mut s, _) = start(&sandbox, &mock, json!({})).await;
        let uri = sandbox.file_uri("src/main.rs");
        s.open(&uri, "rust", MAIN).await;
        let id = s
            .request_start(
                "textDocument/inlineCompletion",
                inline_params(&uri, 1, 24, 1),
            )
            .await;
        assert_eq!(mock.wait_requests(1).await.len(), 1);
        tokio::time::sleep(Duration::from_millis(150)).await;
        s.notify("$/cancelRequest", json!({"id": id})).await;
        let err = s
            .response(id)
            .await
            .expect_err("a cancelled request answers an error");
        assert_eq!(err["code"], -32800, "{err}");
        match mock.wait_served(0).await {
            Served::ClosedByClient { after, of } => {
                assert!(after < of, "{wire:?}: closed after {after} of {of} parts")
            }
            other => panic!("{wire:?}: the stream was not closed by Mira: {other:?}"),
        }
        assert_eq!(s.shutdown().await, 0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_superseded_request_is_answered_empty_at_once_and_its_stream_dropped() {
    let sandbox = Sandbox::new();
    let mock = MockFim::start(FimWire::Infill).await;
    mock.push(Reply::text(&["stale()"]).delayed(Duration::from_secs(5)));
    mock.push(Reply::text(&["1, 2);"]));
    let (mut s, _) = start(&sandbox, &mock, json!({})).await;
    let uri = sandbox.file_uri("src/main.rs");
    s.open(&uri, "rust", MAIN).await;
    let first = s
        .request_start(
            "textDocument/inlineCompletion",
            inline_params(&uri, 1, 24, 2),
        )
        .await;
    assert_eq!(mock.wait_requests(1).await.len(), 1);
    change(&mut s, &uri, 1, 1, 24, 24, " ").await;
    let started = std::time::Instant::now();
    let second = s
        .request_start(
            "textDocument/inlineCompletion",
            inline_params(&uri, 1, 25, 2),
        )
        .await;
    let old = s
        .response(first)
        .await
        .expect("the superseded request is answered");
    assert!(
        texts(&old).is_empty(),
        "never a late, stale suggestion: {old}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "answered at once"
    );
    let new = s.response(second).await.expect("the newer request answers");
    assert_eq!(texts(&new), vec!["1, 2);".to_string()]);
    assert!(matches!(
        mock.wait_served(0).await,
        Served::ClosedByClient { .. }
    ));
    assert_eq!(s.shutdown().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cache_answers_typed_through_and_retyped_prefixes_without_a_call() {
    let sandbox = Sandbox::new();
    let mock = MockFim::start(FimWire::Completions).await;
    mock.push(Reply::text(&["1, ", "2);"]));
    let (mut s, _) = start(&sandbox, &mock, json!({})).await;
    let uri = sandbox.file_uri("src/main.rs");
    s.open(&uri, "rust", MAIN).await;
    assert_eq!(inline(&mut s, &uri, 1, 24).await, vec!["1, 2);"]);
    // Type what was suggested: the rest comes from the cache.
    change(&mut s, &uri, 1, 1, 24, 24, "1, ").await;
    assert_eq!(inline(&mut s, &uri, 1, 27).await, vec!["2);"]);
    // Backspace to where it started: the whole suggestion again.
    change(&mut s, &uri, 2, 1, 24, 27, "").await;
    assert_eq!(inline(&mut s, &uri, 1, 24).await, vec!["1, 2);"]);
    assert_eq!(
        mock.requests().len(),
        1,
        "no provider call for cached prefixes"
    );
    assert_eq!(s.shutdown().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_suggestion_never_repeats_the_text_after_the_cursor() {
    let sandbox = Sandbox::new();
    let mock = MockFim::start(FimWire::Ollama).await;
    mock.push(Reply::text(&["a, b", ");\nmore()"]));
    mock.push(Reply::text(&["\n    let y = 2;", "\n}\n"]));
    let (mut s, _) = start(&sandbox, &mock, json!({})).await;
    let uri = sandbox.file_uri("src/lib.rs");
    s.open(&uri, "rust", "fn f() {\n    g();\n}\n").await;
    // Inside `g(|);`: one line, without the `);` already there.
    assert_eq!(inline(&mut s, &uri, 1, 6).await, vec!["a, b"]);
    let body = &mock.requests()[0].body;
    assert_eq!(
        body["options"]["stop"],
        json!(["\n"]),
        "single line asked for"
    );
    // At the end of `fn f() {`: several lines, without the closing `}` that follows.
    assert_eq!(inline(&mut s, &uri, 1, 8).await, vec!["\n    let y = 2;"]);
    assert_eq!(s.shutdown().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_pauses_completions_and_a_cut_stream_shows_nothing() {
    let sandbox = Sandbox::new();
    let mock = MockFim::start(FimWire::Completions).await;
    mock.push(Reply::text(&["x", "y", "z"]).cut_after(1));
    mock.push(Reply::status(429, Some("30")));
    let (mut s, _) = start(&sandbox, &mock, json!({})).await;
    let uri = sandbox.file_uri("src/main.rs");
    s.open(&uri, "rust", MAIN).await;
    assert!(
        inline(&mut s, &uri, 1, 24).await.is_empty(),
        "a broken stream shows nothing"
    );
    assert!(inline(&mut s, &uri, 1, 23).await.is_empty());
    assert!(
        inline(&mut s, &uri, 1, 22).await.is_empty(),
        "paused: no call"
    );
    assert_eq!(
        mock.requests().len(),
        2,
        "no retry, and no call while paused"
    );
    wait_log(&mut s, "the completion stream broke").await;
    wait_log(&mut s, "rate limiting").await;
    assert_eq!(s.shutdown().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_prompt_carries_an_imported_signature_and_a_standing_preference() {
    let sandbox = Sandbox::new();
    let src = sandbox.project().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("util.rs"),
        "/// Reads the settings file.\npub fn parse_config(path: &str, strict: bool) -> Config {\n    todo!()\n}\n",
    )
    .unwrap();
    let main = "use crate::util::parse_config;\n\nfn main() {\n    let c = \n}\n";
    std::fs::write(src.join("main.rs"), main).unwrap();
    let mock = MockFim::start(FimWire::Completions).await;
    mock.push(Reply::text(&["parse_config(\"a\", true);"]));
    let (mut s, _) = start(&sandbox, &mock, json!({})).await;
    s.request(
        "workspace/executeCommand",
        json!({"command": "mira.remember", "arguments": [{"text": "Prefer early returns over nested ifs", "kind": "preference"}]}),
    )
    .await
    .expect("remember");
    // The cold index must have seen util.rs.
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let r = s
            .request("workspace/symbol", json!({"query": "parse_config"}))
            .await
            .unwrap();
        if r.as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "util.rs never indexed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let uri = sandbox.file_uri("src/main.rs");
    s.open(&uri, "rust", main).await;
    assert_eq!(
        inline(&mut s, &uri, 3, 12).await,
        vec!["parse_config(\"a\", true);"]
    );
    let prompt = FimWire::Completions.prompt_of(&mock.requests()[0].body);
    assert!(
        prompt.contains("src/util.rs: pub fn parse_config(path: &str, strict: bool) -> Config"),
        "{prompt}"
    );
    assert!(prompt.contains("Reads the settings file."), "{prompt}");
    assert!(
        prompt.contains("// preference: Prefer early returns over nested ifs"),
        "{prompt}"
    );
    assert!(prompt.ends_with("fn main() {\n    let c = "), "{prompt}");
    // Usage is written off the runtime, after the answer.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(s.shutdown().await, 0);

    // Usage is recorded and shown apart from chat turns.
    let out = sandbox.mira().arg("usage").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("Completions"), "{text}");
    assert!(
        text.lines().any(|l| l.contains("openai-completions")
            && l.contains("default")
            && l.contains("300")),
        "{text}"
    );
}

/// Issue 20, item 3: the imported definition is open and edited, not saved. The prompt
/// carries the buffer's signature, not the one on disk (the symbols in reach used to be
/// read from the table without syncing open buffers).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_prompt_carries_a_signature_edited_in_an_open_unsaved_buffer() {
    let sandbox = Sandbox::new();
    let src = sandbox.project().join("src");
    std::fs::create_dir_all(&src).unwrap();
    let util = "pub fn parse_config(path: &str) -> Config {\n    todo!()\n}\n";
    std::fs::write(src.join("util.rs"), util).unwrap();
    let main = "use crate::util::parse_config;\n\nfn main() {\n    let c = \n}\n";
    std::fs::write(src.join("main.rs"), main).unwrap();
    let mock = MockFim::start(FimWire::Completions).await;
    mock.push(Reply::text(&["parse_config(\"a\", true, 3);"]));
    let (mut s, _) = start(&sandbox, &mock, json!({})).await;
    // The first crawl keeps the index busy past the completion's wait for its context.
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let r = s
            .request(
                "workspace/executeCommand",
                json!({"command": "mira.status"}),
            )
            .await
            .unwrap();
        if r["index"]["ready"] == true {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never indexed: {r}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let util_uri = sandbox.file_uri("src/util.rs");
    s.open(&util_uri, "rust", util).await;
    s.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": util_uri, "version": 1}, "contentChanges": [{
            "range": {"start": {"line": 0, "character": 30}, "end": {"line": 0, "character": 30}},
            "text": ", strict: bool, retries: u32"
        }]}),
    )
    .await;
    let uri = sandbox.file_uri("src/main.rs");
    s.open(&uri, "rust", main).await;
    assert_eq!(
        inline(&mut s, &uri, 3, 12).await,
        vec!["parse_config(\"a\", true, 3);"]
    );
    let prompt = FimWire::Completions.prompt_of(&mock.requests()[0].body);
    assert!(
        prompt.contains(
            "src/util.rs: pub fn parse_config(path: &str, strict: bool, retries: u32) -> Config"
        ),
        "{prompt}"
    );
    assert_eq!(s.shutdown().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_popup_offers_the_suggestion_as_a_completion_item() {
    let sandbox = Sandbox::new();
    let mock = MockFim::start(FimWire::Completions).await;
    mock.push(Reply::text(&["ute(1);"]));
    let (mut s, init) = start(&sandbox, &mock, json!({"popup": true})).await;
    assert!(
        init["capabilities"]["completionProvider"].is_object(),
        "{init}"
    );
    let uri = sandbox.file_uri("src/main.rs");
    s.open(&uri, "rust", "fn main() {\n    let x = comp\n}\n")
        .await;
    let r = s
        .request(
            "textDocument/completion",
            json!({"textDocument": {"uri": uri}, "position": {"line": 1, "character": 16},
                   "context": {"triggerKind": 1}}),
        )
        .await
        .expect("completion answers");
    let item = &r["items"][0];
    assert_eq!(item["label"], "compute(1);");
    assert_eq!(item["textEdit"]["newText"], "compute(1);");
    assert_eq!(item["textEdit"]["range"]["start"]["character"], 12);
    assert_eq!(item["textEdit"]["range"]["end"]["character"], 16);
    assert_eq!(s.shutdown().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_fim_server_the_chat_model_completes_with_a_fim_prompt() {
    let sandbox = Sandbox::new();
    let mock = mock_llm::MockLlm::start(mock_llm::Wire::Chat).await;
    mock.push_turn(&mock_llm::Turn::text(&["```rust\n", "1, 2);\n", "```"]));
    let mut env = sandbox.env();
    env.extend(mock.env().into_iter().map(|(k, v)| (k.to_string(), v)));
    let mut s = TestServer::binary_with_env(env, &sandbox.project());
    let init = s
        .initialize(json!({
            "processId": null,
            "rootUri": sandbox.project_uri(),
            "capabilities": {},
            "initializationOptions": {"mira": {"completion": {"provider": "chat", "debounce_ms": 0}}}
        }))
        .await;
    assert_eq!(
        init["capabilities"]["inlineCompletionProvider"],
        json!(true)
    );
    let uri = sandbox.file_uri("src/main.rs");
    s.open(&uri, "rust", MAIN).await;
    assert_eq!(inline(&mut s, &uri, 1, 24).await, vec!["1, 2);"]);
    let req = &mock.requests()[0];
    let sent = req.body["messages"].to_string();
    assert!(sent.contains("compute(<CURSOR>"), "{sent}");
    assert!(mock.violations().is_empty(), "{:?}", mock.violations());
    assert_eq!(s.shutdown().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_in_the_buffer_and_the_key_never_reach_the_provider() {
    const TOKEN: &str = "ghp_Vt7Rk2Mx9Lq4Wn8Pz3Hs6Jd1Fb5Yc0Ga2Ke4";
    const KEY: &str = "cdst-Rk2Mx9Lq4Wn8Pz3Hs6Jd1Fb5";
    let sandbox = Sandbox::new();
    let mock = MockFim::start(FimWire::Codestral).await;
    mock.push(Reply::text(&["1, 2);"]));
    let mut env = sandbox.env();
    env.push(("CODESTRAL_API_KEY".into(), KEY.into()));
    let mut s = TestServer::binary_with_env(env, &sandbox.project());
    s.initialize(json!({
        "processId": null,
        "rootUri": sandbox.project_uri(),
        "capabilities": {},
        "initializationOptions": {"mira": {"completion": {
            "provider": "codestral", "base_url": mock.base_url(), "debounce_ms": 0}}}
    }))
    .await;
    let uri = sandbox.file_uri("src/main.rs");
    let text = format!("const GH: &str = \"{TOKEN}\";\nconst MINE: &str = \"{KEY}\";\n{MAIN}");
    s.open(&uri, "rust", &text).await;
    assert_eq!(inline(&mut s, &uri, 3, 24).await, vec!["1, 2);"]);
    let req = &mock.requests()[0];
    let body = req.body.to_string();
    assert!(!body.contains(&TOKEN[4..]) && !body.contains(KEY), "{body}");
    assert!(body.contains("compute("), "{body}");
    assert_eq!(
        req.headers
            .iter()
            .find(|(k, _)| k == "authorization")
            .map(|(_, v)| v.as_str()),
        Some(format!("Bearer {KEY}").as_str()),
        "the key goes only where it belongs"
    );
    assert_eq!(s.shutdown().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keystrokes_within_the_debounce_make_one_provider_call() {
    let sandbox = Sandbox::new();
    let mock = MockFim::start(FimWire::Completions).await;
    mock.push(Reply::text(&["2);"]));
    let (mut s, _) = start(&sandbox, &mock, json!({"debounce_ms": 300})).await;
    let uri = sandbox.file_uri("src/main.rs");
    s.open(&uri, "rust", MAIN).await;
    // Typing `1, ` one character at a time, each keystroke asking automatically.
    let mut ids = Vec::new();
    for (i, c) in ["1", ",", " "].iter().enumerate() {
        let at = 24 + i as u32;
        change(&mut s, &uri, i as i32 + 1, 1, at, at, c).await;
        ids.push(
            s.request_start(
                "textDocument/inlineCompletion",
                inline_params(&uri, 1, at + 1, 2),
            )
            .await,
        );
    }
    let last = ids.pop().unwrap();
    for id in ids {
        let r = s.response(id).await.expect("answered");
        assert!(texts(&r).is_empty(), "superseded while debouncing: {r}");
    }
    let r = s.response(last).await.expect("answered");
    assert_eq!(texts(&r), vec!["2);"]);
    let reqs = mock.requests();
    assert_eq!(
        reqs.len(),
        1,
        "only the last keystroke reached the provider"
    );
    assert!(
        FimWire::Completions
            .prompt_of(&reqs[0].body)
            .ends_with("compute(1, "),
        "{}",
        reqs[0].body
    );
    assert_eq!(s.shutdown().await, 0);
}
