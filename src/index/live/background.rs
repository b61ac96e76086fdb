//! Parses the owner cannot wait for.
//!
//! A keystroke's incremental reparse is usually well under a millisecond, but one that
//! changes how the rest of the file lexes (a Python `"""` opening a string that swallows
//! every docstring after it) re-parses the whole file with error recovery: 50–120 ms on a
//! 7,500-line file. The owner bounds each reparse by a budget (tree-sitter's progress
//! callback); when the budget runs out it keeps the document's old tree, edited, and its
//! symbols shifted, and hands a [`ParseJob`] — a snapshot of the text and of that tree —
//! to a thread of its own. The finished [`Parsed`] comes back through the owner's ordered
//! channel and [`super::OpenDoc::install`] catches it up with the edits made meanwhile.

use crate::index::extract::extract;
use crate::index::model::FileSymbols;
use crate::index::parse::with_parser;
use crate::index::registry::Lang;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tree_sitter::{ParseOptions, ParseState, Tree};

/// How long a keystroke's reparse may take before it is finished in the background.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseBudget {
    /// Always wait for the parse (every answer exact; the tests' reference).
    Wait,
    Within(Duration),
}

impl ParseBudget {
    /// `index.parse_budget_ms` (default 3: room under the 5 ms keystroke → symbols budget
    /// for the walk); 0 means always wait.
    pub fn from_ms(ms: u64) -> ParseBudget {
        match ms {
            0 => ParseBudget::Wait,
            ms => ParseBudget::Within(Duration::from_millis(ms)),
        }
    }
}

/// Text handed to the parser per read: the lexer asks for more at each chunk's end, which
/// is where a token that runs to the end of the file (an opened string) can be stopped.
const CHUNK: usize = 8 * 1024;

/// Parses `text` from `old` (already edited to match it). `None` when the budget ran out.
pub(super) fn parse_within(
    lang: Lang,
    text: &[u8],
    old: &Tree,
    budget: ParseBudget,
) -> Option<Tree> {
    let ParseBudget::Within(budget) = budget else {
        return with_parser(lang, |p| p.parse(text, Some(old)));
    };
    let deadline = Instant::now() + budget;
    let mut in_time = |_: &ParseState| {
        if Instant::now() < deadline {
            ControlFlow::Continue(())
        } else {
            ControlFlow::Break(())
        }
    };
    // The progress callback runs between parse operations, but lexing one token is one
    // operation: a string opened near the start is lexed to the end of the file in it.
    // Reads past the deadline end the input instead; that parse's tree is thrown away.
    let cut = std::cell::Cell::new(false);
    let mut read = |i: usize, _| -> &[u8] {
        if i >= text.len() || cut.get() {
            return &[];
        }
        if Instant::now() >= deadline {
            cut.set(true);
            return &[];
        }
        &text[i..(i + CHUNK).min(text.len())]
    };
    with_parser(lang, |p| {
        let tree = p.parse_with_options(
            &mut read,
            Some(old),
            Some(ParseOptions::new().progress_callback(&mut in_time)),
        );
        if tree.is_none() || cut.get() {
            // A cancelled parser resumes where it stopped on its next call: this thread's
            // parser serves every document, so start the next one afresh.
            p.reset();
            return None;
        }
        tree
    })
}

/// Identifies a background parse, so a stale result (the document was parsed in time
/// since, closed, or reopened) is recognised and dropped.
pub type JobId = u64;

fn next_id() -> JobId {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A parse to finish off the owner's thread: the text of one version and the tree to
/// parse it from.
pub struct ParseJob {
    pub id: JobId,
    pub version: i32,
    lang: Lang,
    text: Vec<u8>,
    tree: Tree,
}

/// A finished background parse: the tree of the job's text and its symbols.
pub struct Parsed {
    pub id: JobId,
    pub version: i32,
    pub(super) tree: Option<Tree>,
    pub(super) symbols: FileSymbols,
}

impl ParseJob {
    pub(super) fn new(lang: Lang, version: i32, text: Vec<u8>, tree: Tree) -> ParseJob {
        ParseJob {
            id: next_id(),
            version,
            lang,
            text,
            tree,
        }
    }

    /// Parses without a budget and extracts every symbol (a blocking thread's work).
    pub fn run(self) -> Parsed {
        let tree = with_parser(self.lang, |p| p.parse(&self.text, Some(&self.tree)));
        let symbols = tree
            .as_ref()
            .map(|t| extract(self.lang, t, &self.text))
            .unwrap_or_default();
        Parsed {
            id: self.id,
            version: self.version,
            tree,
            symbols,
        }
    }
}
