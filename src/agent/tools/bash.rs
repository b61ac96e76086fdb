//! The `bash` tool: runs a command in the project root under `agent.bash` (off, ask for
//! approval, or on), with a timeout that kills it.

use std::process::Stdio;
use std::time::Duration;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio::io::AsyncReadExt;

use super::{ToolContext, ToolError, ToolOutput, TypedTool, arg_str};
use crate::agent::config::BashPolicy;

pub struct Bash;

#[derive(Deserialize, JsonSchema)]
pub struct BashArgs {
    command: String,
    #[serde(default)]
    #[schemars(range(min = 1, max = 600))]
    timeout_secs: Option<u64>,
}

const MAX_OUTPUT: usize = 256 * 1024;

impl TypedTool for Bash {
    const NAME: &'static str = "bash";
    type Args = BashArgs;

    fn description(&self) -> &'static str {
        "Run a shell command in the project root (bash -c). Off unless the user allowed it \
         (`agent.bash`); returns exit status, stdout and stderr."
    }

    fn describe(&self, args: &Value) -> String {
        format!("$ {}", arg_str(args, "command"))
    }

    fn call<'a>(
        &'a self,
        a: Self::Args,
        cx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            match cx.bash {
                BashPolicy::Off => {
                    return Err(ToolError::Refused(
                        "bash is off. The user can allow it with `agent.bash = \"ask\"` or `\"on\"` in Mira's config".into(),
                    ));
                }
                BashPolicy::Ask => {
                    if !cx
                        .host
                        .approve(format!("Mira wants to run: {}", a.command))
                        .await
                    {
                        return Err(ToolError::Refused(
                            "the user did not allow this command".into(),
                        ));
                    }
                }
                BashPolicy::On => {}
            }
            let mut child = tokio::process::Command::new("bash")
                .arg("-c")
                .arg(&a.command)
                .current_dir(cx.root)
                // The model has no business with the provider keys Mira runs with.
                .env_remove("OPENAI_API_KEY")
                .env_remove("ANTHROPIC_API_KEY")
                .env_remove("DEEPSEEK_API_KEY")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .kill_on_drop(true)
                .spawn()
                .map_err(|e| ToolError::Failed(format!("cannot start bash: {e}")))?;
            let mut stdout = child.stdout.take().expect("piped");
            let mut stderr = child.stderr.take().expect("piped");
            let timeout = Duration::from_secs(a.timeout_secs.unwrap_or(60).clamp(1, 600));
            let run = async {
                let (mut o, mut e) = (Vec::new(), Vec::new());
                let mut out_capped = (&mut stdout).take(MAX_OUTPUT as u64);
                let mut err_capped = (&mut stderr).take(MAX_OUTPUT as u64);
                let (_, _, status) = tokio::join!(
                    out_capped.read_to_end(&mut o),
                    err_capped.read_to_end(&mut e),
                    child.wait()
                );
                (o, e, status)
            };
            let (o, e, status) = tokio::select! {
                r = tokio::time::timeout(timeout, run) => r.map_err(|_| ToolError::Failed(format!("timed out after {}s (the command was killed)", timeout.as_secs())))?,
                _ = cx.cancel.cancelled() => return Err(ToolError::Failed("cancelled".into())),
            };
            let code = status.ok().and_then(|s| s.code());
            let text = format!(
                "exit status: {}\n--- stdout\n{}\n--- stderr\n{}",
                code.map_or("killed".to_string(), |c| c.to_string()),
                String::from_utf8_lossy(&o),
                String::from_utf8_lossy(&e)
            );
            Ok(ToolOutput {
                text,
                summary: format!(
                    "exit {}",
                    code.map_or("killed".to_string(), |c| c.to_string())
                ),
            })
        })
    }
}
