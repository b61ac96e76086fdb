//! The loopback HTTP/1.1 core the provider mocks share (`mock_llm` for chat, `mock_fim` for
//! completions): bind and accept, read one request, answer a status or stream chunked frames.
//! Each mock keeps only its wire format and its script.

use serde_json::Value;
use std::future::Future;
use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request as the mock saw it.
#[derive(Clone, Debug)]
pub struct Request {
    pub path: String,
    /// Names lower-cased.
    pub headers: Vec<(String, String)>,
    pub raw: String,
    pub body: Value,
    /// When the last byte of the body was read, before the mock parsed anything: what came
    /// before is the client's time, what comes after the server's.
    #[allow(dead_code)] // read by benches/agent.rs
    pub received: std::time::Instant,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Binds 127.0.0.1:0 and serves each connection with `serve` on the current runtime.
/// Frames go out as written, as real servers do (uvicorn, llama.cpp): with Nagle a reused
/// connection's last frame waits for a delayed ACK (~40 ms).
pub async fn listen<F, Fut>(serve: F) -> SocketAddr
where
    F: Fn(TcpStream) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((sock, _)) = listener.accept().await {
            let _ = sock.set_nodelay(true);
            tokio::spawn(serve(sock));
        }
    });
    addr
}

/// Starts a mock on a thread of its own with its own runtime, for tests that block (a
/// spawned `mira` process, a headless editor), benches, or code without tokio.
pub fn in_background<T, Fut>(start: impl FnOnce() -> Fut + Send + 'static) -> T
where
    T: Send + 'static,
    Fut: Future<Output = T>,
{
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            tx.send(start().await).unwrap();
            std::future::pending::<()>().await;
        });
    });
    rx.recv().expect("mock server started")
}

/// Mira asks a loopback server for its window and models (llama.cpp `/props`, Ollama
/// `/api/show`, LM Studio `/api/v0/models/…`, `/v1/models`). A mock, like a hosted API,
/// has neither, and such a probe is no model call: it takes nothing from the script.
pub fn is_probe(path: &str) -> bool {
    path == "/props" || path.contains("/models") || path.starts_with("/api/show")
}

/// The answer to a probe: 404, connection closed.
pub async fn not_found(sock: &mut TcpStream) {
    let _ = sock
        .write_all(b"HTTP/1.1 404 Mock\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
        .await;
}

/// A JSON answer with this status (and `retry-after` when given); the connection closes.
pub async fn status(sock: &mut TcpStream, code: u16, body: &str, retry_after: Option<&str>) {
    let mut head = format!(
        "HTTP/1.1 {code} Mock\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    if let Some(r) = retry_after {
        head.push_str(&format!("retry-after: {r}\r\n"));
    }
    head.push_str("\r\n");
    let _ = sock.write_all(head.as_bytes()).await;
    let _ = sock.write_all(body.as_bytes()).await;
}

/// The head of a 200 answer streamed in chunks.
pub async fn stream_head(
    sock: &mut TcpStream,
    content_type: &str,
    keep_alive: bool,
) -> std::io::Result<()> {
    let connection = if keep_alive { "keep-alive" } else { "close" };
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: {connection}\r\n\r\n"
    );
    sock.write_all(head.as_bytes()).await
}

/// One frame as one chunk, flushed.
pub async fn chunk(sock: &mut TcpStream, frame: &str) -> std::io::Result<()> {
    let chunk = format!("{:x}\r\n{frame}\r\n", frame.len());
    sock.write_all(chunk.as_bytes()).await?;
    sock.flush().await
}

/// The terminating chunk of a streamed answer.
pub async fn end_stream(sock: &mut TcpStream) {
    let _ = sock.write_all(b"0\r\n\r\n").await;
    let _ = sock.flush().await;
}

/// Reads one request: the head, then `content-length` bytes of body (JSON, or Null).
pub async fn read_request(sock: &mut TcpStream) -> Option<Request> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let header_end = loop {
        let n = sock.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).to_string();
    let mut lines = head.split("\r\n");
    let path = lines.next()?.split(' ').nth(1)?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < header_end + len {
        let n = sock.read(&mut tmp).await.ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&tmp[..n]);
    }
    let received = std::time::Instant::now();
    let raw = String::from_utf8_lossy(&buf[header_end..]).to_string();
    let body = serde_json::from_str(&raw).unwrap_or(Value::Null);
    Some(Request {
        path,
        headers,
        raw,
        body,
        received,
    })
}
