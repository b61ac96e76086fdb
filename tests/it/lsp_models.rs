//! `mira.models` over LSP (issue 23, "the VS Code model setting offers the server's
//! models"): the real binary asks a loopback OpenAI-compatible server for `/v1/models`,
//! marks the model in use, follows a model changed through `didChangeConfiguration`, and
//! fails clearly and promptly when the server is down or hangs, without holding up other
//! requests.

use crate::support as common;

use common::{Sandbox, TestServer};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const MODELS: &str = r#"{"object":"list","data":[
  {"id":"qwen3:8b","object":"model","meta":{"n_ctx":8192}},
  {"id":"llama3.2:3b","object":"model","context_length":4096},
  {"id":"smollm2","object":"model"}
]}"#;

/// A loopback server with three models: `/v1/models` answers the list; every other path
/// (the window probes) answers 404, as a server without them does.
async fn model_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&buf);
                let path = head.split_whitespace().nth(1).unwrap_or("").to_string();
                let reply = if path == "/v1/models" {
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{MODELS}",
                        MODELS.len()
                    )
                } else {
                    "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                        .to_string()
                };
                let _ = sock.write_all(reply.as_bytes()).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    format!("http://{addr}/v1")
}

/// A server that accepts connections and never answers.
async fn hanging_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((sock, _)) = listener.accept().await {
            held.push(sock);
        }
    });
    format!("http://{addr}/v1")
}

async fn start(sandbox: &Sandbox, base_url: &str, model: &str) -> TestServer {
    let mut env = sandbox.env();
    env.extend([
        ("MIRA_PROVIDER".to_string(), "openai-chat".to_string()),
        ("MIRA_BASE_URL".to_string(), base_url.to_string()),
        ("MIRA_MODEL".to_string(), model.to_string()),
    ]);
    let mut s = TestServer::binary_with_env(env, &sandbox.project());
    s.initialize_default(sandbox, &["utf-16"]).await;
    s
}

async fn models(s: &mut TestServer) -> Result<Value, Value> {
    s.request(
        "workspace/executeCommand",
        json!({"command": "mira.models", "arguments": []}),
    )
    .await
}

fn ids(list: &Value) -> Vec<&str> {
    list["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect()
}

fn in_use(list: &Value) -> Vec<&str> {
    list["models"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["inUse"] == true)
        .map(|m| m["id"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn mira_models_lists_the_servers_models_and_follows_the_editors_setting() {
    let sandbox = Sandbox::new();
    let base_url = model_server().await;
    let mut s = start(&sandbox, &base_url, "qwen3:8b").await;

    let list = models(&mut s).await.expect("mira.models");
    assert_eq!(ids(&list), ["llama3.2:3b", "qwen3:8b", "smollm2"], "{list}");
    assert_eq!(in_use(&list), ["qwen3:8b"], "{list}");
    assert_eq!(list["model"], "qwen3:8b");
    assert_eq!(list["baseUrl"], base_url.as_str());
    assert_eq!(list["available"], true);
    assert_eq!(list["models"][0]["window"], 4096, "{list}");
    assert_eq!(list["models"][1]["window"], 8192, "{list}");
    assert!(list["models"][2].get("window").is_none(), "{list}");
    assert!(list["window"].as_u64().unwrap() > 0, "{list}");
    assert!(list["windowDescribed"].is_string(), "{list}");

    // The editor's model setting (what "Mira: Choose Model" writes) reaches the server.
    s.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"mira": {"provider": {"model": "smollm2"}}}}),
    )
    .await;
    let list = models(&mut s).await.expect("mira.models after the change");
    assert_eq!(list["model"], "smollm2", "{list}");
    assert_eq!(in_use(&list), ["smollm2"], "{list}");

    // A model the server does not have is reported, not hidden.
    s.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"mira": {"provider": {"model": "gone"}}}}),
    )
    .await;
    let list = models(&mut s)
        .await
        .expect("mira.models with an unknown model");
    assert_eq!(list["available"], false, "{list}");
    assert!(in_use(&list).is_empty(), "{list}");
    s.shutdown().await;
}

#[tokio::test]
async fn mira_models_fails_clearly_and_at_once_when_the_server_is_down() {
    let sandbox = Sandbox::new();
    // A port nobody listens on any more.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let base_url = format!("http://127.0.0.1:{port}/v1");
    let mut s = start(&sandbox, &base_url, "qwen3:8b").await;
    let t = Instant::now();
    let err = models(&mut s).await.expect_err("no server, no list");
    assert!(
        t.elapsed() < Duration::from_secs(4),
        "took {:?}",
        t.elapsed()
    );
    let msg = err["message"].as_str().unwrap();
    assert!(
        msg.contains(&format!("127.0.0.1:{port}")),
        "the error names the server: {msg}"
    );
    // The server goes on answering.
    s.request(
        "workspace/executeCommand",
        json!({"command": "mira.status", "arguments": []}),
    )
    .await
    .expect("mira.status after the failure");
    s.shutdown().await;
}

#[tokio::test]
async fn a_hanging_model_server_holds_up_no_other_request_and_times_out() {
    let sandbox = Sandbox::new();
    let base_url = hanging_server().await;
    let mut s = start(&sandbox, &base_url, "qwen3:8b").await;
    let t = Instant::now();
    let pending = s
        .request_start(
            "workspace/executeCommand",
            json!({"command": "mira.models", "arguments": []}),
        )
        .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let status = s
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.status", "arguments": []}),
        )
        .await
        .expect("mira.status while mira.models waits");
    assert!(status["pid"].is_number());
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "mira.status waited for the model server: {:?}",
        t.elapsed()
    );
    let err = s
        .response_within(pending, Duration::from_secs(10))
        .await
        .expect("mira.models answers within its patience")
        .expect_err("a hanging server gives no list");
    let msg = err["message"].as_str().unwrap();
    assert!(msg.contains("did not answer"), "{msg}");
    s.shutdown().await;
}
