//! MemoryService end to end with a real embedding server on loopback (OpenAI wire format):
//! background embedding, vector recall, similarity dedup on write, the embedder going down
//! (recall falls back to BM25, nothing is lost), and switching embedders (a new vector table,
//! re-embedding while recall keeps working).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::embed::Embedder;
use crate::embed::{EmbedderConfig, EmbedderKind};
use crate::memory::RecallWeights;
use crate::memory::vectors;
use crate::memory::{MemoryKind, MemoryService, Outcome, RememberRequest};
use crate::store::Store;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const DIM: usize = 32;

/// A toy embedding model: bag of words, with a few synonyms sharing a dimension, so that
/// vectors find what BM25 cannot ("whitespace" ~ "indentation").
fn toy_vector(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; DIM];
    for w in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let w = w.to_lowercase();
        if ["we", "the", "for", "a", "on", "always", "do", "what", "is"].contains(&w.as_str()) {
            continue;
        }
        let canon = match w.as_str() {
            "indentation" | "indent" | "whitespace" => "indent",
            "tabs" | "tab" => "tab",
            other => other,
        };
        let h = canon
            .bytes()
            .fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
        v[(h as usize) % DIM] += 1.0;
    }
    v
}

struct ToyServer {
    url: String,
    down: Arc<AtomicBool>,
    calls: Arc<AtomicUsize>,
}

async fn toy_server() -> ToyServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let down = Arc::new(AtomicBool::new(false));
    let calls = Arc::new(AtomicUsize::new(0));
    let (d, c) = (down.clone(), calls.clone());
    tokio::spawn(async move {
        loop {
            let (mut sock, _) = listener.accept().await.unwrap();
            let (d, c) = (d.clone(), c.clone());
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 8192];
                let head_end = loop {
                    let n = sock.read(&mut chunk).await.unwrap();
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break p + 4;
                    }
                };
                let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map_or(0, |v| v.trim().parse().unwrap());
                while buf.len() < head_end + len {
                    let n = sock.read(&mut chunk).await.unwrap();
                    buf.extend_from_slice(&chunk[..n]);
                }
                c.fetch_add(1, Ordering::SeqCst);
                let (status, body) = if d.load(Ordering::SeqCst) {
                    (500, r#"{"error":{"message":"model crashed"}}"#.to_string())
                } else {
                    let req: serde_json::Value = serde_json::from_slice(&buf[head_end..]).unwrap();
                    let data: Vec<serde_json::Value> = req["input"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .enumerate()
                        .map(|(i, t)| serde_json::json!({"object": "embedding", "index": i, "embedding": toy_vector(t.as_str().unwrap())}))
                        .collect();
                    (
                        200,
                        serde_json::json!({"object": "list", "data": data, "model": req["model"]})
                            .to_string(),
                    )
                };
                let resp = format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                sock.write_all(resp.as_bytes()).await.unwrap();
            });
        }
    });
    ToyServer { url, down, calls }
}

fn service(store: &Store, url: &str, model: &str) -> MemoryService {
    let cfg = EmbedderConfig {
        provider: EmbedderKind::Openai,
        base_url: Some(url.to_string()),
        model: Some(model.to_string()),
        max_retries: 0,
        timeout_secs: 5,
        ..Default::default()
    };
    let embedder = Embedder::from_config(&cfg, None).unwrap();
    MemoryService::new(store.clone(), embedder, RecallWeights::default())
}

fn req(text: &str) -> RememberRequest {
    RememberRequest {
        text: text.into(),
        kind: MemoryKind::Fact,
        project_scoped: false,
        corrects: None,
        anchors: Vec::new(),
    }
}

async fn recall_bodies(s: &MemoryService, q: &str) -> Vec<String> {
    s.recall(q, None, 5)
        .await
        .unwrap()
        .into_iter()
        .map(|h| h.memory.body)
        .collect()
}

#[tokio::test]
async fn background_embedding_vector_recall_and_similarity_dedup() {
    let server = toy_server().await;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("mira.db")).unwrap();
    let s = service(&store, &server.url, "toy-a");

    s.remember(req("We always use tabs for indentation"), None)
        .await
        .unwrap();
    s.remember(req("The staging API runs on port 8080"), None)
        .await
        .unwrap();
    assert_eq!(s.embed_pending().await.unwrap(), 2);
    assert_eq!(s.embed_pending().await.unwrap(), 0, "nothing left");

    // "whitespace" shares no word with the memory: found by the vector, not by BM25
    let hits = s.recall("whitespace", None, 5).await.unwrap();
    assert_eq!(hits[0].memory.body, "We always use tabs for indentation");
    assert_eq!((hits[0].bm25_rank, hits[0].vector_rank), (None, Some(1)));

    // a rewording that adds nothing is recognised; a different value is not merged away
    let r = s
        .remember(req("Always use tabs for indentation."), None)
        .await
        .unwrap();
    assert_eq!(r.outcome, Outcome::Similar);
    assert_eq!(r.memory.seen_count, 2);
    let r = s
        .remember(req("The staging API runs on port 9090"), None)
        .await
        .unwrap();
    assert_eq!(r.outcome, Outcome::Created);
    // ...and its vector was stored on write
    let space = store
        .read(|c| Ok(vectors::lookup(c, "openai:toy-a")))
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        store
            .read(|c| Ok(vectors::pending_count(c, &space)))
            .unwrap()
            .unwrap(),
        0
    );
}

#[tokio::test]
async fn embedder_down_recall_falls_back_and_nothing_is_lost() {
    let server = toy_server().await;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("mira.db")).unwrap();
    let s = service(&store, &server.url, "toy-a");
    s.remember(req("The billing service stores invoices in Postgres"), None)
        .await
        .unwrap();
    s.embed_pending().await.unwrap();

    server.down.store(true, Ordering::SeqCst);
    // remember still works (exact dedup only), recall still answers from BM25
    let r = s
        .remember(req("Invoices are archived after seven years"), None)
        .await
        .unwrap();
    assert_eq!(r.outcome, Outcome::Created);
    assert_eq!(
        recall_bodies(&s, "invoices").await.len(),
        2,
        "BM25 keeps working while the embedder is down"
    );
    let err = s.embed_pending().await.unwrap_err();
    assert!(err.to_string().contains("model crashed"), "{err}");
    let space = store
        .read(|c| Ok(vectors::lookup(c, "openai:toy-a")))
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        store
            .read(|c| Ok(vectors::pending_count(c, &space)))
            .unwrap()
            .unwrap(),
        1
    );

    server.down.store(false, Ordering::SeqCst);
    assert_eq!(
        s.embed_pending().await.unwrap(),
        1,
        "caught up once the embedder is back"
    );
}

#[tokio::test]
async fn switching_embedders_uses_a_new_table_and_keeps_recall_working() {
    let server = toy_server().await;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("mira.db")).unwrap();
    let a = service(&store, &server.url, "toy-a");
    for t in [
        "We always use tabs for indentation",
        "Deploys need two approvals",
        "Maria owns billing",
    ] {
        a.remember(req(t), None).await.unwrap();
    }
    a.embed_pending().await.unwrap();

    // a new model: its vectors go to their own table, never mixed with toy-a's
    let b = service(&store, &server.url, "toy-b");
    let calls_before = server.calls.load(Ordering::SeqCst);
    // (the other two follow, found through their neighbour's words: all three were written
    // together, so each carries the others as context)
    assert_eq!(
        recall_bodies(&b, "approvals")
            .await
            .first()
            .map(String::as_str),
        Some("Deploys need two approvals"),
        "BM25 meanwhile"
    );
    assert_eq!(
        server.calls.load(Ordering::SeqCst),
        calls_before,
        "no table yet: query not even embedded"
    );
    assert_eq!(b.embed_pending().await.unwrap(), 3);
    let hits = b.recall("whitespace", None, 5).await.unwrap();
    assert_eq!(hits[0].memory.body, "We always use tabs for indentation");

    let (embedders, tables): (i64, i64) = store
        .read(|c| {
            Ok((
                c.query_row("SELECT count(*) FROM embedders", [], |r| r.get(0))?,
                c.query_row(
                    "SELECT count(*) FROM sqlite_master WHERE name GLOB 'memory_vec_*' AND sql LIKE 'CREATE VIRTUAL TABLE%'",
                    [],
                    |r| r.get(0),
                )?,
            ))
        })
        .unwrap();
    assert_eq!((embedders, tables), (2, 2));
    // forget drops the memory's vectors from both tables; restore re-embeds from the cache
    let approvals = b.recall("approvals", None, 1).await.unwrap()[0].memory.id;
    b.forget(approvals).await.unwrap();
    let rows = |store: &Store| -> i64 {
        store
            .read(|c| {
                c.query_row(
                    "SELECT count(*) FROM memory_vectors WHERE memory_id = ?1",
                    [approvals],
                    |r| r.get(0),
                )
            })
            .unwrap()
    };
    assert_eq!(rows(&store), 0);
    b.restore(approvals).await.unwrap();
    let before = server.calls.load(Ordering::SeqCst);
    assert_eq!(b.embed_pending().await.unwrap(), 1);
    assert_eq!(
        server.calls.load(Ordering::SeqCst),
        before,
        "served from the embedding cache"
    );
    assert_eq!(rows(&store), 1);

    // back on toy-a: only the restored memory lacks a toy-a vector, and the cache has it
    let a2 = service(&store, &server.url, "toy-a");
    let before = server.calls.load(Ordering::SeqCst);
    assert_eq!(a2.embed_pending().await.unwrap(), 1);
    assert_eq!(
        server.calls.load(Ordering::SeqCst),
        before,
        "no embedder call"
    );
}

/// The bundled encoder in an editor: nothing is loaded until memory is used; the first
/// remembers (concurrent) load it once, and recall then ranks by its vectors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lazy_embedder_loads_once_on_first_use() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("mira.db")).unwrap();
    let s = MemoryService::new(store, None, RecallWeights::default());
    let loads = Arc::new(AtomicUsize::new(0));
    let counted = loads.clone();
    s.load_on_first_use(Box::new(move || {
        counted.fetch_add(1, Ordering::SeqCst);
        Embedder::from_config(&EmbedderConfig::default(), None)
    }));
    assert!(s.embedder().is_none(), "loaded before any use");
    let (a, b) = tokio::join!(
        s.remember(
            req("The staging database password rotates every ninety days"),
            None
        ),
        s.remember(req("Our cat is called Biscuit"), None),
    );
    a.unwrap();
    b.unwrap();
    assert_eq!(loads.load(Ordering::SeqCst), 1);
    assert!(s.embedder().is_some());
    // The first vectors of a model are written by the background worker (it creates the
    // table); wait for it as recall in a session would a moment later.
    s.embed_pending().await.unwrap();
    let hits = s
        .recall("how often do the credentials change", None, 2)
        .await
        .unwrap();
    assert_eq!(
        hits[0].memory.body,
        "The staging database password rotates every ninety days"
    );
    assert!(hits[0].vector_rank.is_some(), "{hits:?}");
}
