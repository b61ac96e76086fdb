//! The `read_file` tool: a project file's lines, numbered, from the editor's unsaved copy
//! when it is open.

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{ToolContext, ToolError, ToolOutput, TypedTool, arg_str, confine, current_text};

pub struct ReadFile;

#[derive(Deserialize, JsonSchema)]
pub struct ReadFileArgs {
    /// Path relative to the project root
    path: String,
    /// First line to return, 1-based.
    #[serde(default)]
    #[schemars(range(min = 1))]
    start_line: Option<usize>,
    #[serde(default)]
    #[schemars(range(min = 1))]
    max_lines: Option<usize>,
}

impl TypedTool for ReadFile {
    const NAME: &'static str = "read_file";
    type Args = ReadFileArgs;

    fn description(&self) -> &'static str {
        "Read a text file of the project (the editor's unsaved version when it is open). Lines are \
         prefixed with their 1-based number and a tab; the prefix is not part of the file."
    }

    fn describe(&self, args: &Value) -> String {
        format!("read {}", arg_str(args, "path"))
    }

    fn call<'a>(
        &'a self,
        a: Self::Args,
        cx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let path = confine::resolve(cx.root, &a.path)?;
            if path.is_dir() {
                return Err(ToolError::Failed(format!(
                    "{} is a directory; use list_files",
                    a.path
                )));
            }
            cx.files.check(cx.root, &path)?;
            let (_, text) = current_text(cx, &path).await?;
            let start = a.start_line.unwrap_or(1).max(1);
            let max = a.max_lines.unwrap_or(usize::MAX);
            let mut out = String::with_capacity(text.len() + text.len() / 8);
            let mut shown = 0;
            for (i, line) in text.lines().enumerate().skip(start - 1).take(max) {
                out.push_str(&format!("{:>5}\t{line}\n", i + 1));
                shown += 1;
            }
            let total = text.lines().count();
            if shown == 0 && total > 0 {
                return Err(ToolError::InvalidArgs(format!(
                    "start_line {start} is past the end ({total} lines)"
                )));
            }
            Ok(ToolOutput {
                text: out,
                summary: format!(
                    "read {} ({shown} of {total} lines)",
                    confine::display(cx.root, &path)
                ),
            })
        })
    }
}
