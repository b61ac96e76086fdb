//! What the index covers: every workspace folder (and `didChangeWorkspaceFolders`), nested
//! `.gitignore` files in the watcher as in the crawl, symlinked directories followed once
//! (loops end), and files over the size limit listed by `mira.status`.

use crate::support as common;

use common::{Sandbox, TestServer};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const PATIENCE: Duration = Duration::from_secs(20);

fn uri(p: &Path) -> String {
    format!("file://{}", p.display())
}

async fn init(s: &mut TestServer, sandbox: &Sandbox, folders: &[PathBuf]) {
    let folders: Vec<Value> = folders
        .iter()
        .map(|f| json!({"uri": uri(f), "name": f.file_name().unwrap().to_str().unwrap()}))
        .collect();
    s.initialize(json!({
        "processId": null,
        "rootUri": sandbox.project_uri(),
        "workspaceFolders": folders,
        "capabilities": {"general": {"positionEncodings": ["utf-8"]}},
        "clientInfo": {"name": "mira-tests"}
    }))
    .await;
}

/// (name, file path) of each workspace/symbol hit.
async fn symbols(s: &mut TestServer, query: &str) -> Vec<(String, String)> {
    let r = s
        .request("workspace/symbol", json!({"query": query}))
        .await
        .expect("workspace/symbol");
    r.as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["name"].as_str().unwrap().to_string(),
                x["location"]["uri"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

async fn names(s: &mut TestServer, query: &str) -> Vec<String> {
    let mut n: Vec<String> = symbols(s, query).await.into_iter().map(|x| x.0).collect();
    n.sort();
    n
}

async fn eventually(s: &mut TestServer, query: &str, what: &str, want: &[&str]) {
    let start = Instant::now();
    loop {
        let got = names(s, query).await;
        if got == want {
            return;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "{what}: workspace/symbol {query:?} is still {got:?}, want {want:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn status(s: &mut TestServer) -> Value {
    let r = s
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.status", "arguments": []}),
        )
        .await
        .expect("mira.status");
    r["index"].clone()
}

async fn ready(s: &mut TestServer) -> Value {
    let start = Instant::now();
    loop {
        let st = status(s).await;
        if st["ready"] == true {
            return st;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "the index never got ready: {st}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn write(p: &Path, body: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
}

#[tokio::test]
async fn every_workspace_folder_is_indexed_and_folders_come_and_go() {
    let sandbox = Sandbox::new();
    let project = sandbox.project();
    let root = sandbox.dir.path().canonicalize().unwrap();
    let (api, web, docs) = (root.join("api"), root.join("web"), root.join("docs-site"));
    write(&project.join("src/main.rs"), "fn project_main() {}\n");
    write(&api.join("handlers.py"), "def api_handler():\n    pass\n");
    write(&web.join("app.ts"), "export function webEntry() {}\n");
    write(
        &docs.join("build.go"),
        "package docs\nfunc DocsBuild() {}\n",
    );
    // A folder inside the project is covered by the project's own crawl, not twice.
    let mut s = TestServer::in_process(&sandbox);
    init(
        &mut s,
        &sandbox,
        &[
            project.clone(),
            api.clone(),
            project.join("src"),
            web.clone(),
        ],
    )
    .await;
    let st = ready(&mut s).await;
    let folders: Vec<&str> = st["folders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(folders.len(), 3, "{st}");
    eventually(&mut s, "project_main", "the project", &["project_main"]).await;
    eventually(&mut s, "api_handler", "the second folder", &["api_handler"]).await;
    eventually(&mut s, "webEntry", "the third folder", &["webEntry"]).await;
    let hit = symbols(&mut s, "api_handler").await;
    assert_eq!(hit[0].1, uri(&api.join("handlers.py")));
    assert_eq!(
        names(&mut s, "project_main").await.len(),
        1,
        "the nested folder must not index the project's files twice"
    );

    // Another folder's files follow the disk like the project's.
    write(&api.join("models.py"), "class ApiModel:\n    pass\n");
    eventually(
        &mut s,
        "ApiModel",
        "the watcher of the second folder",
        &["ApiModel"],
    )
    .await;

    // Definition across folders: an open file in the project reaches a symbol in `web`.
    let main = uri(&project.join("src/main.rs"));
    let text = "fn project_main() { webEntry(); }\n";
    s.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": main, "languageId": "rust", "version": 1, "text": text}}),
    )
    .await;
    let def = s
        .request(
            "textDocument/definition",
            json!({"textDocument": {"uri": main}, "position": {"line": 0, "character": 22}}),
        )
        .await
        .unwrap();
    let def = if def.is_array() { def[0].clone() } else { def };
    assert_eq!(def["uri"], uri(&web.join("app.ts")), "{def}");

    // Folders come and go.
    s.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {
            "added": [{"uri": uri(&docs), "name": "docs-site"}],
            "removed": [{"uri": uri(&web), "name": "web"}]
        }}),
    )
    .await;
    eventually(&mut s, "DocsBuild", "an added folder", &["DocsBuild"]).await;
    eventually(&mut s, "webEntry", "a removed folder", &[]).await;
    let st = ready(&mut s).await;
    let folders = st["folders"].to_string();
    assert!(
        folders.contains("docs-site") && !folders.contains("web\""),
        "{st}"
    );
    assert_eq!(s.shutdown().await, 0);
}

#[tokio::test]
async fn the_watcher_honours_nested_gitignore_files_like_the_crawl() {
    let sandbox = Sandbox::new();
    let p = sandbox.project();
    write(&p.join(".gitignore"), "*.gen.rs\n");
    write(&p.join("gen/.gitignore"), "*.rs\n!keep.rs\n");
    write(&p.join("gen/before.rs"), "fn ignored_before() {}\n");
    write(&p.join("gen/keep.rs"), "fn kept_before() {}\n");
    write(&p.join("lib.rs"), "fn top_level() {}\n");
    let mut s = TestServer::in_process(&sandbox);
    init(&mut s, &sandbox, std::slice::from_ref(&p)).await;
    ready(&mut s).await;
    eventually(
        &mut s,
        "kept_before",
        "crawl: re-included",
        &["kept_before"],
    )
    .await;
    assert!(names(&mut s, "ignored_before").await.is_empty());

    // The same files written while the server watches.
    write(&p.join("gen/after.rs"), "fn ignored_after() {}\n");
    write(&p.join("gen/sub/deeper.rs"), "fn ignored_deeper() {}\n");
    write(&p.join("src/x.gen.rs"), "fn ignored_generated() {}\n");
    write(&p.join("gen/keep.rs"), "fn kept_after() {}\n");
    write(&p.join("src/real.rs"), "fn watched_marker() {}\n");
    eventually(&mut s, "watched_marker", "marker", &["watched_marker"]).await;
    eventually(&mut s, "kept_after", "a re-included file", &["kept_after"]).await;
    for hidden in ["ignored_after", "ignored_deeper", "ignored_generated"] {
        assert!(
            names(&mut s, hidden).await.is_empty(),
            "{hidden} is ignored by a nested .gitignore yet indexed by the watcher"
        );
    }

    // Changing an ignore file re-applies it to what is already there.
    write(&p.join("gen/.gitignore"), "keep.rs\n");
    eventually(&mut s, "ignored_after", "un-ignored", &["ignored_after"]).await;
    eventually(&mut s, "kept_after", "now ignored", &[]).await;
    assert_eq!(s.shutdown().await, 0);
}

#[cfg(unix)]
#[tokio::test]
async fn symlinked_directories_are_followed_once_and_loops_end() {
    use std::os::unix::fs::symlink;
    let sandbox = Sandbox::new();
    let p = sandbox.project();
    let outside = sandbox.dir.path().join("vendor-src");
    write(&outside.join("lib.rs"), "fn vendored_fn() {}\n");
    write(&p.join("main.rs"), "fn project_fn() {}\n");
    write(&p.join("real/inner.rs"), "fn inner_fn() {}\n");
    symlink(&outside, p.join("vendor")).unwrap();
    symlink(&outside, p.join("vendor-again")).unwrap();
    symlink(&p, p.join("real/loop")).unwrap();
    symlink(p.join("real"), p.join("alias")).unwrap();
    symlink(&outside, outside.join("self")).unwrap();
    symlink(sandbox.dir.path(), outside.join("up")).unwrap();
    let mut s = TestServer::in_process(&sandbox);
    init(&mut s, &sandbox, std::slice::from_ref(&p)).await;
    let st = ready(&mut s).await;
    eventually(
        &mut s,
        "vendored_fn",
        "a linked directory",
        &["vendored_fn"],
    )
    .await;
    eventually(&mut s, "inner_fn", "no alias twice", &["inner_fn"]).await;
    eventually(&mut s, "project_fn", "no loop twice", &["project_fn"]).await;
    assert!(st["files"].as_u64().unwrap() == 3, "{st}");
    assert_eq!(s.shutdown().await, 0);
}

#[tokio::test]
async fn files_over_the_limit_are_listed_by_mira_status() {
    let sandbox = Sandbox::new();
    let p = sandbox.project();
    std::fs::create_dir_all(p.join(".mira")).unwrap();
    std::fs::write(
        p.join(".mira/project.toml"),
        "[index]\nmax_file_bytes = 2000\n",
    )
    .unwrap();
    write(&p.join("small.rs"), "fn small() {}\n");
    write(&p.join("gen/huge.rs"), &"fn big() {}\n".repeat(400));
    let mut s = TestServer::in_process(&sandbox);
    init(&mut s, &sandbox, std::slice::from_ref(&p)).await;
    let st = ready(&mut s).await;
    assert_eq!(st["skipped"], 1, "{st}");
    let f = &st["skippedFiles"][0];
    assert!(f["path"].as_str().unwrap().ends_with("gen/huge.rs"), "{st}");
    assert!(
        f["reason"]
            .as_str()
            .unwrap()
            .contains("index.max_file_bytes"),
        "{st}"
    );
    let mut lines = Vec::new();
    while !lines.iter().any(|l: &String| l.contains("skipped")) && lines.len() < 5 {
        let shown = s.notification("window/showMessage").await;
        lines.push(shown["params"]["message"].as_str().unwrap().to_string());
    }
    let line = lines.last().unwrap();
    assert!(
        line.contains("1 skipped") && line.contains("huge.rs"),
        "{lines:?}"
    );
    assert_eq!(s.shutdown().await, 0);
}
