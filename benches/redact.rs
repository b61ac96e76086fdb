//! Redaction throughput on a 10 MB mixed file: the labelled set's real code with one secret
//! line in every ~50 (tests/fixtures/redact). Everything sent or stored passes through
//! `redact`, so it must stay far off the latency budget. Prints MB/s; run with
//! `cargo bench --bench redact`.

use std::path::Path;
use std::time::{Duration, Instant};

use mira::redact::redact;

const TARGET: usize = 10 * 1024 * 1024;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/redact");
    let mut code = Vec::new();
    for sub in ["python", "rust", "javascript"] {
        let mut files: Vec<_> = std::fs::read_dir(dir.join("clean").join(sub))
            .expect("clean fixtures")
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for f in files {
            code.extend(
                std::fs::read_to_string(f)
                    .unwrap()
                    .lines()
                    .map(str::to_owned),
            );
        }
    }
    let secrets: Vec<String> = std::fs::read_to_string(dir.join("secrets.txt"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.replace("{{", "").replace("}}", ""))
        .collect();

    let (mut mixed, mut clean) = (String::with_capacity(TARGET + 4096), String::new());
    let (mut i, mut s) = (0, 0);
    while mixed.len() < TARGET {
        let line = &code[i % code.len()];
        mixed.push_str(line);
        mixed.push('\n');
        if clean.len() < TARGET {
            clean.push_str(line);
            clean.push('\n');
        }
        i += 1;
        if i % 50 == 0 {
            mixed.push_str(&secrets[s % secrets.len()]);
            mixed.push('\n');
            s += 1;
        }
    }

    for (name, text) in [("mixed", &mixed), ("clean code", &clean)] {
        let out = redact(text);
        let redactions = out.matches("[REDACTED:").count();
        let (mut wall, mut cpu) = (Vec::new(), Vec::new());
        for _ in 0..9 {
            let (t, c) = (Instant::now(), on_cpu());
            std::hint::black_box(redact(std::hint::black_box(text)));
            wall.push(t.elapsed());
            cpu.push(on_cpu().zip(c).map(|(after, before)| after - before));
        }
        wall.sort();
        let mb = text.len() as f64 / 1_000_000.0;
        let median = wall[wall.len() / 2];
        print!(
            "redact {name}: {mb:.1} MB, {redactions} redactions; wall median {:.1} ms = {:.0} MB/s (best {:.0} MB/s)",
            median.as_secs_f64() * 1000.0,
            mb / median.as_secs_f64(),
            mb / wall[0].as_secs_f64(),
        );
        let mut cpu: Vec<Duration> = cpu.into_iter().flatten().collect();
        if cpu.len() == wall.len() {
            cpu.sort();
            print!(
                "; on-CPU median {:.0} MB/s",
                mb / cpu[cpu.len() / 2].as_secs_f64()
            );
        }
        println!();
    }
}

/// Time this thread spent on a CPU (Linux schedstat), so a busy shared machine does not hide
/// the figure; `None` elsewhere.
fn on_cpu() -> Option<Duration> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(Duration::from_nanos(
        s.split_whitespace().next()?.parse().ok()?,
    ))
}
