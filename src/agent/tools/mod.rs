//! The model's tools. One file per tool behind one trait; adding a tool is one file and one
//! line in [`Registry::standard`].
//!
//! Tools run inside the turn's task, never in an LSP handler. Filesystem tools resolve every
//! path through [`confine::resolve`]; their output is redacted and, when large, turned into
//! an artifact by the turn loop, not by each tool.

pub mod confine;
pub mod guard;

mod bash;
mod edit_file;
mod grep;
mod list_files;
mod memory;
mod read_artifact;
mod read_file;
pub mod schema;
mod search_code;
mod symbols;
mod write_file;

use std::path::Path;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::agent::config::BashPolicy;
use crate::llm::ToolSpec;
use crate::store::Store;

use super::host::TurnHost;
pub use guard::FileGuard;
pub use memory::{
    Forget, ForgetArgs, Goals, GoalsArgs, Recall, RecallArgs, Remember, RememberArgs,
};
pub use memory::{Tasks, TasksArgs};
pub use search_code::{SearchCode, SearchCodeArgs};
pub use symbols::{FindSymbol, FindSymbolArgs, SymbolContext, SymbolContextArgs};

pub struct ToolContext<'a> {
    /// Canonical project root; file tools never leave it.
    pub root: &'a Path,
    pub store: &'a Store,
    /// The project's row (code search and the symbol tables are per project).
    pub project: Option<i64>,
    /// The one memory front end (same recall, dedup and corrections as the CLI and the LSP).
    pub memory: &'a crate::memory::MemoryService,
    /// The live index in an editor (unsaved text wins); `None` on the CLI (SQLite by name).
    pub index: Option<&'a crate::index::IndexHandle>,
    /// Row id of the running turn.
    pub turn: i64,
    pub host: &'a dyn TurnHost,
    pub bash: BashPolicy,
    pub cancel: &'a CancellationToken,
    /// Sensitive files the file tools withhold (unless the user allowed them).
    pub files: &'a FileGuard,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ToolOutput {
    /// What the model gets back.
    pub text: String,
    /// One line for the user ("read src/main.rs (120 lines)").
    pub summary: String,
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ToolError {
    /// Arguments missing, mistyped or not JSON: the model can fix this and retry.
    #[error("invalid arguments: {0}")]
    InvalidArgs(String),
    /// Not allowed (outside the root, bash off, user said no).
    #[error("refused: {0}")]
    Refused(String),
    #[error("{0}")]
    Failed(String),
}

/// A tool as the turn loop sees it: arguments arrive as the model's JSON. Implemented only
/// through [`TypedTool`], so a tool's schema and its parser cannot drift apart.
pub trait Tool: Send + Sync {
    fn name(&self) -> &'static str;
    fn description(&self) -> &'static str;
    /// JSON Schema of the arguments object.
    fn parameters(&self) -> Value;
    /// A short description of one call, shown before it runs.
    fn describe(&self, args: &Value) -> String;
    fn run<'a>(
        &'a self,
        args: Value,
        cx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;
}

/// A tool and its one argument type. The type's doc comments are the argument descriptions;
/// its schema is what the model is shown ([`schema::parameters`]) and what MCP lists, and MCP
/// calls [`TypedTool::call`] with arguments it has already parsed.
pub trait TypedTool: Send + Sync {
    const NAME: &'static str;
    type Args: DeserializeOwned + JsonSchema + Send;
    fn description(&self) -> &'static str;
    /// A short description of one call, shown before it runs. It reads the raw JSON so that
    /// history still shows something for a call whose arguments did not parse.
    fn describe(&self, args: &Value) -> String;
    fn call<'a>(
        &'a self,
        args: Self::Args,
        cx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;
}

impl<T: TypedTool> Tool for T {
    fn name(&self) -> &'static str {
        T::NAME
    }

    fn description(&self) -> &'static str {
        TypedTool::description(self)
    }

    fn parameters(&self) -> Value {
        schema::parameters::<T::Args>()
    }

    fn describe(&self, args: &Value) -> String {
        TypedTool::describe(self, args)
    }

    fn run<'a>(
        &'a self,
        args: Value,
        cx: &'a ToolContext<'a>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        match serde_json::from_value(args) {
            Ok(args) => self.call(args, cx),
            Err(e) => Box::pin(std::future::ready(Err(ToolError::InvalidArgs(
                e.to_string(),
            )))),
        }
    }
}

pub struct Registry {
    tools: Vec<Box<dyn Tool>>,
}

/// How a call of `name` with these JSON `arguments` reads to a user: its tool's
/// [`Tool::describe`], the same words shown live (`TurnEvent::ToolCall`) and in history.
pub fn summary(name: &str, arguments: &str) -> String {
    static STANDARD: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
    let tools = STANDARD.get_or_init(Registry::standard);
    match (tools.get(name), serde_json::from_str::<Value>(arguments)) {
        (Some(t), Ok(args @ Value::Object(_))) => t.describe(&args),
        _ => name.to_string(),
    }
}

impl Registry {
    /// The tools every turn has.
    pub fn standard() -> Registry {
        Registry {
            tools: vec![
                Box::new(read_file::ReadFile),
                Box::new(list_files::ListFiles),
                Box::new(grep::Grep),
                Box::new(edit_file::EditFile),
                Box::new(write_file::WriteFile),
                Box::new(bash::Bash),
                Box::new(read_artifact::ReadArtifact),
                Box::new(symbols::FindSymbol),
                Box::new(symbols::SymbolContext),
                Box::new(search_code::SearchCode),
                Box::new(memory::Remember),
                Box::new(memory::Recall),
                Box::new(memory::Forget),
                Box::new(memory::Goals),
                Box::new(memory::Tasks),
            ],
        }
    }

    pub fn add(&mut self, tool: Box<dyn Tool>) {
        self.tools.retain(|t| t.name() != tool.name());
        self.tools.push(tool);
    }

    /// Takes a tool away (`mira chat --ask-only` removes the editing ones).
    pub fn remove(&mut self, name: &str) {
        self.tools.retain(|t| t.name() != name);
    }

    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.tools
            .iter()
            .find(|t| t.name() == name)
            .map(|t| t.as_ref())
    }

    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.tools.iter().map(|t| t.name())
    }

    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools
            .iter()
            .map(|t| ToolSpec {
                name: t.name().to_string(),
                description: t.description().to_string(),
                parameters: t.parameters(),
            })
            .collect()
    }
}

/// The project's row: the turn's, else the one the store has for this root (a turn started
/// without one). Blocking: call from [`blocking`].
pub(crate) fn project_row(store: &Store, project: Option<i64>, root: &Path) -> Option<i64> {
    project.or_else(|| {
        store
            .read(|c| crate::store::projects::find(c, root))
            .ok()
            .flatten()
    })
}

/// Run filesystem work off the async runtime.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::Failed(format!("the tool stopped unexpectedly: {e}")))?
}

pub(crate) fn arg_str<'a>(args: &'a Value, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Current text of a file: the editor's buffer when open (what the user sees), else the disk,
/// read off the async runtime (a large file must not hold up the server's other requests).
pub(crate) async fn current_text(
    cx: &ToolContext<'_>,
    path: &Path,
) -> Result<(Option<i32>, String), ToolError> {
    if let Some(doc) = cx.host.open_document(path) {
        return Ok((Some(doc.version), doc.text));
    }
    let (path, shown) = (path.to_path_buf(), confine::display(cx.root, path));
    blocking(move || disk_text(&path, &shown))
        .await
        .map(|t| (None, t))
}

fn disk_text(path: &Path, shown: &str) -> Result<String, ToolError> {
    let bytes =
        std::fs::read(path).map_err(|e| ToolError::Failed(format!("cannot read {shown}: {e}")))?;
    if bytes.contains(&0) {
        return Err(ToolError::Failed(format!("{shown} is a binary file")));
    }
    String::from_utf8(bytes).map_err(|_| ToolError::Failed(format!("{shown} is not UTF-8 text")))
}
