//! The `write_file` tool: creates a file or replaces its whole content, proposed through
//! the host like `edit_file`.

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};

use super::edit_file::propose;
use super::{Tool, ToolContext, ToolError, ToolOutput, arg_str, confine, current_text, parse_args};

pub struct WriteFile;

#[derive(Deserialize)]
struct Args {
    path: String,
    content: String,
}

impl Tool for WriteFile {
    fn name(&self) -> &'static str {
        "write_file"
    }

    fn description(&self) -> &'static str {
        "Create a file, or replace a file's whole content. Prefer edit_file for changes to an \
         existing file. Goes through the user's editor or confirmation like edit_file."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
            "additionalProperties": false
        })
    }

    fn describe(&self, args: &Value) -> String {
        format!("write {}", arg_str(args, "path"))
    }

    fn run<'a>(
        &'a self,
        args: Value,
        cx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let a: Args = parse_args(args)?;
            let path = confine::resolve(cx.root, &a.path)?;
            cx.files.check(cx.root, &path)?;
            if path.is_dir() {
                return Err(ToolError::Failed(format!("{} is a directory", a.path)));
            }
            let exists = path.exists() || cx.host.open_document(&path).is_some();
            let (version, base) = if exists {
                current_text(cx, &path)?
            } else {
                (None, String::new())
            };
            let shown = confine::display(cx.root, &path);
            propose(cx, path, version, base, a.content, !exists, &shown).await
        })
    }
}
