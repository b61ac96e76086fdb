//! A guard between the editor's pipe and tower-lsp-server.
//!
//! tower-lsp-server reads with a `tokio_util` `FramedRead`, which ends the stream after the
//! first decode error — so one malformed frame (bad JSON, a wrong Content-Length) would stop
//! the whole server. The guard frames and checks every message itself: well-formed messages
//! pass through byte for byte, malformed ones get a JSON-RPC error reply (-32700 / -32600) and
//! reading resumes at the next `Content-Length` header. Frames over the size limit are refused
//! the same way (never buffered or waited for), `$/` requests get MethodNotFound as the spec
//! asks, lone UTF-16 surrogates in strings become U+FFFD instead of failing the whole message,
//! and a `didChange` whose params cannot be read becomes `mira/documentOutOfSync`, so the
//! server can tell the user instead of silently drifting from the editor's text.

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tower_lsp_server::jsonrpc::{Request, Response};

/// Larger bodies are refused (and skipped) rather than buffered; `MIRA_MAX_MESSAGE_BYTES`
/// overrides it.
pub const MAX_BODY: usize = 64 * 1024 * 1024;

/// The notification a broken `textDocument/didChange` is turned into.
pub const OUT_OF_SYNC: &str = "mira/documentOutOfSync";
const MAX_HEADER: usize = 8 * 1024;

#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    Body(Vec<u8>),
    /// A header block without a usable Content-Length; the text says what was wrong.
    BadHeader(String),
    TooLarge(usize),
}

/// Reads `Content-Length`-framed messages, recovering from garbage between frames.
pub struct FrameReader<R> {
    inner: R,
    buf: Vec<u8>,
    eof: bool,
    limit: usize,
    /// After an oversized frame: drop bytes until the next header.
    resync: bool,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    pub fn new(inner: R) -> Self {
        Self::with_limit(inner, MAX_BODY)
    }

    pub fn with_limit(inner: R, limit: usize) -> Self {
        FrameReader {
            inner,
            buf: Vec::with_capacity(64 * 1024),
            eof: false,
            limit,
            resync: false,
        }
    }

    async fn fill(&mut self) -> std::io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        let mut chunk = [0u8; 64 * 1024];
        let n = self.inner.read(&mut chunk).await?;
        if n == 0 {
            self.eof = true;
            return Ok(false);
        }
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(true)
    }

    /// The next frame, or `None` at end of input.
    pub async fn next(&mut self) -> std::io::Result<Option<Frame>> {
        loop {
            if self.resync {
                // The body of the refused frame may end anywhere: the next header can follow
                // it on the same line.
                match find_ci(&self.buf, b"content-length:") {
                    Some(at) => {
                        self.buf.drain(..at);
                        self.resync = false;
                    }
                    None => {
                        // Keep a tail that may hold the start of the next header.
                        let keep = self.buf.len().saturating_sub(32);
                        self.buf.drain(..keep);
                        if !self.fill().await? {
                            return Ok(None);
                        }
                        continue;
                    }
                }
            }
            // Skip anything before a header (garbage left by a wrong Content-Length).
            if let Some(at) = find_ci(&self.buf, b"content-length")
                && at > 0
                && !header_starts_at(&self.buf, at)
            {
                self.buf.drain(..at);
            }
            if let Some(end) = find(&self.buf, b"\r\n\r\n") {
                let header = String::from_utf8_lossy(&self.buf[..end]).into_owned();
                self.buf.drain(..end + 4);
                let len = match content_length(&header) {
                    Ok(len) => len,
                    Err(why) => return Ok(Some(Frame::BadHeader(why))),
                };
                if len > self.limit {
                    // Never wait for (or buffer) a body this size: resync at the next header.
                    self.resync = true;
                    return Ok(Some(Frame::TooLarge(len)));
                }
                while self.buf.len() < len {
                    if !self.fill().await? {
                        return Ok(None);
                    }
                }
                let body: Vec<u8> = self.buf.drain(..len).collect();
                return Ok(Some(Frame::Body(body)));
            }
            if self.buf.len() > MAX_HEADER {
                // No header terminator in sight: drop what cannot be a header, keep a tail
                // that may hold the start of the next one.
                let keep = self.buf.len() - 32;
                self.buf.drain(..keep);
                return Ok(Some(Frame::BadHeader("header too long or missing".into())));
            }
            if !self.fill().await? {
                return Ok(None);
            }
        }
    }
}

fn header_starts_at(buf: &[u8], at: usize) -> bool {
    // A header line starts the buffer or follows a CRLF.
    at == 0 || buf[..at].ends_with(b"\r\n")
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn find_ci(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
}

fn content_length(header: &str) -> Result<usize, String> {
    let mut len = None;
    for line in header.split("\r\n") {
        let Some((name, value)) = line.split_once(':') else {
            return Err(format!("malformed header line {line:?}"));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            len = Some(
                value
                    .trim()
                    .parse::<usize>()
                    .map_err(|_| format!("invalid Content-Length {:?}", value.trim()))?,
            );
        }
    }
    len.ok_or_else(|| "missing Content-Length header".into())
}

pub fn encode(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// What to do with one frame from the client.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    Forward(Vec<u8>),
    Reply(Value),
}

pub fn check(frame: Frame) -> Verdict {
    check_with_limit(frame, MAX_BODY)
}

pub fn check_with_limit(frame: Frame, limit: usize) -> Verdict {
    let err = |id: Value, code: i64, message: String| {
        Verdict::Reply(
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
        )
    };
    match frame {
        Frame::BadHeader(why) => err(Value::Null, -32700, format!("Parse error: {why}")),
        Frame::TooLarge(n) => err(
            Value::Null,
            -32600,
            format!(
                "Invalid request: a {n}-byte message exceeds Mira's limit of {limit} bytes \
                 (MIRA_MAX_MESSAGE_BYTES); it was skipped"
            ),
        ),
        Frame::Body(body) => {
            // Exactly what tower-lsp-server's own decoder accepts; anything else would stop it.
            // Typed first: the common case parses once, without building a Value tree.
            if let Ok(req) = serde_json::from_slice::<Request>(&body) {
                return request(req, body);
            }
            if serde_json::from_slice::<Response>(&body).is_ok() {
                return Verdict::Forward(body);
            }
            if let Some(fixed) = replace_lone_surrogates(&body) {
                return check_with_limit(Frame::Body(fixed), limit);
            }
            let value: Value = match serde_json::from_slice(&body) {
                Ok(v) => v,
                Err(e) => return err(Value::Null, -32700, format!("Parse error: {e}")),
            };
            let id = match value.get("id") {
                Some(id @ (Value::Number(_) | Value::String(_))) => id.clone(),
                _ => Value::Null,
            };
            err(
                id,
                -32600,
                "Invalid request: not a JSON-RPC 2.0 request, notification or response".into(),
            )
        }
    }
}

/// A well-formed request or notification: `$/` requests are answered here (tower-lsp-server
/// never answers them); a didChange whose params do not parse is turned into
/// [`OUT_OF_SYNC`] so the server can say so.
fn request(req: Request, body: Vec<u8>) -> Verdict {
    if req.method().starts_with("$/")
        && let Some(id) = req.id()
    {
        return Verdict::Reply(json!({"jsonrpc": "2.0", "id": id, "error": {
            "code": -32601,
            "message": format!("Method not found: {}", req.method()),
        }}));
    }
    if req.method() == "textDocument/didChange" && req.id().is_none() {
        let params = req.params().cloned().unwrap_or(Value::Null);
        if let Err(e) = serde_json::from_value::<
            tower_lsp_server::ls_types::DidChangeTextDocumentParams,
        >(params.clone())
        {
            let uri = params
                .pointer("/textDocument/uri")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let note = json!({"jsonrpc": "2.0", "method": OUT_OF_SYNC,
                "params": {"uri": uri, "reason": e.to_string()}});
            return Verdict::Forward(note.to_string().into_bytes());
        }
    }
    Verdict::Forward(body)
}

/// JSON text with every lone UTF-16 surrogate escape (`\ud800` without its pair, or a stray
/// low one) replaced by `\uFFFD`; `None` when there was none. serde_json rejects lone
/// surrogates, and one in a didChange would otherwise lose the whole edit.
pub fn replace_lone_surrogates(body: &[u8]) -> Option<Vec<u8>> {
    let hex4 = |at: usize| -> Option<u32> {
        let s = std::str::from_utf8(body.get(at..at + 4)?).ok()?;
        u32::from_str_radix(s, 16).ok()
    };
    let escape_at = |at: usize| body.get(at) == Some(&b'\\') && body.get(at + 1) == Some(&b'u');
    let mut out = Vec::with_capacity(body.len());
    let (mut i, mut in_string, mut changed) = (0, false, false);
    while i < body.len() {
        let b = body[i];
        if !in_string || b != b'\\' {
            if b == b'"' {
                in_string = !in_string;
            }
            out.push(b);
            i += 1;
            continue;
        }
        match escape_at(i).then(|| hex4(i + 2)).flatten() {
            Some(0xD800..=0xDBFF) => {
                let paired = escape_at(i + 6)
                    && hex4(i + 8).is_some_and(|lo| (0xDC00..=0xDFFF).contains(&lo));
                if paired {
                    out.extend_from_slice(&body[i..i + 12]);
                    i += 12;
                } else {
                    out.extend_from_slice(b"\\uFFFD");
                    changed = true;
                    i += 6;
                }
            }
            Some(0xDC00..=0xDFFF) => {
                out.extend_from_slice(b"\\uFFFD");
                changed = true;
                i += 6;
            }
            Some(_) => {
                out.extend_from_slice(&body[i..i + 6]);
                i += 6;
            }
            None => {
                // Any other escape: the backslash and the character it escapes.
                out.extend_from_slice(&body[i..(i + 2).min(body.len())]);
                i += 2;
            }
        }
    }
    changed.then_some(out)
}

/// Copy client → server through the checks; replies to bad frames go to `replies`.
pub async fn pump_in<R, W>(
    input: R,
    mut server_in: W,
    replies: mpsc::UnboundedSender<Vec<u8>>,
    limit: usize,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = FrameReader::with_limit(input, limit);
    while let Ok(Some(frame)) = reader.next().await {
        match check_with_limit(frame, limit) {
            Verdict::Forward(body) => {
                if server_in.write_all(&encode(&body)).await.is_err() {
                    break;
                }
            }
            Verdict::Reply(v) => {
                tracing::warn!(reply = %v, "malformed message from the client");
                let _ = replies.send(encode(v.to_string().as_bytes()));
            }
        }
    }
    // Closing the server's input ends its read loop: stdin EOF means the editor is gone.
    let _ = server_in.shutdown().await;
}

/// Copy server → client frame by frame, interleaving the guard's own replies between frames;
/// a response carrying a parked result's ticket goes out with that result (`lsp::direct`).
pub async fn pump_out<R, W>(
    server_out: R,
    mut output: W,
    mut replies: mpsc::UnboundedReceiver<Vec<u8>>,
    parked: std::sync::Arc<super::direct::Parked>,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = FrameReader::new(server_out);
    let mut replies_open = true;
    loop {
        let bytes = tokio::select! {
            frame = reader.next() => match frame {
                Ok(Some(Frame::Body(body))) => encode(&parked.unpark(&body).unwrap_or(body)),
                Ok(Some(other)) => {
                    tracing::error!(?other, "the server wrote an unframed message");
                    continue;
                }
                Ok(None) | Err(_) => break,
            },
            reply = replies.recv(), if replies_open => match reply {
                Some(r) => r,
                None => { replies_open = false; continue; }
            },
        };
        if output.write_all(&bytes).await.is_err() || output.flush().await.is_err() {
            break;
        }
    }
    // Deliver replies still queued (e.g. to a malformed message that was the last input).
    while let Ok(r) = replies.try_recv() {
        let _ = output.write_all(&r).await;
    }
    let _ = output.flush().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frames(input: &[u8]) -> Vec<Frame> {
        let mut r = FrameReader::new(input);
        let mut out = vec![];
        while let Some(f) = r.next().await.unwrap() {
            out.push(f);
        }
        out
    }

    #[tokio::test]
    async fn recovers_after_garbage_and_bad_headers() {
        let good = encode(br#"{"jsonrpc":"2.0","method":"x"}"#);
        let mut input = b"garbage".to_vec();
        input.extend_from_slice(&good);
        input.extend_from_slice(b"Content-Length: abc\r\n\r\n");
        input.extend_from_slice(&good);
        let got = frames(&input).await;
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(matches!(&got[0], Frame::Body(b) if b.starts_with(b"{")));
        assert!(matches!(&got[1], Frame::BadHeader(why) if why.contains("abc")));
        assert!(matches!(&got[2], Frame::Body(_)));
    }

    #[tokio::test]
    async fn too_short_content_length_resyncs_on_the_next_header() {
        let body = br#"{"jsonrpc":"2.0","method":"x"}"#;
        let mut input = format!("Content-Length: {}\r\n\r\n", body.len() - 5).into_bytes();
        input.extend_from_slice(body);
        input.extend_from_slice(&encode(br#"{"jsonrpc":"2.0","id":2,"method":"y"}"#));
        let got = frames(&input).await;
        assert!(check(got.into_iter().next().unwrap()).is_reply());
        let got = frames(&input).await;
        assert!(matches!(got.last(), Some(Frame::Body(b)) if b.ends_with(b"\"y\"}")));
    }

    #[test]
    fn checks_classify_messages() {
        let v = |s: &str| check(Frame::Body(s.as_bytes().to_vec()));
        assert!(matches!(
            v(r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{}}"#),
            Verdict::Forward(_)
        ));
        assert!(matches!(
            v(r#"{"jsonrpc":"2.0","id":1,"result":null}"#),
            Verdict::Forward(_)
        ));
        let Verdict::Reply(r) = v("{not json") else {
            panic!()
        };
        assert_eq!(r["error"]["code"], -32700);
        let Verdict::Reply(r) = v(r#"{"jsonrpc":"2.0","id":7,"method":5}"#) else {
            panic!()
        };
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (json!(7), json!(-32600))
        );
        let Verdict::Reply(r) = v(r#"[1,2]"#) else {
            panic!()
        };
        assert_eq!(r["error"]["code"], -32600);
    }

    #[tokio::test]
    async fn oversized_frames_are_refused_without_waiting_for_their_body() {
        let mut input = b"Content-Length: 4000000000\r\n\r\n{\"jsonrpc\":".to_vec();
        input.extend_from_slice(&encode(br#"{"jsonrpc":"2.0","id":2,"method":"y"}"#));
        let got = frames(&input).await;
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0], Frame::TooLarge(4_000_000_000));
        let Verdict::Reply(r) = check(Frame::TooLarge(4_000_000_000)) else {
            panic!()
        };
        assert!(r["error"]["message"].as_str().unwrap().contains("limit"));
        assert!(matches!(&got[1], Frame::Body(b) if b.ends_with(b"\"y\"}")));
        // A configured limit applies to ordinary sizes too.
        let mut r = FrameReader::with_limit(&input[..], 10);
        assert!(matches!(r.next().await.unwrap(), Some(Frame::TooLarge(_))));
        assert!(matches!(r.next().await.unwrap(), Some(Frame::TooLarge(_))));
        assert_eq!(r.next().await.unwrap(), None);
    }

    #[test]
    fn dollar_requests_get_method_not_found_and_dollar_notifications_pass() {
        let v = |s: &str| check(Frame::Body(s.as_bytes().to_vec()));
        let Verdict::Reply(r) = v(r#"{"jsonrpc":"2.0","id":3,"method":"$/mystery","params":{}}"#)
        else {
            panic!()
        };
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (json!(3), json!(-32601))
        );
        assert!(matches!(
            v(r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}"#),
            Verdict::Forward(_)
        ));
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        let body = br#"{"jsonrpc":"2.0","method":"m","params":{"t":"a\ud800b\udc00c\ud83d\ude00d\\ud800"}}"#;
        let fixed = replace_lone_surrogates(body).expect("changed");
        let v: Value = serde_json::from_slice(&fixed).unwrap();
        assert_eq!(v["params"]["t"], "a\u{FFFD}b\u{FFFD}c😀d\\ud800");
        assert_eq!(
            replace_lone_surrogates(br#"{"t":"\ud83d\ude00 fine"}"#),
            None
        );
        assert!(matches!(check(Frame::Body(body.to_vec())), Verdict::Forward(b) if b == fixed));
    }

    #[test]
    fn unreadable_did_change_becomes_out_of_sync() {
        let body = br#"{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///a.rs","version":2},"contentChanges":5}}"#;
        let Verdict::Forward(out) = check(Frame::Body(body.to_vec())) else {
            panic!()
        };
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["method"], OUT_OF_SYNC);
        assert_eq!(v["params"]["uri"], "file:///a.rs");
    }

    impl Verdict {
        fn is_reply(&self) -> bool {
            matches!(self, Verdict::Reply(_))
        }
    }
}
