//! What Mira knows, as context sources: corrections and preferences, goals and tasks,
//! memories recalled for the question (the same hybrid recall as `mira recall`), code found
//! by code search, and memories anchored to the code at the cursor. Every read runs inside
//! the turn's one snapshot; only embedding the question happens before it.

use std::sync::atomic::{AtomicBool, Ordering};

use futures::future::BoxFuture;
use rusqlite::Connection;

use super::context::{ContextSources, Embedded, Query, QueryEmbedding};
use crate::embed::Embedder;
use crate::index::search::{self, CodeQueryVector, CodeWeights};
use crate::memory::goals::{self, GoalStatus};
use crate::memory::recall::{self, QueryVector, RecallQuery};
use crate::memory::{MemoryKind, MemoryService, anchors, memories, vectors};

/// Searches look at the start of a question only: a 100 KB paste must not become a
/// 10,000-term FTS query.
const QUERY_CHARS: usize = 2_000;
const RECALL_LIMIT: usize = 8;
const CODE_LIMIT: usize = 6;
/// Standing corrections and preferences read per turn (the section's token budget cuts
/// them further).
const STANDING_LIMIT: usize = 1_000;
/// Lines of code shown per code-search hit.
const CODE_LINES: usize = 30;

pub struct Knowledge {
    memory: MemoryService,
    code_weights: CodeWeights,
    /// An embedder that is down is reported once per process in the log (every context
    /// report still says so).
    warned: AtomicBool,
}

impl Knowledge {
    pub fn new(memory: MemoryService) -> Knowledge {
        Knowledge {
            memory,
            code_weights: CodeWeights::default(),
            warned: AtomicBool::new(false),
        }
    }
}

fn head(text: &str) -> &str {
    text.char_indices()
        .nth(QUERY_CHARS)
        .map_or(text, |(i, _)| &text[..i])
}

/// A source that fails is logged and contributes nothing: the turn still runs.
fn or_log<T: Default, E: std::fmt::Display>(what: &str, r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| {
        tracing::warn!("context: {what} unavailable: {e}");
        T::default()
    })
}

impl ContextSources for Knowledge {
    fn standing(&self, conn: &Connection, project: Option<i64>) -> Vec<String> {
        // Newest first, whatever the kind.
        let all = or_log(
            "corrections and preferences",
            memories::active_of_kinds(
                conn,
                project,
                &[MemoryKind::Correction, MemoryKind::Preference],
                STANDING_LIMIT,
            ),
        );
        all.iter()
            .map(|m| format!("#{} ({}) {}", m.id, m.kind, m.body.trim()))
            .collect()
    }

    fn goals(&self, conn: &Connection, project: Option<i64>) -> Vec<String> {
        let mut out = Vec::new();
        for g in or_log("goals", goals::list_goals(conn, project, false)) {
            if g.status != GoalStatus::Active {
                continue;
            }
            let mut line = format!(
                "goal #{} [{} {}%] {}",
                g.id, g.priority, g.progress, g.title
            );
            if !g.description.trim().is_empty() {
                line.push_str(&format!(" — {}", g.description.trim()));
            }
            if !g.milestones.is_empty() {
                let ms: Vec<String> = g
                    .milestones
                    .iter()
                    .map(|m| format!("[{}] {}", if m.done { "x" } else { " " }, m.title))
                    .collect();
                line.push_str(&format!("; milestones: {}", ms.join(", ")));
            }
            out.push(line);
        }
        for t in or_log("tasks", goals::list_tasks(conn, project, None, false)) {
            let goal = t
                .goal_id
                .map(|g| format!(" (goal #{g})"))
                .unwrap_or_default();
            out.push(format!(
                "task #{} [{} {}] {}{goal}",
                t.id, t.status, t.priority, t.title
            ));
        }
        out
    }

    fn recall(&self, conn: &Connection, q: &Query) -> Vec<String> {
        let space = q
            .embedding
            .and_then(|e| or_log("memory vectors", vectors::lookup(conn, &e.model_id)));
        let qv = match (&space, q.embedding) {
            (Some(space), Some(e)) if e.vector.len() == space.dim => Some(QueryVector {
                space,
                vector: &e.vector,
            }),
            _ => None,
        };
        let rq = RecallQuery {
            text: head(q.text),
            project: q.project,
            limit: RECALL_LIMIT,
        };
        let hits = or_log(
            "recall",
            recall::recall(conn, &rq, qv, &self.memory.weights()),
        );
        // Standing memories are in the system prompt already.
        hits.into_iter()
            .filter(|h| {
                !matches!(
                    h.memory.kind,
                    MemoryKind::Correction | MemoryKind::Preference
                )
            })
            .map(|h| {
                let stale = if h.memory.stale {
                    " [stale: the code changed since]"
                } else {
                    ""
                };
                format!(
                    "#{} ({}) {}{stale}",
                    h.memory.id,
                    h.memory.kind,
                    h.memory.body.trim()
                )
            })
            .collect()
    }

    fn code(&self, conn: &Connection, q: &Query) -> Vec<String> {
        let Some(project) = q.project else {
            return Vec::new();
        };
        let configured = q
            .embedding
            .map(|e| (e.model_id.as_str(), e.vector.as_slice()));
        let space = or_log(
            "code vectors",
            crate::index::vectors::query_space(conn, head(q.text), configured),
        );
        let qv = space
            .as_ref()
            .map(|(space, vector)| CodeQueryVector { space, vector });
        let hits = or_log(
            "code search",
            search::search(
                conn,
                project,
                head(q.text),
                CODE_LIMIT,
                qv,
                &self.code_weights,
            ),
        );
        hits.iter()
            .map(|h| {
                let code =
                    search::read_lines(&q.root.join(&h.path), h.start_line, h.end_line, CODE_LINES);
                h.render(code.as_deref())
            })
            .collect()
    }

    fn anchored(&self, conn: &Connection, q: &Query) -> Vec<String> {
        let (Some(project), Some(editor)) = (q.project, q.editor) else {
            return Vec::new();
        };
        let (Some(path), Some(line)) = (editor.path.as_deref(), editor.line) else {
            return Vec::new();
        };
        let names = or_log(
            "symbols at the cursor",
            search::enclosing(conn, project, path, line.saturating_sub(1)),
        );
        let mut out = Vec::new();
        for name in names {
            for m in or_log(
                "anchored memories",
                anchors::memories_for_symbol(conn, project, path, &name),
            ) {
                let line = format!("#{} (about `{name}`) {}", m.id, m.body.trim());
                if !out.contains(&line) {
                    out.push(line);
                }
            }
        }
        out
    }

    fn embed<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Embedded> {
        Box::pin(async move {
            match self.memory.embed_query(head(text)).await {
                Ok(None) => Embedded::Off,
                Ok(Some((model_id, vector))) => {
                    Embedded::Ready(QueryEmbedding { model_id, vector })
                }
                Err(why) => {
                    if !self.warned.swap(true, Ordering::Relaxed) {
                        tracing::warn!(
                            "{why}; recall and code search use full-text search until it answers"
                        );
                    }
                    Embedded::Unavailable(why)
                }
            }
        })
    }
}

/// What code search found, and why it may be thinner than usual.
pub struct CodeSearch {
    pub hits: Vec<search::CodeHit>,
    /// Set when an embedder is configured but did not answer (full-text search only).
    pub note: Option<String>,
}

/// Code search as the `search_code` tool, `mira search` and MCP run it: the question is
/// embedded with the memory service's embedder (when one is on and code vectors exist to
/// compare it with), then searched in one read.
pub async fn code_search(
    memory: &MemoryService,
    project_id: i64,
    query: &str,
    limit: usize,
) -> Result<CodeSearch, String> {
    let query = head(query).to_string();
    let store = memory.store().clone();
    // The question is embedded by the configured embedder only when chunk vectors of its
    // model exist: otherwise its vector would be of no use (the built-in code model embeds
    // it inside the read, in microseconds).
    let configured_space = match memory.embedder().filter(Embedder::embeds_code) {
        Some(e) => {
            let (store, model) = (store.clone(), e.model_id());
            tokio::task::spawn_blocking(move || {
                store.read(|c| crate::index::vectors::lookup(c, &model))
            })
            .await
            .map_err(|e| format!("code search stopped: {e}"))?
            .map_err(|e| format!("code search failed: {e}"))?
            .is_some()
        }
        None => false,
    };
    let (embedding, note) = if !configured_space {
        (None, None)
    } else {
        match memory.embed_query(&query).await {
            Ok(e) => (e, None),
            Err(why) => (None, Some(format!("full-text search only: {why}"))),
        }
    };
    let hits = tokio::task::spawn_blocking(move || {
        store.read(|c| {
            let configured = embedding
                .as_ref()
                .map(|(model, v)| (model.as_str(), v.as_slice()));
            let space = crate::index::vectors::query_space(c, &query, configured)?;
            let qv = space
                .as_ref()
                .map(|(space, vector)| CodeQueryVector { space, vector });
            let hits = search::search(c, project_id, &query, limit, qv, &CodeWeights::default())?;
            // Fewer hits than asked may be files not searchable yet: say so, with the fix.
            let awaiting = if hits.len() < limit {
                crate::index::offline::files_awaiting_search(c, project_id)?
            } else {
                0
            };
            Ok((hits, awaiting))
        })
    })
    .await
    .map_err(|e| format!("code search stopped: {e}"))?
    .map_err(|e| format!("code search failed: {e}"))?;
    let (hits, awaiting) = hits;
    let note = match (awaiting, note) {
        (0, note) => note,
        (n, note) => Some(
            [
                note,
                Some(format!(
                    "code search does not cover {n} indexed file{} yet; an editor on this \
                     project or `mira index` adds {}",
                    if n == 1 { "" } else { "s" },
                    if n == 1 { "it" } else { "them" }
                )),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("; "),
        ),
    };
    Ok(CodeSearch { hits, note })
}
