//! The `grep` tool: a regular-expression search over the project's files (ripgrep's
//! matcher, .gitignore and sensitive files respected), capped at 200 matching lines.

use futures::future::BoxFuture;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, SearcherBuilder, sinks::Lossy};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{ToolContext, ToolError, ToolOutput, TypedTool, arg_str, blocking, confine};

pub struct Grep;

const LIMIT: usize = 200;

#[derive(Deserialize, JsonSchema)]
pub struct GrepArgs {
    pattern: String,
    /// File or directory relative to the project root
    #[serde(default)]
    path: Option<String>,
    /// Only files whose root-relative path matches, e.g. **/*.py
    #[serde(default)]
    glob: Option<String>,
}

impl TypedTool for Grep {
    const NAME: &'static str = "grep";
    type Args = GrepArgs;

    fn description(&self) -> &'static str {
        "Search project files for a regular expression (ripgrep syntax, smart case, .gitignore \
         respected). Returns `path:line: text` for each matching line."
    }

    fn describe(&self, args: &Value) -> String {
        format!("grep {:?}", arg_str(args, "pattern"))
    }

    fn call<'a>(
        &'a self,
        a: Self::Args,
        cx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let matcher = RegexMatcherBuilder::new()
                .case_smart(true)
                .build(&a.pattern)
                .map_err(|e| ToolError::InvalidArgs(format!("bad pattern: {e}")))?;
            let glob = match &a.glob {
                Some(g) => Some(
                    globset::Glob::new(g)
                        .map_err(|e| ToolError::InvalidArgs(format!("bad glob `{g}`: {e}")))?
                        .compile_matcher(),
                ),
                None => None,
            };
            let root = cx.root.to_path_buf();
            let start = confine::resolve(cx.root, a.path.as_deref().unwrap_or("."))?;
            if start.is_file() {
                cx.files.check(cx.root, &start)?;
            }
            let guard = cx.files.clone();
            blocking(move || {
                let mut searcher = SearcherBuilder::new()
                    .binary_detection(BinaryDetection::quit(0))
                    .line_number(true)
                    .build();
                let mut lines = Vec::new();
                let mut files = 0;
                'walk: for entry in ignore::WalkBuilder::new(&start)
                    .require_git(false)
                    .filter_entry(move |e| {
                        !guard.hides(e.path(), e.file_type().is_some_and(|t| t.is_dir()))
                    })
                    .build()
                    .flatten()
                {
                    if !entry.file_type().is_some_and(|t| t.is_file()) {
                        continue;
                    }
                    let rel = confine::display(&root, entry.path());
                    if glob.as_ref().is_some_and(|g| !g.is_match(&rel)) {
                        continue;
                    }
                    let before = lines.len();
                    let _ = searcher.search_path(
                        &matcher,
                        entry.path(),
                        Lossy(|n, line| {
                            lines.push(format!("{rel}:{n}: {}", line.trim_end()));
                            Ok(lines.len() < LIMIT)
                        }),
                    );
                    if lines.len() > before {
                        files += 1;
                    }
                    if lines.len() >= LIMIT {
                        lines.push(format!(
                            "… stopped at {LIMIT} matches; narrow with `path` or `glob`"
                        ));
                        break 'walk;
                    }
                }
                let n = lines.len().min(LIMIT);
                let text = if lines.is_empty() {
                    "no matches".to_string()
                } else {
                    lines.join("\n")
                };
                Ok(ToolOutput {
                    text,
                    summary: format!("{n} matches in {files} files"),
                })
            })
            .await
        })
    }
}
