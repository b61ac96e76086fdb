//! Code search's final order for questions: a linear model over what BM25, the built-in code
//! model's vectors and each candidate's own names say about it, in place of weighted RRF.
//!
//! RRF sees only ranks. A question's words that name the candidate, its type or its file, how
//! far its score is behind the best one's, and whether it is a test all tell a search more;
//! the model weighs them. Its 16 weights were fitted offline (`scripts/fit-code-rerank`, a
//! softmax over each question's candidates) on the code eval's dev crates, whose targets the
//! built-in code model never saw, and measured on the held-out crates (docs/benchmarks.md).
//! Only the order matters, so each feature's mean is left out: it adds the same to every
//! candidate of a question.
//!
//! The weights read the built-in code model's dot products (their scale is that model's), so
//! a configured embedder's vectors keep weighted RRF, as does a one-word query
//! (`parse_config`, `tokio::spawn`), which names what it wants. A question that mentions an
//! identifier (`… starting at char_idx`) is a question: the model was fitted on such too.

use crate::text::{split_identifier, words};

/// The code model whose dot products [`WEIGHTS`] read. A new model (its `MODEL_ID` is bumped
/// with its tables) gets weighted RRF until `scripts/fit-code-rerank` is run for it and this
/// names it; a test fails meanwhile.
pub const FITTED_FOR: &str = "builtin:code-static-v1";

/// Each feature's weight, in the order of [`features`]; divided by the feature's standard
/// deviation over the dev candidates, so that raw features can be summed.
const WEIGHTS: [f64; 16] = [
    -1.16668,  // in BM25's list
    2.68477,   // BM25 reciprocal rank, 10 / (10 + rank)
    3.21428,   // BM25 score over the best one's
    0.253993,  // ln BM25 rank (ln 150 when absent)
    0.726767,  // in the vectors' list
    -1.15127,  // vector reciprocal rank
    0.0601884, // dot product
    0.0129563, // dot product minus the best one's
    0.304841,  // dot product's z-score in its list
    -0.119036, // ln vector rank (ln 60 when absent)
    0.369909,  // share of the name's parts the question names
    0.493338,  // name parts the question names, at most 3
    1.09752,   // share of the container's parts the question names
    0.229782,  // share of the file stem's parts the question names
    0.184898,  // ln (1 + lines)
    -0.872898, // a test
];

/// Question words that say nothing about which symbol is meant.
const STOP: &[&str] = &[
    "a", "an", "the", "of", "to", "in", "for", "and", "or", "is", "are", "be", "by", "with",
    "from", "this", "that", "it", "its", "as", "on", "at", "if", "into", "when", "which", "whose",
    "returns", "return", "given", "new",
];

/// What the model reads of a candidate besides its two lists.
pub struct Candidate<'a> {
    pub id: i64,
    pub name: &'a str,
    pub container: Option<&'a str>,
    /// Root-relative.
    pub path: &'a str,
    pub lines: u32,
}

/// A crude suffix stripper, enough to meet `bytes` with `byte` and `parses` with `parse`.
fn stem(w: &str) -> &str {
    for suffix in ["ing", "ies", "es", "ed", "s"] {
        if let Some(base) = w.strip_suffix(suffix)
            && base.chars().count() >= 3
        {
            return base;
        }
    }
    w
}

fn parts(text: &str) -> Vec<String> {
    words(text).flat_map(split_identifier).collect()
}

fn prefix(s: &str) -> Option<&str> {
    s.get(..4).filter(|_| s.chars().count() >= 4)
}

/// A question's words, split, stop words out, stemmed.
pub struct Question(Vec<String>);

impl Question {
    pub fn new(query: &str) -> Question {
        Question(
            parts(query)
                .into_iter()
                .filter(|w| !STOP.contains(&w.as_str()))
                .map(|w| stem(&w).to_string())
                .collect(),
        )
    }

    /// How many of `text`'s identifier parts the question names (the same stem, or the same
    /// first four characters where both have four), and that count's share of the parts.
    fn names(&self, text: &str) -> (f64, usize) {
        let parts = parts(text);
        if parts.is_empty() {
            return (0.0, 0);
        }
        let hits = parts
            .iter()
            .map(|p| stem(p))
            .filter(|p| {
                self.0
                    .iter()
                    .any(|w| w == p || prefix(w).is_some_and(|x| prefix(p) == Some(x)))
            })
            .count();
        (hits as f64 / parts.len() as f64, hits)
    }
}

/// Ids of `candidates` (the union of both lists), best first, with each one's score.
/// `bm25` is best first with FTS5's scores (lower is better); `vector` best first with dot
/// products.
pub fn rank(
    question: &Question,
    bm25: &[(i64, f64)],
    vector: &[(i64, f32)],
    candidates: &[Candidate<'_>],
) -> Vec<(i64, f64)> {
    let stats = ListStats::new(bm25, vector);
    let mut scored: Vec<(i64, f64)> = candidates
        .iter()
        .map(|c| {
            let f = features(question, &stats, bm25, vector, c);
            (c.id, f.iter().zip(WEIGHTS).map(|(x, w)| x * w).sum())
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored
}

struct ListStats {
    bm25_top: f64,
    vector_top: f64,
    vector_mean: f64,
    vector_sd: f64,
}

impl ListStats {
    fn new(bm25: &[(i64, f64)], vector: &[(i64, f32)]) -> ListStats {
        let n = vector.len().max(1) as f64;
        let mean = vector.iter().map(|v| f64::from(v.1)).sum::<f64>() / n;
        let var = vector
            .iter()
            .map(|v| (f64::from(v.1) - mean).powi(2))
            .sum::<f64>()
            / n;
        ListStats {
            bm25_top: bm25.first().map_or(-1.0, |b| b.1),
            vector_top: vector.first().map_or(0.0, |v| f64::from(v.1)),
            vector_mean: mean,
            vector_sd: if vector.is_empty() {
                1.0
            } else {
                var.sqrt() + 1e-6
            },
        }
    }
}

fn features(
    q: &Question,
    s: &ListStats,
    bm25: &[(i64, f64)],
    vector: &[(i64, f32)],
    c: &Candidate<'_>,
) -> [f64; 16] {
    let b = bm25
        .iter()
        .position(|x| x.0 == c.id)
        .map(|i| (i + 1, bm25[i].1));
    let v = vector
        .iter()
        .position(|x| x.0 == c.id)
        .map(|i| (i + 1, f64::from(vector[i].1)));
    let (name_share, name_hits) = q.names(c.name);
    let file = c.path.rsplit('/').next().unwrap_or(c.path);
    let stem = file.rsplit_once('.').map_or(file, |(s, _)| s);
    let test = file.contains("test") || c.name.starts_with("test");
    let present = |x: bool| if x { 1.0 } else { 0.0 };
    [
        present(b.is_some()),
        b.map_or(0.0, |(r, _)| 10.0 / (10.0 + r as f64)),
        b.map_or(0.0, |(_, score)| {
            if s.bm25_top != 0.0 {
                score / s.bm25_top
            } else {
                0.0
            }
        }),
        b.map_or(150f64.ln(), |(r, _)| (r as f64).ln()),
        present(v.is_some()),
        v.map_or(0.0, |(r, _)| 10.0 / (10.0 + r as f64)),
        v.map_or(s.vector_mean - 2.0 * s.vector_sd, |(_, d)| d),
        v.map_or(-1.0, |(_, d)| d - s.vector_top),
        v.map_or(-2.5, |(_, d)| (d - s.vector_mean) / s.vector_sd),
        v.map_or(60f64.ln(), |(r, _)| (r as f64).ln()),
        name_share,
        name_hits.min(3) as f64,
        q.names(c.container.unwrap_or("")).0,
        q.names(stem).0,
        (1.0 + f64::from(c.lines)).ln(),
        present(test),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand<'a>(id: i64, name: &'a str, path: &'a str) -> Candidate<'a> {
        Candidate {
            id,
            name,
            container: None,
            path,
            lines: 10,
        }
    }

    #[test]
    fn the_weights_were_fitted_for_the_built_in_code_model() {
        assert_eq!(
            FITTED_FOR,
            crate::embed::CodeModel::MODEL_ID,
            "the code model changed: run scripts/fit-code-rerank and paste its weights"
        );
    }

    #[test]
    fn a_question_is_split_stopped_and_stemmed_as_the_fit_read_it() {
        let q = Question::new("Returns the number of bytes remaining in the HTTPServer.");
        assert_eq!(q.0, ["number", "byt", "remain", "http", "server"]);
        assert_eq!(q.names("remaining_bytes"), (1.0, 2));
        assert_eq!(q.names("ServerConfig").1, 1);
        assert_eq!(q.names(""), (0.0, 0));
    }

    #[test]
    fn the_name_the_question_says_wins_over_an_equal_rank_elsewhere() {
        // Both lists disagree by one place; the question names the second one.
        let bm25 = [(1, -5.0), (2, -4.9)];
        let vector = [(2, 40.0), (1, 39.9)];
        let q = Question::new("how many bytes are left to read");
        let cs = [
            cand(1, "flush", "src/io.rs"),
            cand(2, "remaining_bytes", "src/buf.rs"),
        ];
        let ranked = rank(&q, &bm25, &vector, &cs);
        assert_eq!(ranked.iter().map(|r| r.0).collect::<Vec<_>>(), [2, 1]);
    }

    #[test]
    fn a_test_loses_to_the_function_it_tests_on_the_same_evidence() {
        let bm25 = [(1, -5.0), (2, -5.0)];
        let q = Question::new("parse the header");
        let cs = [
            cand(1, "parse_header", "tests/header_tests.rs"),
            cand(2, "parse_header", "src/header.rs"),
        ];
        let ranked = rank(&q, &bm25, &[], &cs);
        assert_eq!(ranked[0].0, 2);
    }
}
