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

use super::{Base, UpdateKind};
use crate::documents::TextEdit;
use crate::index::extract::extract;
use crate::index::model::FileSymbols;
use crate::index::parse::with_parser;
use crate::index::registry::Lang;
use std::ops::ControlFlow;
use std::sync::Arc;
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

/// The parser's input when a reparse is bounded: the text in chunks, cut short (an empty
/// read, which tree-sitter takes as the end of the input) once the deadline has passed.
///
/// FFI invariant (tree-sitter 0.27 `lexer.c`, `ts_lexer__get_lookahead`): when a chunk
/// ends inside a multi-byte character, the lexer reads again at that character's start
/// and decodes the new chunk *without checking that it is non-empty*; an empty answer
/// there is a NULL dereference (the segfault of issue 20). So every chunk ends on a
/// character boundary, and a read that starts inside the previous chunk (that re-read,
/// or any backtrack) is never the one that is cut.
struct Chunks<'t, E> {
    text: &'t [u8],
    expired: E,
    /// Where the last chunk handed out ends.
    served_to: std::cell::Cell<usize>,
    cut: std::cell::Cell<bool>,
}

impl<'t, E: Fn() -> bool> Chunks<'t, E> {
    fn new(text: &'t [u8], expired: E) -> Self {
        Chunks {
            text,
            expired,
            served_to: std::cell::Cell::new(0),
            cut: std::cell::Cell::new(false),
        }
    }

    fn read(&self, i: usize) -> &'t [u8] {
        let text = self.text;
        if i >= text.len() {
            return &[];
        }
        let fresh = i >= self.served_to.get();
        if fresh && (self.cut.get() || (self.expired)()) {
            self.cut.set(true);
            return &[];
        }
        let end = char_boundary_at_or_after(text, (i + CHUNK).min(text.len()));
        self.served_to.set(self.served_to.get().max(end));
        &text[i..end]
    }

    /// The input was cut: the parse saw a truncated text and its tree is not the text's.
    fn was_cut(&self) -> bool {
        self.cut.get()
    }
}

/// The first UTF-8 character boundary at or after `i` (at most 3 bytes on; the text's end
/// for text that is not UTF-8 there).
fn char_boundary_at_or_after(text: &[u8], mut i: usize) -> usize {
    let limit = (i + 3).min(text.len());
    while i < limit && (text[i] & 0xC0) == 0x80 {
        i += 1;
    }
    i
}

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
    parse_until(lang, text, old, || Instant::now() >= deadline)
}

/// Parses `text` from `old` until `expired` says stop. Two ways to stop: the progress
/// callback runs between parse operations, but lexing one token is one operation (a
/// string opened near the start is lexed to the end of the file in it), so reads after
/// expiry also end the input, and that parse's tree is thrown away.
fn parse_until(lang: Lang, text: &[u8], old: &Tree, expired: impl Fn() -> bool) -> Option<Tree> {
    let chunks = Chunks::new(text, &expired);
    let mut read = |i: usize, _| chunks.read(i);
    let mut in_time = |_: &ParseState| {
        if expired() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    with_parser(lang, |p| {
        let tree = p.parse_with_options(
            &mut read,
            Some(old),
            Some(ParseOptions::new().progress_callback(&mut in_time)),
        );
        if tree.is_none() || chunks.was_cut() {
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

/// A parse to finish off the owner's thread: the text of one version, the tree to parse
/// it from (the last finished one, edited by `since`) and that tree's exact symbols.
pub struct ParseJob {
    pub id: JobId,
    pub version: i32,
    lang: Lang,
    text: Arc<Vec<u8>>,
    tree: Tree,
    exact: Arc<FileSymbols>,
    since: TextEdit,
}

/// A finished background parse: the tree of the job's text and its symbols.
pub struct Parsed {
    pub id: JobId,
    pub version: i32,
    pub(super) tree: Option<Tree>,
    pub(super) symbols: FileSymbols,
    /// How the symbols were made: spliced (and how much was walked) or a full walk.
    pub kind: UpdateKind,
    /// How long the parse took: what a catch-up from this tree is likely to cost too
    /// when the cost is the file's own (error recovery redone wherever the edit is).
    pub(super) parsed_in: Duration,
}

impl ParseJob {
    pub(super) fn new(
        lang: Lang,
        version: i32,
        text: Arc<Vec<u8>>,
        tree: Tree,
        exact: Arc<FileSymbols>,
        since: TextEdit,
    ) -> ParseJob {
        ParseJob {
            id: next_id(),
            version,
            lang,
            text,
            tree,
            exact,
            since,
        }
    }

    /// Parses without a budget and splices the symbols of what changed into the exact ones,
    /// as the owner does when a reparse is in time (a blocking thread's work). Walking the
    /// whole tree instead was most of a keystroke's CPU in a file whose every reparse runs
    /// over the budget (effect's `stream.ts`: 3 ms at best, so each keystroke queued a
    /// parse and a walk of 125k nodes).
    pub fn run(self) -> Parsed {
        let started = Instant::now();
        let tree = with_parser(self.lang, |p| {
            p.parse(self.text.as_slice(), Some(&self.tree))
        });
        let parsed_in = started.elapsed();
        let (symbols, kind) = match &tree {
            Some(new) => {
                let base = Base {
                    lang: self.lang,
                    text: &self.text,
                    tree: &self.tree,
                    symbols: Arc::unwrap_or_clone(self.exact),
                };
                match base.splice(new, &self.since, false) {
                    Ok(spliced) => spliced,
                    // Only a walk allowed to defer comes back unspliced.
                    Err(_) => (extract(self.lang, new, &self.text), UpdateKind::Full),
                }
            }
            None => (FileSymbols::default(), UpdateKind::Full),
        };
        Parsed {
            id: self.id,
            version: self.version,
            tree,
            symbols,
            kind,
            parsed_in,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use tree_sitter::{InputEdit, Point};

    /// Mostly three-byte characters, so 8 KiB chunks would end inside one.
    fn cjk_source(lines: usize) -> String {
        (0..lines)
            .map(|i| format!("// 注释中文字符 {i} 😀 é\nlet v{i} = \"数据结构与算法\";\n"))
            .collect()
    }

    #[test]
    fn every_chunk_ends_on_a_character_boundary() {
        let text = cjk_source(2_000);
        let chunks = Chunks::new(text.as_bytes(), || false);
        let mut i = 0;
        while i < text.len() {
            let c = chunks.read(i);
            assert!(!c.is_empty());
            assert!(
                std::str::from_utf8(c).is_ok(),
                "chunk at {i} splits a character"
            );
            i += c.len();
        }
        assert!(chunks.read(text.len()).is_empty());
    }

    #[test]
    fn a_read_inside_served_text_is_never_cut() {
        let text = cjk_source(2_000);
        let expired = Cell::new(false);
        let chunks = Chunks::new(text.as_bytes(), || expired.get());
        let first = chunks.read(0).len();
        expired.set(true);
        // The lexer's re-read at the start of a character the chunk ended inside, and a
        // backtrack, both land inside what was served.
        assert!(!chunks.read(first - 1).is_empty());
        let again = chunks.read(10).len();
        assert!(again > 0);
        let served = (first - 1 + chunks.read(first - 1).len()).max(10 + again);
        assert!(
            chunks.read(served).is_empty(),
            "a fresh read after expiry is cut"
        );
        assert!(chunks.was_cut());
    }

    /// Issue 20's segfault, made deterministic: a string opened at the top makes the lexer
    /// read the whole text in one token, and expiry lands on every read in turn. Before
    /// chunks ended on character boundaries, one of these runs dereferenced NULL in
    /// `ts_decode_utf8`, taking the whole process down.
    #[test]
    fn expiry_at_any_read_never_crashes_and_never_keeps_a_cut_tree() {
        let body = cjk_source(1_500);
        for lang in Lang::all() {
            let old_text = format!("x\n{body}");
            let new_text = format!("\"\n{body}");
            let mut old = with_parser(lang, |p| {
                p.reset();
                p.parse(old_text.as_bytes(), None)
            })
            .expect("parse");
            old.edit(&InputEdit {
                start_byte: 0,
                old_end_byte: 1,
                new_end_byte: 1,
                start_position: Point::new(0, 0),
                old_end_position: Point::new(0, 1),
                new_end_position: Point::new(0, 1),
            });
            let mut completed = false;
            let fresh = with_parser(lang, |p| {
                p.reset();
                p.parse(new_text.as_bytes(), None)
            })
            .expect("parse");
            for allowed in (0..48).chain((6..24).map(|k| 1 << k)) {
                let calls = Cell::new(0);
                let expired = || {
                    calls.set(calls.get() + 1);
                    calls.get() > allowed
                };
                if let Some(tree) = parse_until(lang, new_text.as_bytes(), &old, expired) {
                    let (got, want) = (tree.root_node(), fresh.root_node());
                    assert_eq!(got.to_sexp(), want.to_sexp(), "{lang:?}");
                    completed = true;
                    break;
                }
            }
            assert!(completed, "{lang:?}: some budget lets the parse finish");
        }
    }
}
