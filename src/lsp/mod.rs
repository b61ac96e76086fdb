//! The LSP adapter: tower-lsp-server behind a guarded transport. No business logic here —
//! handlers convert protocol types and call into the library.

mod actions;
mod capabilities;
mod chat;
mod commands;
mod complete;
mod direct;
mod dispatch;
mod editor;
pub mod ext;
mod features;
mod from_proto;
mod lifecycle;
mod memory;
mod state;
mod status;
mod symbols;
mod text_sync;
mod to_proto;
mod transcript;
pub mod transport;
mod unwind;

pub use dispatch::{Backend, build};
pub use features::ClientFeatures;
pub use state::{Focus, ServeOptions, ServerState, Session};
pub use text_sync::{DocumentState, DocumentStateParams};

use tokio::io::{AsyncRead, AsyncWrite};
use tower_lsp_server::Server;

/// How a served session ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The client sent `shutdown` before leaving (exit code 0); otherwise 1, per LSP.
    pub clean: bool,
}

impl Outcome {
    pub fn exit_code(self) -> i32 {
        if self.clean { 0 } else { 1 }
    }
}

/// Handlers run concurrently up to this many; text sync stays ordered because it mutates
/// state before its first `.await`. Generous, so long requests never starve didChange.
const CONCURRENCY: usize = 32;

/// Serve one client over any byte streams (stdio in production, a duplex pipe in tests).
/// Returns after `exit`, or when the input ends.
pub async fn serve<I, O>(input: I, output: O, options: ServeOptions) -> Outcome
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let (service, socket) = build(options);
    let state = service.inner().state.clone();
    let (to_server, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, from_server) = tokio::io::duplex(1 << 20);
    let (replies_tx, replies_rx) = tokio::sync::mpsc::unbounded_channel();
    let limit = state
        .options
        .env
        .get("MIRA_MAX_MESSAGE_BYTES")
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(transport::MAX_BODY);
    let pump_in = tokio::spawn(transport::pump_in(input, to_server, replies_tx, limit));
    let parked = std::sync::Arc::new(direct::Parked::default());
    let pump_out = tokio::spawn(transport::pump_out(
        from_server,
        output,
        replies_rx,
        parked.clone(),
    ));
    let service = direct::Direct {
        inner: service,
        state: state.clone(),
        parked,
    };
    Server::new(server_in, server_out, socket)
        .concurrency_level(CONCURRENCY)
        .serve(unwind::CatchPanic(service))
        .await;
    // The server's output pipe is closed now; let the writer drain it to the client.
    let _ = pump_out.await;
    pump_in.abort();
    Outcome {
        clean: state.shutdown_requested(),
    }
}

/// `mira lsp`: serve on stdin/stdout.
pub async fn serve_stdio(options: ServeOptions) -> Outcome {
    serve(tokio::io::stdin(), tokio::io::stdout(), options).await
}
