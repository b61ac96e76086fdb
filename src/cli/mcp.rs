//! `mira mcp`: opens the store and the memory service as every CLI command does, then serves
//! MCP on stdin/stdout until the client closes stdin. Logs go to the log file and stderr.

use mira::agent::AgentSettings;
use mira::config::Env;
use mira::mcp::{McpSetup, serve_stdio};

use super::agent::{fail, memory_service, open};

pub fn mcp() -> i32 {
    let _guard = crate::logging::init_lsp(&Env::from_process(), "mira mcp");
    let cx = match open() {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    let memory = match memory_service(&cx) {
        Ok(m) => m,
        Err(e) => return fail(e),
    };
    let setup = McpSetup {
        store: cx.store.clone(),
        memory: memory.clone(),
        cwd: cx.project.root.clone(),
        budgets: AgentSettings::from_config(&cx.loaded.config.agent).budgets,
        secrets: cx.secrets(),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail((1, format!("cannot start the async runtime: {e}"))),
    };
    let outcome = runtime.block_on(async {
        let _worker = memory.spawn_embedding_worker();
        serve_stdio(setup).await
    });
    // The embedding worker must not keep a client-less process alive.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    match outcome {
        Ok(()) => 0,
        Err(e) => fail((1, e)),
    }
}
