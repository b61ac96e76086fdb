//! Distils Mira's built-in static embedder from all-MiniLM-L6-v2 (run by
//! `scripts/distill-static-model`, which then reduces and quantises what this writes).
//!
//! A static model gives each word piece one vector; a text's vector is the weighted mean of its
//! pieces' vectors. MiniLM's sentence vector is the mean of its last layer's token outputs, so
//! the best static vector for a piece is the mean of that piece's outputs *in context*. This
//! measures exactly that over a corpus of prose and code, and also each piece alone
//! (`[CLS] piece [SEP]`, model2vec's recipe) for pieces the corpus never shows.
//!
//!   cargo run --release --features local-embeddings --example distill_static -- \
//!       --model-dir DIR --out raw.bin [--max-snippets N] CORPUS_DIR...
//!
//! Output (little-endian): b"MDST", vocab u32, dim u32, alone f32[vocab*dim],
//! context-sum f32[vocab*dim], count u32[vocab].

use std::io::Write;
use std::path::{Path, PathBuf};

use mira::embed::LocalEmbedder;

/// Word pieces per corpus snippet: long enough for context, short enough to stay cheap.
const SNIPPET_TOKENS: usize = 96;
const BATCH: usize = 32;

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut model_dir, mut out, mut max, mut dirs) = (None, None, 6000usize, Vec::new());
    while let Some(a) = args.next() {
        match a.as_str() {
            "--model-dir" => model_dir = args.next().map(PathBuf::from),
            "--out" => out = args.next().map(PathBuf::from),
            "--max-snippets" => max = args.next().and_then(|v| v.parse().ok()).unwrap_or(max),
            _ => dirs.push(PathBuf::from(a)),
        }
    }
    if let Some(pos) = dirs.iter().position(|d| d.as_os_str() == "--sentences") {
        // `--sentences FILE`: MiniLM's sentence vector for every line of FILE, for the
        // regression in scripts/distill_static.py (f32[384] per line, in order).
        let file = dirs.get(pos + 1).expect("--sentences FILE");
        let model = LocalEmbedder::load(model_dir.as_ref().expect("--model-dir")).expect("load");
        let lines: Vec<String> = std::fs::read_to_string(file)
            .expect("sentences")
            .lines()
            .map(String::from)
            .collect();
        let mut f =
            std::io::BufWriter::new(std::fs::File::create(out.expect("--out")).expect("create"));
        let t = std::time::Instant::now();
        for (i, batch) in lines.chunks(64).enumerate() {
            for v in model.embed(batch).expect("embed") {
                v.iter()
                    .for_each(|x| f.write_all(&x.to_le_bytes()).unwrap());
            }
            if i % 40 == 0 {
                eprintln!(
                    "  {} / {} sentences, {:.0?}",
                    (i + 1) * 64,
                    lines.len(),
                    t.elapsed()
                );
            }
        }
        return;
    }
    let (Some(model_dir), Some(out)) = (model_dir, out) else {
        eprintln!("usage: distill_static --model-dir DIR --out FILE [--max-snippets N] DIR...");
        std::process::exit(2);
    };
    let model = LocalEmbedder::load(&model_dir).expect("load MiniLM");
    let vocab = std::fs::read_to_string(model_dir.join("vocab.txt"))
        .expect("vocab.txt")
        .lines()
        .count();
    let dim = 384usize;
    let (cls, sep) = {
        let ids = model.token_ids("");
        (ids[0], ids[ids.len() - 1])
    };

    let t0 = std::time::Instant::now();
    let mut alone = vec![0f32; vocab * dim];
    let ids: Vec<u32> = (0..vocab as u32).collect();
    for chunk in ids.chunks(512) {
        let seqs: Vec<Vec<u32>> = chunk.iter().map(|&t| vec![cls, t, sep]).collect();
        let states = model.token_states(&seqs).expect("forward");
        for (&t, rows) in chunk.iter().zip(states) {
            let row = &mut alone[t as usize * dim..(t as usize + 1) * dim];
            for r in &rows {
                row.iter_mut()
                    .zip(r)
                    .for_each(|(a, b)| *a += b / rows.len() as f32);
            }
        }
    }
    eprintln!("alone: {vocab} pieces in {:.1?}", t0.elapsed());

    let mut snippets = Vec::new();
    for d in &dirs {
        collect(d, &mut snippets);
    }
    // deterministic spread over the whole corpus rather than its first files
    let step = (snippets.len() / max.max(1)).max(1);
    let snippets: Vec<String> = snippets.into_iter().step_by(step).take(max).collect();
    eprintln!("corpus: {} snippets", snippets.len());

    let t1 = std::time::Instant::now();
    let mut sum = vec![0f32; vocab * dim];
    let mut count = vec![0u32; vocab];
    for (i, batch) in snippets.chunks(BATCH).enumerate() {
        let seqs: Vec<Vec<u32>> = batch
            .iter()
            .map(|s| {
                let mut ids = model.token_ids(s);
                if ids.len() > SNIPPET_TOKENS {
                    ids.truncate(SNIPPET_TOKENS - 1);
                    ids.push(sep);
                }
                ids
            })
            .collect();
        let states = model.token_states(&seqs).expect("forward");
        for (seq, rows) in seqs.iter().zip(states) {
            for (&t, r) in seq.iter().zip(&rows) {
                if t == cls || t == sep {
                    continue;
                }
                count[t as usize] += 1;
                let row = &mut sum[t as usize * dim..(t as usize + 1) * dim];
                row.iter_mut().zip(r).for_each(|(a, b)| *a += b);
            }
        }
        if i % 20 == 0 {
            eprintln!(
                "  {} / {} snippets, {:.0?}",
                (i + 1) * BATCH,
                snippets.len(),
                t1.elapsed()
            );
        }
    }
    eprintln!("context: {:.1?}", t1.elapsed());

    let mut f = std::io::BufWriter::new(std::fs::File::create(&out).expect("create out"));
    f.write_all(b"MDST").unwrap();
    f.write_all(&(vocab as u32).to_le_bytes()).unwrap();
    f.write_all(&(dim as u32).to_le_bytes()).unwrap();
    for x in alone.iter().chain(&sum) {
        f.write_all(&x.to_le_bytes()).unwrap();
    }
    for c in &count {
        f.write_all(&c.to_le_bytes()).unwrap();
    }
}

/// Prose and code snippets like the texts Mira embeds: doc comments and docstrings as prose,
/// signatures with their identifiers split into words.
fn collect(dir: &Path, out: &mut Vec<String>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(&p, out);
            continue;
        }
        let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        match ext {
            "rs" => rust_snippets(&text, out),
            "py" => python_snippets(&text, out),
            "md" | "txt" | "rst" => prose_snippets(&text, out),
            _ => {}
        }
    }
}

fn rust_snippets(text: &str, out: &mut Vec<String>) {
    let mut doc = String::new();
    for line in text.lines() {
        let t = line.trim_start();
        if let Some(d) = t.strip_prefix("///").or_else(|| t.strip_prefix("//!")) {
            doc.push_str(d.trim());
            doc.push(' ');
            continue;
        }
        if !doc.trim().is_empty() {
            let sig = t.trim_end_matches('{').trim();
            let words = mira::text::identifier_tokens(sig);
            out.push(format!("{sig}\n{words}\n{}", doc.trim()));
        }
        doc.clear();
    }
}

fn python_snippets(text: &str, out: &mut Vec<String>) {
    let mut rest = text;
    let mut last_def = "";
    while let Some(i) = rest.find("\"\"\"") {
        let before = &rest[..i];
        if let Some(l) = before
            .lines()
            .rev()
            .find(|l| l.trim_start().starts_with("def ") || l.trim_start().starts_with("class "))
        {
            last_def = l.trim();
        }
        let after = &rest[i + 3..];
        let Some(j) = after.find("\"\"\"") else { break };
        let doc = after[..j].split_whitespace().collect::<Vec<_>>().join(" ");
        if doc.len() > 20 {
            out.push(format!(
                "{last_def}\n{}\n{doc}",
                mira::text::identifier_tokens(last_def)
            ));
        }
        rest = &after[j + 3..];
    }
}

fn prose_snippets(text: &str, out: &mut Vec<String>) {
    for para in text.split("\n\n") {
        let p = para.split_whitespace().collect::<Vec<_>>().join(" ");
        if p.len() > 40 && p.chars().filter(|c| c.is_alphabetic()).count() * 2 > p.len() {
            out.push(p);
        }
    }
}
