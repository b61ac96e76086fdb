//! Logging for the binary. In LSP mode stdout carries the protocol, so logs go to a daily
//! file under `$MIRA_HOME/logs` (and warnings to stderr, which editors keep in their LSP log).

use mira::config::{self, ConfigInputs, Env, Loaded};
use tracing_subscriber::prelude::*;
use tracing_subscriber::{EnvFilter, fmt};

/// Logs for a long-running server (`what`: `mira lsp`, `mira mcp`), whose panics and fatal
/// signals are also recorded for `mira doctor` (`mira::crashlog`).
pub fn init_lsp(
    env: &Env,
    what: &'static str,
) -> Option<tracing_appender::non_blocking::WorkerGuard> {
    let loaded = config::load(&ConfigInputs {
        env: env.clone(),
        ..Default::default()
    })
    .unwrap_or_else(|_| Loaded::defaults(env));
    let filter =
        || EnvFilter::try_new(&loaded.config.log.level).unwrap_or_else(|_| EnvFilter::new("info"));
    let stderr = fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_filter(EnvFilter::new("warn"));
    let dir = loaded.config.store.home.join("logs");
    let file = std::fs::create_dir_all(&dir).ok().map(|_| {
        let (writer, guard) =
            tracing_appender::non_blocking(tracing_appender::rolling::daily(&dir, "mira.log"));
        (
            fmt::layer()
                .with_writer(writer)
                .with_ansi(false)
                .with_filter(filter()),
            guard,
        )
    });
    let (file_layer, guard) = match file {
        Some((l, g)) => (Some(l), Some(g)),
        None => (None, None),
    };
    let _ = tracing_subscriber::registry()
        .with(stderr)
        .with(file_layer)
        .try_init();
    mira::crashlog::install(&loaded.config.store.home, what);
    guard
}
