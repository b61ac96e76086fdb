//! An LSP client for tests: drives the real server in-process over a duplex pipe, or the real
//! `mira lsp` binary over stdio. Answers the server's own requests (applyEdit, showDocument,
//! workDoneProgress/create, …) like an editor would, and records everything it receives.

pub mod agent;
pub mod code_eval;
pub mod helix;
pub mod http;
pub mod mock_fim;
pub mod mock_llm;
pub mod nvim;
pub mod real_model;

use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

pub const TIMEOUT: Duration = Duration::from_secs(20);

pub fn frame(body: &str) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

/// The `mira` binary run in `cwd` with `env` and nothing of the developer's environment but
/// PATH: no key, config or database of theirs leaks into a test.
pub fn mira<K: AsRef<std::ffi::OsStr>, V: AsRef<std::ffi::OsStr>>(
    env: impl IntoIterator<Item = (K, V)>,
    cwd: &Path,
) -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_mira"));
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(env)
        .current_dir(cwd);
    c
}

/// HOME and MIRA_HOME (`home/mira`) for a test that keeps its own temporary folders.
pub fn home_env(home: &Path) -> Vec<(String, String)> {
    vec![
        ("HOME".into(), home.display().to_string()),
        ("MIRA_HOME".into(), home.join("mira").display().to_string()),
    ]
}

/// The environment of a sandbox laid out at `dir` (home/, mira/, project/), plus a mock's.
pub fn dir_env(dir: &Path, extra: Vec<(&str, String)>) -> Vec<(String, String)> {
    let mut env = vec![
        ("HOME".into(), dir.join("home").display().to_string()),
        (
            "XDG_CONFIG_HOME".into(),
            dir.join("home/.config").display().to_string(),
        ),
        ("MIRA_HOME".into(), dir.join("mira").display().to_string()),
    ];
    env.extend(extra.into_iter().map(|(k, v)| (k.to_string(), v)));
    env
}

/// Splits a fixture in rust-analyzer's style into `(path, text)` pairs: each file starts
/// with a `//- path` line and its text runs to the next one. Lines before the first marker
/// and one level of common indentation are dropped, so fixtures can sit indented in a test.
pub fn parse_fixture(fixture: &str) -> Vec<(String, String)> {
    let indent = fixture
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut files: Vec<(String, String)> = Vec::new();
    // The indentation before the closing quote is no line of the last file.
    let body = fixture.trim_end_matches([' ', '\t']);
    for line in body.lines() {
        let line = line.get(indent..).unwrap_or(line.trim_start());
        if let Some(path) = line.strip_prefix("//- ") {
            files.push((path.trim().to_string(), String::new()));
        } else if let Some((_, text)) = files.last_mut() {
            text.push_str(line);
            text.push('\n');
        }
    }
    files
}

/// A temporary HOME + MIRA_HOME + project directory, removed on drop.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        std::fs::create_dir_all(dir.path().join("project/.git")).unwrap();
        Sandbox { dir }
    }
    /// A sandbox whose project holds the files of `fixture` (see [`parse_fixture`]).
    pub fn with_files(fixture: &str) -> Self {
        let s = Sandbox::new();
        s.write(fixture);
        s
    }
    /// Writes the files of `fixture` into the project, creating their folders.
    pub fn write(&self, fixture: &str) {
        for (path, text) in parse_fixture(fixture) {
            let file = self.project().join(&path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, text).unwrap();
        }
    }
    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }
    pub fn mira_home(&self) -> PathBuf {
        self.dir.path().join("mira")
    }
    pub fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }
    pub fn db(&self) -> PathBuf {
        self.mira_home().join("mira.db")
    }
    /// The environment a server or CLI process gets: isolated from the developer's own.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            ("HOME".into(), self.home().display().to_string()),
            ("MIRA_HOME".into(), self.mira_home().display().to_string()),
            (
                "XDG_CONFIG_HOME".into(),
                self.home().join(".config").display().to_string(),
            ),
        ]
    }
    /// `mira` run in the project with this sandbox's environment.
    pub fn mira(&self) -> std::process::Command {
        mira(self.env(), &self.project())
    }
    pub fn project_uri(&self) -> String {
        format!("file://{}", self.project().display())
    }
    pub fn file_uri(&self, rel: &str) -> String {
        format!("file://{}", self.project().join(rel).display())
    }
}

pub enum Kind {
    InProcess(tokio::task::JoinHandle<mira::lsp::Outcome>),
    Binary(tokio::process::Child),
}

#[derive(Default)]
struct Inbox {
    responses: HashMap<i64, Value>,
    /// When each response's last byte was read, before the client parsed it (the benches
    /// time the server and the pipe apart from this client's JSON parsing).
    arrived: HashMap<i64, Instant>,
    notifications: Vec<Value>,
    server_requests: Vec<Value>,
    /// Responses with `id: null` (errors for malformed input).
    null_id: Vec<Value>,
    /// Answer `window/showDocument` with `success: false`, as VS Code's extension does for
    /// the transcript while its chat view shows the turns.
    declines_show_document: bool,
}

pub struct TestServer {
    writer: Box<dyn AsyncWrite + Unpin + Send>,
    inbox: Arc<Mutex<Inbox>>,
    wake: mpsc::UnboundedReceiver<()>,
    next_id: i64,
    /// Our answers to the server's requests, written from the test's task.
    replies: Option<mpsc::UnboundedReceiver<Vec<u8>>>,
    pub kind: Kind,
}

impl TestServer {
    pub fn in_process(sandbox: &Sandbox) -> Self {
        Self::in_process_with_env(sandbox.env(), sandbox.project())
    }

    pub fn in_process_with_env(env: Vec<(String, String)>, cwd: PathBuf) -> Self {
        let (client_out, server_in) = tokio::io::duplex(1 << 22);
        let (server_out, client_in) = tokio::io::duplex(1 << 22);
        let options = mira::lsp::ServeOptions {
            env: mira::config::Env::from_pairs(env.iter().map(|(k, v)| (k.as_str(), v.as_str()))),
            cwd,
        };
        let handle = tokio::spawn(mira::lsp::serve(server_in, server_out, options));
        Self::start(Box::new(client_out), client_in, Kind::InProcess(handle))
    }

    pub fn binary(sandbox: &Sandbox) -> Self {
        Self::binary_with_env(sandbox.env(), &sandbox.project())
    }

    pub fn binary_with_env(env: Vec<(String, String)>, cwd: &Path) -> Self {
        Self::binary_with_stderr(env, cwd, std::process::Stdio::inherit())
    }

    /// The binary with its stderr sent where the test says (a file, to keep a noisy run
    /// out of CI's log).
    pub fn binary_with_stderr(
        env: Vec<(String, String)>,
        cwd: &Path,
        stderr: std::process::Stdio,
    ) -> Self {
        Self::binary_wrapped(&[], env, cwd, stderr)
    }

    /// The binary run by `wrapper` (`valgrind …`) when it names one.
    pub fn binary_wrapped(
        wrapper: &[String],
        env: Vec<(String, String)>,
        cwd: &Path,
        stderr: std::process::Stdio,
    ) -> Self {
        let bin = env!("CARGO_BIN_EXE_mira");
        let (program, pre) = match wrapper.split_first() {
            Some((p, rest)) => (p.as_str(), [rest, &[bin.to_string()]].concat()),
            None => (bin, Vec::new()),
        };
        let mut child = tokio::process::Command::new(program)
            .args(pre)
            .arg("lsp")
            .env_clear()
            .envs(env)
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .current_dir(cwd)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(stderr)
            .kill_on_drop(true)
            .spawn()
            .expect("spawn mira lsp");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        Self::start(Box::new(stdin), stdout, Kind::Binary(child))
    }

    fn start<R: AsyncRead + Unpin + Send + 'static>(
        writer: Box<dyn AsyncWrite + Unpin + Send>,
        reader: R,
        kind: Kind,
    ) -> Self {
        let inbox = Arc::new(Mutex::new(Inbox::default()));
        let (wake_tx, wake) = mpsc::unbounded_channel();
        let (reply_tx, reply_rx) = mpsc::unbounded_channel::<Vec<u8>>();
        tokio::spawn(read_loop(reader, inbox.clone(), wake_tx, reply_tx));
        TestServer {
            writer,
            inbox,
            wake,
            next_id: 1,
            replies: Some(reply_rx),
            kind,
        }
    }

    pub async fn send_raw(&mut self, bytes: &[u8]) {
        self.flush_replies().await;
        self.writer.write_all(bytes).await.expect("write to server");
        self.writer.flush().await.unwrap();
    }

    pub async fn send(&mut self, msg: Value) {
        self.send_raw(&frame(&msg.to_string())).await;
    }

    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    /// Send a request and return its id without waiting.
    pub async fn request_start(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    /// Wait for the response to `id`: Ok(result) or Err(error object).
    pub async fn response(&mut self, id: i64) -> Result<Value, Value> {
        let msg = self
            .wait_for(|inbox| inbox.responses.remove(&id))
            .await
            .unwrap_or_else(|| panic!("no response to request {id} within {TIMEOUT:?}"));
        into_result(msg)
    }

    /// When the last byte of the response to `id` was read (after [`TestServer::response`]
    /// returned it; `None` for an id never answered).
    #[allow(dead_code)] // only `benches/lsp_core.rs` times responses; the tests wait for them
    pub fn arrived(&self, id: i64) -> Option<Instant> {
        self.inbox.lock().unwrap().arrived.get(&id).copied()
    }

    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.request_start(method, params).await;
        self.response(id).await
    }

    pub async fn initialize(&mut self, params: Value) -> Value {
        let result = self
            .request("initialize", params)
            .await
            .expect("initialize succeeds");
        self.notify("initialized", json!({})).await;
        result
    }

    /// initialize with the usual capabilities, the sandbox project as workspace root.
    pub async fn initialize_default(&mut self, sandbox: &Sandbox, encodings: &[&str]) -> Value {
        self.initialize(json!({
            "processId": null,
            "rootUri": sandbox.project_uri(),
            "workspaceFolders": [{"uri": sandbox.project_uri(), "name": "project"}],
            "capabilities": {"general": {"positionEncodings": encodings}},
            "clientInfo": {"name": "mira-tests"}
        }))
        .await
    }

    /// Wait for a notification with this method (consumed).
    pub async fn notification(&mut self, method: &str) -> Value {
        let m = method.to_string();
        self.wait_for(move |inbox| {
            let i = inbox.notifications.iter().position(|n| n["method"] == m)?;
            Some(inbox.notifications.remove(i))
        })
        .await
        .unwrap_or_else(|| panic!("no {method} notification within {TIMEOUT:?}"))
    }

    /// Wait for a `window/showMessage` whose text contains `text` (consumed).
    pub async fn message_containing(&mut self, text: &str) -> Value {
        let t = text.to_string();
        self.wait_for(move |inbox| {
            let i = inbox.notifications.iter().position(|n| {
                n["method"] == "window/showMessage"
                    && n["params"]["message"]
                        .as_str()
                        .is_some_and(|m| m.contains(&t))
            })?;
            Some(inbox.notifications.remove(i))
        })
        .await
        .unwrap_or_else(|| panic!("no message containing {text:?} within {TIMEOUT:?}"))
    }

    pub fn notifications(&self) -> Vec<Value> {
        self.inbox.lock().unwrap().notifications.clone()
    }

    /// From now on, `window/showDocument` is declined (`success: false`).
    pub fn decline_show_document(&self) {
        self.inbox.lock().unwrap().declines_show_document = true;
    }

    pub fn server_requests(&self) -> Vec<Value> {
        self.inbox.lock().unwrap().server_requests.clone()
    }

    /// Wait for an error response with a null id (the reply to a malformed message).
    pub async fn null_id_error(&mut self) -> Value {
        self.wait_for(|inbox| (!inbox.null_id.is_empty()).then(|| inbox.null_id.remove(0)))
            .await
            .expect("an error response with id null")
    }

    /// Wait up to `within` for a notification with this method (consumed): for answers
    /// that take as long as a real model does on a busy machine.
    pub async fn notification_within(&mut self, method: &str, within: Duration) -> Value {
        let m = method.to_string();
        self.wait_for_within(within, move |inbox| {
            let i = inbox.notifications.iter().position(|n| n["method"] == m)?;
            Some(inbox.notifications.remove(i))
        })
        .await
        .unwrap_or_else(|| panic!("no {method} notification within {within:?}"))
    }

    async fn wait_for<T>(&mut self, f: impl FnMut(&mut Inbox) -> Option<T>) -> Option<T> {
        self.wait_for_within(TIMEOUT, f).await
    }

    async fn wait_for_within<T>(
        &mut self,
        within: Duration,
        mut f: impl FnMut(&mut Inbox) -> Option<T>,
    ) -> Option<T> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            self.flush_replies().await;
            if let Some(v) = f(&mut self.inbox.lock().unwrap()) {
                return Some(v);
            }
            match tokio::time::timeout_at(deadline, self.wake.recv()).await {
                Ok(Some(())) => continue,
                _ => return f(&mut self.inbox.lock().unwrap()),
            }
        }
    }

    async fn flush_replies(&mut self) {
        if let Some(rx) = self.replies.as_mut() {
            let mut out = Vec::new();
            while let Ok(r) = rx.try_recv() {
                out.push(r);
            }
            for r in out {
                let _ = self.writer.write_all(&r).await;
            }
            let _ = self.writer.flush().await;
        }
    }

    /// Open a document and return its uri.
    pub async fn open(&mut self, uri: &str, language: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language, "version": 0, "text": text}}),
        )
        .await;
    }

    pub async fn document_state(&mut self, uri: &str) -> (i64, String) {
        let r = self
            .request("mira/documentState", json!({"uri": uri}))
            .await
            .expect("documentState");
        (
            r["version"].as_i64().unwrap(),
            r["text"].as_str().unwrap().to_string(),
        )
    }

    /// shutdown + exit; returns the process exit code (binary) or the outcome's code.
    pub async fn shutdown(mut self) -> i32 {
        self.request("shutdown", Value::Null)
            .await
            .expect("shutdown");
        self.notify("exit", Value::Null).await;
        self.wait_exit().await
    }

    pub async fn wait_exit(self) -> i32 {
        match self.kind {
            Kind::InProcess(h) => tokio::time::timeout(TIMEOUT, h)
                .await
                .expect("server stops")
                .unwrap()
                .exit_code(),
            Kind::Binary(mut c) => tokio::time::timeout(TIMEOUT, c.wait())
                .await
                .expect("process exits")
                .unwrap()
                .code()
                .unwrap_or(-1),
        }
    }

    /// The server process's id (binary servers only).
    pub fn pid(&self) -> Option<u32> {
        match &self.kind {
            Kind::Binary(c) => c.id(),
            Kind::InProcess(_) => None,
        }
    }

    /// How the server process ended, once it has (binary servers only; never blocks).
    pub fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        match &mut self.kind {
            Kind::Binary(c) => c.try_wait().ok().flatten(),
            Kind::InProcess(_) => None,
        }
    }

    /// Like `send_raw`, but a server that is gone is an answer, not a panic.
    pub async fn try_send_raw(&mut self, bytes: &[u8]) -> bool {
        self.flush_replies().await;
        self.writer.write_all(bytes).await.is_ok() && self.writer.flush().await.is_ok()
    }

    /// The response to `id` if it comes within `within`.
    pub async fn response_within(
        &mut self,
        id: i64,
        within: Duration,
    ) -> Option<Result<Value, Value>> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            self.flush_replies().await;
            if let Some(msg) = self.inbox.lock().unwrap().responses.remove(&id) {
                return Some(into_result(msg));
            }
            match tokio::time::timeout_at(deadline, self.wake.recv()).await {
                Ok(Some(())) => continue,
                _ => return None,
            }
        }
    }

    /// Close the client's end of the pipe, as a crashed editor would.
    pub async fn close_input(mut self) -> i32 {
        let _ = self.writer.shutdown().await;
        drop(std::mem::replace(
            &mut self.writer,
            Box::new(tokio::io::sink()),
        ));
        self.wait_exit().await
    }
}

/// A response's result or error, moved out (a large outline is not copied).
fn into_result(msg: Value) -> Result<Value, Value> {
    let Value::Object(mut m) = msg else {
        return Ok(Value::Null);
    };
    match m.remove("error") {
        Some(e) => Err(e),
        None => Ok(m.remove("result").unwrap_or(Value::Null)),
    }
}

async fn read_loop<R: AsyncRead + Unpin>(
    reader: R,
    inbox: Arc<Mutex<Inbox>>,
    wake: mpsc::UnboundedSender<()>,
    replies: mpsc::UnboundedSender<Vec<u8>>,
) {
    let mut frames = mira::lsp::transport::FrameReader::new(reader);
    while let Ok(Some(next)) = frames.next().await {
        let arrived = Instant::now();
        let mira::lsp::transport::Frame::Body(body) = next else {
            panic!("server wrote a malformed frame: {next:?}");
        };
        let msg: Value = serde_json::from_slice(&body).expect("server wrote valid JSON");
        {
            let mut inbox = inbox.lock().unwrap();
            match (msg.get("method"), msg.get("id")) {
                (Some(method), Some(id)) => {
                    let result = match method.as_str().unwrap_or("") {
                        "workspace/applyEdit" => json!({"applied": true}),
                        "window/showDocument" => {
                            json!({"success": !inbox.declines_show_document})
                        }
                        "workspace/configuration" => json!([]),
                        _ => Value::Null,
                    };
                    let reply = json!({"jsonrpc": "2.0", "id": id, "result": result});
                    let _ = replies.send(frame(&reply.to_string()));
                    inbox.server_requests.push(msg);
                }
                (Some(_), None) => inbox.notifications.push(msg),
                (None, Some(Value::Number(id))) => {
                    let id = id.as_i64().unwrap();
                    inbox.arrived.insert(id, arrived);
                    inbox.responses.insert(id, msg);
                }
                (None, _) => inbox.null_id.push(msg),
            }
        }
        let _ = wake.send(());
    }
}

#[test]
fn a_fixture_splits_into_files_and_drops_its_indentation() {
    let files = parse_fixture(
        r#"
        //- src/a.rs
        fn a() {
            1
        }
        //- b.py
        def b(): pass
        "#,
    );
    assert_eq!(
        files,
        [
            ("src/a.rs".to_string(), "fn a() {\n    1\n}\n".to_string()),
            ("b.py".to_string(), "def b(): pass\n".to_string()),
        ]
    );
}
