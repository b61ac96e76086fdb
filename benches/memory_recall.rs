//! Recall latency over 10,000 memories on a real SQLite file (WAL, warm page cache):
//! BM25 alone and hybrid (BM25 + sqlite-vec KNN over 384-d vectors + fusion), p50/p99, each
//! with the default fusion (RRF plus the speaker and length terms) and with RRF alone. Half
//! the memories are chat turns ("Name: text") and a fifth of the queries name a speaker.
//! Budget (docs/benchmarks.md): recall p99 ≤ 50 ms.
//!
//!   cargo bench --bench memory_recall [-- --memories 10000 --queries 500]
//!
//! The hybrid rows use random unit vectors: KNN cost does not depend on what the vectors
//! mean. Embedding the query is the embedder's cost and is measured separately when a local
//! model is given (`--features local-embeddings`, `--model-dir DIR`).

use std::time::Instant;

use mira::config::RecallWeights;
use mira::memory::recall::{self, QueryVector, RecallQuery};
use mira::memory::vectors;
use mira::memory::{MemoryKind, NewMemory, Scope, memories};
use mira::store::{Store, projects};

/// A tiny deterministic generator (no rand dependency).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.next() as usize) % xs.len()]
    }
    fn unit(&mut self) -> f32 {
        (self.next() % 20001) as f32 / 10000.0 - 1.0
    }
}

const WORDS: &[&str] = &[
    "billing",
    "search",
    "auth",
    "checkout",
    "inventory",
    "shipping",
    "analytics",
    "gateway",
    "export",
    "scheduler",
    "payments",
    "catalog",
    "session",
    "pricing",
    "postgres",
    "redis",
    "sqlite",
    "kafka",
    "grafana",
    "sentry",
    "terraform",
    "docker",
    "retry",
    "timeout",
    "cache",
    "deploy",
    "review",
    "tests",
    "indentation",
    "logging",
    "errors",
    "migration",
    "latency",
    "owner",
    "prefers",
    "decided",
    "config",
    "webhook",
    "token",
    "invoice",
    "customer",
    "region",
];
const NAMES: &[&str] = &[
    "Caroline", "Melanie", "Avery", "Jordan", "Priya", "Tomasz", "Ines", "Kenji",
];
const IDENTS: &[&str] = &[
    "parseConfigFile",
    "fetchUserProfile",
    "RetryPolicy",
    "HttpClientPool",
    "calculate_shipping_cost",
    "token_bucket_limiter",
    "OrderStateMachine",
    "render_invoice_pdf",
    "SessionTokenStore",
    "applyDiscountCode",
    "normalize_phone_number",
    "DataExportScheduler",
];

fn sentence(rng: &mut Lcg) -> String {
    let n = 8 + (rng.next() % 10) as usize;
    let mut s: Vec<&str> = (0..n).map(|_| rng.pick(WORDS)).collect();
    if rng.next().is_multiple_of(3) {
        s.push(rng.pick(IDENTS));
    }
    format!("{} {}", s.join(" "), rng.next() % 100_000)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn report(name: &str, mut ms: Vec<f64>) {
    ms.sort_by(f64::total_cmp);
    println!(
        "{name:<44} p50 {:>7.3} ms   p99 {:>7.3} ms   max {:>7.3} ms   ({} queries)",
        percentile(&ms, 0.5),
        percentile(&ms, 0.99),
        ms[ms.len() - 1],
        ms.len()
    );
}

fn main() {
    let mut n_mem = 10_000usize;
    let mut n_q = 500usize;
    let mut model_dir: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--memories" => n_mem = args.next().unwrap().parse().unwrap(),
            "--queries" => n_q = args.next().unwrap().parse().unwrap(),
            "--model-dir" => model_dir = args.next(),
            // cargo bench passes --bench to harness-less benchmarks
            "--bench" => {}
            other => panic!("unknown argument {other}"),
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(&tmp.path().join("mira.db")).unwrap();
    let mut rng = Lcg(42);
    let project = store
        .read(|c| projects::ensure(c, std::path::Path::new("/bench"), "bench"))
        .unwrap();

    let started = Instant::now();
    let ids: Vec<i64> = store
        .write(|tx| {
            (0..n_mem)
                .map(|i| {
                    // a tenth project-scoped, like a real store that spans projects
                    let scope = if i % 10 == 0 {
                        Scope::Project(project)
                    } else {
                        Scope::Global
                    };
                    // half are conversation turns, "Name: text", as `mira remember` stores a chat
                    let text = if i % 2 == 0 {
                        format!("{}: {}", rng.pick(NAMES), sentence(&mut rng))
                    } else {
                        sentence(&mut rng)
                    };
                    let m = NewMemory::new(text, MemoryKind::Fact, scope);
                    Ok(memories::remember(tx, &m)?.memory.id)
                })
                .collect::<Result<Vec<_>, mira::memory::MemoryError>>()
        })
        .unwrap();
    println!(
        "inserted {} memories in {:.2} s ({:.0}/s, one transaction, FTS5 triggers included)",
        ids.len(),
        started.elapsed().as_secs_f64(),
        ids.len() as f64 / started.elapsed().as_secs_f64()
    );

    let dim = 384;
    let started = Instant::now();
    let space = store
        .write(|tx| {
            let space = vectors::register(tx, "bench:random-384", dim)?;
            for id in &ids {
                let mut v: Vec<f32> = (0..dim).map(|_| rng.unit()).collect();
                mira::embed::normalise(&mut v);
                vectors::store(tx, &space, *id, &format!("{id}"), &v)?;
            }
            Ok::<_, mira::memory::MemoryError>(space)
        })
        .unwrap();
    println!(
        "stored {} 384-d vectors in {:.2} s",
        ids.len(),
        started.elapsed().as_secs_f64()
    );

    let queries: Vec<String> = (0..n_q)
        .map(|i| {
            if i % 5 == 0 {
                rng.pick(IDENTS).to_string()
            } else if i % 5 == 1 {
                // a question that names a speaker: the speaker lookup and feature path
                format!("What did {} say about {}", rng.pick(NAMES), rng.pick(WORDS))
            } else {
                let k = 2 + (rng.next() % 4) as usize;
                (0..k)
                    .map(|_| rng.pick(WORDS))
                    .collect::<Vec<_>>()
                    .join(" ")
            }
        })
        .collect();
    let qvecs: Vec<Vec<f32>> = (0..n_q)
        .map(|_| {
            let mut v: Vec<f32> = (0..dim).map(|_| rng.unit()).collect();
            mira::embed::normalise(&mut v);
            v
        })
        .collect();
    // before the speaker and length terms (issue 21): weighted RRF of the two lists alone
    let rrf_only = RecallWeights {
        vector: 0.3,
        speaker: 0.0,
        length: 0.0,
        ..RecallWeights::default()
    };
    let with_neighbours = RecallWeights {
        neighbour: 0.5,
        ..RecallWeights::default()
    };

    let time = |hybrid: bool, weights: &RecallWeights| -> Vec<f64> {
        let mut out = Vec::with_capacity(n_q);
        for (i, (q, v)) in queries.iter().zip(&qvecs).enumerate() {
            let t = Instant::now();
            let hits = store
                .read(|c| {
                    Ok(recall::recall(
                        c,
                        &RecallQuery {
                            text: q,
                            project: Some(project),
                            limit: 10,
                        },
                        hybrid.then_some(QueryVector {
                            space: &space,
                            vector: v,
                        }),
                        weights,
                    ))
                })
                .unwrap()
                .unwrap();
            let ms = t.elapsed().as_secs_f64() * 1000.0;
            assert!(!hits.is_empty() || !hybrid);
            if i >= 20 {
                out.push(ms); // the first 20 warm the page cache and statement cache
            }
        }
        out
    };
    println!();
    let defaults = RecallWeights::default();
    report(
        &format!("recall BM25, RRF only {n_mem}"),
        time(false, &rrf_only),
    );
    report(
        &format!("recall BM25 over {n_mem} memories"),
        time(false, &defaults),
    );
    report(
        &format!("recall hybrid, RRF only {n_mem}"),
        time(true, &rrf_only),
    );
    report(
        &format!("recall hybrid (BM25 + KNN 384-d + fusion) {n_mem}"),
        time(true, &defaults),
    );
    report(
        &format!("recall hybrid + neighbour 0.5 {n_mem}"),
        time(true, &with_neighbours),
    );
    println!("budget: recall p99 <= 50 ms (docs/benchmarks.md)");

    // The embedders: what recall adds before the hybrid row above (384-d, as the default's),
    // and what `remember` adds for a memory-sized text.
    // A chat turn as LoCoMo's are: a name and two or three sentences (~30 words).
    let memories_sample: Vec<String> = (0..100)
        .map(|i| {
            let more = if i % 2 == 0 {
                sentence(&mut rng)
            } else {
                String::new()
            };
            let (a, b) = (sentence(&mut rng), sentence(&mut rng));
            format!("{}: {a}. {b}. {more}", rng.pick(NAMES))
        })
        .collect();
    let words: usize = memories_sample
        .iter()
        .map(|m| m.split_whitespace().count())
        .sum();
    println!(
        "memory-sized texts: {} words on average",
        words / memories_sample.len()
    );
    let bundled = mira::embed::LocalEmbedder::bundled().unwrap();
    for (label, texts) in [("query", &queries), ("memory", &memories_sample)] {
        let mut ms = Vec::new();
        for q in texts.iter().cycle().take(420) {
            let t = Instant::now();
            std::hint::black_box(bundled.embed(std::slice::from_ref(q)).unwrap());
            ms.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        ms.drain(..20);
        report(
            &format!("{label} embedding, bundled paraphrase-MiniLM-L3-v2 4-bit (default)"),
            ms,
        );
    }
    let builtin = mira::embed::BuiltinEmbedder::get();
    let mut ms = Vec::new();
    for q in queries.iter().cycle().take(2000) {
        let t = Instant::now();
        std::hint::black_box(builtin.embed_one(q));
        ms.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    report(
        "query embedding, built-in static table (model = \"static\")",
        ms,
    );

    #[cfg(feature = "local-embeddings")]
    if let Some(dir) = model_dir {
        let e = mira::embed::LocalEmbedder::load(std::path::Path::new(&dir)).unwrap();
        let mut ms = Vec::new();
        for q in queries.iter().take(120) {
            let t = Instant::now();
            e.embed(std::slice::from_ref(q)).unwrap();
            ms.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        ms.drain(..20);
        report("query embedding, local all-MiniLM-L6-v2", ms);
    }
    #[cfg(not(feature = "local-embeddings"))]
    if model_dir.is_some() {
        eprintln!("--model-dir needs --features local-embeddings");
    }
}
