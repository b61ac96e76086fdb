//! `mira context "question"` (what the model would be sent, section by section) and
//! `mira search "…"` (code search).

use mira::agent::knowledge::code_search;
use mira::agent::{Ask, new_turn_id};
use mira::index::search::read_lines;
use mira::session;

use super::agent::{build_agent, fail, memory_service, open, print_sections};

fn runtime() -> Result<tokio::runtime::Runtime, (i32, String)> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| (1, format!("cannot start the async runtime: {e}")))
}

#[derive(serde::Serialize)]
struct ContextJson<'a> {
    sections: &'a [mira::agent::context::SectionReport],
    system: &'a str,
    /// The request's messages as the provider-neutral items (history, then the question).
    items: usize,
    total_tokens: usize,
    /// The model's context window Mira fits the request into (`null`: no provider).
    window_tokens: Option<usize>,
}

pub fn context(question: Vec<String>, json: bool) -> i32 {
    let question = question.join(" ");
    if question.trim().is_empty() {
        eprintln!("mira: no question; usage: mira context \"why does the parser drop comments?\"");
        return 2;
    }
    let run = || -> Result<i32, (i32, String)> {
        let cx = open()?;
        let agent = build_agent(&cx)?;
        let project = session::project_info(&cx.store, &cx.project);
        let ask = Ask {
            turn: new_turn_id(),
            question,
            project,
            editor: None,
            effort: None,
            source: "cli",
        };
        let rt = runtime()?;
        let (req, sections) = rt.block_on(agent.preview(&ask)).map_err(|e| (1, e))?;
        let window = rt.block_on(agent.window());
        if json {
            let out = ContextJson {
                sections: &sections,
                system: &req.system,
                items: req.items.len(),
                total_tokens: sections.iter().map(|s| s.tokens).sum(),
                window_tokens: window.map(|w| w.tokens),
            };
            println!(
                "{}",
                serde_json::to_string_pretty(&out).map_err(|e| (1, e.to_string()))?
            );
        } else {
            // The sections go to stderr in `mira ask --show-context`; here they are the output.
            print_sections(&sections);
            if let Some(w) = window {
                eprintln!("── the model's window: {}", w.describe());
            }
        }
        Ok(0)
    };
    run().unwrap_or_else(fail)
}

pub fn search(query: Vec<String>, json: bool, limit: usize) -> i32 {
    let query = query.join(" ");
    if query.trim().is_empty() {
        eprintln!("mira: nothing to search for; usage: mira search \"retry with backoff\"");
        return 2;
    }
    let run = || -> Result<i32, (i32, String)> {
        let cx = open()?;
        let memory = memory_service(&cx)?;
        let project = session::project_info(&cx.store, &cx.project);
        let Some(pid) = project.id else {
            return Err((1, "the store is unavailable".into()));
        };
        let rt = runtime()?;
        let found = rt
            .block_on(code_search(&memory, pid, &query, limit.clamp(1, 200)))
            .map_err(|e| (1, e))?;
        if let Some(note) = &found.note {
            eprintln!("mira: note: {note}");
        }
        if json {
            println!(
                "{}",
                serde_json::to_string_pretty(&found.hits).map_err(|e| (1, e.to_string()))?
            );
            return Ok(0);
        }
        if found.hits.is_empty() {
            eprintln!(
                "No code matches `{query}`. If the project was never indexed, run `mira index`."
            );
            return Ok(0);
        }
        for h in &found.hits {
            let code = read_lines(&project.root.join(&h.path), h.start_line, h.end_line, 12);
            println!("{}", h.render(code.as_deref()));
        }
        Ok(0)
    };
    run().unwrap_or_else(fail)
}
