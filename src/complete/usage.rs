//! Completion usage and cost: one row per provider call (`completion_usage`), written off the
//! async runtime and never awaited by a request; summed for `mira usage`.

use rusqlite::Connection;

use crate::store::{Store, now_millis};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Shown,
    Empty,
    Cancelled,
    Error,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Shown => "shown",
            Outcome::Empty => "empty",
            Outcome::Cancelled => "cancelled",
            Outcome::Error => "error",
        }
    }
}

/// One provider call, as recorded.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub provider: String,
    pub model: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: Option<f64>,
    pub outcome: Outcome,
}

/// Record `call` in the background (a lost row is better than a slower keystroke).
pub fn record(store: &Store, call: Call) {
    let store = store.clone();
    tokio::task::spawn_blocking(move || {
        let r = store.write(|tx| insert(tx, &call));
        if let Err(e) = r {
            tracing::warn!("completion usage not recorded: {e}");
        }
    });
}

pub fn insert(conn: &Connection, c: &Call) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO completion_usage
            (at_ms, provider, model, input_tokens, output_tokens, cost_usd, outcome)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        rusqlite::params![
            now_millis(),
            c.provider,
            c.model,
            c.input_tokens as i64,
            c.output_tokens as i64,
            c.cost_usd,
            c.outcome.as_str()
        ],
    )?;
    Ok(())
}

/// Totals per provider and model since `since_ms`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UsageRow {
    pub provider: String,
    pub model: String,
    pub calls: u64,
    pub shown: u64,
    pub cancelled: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
}

pub fn usage(conn: &Connection, since_ms: i64) -> rusqlite::Result<Vec<UsageRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT provider, model, COUNT(*), SUM(outcome = 'shown'), SUM(outcome = 'cancelled'),
                SUM(input_tokens), SUM(output_tokens), COALESCE(SUM(cost_usd), 0)
         FROM completion_usage WHERE at_ms >= ?1 GROUP BY provider, model ORDER BY 3 DESC",
    )?;
    stmt.query_map([since_ms], |r| {
        Ok(UsageRow {
            provider: r.get(0)?,
            model: r.get(1)?,
            calls: r.get::<_, i64>(2)? as u64,
            shown: r.get::<_, i64>(3)? as u64,
            cancelled: r.get::<_, i64>(4)? as u64,
            input_tokens: r.get::<_, i64>(5)? as u64,
            output_tokens: r.get::<_, i64>(6)? as u64,
            cost_usd: r.get(7)?,
        })
    })?
    .collect()
}
