//! The transcript: a Markdown view of the global conversation at `<data_dir>/conversation.md`,
//! regenerated from SQLite, into which a running turn streams. The LSP adapter carries the
//! text with `workspace/applyEdit`; what the text is, and when a chunk is worth sending, is
//! decided here.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::agent::TurnOutcome;
use crate::agent::TurnStatus;
use crate::agent::conversation::{Entry, MessageKind, TurnView};

pub const FILE_NAME: &str = "conversation.md";

/// How many past turns the regenerated transcript shows (older ones: `mira history`).
pub const SHOWN_TURNS: usize = 30;

pub fn path(data_dir: &Path) -> PathBuf {
    data_dir.join(FILE_NAME)
}

const HEADER: &str = "# Mira — conversation\n\n\
<!-- Regenerated from Mira's database; ask follow-ups with mira.ask. Older turns: `mira history`. -->\n";

/// The whole transcript for `turns` (oldest first).
pub fn render(turns: &[TurnView]) -> String {
    let mut s = String::from(HEADER);
    for t in turns {
        s.push_str(&render_turn(t));
    }
    s
}

fn render_turn(t: &TurnView) -> String {
    let mut s = String::new();
    let mut said = false;
    for e in &t.entries {
        match e.kind {
            MessageKind::User => {
                s.push_str(&question_block(&e.text));
                said = false;
            }
            MessageKind::Assistant => {
                if !said {
                    s.push_str(ANSWER_HEADING);
                    said = true;
                }
                s.push_str(e.text.trim_end());
                s.push_str("\n\n");
            }
            MessageKind::ToolCall => {
                if !said {
                    s.push_str(ANSWER_HEADING);
                    said = true;
                }
                s.push_str(&tool_line(e));
            }
            MessageKind::ToolResult | MessageKind::Reasoning => {}
        }
    }
    s.push_str(&footer_line(
        t.status,
        t.input_tokens,
        t.cached_tokens,
        t.output_tokens,
        t.cost_usd,
        t.error.as_deref(),
    ));
    s
}

const ANSWER_HEADING: &str = "### Mira\n\n";

fn tool_line(e: &Entry) -> String {
    let summary = e
        .summary
        .clone()
        .unwrap_or_else(|| e.tool.clone().unwrap_or_else(|| "tool".into()));
    tool_marker(&summary)
}

/// One tool call, the same line live and regenerated.
fn tool_marker(summary: &str) -> String {
    let one_line: String = summary.replace('\n', " ").chars().take(120).collect();
    format!("> 🔧 {one_line}\n\n")
}

/// What a new turn adds before the answer streams in.
pub fn question_block(question: &str) -> String {
    let quoted: String = question
        .trim()
        .lines()
        .map(|l| format!("> {l}\n"))
        .collect();
    format!("\n---\n\n### You\n\n{quoted}\n")
}

pub fn answer_heading() -> &'static str {
    ANSWER_HEADING
}

/// A tool call as shown while the turn runs.
pub fn live_tool_line(summary: &str) -> String {
    format!("\n\n{}", tool_marker(summary))
}

fn footer_line(
    status: TurnStatus,
    input: u64,
    cached: u64,
    output: u64,
    cost: Option<f64>,
    error: Option<&str>,
) -> String {
    let cost = cost.map(|c| format!(" · ${c:.4}")).unwrap_or_default();
    let usage = if input + output > 0 {
        format!(" · {input} in ({cached} cached), {output} out{cost}")
    } else {
        String::new()
    };
    match (status, error) {
        (TurnStatus::Completed, _) => format!("_completed{usage}_\n"),
        (TurnStatus::Running, _) => "_running…_\n".to_string(),
        (s, Some(e)) => format!(
            "_{}: {}{usage}_\n",
            s.as_str(),
            e.lines().next().unwrap_or(e)
        ),
        (s, None) => format!("_{}{usage}_\n", s.as_str()),
    }
}

/// The closing line of a streamed turn.
pub fn footer(o: &TurnOutcome) -> String {
    format!(
        "\n\n{}",
        footer_line(
            o.status,
            o.usage.input_tokens,
            o.usage.cached_input_tokens,
            o.usage.output_tokens,
            o.cost_usd,
            o.error.as_deref()
        )
    )
}

/// One line for `window/showMessage` (Helix shows it in the status line). `shown`: the
/// answer is already on screen in a document of its own, so no pointer to conversation.md.
pub fn status_message(o: &TurnOutcome, shown: bool) -> String {
    let cost = o.cost_usd.map(|c| format!(", ${c:.4}")).unwrap_or_default();
    let see = if shown {
        ""
    } else {
        " — see conversation.md"
    };
    match o.status {
        TurnStatus::Completed => format!(
            "Mira answered ({} tokens in, {} out{cost}){see}",
            o.usage.input_tokens, o.usage.output_tokens
        ),
        TurnStatus::Cancelled => "Mira: turn cancelled".to_string(),
        // One line: Helix shows only the status line, so a multi-line reason is joined.
        _ => format!(
            "Mira: turn {}: {}",
            o.status.as_str(),
            o.error
                .as_deref()
                .unwrap_or("unknown error")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        ),
    }
}

/// How much of an answer one status line carries.
const SHORT_ANSWER_CHARS: usize = 240;

/// The answer in one status line, for clients that cannot take the transcript's edits.
pub fn short_answer(text: &str) -> String {
    let flat = crate::redact::redact(text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if flat.chars().count() <= SHORT_ANSWER_CHARS {
        return format!("Mira: {flat}");
    }
    let cut: String = flat.chars().take(SHORT_ANSWER_CHARS - 1).collect();
    format!("Mira: {cut}… (the whole answer: conversation.md, or `mira history`)")
}

/// Batches streamed text into chunks worth an `applyEdit`: a paragraph, or whatever arrived
/// in the last `interval`. Fewer, larger edits keep editors responsive (one undo step each).
pub struct Coalescer {
    pending: String,
    last_flush: Instant,
    interval: Duration,
}

impl Coalescer {
    pub fn new(interval: Duration) -> Coalescer {
        Coalescer {
            pending: String::new(),
            last_flush: Instant::now(),
            interval,
        }
    }

    pub fn push(&mut self, text: &str) {
        self.pending.push_str(text);
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// When the next flush is due, if anything is pending.
    pub fn deadline(&self) -> Option<Instant> {
        (!self.pending.is_empty()).then(|| self.last_flush + self.interval)
    }

    /// The chunk to send now, if one is due at `now` (a paragraph ended, or time is up).
    pub fn take_due(&mut self, now: Instant) -> Option<String> {
        if self.pending.is_empty() {
            return None;
        }
        if now >= self.last_flush + self.interval {
            return self.take();
        }
        // Send up to the last complete paragraph; keep the rest for later.
        let cut = self.pending.rfind("\n\n")? + 2;
        self.last_flush = now;
        let rest = self.pending.split_off(cut);
        Some(redacted(std::mem::replace(&mut self.pending, rest)))
    }

    /// Everything pending (end of turn).
    pub fn take(&mut self) -> Option<String> {
        self.last_flush = Instant::now();
        (!self.pending.is_empty()).then(|| redacted(std::mem::take(&mut self.pending)))
    }
}

/// Streamed model text is redacted chunk by chunk before it reaches the transcript file (the
/// stored answer is redacted whole by the turn loop).
fn redacted(chunk: String) -> String {
    match crate::redact::redact(&chunk) {
        std::borrow::Cow::Borrowed(_) => chunk,
        std::borrow::Cow::Owned(o) => o,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_answer_is_one_line_and_a_long_one_is_cut() {
        assert_eq!(
            short_answer("The word\n\nis  PERIWINKLE."),
            "Mira: The word is PERIWINKLE."
        );
        let long = short_answer(&"word ".repeat(200));
        assert!(!long.contains('\n') && long.contains("… (the whole answer"));
        assert!(long.chars().count() < SHORT_ANSWER_CHARS + 80, "{long}");
    }

    #[test]
    fn paragraphs_flush_early_and_the_rest_waits_for_the_interval() {
        let mut c = Coalescer::new(Duration::from_secs(60));
        let now = Instant::now();
        c.push("first para");
        assert_eq!(c.take_due(now), None);
        c.push("graph.\n\nsecond");
        assert_eq!(c.take_due(now).as_deref(), Some("first paragraph.\n\n"));
        assert_eq!(c.take_due(now), None);
        assert_eq!(
            c.take_due(now + Duration::from_secs(61)).as_deref(),
            Some("second")
        );
        assert!(c.is_empty());
    }

    #[test]
    fn a_failed_turn_says_why_in_the_footer() {
        let o = TurnOutcome {
            turn: "t1".into(),
            status: TurnStatus::Failed,
            text: String::new(),
            usage: Default::default(),
            cost_usd: None,
            error: Some("the openai stream broke: closed\nmore".into()),
        };
        assert_eq!(
            footer(&o),
            "\n\n_failed: the openai stream broke: closed_\n"
        );
        assert!(status_message(&o, false).contains("stream broke"));
    }
}
