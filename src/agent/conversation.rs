//! The one global conversation in SQLite: turns, their messages and tool calls, summaries,
//! artifacts. Functions take a connection or transaction so any caller (LSP worker, CLI,
//! tests) decides where they run; all of them block.
//!
//! Several `mira` processes share this. Every turn reads the latest rows when it starts, and
//! history only includes finished turns (plus the caller's own), so a turn running in another
//! editor never leaks half a tool loop into this one's context.

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::llm::{Effort, Item, ProviderKind, Reasoning, ToolCall, ToolResult, Usage};

use super::tokens;

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TurnStatus {
    Running,
    Completed,
    Failed,
    Cancelled,
    /// Stopped by a per-turn limit (iterations, tool calls, cost cap).
    Limited,
}

impl TurnStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TurnStatus::Running => "running",
            TurnStatus::Completed => "completed",
            TurnStatus::Failed => "failed",
            TurnStatus::Cancelled => "cancelled",
            TurnStatus::Limited => "limited",
        }
    }

    fn parse(s: &str) -> TurnStatus {
        match s {
            "completed" => TurnStatus::Completed,
            "failed" => TurnStatus::Failed,
            "cancelled" => TurnStatus::Cancelled,
            "limited" => TurnStatus::Limited,
            _ => TurnStatus::Running,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageKind {
    User,
    Assistant,
    Reasoning,
    ToolCall,
    ToolResult,
}

impl MessageKind {
    fn as_str(self) -> &'static str {
        match self {
            MessageKind::User => "user",
            MessageKind::Assistant => "assistant",
            MessageKind::Reasoning => "reasoning",
            MessageKind::ToolCall => "tool_call",
            MessageKind::ToolResult => "tool_result",
        }
    }

    fn parse(s: &str) -> Option<MessageKind> {
        Some(match s {
            "user" => MessageKind::User,
            "assistant" => MessageKind::Assistant,
            "reasoning" => MessageKind::Reasoning,
            "tool_call" => MessageKind::ToolCall,
            "tool_result" => MessageKind::ToolResult,
            _ => return None,
        })
    }
}

pub struct NewTurn<'a> {
    pub public_id: &'a str,
    pub project_id: Option<i64>,
    pub source: &'a str,
    pub provider: ProviderKind,
    pub model: &'a str,
    pub effort: Option<Effort>,
}

pub fn begin_turn(tx: &Transaction, t: &NewTurn) -> rusqlite::Result<i64> {
    tx.execute(
        "INSERT INTO turns (public_id, project_id, source, started_at, provider, model, effort)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            t.public_id,
            t.project_id,
            t.source,
            now_ms(),
            t.provider.as_str(),
            t.model,
            t.effort.map(Effort::as_str)
        ],
    )?;
    Ok(tx.last_insert_rowid())
}

/// Store one conversation item. `partial` marks assistant text cut off by a broken stream.
pub fn append(tx: &Transaction, turn: i64, item: &Item, partial: bool) -> rusqlite::Result<i64> {
    let (kind, content, call_id, tool_name, is_error, provider, opaque_id, opaque) = match item {
        Item::User(t) => (
            MessageKind::User,
            t.as_str(),
            None,
            None,
            false,
            None,
            None,
            None,
        ),
        Item::Assistant(t) => (
            MessageKind::Assistant,
            t.as_str(),
            None,
            None,
            false,
            None,
            None,
            None,
        ),
        Item::Reasoning(r) => (
            MessageKind::Reasoning,
            r.text.as_str(),
            None,
            None,
            false,
            Some(r.provider.as_str()),
            r.id.as_deref(),
            r.opaque.as_deref(),
        ),
        Item::ToolCall(c) => (
            MessageKind::ToolCall,
            c.arguments.as_str(),
            Some(c.id.as_str()),
            Some(c.name.as_str()),
            false,
            None,
            None,
            None,
        ),
        Item::ToolResult(r) => (
            MessageKind::ToolResult,
            r.content.as_str(),
            Some(r.call_id.as_str()),
            None,
            r.is_error,
            None,
            None,
            None,
        ),
    };
    tx.execute(
        "INSERT INTO messages (turn_id, created_at, kind, content, call_id, tool_name, is_error, partial,
                               provider, opaque_id, opaque, tokens)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        params![
            turn,
            now_ms(),
            kind.as_str(),
            content,
            call_id,
            tool_name,
            is_error,
            partial,
            provider,
            opaque_id,
            opaque,
            tokens::count(content) as i64
        ],
    )?;
    Ok(tx.last_insert_rowid())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolOutcome {
    Ok,
    Error,
    Refused,
}

pub struct ToolCallRecord<'a> {
    pub call_id: &'a str,
    pub name: &'a str,
    pub arguments: &'a str,
    pub outcome: ToolOutcome,
    pub summary: &'a str,
    pub output_bytes: usize,
    pub artifact_id: Option<i64>,
    pub duration_ms: u64,
}

pub fn record_tool_call(tx: &Transaction, turn: i64, r: &ToolCallRecord) -> rusqlite::Result<()> {
    let status = match r.outcome {
        ToolOutcome::Ok => "ok",
        ToolOutcome::Error => "error",
        ToolOutcome::Refused => "refused",
    };
    tx.execute(
        "INSERT INTO tool_calls (turn_id, created_at, call_id, name, arguments, status, summary,
                                 output_bytes, artifact_id, duration_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            turn,
            now_ms(),
            r.call_id,
            r.name,
            r.arguments,
            status,
            r.summary,
            r.output_bytes as i64,
            r.artifact_id,
            r.duration_ms as i64
        ],
    )?;
    Ok(())
}

pub struct TurnEnd<'a> {
    pub status: TurnStatus,
    pub error: Option<&'a str>,
    pub usage: Usage,
    pub cost_usd: Option<f64>,
    pub model_calls: u32,
    pub model: &'a str,
}

pub fn finish_turn(tx: &Transaction, turn: i64, e: &TurnEnd) -> rusqlite::Result<()> {
    tx.execute(
        "UPDATE turns SET finished_at = ?2, status = ?3, error = ?4, input_tokens = ?5, cached_tokens = ?6,
                cache_write_tokens = ?7, output_tokens = ?8, reasoning_tokens = ?9, cost_usd = ?10,
                model_calls = ?11, model = ?12
         WHERE id = ?1",
        params![
            turn,
            now_ms(),
            e.status.as_str(),
            e.error,
            e.usage.input_tokens as i64,
            e.usage.cached_input_tokens as i64,
            e.usage.cache_write_tokens as i64,
            e.usage.output_tokens as i64,
            e.usage.reasoning_tokens as i64,
            e.cost_usd,
            e.model_calls,
            e.model
        ],
    )?;
    Ok(())
}

/// Turns left `running` by a process that died (a killed editor) are closed as failed the
/// next time anyone starts a turn, so history says what happened and nothing stays open.
/// The owning process is read from the turn id (see `new_turn_id`); `alive` checks it.
pub fn close_abandoned(tx: &Transaction, alive: &dyn Fn(u32) -> bool) -> rusqlite::Result<usize> {
    let running: Vec<(i64, String)> = tx
        .prepare_cached("SELECT id, public_id FROM turns WHERE status = 'running'")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut closed = 0;
    for (id, public) in running {
        let pid = public
            .split('-')
            .nth(1)
            .and_then(|p| u32::from_str_radix(p, 16).ok());
        if pid.is_some_and(alive) {
            continue;
        }
        closed += tx.execute(
            "UPDATE turns SET status = 'failed', finished_at = ?2,
                    error = 'the Mira process running this turn stopped before it finished'
             WHERE id = ?1 AND status = 'running'",
            params![id, now_ms()],
        )?;
    }
    Ok(closed)
}

/// Whether a process with this id exists (signal 0 checks without sending anything).
pub fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    // SAFETY: kill with signal 0 only checks for existence and permission.
    let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[derive(Clone, Debug, PartialEq)]
pub struct StoredMessage {
    pub id: i64,
    pub turn_id: i64,
    pub kind: MessageKind,
    pub item: Item,
    pub partial: bool,
    pub tokens: usize,
}

fn row_to_message(r: &rusqlite::Row) -> rusqlite::Result<Option<StoredMessage>> {
    let kind: String = r.get("kind")?;
    let Some(kind) = MessageKind::parse(&kind) else {
        return Ok(None);
    };
    let content: String = r.get("content")?;
    let call_id: Option<String> = r.get("call_id")?;
    let item = match kind {
        MessageKind::User => Item::User(content),
        MessageKind::Assistant => Item::Assistant(content),
        MessageKind::Reasoning => {
            let provider: Option<String> = r.get("provider")?;
            let Some(provider) = provider.and_then(|p| p.parse::<ProviderKind>().ok()) else {
                return Ok(None);
            };
            Item::Reasoning(Reasoning {
                provider,
                id: r.get("opaque_id")?,
                text: content,
                opaque: r.get("opaque")?,
            })
        }
        MessageKind::ToolCall => Item::ToolCall(ToolCall {
            id: call_id.unwrap_or_default(),
            name: r.get::<_, Option<String>>("tool_name")?.unwrap_or_default(),
            arguments: content,
        }),
        MessageKind::ToolResult => Item::ToolResult(ToolResult {
            call_id: call_id.unwrap_or_default(),
            content,
            is_error: r.get("is_error")?,
        }),
    };
    Ok(Some(StoredMessage {
        id: r.get("id")?,
        turn_id: r.get("turn_id")?,
        kind,
        item,
        partial: r.get("partial")?,
        tokens: r.get::<_, i64>("tokens")? as usize,
    }))
}

/// The id of the last message covered by a summary (0 when nothing is summarised yet).
pub fn summarised_through(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row(
        "SELECT COALESCE(MAX(last_message_id), 0) FROM summaries",
        [],
        |r| r.get(0),
    )
}

/// The messages after `?1` (the last summarised) of finished turns that got an answer, and of
/// turn `?2`. `NOT INDEXED` keeps SQLite on the rowid range: to spare the sort, it walked
/// `messages_turn` over the whole never-ending conversation instead, every turn.
macro_rules! verbatim_rows {
    () => {
        " FROM messages m NOT INDEXED JOIN turns t ON t.id = m.turn_id
         WHERE m.id > ?1
           AND (t.id = ?2 OR (t.status != 'running' AND EXISTS (
                SELECT 1 FROM messages a WHERE a.turn_id = t.id AND a.kind = 'assistant')))"
    };
}
const VERBATIM: &str = concat!(
    "SELECT m.id, m.turn_id, m.kind, m.content, m.call_id, m.tool_name, m.is_error, m.partial,
            m.provider, m.opaque_id, m.opaque, m.tokens",
    verbatim_rows!(),
    " ORDER BY m.turn_id, m.id"
);

/// The tokens [`verbatim`] would return with no running turn of the caller's, counted
/// without reading a message (at least their sum: rows `verbatim` cannot read count too).
pub fn verbatim_tokens(conn: &Connection) -> rusqlite::Result<usize> {
    let mut stmt = conn.prepare_cached(concat!(
        "SELECT COALESCE(SUM(m.tokens), 0)",
        verbatim_rows!()
    ))?;
    let sum: i64 = stmt.query_row(params![summarised_through(conn)?, -1], |r| r.get(0))?;
    Ok(sum.max(0) as usize)
}

/// Everything said since the last summary, oldest first, grouped by turn: finished turns,
/// plus `current` (the caller's own running turn) when given. A finished turn that got no
/// answer at all (the provider was down, it was cancelled before a word) stays in history
/// but is not sent again: the model would take its question as still waiting for a reply.
pub fn verbatim(conn: &Connection, current: Option<i64>) -> rusqlite::Result<Vec<StoredMessage>> {
    let after = summarised_through(conn)?;
    let mut stmt = conn.prepare_cached(VERBATIM)?;
    let rows = stmt.query_map(params![after, current.unwrap_or(-1)], row_to_message)?;
    let mut out = Vec::new();
    for r in rows {
        if let Some(m) = r? {
            out.push(m);
        }
    }
    Ok(out)
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Summary {
    pub id: i64,
    pub first_message_id: i64,
    pub last_message_id: i64,
    pub content: String,
    pub tokens: usize,
}

/// All summaries, oldest first.
pub fn summaries(conn: &Connection) -> rusqlite::Result<Vec<Summary>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, first_message_id, last_message_id, content, tokens FROM summaries ORDER BY last_message_id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(Summary {
            id: r.get(0)?,
            first_message_id: r.get(1)?,
            last_message_id: r.get(2)?,
            content: r.get(3)?,
            tokens: r.get::<_, i64>(4)? as usize,
        })
    })?;
    rows.collect()
}

/// Record a summary covering `first..=last`. Refuses (returns false) when another process
/// summarised past `first` meanwhile, which keeps the no-gap, no-overlap invariant.
pub fn insert_summary(
    tx: &Transaction,
    first: i64,
    last: i64,
    content: &str,
) -> rusqlite::Result<bool> {
    let through: i64 = tx.query_row(
        "SELECT COALESCE(MAX(last_message_id), 0) FROM summaries",
        [],
        |r| r.get(0),
    )?;
    if through >= first {
        return Ok(false);
    }
    tx.execute(
        "INSERT INTO summaries (created_at, first_message_id, last_message_id, content, tokens)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            now_ms(),
            first,
            last,
            content,
            tokens::count(content) as i64
        ],
    )?;
    Ok(true)
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hit {
    pub from_summary: bool,
    pub id: i64,
    pub text: String,
}

/// FTS5 search over what was said and over summaries, best first. `before` restricts message
/// hits to ids below it (the part of the conversation no longer in context verbatim).
pub fn search(
    conn: &Connection,
    query: &str,
    limit: usize,
    before: Option<i64>,
) -> rusqlite::Result<Vec<Hit>> {
    let Some(q) = fts_query(query) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    let mut stmt = conn.prepare_cached(
        "SELECT s.id, s.content FROM summaries_fts f JOIN summaries s ON s.id = f.rowid
         WHERE summaries_fts MATCH ?1 ORDER BY bm25(summaries_fts) LIMIT ?2",
    )?;
    for r in stmt.query_map(params![q, limit as i64], |r| {
        Ok(Hit {
            from_summary: true,
            id: r.get(0)?,
            text: r.get(1)?,
        })
    })? {
        out.push(r?);
    }
    let mut stmt = conn.prepare_cached(
        // Ranked inside FTS5 first, the rowid bound pushed down to it: joining first read
        // every matching message's text before the sort kept four.
        "SELECT m.id, m.content FROM (
             SELECT rowid AS id, bm25(messages_fts) AS score FROM messages_fts
             WHERE messages_fts MATCH ?1 AND rowid < ?2 ORDER BY score LIMIT ?3
         ) top JOIN messages m ON m.id = top.id ORDER BY top.score",
    )?;
    for r in stmt.query_map(params![q, before.unwrap_or(i64::MAX), limit as i64], |r| {
        Ok(Hit {
            from_summary: false,
            id: r.get(0)?,
            text: r.get(1)?,
        })
    })? {
        out.push(r?);
    }
    out.truncate(limit);
    Ok(out)
}

/// A free-text question as an FTS5 query, the way memory recall builds one (stop words
/// such as "how" and "the" dropped: they matched nearly every message, and scoring them all
/// was most of a turn's own time). Only the question's start is read: a 100 KB paste must
/// not become a 10,000-term query.
fn fts_query(text: &str) -> Option<String> {
    let head: String = text.chars().take(2_000).collect();
    let terms: Vec<String> = crate::text::fts_terms(&head).into_iter().take(24).collect();
    (!terms.is_empty()).then(|| terms.join(" OR "))
}

pub fn store_artifact(
    tx: &Transaction,
    turn: i64,
    label: &str,
    content: &str,
) -> rusqlite::Result<i64> {
    tx.execute(
        "INSERT INTO artifacts (turn_id, created_at, label, content, bytes) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![turn, now_ms(), label, content, content.len() as i64],
    )?;
    Ok(tx.last_insert_rowid())
}

pub fn read_artifact(conn: &Connection, id: i64) -> rusqlite::Result<Option<(String, String)>> {
    conn.query_row(
        "SELECT label, content FROM artifacts WHERE id = ?1",
        [id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .optional()
}

/// One turn as history shows it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnView {
    pub turn: String,
    pub started_at: i64,
    pub status: TurnStatus,
    pub provider: String,
    pub model: String,
    pub effort: Option<String>,
    pub error: Option<String>,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: Option<f64>,
    pub entries: Vec<Entry>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub kind: MessageKind,
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// A tool call as the user reads it ("read notes.txt"): the words shown live.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

/// The newest `limit` turns (optionally those started before the turn `before`), oldest first.
pub fn history(
    conn: &Connection,
    limit: usize,
    before: Option<&str>,
) -> rusqlite::Result<Vec<TurnView>> {
    let before_id: i64 = match before {
        Some(p) => conn
            .query_row("SELECT id FROM turns WHERE public_id = ?1", [p], |r| {
                r.get(0)
            })
            .optional()?
            .unwrap_or(i64::MAX),
        None => i64::MAX,
    };
    let mut stmt = conn.prepare_cached(
        "SELECT id, public_id, started_at, status, provider, model, effort, error, input_tokens,
                cached_tokens, output_tokens, cost_usd
         FROM turns WHERE id < ?1 ORDER BY id DESC LIMIT ?2",
    )?;
    let mut turns: Vec<(i64, TurnView)> = stmt
        .query_map(params![before_id, limit as i64], |r| {
            Ok((
                r.get(0)?,
                TurnView {
                    turn: r.get(1)?,
                    started_at: r.get(2)?,
                    status: TurnStatus::parse(&r.get::<_, String>(3)?),
                    provider: r.get(4)?,
                    model: r.get(5)?,
                    effort: r.get(6)?,
                    error: r.get(7)?,
                    input_tokens: r.get::<_, i64>(8)? as u64,
                    cached_tokens: r.get::<_, i64>(9)? as u64,
                    output_tokens: r.get::<_, i64>(10)? as u64,
                    cost_usd: r.get(11)?,
                    entries: Vec::new(),
                },
            ))
        })?
        .collect::<rusqlite::Result<_>>()?;
    turns.reverse();
    let mut msgs = conn.prepare_cached(
        "SELECT kind, content, tool_name, partial, is_error FROM messages
         WHERE turn_id = ?1 AND kind != 'reasoning' ORDER BY id",
    )?;
    for (id, view) in &mut turns {
        view.entries = msgs
            .query_map([*id], |r| {
                let kind =
                    MessageKind::parse(&r.get::<_, String>(0)?).unwrap_or(MessageKind::Assistant);
                let text: String = r.get(1)?;
                let tool: Option<String> = r.get(2)?;
                let summary = match (kind, &tool) {
                    (MessageKind::ToolCall, Some(name)) => Some(super::tools::summary(name, &text)),
                    _ => None,
                };
                Ok(Entry {
                    kind,
                    text,
                    tool,
                    summary,
                    partial: r.get(3)?,
                    is_error: r.get(4)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
    }
    Ok(turns.into_iter().map(|(_, v)| v).collect())
}

#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageRow {
    pub provider: String,
    pub model: String,
    pub turns: u64,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    /// Turns whose model had no price, so `cost_usd` undercounts.
    pub unpriced_turns: u64,
}

/// Token and cost totals per provider and model for turns started at or after `since_ms`.
pub fn usage(conn: &Connection, since_ms: i64) -> rusqlite::Result<Vec<UsageRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT provider, model, COUNT(*), SUM(input_tokens), SUM(cached_tokens), SUM(output_tokens),
                COALESCE(SUM(cost_usd), 0), SUM(cost_usd IS NULL)
         FROM turns WHERE started_at >= ?1 GROUP BY provider, model ORDER BY 7 DESC",
    )?;
    stmt.query_map([since_ms], |r| {
        Ok(UsageRow {
            provider: r.get(0)?,
            model: r.get(1)?,
            turns: r.get::<_, i64>(2)? as u64,
            input_tokens: r.get::<_, i64>(3)? as u64,
            cached_tokens: r.get::<_, i64>(4)? as u64,
            output_tokens: r.get::<_, i64>(5)? as u64,
            cost_usd: r.get(6)?,
            unpriced_turns: r.get::<_, i64>(7)? as u64,
        })
    })?
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Store, StoreError};

    /// The summarisation check's sum is the history's own: answered turns count, a running
    /// or unanswered one does not.
    #[test]
    fn verbatim_tokens_sum_what_verbatim_reads() {
        let home = tempfile::tempdir().unwrap();
        let store = Store::open(&home.path().join("mira.db")).unwrap();
        let new = |id| NewTurn {
            public_id: id,
            project_id: None,
            source: "test",
            provider: ProviderKind::OpenAi,
            model: "m",
            effort: None,
        };
        let end = TurnEnd {
            status: TurnStatus::Completed,
            error: None,
            usage: Usage::default(),
            cost_usd: None,
            model_calls: 1,
            model: "m",
        };
        store
            .write(|tx| {
                let answered = begin_turn(tx, &new("t-1"))?;
                append(
                    tx,
                    answered,
                    &Item::User("how do retries back off?".into()),
                    false,
                )?;
                append(
                    tx,
                    answered,
                    &Item::Assistant("Twice as long each time.".into()),
                    false,
                )?;
                finish_turn(tx, answered, &end)?;
                let unanswered = begin_turn(tx, &new("t-2"))?;
                append(tx, unanswered, &Item::User("and the cap?".into()), false)?;
                finish_turn(tx, unanswered, &end)?;
                let running = begin_turn(tx, &new("t-3"))?;
                append(
                    tx,
                    running,
                    &Item::User("still typing this one".into()),
                    false,
                )?;
                Ok::<_, StoreError>(())
            })
            .unwrap();
        let (sum, read) = store
            .read(|c| Ok((verbatim_tokens(c)?, verbatim(c, None)?)))
            .unwrap();
        assert_eq!(read.len(), 2);
        assert!(sum > 0);
        assert_eq!(sum, read.iter().map(|m| m.tokens).sum::<usize>());
    }

    /// The history sent each turn is read from the last summary on, whatever the
    /// conversation's length: a rowid range, not a walk of every message ever said.
    #[test]
    fn the_verbatim_history_is_a_range_read_not_a_scan() {
        let home = tempfile::tempdir().unwrap();
        let store = Store::open(&home.path().join("mira.db")).unwrap();
        let plan: Vec<String> = store
            .read(|c| {
                let mut stmt = c.prepare(&format!("EXPLAIN QUERY PLAN {VERBATIM}"))?;
                let rows = stmt.query_map(params![0, -1], |r| r.get::<_, String>(3))?;
                rows.collect::<rusqlite::Result<Vec<_>>>()
            })
            .unwrap();
        assert!(
            plan.iter()
                .any(|p| p.starts_with("SEARCH m USING INTEGER PRIMARY KEY")),
            "{plan:?}"
        );
        assert!(!plan.iter().any(|p| p.starts_with("SCAN m")), "{plan:?}");
    }

    /// Past conversation is ranked inside FTS5 with the `before` bound pushed down to it: the
    /// same order as ranking a join, none at or after the bound, tool output never.
    #[test]
    fn search_ranks_earlier_messages_and_stops_at_the_bound() {
        let home = tempfile::tempdir().unwrap();
        let store = Store::open(&home.path().join("mira.db")).unwrap();
        let said = [
            "the billing retry waits an hour",
            "the billing retry backs off: retry after one hour, then retry after six",
            "the parser reads ropes",
            "billing retry backs off twice as long each time, retry retry",
        ];
        let ids: Vec<i64> = store
            .write(|tx| {
                let turn = begin_turn(
                    tx,
                    &NewTurn {
                        public_id: "t-1",
                        project_id: None,
                        source: "test",
                        provider: ProviderKind::OpenAi,
                        model: "m",
                        effort: None,
                    },
                )?;
                let mut ids = Vec::new();
                for text in said {
                    ids.push(append(tx, turn, &Item::User(text.into()), false)?);
                }
                let result = ToolResult {
                    call_id: "c".into(),
                    content: "retry retry retry billing billing".into(),
                    is_error: false,
                };
                append(tx, turn, &Item::ToolResult(result), false)?;
                Ok::<_, StoreError>(ids)
            })
            .unwrap();
        let found = |before| {
            store
                .read(|c| search(c, "How does the billing retry work?", 4, before))
                .unwrap()
                .into_iter()
                .map(|h| h.id)
                .collect::<Vec<_>>()
        };
        // The order a join ranked by `bm25()` gives (the query before this one).
        let joined = |before: Option<i64>| {
            store
                .read(|c| {
                    let q = fts_query("How does the billing retry work?").unwrap();
                    c.prepare(
                        "SELECT m.id FROM messages_fts f JOIN messages m ON m.id = f.rowid
                         WHERE messages_fts MATCH ?1 AND m.id < ?2
                         ORDER BY bm25(messages_fts) LIMIT 4",
                    )?
                    .query_map(params![q, before.unwrap_or(i64::MAX)], |r| r.get(0))?
                    .collect::<rusqlite::Result<Vec<i64>>>()
                })
                .unwrap()
        };
        let all = found(None);
        assert_eq!(all, joined(None));
        let mut set = all.clone();
        set.sort();
        assert_eq!(set, [ids[0], ids[1], ids[3]]);
        assert_eq!(found(Some(ids[3])), joined(Some(ids[3])));
        assert!(!found(Some(ids[3])).contains(&ids[3]));
        assert_eq!(found(Some(ids[0])), Vec::<i64>::new());
    }

    #[test]
    fn a_question_becomes_its_content_words_and_a_huge_paste_a_short_query() {
        assert_eq!(
            fts_query("How does the billing retry work?").as_deref(),
            Some("\"billing\" OR \"retry\" OR \"work\"")
        );
        assert_eq!(fts_query("how does the"), None);
        let paste = (0..20_000).map(|i| format!("word{i} ")).collect::<String>();
        let q = fts_query(&paste).unwrap();
        assert_eq!(q.matches(" OR ").count(), 23, "{q}");
    }
}
