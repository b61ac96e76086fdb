//! The `read_artifact` tool: pages through a large tool output stored as an artifact, by
//! byte offset and length.

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{ToolContext, ToolError, ToolOutput, TypedTool, blocking};
use crate::agent::conversation;

pub struct ReadArtifact;

#[derive(Deserialize, JsonSchema)]
pub struct ReadArtifactArgs {
    id: i64,
    #[serde(default)]
    offset: usize,
    #[serde(default)]
    #[schemars(range(min = 1))]
    length: Option<usize>,
}

const DEFAULT_LENGTH: usize = 12 * 1024;

impl TypedTool for ReadArtifact {
    const NAME: &'static str = "read_artifact";
    type Args = ReadArtifactArgs;

    fn description(&self) -> &'static str {
        "Read part of a large tool output that was stored as an artifact (the tool result names \
         its id). `offset` and `length` are in bytes."
    }

    fn describe(&self, args: &Value) -> String {
        format!(
            "read artifact #{}",
            args.get("id").and_then(Value::as_i64).unwrap_or(0)
        )
    }

    fn call<'a>(
        &'a self,
        a: Self::Args,
        cx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let store = cx.store.clone();
            let found = blocking(move || {
                store
                    .read(|c| conversation::read_artifact(c, a.id))
                    .map_err(|e| ToolError::Failed(e.to_string()))
            })
            .await?;
            let Some((label, content)) = found else {
                return Err(ToolError::Failed(format!("no artifact #{}", a.id)));
            };
            let mut start = a.offset.min(content.len());
            while !content.is_char_boundary(start) {
                start -= 1;
            }
            let mut end = (start + a.length.unwrap_or(DEFAULT_LENGTH)).min(content.len());
            while !content.is_char_boundary(end) {
                end -= 1;
            }
            let mut text = content[start..end].to_string();
            if end < content.len() {
                text.push_str(&format!(
                    "\n… {} more bytes; continue with offset {end}",
                    content.len() - end
                ));
            }
            Ok(ToolOutput {
                text,
                summary: format!("artifact #{} ({label}) bytes {start}..{end}", a.id),
            })
        })
    }
}
