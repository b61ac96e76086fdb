//! The `edit_file` tool: replaces exact text in a file through the host (the editor, or a
//! confirmation on the CLI); `propose` is shared with `write_file`.

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{ToolContext, ToolError, ToolOutput, TypedTool, arg_str, confine, current_text};
use crate::agent::host::{EditOutcome, FileEdit};

pub struct EditFile;

#[derive(Deserialize, JsonSchema)]
pub struct EditFileArgs {
    path: String,
    old_string: String,
    new_string: String,
    #[serde(default)]
    replace_all: bool,
}

impl TypedTool for EditFile {
    const NAME: &'static str = "edit_file";
    type Args = EditFileArgs;

    fn description(&self) -> &'static str {
        "Replace exact text in a file. `old_string` must match the file exactly (without read_file's \
         line-number prefixes) and be unique unless replace_all is true. The edit goes to the \
         user's editor (or is confirmed on the CLI); the result says whether it was applied."
    }

    fn describe(&self, args: &Value) -> String {
        format!("edit {}", arg_str(args, "path"))
    }

    fn call<'a>(
        &'a self,
        a: Self::Args,
        cx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            if a.old_string.is_empty() {
                return Err(ToolError::InvalidArgs(
                    "`old_string` is empty; use write_file to create a file".into(),
                ));
            }
            let path = confine::resolve(cx.root, &a.path)?;
            cx.files.check(cx.root, &path)?;
            let (version, text) = current_text(cx, &path).await?;
            let count = text.matches(&a.old_string).count();
            let new_text = match count {
                0 => {
                    return Err(ToolError::Failed(format!(
                        "`old_string` does not occur in {}; read the file again",
                        a.path
                    )));
                }
                1 => text.replacen(&a.old_string, &a.new_string, 1),
                n if a.replace_all => {
                    let _ = n;
                    text.replace(&a.old_string, &a.new_string)
                }
                n => {
                    return Err(ToolError::Failed(format!(
                        "`old_string` occurs {n} times in {}; include more context to make it unique, or set replace_all",
                        a.path
                    )));
                }
            };
            let shown = confine::display(cx.root, &path);
            propose(cx, path, version, text, new_text, false, &shown).await
        })
    }
}

/// Hand a whole-file change to the host and describe what became of it.
pub(super) async fn propose(
    cx: &ToolContext<'_>,
    path: std::path::PathBuf,
    base_version: Option<i32>,
    base_text: String,
    new_text: String,
    create: bool,
    shown: &str,
) -> Result<ToolOutput, ToolError> {
    let diff = similar::TextDiff::from_lines(&base_text, &new_text)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{shown}"), &format!("b/{shown}"))
        .to_string();
    let changed = diff
        .lines()
        .filter(|l| {
            (l.starts_with('+') || l.starts_with('-'))
                && !l.starts_with("+++")
                && !l.starts_with("---")
        })
        .count();
    let edit = FileEdit {
        path,
        base_version,
        base_text,
        new_text,
        create,
        diff,
    };
    match cx.host.apply_edit(edit).await {
        EditOutcome::Applied => Ok(ToolOutput {
            text: format!("applied: {shown} ({changed} changed lines)"),
            summary: format!("edited {shown} ({changed} lines)"),
        }),
        EditOutcome::Proposed { id } => Ok(ToolOutput {
            text: format!(
                "proposed as #{id}: the user will review and apply it; do not repeat the edit"
            ),
            summary: format!("proposed edit #{id} to {shown}"),
        }),
        EditOutcome::Rejected(why) => Err(ToolError::Refused(format!(
            "the edit to {shown} was not applied: {why}"
        ))),
        EditOutcome::Stale(why) => Err(ToolError::Failed(format!(
            "{shown} changed meanwhile ({why}); read it again and redo the edit"
        ))),
    }
}
