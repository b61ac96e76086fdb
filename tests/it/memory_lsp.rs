//! Memory over LSP: mira.remember / mira.recall / mira.forget (string or object arguments)
//! and the mira/memories request, in-process and through the real binary, plus a memory
//! written over LSP and read back by the CLI (one store, two surfaces).

use crate::support as common;

use common::{Sandbox, TestServer};
use serde_json::{Value, json};

async fn command(s: &mut TestServer, name: &str, args: Value) -> Result<Value, Value> {
    s.request(
        "workspace/executeCommand",
        json!({"command": name, "arguments": args}),
    )
    .await
}

async fn exercise(s: &mut TestServer, sandbox: &Sandbox) {
    s.initialize_default(sandbox, &["utf-8"]).await;

    // bare string (what Helix users type)
    let r = command(
        s,
        "mira.remember",
        json!(["we", "deploy", "with", "ArgoCD"]),
    )
    .await
    .unwrap();
    assert_eq!(r["outcome"], "created");
    assert_eq!(r["memory"]["body"], "we deploy with ArgoCD");
    assert_eq!(r["memory"]["scope"], "global");
    let deploy_id = r["id"].as_i64().unwrap();
    let shown = s.notification("window/showMessage").await;
    assert!(
        shown["params"]["message"]
            .as_str()
            .unwrap()
            .contains("Mira: Remembered #"),
        "{shown}"
    );

    // object with kind and project scope
    let r = command(
        s,
        "mira.remember",
        json!([{"text": "The parser lives in src/parse.rs", "kind": "fact", "scope": "project"}]),
    )
    .await
    .unwrap();
    assert!(
        r["memory"]["scope"]
            .as_str()
            .unwrap()
            .starts_with("project:"),
        "{r}"
    );

    // a repeat is recognised
    let r = command(s, "mira.remember", json!(["We deploy with ArgoCD."]))
        .await
        .unwrap();
    assert_eq!(r["outcome"], "repeated");
    assert_eq!(r["id"].as_i64().unwrap(), deploy_id);

    // recall: string and object forms
    let r = command(s, "mira.recall", json!(["argo", "cd", "deploy"]))
        .await
        .unwrap();
    assert_eq!(r["memories"][0]["id"].as_i64().unwrap(), deploy_id);
    assert!(r["memories"][0]["score"].as_f64().unwrap() > 0.0);
    // A plain client (Helix) reads what was recalled in the message line.
    s.message_containing(&format!("Mira recalls: #{deploy_id} we deploy with ArgoCD"))
        .await;
    let r = command(s, "mira.recall", json!([{"query": "parser", "limit": 1}]))
        .await
        .unwrap();
    assert_eq!(r["memories"].as_array().unwrap().len(), 1);
    assert_eq!(r["memories"][0]["body"], "The parser lives in src/parse.rs");

    // correction through the object form
    let r = command(
        s,
        "mira.remember",
        json!([{"text": "we deploy with Flux", "corrects": deploy_id}]),
    )
    .await
    .unwrap();
    let flux = r["id"].as_i64().unwrap();
    let r = command(s, "mira.recall", json!(["deploy"])).await.unwrap();
    let ids: Vec<i64> = r["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [flux], "the corrected memory never surfaces");

    // forget (number, "#n" string, object) and restore
    let r = command(s, "mira.forget", json!([flux])).await.unwrap();
    assert_eq!(r["status"], "retracted");
    let err = command(s, "mira.forget", json!([format!("#{flux}")]))
        .await
        .unwrap_err();
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("already forgotten"),
        "{err}"
    );
    let r = command(s, "mira.forget", json!([{"id": flux, "restore": true}]))
        .await
        .unwrap();
    assert_eq!(r["status"], "active");

    // mira/memories: newest first without a query, recall with one
    let all = s.request("mira/memories", json!({})).await.unwrap();
    assert_eq!(all["memories"].as_array().unwrap().len(), 2, "{all}");
    assert!(all["memories"][0].get("score").is_none());
    let found = s
        .request("mira/memories", json!({"query": "flux", "limit": 5}))
        .await
        .unwrap();
    assert_eq!(found["memories"][0]["id"].as_i64().unwrap(), flux);

    // bad input: clear errors, nothing written
    let err = command(s, "mira.remember", json!([""])).await.unwrap_err();
    assert!(err["message"].as_str().unwrap().contains("empty"), "{err}");
    let err = command(
        s,
        "mira.remember",
        json!([{"text": "x", "kind": "opinion"}]),
    )
    .await
    .unwrap_err();
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("fact|preference|decision|correction"),
        "{err}"
    );
    let huge = "x".repeat(1024 * 1024);
    let err = command(s, "mira.remember", json!([huge]))
        .await
        .unwrap_err();
    assert!(
        err["message"].as_str().unwrap().contains("at most"),
        "{err}"
    );
    let err = command(s, "mira.forget", json!([{"id": 9999}]))
        .await
        .unwrap_err();
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("no memory with id 9999"),
        "{err}"
    );
    let all = s
        .request("mira/memories", json!({"limit": 100}))
        .await
        .unwrap();
    assert_eq!(all["memories"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn memory_commands_in_process() {
    let sandbox = Sandbox::new();
    let mut s = TestServer::in_process(&sandbox);
    exercise(&mut s, &sandbox).await;
    assert_eq!(s.shutdown().await, 0);
}

#[tokio::test]
async fn memory_over_the_binary_is_visible_to_the_cli() {
    let sandbox = Sandbox::new();
    let mut s = TestServer::binary(&sandbox);
    exercise(&mut s, &sandbox).await;
    assert_eq!(s.shutdown().await, 0);

    let out = sandbox
        .mira()
        .args(["recall", "parser", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let hits: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        hits[0]["memory"]["body"],
        "The parser lives in src/parse.rs"
    );
}

#[tokio::test]
async fn a_broken_embedder_setting_is_reported_and_recall_still_works() {
    let sandbox = Sandbox::new();
    let mut s = TestServer::in_process(&sandbox);
    // `local` without a model directory (or without the feature) cannot start
    s.initialize(json!({
        "processId": null,
        "rootUri": sandbox.project_uri(),
        "capabilities": {},
        "initializationOptions": {"mira": {"memory": {"embedder": {"provider": "local"}}}}
    }))
    .await;
    let log = s.notification("window/logMessage").await;
    let msg = log["params"]["message"].as_str().unwrap();
    assert!(
        msg.contains("embeddings are off, recall uses full-text search"),
        "{msg}"
    );
    assert!(
        msg.contains("local-embeddings") || msg.contains("model_dir"),
        "{msg}"
    );

    command(&mut s, "mira.remember", json!(["the build uses sccache"]))
        .await
        .unwrap();
    let r = command(&mut s, "mira.recall", json!(["sccache"]))
        .await
        .unwrap();
    assert_eq!(r["memories"][0]["body"], "the build uses sccache");
    assert_eq!(s.shutdown().await, 0);
}

fn cli(sandbox: &Sandbox, args: &[&str]) -> String {
    let out = sandbox.mira().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "mira {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// What the VS Code memories view shows in a new window: memories forgotten in an earlier
/// window (restorable from there), and tasks with their goals.
#[tokio::test]
async fn a_new_window_lists_forgotten_memories_and_tasks() {
    let sandbox = Sandbox::new();
    let mut first = TestServer::binary(&sandbox);
    first.initialize_default(&sandbox, &["utf-8"]).await;
    let r = command(
        &mut first,
        "mira.remember",
        json!(["staging runs on port 5433"]),
    )
    .await
    .unwrap();
    let id = r["id"].as_i64().unwrap();
    command(&mut first, "mira.remember", json!(["we ship on Thursdays"]))
        .await
        .unwrap();
    command(&mut first, "mira.forget", json!([{"id": id}]))
        .await
        .unwrap();
    assert_eq!(first.shutdown().await, 0);
    cli(&sandbox, &["goals", "add", "Ship billing v2"]);
    cli(
        &sandbox,
        &["tasks", "add", "write the migration", "--goal", "1"],
    );
    cli(&sandbox, &["tasks", "add", "rotate the staging keys"]);
    cli(&sandbox, &["tasks", "add", "old chore"]);
    cli(&sandbox, &["tasks", "done", "3"]);

    let mut s = TestServer::binary(&sandbox);
    s.initialize_default(&sandbox, &["utf-8"]).await;
    let active = s.request("mira/memories", json!({})).await.unwrap();
    let bodies: Vec<&str> = active["memories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["body"].as_str().unwrap())
        .collect();
    assert_eq!(bodies, ["we ship on Thursdays"]);
    let forgotten = s
        .request("mira/memories", json!({"status": "retracted"}))
        .await
        .unwrap();
    assert_eq!(forgotten["memories"][0]["id"], id, "{forgotten}");
    assert_eq!(forgotten["memories"][0]["status"], "retracted");
    assert_eq!(forgotten["memories"].as_array().unwrap().len(), 1);

    // Restored from the new window: active again, gone from the forgotten list.
    command(&mut s, "mira.forget", json!([{"id": id, "restore": true}]))
        .await
        .unwrap();
    let forgotten = s
        .request("mira/memories", json!({"status": "retracted"}))
        .await
        .unwrap();
    assert!(forgotten["memories"].as_array().unwrap().is_empty());
    let active = s.request("mira/memories", json!({})).await.unwrap();
    assert_eq!(active["memories"].as_array().unwrap().len(), 2);

    let open = s.request("mira/tasks", json!({})).await.unwrap();
    let titles: Vec<(&str, Value)> = open["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["title"].as_str().unwrap(), t["goal_id"].clone()))
        .collect();
    assert_eq!(titles.len(), 2, "{open}");
    assert!(
        titles.contains(&("write the migration", json!(1))),
        "{open}"
    );
    assert!(
        titles.contains(&("rotate the staging keys", Value::Null)),
        "{open}"
    );
    let all = s.request("mira/tasks", json!({"all": true})).await.unwrap();
    assert_eq!(all["tasks"].as_array().unwrap().len(), 3);
    let of_goal = s.request("mira/tasks", json!({"goal": 1})).await.unwrap();
    assert_eq!(of_goal["tasks"].as_array().unwrap().len(), 1);

    // Bad params are errors, and the server keeps answering.
    let e = s
        .request("mira/tasks", json!({"goal": "one"}))
        .await
        .unwrap_err();
    assert_eq!(e["code"], -32602, "{e}");
    let e = s
        .request("mira/memories", json!({"status": "gone"}))
        .await
        .unwrap_err();
    assert_eq!(e["code"], -32602, "{e}");
    let e = s
        .request(
            "mira/memories",
            json!({"query": "port", "status": "retracted"}),
        )
        .await
        .unwrap_err();
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("cannot be combined"),
        "{e}"
    );
    assert!(s.request("mira/tasks", json!({})).await.is_ok());
    assert_eq!(s.shutdown().await, 0);
}

/// VS Code and the Neovim plugin ask for Mira's notifications and list a recall's memories
/// themselves: no message line repeats them.
#[tokio::test]
async fn a_client_with_mira_notifications_gets_no_recall_message() {
    let sandbox = Sandbox::new();
    let mut s = TestServer::in_process(&sandbox);
    s.initialize(json!({
        "processId": null,
        "rootUri": sandbox.project_uri(),
        "capabilities": {},
        "initializationOptions": {"mira": {"notifications": true}},
        "clientInfo": {"name": "mira-tests"}
    }))
    .await;
    command(&mut s, "mira.remember", json!(["we deploy with ArgoCD"]))
        .await
        .unwrap();
    let r = command(&mut s, "mira.recall", json!(["argocd"]))
        .await
        .unwrap();
    assert_eq!(r["memories"][0]["body"], "we deploy with ArgoCD");
    let r = command(&mut s, "mira.recall", json!(["nothing like it"]))
        .await
        .unwrap();
    assert!(r["memories"].is_array(), "{r}");
    // A message sent after the recalls has arrived: theirs would have too.
    let r = command(
        &mut s,
        "mira.remember",
        json!(["the staging cluster is eu-west"]),
    )
    .await
    .unwrap();
    s.message_containing(&format!("Remembered #{}", r["id"]))
        .await;
    let messages: Vec<String> = s
        .notifications()
        .iter()
        .filter(|n| n["method"] == "window/showMessage")
        .map(|n| {
            n["params"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert!(
        messages.iter().any(|m| m.contains("Remembered #")),
        "the first remember is still confirmed: {messages:?}"
    );
    assert!(
        !messages
            .iter()
            .any(|m| m.starts_with("Mira recalls") || m.starts_with("Mira remembers nothing")),
        "{messages:?}"
    );
    s.shutdown().await;
}
