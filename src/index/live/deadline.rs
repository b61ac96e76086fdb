//! A keystroke's reparse with a deadline the owner can keep.
//!
//! tree-sitter stops a parse from its progress callback, which it calls every 100 parse
//! operations. In error recovery one operation can walk the whole parse stack, so a
//! reparse told to stop at 1 ms was measured stopping at 4–5 ms (sympy's `polytools.py`,
//! a Python docstring's `"""` open): the keystroke that asked for it waited that long.
//! So a bounded reparse runs on a worker thread and the owner waits for it only until
//! the deadline. A parse still running then is the worker's to finish and throw away;
//! the owner answers as for any parse that ran out (shifted symbols, a background job).
//!
//! Two workers, so one finishing a late parse does not hold up the next keystroke's. A
//! request whose deadline passed while it was queued is dropped unparsed.

use super::background::{ParseBudget, parse_within};
use crate::index::registry::Lang;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use tree_sitter::Tree;

const WORKERS: usize = 2;

struct Request {
    lang: Lang,
    text: Arc<Vec<u8>>,
    /// The old tree, edited to match `text` (a copy: tree-sitter trees share their
    /// subtrees by atomic reference counts, so a copy may be parsed from on any thread).
    old: Tree,
    deadline: Instant,
    reply: SyncSender<Option<Tree>>,
}

/// Parses `text` from `old` (already edited to match it) within `budget`. `None` when the
/// budget ran out. [`ParseBudget::Wait`] parses on the caller's thread.
pub(super) fn parse_by(
    lang: Lang,
    text: &Arc<Vec<u8>>,
    old: &Tree,
    budget: ParseBudget,
) -> Option<Tree> {
    let ParseBudget::Within(budget) = budget else {
        return parse_within(lang, text, old, ParseBudget::Wait);
    };
    let deadline = Instant::now() + budget;
    let (reply, answer) = sync_channel(1);
    let request = Request {
        lang,
        text: Arc::clone(text),
        old: old.clone(),
        deadline,
        reply,
    };
    if workers().send(request).is_err() {
        // No worker could be started: parse here, with tree-sitter's own stop.
        return parse_within(lang, text, old, ParseBudget::Within(budget));
    }
    answer
        .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        .ok()
        .flatten()
}

fn workers() -> &'static Sender<Request> {
    static QUEUE: OnceLock<Sender<Request>> = OnceLock::new();
    QUEUE.get_or_init(|| {
        let (tx, rx) = channel::<Request>();
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..WORKERS {
            let rx = Arc::clone(&rx);
            // A worker that cannot start leaves the others; with none, every send fails
            // once `rx` is dropped and `parse_by` parses on the caller's thread.
            let _ = std::thread::Builder::new()
                .name(format!("mira-reparse-{i}"))
                .spawn(move || serve(&rx));
        }
        tx
    })
}

fn serve(queue: &Mutex<Receiver<Request>>) {
    loop {
        let next = match queue.lock() {
            Ok(rx) => rx.recv(),
            Err(poisoned) => poisoned.into_inner().recv(),
        };
        let Ok(r) = next else { return };
        let left = r.deadline.saturating_duration_since(Instant::now());
        if left == Duration::ZERO {
            continue;
        }
        // A panic in a parse is that keystroke's miss, not the worker's end.
        let tree = catch_unwind(AssertUnwindSafe(|| {
            parse_within(r.lang, &r.text, &r.old, ParseBudget::Within(left))
        }))
        .ok()
        .flatten();
        // The owner stopped waiting when the reply fails: nothing to do.
        let _ = r.reply.send(tree);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::parse::with_parser;

    fn python(text: &str) -> Tree {
        with_parser(Lang::for_path("a.py".as_ref()).unwrap(), |p| {
            p.reset();
            p.parse(text, None)
        })
        .unwrap()
    }

    #[test]
    fn a_parse_in_time_comes_back_and_equals_a_parse_on_the_callers_thread() {
        let lang = Lang::for_path("a.py".as_ref()).unwrap();
        let text = "def f(a):\n    return a\n".repeat(50);
        let old = python(&text);
        let text = Arc::new(text.into_bytes());
        let got = parse_by(lang, &text, &old, ParseBudget::from_ms(10_000)).expect("in time");
        assert_eq!(got.root_node().to_sexp(), old.root_node().to_sexp());
    }

    /// The deadline is the caller's, whatever the parser and the workers do: a whole-file
    /// reparse of a text whose every line is in error is given up at 1 ms, also while both
    /// workers are still busy with earlier, long parses (the request waits in the queue).
    #[test]
    fn the_caller_waits_no_longer_than_its_budget() {
        let lang = Lang::for_path("a.py".as_ref()).unwrap();
        let body = "def f(a):\n    \"\"\"doc\"\"\"\n    return [a, (a, {a: a})]\n".repeat(4_000);
        let mut old = python(&body);
        let text = Arc::new(format!("\"\"\"\n{body}").into_bytes());
        old.edit(&tree_sitter::InputEdit {
            start_byte: 0,
            old_end_byte: 0,
            new_end_byte: 4,
            start_position: tree_sitter::Point::new(0, 0),
            old_end_position: tree_sitter::Point::new(0, 0),
            new_end_position: tree_sitter::Point::new(1, 0),
        });
        let busy: Vec<_> = (0..WORKERS)
            .map(|_| {
                let (text, old) = (Arc::clone(&text), old.clone());
                std::thread::spawn(move || {
                    parse_by(lang, &text, &old, ParseBudget::from_ms(10_000))
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(5));
        let mut worst = Duration::ZERO;
        for _ in 0..20 {
            let t = Instant::now();
            let got = parse_by(lang, &text, &old, ParseBudget::from_ms(1));
            worst = worst.max(t.elapsed());
            assert!(got.is_none(), "a whole-file error reparse finished in 1 ms");
        }
        // Generous for a loaded CI machine: what matters is that it is not the parse's
        // own tens of milliseconds.
        assert!(worst < Duration::from_millis(15), "waited {worst:?}");
        for b in busy {
            assert!(b.join().unwrap().is_some(), "a long budget finishes");
        }
    }
}
