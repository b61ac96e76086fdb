//! Recall: FTS5 BM25 (identifier-aware) and, when an embedder is on, sqlite-vec KNN, fused by
//! a small linear model: weighted RRF over the two ranked lists plus what a memory carries
//! besides its words (who said it, its length and, when configured, its neighbours). Only active memories in scope ever surface: superseded and retracted ones are
//! filtered in SQL, project memories only inside their project.
//!
//! A memory remembered from a conversation reads `"Name: what they said"`. When a question
//! names that person ("What did Caroline adopt?"), the name is taken out of the BM25 query
//! (it is in half the conversation, so it only drags in short turns) and the named person's
//! memories get [`RecallWeights::speaker`] instead. Memories written one after another are a
//! conversation: an answer inherits part of the score of the question before it
//! ([`RecallWeights::neighbour`]), so "Did you ever adopt?" → "Yes, a beagle" is found from
//! the question's words.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};

pub use super::config::RecallWeights;

use super::MemoryError;
use super::fusion::weighted_rrf;
use super::memories::NEIGHBOUR_WINDOW_MS;
use super::model::{MEMORY_COLUMNS, Memory};
use super::text::{fts_query, is_identifier_query, is_stop_word, words};
use super::vectors::{self, VectorSpace};

/// How many candidates each retriever contributes before fusion.
pub const CANDIDATES: usize = 50;
/// The best candidates whose neighbours join the candidates (an answer no list found).
const EXPAND_NEIGHBOURS_OF: usize = 10;

/// A recall request.
#[derive(Debug, Clone)]
pub struct RecallQuery<'a> {
    pub text: &'a str,
    /// The current project: its memories and global ones surface. `None`: global only.
    pub project: Option<i64>,
    pub limit: usize,
}

/// The query embedded by the embedder whose vectors live in `space`.
#[derive(Debug, Clone, Copy)]
pub struct QueryVector<'a> {
    pub space: &'a VectorSpace,
    pub vector: &'a [f32],
}

/// One recalled memory with where it came from.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Hit {
    pub memory: Memory,
    pub score: f64,
    /// 1-based rank in the BM25 list, if it was there.
    pub bm25_rank: Option<usize>,
    /// 1-based rank in the vector list, if it was there.
    pub vector_rank: Option<usize>,
}

/// Ranked ids of active, in-scope memories matching `text` by BM25. Empty when the text has
/// nothing searchable (only stop words or punctuation).
pub fn bm25_ids(
    conn: &Connection,
    text: &str,
    project: Option<i64>,
    n: usize,
) -> Result<Vec<i64>, MemoryError> {
    let Some(expr) = fts_query(text) else {
        return Ok(Vec::new());
    };
    // body outweighs the identifier column (the split parts are a fallback, not a second
    // vote) and the neighbours' words (a hint of what was being talked about)
    let mut stmt = conn.prepare_cached(
        "SELECT m.id FROM memories_fts f JOIN memories m ON m.id = f.rowid
          WHERE memories_fts MATCH ?1 AND m.status = 'active'
            AND (m.project_id IS NULL OR m.project_id = ?2)
          ORDER BY bm25(memories_fts, 1.0, 0.6, 0.3), m.id
          LIMIT ?3",
    )?;
    let rows = stmt.query_map(params![expr, project, n as i64], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Who said a memory remembered as `"Name: text"` (or `"[date] Name: text"`): one to three
/// capitalised words before a colon at its start. `None` for anything else.
pub fn speaker_of(body: &str) -> Option<&str> {
    let mut rest = body.trim_start();
    if let Some(after) = rest.strip_prefix('[') {
        // a leading "[7 May 2023] " stamp
        let close = after.find(']').filter(|i| *i <= 40)?;
        rest = after[close + 1..].trim_start();
    }
    let colon = rest.find(':').filter(|i| (1..=40).contains(i))?;
    let name = &rest[..colon];
    if !rest[colon + 1..].starts_with([' ', '\t', '\n']) {
        return None; // "12:30", "https://", "foo::bar"
    }
    let parts: Vec<&str> = name.split(' ').collect();
    let is_word = |w: &&str| {
        w.chars().next().is_some_and(char::is_uppercase)
            && w.chars()
                .all(|c| c.is_alphabetic() || matches!(c, '\'' | '-' | '.'))
    };
    (parts.len() <= 3 && parts.iter().all(is_word)).then_some(name)
}

/// Whether the memory was said by one of `names` (lower-case words of a speaker's name).
fn said_by(body: &str, names: &[String]) -> bool {
    speaker_of(body).is_some_and(|s| {
        s.split(' ')
            .any(|part| names.iter().any(|n| n.eq_ignore_ascii_case(part)))
    })
}

/// The capitalised words of `text` that name someone whose words are remembered (a memory in
/// scope reads `"Word …: …"`), lower-cased. Bounded: a few FTS lookups of 20 rows each.
pub fn named_speakers(
    conn: &Connection,
    text: &str,
    project: Option<i64>,
) -> Result<Vec<String>, MemoryError> {
    let mut out: Vec<String> = Vec::new();
    let mut stmt = conn.prepare_cached(
        "SELECT m.body FROM memories_fts f JOIN memories m ON m.id = f.rowid
          WHERE memories_fts MATCH ?1 AND m.status = 'active'
            AND (m.project_id IS NULL OR m.project_id = ?2)
          LIMIT 20",
    )?;
    for word in words(text).take(32) {
        let lower = word.to_lowercase();
        if word.chars().count() < 2
            || !word.chars().next().is_some_and(char::is_uppercase)
            || word.chars().any(|c| !c.is_alphabetic())
            || is_stop_word(&lower)
            || out.contains(&lower)
        {
            continue;
        }
        let expr = format!("body : \"{lower}\"");
        let bodies = stmt.query_map(params![expr, project], |r| r.get::<_, String>(0))?;
        for body in bodies {
            if said_by(&body?, std::slice::from_ref(&lower)) {
                out.push(lower);
                break;
            }
        }
    }
    Ok(out)
}

/// Words that place a memory in time: "yesterday", "two weeks ago", "last Saturday", "in
/// June", "next summer", a year ("May" is left out: "I may come").
const TIME_WORDS: &[&str] = &[
    "yesterday",
    "today",
    "tonight",
    "tomorrow",
    "ago",
    "recently",
    "lately",
    "weekend",
    "weekends",
    "week",
    "weeks",
    "month",
    "months",
    "year",
    "years",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "january",
    "february",
    "march",
    "april",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "spring",
    "summer",
    "autumn",
    "winter",
];

/// Whether a question asks when ("When did …", "What year …", "Which month …").
fn asks_when(text: &str) -> bool {
    words(text).any(|w| {
        ["when", "year", "month", "date"]
            .iter()
            .any(|t| w.eq_ignore_ascii_case(t))
    })
}

/// Whether a memory says when something happened (see [`TIME_WORDS`]).
fn tells_when(body: &str) -> bool {
    words(body).any(|w| {
        let year = w.len() == 4
            && (w.starts_with("19") || w.starts_with("20"))
            && w.bytes().all(|b| b.is_ascii_digit());
        year || TIME_WORDS.iter().any(|t| w.eq_ignore_ascii_case(t))
    })
}

/// `text` without the words in `names` (the BM25 query once the speakers are a feature).
fn without_names(text: &str, names: &[String]) -> String {
    words(text)
        .filter(|w| !names.iter().any(|n| n.eq_ignore_ascii_case(w)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What the features read about a memory.
struct Row {
    body: String,
    project: Option<i64>,
    created_at: i64,
}

fn row(conn: &Connection, id: i64, project: Option<i64>) -> Result<Option<Row>, MemoryError> {
    let mut stmt = conn.prepare_cached(
        "SELECT body, project_id, created_at FROM memories
          WHERE id = ?1 AND status = 'active' AND (project_id IS NULL OR project_id = ?2)",
    )?;
    Ok(stmt
        .query_row(params![id, project], |r| {
            Ok(Row {
                body: r.get(0)?,
                project: r.get(1)?,
                created_at: r.get(2)?,
            })
        })
        .optional()?)
}

/// Two memories are neighbours when one was written right after the other, in the same
/// scope, within [`NEIGHBOUR_WINDOW_MS`] (the rule that fills the `context` column).
fn adjacent(a: &Row, b: &Row) -> bool {
    a.project == b.project && (a.created_at - b.created_at).abs() <= NEIGHBOUR_WINDOW_MS
}

/// Full recall. Without a query vector this is BM25 alone (the embedder is off, or its vectors
/// are still being built): recall never depends on the embedder being up.
pub fn recall(
    conn: &Connection,
    q: &RecallQuery<'_>,
    qv: Option<QueryVector<'_>>,
    weights: &RecallWeights,
) -> Result<Vec<Hit>, MemoryError> {
    let n = CANDIDATES.max(q.limit);
    let speakers = if weights.speaker != 0.0 {
        named_speakers(conn, q.text, q.project)?
    } else {
        Vec::new()
    };
    let mut lexical = Vec::new();
    if !speakers.is_empty() {
        lexical = bm25_ids(conn, &without_names(q.text, &speakers), q.project, n)?;
    }
    if lexical.is_empty() {
        lexical = bm25_ids(conn, q.text, q.project, n)?;
    }
    let semantic = match qv {
        Some(qv) => vectors::nearest_ids(conn, qv.space, qv.vector, q.project, n)?,
        None => Vec::new(),
    };
    let vector_weight = if is_identifier_query(q.text) {
        weights.vector_identifier
    } else {
        weights.vector
    };
    // What the two lists say, best first (ties in order of first appearance); the terms
    // below reorder it.
    let fused = weighted_rrf(
        &[(weights.bm25, &lexical), (vector_weight, &semantic)],
        weights.rrf_k,
    );
    let mut order: Vec<i64> = fused.iter().map(|(id, _)| *id).collect();
    let mut base: HashMap<i64, f64> = fused.into_iter().collect();

    let asks_when = weights.temporal != 0.0 && asks_when(q.text);
    let features =
        weights.speaker != 0.0 || weights.neighbour != 0.0 || weights.length != 0.0 || asks_when;
    let mut scores: HashMap<i64, f64> = HashMap::new();
    if features {
        let mut rows: HashMap<i64, Option<Row>> = HashMap::new();
        for id in &order {
            rows.insert(*id, row(conn, *id, q.project)?);
        }
        if weights.neighbour != 0.0 {
            // the neighbours of the best candidates join them: an answer shares no word with
            // the question that was asked just before it
            let best: Vec<i64> = order.iter().take(EXPAND_NEIGHBOURS_OF).copied().collect();
            for id in best {
                for nb in [id - 1, id + 1] {
                    if rows.contains_key(&nb) {
                        continue;
                    }
                    let r = row(conn, nb, q.project)?;
                    let near = matches!((&r, &rows[&id]), (Some(a), Some(b)) if adjacent(a, b));
                    rows.insert(nb, r);
                    if near {
                        order.push(nb);
                        base.insert(nb, 0.0);
                    }
                }
            }
        }
        for id in &order {
            let Some(Some(r)) = rows.get(id) else {
                continue;
            };
            let mut score = base[id];
            if !speakers.is_empty() && said_by(&r.body, &speakers) {
                score += weights.speaker;
            }
            if weights.neighbour != 0.0 {
                let best_neighbour = [id - 1, id + 1]
                    .iter()
                    .filter_map(|nb| match (rows.get(nb), base.get(nb)) {
                        (Some(Some(n)), Some(b)) if adjacent(n, r) => Some(*b),
                        _ => None,
                    })
                    .fold(0.0f64, f64::max);
                score += weights.neighbour * best_neighbour;
            }
            if weights.length != 0.0 {
                // a factor, not a term: it reorders what the lists found by as much whatever
                // their weights, and never outweighs a clear difference in rank
                let spoken = match speaker_of(&r.body) {
                    Some(s) => &r.body[r.body.find(s).unwrap_or(0) + s.len()..],
                    None => r.body.as_str(),
                };
                score *= 1.0 + weights.length * (1.0 + words(spoken).count() as f64).ln();
            }
            if asks_when && tells_when(&r.body) {
                score *= 1.0 + weights.temporal;
            }
            scores.insert(*id, score);
        }
    }

    // Stable: equal scores keep the fused order.
    let mut ranked: Vec<(i64, f64)> = order
        .into_iter()
        .map(|id| (id, scores.get(&id).copied().unwrap_or(base[&id])))
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    let rank_in = |ids: &[i64], id: i64| ids.iter().position(|x| *x == id).map(|p| p + 1);
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id = ?1"
    ))?;
    let mut hits = Vec::with_capacity(q.limit);
    for (id, score) in ranked.into_iter().take(q.limit) {
        let memory = stmt.query_row([id], Memory::from_row)?;
        hits.push(Hit {
            memory,
            score,
            bm25_rank: rank_in(&lexical, id),
            vector_rank: rank_in(&semantic, id),
        });
    }
    Ok(hits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_speaker_is_a_short_capitalised_name_before_a_colon() {
        assert_eq!(speaker_of("Caroline: I went hiking"), Some("Caroline"));
        assert_eq!(speaker_of("Mary Jo Smith: hi"), Some("Mary Jo Smith"));
        assert_eq!(speaker_of("[7 May 2023] Melanie: hi"), Some("Melanie"));
        assert_eq!(speaker_of("caroline: lower case is not a name"), None);
        assert_eq!(speaker_of("Deploys run at 12:30 on Fridays"), None);
        assert_eq!(speaker_of("Use std::fs: it is enough"), None);
        assert_eq!(speaker_of("See https://example.com"), None);
        assert_eq!(speaker_of("The staging deploy always fails: why"), None);
    }

    #[test]
    fn names_leave_the_lexical_query() {
        let names = vec!["caroline".to_string()];
        assert_eq!(
            without_names("What did Caroline's dog eat?", &names),
            "What did s dog eat"
        );
        assert!(said_by("Caroline: yes", &names));
        assert!(!said_by("Melanie: Caroline said yes", &names));
    }

    #[test]
    fn when_questions_and_memories_that_say_when() {
        assert!(asks_when("When did Caroline move?"));
        assert!(asks_when("In what year did she graduate?"));
        assert!(!asks_when("Where did Caroline move?"));
        assert!(tells_when("Caroline: I moved to Lisbon two weeks ago"));
        assert!(tells_when("Melanie: we met in 2019"));
        assert!(tells_when("Melanie: last Saturday I ran 10k"));
        assert!(!tells_when("Caroline: I moved to Lisbon, it is lovely"));
        assert!(!tells_when("Port 8080 is the proxy"));
        assert!(!tells_when("Melanie: I may come along"));
    }
}
