//! `search_code`: code search (FTS5 over per-symbol chunks, plus vectors when an embedder is
//! on) — find code by what it does, not only by name.

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{ToolContext, ToolError, ToolOutput, TypedTool, arg_str};
use crate::agent::knowledge::code_search;
use crate::index::search::read_lines;

pub struct SearchCode;

#[derive(Deserialize, JsonSchema)]
pub struct SearchCodeArgs {
    /// What the code does, or names in it
    query: String,
    /// At most this many hits (default 8).
    #[serde(default)]
    #[schemars(range(min = 1, max = 30))]
    limit: Option<usize>,
}

/// Lines of code shown per hit.
const HIT_LINES: usize = 40;

impl TypedTool for SearchCode {
    const NAME: &'static str = "search_code";
    type Args = SearchCodeArgs;

    fn description(&self) -> &'static str {
        "Search the project's code by meaning or by name (\"where are retries with backoff \
         handled\", \"parse config file\"). Returns the best matching functions, types and \
         methods with file:line, doc comment and code."
    }

    fn describe(&self, args: &Value) -> String {
        format!("search code for {}", arg_str(args, "query"))
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
            let (store, root, turn_project) = (cx.store.clone(), cx.root.to_path_buf(), cx.project);
            let project =
                super::blocking(move || Ok(super::project_row(&store, turn_project, &root)))
                    .await?;
            let Some(project) = project else {
                return Ok(ToolOutput {
                    text: "no code matches: this project was never indexed; the user can run \
                           `mira index` (editors index on start)"
                        .into(),
                    summary: format!("no index for {}", a.query),
                });
            };
            let found = code_search(cx.memory, project, &a.query, a.limit.unwrap_or(8).min(30))
                .await
                .map_err(ToolError::Failed)?;
            if found.hits.is_empty() {
                let text = match found.note {
                    Some(note) => format!("no code matches ({note})"),
                    None => "no code matches. If the project was never indexed, the user can run \
                             `mira index` (editors index on start)"
                        .into(),
                };
                return Ok(ToolOutput {
                    text,
                    summary: format!("no code matches {}", a.query),
                });
            }
            let root = cx.root.to_path_buf();
            let hits = found.hits;
            let n = hits.len();
            let mut text = super::blocking(move || {
                Ok(hits
                    .iter()
                    .map(|h| {
                        let code =
                            read_lines(&root.join(&h.path), h.start_line, h.end_line, HIT_LINES);
                        h.render(code.as_deref())
                    })
                    .collect::<Vec<_>>()
                    .join("\n"))
            })
            .await?;
            if let Some(note) = found.note {
                text = format!("({note})\n{text}");
            }
            Ok(ToolOutput {
                text,
                summary: format!("{n} code matches for {}", a.query),
            })
        })
    }
}
