//! `mira mcp`: opens the store and the memory service as every CLI command does, then serves
//! MCP on stdin/stdout until the client closes stdin. Logs go to the log file and stderr.

use mira::agent::AgentSettings;
use mira::config::Env;
use mira::mcp::{McpSetup, serve_stdio};

use std::process::ExitCode;

use tokio::runtime::Runtime;

use super::agent::memory_service;
use super::open;
use super::{CliError, CliResult};

pub fn mcp(runtime: &Runtime) -> CliResult {
    let _guard = crate::logging::init_lsp(&Env::from_process(), "mira mcp");
    let cx = open(None)?;
    let memory = memory_service(&cx)?;
    let setup = McpSetup {
        store: cx.store.clone(),
        memory: memory.clone(),
        cwd: cx.project.root.clone(),
        budgets: AgentSettings::from_config(&cx.loaded.config.agent).budgets,
        redactor: cx.redactor(),
    };
    // The embedding worker ends with the runtime: it must not keep a client-less process alive.
    runtime
        .block_on(async {
            let _worker = memory.spawn_embedding_worker();
            serve_stdio(setup).await
        })
        .map_err(CliError::failure)?;
    Ok(ExitCode::SUCCESS)
}
