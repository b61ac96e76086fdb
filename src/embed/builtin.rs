//! The built-in embedder, on by default: a static table (one vector per word piece) distilled
//! from all-MiniLM-L6-v2 by `scripts/distill-static-model` and compiled into the binary, so
//! recall works by meaning with no download, no network and no model to load.
//!
//! A text's vector is the mean of its pieces' rows (frequent pieces were weighted down when
//! the table was built), L2-normalised: microseconds per text, so a memory is embedded as it
//! is written and a whole project's symbols in seconds. Identifiers are split into words
//! first (`parseConfig` → `parse config`): the uncased vocabulary only knows words.

use std::sync::OnceLock;

use super::normalise;
use super::wordpiece::WordPiece;

/// `MST1`, vocab u32, dim u32, scale f32[vocab], row i8[vocab*dim] (little-endian).
static TABLE: &[u8] = include_bytes!("../../assets/embed/static.bin");
/// bert-base-uncased's vocabulary, shared with the bundled transformer (`local.rs`).
pub(super) static VOCAB: &str = include_str!("../../assets/embed/vocab.txt");

/// Pieces of one text that count (the rest of a long text adds time, not meaning).
const MAX_PIECES: usize = 512;

pub struct BuiltinEmbedder {
    tokenizer: WordPiece,
    scale: Vec<f32>,
    rows: &'static [u8],
    dim: usize,
}

impl BuiltinEmbedder {
    /// Names the table; change it whenever `assets/embed/static.bin` changes, so vectors of
    /// two tables never meet in one space.
    pub const MODEL_ID: &'static str = "builtin:minilm-static-256-v1";

    /// The one table, parsed on first use (a few milliseconds).
    pub fn get() -> &'static BuiltinEmbedder {
        static ONE: OnceLock<BuiltinEmbedder> = OnceLock::new();
        ONE.get_or_init(|| {
            BuiltinEmbedder::parse(TABLE, VOCAB)
                .expect("the built-in table is well-formed (tests check it)")
        })
    }

    pub(super) fn parse(table: &'static [u8], vocab: &str) -> Result<BuiltinEmbedder, String> {
        let u32_at = |o: usize| -> Result<usize, String> {
            let b = table.get(o..o + 4).ok_or("table too short")?;
            Ok(u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize)
        };
        if table.get(..4) != Some(b"MST1") {
            return Err("not a MST1 table".into());
        }
        let (n, dim) = (u32_at(4)?, u32_at(8)?);
        let scales = table
            .get(12..12 + 4 * n)
            .ok_or("table too short for its scales")?;
        let rows = &table[12 + 4 * n..];
        if rows.len() != n * dim {
            return Err(format!(
                "table holds {} row bytes, expected {}",
                rows.len(),
                n * dim
            ));
        }
        let tokenizer = WordPiece::from_vocab(vocab)?;
        if tokenizer.len() != n {
            return Err(format!("vocab has {} pieces, table {n}", tokenizer.len()));
        }
        let scale = scales
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect();
        Ok(BuiltinEmbedder {
            tokenizer,
            scale,
            rows,
            dim,
        })
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The word pieces a text's vector is the mean of, in order (for training tables that
    /// must see texts exactly as this embedder does: `examples/code_pairs.rs`).
    pub fn piece_ids(&self, text: &str) -> Vec<u32> {
        self.tokenizer
            .pieces(&prepare(text))
            .take(MAX_PIECES)
            .collect()
    }

    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut acc = vec![0f32; self.dim];
        let words = prepare(text);
        let mut n = 0usize;
        for id in self.tokenizer.pieces(&words).take(MAX_PIECES) {
            let id = id as usize;
            let s = self.scale[id];
            let row = &self.rows[id * self.dim..(id + 1) * self.dim];
            acc.iter_mut()
                .zip(row)
                .for_each(|(a, &q)| *a += s * f32::from(q as i8));
            n += 1;
        }
        if n > 0 {
            normalise(&mut acc);
        }
        acc
    }

    pub fn embed(&self, texts: &[String]) -> Vec<Vec<f32>> {
        texts.iter().map(|t| self.embed_one(t)).collect()
    }
}

/// `text` with every identifier spelled as words (`HTTPServer_v2` → `http server v2`); plain
/// words are kept as written.
fn prepare(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if word.is_empty() {
            return;
        }
        let parts = crate::text::split_identifier(word);
        if parts.len() > 1 {
            out.push_str(&parts.join(" "));
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::cosine;

    #[test]
    fn the_compiled_in_table_parses_and_matches_its_vocabulary() {
        let e = BuiltinEmbedder::get();
        assert_eq!(e.dim(), 256);
        let v = e.embed_one("hello world");
        assert!((v.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-4);
    }

    #[test]
    fn empty_and_unknown_text_give_a_zero_vector_not_a_panic() {
        let e = BuiltinEmbedder::get();
        assert!(e.embed_one("").iter().all(|x| *x == 0.0));
        assert!(e.embed_one("\u{1F600}\u{0}").iter().all(|x| x.is_finite()));
    }

    #[test]
    fn identifiers_are_read_as_words() {
        assert_eq!(
            prepare("call parseConfig(HTTPServer_v2)"),
            "call parse config(http server v 2)"
        );
    }

    #[test]
    fn a_paraphrase_is_nearer_than_an_unrelated_text() {
        let e = BuiltinEmbedder::get();
        let memory = e.embed_one("We adopted a puppy last weekend");
        let question = e.embed_one("does she have a new dog?");
        let other = e.embed_one("the build uses cargo nextest on CI");
        assert!(
            cosine(&memory, &question) > cosine(&other, &question) + 0.03,
            "paraphrase {} vs unrelated {}",
            cosine(&memory, &question),
            cosine(&other, &question)
        );
    }
}
