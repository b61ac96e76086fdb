//! The `write_file` tool: creates a file or replaces its whole content, proposed through
//! the host like `edit_file`.

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::edit_file::propose;
use super::{ToolContext, ToolError, ToolOutput, TypedTool, arg_str, confine, current_text};

pub struct WriteFile;

#[derive(Deserialize, JsonSchema)]
pub struct WriteFileArgs {
    path: String,
    content: String,
}

impl TypedTool for WriteFile {
    const NAME: &'static str = "write_file";
    type Args = WriteFileArgs;

    fn description(&self) -> &'static str {
        "Create a file, or replace a file's whole content. Prefer edit_file for changes to an \
         existing file. Goes through the user's editor or confirmation like edit_file."
    }

    fn describe(&self, args: &Value) -> String {
        format!("write {}", arg_str(args, "path"))
    }

    fn call<'a>(
        &'a self,
        a: Self::Args,
        cx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let path = confine::resolve(cx.root, &a.path)?;
            cx.files.check(cx.root, &path)?;
            if path.is_dir() {
                return Err(ToolError::Failed(format!("{} is a directory", a.path)));
            }
            let exists = path.exists() || cx.host.open_document(&path).is_some();
            let (version, base) = if exists {
                current_text(cx, &path).await?
            } else {
                (None, String::new())
            };
            let shown = confine::display(cx.root, &path);
            propose(cx, path, version, base, a.content, !exists, &shown).await
        })
    }
}
