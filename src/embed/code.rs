//! The built-in code-search model: two static tables over the same word pieces as the memory
//! table, one for questions and one for code chunks, trained on doc comment → function pairs
//! of public crates by `scripts/train-code-model` (the crates the code eval measures are
//! left out). A question's vector is compared with the chunks' vectors; they live in one
//! space only with each other, never with a memory embedder's.
//!
//! Like the memory table it costs microseconds a text, so every chunk of a project is
//! embedded right after its cold index, and a question is embedded inside the search's own
//! read, with no model to load or wait for.

use std::sync::OnceLock;

use super::builtin::{BuiltinEmbedder, VOCAB};

static QUERY: &[u8] = include_bytes!("../../assets/embed/code-query.bin");
static CHUNK: &[u8] = include_bytes!("../../assets/embed/code-chunk.bin");

pub struct CodeModel {
    query: BuiltinEmbedder,
    chunk: BuiltinEmbedder,
}

impl CodeModel {
    /// Names the pair of tables; change it whenever either table changes, so that chunk
    /// vectors of an older model are re-embedded, never compared with new questions.
    pub const MODEL_ID: &'static str = "builtin:code-static-v1";

    pub fn get() -> &'static CodeModel {
        static ONE: OnceLock<CodeModel> = OnceLock::new();
        ONE.get_or_init(|| CodeModel {
            query: BuiltinEmbedder::parse(QUERY, VOCAB)
                .expect("the code query table is well-formed (tests check it)"),
            chunk: BuiltinEmbedder::parse(CHUNK, VOCAB)
                .expect("the code chunk table is well-formed (tests check it)"),
        })
    }

    pub fn dim(&self) -> usize {
        self.chunk.dim()
    }

    /// A question's vector, to compare with [`CodeModel::embed_chunks`]' vectors.
    pub fn embed_query(&self, question: &str) -> Vec<f32> {
        self.query.embed_one(question)
    }

    /// Vectors of code chunks as `index::vectors::pending` writes them.
    pub fn embed_chunks(&self, chunks: &[String]) -> Vec<Vec<f32>> {
        self.chunk.embed(chunks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::cosine;

    #[test]
    fn both_tables_parse_and_share_one_space() {
        let m = CodeModel::get();
        assert_eq!(m.query.dim(), m.chunk.dim());
        let q = m.embed_query("returns the number of bytes in the buffer");
        assert_eq!(q.len(), m.dim());
        assert!((q.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-4);
        assert!(m.embed_query("").iter().all(|x| *x == 0.0));
    }

    #[test]
    fn a_question_is_nearer_its_function_than_an_unrelated_one() {
        // No word in common: "length" and "bytes" against `len`, `buf`.
        let m = CodeModel::get();
        let q = m.embed_query("Returns how long the byte string is");
        let chunks = m.embed_chunks(&[
            "method Buf.len\nfn len(&self) -> usize\nfn len(&self) -> usize {\n    self.buf.len()\n}".into(),
            "function spawn_worker\nfn spawn_worker(pool: &Pool) -> JoinHandle<()>\nfn spawn_worker(pool: &Pool) -> JoinHandle<()> {\n    std::thread::spawn(move || pool.run())\n}".into(),
        ]);
        assert!(
            cosine(&q, &chunks[0]) > cosine(&q, &chunks[1]) + 0.05,
            "len {} vs spawn {}",
            cosine(&q, &chunks[0]),
            cosine(&q, &chunks[1])
        );
    }
}
