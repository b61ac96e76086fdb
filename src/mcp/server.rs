//! The MCP server: ten tools, one prompt and one resource, over one store shared with every
//! editor's `mira lsp` (WAL, several processes).

use std::sync::Arc;

use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{
    CallToolResult, ContentBlock, GetPromptRequestParams, GetPromptResponse, GetPromptResult,
    ListPromptsResult, ListResourcesResult, PaginatedRequestParams, Prompt, PromptMessage,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, Role, ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::project::Projects;
use super::{McpSetup, NoEditor};
use crate::agent::ProjectInfo;
use crate::agent::context::{self, Budgets};
use crate::agent::knowledge::Knowledge;
use crate::agent::tools::{self as tools, FileGuard, ToolContext, ToolError, TypedTool};
use crate::config::BashPolicy;
use crate::memory::{ListFilter, MemoryKind, MemoryService, ProjectRef};
use crate::redact::Redactor;
use crate::store::Store;

/// The prompt and the resource that carry the session-start view.
const START_PROMPT: &str = "session-start";
const START_URI: &str = "mira://session-start";

const INSTRUCTIONS: &str = "Mira is the user's persistent coding memory, shared with their \
editors and their terminal. At the start of a session read the `session-start` prompt (or the \
mira://session-start resource): the user's corrections and preferences, which always apply, \
their active goals and tasks, and a summary of the latest conversation. Use `recall` before \
answering questions about past decisions, `remember` for what will matter in a later session \
(a `correction` replaces what it corrects), and `find_symbol`, `symbol_context` and \
`search_code` to find code in the project's index.";

#[derive(Clone)]
pub struct MiraMcp {
    inner: Arc<Inner>,
    tool_router: ToolRouter<Self>,
}

struct Inner {
    store: Store,
    memory: MemoryService,
    projects: Projects,
    budgets: Budgets,
    redactor: Redactor,
}

impl MiraMcp {
    pub fn new(setup: McpSetup) -> MiraMcp {
        MiraMcp {
            inner: Arc::new(Inner {
                projects: Projects::new(setup.store.clone(), setup.cwd),
                store: setup.store,
                memory: setup.memory,
                budgets: setup.budgets,
                redactor: setup.redactor,
            }),
            tool_router: Self::tool_router(),
        }
    }

    /// Everything the client sees passes here: the same redaction as every other face.
    fn redact(&self, text: &str) -> String {
        self.inner.redactor.redact(text).into_owned()
    }

    fn text(&self, text: &str) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::text(self.redact(text))])
    }

    fn failure(&self, text: &str) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(self.redact(text))])
    }

    /// Runs the model's tool outside a turn: same arguments, same code, same wording. MCP
    /// runs only the read-only and memory tools, never edits or bash.
    async fn run_tool<T: TypedTool>(
        &self,
        tool: T,
        args: T::Args,
    ) -> Result<CallToolResult, McpError> {
        let project = self.inner.projects.current().await;
        // The rules are read at the tool's first check, beside its own file reads.
        let files = FileGuard::load(&project.root, false);
        let cancel = CancellationToken::new();
        let cx = ToolContext {
            root: &project.root,
            store: &self.inner.store,
            project: project.id,
            memory: &self.inner.memory,
            index: None,
            turn: 0,
            host: &NoEditor,
            bash: BashPolicy::Off,
            cancel: &cancel,
            files: &files,
        };
        match tool.call(args, &cx).await {
            Ok(out) => Ok(self.text(&out.text)),
            Err(ToolError::InvalidArgs(m)) => Err(McpError::invalid_params(
                self.redact(&format!("invalid arguments: {m}")),
                None,
            )),
            Err(e) => Ok(self.failure(&e.to_string())),
        }
    }

    async fn session_start(&self) -> Result<String, McpError> {
        let project: ProjectInfo = self.inner.projects.current().await.clone();
        let sources = Knowledge::new(self.inner.memory.clone());
        let (store, budgets) = (self.inner.store.clone(), self.inner.budgets);
        let text = tokio::task::spawn_blocking(move || {
            store.read(|c| context::session_start(c, &project, &sources, &budgets))
        })
        .await
        .map_err(|e| McpError::internal_error(e.to_string(), None))?
        .map_err(|e| McpError::internal_error(format!("the Mira database failed: {e}"), None))?;
        Ok(self.redact(&text))
    }
}

/// `memories` is MCP's own tool (the model recalls instead), so its arguments live here.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct MemoriesArgs {
    /// Only this kind.
    #[serde(default)]
    kind: Option<MemoryKind>,
    /// At most this many, newest first (default 50).
    #[serde(default)]
    limit: Option<u32>,
    /// Also superseded and forgotten memories (an audit view).
    #[serde(default)]
    include_inactive: bool,
}

#[tool_router]
impl MiraMcp {
    #[tool(
        description = "Store a long-term memory shared with the user's editors and terminal: a \
        fact, the user's preference, a decision, or a correction (kind `correction`; give \
        `corrects` with the id it replaces when known, otherwise Mira finds the one it corrects). \
        Global unless `project` is true. Remember what will matter in later sessions."
    )]
    async fn remember(
        &self,
        Parameters(a): Parameters<tools::RememberArgs>,
    ) -> Result<CallToolResult, McpError> {
        self.run_tool(tools::Remember, a).await
    }

    #[tool(
        description = "Search long-term memories (global ones and this project's): facts, \
        preferences, decisions and corrections from earlier sessions in any editor or agent. \
        Returns `#id [kind] text` lines."
    )]
    async fn recall(
        &self,
        Parameters(a): Parameters<tools::RecallArgs>,
    ) -> Result<CallToolResult, McpError> {
        self.run_tool(tools::Recall, a).await
    }

    #[tool(
        description = "Retract a memory the user no longer wants recalled (kept, restorable \
        with `mira forget --restore`). For a memory that is wrong, prefer `remember` with kind \
        correction."
    )]
    async fn forget(
        &self,
        Parameters(a): Parameters<tools::ForgetArgs>,
    ) -> Result<CallToolResult, McpError> {
        self.run_tool(tools::Forget, a).await
    }

    #[tool(
        description = "List memories visible in this project (its own and global ones), newest first."
    )]
    async fn memories(
        &self,
        Parameters(a): Parameters<MemoriesArgs>,
    ) -> Result<CallToolResult, McpError> {
        let project = self.inner.projects.current().await;
        let filter = ListFilter {
            project: None,
            include_inactive: a.include_inactive,
            kind: a.kind,
            limit: a.limit.unwrap_or(50).clamp(1, 500) as usize,
            ..Default::default()
        };
        let scope = ProjectRef {
            root: project.root.clone(),
            name: project.name.clone(),
        };
        match self.inner.memory.list(Some(scope), filter).await {
            Ok(ms) if ms.is_empty() => Ok(self.text("no memories yet")),
            Ok(ms) => {
                let lines: Vec<String> = ms
                    .iter()
                    .map(|m| format!("#{} [{} {}] {}", m.id, m.kind, m.status.as_str(), m.body))
                    .collect();
                Ok(self.text(&lines.join("\n")))
            }
            Err(e) => Ok(self.failure(&e.to_string())),
        }
    }

    #[tool(
        description = "The user's goals (global or per project): list them, add one, or update \
        title, description, status, priority or progress."
    )]
    async fn goals(
        &self,
        Parameters(a): Parameters<tools::GoalsArgs>,
    ) -> Result<CallToolResult, McpError> {
        self.run_tool(tools::Goals, a).await
    }

    #[tool(
        description = "The user's tasks (optionally under a goal): list open ones, add one, or \
        update title, status or priority."
    )]
    async fn tasks(
        &self,
        Parameters(a): Parameters<tools::TasksArgs>,
    ) -> Result<CallToolResult, McpError> {
        self.run_tool(tools::Tasks, a).await
    }

    #[tool(
        description = "Find functions, types, methods and other symbols of the project by name \
        (fuzzy). Returns kind, name, container, file:line and signature. Reads the index \
        `mira index` and the editors keep up to date."
    )]
    async fn find_symbol(
        &self,
        Parameters(a): Parameters<tools::FindSymbolArgs>,
    ) -> Result<CallToolResult, McpError> {
        self.run_tool(tools::FindSymbol, a).await
    }

    #[tool(
        description = "Everything about one symbol: its definition(s) with signature, doc and \
        code, the places that call it, and what Mira remembers about it."
    )]
    async fn symbol_context(
        &self,
        Parameters(a): Parameters<tools::SymbolContextArgs>,
    ) -> Result<CallToolResult, McpError> {
        self.run_tool(tools::SymbolContext, a).await
    }

    #[tool(
        description = "Search the project's code by meaning or by name (\"where are retries \
        handled\"). Returns the best matching functions, types and methods with file:line, doc \
        and code."
    )]
    async fn search_code(
        &self,
        Parameters(a): Parameters<tools::SearchCodeArgs>,
    ) -> Result<CallToolResult, McpError> {
        self.run_tool(tools::SearchCode, a).await
    }

    #[tool(description = "The project Mira serves and what its code index holds (files, symbols).")]
    async fn index_status(&self) -> Result<CallToolResult, McpError> {
        let project = self.inner.projects.current().await.clone();
        let store = self.inner.store.clone();
        let id = project.id;
        let stats = tokio::task::spawn_blocking(move || {
            id.map(|id| store.read(|c| crate::index::offline::stats(c, id)))
                .transpose()
        })
        .await
        .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        let text = match stats {
            Ok(Some(s)) if s.files > 0 => format!(
                "project {} at {}\nindex: {} files, {} symbols ({} files skipped)",
                project.name,
                project.root.display(),
                s.files,
                s.symbols,
                s.skipped
            ),
            Ok(_) => format!(
                "project {} at {}\nindex: empty. Run `mira index` in the project (editors \
                 running `mira lsp` index it on start).",
                project.name,
                project.root.display()
            ),
            Err(e) => return Ok(self.failure(&format!("the index cannot be read: {e}"))),
        };
        Ok(self.text(&text))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for MiraMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_resources()
                .build(),
        )
        .with_instructions(INSTRUCTIONS)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.inner.projects.ask_client(&context.peer).await;
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
            START_PROMPT,
            Some(
                "What Mira knows at the start of a session: the project, the user's \
                 corrections and preferences, active goals and tasks, the latest summary",
            ),
            None,
        )]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if request.name != START_PROMPT {
            return Err(McpError::invalid_params(
                format!(
                    "no prompt `{}`; the one prompt is `{START_PROMPT}`",
                    request.name
                ),
                None,
            ));
        }
        let text = self.session_start().await?;
        Ok(
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                .with_description("Mira's session-start view")
                .into(),
        )
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new(START_URI, START_PROMPT)
                .with_description(
                    "The project, corrections and preferences, active goals and tasks, and the \
                     latest conversation summary",
                )
                .with_mime_type("text/markdown"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if request.uri != START_URI {
            return Err(McpError::resource_not_found(
                format!(
                    "no resource {}; the one resource is {START_URI}",
                    request.uri
                ),
                None,
            ));
        }
        let text = self.session_start().await?;
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, START_URI)]).into())
    }
}
