//! A guard between the editor's pipe and tower-lsp-server.
//!
//! tower-lsp-server reads with a `tokio_util` `FramedRead`, which ends the stream after the
//! first decode error — so one malformed frame (bad JSON, a wrong Content-Length) would stop
//! the whole server. The guard frames and checks every message itself: well-formed messages
//! pass through byte for byte, malformed ones get a JSON-RPC error reply (-32700 / -32600) and
//! reading resumes at the next `Content-Length` header.

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tower_lsp_server::jsonrpc::{Request, Response};

/// Larger bodies are refused (and skipped) rather than buffered.
pub const MAX_BODY: usize = 256 * 1024 * 1024;
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
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    pub fn new(inner: R) -> Self {
        FrameReader {
            inner,
            buf: Vec::with_capacity(64 * 1024),
            eof: false,
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
                if len > MAX_BODY {
                    self.skip(len).await?;
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

    async fn skip(&mut self, mut len: usize) -> std::io::Result<()> {
        let n = len.min(self.buf.len());
        self.buf.drain(..n);
        len -= n;
        while len > 0 {
            if !self.fill().await? {
                return Ok(());
            }
            let n = len.min(self.buf.len());
            self.buf.drain(..n);
            len -= n;
        }
        Ok(())
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
            format!("Invalid request: a {n}-byte message exceeds Mira's limit of {MAX_BODY} bytes"),
        ),
        Frame::Body(body) => {
            // Exactly what tower-lsp-server's own decoder accepts; anything else would stop it.
            // Typed first: the common case parses once, without building a Value tree.
            if serde_json::from_slice::<Request>(&body).is_ok()
                || serde_json::from_slice::<Response>(&body).is_ok()
            {
                return Verdict::Forward(body);
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

/// Copy client → server through the checks; replies to bad frames go to `replies`.
pub async fn pump_in<R, W>(input: R, mut server_in: W, replies: mpsc::UnboundedSender<Vec<u8>>)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = FrameReader::new(input);
    while let Ok(Some(frame)) = reader.next().await {
        match check(frame) {
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

/// Copy server → client frame by frame, interleaving the guard's own replies between frames.
pub async fn pump_out<R, W>(
    server_out: R,
    mut output: W,
    mut replies: mpsc::UnboundedReceiver<Vec<u8>>,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = FrameReader::new(server_out);
    let mut replies_open = true;
    loop {
        let bytes = tokio::select! {
            frame = reader.next() => match frame {
                Ok(Some(Frame::Body(body))) => encode(&body),
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

    impl Verdict {
        fn is_reply(&self) -> bool {
            matches!(self, Verdict::Reply(_))
        }
    }
}
