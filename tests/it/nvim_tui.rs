//! Neovim as a user sees it (issue 30): the real TUI at 80×24 in tmux, the plugin set up as its
//! README says. Three questions with `:MiraAsk`: progress shows in the command line while each
//! turn runs, every answer appears once in the transcript split, no "Press ENTER" prompt ever
//! shows (`:MiraStatus` included), and a plain `:qa` quits with status 0.

use crate::support as common;
use crate::support::mock_fim;
use crate::support::mock_llm;

use mock_fim::{FimWire, MockFim};

use mock_fim::Reply;
use mock_llm::{MockLlm, Reply as LlmReply, Turn, Wire};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Straight to stderr, past the test harness's capture: CI's log shows what each Neovim did.
fn say(line: String) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

struct Tmux {
    socket: String,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("run tmux (scripts/install-test-deps installs it)");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "mira"])
    }

    fn keys(&self, keys: &str) {
        self.run(&["send-keys", "-t", "mira", "-l", keys]);
        self.run(&["send-keys", "-t", "mira", "Enter"]);
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
    }
}

/// Polls the screen until `done` holds; every screen seen is checked for a hit-enter prompt.
fn watch(t: &Tmux, what: &str, seen: &mut Vec<String>, done: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let screen = t.screen();
        assert!(
            !screen.contains("Press ENTER"),
            "a hit-enter prompt while waiting for {what}:\n{screen}"
        );
        seen.push(screen.clone());
        if done(&screen) {
            return screen;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(40));
    }
}

/// A running Neovim TUI in tmux, and where its exit status will be written.
struct Tui {
    t: Tmux,
    status: std::path::PathBuf,
}

/// Starts `nvim` at 80×24 on `file` of the sandbox project, with the plugin set up by
/// `setup` (Lua: the argument of `require('mira').setup`) and `env` on top of the sandbox's.
fn start_tui(
    nvim: &Path,
    sandbox: &common::Sandbox,
    env: Vec<(String, String)>,
    setup: &str,
    file: &str,
    n: usize,
) -> Tui {
    let init = sandbox.dir.path().join("init.lua");
    std::fs::write(
        &init,
        format!(
            "vim.opt.runtimepath:append('{}/editors/nvim')\nrequire('mira').setup({setup})\n\
             vim.api.nvim_create_autocmd('FileType', {{ callback = function() \
             vim.bo.omnifunc = 'v:lua.vim.lsp.omnifunc' end }})\n",
            env!("CARGO_MANIFEST_DIR"),
        ),
    )
    .unwrap();
    let mut all: Vec<(String, String)> = sandbox.env();
    all.extend(env);
    all.push(("PATH".into(), std::env::var("PATH").unwrap_or_default()));
    all.push(("TERM".into(), "xterm-256color".into()));
    let exports: String = all
        .iter()
        .map(|(k, v)| format!("export {k}='{v}'\n"))
        .collect();
    let script = sandbox.dir.path().join("nvim.sh");
    // Neovim's exit status, written by the script (tmux may keep a pane alive a while).
    let status = sandbox.dir.path().join("nvim.status");
    std::fs::write(
        &script,
        format!(
            "{exports}cd '{}'\n'{}' -u '{}' -i NONE -n {file}\necho $? > '{}'\n",
            sandbox.project().display(),
            nvim.display(),
            init.display(),
            status.display()
        ),
    )
    .unwrap();
    let t = Tmux {
        socket: format!("mira-tui-{}-{n}", std::process::id()),
    };
    t.run(&[
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        "mira",
        "-x",
        "80",
        "-y",
        "24",
        &format!("bash {}", script.display()),
    ]);
    Tui { t, status }
}

fn session(nvim: &Path, sandbox: &common::Sandbox, mock: &MockLlm, n: usize) {
    std::fs::write(sandbox.project().join("main.py"), "def main():\n    pass\n").unwrap();
    let env = mock
        .env()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let setup = format!("{{ cmd = {{ '{}', 'lsp' }} }}", env!("CARGO_BIN_EXE_mira"));
    let Tui { t, status } = start_tui(nvim, sandbox, env, &setup, "main.py", n);
    let mut seen = Vec::new();
    watch(&t, "Neovim to start", &mut seen, |s| s.contains("def main"));
    std::thread::sleep(Duration::from_millis(500));
    for i in 1..=3 {
        t.keys(&format!(":MiraAsk question number {i}"));
        // The turn is over when its answer is on screen and the command line says so.
        let screen = watch(&t, &format!("answer {i}"), &mut seen, |s| {
            s.contains(&format!("Answer {i} ends."))
                && s.lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .is_some_and(|l| l.starts_with("Mira answered"))
        });
        assert_eq!(
            screen.matches(&format!("Answer {i} begins.")).count(),
            1,
            "answer {i} once on screen:\n{screen}"
        );
    }
    assert!(
        seen.iter().any(|s| s.contains("Mira: answering")),
        "progress was never visible"
    );
    t.keys(":MiraStatus");
    watch(&t, "the status line", &mut seen, |s| s.contains("Mira 0."));
    std::thread::sleep(Duration::from_millis(300));
    watch(&t, "no prompt after :MiraStatus", &mut seen, |_| true);
    t.keys(":qa");
    let quit = Instant::now();
    let deadline = quit + Duration::from_secs(20);
    loop {
        if let Ok(code) = std::fs::read_to_string(&status) {
            assert_eq!(code.trim(), "0", "nvim exited with a failure");
            say(format!(
                "{}: :qa quit in {:?}",
                common::nvim::version(nvim),
                quit.elapsed()
            ));
            return;
        }
        if Instant::now() >= deadline {
            let ps = Command::new("ps")
                .args(["-eo", "pid,ppid,stat,etime,args"])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .unwrap_or_default();
            let ours: Vec<&str> = ps
                .lines()
                .filter(|l| l.contains("nvim") || l.contains("mira lsp"))
                .collect();
            panic!(
                "a plain :qa did not quit:\n{}\n{}",
                t.screen(),
                ours.join("\n")
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn three_questions_in_the_tui_show_progress_never_prompt_and_qa_quits() {
    let nvims = common::nvim::binaries();
    assert!(
        !nvims.is_empty(),
        "no Neovim: run scripts/install-test-deps"
    );
    for (n, nvim) in nvims.iter().enumerate() {
        let sandbox = common::Sandbox::new();
        let mock = MockLlm::start_in_background(Wire::Chat);
        for i in 1..=3 {
            mock.push(
                LlmReply::turn(
                    Wire::Chat,
                    &Turn::text(&[
                        &format!("Answer {i} begins."),
                        "\n\nA middle paragraph.",
                        &format!("\n\nAnswer {i} ends."),
                    ]),
                )
                .delayed(Duration::from_millis(600))
                .gap(Duration::from_millis(150)),
            );
        }
        session(nvim, &sandbox, &mock, n);
        say(format!(
            "{}: three answers, no prompt, :qa quit",
            common::nvim::version(nvim)
        ));
    }
}

/// A Neovim on `main.rs` (`compute(` left open on line 2) with a completion provider that
/// always suggests `first_arg, second);`. `extra` goes into the plugin's setup table.
fn completion_session(
    nvim: &Path,
    sandbox: &common::Sandbox,
    extra: &str,
    n: usize,
) -> (Tui, MockFim) {
    let mock = MockFim::start_in_background(FimWire::Completions);
    for _ in 0..8 {
        mock.push(Reply::text(&["first_arg, ", "second);"]));
    }
    std::fs::write(
        sandbox.project().join("main.rs"),
        "fn main() {\n    let total = compute(\n}\n",
    )
    .unwrap();
    let setup = format!(
        "{{ cmd = {{ '{}', 'lsp' }}, {extra} settings = {{ notifications = true, completion = {{ provider = 'openai-completions', base_url = '{}', debounce_ms = 0, popup = true }} }} }}",
        env!("CARGO_BIN_EXE_mira"),
        mock.base_url()
    );
    let tui = start_tui(nvim, sandbox, Vec::new(), &setup, "main.rs", n);
    let mut seen = Vec::new();
    watch(&tui.t, "Neovim to start", &mut seen, |s| {
        s.contains("fn main")
    });
    std::thread::sleep(Duration::from_millis(800));
    (tui, mock)
}

/// `:w`, then the file must become `want` once the suggestion is in; then `:qa` quits.
fn saved_then_quit(tui: &Tui, sandbox: &common::Sandbox, want: &str, why: &str) {
    tui.t.keys(":w");
    let file = sandbox.project().join("main.rs");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(&file).unwrap();
        if text.contains("first_arg") {
            assert_eq!(text, want, "{why}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never inserted:\n{}",
            tui.t.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    tui.t.keys(":qa");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !tui.status.exists() {
        assert!(Instant::now() < deadline, ":qa did not quit");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Issue 30: ghost text where Neovim has no `vim.lsp.inline_completion` (0.11 and older):
/// typing shows Mira's suggestion after the cursor, `<C-Right>` takes its next word and
/// `<Tab>` the rest, in the real TUI.
#[test]
fn ghost_text_is_drawn_and_accepted_in_the_tui() {
    let nvims = common::nvim::binaries();
    assert!(
        !nvims.is_empty(),
        "no Neovim: run scripts/install-test-deps"
    );
    for (n, nvim) in nvims.iter().enumerate() {
        let sandbox = common::Sandbox::new();
        let (tui, _mock) = completion_session(nvim, &sandbox, "", 100 + n);
        // Append a space after `compute(` on line 2, in insert mode: the suggestion shows
        // (inline after the cursor on 0.10+, at the end of the line before).
        tui.t.run(&["send-keys", "-t", "mira", "2G", "A", " "]);
        watch(&tui.t, "the ghost text", &mut Vec::new(), |s| {
            s.lines()
                .any(|l| l.contains("compute( ") && l.contains("first_arg, second);"))
        });
        tui.t.run(&["send-keys", "-t", "mira", "C-Right"]);
        std::thread::sleep(Duration::from_millis(200));
        tui.t.run(&["send-keys", "-t", "mira", "Tab", "Escape"]);
        saved_then_quit(
            &tui,
            &sandbox,
            "fn main() {\n    let total = compute( first_arg, second);\n}\n",
            "a word, then the rest, inserted once",
        );
        say(format!(
            "{}: ghost text drawn and accepted",
            common::nvim::version(nvim)
        ));
    }
}

/// Issue 30: the popup fallback (`completion.popup`, `<C-x><C-o>` with `vim.lsp.omnifunc`)
/// inserts the whole suggestion, not its first word.
#[test]
fn the_popup_inserts_the_whole_suggestion_in_the_tui() {
    let nvims = common::nvim::binaries();
    assert!(
        !nvims.is_empty(),
        "no Neovim: run scripts/install-test-deps"
    );
    for (n, nvim) in nvims.iter().enumerate() {
        let sandbox = common::Sandbox::new();
        let (tui, _mock) =
            completion_session(nvim, &sandbox, "inline_completion = false,", 200 + n);
        tui.t
            .run(&["send-keys", "-t", "mira", "2G", "A", "C-x", "C-o"]);
        watch(&tui.t, "the suggestion", &mut Vec::new(), |s| {
            s.contains("first_arg")
        });
        std::thread::sleep(Duration::from_millis(300));
        tui.t.run(&["send-keys", "-t", "mira", "C-y", "Escape"]);
        saved_then_quit(
            &tui,
            &sandbox,
            "fn main() {\n    let total = compute(first_arg, second);\n}\n",
            "the whole suggestion, once",
        );
        say(format!(
            "{}: the popup inserted the whole suggestion",
            common::nvim::version(nvim)
        ));
    }
}
