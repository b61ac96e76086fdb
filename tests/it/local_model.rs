//! Mira against a real model server: llama.cpp's own HTTP server serving SmolLM2-135M with a
//! 2,048-token window (tests/real_model). `mira ask`, `mira chat` in a terminal and
//! `mira.ask` over LSP stream real answers; a large memory store and project fit the small
//! window; usage and cached tokens are recorded; a server that is down, a model that is not
//! there, and a prompt over the window each fail clearly with nothing lost. The project's
//! AGENTS.md reaches the model and an edit to it applies to the next question.
//! Figures (time to first token, tokens, cached tokens, the window learned) go to stderr past
//! the harness's capture, so CI's log shows them.
//!
//! Mocks stay where a real small model cannot serve: tool calls, FIM, fault injection.

use crate::support as common;
use crate::support::real_model;

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{Sandbox, TestServer};
use real_model::{N_CTX, say, serial, server};
use serde_json::{Value, json};

/// `mira` in the sandbox, pointed at the real server by name (`llama-cpp`) and base URL.
fn mira(sandbox: &Sandbox, base_url: &str) -> Command {
    let mut c = sandbox.mira();
    c.env("MIRA_PROVIDER", "llama-cpp")
        .env("MIRA_BASE_URL", base_url);
    c
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("run mira")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `mira ask` with the time from start to the answer's first byte on stdout.
fn ask_timed(sandbox: &Sandbox, base_url: &str, question: &str) -> (Output, Option<Duration>) {
    let started = Instant::now();
    let mut child = mira(sandbox, base_url)
        .args(["ask", question])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut first = None;
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 {
                break;
            }
            if first.is_none() && buf[..n].iter().any(|b| !b.is_ascii_whitespace()) {
                first = Some(started.elapsed());
            }
            all.extend_from_slice(&buf[..n]);
        }
        (all, first)
    });
    let mut stderr = Vec::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_end(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    let (stdout, first) = reader.join().unwrap();
    (
        Output {
            status,
            stdout,
            stderr,
        },
        first,
    )
}

/// (status, input, cached, output, model_calls, cost) of every turn, oldest first.
fn turns(sandbox: &Sandbox) -> Vec<(String, i64, i64, i64, i64, Option<f64>)> {
    let db = rusqlite::Connection::open(sandbox.db()).unwrap();
    let mut st = db
        .prepare(
            "SELECT status, input_tokens, cached_tokens, output_tokens, model_calls, cost_usd
             FROM turns ORDER BY id",
        )
        .unwrap();
    st.query_map([], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
        ))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

fn history(sandbox: &Sandbox, base_url: &str) -> String {
    text(&run(mira(sandbox, base_url).args(["history", "-n", "50"])).stdout)
}

fn context_json(sandbox: &Sandbox, base_url: &str, question: &str) -> Value {
    let out = run(mira(sandbox, base_url).args(["context", "--json", question]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn section<'a>(ctx: &'a Value, name: &str) -> &'a Value {
    ctx["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no section {name}: {ctx}"))
}

#[test]
fn ask_streams_a_real_answer_and_records_usage_and_cached_tokens_over_two_turns() {
    let Some(model) = server() else { return };
    let _one = serial();
    let sandbox = Sandbox::new();
    std::fs::write(
        sandbox.project().join("AGENTS.md"),
        "Answer in plain English, in two sentences at most.\n",
    )
    .unwrap();

    // What the server has and the window Mira learned from it.
    let models = run(mira(&sandbox, &model.base_url).arg("models"));
    assert!(models.status.success(), "{}", text(&models.stderr));
    assert!(
        text(&models.stdout).contains("SmolLM2-135M-Instruct"),
        "{}",
        text(&models.stdout)
    );
    assert!(
        text(&models.stderr).contains("2048 tokens (from the server's /props)"),
        "{}",
        text(&models.stderr)
    );
    let doctor = run(mira(&sandbox, &model.base_url).arg("doctor"));
    let doctor_out = text(&doctor.stdout);
    assert!(
        doctor_out.contains("window     2048 tokens"),
        "{doctor_out}"
    );
    assert!(doctor_out.contains("  AGENTS.md ("), "{doctor_out}");

    let mut figures = Vec::new();
    for question in ["What is a linked list?", "And what is a binary tree?"] {
        let (out, first) = ask_timed(&sandbox, &model.base_url, question);
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert!(out.status.success(), "{stderr}");
        assert!(!stdout.trim().is_empty(), "a real answer streams: {stderr}");
        assert!(stderr.contains("free (local)"), "{stderr}");
        figures.push(first.expect("the answer's first byte"));
    }
    let t = turns(&sandbox);
    assert_eq!(t.len(), 2, "{t:?}");
    for (status, input, _, output, calls, cost) in &t {
        assert_eq!(status, "completed");
        assert!(*input > 0 && *output > 0 && *calls == 1, "{t:?}");
        assert_eq!(*cost, Some(0.0), "a local model costs nothing");
        assert!(
            (*input as usize) < N_CTX,
            "the prompt fits the window: {input} of {N_CTX}"
        );
    }
    // The second turn starts with the first one's system prompt: llama.cpp reuses it.
    assert!(
        t[1].2 > 0,
        "cached tokens recorded on the second turn: {t:?}"
    );
    for (i, ((_, input, cached, output, ..), first)) in t.iter().zip(&figures).enumerate() {
        say(format!(
            "real model: mira ask turn {}: first token after {} ms (process start included), {input} tokens in ({cached} cached), {output} out",
            i + 1,
            first.as_millis()
        ));
    }

    // The project's instructions are in the stable prefix, and an edit applies at once.
    let before = context_json(&sandbox, &model.base_url, "What is a queue?");
    assert_eq!(before["window_tokens"], N_CTX);
    assert!(
        before["system"]
            .as_str()
            .unwrap()
            .contains("two sentences at most")
    );
    std::fs::write(
        sandbox.project().join("AGENTS.md"),
        "Always end with the word BANANA.\n",
    )
    .unwrap();
    let after = context_json(&sandbox, &model.base_url, "What is a queue?");
    let system = after["system"].as_str().unwrap();
    assert!(system.contains("end with the word BANANA") && !system.contains("two sentences"));
    assert_eq!(section(&after, "project instructions")["note"], "AGENTS.md");
}

/// 2,000 symbols in 20 files, each with a doc comment.
fn write_project(root: &Path) {
    std::fs::create_dir_all(root.join("src")).unwrap();
    for f in 0..20 {
        let mut code = String::new();
        for i in 0..100 {
            code.push_str(&format!(
                "/// Parses the retry policy of service {f}-{i} from its config and backoff settings.\n\
                 pub fn parse_config_{f}_{i}(input: &str) -> Result<u32, String> {{\n    \
                 input.trim().parse::<u32>().map_err(|e| format!(\"retry {i}: {{e}}\"))\n}}\n\n"
            ));
        }
        std::fs::write(root.join(format!("src/module_{f}.rs")), code).unwrap();
    }
}

#[test]
fn a_2048_token_window_holds_300_memories_a_goal_and_2000_symbols() {
    let Some(model) = server() else { return };
    let sandbox = Sandbox::new();
    write_project(&sandbox.project());
    let index = run(mira(&sandbox, &model.base_url).arg("index"));
    assert!(index.status.success(), "{}", text(&index.stderr));

    // 300 memories (retry, config and backoff words in all of them, so recall has plenty),
    // and a goal, straight into the store through the library.
    let store = mira::store::Store::open(&sandbox.db()).unwrap();
    store
        .write(|tx| {
            for i in 0..300 {
                let kind = match i % 4 {
                    0 => mira::memory::MemoryKind::Preference,
                    1 => mira::memory::MemoryKind::Decision,
                    _ => mira::memory::MemoryKind::Fact,
                };
                let body = format!(
                    "Service {i} retries config loading {} times with exponential backoff capped at {} seconds.",
                    i % 7 + 2,
                    i % 11 + 5
                );
                mira::memory::memories::remember(
                    tx,
                    &mira::memory::NewMemory::new(body, kind, mira::memory::Scope::Global),
                )?;
            }
            mira::memory::goals::add_goal(
                tx,
                mira::memory::Scope::Global,
                "Make config retries configurable per service",
                "every parse_config function reads its backoff from the config",
                mira::memory::goals::Priority::High,
            )?;
            Ok::<_, mira::memory::MemoryError>(())
        })
        .unwrap();
    drop(store);

    let question = "How does parse_config handle retries and backoff?";
    let ctx = context_json(&sandbox, &model.base_url, question);
    let planned = ctx["total_tokens"].as_u64().unwrap() as usize;
    assert_eq!(ctx["window_tokens"], N_CTX);
    assert!(planned < N_CTX, "planned {planned} of {N_CTX}: {ctx}");
    for name in ["standing", "goals", "memories"] {
        assert!(
            section(&ctx, name)["tokens"].as_u64().unwrap() > 0,
            "{name} still has a place in a small window: {ctx}"
        );
    }
    assert!(
        section(&ctx, "standing")["truncated"] == true,
        "75 preferences do not all fit in 2,048 tokens: {ctx}"
    );

    let _one = serial();
    let (out, first) = ask_timed(&sandbox, &model.base_url, question);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t = turns(&sandbox);
    let (status, input, cached, output, ..) = &t[0];
    assert_eq!(status, "completed", "{t:?}");
    assert!((*input + *output) as usize <= N_CTX, "{t:?}");
    say(format!(
        "real model: 300 memories + a goal + 2,000 symbols in a {N_CTX}-token window: planned {planned} tokens (o200k), the server counted {input} in ({cached} cached), {output} out; first token after {} ms",
        first.map_or(0, |d| d.as_millis())
    ));
}

#[test]
fn chat_in_a_terminal_streams_real_answers() {
    let Some(model) = server() else { return };
    let _one = serial();
    let sandbox = Sandbox::new();
    let python = std::env::var("MIRA_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let cmd = mira(&sandbox, &model.base_url);
    let script = json!([
        {"expect": "mira> ", "timeout": 30},
        {"send": "Name one colour.\r"},
        {"expect": r"tokens in \(\d+ cached\), \d+ out · free \(local\)", "timeout": 120},
        {"expect": "mira> ", "timeout": 30},
        {"send": "Name another one.\r"},
        {"expect": r"tokens in \(\d+ cached\), \d+ out · free \(local\)", "timeout": 120},
        {"expect": "mira> ", "timeout": 30},
        {"send": "\u{4}"},
        {"exit": 0}
    ]);
    let started = Instant::now();
    let out = Command::new(&python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/chat/pty_drive.py"))
        .arg(script.to_string())
        .arg(env!("CARGO_BIN_EXE_mira"))
        .arg("chat")
        .env_clear()
        .envs(cmd.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .env("TERM", "xterm")
        .current_dir(sandbox.project())
        .output()
        .unwrap_or_else(|e| panic!("the REPL test needs {python} (its pty module): {e}"));
    let transcript = text(&out.stdout);
    assert!(out.status.success(), "{}\n{transcript}", text(&out.stderr));
    let t = turns(&sandbox);
    assert_eq!(t.len(), 2, "{t:?}");
    assert!(t.iter().all(|t| t.0 == "completed" && t.3 > 0), "{t:?}");
    say(format!(
        "real model: mira chat in a pty: two answers in {:.1} s; turn 2: {} tokens in ({} cached), {} out",
        started.elapsed().as_secs_f64(),
        t[1].1,
        t[1].2,
        t[1].3
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
// The guard keeps the other tests' model calls (other threads, other runtimes) off the one
// server slot while this turn streams; nothing on this runtime waits for it.
#[allow(clippy::await_holding_lock)]
async fn lsp_ask_streams_a_real_answer_into_the_transcript() {
    let Some(model) = server() else { return };
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.project().join("src")).unwrap();
    std::fs::write(
        sandbox.project().join("src/lib.rs"),
        "pub fn add(a: i32, b: i32) -> i32 { a + b }\n",
    )
    .unwrap();
    std::fs::write(sandbox.project().join("AGENTS.md"), "Keep answers short.\n").unwrap();
    std::fs::write(
        sandbox.project().join("src/AGENTS.md"),
        "In src/, mention the function's name.\n",
    )
    .unwrap();
    let mut env = sandbox.env();
    env.push(("MIRA_PROVIDER".into(), "llama-cpp".into()));
    env.push(("MIRA_BASE_URL".into(), model.base_url.clone()));
    let mut server = TestServer::binary_with_env(env, &sandbox.project());
    server
        .initialize(json!({
            "processId": null,
            "rootUri": sandbox.project_uri(),
            "workspaceFolders": [{"uri": sandbox.project_uri(), "name": "project"}],
            "capabilities": {
                "general": {"positionEncodings": ["utf-16"]},
                "window": {"workDoneProgress": true, "showDocument": {"support": true}},
                "workspace": {"applyEdit": true, "workspaceEdit": {"documentChanges": true}}
            },
            "clientInfo": {"name": "mira-tests"},
            "initializationOptions": {"mira": {"notifications": true}}
        }))
        .await;
    let uri = sandbox.file_uri("src/lib.rs");
    server
        .open(
            &uri,
            "rust",
            "pub fn add(a: i32, b: i32) -> i32 { a + b }\n",
        )
        .await;

    // The nested AGENTS.md applies to a file under src/, and an edit to it applies live.
    let ctx = lsp_context(&mut server, &uri).await;
    let rules = ctx.to_string();
    assert!(
        rules.contains("Keep answers short.") && rules.contains("mention the function's name"),
        "{rules}"
    );
    std::fs::write(
        sandbox.project().join("src/AGENTS.md"),
        "In src/, answer in French.\n",
    )
    .unwrap();
    let rules = lsp_context(&mut server, &uri).await.to_string();
    assert!(
        rules.contains("answer in French") && !rules.contains("mention the function's name"),
        "{rules}"
    );

    let _one = serial();
    let started = Instant::now();
    let r = server
        .request("workspace/executeCommand", json!({"command": "mira.ask", "arguments": [{"question": "What does add do?", "uri": uri, "position": {"line": 0, "character": 8}}]}))
        .await
        .expect("mira.ask");
    let turn = r["turn"].as_str().unwrap().to_string();
    let delta = server.notification("mira/delta").await;
    let first = started.elapsed();
    assert_eq!(delta["params"]["turn"], turn.as_str());
    // A 135M model may write up to its output cap: on a busy 2-core machine that is longer
    // than the 20 s an answer from Mira itself may take.
    let finished = server
        .notification_within("mira/turnFinished", Duration::from_secs(120))
        .await;
    assert_eq!(finished["params"]["status"], "completed", "{finished}");
    let usage = &finished["params"]["usage"];
    assert!(usage["inputTokens"].as_u64().unwrap() > 0, "{finished}");
    assert_eq!(finished["params"]["costUsd"], 0.0, "{finished}");
    // The answer streamed into the transcript through workspace/applyEdit.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut streamed = String::new();
    for r in server.server_requests() {
        if r["method"] == "workspace/applyEdit" {
            streamed.push_str(&r["params"]["edit"].to_string());
        }
    }
    assert!(
        streamed.contains("conversation.md"),
        "the transcript was edited: {streamed}"
    );
    let transcript =
        std::fs::read_to_string(sandbox.mira_home().join("conversation.md")).unwrap_or_default();
    say(format!(
        "real model: mira.ask over LSP: first mira/delta after {} ms, {} tokens in ({} cached), {} out, transcript {} bytes",
        first.as_millis(),
        usage["inputTokens"],
        usage["cachedTokens"],
        usage["outputTokens"],
        transcript.len()
    ));
    server.shutdown().await;
}

async fn lsp_context(server: &mut TestServer, uri: &str) -> Value {
    server
        .request(
            "mira/context",
            json!({"uri": uri, "position": {"line": 0, "character": 8}, "question": "what does add do?"}),
        )
        .await
        .expect("mira/context")
}

/// A loopback HTTP server answering every request with `status` and `body` (an Ollama that
/// does not have the model: fault injection, which a real llama.cpp cannot be made to do).
fn answering(status: u16, body: &'static str) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for mut sock in listener.incoming().map_while(Result::ok) {
            let mut buf = [0u8; 65536];
            let _ = sock.set_read_timeout(Some(Duration::from_millis(200)));
            while sock.read(&mut buf).is_ok_and(|n| n == buf.len()) {}
            let _ = write!(
                sock,
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://{addr}")
}

#[test]
fn a_server_down_a_missing_model_and_a_prompt_over_the_window_fail_clearly_and_lose_nothing() {
    let Some(model) = server() else { return };
    let sandbox = Sandbox::new();

    // Server down: the port is closed.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", l.local_addr().unwrap())
    };
    let out = run(mira(&sandbox, &closed).args(["ask", "Is anyone there?"]));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("is the local model server running?"),
        "{stderr}"
    );

    // The model is not there (Ollama's own 404 body).
    let ollama = answering(
        404,
        r#"{"error":{"message":"model \"qwen3\" not found, try pulling it first","type":"api_error"}}"#,
    );
    let out = run(mira(&sandbox, &ollama)
        .env("MIRA_PROVIDER", "ollama")
        .env("MIRA_MODEL", "qwen3")
        .env("MIRA_BASE_URL", format!("{ollama}/v1"))
        .args(["ask", "Which model are you?"]));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("not found")
            && stderr.contains("mira models")
            && stderr.contains("ollama pull"),
        "{stderr}"
    );

    // A question larger than the learned window: refused before any call.
    let long = "Explain this log line by line: ".to_string()
        + &"connection reset by peer while reading response header from upstream; ".repeat(150);
    let out = run(mira(&sandbox, &model.base_url).args(["ask", &long]));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("too long for the model") && stderr.contains("Nothing was sent"),
        "{stderr}"
    );
    let t = turns(&sandbox);
    assert_eq!(t.last().unwrap().4, 0, "no model call: {t:?}");

    // A window configured larger than the server's: the real server refuses, and the error
    // says which setting to fix.
    let config = sandbox.home().join(".config/mira");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "[provider]\ncontext_window = 16384\n",
    )
    .unwrap();
    let _one = serial();
    let out = run(mira(&sandbox, &model.base_url).args(["ask", &long]));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("exceeds the available context size")
            && stderr.contains("provider.context_window"),
        "{stderr}"
    );
    std::fs::remove_file(config.join("config.toml")).unwrap();

    // Nothing lost: every question is in the conversation, and the next one is answered.
    let h = history(&sandbox, &model.base_url);
    for q in [
        "Is anyone there?",
        "Which model are you?",
        "Explain this log line by line",
    ] {
        assert!(h.contains(q), "{q} kept: {h}");
    }
    let out = run(mira(&sandbox, &model.base_url).args(["ask", "Say hello."]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    say(format!(
        "real model: failures: server down, model missing (Ollama 404), too long for {N_CTX} (refused before sending), window misconfigured (server 400): each exit 1 with its fix; {} turns kept",
        turns(&sandbox).len()
    ));
}
