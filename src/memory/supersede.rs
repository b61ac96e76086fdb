//! Which memory a correction corrects when the user gave no id (ARCHITECTURE.md): the active
//! memories of the same scope that share its subject — lexically (content-word overlap) and,
//! with an embedder, by cosine — above [`THRESHOLD`]. One clear candidate is superseded; two
//! plausible ones supersede nothing and both are named, so the user can say which.
//!
//! The threshold and the margin were chosen on the labelled pairs in
//! `eval/corrections/pairs.tsv` (`src/memory/tests/supersede.rs` prints precision and recall).

use rusqlite::Connection;

use super::MemoryError;
use super::model::{MEMORY_COLUMNS, Memory, Scope};
use super::vectors::{self, VectorSpace};
use crate::text::content_words;

/// A candidate at or above this lexical similarity may be what the correction corrects.
/// On the labelled pairs: precision 1.00 from 0.3 to 0.8, recall 0.93 up to 0.5, 0.86 at
/// 0.6, 0.50 at 0.8; 0.5 is the most conservative value without losing recall.
pub const THRESHOLD: f32 = 0.5;
/// Embedding cosine counts only from here: related-but-different sentences (two services on
/// the same host) reach 0.6–0.7 with all-MiniLM-L6-v2, rewordings of one fact 0.8 and more.
pub const COSINE_THRESHOLD: f32 = 0.8;
/// A runner-up within this much of the best makes the choice ambiguous.
pub const MARGIN: f32 = 0.15;

/// Words that say "this is a correction" rather than what it is about.
const CORRECTION_WORDS: &[&str] = &[
    "correction",
    "actually",
    "not",
    "no",
    "wrong",
    "instead",
    "rather",
    "isn't",
    "isnt",
    "aren't",
    "but",
    "now",
    "anymore",
    "longer",
];

/// What a correction without an id corrects.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    Nothing,
    One(Memory),
    /// Two (or more) plausible memories, best first: nothing is superseded.
    Ambiguous(Vec<Memory>),
}

fn subject_words(text: &str) -> std::collections::HashSet<String> {
    let mut w = content_words(text);
    w.retain(|x| !CORRECTION_WORDS.contains(&x.as_str()));
    w
}

/// Lexical similarity: the share of the smaller text's subject words the other one has.
pub fn lexical(a: &str, b: &str) -> f32 {
    let (a, b) = (subject_words(a), subject_words(b));
    let small = a.len().min(b.len());
    if small == 0 {
        return 0.0;
    }
    a.intersection(&b).count() as f32 / small as f32
}

/// Candidates of `scope` for the correction `body`, with their similarity, best first.
pub fn candidates(
    conn: &Connection,
    scope: Scope,
    body: &str,
    vector: Option<(&VectorSpace, &[f32])>,
) -> Result<Vec<(Memory, f32)>, MemoryError> {
    let mut ids: Vec<i64> = super::recall::bm25_ids(conn, body, scope.project_id(), 20)?;
    let mut cosines = std::collections::HashMap::new();
    if let Some((space, v)) = vector {
        for (id, cos) in vectors::nearest_in_scope(conn, space, v, scope, 10)? {
            cosines.insert(id, cos);
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id = ?1"
    ))?;
    let mut out = Vec::new();
    for id in ids {
        let m = stmt.query_row([id], Memory::from_row)?;
        if m.scope != scope {
            continue;
        }
        let lex = lexical(body, &m.body);
        let score = match cosines.get(&id) {
            Some(c) if *c >= COSINE_THRESHOLD => lex.max(*c),
            _ => lex,
        };
        out.push((m, score));
    }
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.id.cmp(&a.0.id)));
    Ok(out)
}

/// Decides from scored candidates (best first).
pub fn decide(scored: Vec<(Memory, f32)>) -> Target {
    let mut plausible = scored.into_iter().filter(|(_, s)| *s >= THRESHOLD);
    let Some((best, top)) = plausible.next() else {
        return Target::Nothing;
    };
    let close: Vec<Memory> = plausible
        .take_while(|(_, s)| top - s <= MARGIN)
        .map(|(m, _)| m)
        .collect();
    if close.is_empty() {
        Target::One(best)
    } else {
        Target::Ambiguous(std::iter::once(best).chain(close).collect())
    }
}

/// The memory a correction corrects, if exactly one is plausible.
pub fn find_target(
    conn: &Connection,
    scope: Scope,
    body: &str,
    vector: Option<(&VectorSpace, &[f32])>,
) -> Result<Target, MemoryError> {
    Ok(decide(candidates(conn, scope, body, vector)?))
}
