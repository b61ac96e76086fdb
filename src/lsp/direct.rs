//! The outline, written straight to bytes.
//!
//! tower-lsp-server turns every result into a `serde_json::Value` before it writes it. An
//! editor asks for the outline after every keystroke, and for a 900-symbol file (effect's
//! `stream.ts`) that Value is about 7,000 maps and 15,000 key strings: built, written and
//! freed, 3.9–5.4 ms, where serializing the structs takes 0.6 ms (docs/benchmarks.md). So `textDocument/documentSymbol` is answered here, in a layer in
//! front of the service: the same handler (`symbols::document_symbol`) answers, its result
//! is serialized once and parked under a ticket, the response carries the ticket, and the
//! output pump ([`super::transport::pump_out`]) writes the parked bytes in its place.
//!
//! Requests still go through in arrival order: this layer's future starts when the server
//! polls it, after every earlier didChange was applied (ARCHITECTURE.md's first invariant).
//! Such a request is not in tower-lsp-server's table of pending requests, so
//! `$/cancelRequest` cannot abort it: it is answered in full, as LSP allows.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use serde_json::Value;
use tower::Service;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Id, Request, Response};
use tower_lsp_server::ls_types::DocumentSymbolParams;

use super::state::ServerState;

const METHOD: &str = "textDocument/documentSymbol";

/// Results serialized ahead of their response, by ticket.
pub struct Parked {
    /// Per process, so no result a client could make Mira echo is taken for a ticket.
    prefix: String,
    next: AtomicU64,
    bytes: Mutex<HashMap<String, Vec<u8>>>,
}

impl Default for Parked {
    fn default() -> Self {
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
            ^ (u64::from(std::process::id()) << 32);
        Parked {
            prefix: format!("mira-parked-{nonce:016x}-"),
            next: AtomicU64::new(0),
            bytes: Mutex::default(),
        }
    }
}

impl Parked {
    /// Parks `bytes` (one JSON value) and returns the ticket the response carries instead.
    pub fn park(&self, bytes: Vec<u8>) -> Value {
        let ticket = format!(
            "{}{}",
            self.prefix,
            self.next.fetch_add(1, Ordering::Relaxed)
        );
        self.lock().insert(ticket.clone(), bytes);
        Value::String(ticket)
    }

    /// The body to send for `body`: the same response with its parked result in place of
    /// the ticket, or `None` when `body` carries no ticket (every other message).
    pub fn unpark(&self, body: &[u8]) -> Option<Vec<u8>> {
        // A ticketed response is short; anything else is passed over without parsing.
        if body.len() > 256 || memchr::memmem::find(body, self.prefix.as_bytes()).is_none() {
            return None;
        }
        let msg: Value = serde_json::from_slice(body).ok()?;
        let ticket = msg.get("result")?.as_str()?;
        let id = msg.get("id")?;
        let out = match self.lock().remove(ticket) {
            Some(result) => {
                let mut out = Vec::with_capacity(result.len() + 64);
                out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
                out.extend_from_slice(id.to_string().as_bytes());
                out.extend_from_slice(br#","result":"#);
                out.extend_from_slice(&result);
                out.push(b'}');
                out
            }
            // Every ticket is taken once; a second response with it would be a bug here.
            None => serde_json::json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {"code": -32603, "message": "Mira lost this answer (a bug); ask again"}
            })
            .to_string()
            .into_bytes(),
        };
        Some(out)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<u8>>> {
        self.bytes.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The layer: documentSymbol answered with a parked result, every other message passed on.
pub struct Direct<S> {
    pub inner: S,
    pub state: Arc<ServerState>,
    pub parked: Arc<Parked>,
}

impl<S> Service<Request> for Direct<S>
where
    S: Service<Request, Response = Option<Response>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = Option<Response>;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Option<Response>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        // Before initialize and after shutdown, tower-lsp-server's own answers apply.
        let ours = req.method() == METHOD
            && self.state.session().is_some()
            && !self.state.shutdown_requested();
        match (ours, req.id().cloned()) {
            (true, Some(id)) => {
                let (state, parked) = (self.state.clone(), self.parked.clone());
                let params = req.into_parts().2;
                Box::pin(async move { Ok(Some(answer(&state, &parked, id, params).await)) })
            }
            _ => Box::pin(self.inner.call(req)),
        }
    }
}

async fn answer(state: &ServerState, parked: &Parked, id: Id, params: Option<Value>) -> Response {
    let params: DocumentSymbolParams = match serde_json::from_value(params.unwrap_or(Value::Null)) {
        Ok(p) => p,
        Err(e) => return Response::from_error(id, Error::invalid_params(e.to_string())),
    };
    match super::symbols::document_symbol(state, params).await {
        Ok(None) => Response::from_ok(id, Value::Null),
        Ok(Some(outline)) => match serde_json::to_vec(&outline) {
            Ok(bytes) => Response::from_ok(id, parked.park(bytes)),
            Err(e) => Response::from_error(
                id,
                Error {
                    code: ErrorCode::InternalError,
                    message: format!("the outline could not be written: {e}").into(),
                    data: None,
                },
            ),
        },
        Err(e) => Response::from_error(id, e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(id: Value, result: Value) -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({"jsonrpc": "2.0", "result": result, "id": id}))
            .unwrap()
    }

    #[test]
    fn a_ticketed_response_becomes_the_parked_result_once() {
        let parked = Parked::default();
        let outline = serde_json::json!([{"name": "é 🦀 \"q\"", "kind": 12,
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 2}}}]);
        for id in [serde_json::json!(7), serde_json::json!("req-7")] {
            let ticket = parked.park(serde_json::to_vec(&outline).unwrap());
            let body = response(id.clone(), ticket);
            let sent: Value = serde_json::from_slice(&parked.unpark(&body).unwrap()).unwrap();
            assert_eq!(
                sent,
                serde_json::json!({"jsonrpc": "2.0", "id": id, "result": outline})
            );
            // Taken once: the same ticket again is a clear error for that request.
            let again: Value = serde_json::from_slice(&parked.unpark(&body).unwrap()).unwrap();
            assert_eq!(again["error"]["code"], -32603);
            assert_eq!(again["id"], id);
        }
    }

    #[test]
    fn other_messages_pass_untouched() {
        let parked = Parked::default();
        let _ = parked.park(b"[]".to_vec());
        for body in [
            response(serde_json::json!(1), serde_json::json!("mira-parked-0-0")),
            response(serde_json::json!(1), Value::Null),
            // A string that merely holds a ticket's prefix, inside a bigger result.
            response(
                serde_json::json!(2),
                serde_json::json!({"text": parked.prefix.clone()}),
            ),
            br#"{"jsonrpc":"2.0","method":"window/logMessage","params":{"type":3,"message":"x"}}"#
                .to_vec(),
        ] {
            assert_eq!(
                parked.unpark(&body).map(|b| String::from_utf8(b).unwrap()),
                None
            );
        }
        assert_eq!(parked.lock().len(), 1, "nothing was taken");
    }

    #[test]
    fn each_result_gets_its_own_ticket() {
        let parked = Parked::default();
        let (a, b) = (parked.park(b"1".to_vec()), parked.park(b"2".to_vec()));
        assert_ne!(a, b);
        let body = |t: &Value| response(serde_json::json!(1), t.clone());
        let result = |t: &Value| {
            serde_json::from_slice::<Value>(&parked.unpark(&body(t)).unwrap()).unwrap()["result"]
                .clone()
        };
        assert_eq!(
            (result(&b), result(&a)),
            (serde_json::json!(2), serde_json::json!(1))
        );
    }
}
