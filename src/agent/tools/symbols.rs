//! `find_symbol` and `symbol_context`: the project's symbol index, as the model sees it.
//!
//! In an editor both ask the live index (the actor's in-memory table: unsaved text wins, fuzzy
//! ranking, no reload); on the CLI they look names up in SQLite through the name index, and
//! fall back to code search for names that match nothing exactly. Either way a call costs
//! milliseconds, not a reload of the whole index.

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{ToolContext, ToolError, ToolOutput, TypedTool, arg_str, blocking, confine};
use crate::index::model::SymbolKind;
use crate::index::search;
use crate::index::service::SymbolInfo;
use crate::memory::anchors;
use crate::store::Store;

const EMPTY_INDEX: &str = "no symbol matches. If the project was never indexed, the index is \
                           empty: the user can run `mira index` (editors index on start)";

/// A symbol as these tools show it: where it is, by lines (what both the live index and a
/// stored code-search hit know).
struct Def {
    name: String,
    kind: SymbolKind,
    container: Option<String>,
    path: std::path::PathBuf,
    /// Zero-based line of the name.
    line: u32,
    /// Zero-based first and last line of the definition.
    lines: (u32, u32),
    signature: String,
    doc: Option<String>,
    declaration: bool,
}

impl From<SymbolInfo> for Def {
    fn from(s: SymbolInfo) -> Def {
        Def {
            line: s.line(),
            lines: (s.range.start.row, s.range.end.row),
            name: s.name,
            kind: s.kind,
            container: s.container,
            path: s.path,
            signature: s.signature,
            doc: s.doc,
            declaration: s.declaration,
        }
    }
}

fn search(
    cx: &ToolContext<'_>,
    query: String,
    kind: Option<SymbolKind>,
    limit: usize,
) -> BoxFuture<'static, Result<Vec<Def>, ToolError>> {
    let unavailable =
        |e: String| ToolError::Failed(format!("the symbol index is unavailable: {e}"));
    if let Some(index) = cx.index.cloned() {
        return Box::pin(async move {
            index
                .workspace_symbols(&query, kind, limit)
                .await
                .map(|found| found.symbols.into_iter().map(Def::from).collect())
                .map_err(|e| unavailable(e.to_string()))
        });
    }
    let (store, root, project) = (cx.store.clone(), cx.root.to_path_buf(), cx.project);
    Box::pin(blocking(move || {
        let Some(project) = super::project_row(&store, project, &root) else {
            return Ok(Vec::new());
        };
        store
            .read(|c| {
                let mut hits = search::by_name(c, project, &query, limit)?;
                if hits.is_empty() {
                    hits = search::search(c, project, &query, limit, None, &Default::default())?;
                }
                Ok(hits)
            })
            .map_err(|e| unavailable(e.to_string()))
            .map(|hits| {
                hits.into_iter()
                    .filter_map(|h| info_of(&h, &root))
                    .filter(|i| kind.is_none_or(|k| i.kind == k))
                    .collect()
            })
    }))
}

/// A stored hit, which knows its lines.
fn info_of(h: &search::CodeHit, root: &std::path::Path) -> Option<Def> {
    let kind = h.kind.parse::<SymbolKind>().ok()?;
    Some(Def {
        name: h.name.clone(),
        kind,
        container: h.container.clone(),
        path: root.join(&h.path),
        line: h.start_line,
        lines: (h.start_line, h.end_line),
        signature: h.signature.clone(),
        doc: h.doc.clone(),
        declaration: false,
    })
}

fn line_of(s: &Def, root: &std::path::Path) -> String {
    let container = s
        .container
        .as_deref()
        .map(|c| format!(" in {c}"))
        .unwrap_or_default();
    format!(
        "{} {}{} — {}:{}  {}",
        s.kind.as_str(),
        s.name,
        container,
        confine::display(root, &s.path),
        s.line + 1,
        s.signature.lines().next().unwrap_or("")
    )
}

pub struct FindSymbol;

#[derive(Deserialize, JsonSchema)]
pub struct FindSymbolArgs {
    /// A name or part of one
    query: String,
    /// Only this kind.
    #[serde(default)]
    kind: Option<SymbolKind>,
    /// At most this many (default 30).
    #[serde(default)]
    #[schemars(range(min = 1, max = 200))]
    limit: Option<usize>,
}

impl TypedTool for FindSymbol {
    const NAME: &'static str = "find_symbol";
    type Args = FindSymbolArgs;

    fn description(&self) -> &'static str {
        "Find functions, types, methods and other symbols of the project by name (fuzzy: exact > \
         prefix > camelCase/snake_case word starts > subsequence). Returns kind, name, container, \
         file:line and signature."
    }

    fn describe(&self, args: &Value) -> String {
        format!("find symbol {}", arg_str(args, "query"))
    }

    fn call<'a>(
        &'a self,
        a: Self::Args,
        cx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            if a.query.trim().is_empty() {
                return Err(ToolError::InvalidArgs("`query` is empty".into()));
            }
            let limit = a.limit.unwrap_or(30).min(200);
            let hits = search(cx, a.query.clone(), a.kind, limit).await?;
            if hits.is_empty() {
                return Ok(ToolOutput {
                    text: EMPTY_INDEX.into(),
                    summary: format!("no symbol matches {}", a.query),
                });
            }
            let text: Vec<String> = hits.iter().map(|h| line_of(h, cx.root)).collect();
            Ok(ToolOutput {
                summary: format!("{} symbols match {}", hits.len(), a.query),
                text: text.join("\n"),
            })
        })
    }
}

pub struct SymbolContext;

#[derive(Deserialize, JsonSchema)]
pub struct SymbolContextArgs {
    /// The symbol's exact name
    name: String,
    /// Prefer the definition in this file (project-relative)
    #[serde(default)]
    path: Option<String>,
}

/// Lines of a definition shown at most.
const MAX_BODY_LINES: usize = 120;

impl TypedTool for SymbolContext {
    const NAME: &'static str = "symbol_context";
    type Args = SymbolContextArgs;

    fn description(&self) -> &'static str {
        "Everything about one symbol: its definition(s) with signature, doc comment and code, the \
         places that call it, and what Mira remembers about it."
    }

    fn describe(&self, args: &Value) -> String {
        format!("context of {}", arg_str(args, "name"))
    }

    fn call<'a>(
        &'a self,
        a: Self::Args,
        cx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let name = a.name.trim().to_string();
            if name.is_empty() {
                return Err(ToolError::InvalidArgs("`name` is empty".into()));
            }
            let mut defs: Vec<Def> = search(cx, name.clone(), None, 200)
                .await?
                .into_iter()
                .filter(|s| s.name == name)
                .collect();
            if defs.is_empty() {
                return Ok(ToolOutput {
                    summary: format!("context of {}", a.name.trim()),
                    text: format!("`{name}`: {EMPTY_INDEX}"),
                });
            }
            // Definitions before declarations; the preferred file first.
            defs.sort_by_key(|s| {
                let in_preferred = a.path.as_deref().is_some_and(|p| s.path.ends_with(p));
                (!in_preferred, s.declaration)
            });
            defs.truncate(5);
            // Unsaved text wins: the editor's buffer when the file is open.
            let texts: Vec<Option<String>> = defs
                .iter()
                .map(|d| cx.host.open_document(&d.path).map(|doc| doc.text))
                .collect();
            let (store, root, project) = (cx.store.clone(), cx.root.to_path_buf(), cx.project);
            let text =
                blocking(move || context(&store, &root, project, &name, &defs, texts)).await?;
            Ok(ToolOutput {
                summary: format!("context of {}", a.name.trim()),
                text,
            })
        })
    }
}

fn context(
    store: &Store,
    root: &std::path::Path,
    project: Option<i64>,
    name: &str,
    defs: &[Def],
    open_texts: Vec<Option<String>>,
) -> Result<String, ToolError> {
    let mut out = String::new();
    for (d, open) in defs.iter().zip(open_texts) {
        out.push_str(&format!("## {}\n", line_of(d, root)));
        if let Some(doc) = &d.doc {
            out.push_str(&format!("doc: {doc}\n"));
        }
        // Only files inside the root are read, through the same confinement as read_file.
        let text = open.or_else(|| {
            confine::resolve(root, &d.path.to_string_lossy())
                .ok()
                .and_then(|p| std::fs::read_to_string(p).ok())
        });
        if let Some(text) = text {
            let start = d.lines.0 as usize;
            let end = (d.lines.1 as usize).min(start + MAX_BODY_LINES);
            out.push_str("```\n");
            for (i, line) in text.lines().enumerate().take(end + 1).skip(start) {
                out.push_str(&format!("{}\t{line}\n", i + 1));
            }
            if d.lines.1 as usize > end {
                out.push_str("… (truncated; read_file for the rest)\n");
            }
            out.push_str("```\n");
        }
    }
    let Some(pid) = super::project_row(store, project, root) else {
        return Ok(out);
    };
    let (callers, remembered) = store
        .read(|conn| {
            let callers = crate::index::db::callers_of(conn, pid, name, 30)?;
            let mut remembered = Vec::new();
            for d in defs {
                let rel = confine::display(root, &d.path);
                if let Ok(ms) = anchors::memories_for_symbol(conn, pid, &rel, name) {
                    remembered.extend(ms.into_iter().map(|m| format!("- #{} {}", m.id, m.body)));
                }
            }
            Ok((callers, remembered))
        })
        .map_err(|e| ToolError::Failed(e.to_string()))?;
    if callers.is_empty() {
        out.push_str("\nNo recorded callers.\n");
    } else {
        out.push_str("\nCalled from:\n");
        for (path, caller, line) in callers {
            let caller = caller.unwrap_or_else(|| "top level".into());
            out.push_str(&format!("- {path}:{} in {caller}\n", line + 1));
        }
    }
    if !remembered.is_empty() {
        out.push_str("\nMira remembers:\n");
        out.push_str(&remembered.join("\n"));
        out.push('\n');
    }
    Ok(out)
}
