//! The `list_files` tool: project files under a directory, filtered by a glob, .gitignore
//! and sensitive files respected, capped at 1,000 paths.

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{ToolContext, ToolError, ToolOutput, TypedTool, arg_str, blocking, confine};

pub struct ListFiles;

const LIMIT: usize = 1000;

#[derive(Deserialize, JsonSchema)]
pub struct ListFilesArgs {
    /// Directory relative to the project root (default: the root)
    #[serde(default)]
    path: Option<String>,
    /// Glob over paths relative to the root, e.g. src/**/*.ts
    #[serde(default)]
    glob: Option<String>,
}

impl TypedTool for ListFiles {
    const NAME: &'static str = "list_files";
    type Args = ListFilesArgs;

    fn description(&self) -> &'static str {
        "List project files (respecting .gitignore), optionally under a directory and filtered by a \
         glob such as `**/*.rs`. Paths are relative to the project root."
    }

    fn describe(&self, args: &Value) -> String {
        let g = arg_str(args, "glob");
        let p = arg_str(args, "path");
        format!(
            "list files{}{}",
            if p.is_empty() {
                String::new()
            } else {
                format!(" in {p}")
            },
            if g.is_empty() {
                String::new()
            } else {
                format!(" matching {g}")
            }
        )
    }

    fn call<'a>(
        &'a self,
        a: Self::Args,
        cx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let root = cx.root.to_path_buf();
            let dir = confine::resolve(cx.root, a.path.as_deref().unwrap_or("."))?;
            let guard = cx.files.clone();
            let glob = match &a.glob {
                Some(g) => Some(
                    globset::Glob::new(g)
                        .map_err(|e| ToolError::InvalidArgs(format!("bad glob `{g}`: {e}")))?
                        .compile_matcher(),
                ),
                None => None,
            };
            blocking(move || {
                let mut files = Vec::new();
                let mut more = false;
                for entry in ignore::WalkBuilder::new(&dir)
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
                    if files.len() == LIMIT {
                        more = true;
                        break;
                    }
                    files.push(rel);
                }
                files.sort();
                let n = files.len();
                let mut text = files.join("\n");
                if more {
                    text.push_str(&format!(
                        "\n… more than {LIMIT} files; narrow with `path` or `glob`"
                    ));
                }
                Ok(ToolOutput {
                    text,
                    summary: format!("{n} files{}", if more { "+" } else { "" }),
                })
            })
            .await
        })
    }
}
