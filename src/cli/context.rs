//! `mira context "question"` (what the model would be sent, section by section) and
//! `mira search "…"` (code search).

use mira::agent::knowledge::code_search;
use mira::agent::{Ask, new_turn_id};
use mira::index::search::read_lines;

use std::process::ExitCode;

use tokio::runtime::Runtime;

use super::agent::{build_agent, memory_service, print_sections};
use super::open;
use super::{CliError, CliResult};

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

pub fn context(rt: &Runtime, question: Vec<String>, json: bool) -> CliResult {
    let question = question.join(" ");
    if question.trim().is_empty() {
        return Err(CliError::usage(
            "no question; usage: mira context \"why does the parser drop comments?\"",
        ));
    }
    {
        let cx = open(None)?;
        let agent = build_agent(&cx)?;
        let project = cx.project_info();
        let ask = Ask {
            turn: new_turn_id(),
            question,
            project,
            editor: None,
            effort: None,
            source: "cli",
        };
        let (req, sections) = rt
            .block_on(agent.preview(&ask))
            .map_err(CliError::failure)?;
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
                serde_json::to_string_pretty(&out).map_err(|e| CliError::failure(e.to_string()))?
            );
        } else {
            // The sections go to stderr in `mira ask --show-context`; here they are the output.
            print_sections(&sections);
            if let Some(w) = window {
                eprintln!("── the model's window: {}", w.describe());
            }
        }
        Ok(ExitCode::SUCCESS)
    }
}

pub fn search(rt: &Runtime, query: Vec<String>, json: bool, limit: usize) -> CliResult {
    let query = query.join(" ");
    if query.trim().is_empty() {
        return Err(CliError::usage(
            "nothing to search for; usage: mira search \"retry with backoff\"",
        ));
    }
    {
        let cx = open(None)?;
        let memory = memory_service(&cx)?;
        let project = cx.project_info();
        let Some(pid) = project.id else {
            return Err(CliError::failure("the store is unavailable"));
        };
        let found = rt
            .block_on(code_search(&memory, pid, &query, limit.clamp(1, 200)))
            .map_err(CliError::failure)?;
        if let Some(note) = &found.note {
            eprintln!("mira: note: {note}");
        }
        if json {
            println!(
                "{}",
                serde_json::to_string_pretty(&found.hits)
                    .map_err(|e| CliError::failure(e.to_string()))?
            );
            return Ok(ExitCode::SUCCESS);
        }
        if found.hits.is_empty() {
            eprintln!(
                "No code matches `{query}`. If the project was never indexed, run `mira index`."
            );
            return Ok(ExitCode::SUCCESS);
        }
        for h in &found.hits {
            let code = read_lines(&project.root.join(&h.path), h.start_line, h.end_line, 12);
            println!("{}", h.render(code.as_deref()));
        }
        Ok(ExitCode::SUCCESS)
    }
}
