//! Keeping the one conversation bounded: when the verbatim part (everything after the last
//! summary) passes a token budget, its oldest half — whole turns — is summarised by the model
//! into a summary row. Summaries are contiguous, so every message is either verbatim or
//! covered by exactly one summary.

use rusqlite::{Connection, params};
use tokio_util::sync::CancellationToken;

use crate::llm::{Client, Effort, Item, Request};
use crate::store::Store;

use super::conversation::{self, StoredMessage};
use crate::redact::redact;

const INSTRUCTIONS: &str = "\
You summarise part of a long-running conversation between a user and Mira, their coding \
assistant, so it can continue without the full text. Write a compact Markdown summary: the \
user's goals and questions, decisions made and why, facts learned about their code (with file \
paths and symbol names), preferences and corrections the user stated, and anything left open. \
Omit pleasantries. Do not invent anything.";

#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub first: i64,
    pub last: i64,
    pub transcript: String,
}

/// What to summarise, if the verbatim conversation is over `threshold` tokens.
pub fn plan(conn: &Connection, threshold: usize) -> rusqlite::Result<Option<Plan>> {
    // Most turns end under the threshold: a sum says so without reading every message.
    if conversation::verbatim_tokens(conn)? <= threshold {
        return Ok(None);
    }
    let messages = conversation::verbatim(conn, None)?;
    let total: usize = messages.iter().map(|m| m.tokens).sum();
    if total <= threshold || messages.is_empty() {
        return Ok(None);
    }
    // Oldest half, extended to the end of the turn it stops in.
    let mut used = 0;
    let mut cut = messages.len();
    for (i, m) in messages.iter().enumerate() {
        used += m.tokens;
        if used >= total / 2 {
            let turn = m.turn_id;
            cut = messages[i..]
                .iter()
                .position(|n| n.turn_id != turn)
                .map_or(messages.len(), |p| i + p);
            break;
        }
    }
    let chosen = &messages[..cut];
    let Some(last_chosen) = chosen.iter().map(|m| m.id).max() else {
        return Ok(None);
    };
    // A turn still running elsewhere may own ids in the range; stop below its first message so
    // nothing it says later is treated as covered.
    let running_min: Option<i64> = conn.query_row(
        "SELECT MIN(m.id) FROM messages m JOIN turns t ON t.id = m.turn_id
         WHERE t.status = 'running' AND m.id > ?1",
        params![conversation::summarised_through(conn)?],
        |r| r.get(0),
    )?;
    let last = match running_min {
        Some(r) if r <= last_chosen => r - 1,
        _ => last_chosen,
    };
    let first = conversation::summarised_through(conn)? + 1;
    if last < first {
        return Ok(None);
    }
    let transcript = render(chosen.iter().filter(|m| m.id <= last));
    Ok(Some(Plan {
        first,
        last,
        transcript,
    }))
}

fn render<'a>(messages: impl Iterator<Item = &'a StoredMessage>) -> String {
    let mut s = String::new();
    for m in messages {
        match &m.item {
            Item::User(t) => s.push_str(&format!("User: {t}\n\n")),
            Item::Assistant(t) => s.push_str(&format!("Mira: {t}\n\n")),
            Item::ToolCall(c) => s.push_str(&format!("[Mira called {} {}]\n", c.name, c.arguments)),
            Item::ToolResult(r) => {
                let head: String = r.content.chars().take(300).collect();
                s.push_str(&format!(
                    "[result{}: {head}]\n\n",
                    if r.is_error { " (error)" } else { "" }
                ));
            }
            Item::Reasoning(_) => {}
        }
    }
    s
}

/// Summarise if needed. Returns the new summary's coverage, if one was written.
pub async fn maybe_summarise(
    store: &Store,
    client: &Client,
    threshold: usize,
    cancel: &CancellationToken,
) -> Result<Option<(i64, i64)>, String> {
    let s = store.clone();
    let plan = tokio::task::spawn_blocking(move || s.read(|c| plan(c, threshold)))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    let Some(plan) = plan else { return Ok(None) };
    let req = Request {
        system: INSTRUCTIONS.to_string(),
        items: vec![Item::User(format!(
            "Summarise this part of the conversation:\n\n{}",
            plan.transcript
        ))],
        tools: Vec::new(),
        effort: Some(Effort::Low),
    };
    let done = client
        .complete(&req, &mut |_| {}, cancel)
        .await
        .map_err(|f| f.error.to_string())?;
    let text = redact(done.text().trim()).into_owned();
    if text.is_empty() {
        return Err("the model returned an empty summary".into());
    }
    let s = store.clone();
    let (first, last) = (plan.first, plan.last);
    let written = tokio::task::spawn_blocking(move || {
        s.write(|tx| conversation::insert_summary(tx, first, last, &text))
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e: rusqlite::Error| e.to_string())?;
    Ok(written.then_some((first, last)))
}
