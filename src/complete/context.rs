//! What Mira adds to the text around the cursor: the standing preferences and corrections
//! (a short header the model reads first) and the signatures and docs of the definitions in
//! reach (calls near the cursor, the file's imports) — written as comments in the file's own
//! language, so FIM models trained on plain code read them as code context.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use std::collections::HashMap;

use crate::documents::DocId;

use crate::index::{InReach, IndexHandle};
use crate::memory::{ListFilter, MemoryKind, memories};
use crate::store::{Store, projects};

use super::window::estimate_tokens;

/// Preferences change rarely; re-read them at most this often (off the keystroke path).
const STANDING_TTL: Duration = Duration::from_secs(30);
/// A completion header is short: the few newest preferences say what matters.
const STANDING_MAX: usize = 8;
/// Definitions in reach put in the header at most.
const REACH_LIMIT: usize = 12;
/// An answer serves every cursor in its block of this many lines (what is in reach changes
/// slowly while typing).
const REACH_BLOCK_LINES: u32 = 16;
/// The first question for a document waits this long at most (the index may be busy with a
/// crawl); without an answer the header has no definitions.
const REACH_WAIT: Duration = Duration::from_millis(200);
/// Answers kept (document × block).
const REACH_ENTRIES: usize = 256;

/// The line comment of a language, by LSP language id.
pub fn comment_for(language_id: &str) -> &'static str {
    match language_id {
        "python" | "ruby" | "shellscript" | "sh" | "bash" | "toml" | "yaml" | "perl" | "r"
        | "elixir" | "dockerfile" | "makefile" | "cmake" | "nix" => "#",
        "lua" | "sql" | "haskell" | "elm" => "--",
        "lisp" | "clojure" | "scheme" => ";;",
        "vim" => "\"",
        "erlang" | "latex" | "tex" => "%",
        _ => "//",
    }
}

/// The header sent before the prefix, within `budget` tokens: preferences first (the user's
/// standing word), then definitions in reach.
pub fn header(language_id: &str, standing: &[String], reach: &[InReach], budget: usize) -> String {
    if standing.is_empty() && reach.is_empty() {
        return String::new();
    }
    let c = comment_for(language_id);
    let mut lines = vec![format!("{c} Context from Mira (not part of this file):")];
    for s in standing {
        lines.push(format!("{c} {}", one_line(s)));
    }
    for r in reach {
        let mut line = format!("{c} {}: {}", r.path, one_line(&r.signature));
        if let Some(doc) = r.doc.as_deref().map(one_line).filter(|d| !d.is_empty()) {
            line.push_str(&format!(" — {doc}"));
        }
        lines.push(line);
    }
    let mut out = String::new();
    for line in lines {
        if estimate_tokens(&out) + estimate_tokens(&line) + 1 > budget {
            break;
        }
        out.push_str(&line);
        out.push('\n');
    }
    if out.lines().count() <= 1 {
        return String::new();
    }
    out
}

/// Collapse whitespace and cap the length: a header line is one line.
fn one_line(s: &str) -> String {
    let joined = s.split_whitespace().collect::<Vec<_>>().join(" ");
    match joined.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &joined[..i]),
        None => joined,
    }
}

/// Definitions in reach, per document and block of lines. The index answers after applying
/// every edit sent before the question, i.e. after re-parsing the keystroke just typed; so a
/// completion uses the last answer for its block and refreshes it in the background, and only
/// the first completion in a block waits.
pub struct Reach {
    index: Option<IndexHandle>,
    docs: Arc<Mutex<HashMap<(String, u32), ReachEntry>>>,
}

struct ReachEntry {
    list: Arc<Vec<InReach>>,
    refreshing: bool,
}

impl Reach {
    pub fn new(index: Option<IndexHandle>) -> Reach {
        Reach {
            index,
            docs: Default::default(),
        }
    }

    pub async fn get(&self, doc: &DocId, line: u32) -> Arc<Vec<InReach>> {
        let Some(index) = &self.index else {
            return Arc::default();
        };
        let key = (doc.as_str().to_string(), line / REACH_BLOCK_LINES);
        if let Some(list) = self.reuse(&key, doc, line, index) {
            return list;
        }
        let list = tokio::time::timeout(REACH_WAIT, index.in_reach(doc, line, REACH_LIMIT))
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        let list = Arc::new(list);
        store_reach(&self.docs, key, list.clone());
        list
    }

    /// The block's last answer, refreshed in the background.
    fn reuse(
        &self,
        key: &(String, u32),
        doc: &DocId,
        line: u32,
        index: &IndexHandle,
    ) -> Option<Arc<Vec<InReach>>> {
        let mut docs = self.docs.lock().unwrap_or_else(|e| e.into_inner());
        let entry = docs.get_mut(key)?;
        if !entry.refreshing {
            entry.refreshing = true;
            let (index, doc, docs, key) =
                (index.clone(), doc.clone(), self.docs.clone(), key.clone());
            tokio::spawn(async move {
                let list = index
                    .in_reach(&doc, line, REACH_LIMIT)
                    .await
                    .unwrap_or_default();
                store_reach(&docs, key, Arc::new(list));
            });
        }
        Some(entry.list.clone())
    }
}

fn store_reach(
    docs: &Mutex<HashMap<(String, u32), ReachEntry>>,
    key: (String, u32),
    list: Arc<Vec<InReach>>,
) {
    let mut docs = docs.lock().unwrap_or_else(|e| e.into_inner());
    if docs.len() >= REACH_ENTRIES && !docs.contains_key(&key) {
        docs.clear();
    }
    docs.insert(
        key,
        ReachEntry {
            list,
            refreshing: false,
        },
    );
}

/// The standing preferences and corrections, cached and refreshed in the background.
pub struct Standing {
    store: Option<Store>,
    root: PathBuf,
    cached: Mutex<Option<(Instant, Arc<Vec<String>>)>>,
    refreshing: Arc<std::sync::atomic::AtomicBool>,
}

impl Standing {
    pub fn new(store: Option<Store>, root: PathBuf) -> Arc<Standing> {
        Arc::new(Standing {
            store,
            root,
            cached: Mutex::new(None),
            refreshing: Default::default(),
        })
    }

    /// The current list; the first call reads the store, later ones answer from memory and
    /// refresh it in the background when it is older than [`STANDING_TTL`].
    pub async fn get(self: &Arc<Self>) -> Arc<Vec<String>> {
        let cached = self
            .cached
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        match cached {
            Some((at, list)) => {
                if at.elapsed() > STANDING_TTL
                    && !self
                        .refreshing
                        .swap(true, std::sync::atomic::Ordering::SeqCst)
                {
                    let me = self.clone();
                    tokio::spawn(async move {
                        me.load().await;
                        me.refreshing
                            .store(false, std::sync::atomic::Ordering::SeqCst);
                    });
                }
                list
            }
            None => self.load().await,
        }
    }

    async fn load(&self) -> Arc<Vec<String>> {
        let Some(store) = self.store.clone() else {
            return Arc::default();
        };
        let root = self.root.clone();
        let list = tokio::task::spawn_blocking(move || read_standing(&store, &root))
            .await
            .unwrap_or_default();
        let list = Arc::new(list);
        *self.cached.lock().unwrap_or_else(|e| e.into_inner()) =
            Some((Instant::now(), list.clone()));
        list
    }
}

fn read_standing(store: &Store, root: &std::path::Path) -> Vec<String> {
    let read = store.read(|conn| {
        let project = projects::find(conn, root).ok().flatten();
        let mut all = Vec::new();
        for kind in [MemoryKind::Correction, MemoryKind::Preference] {
            let filter = ListFilter {
                project,
                include_inactive: false,
                kind: Some(kind),
                limit: STANDING_MAX,
                ..Default::default()
            };
            all.extend(memories::list(conn, &filter).unwrap_or_default());
        }
        Ok::<_, rusqlite::Error>(all)
    });
    let mut all = read.unwrap_or_else(|e| {
        tracing::warn!("completion: preferences unavailable: {e}");
        Vec::new()
    });
    all.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
    all.into_iter()
        .take(STANDING_MAX)
        .map(|m| format!("{}: {}", m.kind, m.body.trim()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_commented_and_budgeted() {
        let reach = vec![InReach {
            name: "parse_config".into(),
            path: "src/util.rs".into(),
            signature: "pub fn parse_config(\n    path: &Path,\n) -> Config".into(),
            doc: Some("Reads the config.".into()),
        }];
        let prefs = vec!["preference: use anyhow for errors".to_string()];
        let h = header("python", &prefs, &reach, 400);
        assert_eq!(
            h,
            "# Context from Mira (not part of this file):\n\
             # preference: use anyhow for errors\n\
             # src/util.rs: pub fn parse_config( path: &Path, ) -> Config — Reads the config.\n"
        );
        assert_eq!(header("rust", &[], &[], 400), "");
        assert_eq!(header("rust", &prefs, &reach, 3), "");
        let h = header("rust", &prefs, &reach, 25);
        assert!(h.contains("anyhow") && !h.contains("parse_config"), "{h}");
    }
}
