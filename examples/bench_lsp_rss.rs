//! Peak memory of the real `mira lsp` with a large project indexed (issue 13; budget
//! 150 MB per million lines). Spawns the binary over stdio with a fresh MIRA_HOME,
//! initializes on a project made of the given directories (symlinked into one root, which
//! the crawl follows), polls `mira.status` until the cold index is done, then reads the
//! process's peak RSS (`VmHWM` in /proc/PID/status); then again after a remember and a
//! recall, which load the bundled encoder.
//!
//! bench_lsp_rss --mira PATH DIR...

use mira::index::Lang;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const BUDGET_MB_PER_MILLION_LINES: f64 = 150.0;
const PATIENCE: Duration = Duration::from_secs(600);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let at = args.iter().position(|a| a == "--mira");
    let mira = at
        .and_then(|i| args.get(i + 1))
        // The server starts in the project's folder: a relative path must not depend on it.
        .map(|p| std::fs::canonicalize(p).unwrap_or_else(|e| panic!("--mira {p}: {e}")))
        .unwrap_or_else(|| {
            let me = std::env::current_exe().expect("own path");
            me.parent()
                .and_then(Path::parent)
                .expect("target dir")
                .join("mira")
        });
    let dirs: Vec<PathBuf> = args
        .iter()
        .enumerate()
        .filter(|(i, _)| at.is_none_or(|a| *i != a && *i != a + 1))
        .map(|(_, d)| std::fs::canonicalize(d).expect("project part exists"))
        .collect();
    assert!(
        !dirs.is_empty(),
        "usage: bench_lsp_rss [--mira PATH] DIR..."
    );

    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    for (i, d) in dirs.iter().enumerate() {
        let name = format!("{i}-{}", d.file_name().unwrap().to_string_lossy());
        std::os::unix::fs::symlink(d, project.join(name)).unwrap();
    }
    let lines = count_lines(&project);

    let mut child = Command::new(&mira)
        .arg("lsp")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", tmp.path().join("home"))
        .env("MIRA_HOME", tmp.path().join("mira"))
        .env("XDG_CONFIG_HOME", tmp.path().join("home/.config"))
        .envs(
            // The thread count and allocator settings under test reach the server.
            std::env::vars().filter(|(k, _)| {
                k == "RAYON_NUM_THREADS" || k == "MIRA_ALLOCATOR" || k.starts_with("MIMALLOC_")
            }),
        )
        .current_dir(&project)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", mira.display()));
    let mut stdin = child.stdin.take().unwrap();
    let rx = read_messages(child.stdout.take().unwrap());

    let started = Instant::now();
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": null,
            "rootUri": format!("file://{}", project.display()),
            "capabilities": {"window": {"workDoneProgress": true}},
            "clientInfo": {"name": "bench_lsp_rss"}
        }}),
    );
    wait_for(&rx, &mut stdin, 1);
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
    );
    let mut id = 1;
    let mut symbols_ready = None;
    let index = loop {
        id += 1;
        send(
            &mut stdin,
            &json!({"jsonrpc": "2.0", "id": id, "method": "workspace/executeCommand",
                    "params": {"command": "mira.status", "arguments": []}}),
        );
        let status = wait_for(&rx, &mut stdin, id);
        let index = &status["result"]["index"];
        if index["symbolsReady"] == true && symbols_ready.is_none() {
            symbols_ready = Some(started.elapsed());
        }
        if index["ready"] == true && index["files"].as_u64().unwrap_or(0) > 0 {
            break index.clone();
        }
        assert!(
            started.elapsed() < PATIENCE,
            "the index was not ready after {PATIENCE:?}: {status}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let ready = started.elapsed();
    let (hwm, rss, anon, file) = memory(&child);
    let per_million = hwm / (lines as f64 / 1e6);
    // The pool `mira lsp` builds: RAYON_NUM_THREADS, else the cores up to the cap.
    let threads = mira::index::crawl::parse_threads(
        std::env::var("RAYON_NUM_THREADS").ok().as_deref(),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    );
    println!(
        "\n== mira lsp memory ({} lines in {} files, {} symbols; {threads} index threads; fresh MIRA_HOME) ==",
        lines, index["files"], index["symbols"]
    );
    println!(
        "symbols ready after {:.1} s, cold index ready after {:.1} s (status polled every 200 ms); peak RSS (VmHWM) {hwm:.1} MB, RSS now {rss:.1} MB ({anon:.1} MB heap and stacks, {file:.1} MB mapped files: the binary, SQLite's shared memory) → {per_million:.1} MB per million lines (budget {BUDGET_MB_PER_MILLION_LINES:.0} MB){}",
        symbols_ready.unwrap_or(ready).as_secs_f64(),
        ready.as_secs_f64(),
        if per_million > BUDGET_MB_PER_MILLION_LINES {
            "  OVER BUDGET"
        } else {
            ""
        }
    );
    // A remember and a recall, as an editor's first chat turn does: the bundled encoder loads.
    for (command, args) in [
        (
            "mira.remember",
            json!({"text": "the staging database password rotates every ninety days"}),
        ),
        (
            "mira.recall",
            json!({"query": "how often do the credentials change?"}),
        ),
    ] {
        id += 1;
        send(
            &mut stdin,
            &json!({"jsonrpc": "2.0", "id": id, "method": "workspace/executeCommand",
                    "params": {"command": command, "arguments": [args]}}),
        );
        let answer = wait_for(&rx, &mut stdin, id);
        assert!(answer.get("error").is_none(), "{command}: {answer}");
    }
    let (hwm, rss, ..) = memory(&child);
    let per_million = hwm / (lines as f64 / 1e6);
    println!(
        "after a remember and a recall (the bundled encoder loaded): peak RSS {hwm:.1} MB, RSS now {rss:.1} MB → {per_million:.1} MB per million lines{}",
        if per_million > BUDGET_MB_PER_MILLION_LINES {
            "  OVER BUDGET"
        } else {
            ""
        }
    );
    shutdown(&mut child, stdin, &rx, id + 1);
}

/// Source lines under `root` as the crawl sees them (ignore files honoured, links followed).
fn count_lines(root: &Path) -> u64 {
    ignore::WalkBuilder::new(root)
        .require_git(false)
        .follow_links(true)
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter(|e| Lang::for_path(e.path()).is_some())
        .filter_map(|e| std::fs::read(e.path()).ok())
        .map(|b| mira::index::crawl::count_lines(&b) as u64)
        .sum()
}

/// (peak, current, anonymous, file-backed) resident set in MB.
fn memory(child: &Child) -> (f64, f64, f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    };
    (
        field("VmHWM:"),
        field("VmRSS:"),
        field("RssAnon:"),
        field("RssFile:"),
    )
}

fn send(stdin: &mut ChildStdin, msg: &Value) {
    let body = msg.to_string();
    write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
    stdin.flush().unwrap();
}

/// The response to `id`; the server's own requests (progress tokens) are answered on the way.
fn wait_for(rx: &mpsc::Receiver<Value>, stdin: &mut ChildStdin, id: i64) -> Value {
    loop {
        let msg = rx
            .recv_timeout(PATIENCE)
            .expect("mira lsp stopped answering");
        match (msg.get("id"), msg.get("method")) {
            (Some(req), Some(_)) => {
                send(stdin, &json!({"jsonrpc": "2.0", "id": req, "result": null}))
            }
            (Some(got), None) if got.as_i64() == Some(id) => return msg,
            _ => {}
        }
    }
}

fn read_messages(stdout: impl Read + Send + 'static) -> mpsc::Receiver<Value> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut r = BufReader::new(stdout);
        loop {
            let mut len = 0usize;
            loop {
                let mut line = String::new();
                if r.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some(v) = line.strip_prefix("Content-Length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; len];
            if r.read_exact(&mut body).is_err() {
                return;
            }
            if let Ok(v) = serde_json::from_slice(&body)
                && tx.send(v).is_err()
            {
                return;
            }
        }
    });
    rx
}

fn shutdown(child: &mut Child, mut stdin: ChildStdin, rx: &mpsc::Receiver<Value>, id: i64) {
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": id, "method": "shutdown", "params": null}),
    );
    wait_for(rx, &mut stdin, id);
    send(&mut stdin, &json!({"jsonrpc": "2.0", "method": "exit"}));
    drop(stdin);
    let _ = child.wait();
}
