//! The HTTP embedders against a real HTTP/1.1 server on loopback speaking the OpenAI
//! `/v1/embeddings` and Ollama `/api/embed` wire formats, including 429 + Retry-After, 500,
//! 401 and malformed bodies.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::embed::{EmbedError, Embedder, EmbedderConfig, Provider};
use secrecy::SecretString;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

#[derive(Debug, Clone)]
struct Recorded {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: serde_json::Value,
}

#[derive(Clone)]
struct Reply {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: String,
}

fn json(status: u16, body: serde_json::Value) -> Reply {
    Reply {
        status,
        headers: vec![],
        body: body.to_string(),
    }
}

/// A loopback server answering each request with the next scripted reply (the last one repeats).
struct Server {
    url: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

async fn serve(replies: Vec<Reply>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let recorded = requests.clone();
    tokio::spawn(async move {
        let mut i = 0;
        loop {
            let (mut sock, _) = listener.accept().await.unwrap();
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            let head_end = loop {
                let n = sock.read(&mut chunk).await.unwrap();
                assert!(n > 0, "client closed before sending headers");
                buf.extend_from_slice(&chunk[..n]);
                if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                    break p + 4;
                }
            };
            let head = String::from_utf8(buf[..head_end].to_vec()).unwrap();
            let mut lines = head.split("\r\n");
            let mut request_line = lines.next().unwrap().split(' ');
            let method = request_line.next().unwrap().to_string();
            let path = request_line.next().unwrap().to_string();
            let headers: Vec<(String, String)> = lines
                .filter_map(|l| l.split_once(':'))
                .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
                .collect();
            let len: usize = headers
                .iter()
                .find(|(k, _)| k == "content-length")
                .map_or(0, |(_, v)| v.parse().unwrap());
            while buf.len() < head_end + len {
                let n = sock.read(&mut chunk).await.unwrap();
                buf.extend_from_slice(&chunk[..n]);
            }
            let body = serde_json::from_slice(&buf[head_end..head_end + len])
                .unwrap_or(serde_json::Value::Null);
            recorded.lock().unwrap().push(Recorded {
                method,
                path,
                headers,
                body,
            });
            let reply = replies[i.min(replies.len() - 1)].clone();
            i += 1;
            let mut out = format!(
                "HTTP/1.1 {} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
                reply.status,
                reply.body.len()
            );
            for (k, v) in &reply.headers {
                out.push_str(&format!("{k}: {v}\r\n"));
            }
            out.push_str("\r\n");
            out.push_str(&reply.body);
            sock.write_all(out.as_bytes()).await.unwrap();
            sock.shutdown().await.ok();
        }
    });
    Server { url, requests }
}

fn openai_ok(vectors: &[&[f32]]) -> Reply {
    // deliberately out of order: clients must sort by index
    let mut data: Vec<serde_json::Value> = vectors
        .iter()
        .enumerate()
        .map(|(i, v)| serde_json::json!({"object": "embedding", "index": i, "embedding": v}))
        .collect();
    data.reverse();
    json(
        200,
        serde_json::json!({
            "object": "list", "data": data, "model": "text-embedding-3-small",
            "usage": {"prompt_tokens": 8, "total_tokens": 8}
        }),
    )
}

fn config(provider: Provider, url: &str) -> EmbedderConfig {
    EmbedderConfig {
        provider,
        base_url: Some(url.to_string()),
        max_retries: 3,
        timeout_secs: 5,
        ..Default::default()
    }
}

fn texts(t: &[&str]) -> Vec<String> {
    t.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn openai_wire_format_order_and_normalisation() {
    let server = serve(vec![openai_ok(&[&[3.0, 4.0], &[0.0, 2.0]])]).await;
    let mut cfg = config(Provider::Openai, &format!("{}/v1", server.url));
    cfg.api_key = Some(SecretString::from("sk-test-123"));
    cfg.model = Some("text-embedding-3-small".into());
    let e = Embedder::from_config(&cfg, None).unwrap().unwrap();
    assert_eq!(e.model_id(), "openai:text-embedding-3-small");
    let v = e.embed(&texts(&["first", "second"])).await.unwrap();
    assert_eq!(v, vec![vec![0.6, 0.8], vec![0.0, 1.0]]);

    let reqs = server.requests.lock().unwrap();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("POST", "/v1/embeddings")
    );
    assert!(
        r.headers
            .contains(&("authorization".into(), "Bearer sk-test-123".into()))
    );
    assert_eq!(
        r.body,
        serde_json::json!({"model": "text-embedding-3-small", "input": ["first", "second"], "encoding_format": "float"})
    );
}

#[tokio::test]
async fn openai_batches_and_sends_dimensions_only_when_configured() {
    let server = serve(vec![
        openai_ok(&[&[1.0, 0.0], &[0.0, 1.0]]),
        openai_ok(&[&[1.0, 1.0]]),
    ])
    .await;
    let mut cfg = config(Provider::Openai, &server.url);
    cfg.batch_size = 2;
    cfg.dimensions = Some(2);
    let e = Embedder::from_config(&cfg, None).unwrap().unwrap();
    assert_eq!(e.model_id(), "openai:text-embedding-3-small@2");
    let v = e.embed(&texts(&["a", "b", "c"])).await.unwrap();
    assert_eq!(v.len(), 3);
    let reqs = server.requests.lock().unwrap();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].body["input"], serde_json::json!(["a", "b"]));
    assert_eq!(reqs[1].body["input"], serde_json::json!(["c"]));
    assert_eq!(reqs[0].body["dimensions"], 2);
}

#[tokio::test]
async fn retries_429_after_retry_after_then_succeeds() {
    let server = serve(vec![
        Reply {
            status: 429,
            headers: vec![("retry-after", "1".into())],
            body: r#"{"error":{"message":"Rate limit reached","type":"requests"}}"#.into(),
        },
        openai_ok(&[&[1.0, 0.0]]),
    ])
    .await;
    let e = Embedder::from_config(&config(Provider::Openai, &server.url), None)
        .unwrap()
        .unwrap();
    let started = Instant::now();
    let v = e.embed(&texts(&["x"])).await.unwrap();
    let waited = started.elapsed();
    assert_eq!(v, vec![vec![1.0, 0.0]]);
    assert!(
        waited >= Duration::from_millis(950),
        "Retry-After honoured: waited {waited:?}"
    );
    assert_eq!(server.requests.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn retries_500_with_backoff_then_gives_a_clear_error() {
    let server = serve(vec![json(
        500,
        serde_json::json!({"error": {"message": "upstream exploded"}}),
    )])
    .await;
    let mut cfg = config(Provider::Openai, &server.url);
    cfg.max_retries = 2;
    let e = Embedder::from_config(&cfg, None).unwrap().unwrap();
    let err = e.embed(&texts(&["x"])).await.unwrap_err();
    assert!(
        matches!(err, EmbedError::Status { status: 500, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("upstream exploded"), "{err}");
    assert!(err.is_transient());
    assert_eq!(
        server.requests.lock().unwrap().len(),
        3,
        "1 try + 2 retries"
    );

    // a 500 followed by success is invisible to the caller
    let server = serve(vec![
        json(500, serde_json::json!({"error": "busy"})),
        openai_ok(&[&[0.0, 1.0]]),
    ])
    .await;
    let e = Embedder::from_config(&config(Provider::Openai, &server.url), None)
        .unwrap()
        .unwrap();
    assert_eq!(e.embed(&texts(&["x"])).await.unwrap(), vec![vec![0.0, 1.0]]);
}

#[tokio::test]
async fn long_retry_after_is_not_waited_out() {
    let server = serve(vec![Reply {
        status: 429,
        headers: vec![("retry-after", "3600".into())],
        body: "{}".into(),
    }])
    .await;
    let e = Embedder::from_config(&config(Provider::Openai, &server.url), None)
        .unwrap()
        .unwrap();
    let started = Instant::now();
    let err = e.embed(&texts(&["x"])).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(err.to_string().contains("retry after 3600 s"), "{err}");
    assert_eq!(server.requests.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn unauthorized_and_malformed_responses_fail_without_retry() {
    let server = serve(vec![json(
        401,
        serde_json::json!({"error": {"message": "Incorrect API key provided"}}),
    )])
    .await;
    let e = Embedder::from_config(&config(Provider::Openai, &server.url), None)
        .unwrap()
        .unwrap();
    let err = e.embed(&texts(&["x"])).await.unwrap_err();
    assert!(err.to_string().contains("OPENAI_API_KEY"), "{err}");
    assert_eq!(server.requests.lock().unwrap().len(), 1);

    let server = serve(vec![json(
        200,
        serde_json::json!({"data": [{"index": 0, "embedding": [1.0]}]}),
    )])
    .await;
    let e = Embedder::from_config(&config(Provider::Openai, &server.url), None)
        .unwrap()
        .unwrap();
    let err = e.embed(&texts(&["a", "b"])).await.unwrap_err();
    assert!(err.to_string().contains("1 vectors for 2 inputs"), "{err}");

    let server = serve(vec![Reply {
        status: 200,
        headers: vec![],
        body: "<html>proxy</html>".into(),
    }])
    .await;
    let e = Embedder::from_config(&config(Provider::Ollama, &server.url), None)
        .unwrap()
        .unwrap();
    assert!(matches!(
        e.embed(&texts(&["a"])).await.unwrap_err(),
        EmbedError::BadResponse { .. }
    ));
}

#[tokio::test]
async fn ollama_wire_format() {
    let server = serve(vec![json(
        200,
        serde_json::json!({
            "model": "nomic-embed-text",
            "embeddings": [[0.0, 5.0], [2.0, 0.0]],
            "total_duration": 14143917, "load_duration": 1019500, "prompt_eval_count": 8
        }),
    )])
    .await;
    let e = Embedder::from_config(&config(Provider::Ollama, &server.url), None)
        .unwrap()
        .unwrap();
    assert_eq!(e.model_id(), "ollama:nomic-embed-text");
    let v = e.embed(&texts(&["a", "b"])).await.unwrap();
    assert_eq!(v, vec![vec![0.0, 1.0], vec![1.0, 0.0]]);
    let reqs = server.requests.lock().unwrap();
    assert_eq!(reqs[0].path, "/api/embed");
    assert_eq!(
        reqs[0].body,
        serde_json::json!({"model": "nomic-embed-text", "input": ["a", "b"], "truncate": true})
    );
    assert!(!reqs[0].headers.iter().any(|(k, _)| k == "authorization"));
}

#[tokio::test]
async fn ollama_429_and_500_are_retried() {
    let ok = json(
        200,
        serde_json::json!({"model": "m", "embeddings": [[1.0, 0.0]]}),
    );
    let server = serve(vec![
        Reply {
            status: 429,
            headers: vec![("retry-after", "0".into())],
            body: "{}".into(),
        },
        json(500, serde_json::json!({"error": "model is loading"})),
        ok,
    ])
    .await;
    let e = Embedder::from_config(&config(Provider::Ollama, &server.url), None)
        .unwrap()
        .unwrap();
    assert_eq!(e.embed(&texts(&["a"])).await.unwrap(), vec![vec![1.0, 0.0]]);
    assert_eq!(server.requests.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn unreachable_server_and_bad_config_are_clear() {
    // a port nothing listens on
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut cfg = config(Provider::Ollama, &format!("http://127.0.0.1:{port}"));
    cfg.max_retries = 0;
    let e = Embedder::from_config(&cfg, None).unwrap().unwrap();
    let err = e.embed(&texts(&["a"])).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("cannot reach the embedding server"),
        "{err}"
    );

    let err = Embedder::from_config(&config(Provider::Openai, "localhost:1234"), None).unwrap_err();
    assert!(err.to_string().contains("must start with http://"), "{err}");
    // the default is the built-in table; `none` turns vectors off
    let default = Embedder::from_config(&EmbedderConfig::default(), None).unwrap();
    assert!(default.is_some_and(|e| e.model_id().starts_with("builtin:")));
    let off = EmbedderConfig {
        provider: Provider::None,
        ..EmbedderConfig::default()
    };
    assert!(Embedder::from_config(&off, None).unwrap().is_none());
    let err = Embedder::from_config(
        &EmbedderConfig {
            provider: Provider::Local,
            ..Default::default()
        },
        None,
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("memory.embedder.model_dir"),
        "{err}"
    );
    let err = Embedder::from_config(
        &EmbedderConfig {
            model: Some("bge-large".into()),
            ..Default::default()
        },
        None,
    )
    .unwrap_err();
    assert!(err.to_string().contains("\"static\""), "{err}");
}

/// OPENAI_API_KEY belongs to OpenAI: an OpenAI-compatible server on this machine (llama.cpp,
/// LM Studio) never sees it; a key written for the embedder is sent.
#[tokio::test]
async fn the_openai_key_never_reaches_a_server_on_this_machine() {
    let ok = || {
        json(
            200,
            serde_json::json!({"data": [{"index": 0, "embedding": [1.0, 0.0]}]}),
        )
    };
    let server = serve(vec![ok(), ok()]).await;
    let key = secrecy::SecretString::from("sk-test-openai-key-0000000000");
    let e = Embedder::from_config(&config(Provider::Openai, &server.url), Some(&key))
        .unwrap()
        .unwrap();
    e.embed(&texts(&["x"])).await.unwrap();
    let own = EmbedderConfig {
        api_key: Some(secrecy::SecretString::from("local-key")),
        ..config(Provider::Openai, &server.url)
    };
    let e = Embedder::from_config(&own, Some(&key)).unwrap().unwrap();
    e.embed(&texts(&["x"])).await.unwrap();
    let auth: Vec<Option<String>> = server
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|r| {
            r.headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("authorization"))
                .map(|(_, v)| v.clone())
        })
        .collect();
    assert_eq!(auth, [None, Some("Bearer local-key".to_string())]);
}
