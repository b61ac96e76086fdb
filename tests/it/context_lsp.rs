//! Context over LSP, across processes: a correction made in one editor's server (no id given:
//! Mira finds what it corrects) is in the very next turn of another editor's server; the
//! model's own `remember` tool corrects the same way and is told what it superseded;
//! `mira/context` shows the sections.

use crate::support as common;
use crate::support::mock_llm;

use common::{Sandbox, TestServer};
use mock_llm::{MockLlm, Turn, Wire};
use serde_json::{Value, json};

fn env(sandbox: &Sandbox, mock: &MockLlm) -> Vec<(String, String)> {
    let mut env = sandbox.env();
    env.extend(mock.env().into_iter().map(|(k, v)| (k.to_string(), v)));
    env
}

fn init(sandbox: &Sandbox) -> Value {
    json!({
        "processId": null,
        "rootUri": sandbox.project_uri(),
        "workspaceFolders": [{"uri": sandbox.project_uri(), "name": "project"}],
        "capabilities": {"general": {"positionEncodings": ["utf-16"]}},
        "clientInfo": {"name": "mira-tests"}
    })
}

async fn message(server: &mut TestServer, prefix: &str) -> String {
    loop {
        let m = server.notification("window/showMessage").await;
        let text = m["params"]["message"].as_str().unwrap().to_string();
        if text.starts_with(prefix) {
            return text;
        }
    }
}

async fn command(server: &mut TestServer, command: &str, args: Value) -> Value {
    server
        .request(
            "workspace/executeCommand",
            json!({"command": command, "arguments": [args]}),
        )
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_correction_in_one_editor_is_in_the_next_turn_of_another() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Wire::Chat).await;
    let mut a = TestServer::binary_with_env(env(&sandbox, &mock), &sandbox.project());
    let mut b = TestServer::binary_with_env(env(&sandbox, &mock), &sandbox.project());
    a.initialize(init(&sandbox)).await;
    b.initialize(init(&sandbox)).await;

    command(
        &mut a,
        "mira.remember",
        json!({"text": "staging listens on port 5433"}),
    )
    .await;
    let r = command(
        &mut a,
        "mira.remember",
        json!({"text": "Correction: staging listens on port 5434, not 5433", "kind": "correction"}),
    )
    .await;
    assert_eq!(
        r["superseded"]["body"], "staging listens on port 5433",
        "{r}"
    );
    let shown = message(&mut a, "Mira: Remembered #2").await;
    assert!(shown.contains("supersedes #1"), "{shown}");

    // The model answers and, told of a newer port, corrects it with its own tool (no id).
    mock.push_turn(&Turn::text(&["Checking."]).call(
        "c1",
        "remember",
        r#"{"text": "Correction: staging listens on port 5435 now, not 5434", "kind": "correction"}"#,
    ));
    mock.push_turn(&Turn::text(&["Noted."]));
    command(
        &mut b,
        "mira.ask",
        json!("which port does staging listen on? it moved to 5435"),
    )
    .await;
    message(&mut b, "Mira answered").await;
    let reqs = mock.requests();
    let system = reqs[0].body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(system.contains("staging listens on port 5434"), "{system}");
    assert!(!system.contains("on port 5433"), "{system}");
    assert!(
        reqs[1].raw.contains("supersedes #2"),
        "the tool result tells the model what it superseded: {}",
        reqs[1].raw
    );
    assert_eq!(mock.violations(), Vec::<String>::new());

    // Editor A's next view of the context has the model's correction, not the old one.
    let report = a
        .request("mira/context", json!({"question": "staging port?"}))
        .await
        .unwrap();
    assert!(
        report["system"].as_str().unwrap().contains("port 5435"),
        "{report}"
    );
    assert!(
        !report["system"].as_str().unwrap().contains("port 5434,"),
        "{report}"
    );
    let names: Vec<&str> = report["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"standing") && names.contains(&"code"),
        "{names:?}"
    );
    a.shutdown().await;
    b.shutdown().await;
}
