//! Secrets never leave the machine, end to end: the real `mira lsp` binary over stdio against
//! the loopback mock provider in each wire format. A `.env` the model asks for (withheld; with
//! `agent.allow_sensitive`, redacted), a secret typed in the question, one found by grep in an
//! ordinary file and one the model asks to remember, plus one stored with `mira remember`: none
//! reaches a request body, mira.db, its WAL, the transcript, the logs or the `mira/delta`
//! notifications — nor does one in the model's own answer.

use crate::support as common;
use crate::support::mock_llm;

use std::path::Path;

use common::{Sandbox, TestServer};
use mock_llm::{MockLlm, Turn, Wire};
use serde_json::json;

const GITLAB: &str = "glpat-Zr8Kq2Vw7Xn4Tb9Lm3Hd";
const NPM: &str = "npm_Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lz9Xc8Vb7N";
const POSTGRES_PW: &str = "Tr0ub4dor-and-3";
const STRIPE: &str = "sk_live_51Hx9QaZk2Lp8Mn4Bv6Cx0Rt";
const QUESTION_KEY: &str = "ghp_Vt7Rk2Mx9Lq4Wn8Pz3Hs6Jd1Fb5Yc0Ga2Ke4";
const HF: &str = "hf_KqPz8Rv2Tm6Wx4Ny9Bc3Ld7Fh1Js5Gk0Qa";
const MEMORY_PW: &str = "correct horse battery staple 42";
const SENDGRID: &str = "SG.Hk3Lm9Qp2Rs7Tv4Wx8Yz1Ab.Cd6Ef0Gh5Ij3Kl9Mn2Op7Qr4St8Uv1Wx6Yz0Ab3";

/// Pieces long enough to be the secret, short enough to catch a partial leak.
fn fragments() -> Vec<&'static str> {
    vec![
        &GITLAB[6..],
        &NPM[4..],
        POSTGRES_PW,
        &STRIPE[8..],
        &QUESTION_KEY[4..],
        &HF[3..],
        "horse battery staple",
        &SENDGRID[3..20],
    ]
}

fn sandbox(allow: bool) -> Sandbox {
    let s = Sandbox::new();
    let p = s.project();
    std::fs::write(
        p.join(".env"),
        format!(
            "GITLAB_TOKEN={GITLAB}\nNPM_TOKEN={NPM}\n\
             DATABASE_URL=postgres://app:{POSTGRES_PW}@db.internal:5432/app\n\
             STRIPE_SECRET_KEY={STRIPE}\nDEBUG=1\n"
        ),
    )
    .unwrap();
    std::fs::create_dir_all(p.join("app")).unwrap();
    std::fs::write(
        p.join("app/settings.py"),
        format!("HF_TOKEN = \"{HF}\"\nMODEL = \"small\"\n"),
    )
    .unwrap();
    let config = s.home().join(".config/mira");
    std::fs::create_dir_all(&config).unwrap();
    let mut toml = "[log]\nlevel = \"debug\"\n".to_string();
    if allow {
        toml.push_str("[agent]\nallow_sensitive = true\n");
    }
    std::fs::write(config.join("config.toml"), toml).unwrap();
    s
}

fn script(mock: &MockLlm) {
    let remember =
        json!({"text": format!("the staging db passphrase: \"{MEMORY_PW}\""), "kind": "fact"});
    mock.push_turn(
        &Turn::text(&["Looking."])
            .call("c1", "read_file", r#"{"path":".env"}"#)
            .call("c2", "grep", r#"{"pattern":"TOKEN"}"#)
            .call("c3", "remember", &remember.to_string()),
    );
    // The model's own output carries a secret too (as if it had seen one).
    let answer = format!("It reads STRIPE_SECRET_KEY={STRIPE} from the environment.");
    mock.push_turn(&Turn::text(&["Done: ", &answer]));
}

async fn run_turn(s: &Sandbox, mock: &MockLlm) {
    let mut env = s.env();
    env.extend(mock.env().into_iter().map(|(k, v)| (k.to_string(), v)));
    let mut server = TestServer::binary_with_env(env, &s.project());
    server
        .initialize(json!({
            "processId": null,
            "rootUri": s.project_uri(),
            "capabilities": {"workspace": {"applyEdit": true, "workspaceEdit": {"documentChanges": true}}},
            "initializationOptions": {"mira": {"notifications": true}}
        }))
        .await;
    let question = format!("why does CI fail? my token is {QUESTION_KEY}, sendgrid {SENDGRID}");
    server
        .request(
            "workspace/executeCommand",
            json!({"command": "mira.ask", "arguments": [{"question": question}]}),
        )
        .await
        .expect("mira.ask answers");
    let finished = server.notification("mira/turnFinished").await;
    assert_eq!(finished["params"]["status"], "completed", "{finished}");
    // The streamed answer reaches the editor as `mira/delta`s: redacted there too.
    let deltas: Vec<String> = server
        .notifications()
        .into_iter()
        .filter(|n| n["method"] == "mira/delta")
        .map(|n| n["params"]["text"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(
        deltas.iter().any(|d| d.contains("[REDACTED:")),
        "the answer's secret was not redacted in a delta: {deltas:?}"
    );
    for d in &deltas {
        for f in fragments() {
            assert!(!d.contains(f), "mira/delta carries `{f}`: {d}");
        }
    }
    assert_eq!(server.shutdown().await, 0);
}

fn remember_from_the_cli(s: &Sandbox) {
    let out = s
        .mira()
        .args([
            "remember",
            &format!("deploy with SENDGRID_API_KEY={SENDGRID}"),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every file under MIRA_HOME: mira.db, its WAL and shm, conversation.md, logs.
fn stored_files(home: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![home.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.display().to_string(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

fn assert_nothing_leaked(wire: Wire, s: &Sandbox, mock: &MockLlm) {
    let requests = mock.requests();
    assert!(requests.len() >= 2, "{wire:?}: {} requests", requests.len());
    for (i, r) in requests.iter().enumerate() {
        for f in fragments() {
            assert!(!r.raw.contains(f), "{wire:?}: request {i} carries `{f}`");
        }
    }
    let files = stored_files(&s.mira_home());
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    for must in ["mira.db", "conversation.md"] {
        assert!(
            names.iter().any(|n| n.ends_with(must)),
            "{wire:?}: no {must} in {names:?}"
        );
    }
    assert!(
        names.iter().any(|n| n.contains("/logs/")),
        "{wire:?}: no log in {names:?}"
    );
    for (name, bytes) in &files {
        for f in fragments() {
            assert!(!contains(bytes, f), "{wire:?}: {name} holds `{f}`");
        }
    }
    let transcript = std::fs::read_to_string(s.mira_home().join("conversation.md")).unwrap();
    assert!(transcript.contains("[REDACTED:"), "{wire:?}: {transcript}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_stay_out_of_requests_the_database_the_transcript_and_logs() {
    for wire in Wire::ALL {
        let s = sandbox(false);
        // Stored while no server runs; the WAL is checked as the server leaves it.
        remember_from_the_cli(&s);
        let mock = MockLlm::start(wire).await;
        script(&mock);
        run_turn(&s, &mock).await;
        assert_nothing_leaked(wire, &s, &mock);
        let after_tools = &mock.requests()[1].raw;
        assert!(
            after_tools.contains("withheld: sensitive file (see .miraignore)"),
            "{wire:?}: .env was not withheld: {after_tools}"
        );
        assert!(
            !after_tools.contains("DEBUG=1"),
            "{wire:?}: withheld means no content at all"
        );
        assert!(
            after_tools.contains("app/settings.py:1") && after_tools.contains("[REDACTED:"),
            "{wire:?}: grep found the line and redacted it: {after_tools}"
        );
        assert!(
            !after_tools.contains("GITLAB_TOKEN"),
            "{wire:?}: grep skips .env"
        );
        assert!(mock.violations().is_empty(), "{:?}", mock.violations());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_allow_sensitive_the_env_file_is_read_but_its_secrets_are_redacted() {
    for wire in Wire::ALL {
        let s = sandbox(true);
        let mock = MockLlm::start(wire).await;
        script(&mock);
        run_turn(&s, &mock).await;
        assert_nothing_leaked(wire, &s, &mock);
        let after_tools = &mock.requests()[1].raw;
        assert!(
            after_tools.contains("DEBUG=1") && after_tools.contains("GITLAB_TOKEN="),
            "{wire:?}: the allowed file was read: {after_tools}"
        );
        assert!(
            !after_tools.contains("withheld: sensitive file"),
            "{wire:?}"
        );
    }
}
