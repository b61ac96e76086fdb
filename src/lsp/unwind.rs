//! A handler that panics answers its request with an error; the server lives on.
//!
//! tower-lsp-server polls every handler inside its one `serve` task, so an unwinding
//! handler would end that task and with it every editor feature. Each call is wrapped in
//! `catch_unwind` instead. Handlers own no state across an `.await` that a panic could
//! leave half-written: documents change synchronously in their own lock (poison is
//! recovered there) and the index lives on its own thread.

use futures::FutureExt;
use futures::future::BoxFuture;
use std::panic::AssertUnwindSafe;
use std::task::{Context, Poll};
use tower::Service;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Request, Response};

pub struct CatchPanic<S>(pub S);

/// The error a request gets when its handler panicked (the log has the panic).
fn panicked(method: &str) -> Error {
    Error {
        code: ErrorCode::InternalError,
        message: format!(
            "Mira hit a bug answering {method}; the server is still running. The panic is \
             in Mira's log (`mira doctor` shows where); please report it."
        )
        .into(),
        data: None,
    }
}

/// Debug builds only: `MIRA_TEST_PANIC_ON=<method>` makes that method's handler panic
/// after it ran, so the tests can prove the server survives through the real binary.
fn injected_fault(method: &str) -> bool {
    #[cfg(debug_assertions)]
    {
        static ON: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
        ON.get_or_init(|| std::env::var("MIRA_TEST_PANIC_ON").ok())
            .as_deref()
            == Some(method)
    }
    #[cfg(not(debug_assertions))]
    {
        let _ = method;
        false
    }
}

impl<S> Service<Request> for CatchPanic<S>
where
    S: Service<Request, Response = Option<Response>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = Option<Response>;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Option<Response>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let id = req.id().cloned();
        let method = req.method().to_string();
        let call = std::panic::catch_unwind(AssertUnwindSafe(|| self.0.call(req)));
        let fault = injected_fault(&method);
        Box::pin(async move {
            let outcome = match call {
                Ok(fut) => {
                    let named = method.clone();
                    AssertUnwindSafe(async move {
                        let result = fut.await;
                        assert!(!fault, "MIRA_TEST_PANIC_ON names {named}");
                        result
                    })
                    .catch_unwind()
                    .await
                }
                Err(payload) => Err(payload),
            };
            match outcome {
                Ok(result) => result,
                Err(_) => {
                    tracing::error!(%method, "a handler panicked; its request was answered with an error");
                    Ok(id.map(|id| Response::from_error(id, panicked(&method))))
                }
            }
        })
    }
}
