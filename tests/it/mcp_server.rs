//! `mira mcp` driven by the official MCP Python SDK (tests/mcp/client.py): tools listed with
//! their schemas, a memory written over MCP recalled by the CLI and the reverse, while a real
//! `mira lsp` keeps writing to the same store; malformed calls answered with MCP errors and
//! the session still serving; the project taken from the client's root; the session-start
//! prompt and resource. Plus the raw protocol: stdout carries only JSON-RPC, closed stdin ends
//! the server.

use crate::support as common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Sandbox, TestServer};
use serde_json::{Value, json};

/// python3 with the `mcp` package, or a failure that says how to get it (never a skip).
fn python_with_mcp() -> String {
    let python = std::env::var("MIRA_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let found = Command::new(&python)
        .args(["-c", "import mcp"])
        .stderr(Stdio::null())
        .status();
    match found {
        Ok(s) if s.success() => python,
        _ => panic!(
            "the MCP tests need {python} with the official MCP Python SDK: run \
             scripts/install-test-deps (pip install mcp), or set MIRA_TEST_PYTHON"
        ),
    }
}

fn cli(s: &Sandbox, args: &[&str]) -> String {
    let out = s.mira().args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "mira {args:?} failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn write_project(s: &Sandbox) {
    let src = s.project().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("config.rs"),
        "/// Reads the configuration file at `path` and returns its text.\n\
         pub fn parse_config(path: &str) -> String {\n    std::fs::read_to_string(path).unwrap_or_default()\n}\n\n\
         pub fn start() {\n    let _ = parse_config(\"mira.toml\");\n}\n\n\
         pub fn connect() -> &'static str {\n    \"ghp_0123456789abcdefghijklmnopqrstuvwxyzAB\"\n}\n",
    )
    .unwrap();
}

fn call<'a>(out: &'a Value, label: &str) -> &'a str {
    let c = &out["calls"][label];
    assert_eq!(c["error"], false, "{label} failed: {c}");
    c["text"].as_str().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_shares_one_memory_with_the_cli_and_a_running_editor() {
    let python = python_with_mcp();
    let s = Sandbox::new();
    write_project(&s);
    cli(&s, &["index"]);
    cli(
        &s,
        &["remember", "The staging database listens on port 5433."],
    );

    let mut lsp = TestServer::binary(&s);
    lsp.initialize_default(&s, &["utf-16"]).await;
    let remember = |text: String| json!({"command": "mira.remember", "arguments": [text]});
    lsp.request(
        "workspace/executeCommand",
        remember("We deploy with ArgoCD.".into()),
    )
    .await
    .unwrap();
    // The editor keeps writing to the same database while the agent works.
    let editor = tokio::spawn(async move {
        for i in 0..15 {
            lsp.request(
                "workspace/executeCommand",
                remember(format!("Editor note {i} about the parser.")),
            )
            .await
            .unwrap();
            tokio::time::sleep(Duration::from_millis(80)).await;
        }
        lsp
    });

    let run = tokio::process::Command::new(&python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py"))
        .arg(env!("CARGO_BIN_EXE_mira"))
        .arg(s.project())
        .env_clear()
        .envs(s.env())
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .output();
    let out = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the MCP session finishes")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "client.py failed:\n{stderr}");
    let out: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("client.py printed no JSON ({e}):\n{stderr}"));

    let lsp = editor.await.unwrap();
    assert_eq!(lsp.shutdown().await, 0);

    // Tools, with schemas derived from the typed arguments.
    let tools: Vec<&str> = out["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "find_symbol",
            "forget",
            "goals",
            "index_status",
            "memories",
            "recall",
            "remember",
            "search_code",
            "symbol_context",
            "tasks"
        ]
    );
    let remember_schema = &out["schemas"]["remember"];
    assert_eq!(
        remember_schema["required"],
        json!(["text"]),
        "{remember_schema}"
    );
    assert_eq!(
        remember_schema["properties"]["corrects"]["type"],
        json!(["integer", "null"])
    );
    assert!(
        out["instructions"]
            .as_str()
            .unwrap()
            .contains("session-start")
    );

    // One memory: the CLI's and the editor's are recalled over MCP …
    assert!(call(&out, "remember").contains("Remembered #"));
    assert!(call(&out, "recall_cli").contains("port 5433"), "{out}");
    assert!(call(&out, "recall_editor").contains("ArgoCD"), "{out}");
    // … and what the agent remembered is recalled by the CLI.
    let recalled = cli(&s, &["recall", "Thursdays"]);
    assert!(
        recalled.contains("Releases are cut on Thursdays."),
        "{recalled}"
    );
    let all = cli(&s, &["memories", "-n", "100"]);
    for i in 0..15 {
        assert!(all.contains(&format!("Editor note {i} about")), "{all}");
    }

    // Malformed calls get MCP errors; the session goes on.
    for label in [
        "wrong_type",
        "missing_arg",
        "unknown_tool",
        "bad_id",
        "bad_kind",
    ] {
        let e = &out["errors"][label];
        assert!(
            e["kind"] == "mcp" || e["error"] == true,
            "{label} was not refused: {e}"
        );
        assert!(!e["text"].as_str().unwrap().is_empty(), "{label}: {e}");
    }
    assert_eq!(out["errors"]["unknown_tool"]["kind"], "mcp");
    assert!(call(&out, "recall_after_errors").contains("Thursdays"));

    // Goals, tasks, memories.
    assert!(call(&out, "goal").contains("Ship the MCP server"));
    assert!(call(&out, "goals").contains("Ship the MCP server"));
    assert!(call(&out, "tasks").contains("Write the README section"));
    assert!(call(&out, "memories").contains("Prefer tabs over spaces"));

    // The code index of the project named by the client's root (the server ran elsewhere).
    assert!(call(&out, "find_symbol").contains("parse_config"), "{out}");
    let ctx = call(&out, "symbol_context");
    assert!(ctx.contains("Reads the configuration file"), "{ctx}");
    assert!(ctx.contains("start"), "callers listed: {ctx}");
    assert!(call(&out, "search_code").contains("parse_config"), "{out}");
    // Code read from the project passes redaction before it reaches the agent.
    let secret = call(&out, "secret_code");
    assert!(secret.contains("pub fn connect"), "{secret}");
    assert!(!secret.contains("ghp_0123"), "{secret}");
    assert!(secret.contains("[REDACTED"), "{secret}");
    let status = call(&out, "index_status");
    assert!(status.contains("project project"), "{status}");
    assert!(status.contains("1 files, 3 symbols"), "{status}");

    // The session-start view: project, preferences, goals.
    assert_eq!(out["prompts"], json!(["session-start"]));
    assert_eq!(out["resources"], json!(["mira://session-start"]));
    for view in [&out["prompt"], &out["resource"]] {
        let view = view.as_str().unwrap();
        assert!(view.contains("# Project\nName: project"), "{view}");
        assert!(
            view.contains("Prefer tabs over spaces in Go files."),
            "{view}"
        );
        assert!(view.contains("Ship the MCP server"), "{view}");
    }
}

/// The raw protocol, no SDK: only JSON-RPC lines on stdout, a bad line answered, and EOF on
/// stdin ends the process.
#[test]
fn stdout_is_protocol_only_and_closed_stdin_ends_the_server() {
    let s = Sandbox::new();
    let mut child = s
        .mira()
        .arg("mcp")
        .env("MIRA_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let send = |stdin: &mut std::process::ChildStdin, v: Value| {
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    };
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
    );
    let init: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(init["id"], 1, "{init}");
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init}"
    );
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "recall", "arguments": {"query": ["not", "a", "string"]}}}),
    );
    // A call the schema rejects: the SDK answers it as a failed call the agent can correct.
    let bad: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(bad["id"], 2, "{bad}");
    assert_eq!(bad["result"]["isError"], true, "{bad}");
    assert!(
        bad["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("expected a string"),
        "{bad}"
    );
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
               "params": {"name": "rm_rf", "arguments": {}}}),
    );
    let unknown: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(unknown["id"], 9, "{unknown}");
    assert!(unknown["error"]["message"].is_string(), "{unknown}");
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "index_status", "arguments": {}}}),
    );
    let ok: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(ok["id"], 3, "{ok}");
    assert!(
        ok["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("index: empty. Run `mira index`"),
        "{ok}"
    );

    drop(stdin);
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "mira mcp still running after stdin closed"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    // Nothing but protocol was written, even with debug logging on.
    for line in lines {
        let line = line.unwrap();
        assert!(
            serde_json::from_str::<Value>(&line).is_ok(),
            "non-protocol output on stdout: {line}"
        );
    }
}
