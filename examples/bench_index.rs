//! Index benchmark: prints figures for Mira's index and universal-ctags on the same files,
//! in the same run. `scripts/bench-index.sh` fetches the corpora and runs this.
//!
//! cargo run --release --example bench_index -- CORPUS_DIR [--edit-file FILE] [--ctags PATH]
//!
//! Besides the cold index (when its symbols were all stored, and when everything was) it
//! prints where the crawl's time went (stages), tree-sitter's parse-only floor on the same
//! files with the same threads, both ratios to it, and the cold index again at
//! RAYON_NUM_THREADS=1/2/4/8 (each in a fresh process: `--scaling-child`).

// The binary's allocator (src/main.rs), so the library is measured as `mira` runs it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use mira::documents::{Document, PositionEncoding, byte_to_position};
use mira::index::crawl::{CrawlOptions, crawl};
use mira::index::live::OpenDoc;
use mira::index::table::SymbolTable;
use mira::index::{Lang, db};
use mira::store::{Store, projects};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tower_lsp_server::ls_types::Range;

struct Usage {
    cpu: Duration,
    max_rss_kb: i64,
}

fn usage(who: i32) -> Usage {
    // SAFETY: getrusage only writes the struct we hand it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &mut ru) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Usage {
        cpu: tv(ru.ru_utime) + tv(ru.ru_stime),
        max_rss_kb: ru.ru_maxrss,
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

/// A small deterministic generator: benchmarks must be repeatable.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // SAFETY: first thing in main, before any thread, tree or connection; scaling children
    // inherit `MIRA_ALLOCATOR`, so each row uses the parent's choice.
    let on_mimalloc = unsafe { mira::c_alloc::install_unless_system() };
    let threads = mira::index::crawl::start_parse_pool();
    mira::c_alloc::purge_at_once_on_many_threads(threads);
    let c_alloc = if on_mimalloc { "mimalloc" } else { "glibc" };
    let corpus = PathBuf::from(
        args.get(1)
            .expect("usage: bench_index CORPUS_DIR [--edit-file FILE] [--ctags PATH]"),
    );
    let opt = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let ctags = opt("--ctags").unwrap_or_else(|| "ctags".into());
    let corpus = std::fs::canonicalize(&corpus).expect("corpus dir exists");
    if let Some(list) = opt("--floor-child") {
        let files: Vec<String> = std::fs::read_to_string(list)
            .expect("the file list")
            .lines()
            .map(str::to_owned)
            .collect();
        let floor = parse_floor(&read_sources(&corpus, &files));
        println!("{} {}", floor.wall.as_nanos(), floor.cpu.as_nanos());
        return;
    }
    if args.iter().any(|a| a == "--scaling-child") {
        return scaling_child(&corpus, args.iter().any(|a| a == "--stages"));
    }
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(&tmp.path().join("mira.db")).unwrap();
    let project = store
        .write(|tx| projects::ensure(tx, &corpus, "bench"))
        .unwrap();
    let opts = CrawlOptions::default();
    println!("corpus: {}", corpus.display());
    println!("C libraries' allocator: {c_alloc}");
    println!(
        "threads: {} (rayon; {} cores, at most {} unless RAYON_NUM_THREADS)",
        rayon::current_num_threads(),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        mira::index::crawl::PARSE_THREADS_MAX
    );

    // Warm the page cache so neither side pays for cold disk reads.
    let mut warm_bytes = 0u64;
    for e in ignore::WalkBuilder::new(&corpus)
        .require_git(false)
        .build()
        .flatten()
    {
        if e.file_type().is_some_and(|t| t.is_file()) && Lang::for_path(e.path()).is_some() {
            warm_bytes += std::fs::read(e.path()).map(|b| b.len() as u64).unwrap_or(0);
        }
    }
    println!("warmed page cache: {:.1} MB", warm_bytes as f64 / 1e6);

    // --- Cold index -----------------------------------------------------------------
    let mut conn = store.connect().unwrap();
    let before = usage(libc::RUSAGE_SELF);
    let t = Instant::now();
    let stats = crawl(&mut conn, project, &corpus, &opts, &|_| {}, &|_| {}).unwrap();
    let cold_wall = t.elapsed();
    let after = usage(libc::RUSAGE_SELF);
    let cold_cpu = after.cpu - before.cpu;
    let cold_rss_mb = after.max_rss_kb as f64 / 1024.0;

    let mut ours_by_lang: BTreeMap<String, u64> = BTreeMap::new();
    {
        let mut st = conn
            .prepare("SELECT f.language, count(*) FROM symbols s JOIN files f ON f.id = s.file_id GROUP BY f.language")
            .unwrap();
        let rows = st
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
            .unwrap();
        for r in rows.flatten() {
            ours_by_lang.insert(r.0, r.1 as u64);
        }
    }
    let files: Vec<String> = {
        let mut st = conn
            .prepare("SELECT path FROM files WHERE skip_reason IS NULL ORDER BY path")
            .unwrap();
        st.query_map([], |r| r.get(0)).unwrap().flatten().collect()
    };

    // --- universal-ctags on exactly the files we parsed --------------------------------
    let list = tmp.path().join("files.txt");
    std::fs::write(
        &list,
        files
            .iter()
            .map(|f| corpus.join(f).display().to_string())
            .collect::<Vec<_>>()
            .join("\n"),
    )
    .unwrap();
    let tags = tmp.path().join("tags");
    let t = Instant::now();
    let child = std::process::Command::new(&ctags)
        .arg("-f")
        .arg(&tags)
        .arg("--fields=+n")
        .arg("-L")
        .arg(&list)
        .stderr(std::process::Stdio::null())
        .spawn();
    // wait4 gives this child's own CPU and peak RSS (RUSAGE_CHILDREN would also count
    // whatever ran before an `exec`, such as the cargo build in the script).
    let (status, ctags_usage) = match &child {
        Ok(c) => {
            let mut st = 0i32;
            // SAFETY: wait4 writes only the status and rusage we hand it.
            let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
            let r = unsafe { libc::wait4(c.id() as i32, &mut st, 0, &mut ru) };
            let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
            (
                r > 0 && libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0,
                Usage {
                    cpu: tv(ru.ru_utime) + tv(ru.ru_stime),
                    max_rss_kb: ru.ru_maxrss,
                },
            )
        }
        Err(_) => (
            false,
            Usage {
                cpu: Duration::ZERO,
                max_rss_kb: 0,
            },
        ),
    };
    let ctags_wall = t.elapsed();
    let ctags_ok = status;
    let ctags_cpu = ctags_usage.cpu;
    let cafter = ctags_usage;
    let mut ctags_by_lang: BTreeMap<String, u64> = BTreeMap::new();
    if ctags_ok {
        let text = std::fs::read_to_string(&tags).unwrap_or_default();
        for line in text.lines().filter(|l| !l.starts_with("!_")) {
            let file = line.split('\t').nth(1).unwrap_or("");
            if let Some(l) = Lang::for_path(Path::new(file)) {
                *ctags_by_lang.entry(l.name().to_string()).or_default() += 1;
            }
        }
    } else {
        println!("ctags failed to run; install Debian's `universal-ctags`");
    }

    let mb = stats.bytes as f64 / 1e6;
    println!(
        "\n== cold index ({} files, {} lines, {:.1} MB; {} skipped) ==",
        stats.parsed,
        stats.lines,
        mb,
        stats.skipped.len()
    );
    println!(
        "{:<22} {:>12} {:>12} {:>10} {:>10} {:>12}",
        "", "wall", "cpu", "files/s", "MB/s", "peak RSS"
    );
    println!(
        "{:<22} {:>12} {:>12} {:>10.0} {:>10.1} {:>9.1} MB",
        "mira (tree-sitter)",
        ms(cold_wall),
        ms(cold_cpu),
        stats.parsed as f64 / cold_wall.as_secs_f64(),
        mb / cold_wall.as_secs_f64(),
        cold_rss_mb
    );
    if ctags_ok {
        println!(
            "{:<22} {:>12} {:>12} {:>10.0} {:>10.1} {:>9.1} MB",
            "universal-ctags",
            ms(ctags_wall),
            ms(ctags_cpu),
            files.len() as f64 / ctags_wall.as_secs_f64(),
            mb / ctags_wall.as_secs_f64(),
            cafter.max_rss_kb as f64 / 1024.0
        );
        println!(
            "ratio mira/ctags: wall {:.2}x, cpu {:.2}x   (budget: wall <= 2x)",
            cold_wall.as_secs_f64() / ctags_wall.as_secs_f64(),
            cold_cpu.as_secs_f64() / ctags_cpu.as_secs_f64().max(1e-9)
        );
    }
    print_stages(&stats.stages, cold_wall);
    let sources = read_sources(&corpus, &files);
    let floor = parse_floor(&sources);
    println!(
        "{:<22} {:>12} {:>12}   (the same files, read beforehand, parsed only; same threads)",
        "tree-sitter parse only",
        ms(floor.wall),
        ms(floor.cpu)
    );
    println!(
        "symbols ready          {:>12}   (every file's symbols in the view that answers workspace/symbol, definitions and outlines)",
        ms(stats.symbols_elapsed)
    );
    println!(
        "symbols stored         {:>12}   (rows and references in SQLite; code search follows)",
        ms(stats.stored_elapsed)
    );
    println!(
        "ratio symbols ready/parse floor: wall {:.2}x   (budget: <= 1.3x)",
        stats.symbols_elapsed.as_secs_f64() / floor.wall.as_secs_f64()
    );
    println!(
        "ratio all done/parse floor: wall {:.2}x, cpu {:.2}x   (budget: wall <= 2.0x)",
        cold_wall.as_secs_f64() / floor.wall.as_secs_f64(),
        cold_cpu.as_secs_f64() / floor.cpu.as_secs_f64().max(1e-9)
    );
    if let Some(glibc) = glibc_floor(&corpus, &files, tmp.path()) {
        println!(
            "{:<22} {:>12} {:>12}   (the same, tree-sitter on glibc's malloc as py-tree-sitter runs it)",
            "parse only, glibc",
            ms(glibc.wall),
            ms(glibc.cpu)
        );
        println!(
            "ratio to the glibc floor: symbols ready {:.2}x, all done {:.2}x",
            stats.symbols_elapsed.as_secs_f64() / glibc.wall.as_secs_f64(),
            cold_wall.as_secs_f64() / glibc.wall.as_secs_f64()
        );
    }
    if ctags_ok {
        let floor_vs_ctags = floor.wall.as_secs_f64() / ctags_wall.as_secs_f64();
        println!(
            "ratio parse floor/ctags: wall {:.2}x, cpu {:.2}x{}",
            floor_vs_ctags,
            floor.cpu.as_secs_f64() / ctags_cpu.as_secs_f64().max(1e-9),
            if floor_vs_ctags > 2.0 {
                "   (tree-sitter's parse alone exceeds 2x ctags: the 2x-ctags budget is out of reach for any tree-sitter index on this machine)"
            } else {
                ""
            }
        );
    }
    scaling(&corpus);
    drop(sources);

    println!("\nsymbols per language (mira definitions / ctags tags):");
    let langs: std::collections::BTreeSet<&String> =
        ours_by_lang.keys().chain(ctags_by_lang.keys()).collect();
    for l in langs {
        println!(
            "  {:<11} {:>8} / {:>8}",
            l,
            ours_by_lang.get(l).copied().unwrap_or(0),
            ctags_by_lang.get(l).copied().unwrap_or(0)
        );
    }
    println!(
        "  {:<11} {:>8} / {:>8}",
        "total",
        ours_by_lang.values().sum::<u64>(),
        ctags_by_lang.values().sum::<u64>()
    );

    // --- Warm restart -----------------------------------------------------------------
    let t = Instant::now();
    let warm = crawl(&mut conn, project, &corpus, &opts, &|_| {}, &|_| {}).unwrap();
    let warm_crawl = t.elapsed();
    let t = Instant::now();
    let mut table = SymbolTable::default();
    for f in db::load_project(&conn, project).unwrap() {
        if let Some(lang) = Lang::by_name(&f.language) {
            table.upsert(f.path, lang, f.ascii, Arc::new(f.symbols));
        }
    }
    let warm_load = t.elapsed();
    let per_million = (warm_crawl + warm_load).as_secs_f64() / (stats.lines as f64 / 1e6);
    println!(
        "\n== warm restart ==\nre-crawl {} ({} parsed, {} unchanged) + load {} symbols {} = {} → {:.3} s per million lines (budget 0.5 s)",
        ms(warm_crawl),
        warm.parsed,
        warm.unchanged,
        table.symbol_count(),
        ms(warm_load),
        ms(warm_crawl + warm_load),
        per_million
    );

    // --- Edit → symbols current on a ~7,500-line file ------------------------------------
    let edit_file = opt("--edit-file").map(PathBuf::from).or_else(|| {
        let mut best: Option<(u64, PathBuf)> = None;
        let mut st = conn
            .prepare("SELECT path, lines FROM files WHERE skip_reason IS NULL")
            .unwrap();
        for (p, lines) in st
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
            .unwrap()
            .flatten()
        {
            let d = (lines - 7500).unsigned_abs();
            if best.as_ref().is_none_or(|b| d < b.0) {
                best = Some((d, corpus.join(p)));
            }
        }
        best.map(|b| b.1)
    });
    if let Some(path) = edit_file {
        bench_edits(&path);
    } else {
        println!("\n(no source file for the edit benchmark; pass --edit-file)");
    }

    // --- workspace/symbol over >= 250k symbols --------------------------------------------
    let base: Vec<(String, Lang, Arc<mira::index::FileSymbols>)> = db::load_project(&conn, project)
        .unwrap()
        .into_iter()
        .filter_map(|f| Some((f.path, Lang::by_name(&f.language)?, Arc::new(f.symbols))))
        .collect();
    let mut copy = 1;
    while table.symbol_count() < 250_000 && !base.is_empty() {
        for (p, l, s) in &base {
            table.upsert(format!("copy{copy}/{p}"), *l, true, s.clone());
        }
        copy += 1;
    }
    let names: Vec<String> = base
        .iter()
        .flat_map(|(_, _, s)| s.symbols.iter().map(|x| x.name.clone()))
        .filter(|n| n.len() >= 4 && n.is_ascii())
        .collect();
    let mut rng = Lcg(42);
    let mut queries = Vec::new();
    for _ in 0..300 {
        let n = &names[rng.next() as usize % names.len().max(1)];
        queries.push(n[..3].to_string());
        let sub: String = n.chars().step_by(2).take(4).collect();
        queries.push(sub.to_lowercase());
        queries.push(n.to_lowercase());
    }
    let mut times = Vec::new();
    let mut results = 0usize;
    for q in &queries {
        let t = Instant::now();
        let hits = table.search(q, None, 128);
        times.push(t.elapsed());
        results += hits.len();
    }
    times.sort();
    println!(
        "\n== workspace/symbol over {} symbols ({} queries: 3-char prefixes, subsequences, full names; limit 128; {:.0} results avg) ==\np50 {}  p99 {}  max {}   (budget p99 <= 25 ms)",
        table.symbol_count(),
        queries.len(),
        results as f64 / queries.len() as f64,
        ms(percentile(&times, 0.5)),
        ms(percentile(&times, 0.99)),
        ms(*times.last().unwrap_or(&Duration::ZERO))
    );
    let final_rss = usage(libc::RUSAGE_SELF).max_rss_kb as f64 / 1024.0;
    println!(
        "\npeak RSS of this process at the end (incl. the {}-symbol table): {:.1} MB",
        table.symbol_count(),
        final_rss
    );
}

fn bench_edits(path: &Path) {
    let text = std::fs::read_to_string(path).expect("edit file is UTF-8");
    let lang = Lang::for_path(path).expect("edit file has a known language");
    let mut doc = Document::new(&text, 1, lang.name());
    let t = Instant::now();
    let mut live = OpenDoc::open(lang, 1, doc.rope().clone()).unwrap();
    let open_time = t.elapsed();
    let bytes = text.as_bytes();
    // Positions inside identifiers (a letter after a letter): typing there keeps the file valid.
    let spots: Vec<usize> = (1..bytes.len())
        .filter(|&i| bytes[i].is_ascii_alphabetic() && bytes[i - 1].is_ascii_alphabetic())
        .collect();
    let mut rng = Lcg(7);
    let enc = PositionEncoding::Utf8;
    let mut times = Vec::new();
    let mut version = 1;
    for _ in 0..500 {
        let at = spots[rng.next() as usize % spots.len()];
        for (range_len, insert) in [(0usize, "x"), (1, "")] {
            let rope = doc.rope().clone();
            let start = byte_to_position(&rope, at, enc);
            let end = byte_to_position(&rope, at + range_len, enc);
            version += 1;
            let t = Instant::now();
            let edit = doc.apply_change(Some(Range::new(start, end)), insert, enc);
            live.apply(version, &[edit], doc.rope().clone());
            // What the actor does before answering a query: publish the file's symbols.
            let published = Arc::new(live.symbols.clone());
            times.push(t.elapsed());
            std::hint::black_box(published);
        }
    }
    times.sort();
    println!(
        "\n== edit → symbols current: {} ({} lines, {} symbols; open+parse {}) ==\n{} single-char edits inside identifiers: p50 {}  p99 {}  max {}   (budget p99 <= 10 ms)",
        path.display(),
        text.lines().count(),
        live.symbols.symbols.len(),
        ms(open_time),
        times.len(),
        ms(percentile(&times, 0.5)),
        ms(percentile(&times, 0.99)),
        ms(*times.last().unwrap())
    );
}

/// Where the crawl's time went. Per-file stages are summed over threads (compare with CPU).
fn print_stages(st: &mira::index::crawl::StageTimes, wall: Duration) {
    println!(
        "stages (cpu unless said): walk {} wall (overlapped); parse threads: read+hash {}, parse {}, extract {}; writer thread: symbols stage {}, code-search stage {} (of which FTS5 chunks {}, commits {} in both), idle {} wall; parsers blocked on the writer {} wall, waiting for the source budget {} wall; code-search stage's threads: chunks (code heads, redaction, identifier parts) {}; WAL checkpoints beside the writers {}",
        ms(st.walk),
        ms(st.read),
        ms(st.parse),
        ms(st.extract),
        ms(st.write),
        ms(st.search_write),
        ms(st.write_fts),
        ms(st.commit),
        ms(st.writer_idle),
        ms(st.parse_blocked),
        ms(st.parse_queued),
        ms(st.chunks),
        ms(st.checkpoint)
    );
    let all =
        st.read + st.parse + st.extract + st.chunks + st.write + st.search_write + st.checkpoint;
    let writer = st.write + st.search_write;
    println!(
        "the writer (serial) did {:.0}% of the crawl's CPU: with enough cores the cold wall cannot drop below {}; of the {} wall, parsers waited {} for the writer and the writer {} for them",
        writer.as_secs_f64() / all.as_secs_f64().max(1e-9) * 100.0,
        ms(writer),
        ms(wall),
        ms(st.parse_blocked),
        ms(st.writer_idle)
    );
}

/// References stored: one line each in `files.refs`.
fn references(conn: &rusqlite::Connection) -> i64 {
    conn.query_row(
        "SELECT coalesce(sum(length(refs) - length(replace(refs, char(10), '')) + 1), 0)
         FROM files WHERE refs IS NOT NULL",
        [],
        |r| r.get(0),
    )
    .unwrap()
}

fn read_sources(corpus: &Path, files: &[String]) -> Vec<(Lang, Vec<u8>)> {
    files
        .iter()
        .map(|f| corpus.join(f))
        .filter_map(|p| Some((Lang::for_path(&p)?, std::fs::read(&p).ok()?)))
        .collect()
}

struct Floor {
    wall: Duration,
    cpu: Duration,
}

/// The floor again in a child process whose C libraries stay on glibc (`MIRA_ALLOCATOR`
/// is read once, at start): what the py-tree-sitter floor measures. `None`, said,
/// when the child fails.
fn glibc_floor(corpus: &Path, files: &[String], tmp: &Path) -> Option<Floor> {
    let list = tmp.join("floor-files.txt");
    std::fs::write(&list, files.join("\n")).ok()?;
    let out = std::process::Command::new(std::env::current_exe().ok()?)
        .arg(corpus)
        .arg("--floor-child")
        .arg(&list)
        .env("MIRA_ALLOCATOR", "system")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut nums = text.split_whitespace().map(|n| n.parse::<u64>().ok());
    match (
        out.status.success(),
        nums.next().flatten(),
        nums.next().flatten(),
    ) {
        (true, Some(wall), Some(cpu)) => Some(Floor {
            wall: Duration::from_nanos(wall),
            cpu: Duration::from_nanos(cpu),
        }),
        _ => {
            println!(
                "parse only, glibc: the child failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
            None
        }
    }
}

/// tree-sitter's parse-only floor: the files already in memory, parsed on the rayon pool.
fn parse_floor(sources: &[(Lang, Vec<u8>)]) -> Floor {
    use rayon::prelude::*;
    let u0 = usage(libc::RUSAGE_SELF);
    let t = Instant::now();
    sources.par_iter().for_each(|(l, b)| {
        std::hint::black_box(mira::index::parse::parse(*l, b));
    });
    let wall = t.elapsed();
    Floor {
        wall,
        cpu: usage(libc::RUSAGE_SELF).cpu - u0.cpu,
    }
}

/// The cold index and the floor at 1, 2, 4 and 8 threads, each in a fresh process (rayon's
/// global pool is sized once per process).
fn scaling(corpus: &Path) {
    let me = std::env::current_exe().expect("own path");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "\nthread scaling (fresh process and database each; {cores} cores here: past that, more threads only show the serial part):"
    );
    println!(
        "  {:>7} {:>14} {:>12} {:>12} {:>12} {:>12} {:>10}",
        "threads",
        "symbols ready",
        "all done",
        "mira cpu",
        "floor wall",
        "symbols/floor",
        "all/floor"
    );
    // Every core too, on a machine with more than 8.
    let threads = [1, 2, 4, 8].into_iter().chain((cores > 8).then_some(cores));
    for n in threads {
        let out = std::process::Command::new(&me)
            .arg(corpus)
            .arg("--scaling-child")
            .env("RAYON_NUM_THREADS", n.to_string())
            .output();
        match out {
            Ok(o) if o.status.success() => print!("{}", String::from_utf8_lossy(&o.stdout)),
            Ok(o) => println!(
                "  {n:>7} failed: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            ),
            Err(e) => println!("  {n:>7} cannot start: {e}"),
        }
    }
}

/// One line of the scaling table: a cold index into a fresh database, then the floor.
fn scaling_child(corpus: &Path, stages: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(&tmp.path().join("mira.db")).unwrap();
    let project = store
        .write(|tx| projects::ensure(tx, corpus, "bench"))
        .unwrap();
    let mut conn = store.connect().unwrap();
    let before = usage(libc::RUSAGE_SELF);
    let t = Instant::now();
    let opts = CrawlOptions::default();
    let stats = crawl(&mut conn, project, corpus, &opts, &|_| {}, &|_| {}).unwrap();
    let wall = t.elapsed();
    let cpu = usage(libc::RUSAGE_SELF).cpu - before.cpu;
    let files: Vec<String> = {
        let mut st = conn
            .prepare("SELECT path FROM files WHERE skip_reason IS NULL ORDER BY path")
            .unwrap();
        st.query_map([], |r| r.get(0)).unwrap().flatten().collect()
    };
    let floor = parse_floor(&read_sources(corpus, &files));
    println!(
        "  {:>7} {:>14} {:>12} {:>12} {:>12} {:>12.2}x {:>9.2}x   (stored {}, writer busy {} + {}, parsers blocked {})",
        rayon::current_num_threads(),
        ms(stats.symbols_elapsed),
        ms(wall),
        ms(cpu),
        ms(floor.wall),
        stats.symbols_elapsed.as_secs_f64() / floor.wall.as_secs_f64(),
        wall.as_secs_f64() / floor.wall.as_secs_f64(),
        ms(stats.stored_elapsed),
        ms(stats.stages.write),
        ms(stats.stages.search_write),
        ms(stats.stages.parse_blocked)
    );
    if stages {
        print_stages(&stats.stages, wall);
        let count = |t: &str| -> i64 {
            conn.query_row(&format!("SELECT count(*) FROM {t}"), [], |r| r.get(0))
                .unwrap()
        };
        println!(
            "rows written: files {}, symbols {}, references {}",
            count("files"),
            count("symbols"),
            references(&conn)
        );
    }
}
