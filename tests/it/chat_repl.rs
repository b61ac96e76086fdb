//! `mira chat` as a person uses it: the real binary in a pseudo-terminal (Python's `pty`,
//! tests/chat/pty_drive.py) against the mock provider on loopback — streaming, slash
//! commands, Ctrl+C cancelling one answer, Tab completion, the history file across two runs,
//! `--ask-only` seen at the mock — and with a pipe on stdin, for scripts.

use crate::support::mock_llm;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use mock_llm::{MockLlm, Reply, Turn, Wire};
use serde_json::{Value, json};

fn sandbox() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("project/.git")).unwrap();
    std::fs::create_dir_all(dir.path().join("home/.config/mira")).unwrap();
    std::fs::write(dir.path().join("project/main.rs"), "fn main() {}\n").unwrap();
    dir
}

fn mira(dir: &Path, mock: Option<&MockLlm>) -> Command {
    let env = crate::support::dir_env(dir, mock.map(|m| m.env()).unwrap_or_default());
    let mut c = crate::support::mira(env, &dir.join("project"));
    c.env("TERM", "xterm");
    c
}

/// Plays `script` against `mira chat ARGS` in a pseudo-terminal; returns the transcript.
fn in_terminal(dir: &Path, mock: &MockLlm, args: &[&str], script: Value) -> String {
    in_terminal_with(dir, Some(mock), &[], args, script)
}

/// Like [`in_terminal`], with `env` over the mock's (or without a provider at all).
fn in_terminal_with(
    dir: &Path,
    mock: Option<&MockLlm>,
    env: &[(&str, &str)],
    args: &[&str],
    script: Value,
) -> String {
    let python = std::env::var("MIRA_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let mut cmd = mira(dir, mock);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = Command::new(&python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/chat/pty_drive.py"))
        .arg(script.to_string())
        .arg(env!("CARGO_BIN_EXE_mira"))
        .arg("chat")
        .args(args)
        .env_clear()
        .envs(cmd.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .current_dir(dir.join("project"))
        .output()
        .unwrap_or_else(|e| panic!("the REPL tests need {python} (its pty module): {e}"));
    let transcript = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}\n{transcript}",
        String::from_utf8_lossy(&out.stderr)
    );
    transcript
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

fn send(s: &str) -> Value {
    json!({"send": s})
}
fn expect(re: &str) -> Value {
    json!({"expect": re})
}

#[test]
fn repl_streams_remembers_cancels_completes_and_keeps_its_history() {
    let dir = sandbox();
    let mock = MockLlm::start_in_background(Wire::Chat);
    mock.push_turn(&Turn::text(&["The answer ", "is 42."]));
    // A slow answer: one event every two seconds.
    mock.push(
        Reply::turn(
            Wire::Chat,
            &Turn::text(&[
                "Once upon a time",
                " there",
                " was",
                " a",
                " long",
                " story.",
            ]),
        )
        .gap(Duration::from_secs(2)),
    );
    mock.push_turn(&Turn::text(&["Still here."]));
    let first = in_terminal(
        dir.path(),
        &mock,
        &[],
        json!([
            expect("mira> "),
            send("What is the answer?\r"),
            expect(r"The answer is 42\."),
            expect("mira> "),
            send("/remember The build uses cargo nextest.\r"),
            expect(r"Remembered #1 \(fact, global\)"),
            expect("mira> "),
            send("/recall nextest\r"),
            expect(r"#1 \[fact\] The build uses cargo nextest\."),
            expect("mira> "),
            send("Tell me a long story\r"),
            expect("Once upon a time"),
            send("\u{3}"),
            expect("— cancelled"),
            expect("mira> "),
            send("And now?\r"),
            expect(r"Still here\."),
            expect("mira> "),
            send("/recall ghp_0123456789abcdefghijklmnopqrstuvwxyzAB\r"),
            expect("Nothing remembered about that."),
            expect("mira> "),
            send("/sta\t"),
            expect("/status "),
            send("\r"),
            expect(r"project +project \("),
            expect("mira> "),
            send("\u{4}"),
            {"exit": 0}
        ]),
    );
    assert!(
        !first.contains("long story."),
        "the cancelled answer stopped: {first}"
    );
    assert_eq!(mock.requests().len(), 3);
    assert!(mock.violations().is_empty(), "{:?}", mock.violations());
    assert!(tool_names(&mock.requests()[0].body).contains(&"edit_file".to_string()));
    let history_file = dir.path().join("mira/chat_history");
    let history = std::fs::read_to_string(&history_file).unwrap();
    for line in [
        "What is the answer?",
        "/remember The build uses cargo nextest.",
        "/status",
    ] {
        assert!(history.contains(line), "{line} in {history}");
    }
    assert!(
        !history.contains("ghp_0123"),
        "a secret in the history: {history}"
    );
    assert!(history.contains("/recall [REDACTED"), "{history}");
    let mode = std::fs::metadata(&history_file)
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);

    // A second run: Up brings back the last line of the first; --ask-only reaches the mock.
    mock.push_turn(&Turn::text(&["I can only explain."]));
    in_terminal(
        dir.path(),
        &mock,
        &["--ask-only"],
        json!([
            expect("mira> "),
            send("\u{1b}[A"),
            expect("/status"),
            send("\r"),
            expect("ask-only"),
            expect("mira> "),
            send("Please fix main.rs\r"),
            expect(r"I can only explain\."),
            expect("mira> "),
            send("/quit\r"),
            {"exit": 0}
        ]),
    );
    let last = &mock.requests()[3].body;
    let tools = tool_names(last);
    for gone in ["edit_file", "write_file", "bash"] {
        assert!(!tools.contains(&gone.to_string()), "{gone} sent: {tools:?}");
    }
    assert!(tools.contains(&"read_file".to_string()), "{tools:?}");
    let system = last["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("ask-only mode"), "{system}");
    assert!(mock.violations().is_empty(), "{:?}", mock.violations());
}

#[test]
fn repl_shows_tool_calls_in_one_line_and_an_edit_as_a_diff_applied_when_confirmed() {
    let dir = sandbox();
    let mock = MockLlm::start_in_background(Wire::Chat);
    let edit = r#"{"path":"main.rs","old_string":"fn main() {}","new_string":"fn main() { println!(\"hi\"); }"}"#;
    mock.push_turn(&Turn::text(&["Reading it."]).call("c1", "read_file", r#"{"path":"main.rs"}"#));
    mock.push_turn(&Turn::text(&["Changing it."]).call("c2", "edit_file", edit));
    mock.push_turn(&Turn::text(&["Done."]));
    let again = r#"{"path":"main.rs","old_string":"hi","new_string":"bye"}"#;
    mock.push_turn(&Turn::text(&["Changing it again."]).call("c3", "edit_file", again));
    mock.push_turn(&Turn::text(&["Left as is."]));
    in_terminal(
        dir.path(),
        &mock,
        &[],
        json!([
            expect("mira> "),
            send("Make main say hi\r"),
            expect("→ read main.rs"),
            expect(r#"\+fn main\(\) \{ println!\("hi"\); \}"#),
            expect(r"Apply this change to .*main\.rs\? \[y/N\]"),
            send("y\r"),
            expect("✓ applied"),
            expect(r"Done\."),
            expect("mira> "),
            send("Once more\r"),
            expect(r#"\+fn main\(\) \{ println!\("bye"\); \}"#),
            expect(r"\[y/N\]"),
            send("n\r"),
            expect(r"Left as is\."),
            expect("mira> "),
            send("\u{4}"),
            {"exit": 0}
        ]),
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("project/main.rs")).unwrap(),
        "fn main() { println!(\"hi\"); }\n"
    );
    let declined = mock.requests()[4].body.to_string();
    assert!(declined.contains("the user declined"), "{declined}");
    assert!(mock.violations().is_empty(), "{:?}", mock.violations());
}

fn piped(dir: &Path, mock: Option<&MockLlm>, input: &str) -> (bool, String, String) {
    let mut child = mira(dir, mock)
        .arg("chat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_pipe_gets_plain_answers_one_question_per_line_and_the_cost_warning() {
    let dir = sandbox();
    std::fs::write(
        dir.path().join("home/.config/mira/config.toml"),
        "[agent]\ncost_warn_usd = 0.000001\n",
    )
    .unwrap();
    let mock = MockLlm::start_in_background(Wire::Chat);
    mock.push_turn(&Turn::text(&["Four."]).usage(1000, 0, 50));
    mock.push_turn(&Turn::text(&["Six."]).usage(1000, 0, 50));
    let (ok, stdout, stderr) = piped(
        dir.path(),
        Some(&mock),
        "What is 2+2?\n/remember Pipes work.\n\nAnd 3+3?\n",
    );
    assert!(ok, "{stderr}");
    assert_eq!(stdout, "Four.\nRemembered #1 (fact, global)\nSix.\n");
    assert!(
        stderr.contains("warning: that answer cost $0.00, more than agent.cost_warn_usd"),
        "{stderr}"
    );
    assert_eq!(mock.requests().len(), 2);
    let second = mock.requests()[1].body.to_string();
    assert!(second.contains("Four."), "one conversation: {second}");
}

#[test]
fn every_slash_command_answers_and_mistakes_say_what_to_type() {
    let dir = sandbox();
    std::fs::create_dir_all(dir.path().join("other/.git")).unwrap();
    let (ok, stdout, stderr) = piped(
        dir.path(),
        None,
        "/remember The linter is clippy.\n/recall linter\n/forget #1\n/recall linter\n\
         /goals\n/tasks\n/effort high\n/history 2\n/usage\n/switch ../other\n/status\n\
         /forget one\n/bogus\n/help\n/quit\nnever read\n",
    );
    assert!(ok, "{stderr}");
    for want in [
        "Remembered #1 (fact, global)",
        "#1 [fact] The linter is clippy.",
        "Forgot #1: The linter is clippy.",
        "Nothing remembered about that.",
        "No active goals.",
        "No open tasks.",
        "Reasoning effort high for the next questions.",
        "No conversation yet.",
        "Usage over the last day",
        "Now in project other (",
        "effort    high",
        "/switch    [path]",
    ] {
        assert!(stdout.contains(want), "{want:?} missing from:\n{stdout}");
    }
    assert!(
        stdout.contains(&format!(
            "project   other ({})",
            dir.path().join("other").canonicalize().unwrap().display()
        )),
        "{stdout}"
    );
    assert!(
        stderr.contains("/forget takes a memory id such as 12"),
        "{stderr}"
    );
    assert!(
        stderr.contains("unknown command /bogus; /help lists them"),
        "{stderr}"
    );
    assert!(!stdout.contains("never read") && !stderr.contains("never read"));
}

#[test]
fn effort_set_in_the_session_reaches_the_provider() {
    let dir = sandbox();
    let mock = MockLlm::start_in_background(Wire::Responses);
    mock.push_turn(&Turn::text(&["Quick."]));
    mock.push_turn(&Turn::text(&["Thorough."]));
    let (ok, stdout, stderr) = piped(
        dir.path(),
        Some(&mock),
        "/effort low\nFirst?\n/effort xhigh\nSecond?\n",
    );
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("Quick.") && stdout.contains("Thorough."),
        "{stdout}"
    );
    let efforts: Vec<Value> = mock
        .requests()
        .iter()
        .map(|r| r.body["reasoning"]["effort"].clone())
        .collect();
    assert_eq!(efforts, [json!("low"), json!("xhigh")]);
}

#[test]
fn a_provider_that_is_down_gets_a_message_and_the_session_goes_on() {
    let dir = sandbox();
    // Nothing listens on port 9 of loopback: every connection is refused.
    let mut cmd = mira(dir.path(), None);
    cmd.env("MIRA_PROVIDER", "openai-chat")
        .env("MIRA_BASE_URL", "http://127.0.0.1:9/v1")
        .env("MIRA_MODEL", "gpt-4.1")
        .env("OPENAI_API_KEY", "test-key-not-secret");
    let mut child = cmd
        .arg("chat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"Are you there?\n/remember The session survived.\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("mira: could not reach"), "{stderr}");
    assert_eq!(
        stderr.matches("127.0.0.1:9").count(),
        1,
        "the address is said once: {stderr}"
    );
    assert!(stdout.contains("Remembered #1"), "{stdout}\n{stderr}");
}

/// Issue 31: `mira chat` indexes the project it starts in, in the background (no wait for
/// the prompt), its tools find the project's symbols, and the banner says what Mira has:
/// provider, model, memories and the index; a second start uses the stored index.
#[test]
fn chat_knows_the_project_from_the_first_question() {
    let dir = sandbox();
    std::fs::write(
        dir.path().join("project/lib.rs"),
        "/// Adds it all up.\npub fn compute_total(items: &[u32]) -> u32 {\n    items.iter().sum()\n}\n",
    )
    .unwrap();
    let mock = MockLlm::start_in_background(Wire::Chat);
    mock.push(
        Reply::turn(
            Wire::Chat,
            &Turn::text(&["Looking."]).call("c1", "find_symbol", r#"{"query":"compute_total"}"#),
        )
        .delayed(Duration::from_millis(800)),
    );
    mock.push_turn(&Turn::text(&["It is in lib.rs."]));
    let screen = in_terminal(
        dir.path(),
        &mock,
        &[],
        json!([
            expect(r"Mira · project project · openai-chat · gpt-4\.1 · 0 memories · index "),
            expect("mira> "),
            send("where is the total computed?\r"),
            expect(r"It is in lib\.rs\."),
            expect("mira> "),
            send("/status\r"),
            expect(r"index +\d+ files, \d+ symbols"),
            expect("mira> "),
            send("\u{4}"),
            {"exit": 0}
        ]),
    );
    let tool_result = &mock.requests()[1].raw;
    assert!(
        tool_result.contains("function compute_total — lib.rs:2"),
        "find_symbol found the project's symbol: {tool_result}"
    );
    assert!(
        screen.contains("(index"),
        "the index's state was said: {screen}"
    );
    // A second start: the stored index answers at once, quietly.
    mock.push_turn(&Turn::text(&["Still there."]));
    let again = in_terminal(
        dir.path(),
        &mock,
        &[],
        json!([
            expect(r"index \d+ files"),
            expect("mira> "),
            send("and now?\r"),
            expect(r"Still there\."),
            expect("mira> "),
            send("\u{4}"),
            {"exit": 0}
        ]),
    );
    assert!(
        !again.contains("so far"),
        "a warm start says nothing about indexing: {again}"
    );
}

/// Issue 31: Ctrl+C at an edit's confirmation refuses it and returns to the prompt at once
/// (the next line typed is a question again, not an answer to a dead prompt); type-ahead is
/// not echoed into a streaming answer; `/correct` supersedes what it contradicts.
#[test]
fn ctrl_c_at_a_confirmation_type_ahead_and_corrections() {
    let dir = sandbox();
    let mock = MockLlm::start_in_background(Wire::Chat);
    let edit =
        r#"{"path":"main.rs","old_string":"fn main() {}","new_string":"fn main() { todo!() }"}"#;
    mock.push_turn(&Turn::text(&["Changing it."]).call("c1", "edit_file", edit));
    mock.push(
        Reply::turn(
            Wire::Chat,
            &Turn::text(&["Streaming: alpha", " beta", " gamma."]),
        )
        .gap(Duration::from_millis(700)),
    );
    let screen = in_terminal(
        dir.path(),
        &mock,
        &[],
        json!([
            expect("mira> "),
            send("Break main\r"),
            expect(r"\[y/N\]"),
            send("\u{3}"),
            expect("not applied"),
            expect("mira> "),
            send("Stream something\r"),
            expect("Streaming: alpha"),
            send("zzz"),
            expect(r"gamma\."),
            expect("mira> "),
            send("\u{15}/remember The linter is eslint.\r"),
            expect(r"Remembered #1"),
            expect("mira> "),
            send("/correct The linter is biome, not eslint.\r"),
            expect(r"supersedes #1"),
            expect("mira> "),
            send("\u{4}"),
            {"exit": 0}
        ]),
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("project/main.rs")).unwrap(),
        "fn main() {}\n",
        "the edit was refused"
    );
    assert!(
        screen.contains("Streaming: alpha beta gamma."),
        "type-ahead landed inside the answer: {screen}"
    );
}

/// Issue 31: the first screen. Without a provider the setup help is printed once a session,
/// then one line per question.
#[test]
fn without_a_provider_the_setup_help_is_said_once() {
    let dir = sandbox();
    let screen = in_terminal_with(
        dir.path(),
        None,
        &[],
        &[],
        json!([
            expect("mira> "),
            send("first question\r"),
            expect("mira> "),
            send("second question\r"),
            expect(r"no model provider is set \(see above"),
            expect("mira> "),
            send("\u{4}"),
            {"exit": 0}
        ]),
    );
    assert_eq!(
        screen.matches("OPENAI_API_KEY").count(),
        1,
        "the setup help once a session: {screen}"
    );
}

/// Issue 31: a local model (loopback base URL) with no price costs "free (local)", every turn,
/// never "cost unknown".
#[test]
fn a_local_model_is_free() {
    let dir = sandbox();
    let mock = MockLlm::start_in_background(Wire::Chat);
    for answer in ["Local answer.", "Again."] {
        mock.push_turn(&Turn::text(&[answer]).model("my-local-model"));
    }
    let screen = in_terminal_with(
        dir.path(),
        Some(&mock),
        &[("MIRA_MODEL", "my-local-model")],
        &[],
        json!([
            expect(r"openai-chat · my-local-model"),
            expect("mira> "),
            send("hello\r"),
            expect(r"Local answer\."),
            expect(r"free \(local\)"),
            expect("mira> "),
            send("again\r"),
            expect(r"Again\."),
            expect(r"free \(local\)"),
            expect("mira> "),
            send("\u{4}"),
            {"exit": 0}
        ]),
    );
    assert!(!screen.contains("cost unknown"), "{screen}");
}
