//! `find_symbol` and `symbol_context`: the project's symbol index, as the model sees it.
//!
//! Both read the persisted index (what `mira index` and the language server's crawl and
//! watcher keep current), so they work the same from the CLI and from an editor.

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolOutput, arg_str, blocking, confine, parse_args};
use crate::index::model::SymbolKind;
use crate::index::offline;
use crate::index::service::SymbolInfo;
use crate::memory::anchors;
use crate::project;
use crate::store::{Store, projects};

const EMPTY_INDEX: &str = "no symbol matches. If the project was never indexed, the index is \
                           empty: the user can run `mira index` (editors index on start)";

fn search(
    store: &Store,
    root: &std::path::Path,
    query: &str,
    kind: Option<SymbolKind>,
    limit: usize,
) -> Result<Vec<SymbolInfo>, ToolError> {
    let project = project::detect(root);
    offline::search_project(store, &project, query, kind, limit)
        .map_err(|e| ToolError::Failed(format!("the symbol index is unavailable: {e}")))
}

fn line_of(s: &SymbolInfo, root: &std::path::Path) -> String {
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
        s.selection.start.line + 1,
        s.signature.lines().next().unwrap_or("")
    )
}

pub struct FindSymbol;

#[derive(Deserialize)]
struct FindArgs {
    query: String,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    limit: Option<usize>,
}

impl Tool for FindSymbol {
    fn name(&self) -> &'static str {
        "find_symbol"
    }

    fn description(&self) -> &'static str {
        "Find functions, types, methods and other symbols of the project by name (fuzzy: exact > \
         prefix > camelCase/snake_case word starts > subsequence). Returns kind, name, container, \
         file:line and signature."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "A name or part of one"},
                "kind": {"type": "string", "description": "Only this kind: function, method, class, struct, interface, enum, constant, module, …"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 200}
            },
            "required": ["query"],
            "additionalProperties": false
        })
    }

    fn describe(&self, args: &Value) -> String {
        format!("find symbol {}", arg_str(args, "query"))
    }

    fn run<'a>(
        &'a self,
        args: Value,
        cx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let a: FindArgs = parse_args(args)?;
            if a.query.trim().is_empty() {
                return Err(ToolError::InvalidArgs("`query` is empty".into()));
            }
            let kind = a
                .kind
                .as_deref()
                .map(str::parse::<SymbolKind>)
                .transpose()
                .map_err(|e| ToolError::InvalidArgs(e.to_string()))?;
            let limit = a.limit.unwrap_or(30).min(200);
            let (store, root, query) = (cx.store.clone(), cx.root.to_path_buf(), a.query.clone());
            let hits = blocking(move || search(&store, &root, &query, kind, limit)).await?;
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

#[derive(Deserialize)]
struct ContextArgs {
    name: String,
    /// Prefer the definition in this file (project-relative).
    #[serde(default)]
    path: Option<String>,
}

/// Lines of a definition shown at most.
const MAX_BODY_LINES: usize = 120;

impl Tool for SymbolContext {
    fn name(&self) -> &'static str {
        "symbol_context"
    }

    fn description(&self) -> &'static str {
        "Everything about one symbol: its definition(s) with signature, doc comment and code, the \
         places that call it, and what Mira remembers about it."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The symbol's exact name"},
                "path": {"type": "string", "description": "Prefer the definition in this file"}
            },
            "required": ["name"],
            "additionalProperties": false
        })
    }

    fn describe(&self, args: &Value) -> String {
        format!("context of {}", arg_str(args, "name"))
    }

    fn run<'a>(
        &'a self,
        args: Value,
        cx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let a: ContextArgs = parse_args(args)?;
            let name = a.name.trim().to_string();
            if name.is_empty() {
                return Err(ToolError::InvalidArgs("`name` is empty".into()));
            }
            let (store, root) = (cx.store.clone(), cx.root.to_path_buf());
            let prefer = a.path.clone();
            let text = blocking(move || context(&store, &root, &name, prefer.as_deref())).await?;
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
    name: &str,
    prefer: Option<&str>,
) -> Result<String, ToolError> {
    let mut defs: Vec<SymbolInfo> = search(store, root, name, None, 200)?
        .into_iter()
        .filter(|s| s.name == name)
        .collect();
    if defs.is_empty() {
        return Ok(format!("`{name}`: {EMPTY_INDEX}"));
    }
    // Definitions before declarations; the preferred file first.
    defs.sort_by_key(|s| {
        let in_preferred = prefer.is_some_and(|p| s.path.ends_with(p));
        (!in_preferred, s.declaration)
    });
    defs.truncate(5);
    let mut out = String::new();
    for d in &defs {
        out.push_str(&format!("## {}\n", line_of(d, root)));
        if let Some(doc) = &d.doc {
            out.push_str(&format!("doc: {doc}\n"));
        }
        // Only files inside the root are read, through the same confinement as read_file.
        if let Ok(path) = confine::resolve(root, &d.path.to_string_lossy())
            && let Ok(text) = std::fs::read_to_string(&path)
        {
            let start = d.range.start.line as usize;
            let end = (d.range.end.line as usize).min(start + MAX_BODY_LINES);
            out.push_str("```\n");
            for (i, line) in text.lines().enumerate().take(end + 1).skip(start) {
                out.push_str(&format!("{}\t{line}\n", i + 1));
            }
            if d.range.end.line as usize > end {
                out.push_str("… (truncated; read_file for the rest)\n");
            }
            out.push_str("```\n");
        }
    }
    let conn = store
        .connect()
        .map_err(|e| ToolError::Failed(e.to_string()))?;
    let project = project::detect(root);
    let pid = projects::ensure(&conn, &project.root, &project.name)
        .map_err(|e| ToolError::Failed(e.to_string()))?;
    let callers = crate::index::db::callers_of(&conn, pid, name, 30)
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
    let mut remembered = Vec::new();
    for d in &defs {
        let rel = confine::display(root, &d.path);
        if let Ok(ms) = anchors::memories_for_symbol(&conn, pid, &rel, name) {
            remembered.extend(ms.into_iter().map(|m| format!("- #{} {}", m.id, m.body)));
        }
    }
    if !remembered.is_empty() {
        out.push_str("\nMira remembers:\n");
        out.push_str(&remembered.join("\n"));
        out.push('\n');
    }
    Ok(out)
}
