//! Keystroke → symbols where people type: a new function typed character by character at
//! the start, the middle and the end of a file, and inside its largest item. Each keystroke
//! is one didChange as the server applies it (rope edit, incremental reparse, symbols
//! current, published to the table). Prints p50/p99/max per place. Budget p99 ≤ 5 ms.
//!
//! The reparse is bounded as in the server (`BENCH_PARSE_BUDGET_MS`, default 3; 0 always
//! waits): a keystroke whose reparse runs over answers with shifted symbols, and its parse
//! is finished on another thread, installed before the next keystroke once done (that
//! install is timed too, as the owner does it between keystrokes). After the last
//! keystroke the bench waits for the pending parse and checks the symbols equal a full
//! walk of the document's tree.
//!
//! `BENCH_TYPING_TRACE=1` prints every keystroke's time and how it was answered.
//!
//! `BENCH_TYPING_GAP_MS` waits that long before each keystroke (default: none, back to
//! back): with a gap, background parses land between keystrokes, as when a person types.
//!
//! cargo run --release --example bench_typing -- FILE [FILE...]

// The binary's allocator (src/main.rs), so the library is measured as `mira` runs it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use mira::documents::{Document, PositionEncoding, byte_to_position};
use mira::index::Lang;
use mira::index::extract::extract;
use mira::index::live::{OpenDoc, ParseBudget, ParseJob, Parsed, UpdateKind};
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tower_lsp_server::ls_types::Range;

fn snippet(lang: Lang) -> &'static str {
    match lang.name() {
        "python" => "\ndef added_here(a, b):\n    \"\"\"Adds.\"\"\"\n    return a + b\n",
        "rust" => "\n/// Adds.\npub fn added_here(a: u32, b: u32) -> u32 {\n    a + b\n}\n",
        "go" => "\n// Adds.\nfunc addedHere(a int, b int) int {\n\treturn a + b\n}\n",
        _ => "\n/** Adds. */\nfunction addedHere(a, b) {\n  return a + b;\n}\n",
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// Byte offsets where a new top-level item can start: the start of a line after a blank
/// line, at the start, in the middle and at the end of the file.
fn places(text: &str, tree_items: &[(usize, usize)]) -> Vec<(&'static str, usize)> {
    let boundary_near = |target: usize| {
        tree_items
            .iter()
            .map(|&(_, end)| end)
            .min_by_key(|&e| e.abs_diff(target))
            .unwrap_or(target)
    };
    let first_end = tree_items.first().map_or(0, |&(_, e)| e);
    let biggest = tree_items
        .iter()
        .max_by_key(|&&(s, e)| e - s)
        .copied()
        .unwrap_or((0, text.len()));
    // Inside the biggest item: at a line start near its middle.
    let mid = biggest.0 + (biggest.1 - biggest.0) / 2;
    let inside = text[..mid].rfind('\n').map_or(mid, |i| i + 1);
    vec![
        ("start", first_end),
        ("middle", boundary_near(text.len() / 2)),
        ("end", text.len()),
        ("inside the largest item", inside),
    ]
}

fn main() {
    let files: Vec<String> = std::env::args().skip(1).collect();
    // SAFETY: first thing in main, before any thread, tree or connection.
    let on_mimalloc = unsafe { mira::c_alloc::install_unless_system() };
    let c_alloc = if on_mimalloc { "mimalloc" } else { "glibc" };
    println!("C libraries' allocator: {c_alloc}");
    assert!(!files.is_empty(), "usage: bench_typing FILE [FILE...]");
    let budget_ms = std::env::var("BENCH_PARSE_BUDGET_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    println!("parse budget: {budget_ms} ms (0 = always wait)");
    for f in files {
        bench(Path::new(&f), ParseBudget::from_ms(budget_ms));
    }
}

/// The owner's side of background parsing, as the server has it: one `mira-parse` thread at
/// the background's priority runs the jobs in turn, each result installed when it is back
/// (a stale one is dropped by `install`).
struct Background {
    done: mpsc::Receiver<Parsed>,
    jobs: mpsc::Sender<ParseJob>,
    in_flight: usize,
}

impl Background {
    fn new() -> Background {
        let (tx, done) = mpsc::channel();
        let (jobs, queue) = mpsc::channel::<ParseJob>();
        std::thread::Builder::new()
            .name("mira-parse".into())
            .spawn(move || {
                mira::index::priority::background();
                for job in queue {
                    if tx.send(job.run()).is_err() {
                        break;
                    }
                }
            })
            .expect("a thread");
        Background {
            done,
            jobs,
            in_flight: 0,
        }
    }

    fn submit(&mut self, live: &mut OpenDoc) {
        if let Some(job) = live.parse_job() {
            self.in_flight += 1;
            self.jobs.send(job).expect("the parse thread");
        }
    }

    /// Installs a finished parse (waiting for it when `wait`); the time it took.
    fn install(&mut self, live: &mut OpenDoc, wait: bool) -> Option<Duration> {
        if self.in_flight == 0 {
            return None;
        }
        let parsed = if wait {
            self.done.recv().ok()?
        } else {
            self.done.try_recv().ok()?
        };
        self.in_flight -= 1;
        let t = Instant::now();
        live.install(parsed);
        self.submit(live);
        Some(t.elapsed())
    }
}

fn bench(path: &Path, budget: ParseBudget) {
    let text = std::fs::read_to_string(path).expect("a UTF-8 file");
    let lang = Lang::for_path(path).expect("a known language");
    let open = OpenDoc::open(lang, 0, ropey::Rope::from_str(&text)).unwrap();
    let root = open.tree().root_node();
    let items: Vec<(usize, usize)> = (0..root.child_count())
        .filter_map(|i| root.child(i))
        .map(|c| (c.start_byte(), c.end_byte()))
        .collect();
    println!(
        "\n== typing a new function: {} ({} lines, {} symbols) ==",
        path.display(),
        text.lines().count(),
        open.symbols.symbols.len()
    );
    let snip = snippet(lang);
    for (name, at) in places(&text, &items) {
        let mut doc = Document::new(&text, 0, lang.name());
        let mut live = OpenDoc::open(lang, 0, doc.rope().clone()).unwrap();
        live.set_parse_budget(budget);
        let mut bg = Background::new();
        let enc = PositionEncoding::Utf16;
        let mut times = Vec::new();
        let mut installs = Vec::new();
        let mut pending = 0;
        let mut slow = Vec::new();
        let mut offset = at;
        let gap = std::env::var("BENCH_TYPING_GAP_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map(Duration::from_millis);
        let trace = std::env::var_os("BENCH_TYPING_TRACE").is_some();
        for (v, ch) in snip.chars().enumerate() {
            if let Some(gap) = gap {
                std::thread::sleep(gap);
            }
            installs.extend(bg.install(&mut live, false));
            let pos = byte_to_position(doc.rope(), offset, enc);
            let mut buf = [0u8; 4];
            let s = ch.encode_utf8(&mut buf);
            let t = Instant::now();
            let edit = doc.apply_change(Some(Range::new(pos, pos)), s, enc);
            let kind = live.apply(v as i32 + 1, &[edit], doc.rope().clone());
            let published = Arc::new(live.symbols.clone());
            times.push(t.elapsed());
            slow.push((t.elapsed(), v, ch, kind));
            if trace {
                println!("    keystroke {v:>2} {ch:?}: {} {kind:?}", ms(t.elapsed()));
            }
            std::hint::black_box(published);
            pending += usize::from(kind == UpdateKind::Pending);
            bg.submit(&mut live);
            offset += s.len();
        }
        let settle = Instant::now();
        while live.is_pending() {
            let installed = bg.install(&mut live, true);
            assert!(installed.is_some(), "pending with no parse in flight");
            installs.extend(installed);
        }
        let settle = settle.elapsed();
        let exact = live.symbols == extract(lang, live.tree(), live.text());
        let found = live
            .symbols
            .symbols
            .iter()
            .any(|s| s.name == "added_here" || s.name == "addedHere");
        times.sort();
        if std::env::var_os("BENCH_TYPING_SLOW").is_some() {
            slow.sort_by_key(|s| std::cmp::Reverse(s.0));
            for (d, v, ch, kind) in slow.iter().take(4) {
                println!("    slow: {} at keystroke {v} {ch:?} {kind:?}", ms(*d));
            }
        }
        println!(
            "{name:>24}: {} keystrokes  p50 {}  p99 {}  max {}{}{}",
            times.len(),
            ms(percentile(&times, 0.5)),
            ms(percentile(&times, 0.99)),
            ms(*times.last().unwrap()),
            if found {
                ""
            } else {
                "  (the new function was NOT found)"
            },
            if exact {
                ""
            } else {
                "  (the symbols differ from a full walk!)"
            }
        );
        if pending > 0 {
            println!(
                "{:>24}  {pending} keystrokes answered while a parse was pending; {} installs, max {}; settled {} after the last keystroke",
                "",
                installs.len(),
                installs.iter().max().map_or("-".into(), |d| ms(*d)),
                ms(settle)
            );
        }
    }
}
