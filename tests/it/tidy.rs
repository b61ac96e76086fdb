//! House rules checked on the source (rust-analyzer's "tidy" tests): a module imports only
//! from floors below its own (ARCHITECTURE.md, "Code map").

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// ARCHITECTURE's floors, top to bottom: higher numbers may import lower ones, never the
/// reverse, and modules on one floor not from each other.
const FLOORS: &[(&str, u8)] = &[
    ("cli", 90),
    // Log setup for the binary (`main` and `cli`): reads the config.
    ("logging", 85),
    ("lsp", 80),
    ("mcp", 80),
    ("surface", 70),
    ("agent", 60),
    ("complete", 60),
    ("index", 50),
    ("memory", 50),
    ("llm", 40),
    ("store", 40),
    ("embed", 40),
    ("config", 30),
    ("documents", 20),
    ("project", 20),
    ("redact", 20),
    ("sensitive", 20),
    ("text", 20),
    ("fusion", 20),
    ("crashlog", 20),
];

fn floor(module: &str) -> Option<u8> {
    FLOORS.iter().find(|(m, _)| *m == module).map(|(_, f)| *f)
}

/// The top-level modules a source text refers to through `crate::` or `mira::`.
fn referenced(src: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in src.lines() {
        let t = line.trim_start();
        if t.starts_with("//") {
            continue;
        }
        for root in ["crate::", "mira::"] {
            let mut rest = t;
            while let Some(i) = rest.find(root) {
                // `mira::` only as a path start, not inside another identifier.
                let before = rest[..i].chars().last();
                rest = &rest[i + root.len()..];
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                if let Some(group) = rest.strip_prefix('{') {
                    // `use crate::{a::b, c}`: the first segment of each item at depth 1.
                    let mut depth = 1;
                    let mut item = String::new();
                    let mut first = true;
                    for c in group.chars() {
                        match c {
                            '{' => depth += 1,
                            '}' => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            ',' if depth == 1 => {
                                first = true;
                                item.clear();
                                continue;
                            }
                            _ => {}
                        }
                        if depth == 1 && first {
                            if c.is_alphanumeric() || c == '_' {
                                item.push(c);
                            } else if !item.is_empty() {
                                out.insert(item.clone());
                                first = false;
                            }
                        }
                    }
                    if first && !item.is_empty() {
                        out.insert(item);
                    }
                } else {
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        out.insert(name);
                    }
                }
            }
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn modules_import_only_from_floors_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut problems = Vec::new();
    let mut checked = 0;
    for file in files {
        let rel = file.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        if matches!(module.as_str(), "lib" | "main") {
            continue;
        }
        let Some(own) = floor(&module) else {
            problems.push(format!(
                "src/{module} has no floor: add it to FLOORS in tests/tidy.rs and to ARCHITECTURE.md"
            ));
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap();
        for used in referenced(&text) {
            if used == module || used == "self" || used == "super" {
                continue;
            }
            match floor(&used) {
                Some(f) if f < own => {}
                Some(_) => problems.push(format!(
                    "{} ({module}) imports `{used}`, which is not on a floor below",
                    rel.display()
                )),
                None => problems.push(format!(
                    "{} refers to `{used}`, which has no floor in tests/tidy.rs",
                    rel.display()
                )),
            }
        }
        checked += 1;
    }
    assert!(
        checked > 100,
        "only {checked} files checked: is src/ where it was?"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_scanner_sees_grouped_and_plain_imports_and_skips_comments() {
    let found = referenced(
        "use crate::{index::Related, memory::{anchors, Memory}, store};\n\
         // crate::cli in a comment\n\
         let x = crate::agent::run();\n\
         use mira::lsp::serve; let y = my_mira::no;",
    );
    let want: BTreeSet<String> = ["index", "memory", "store", "agent", "lsp"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(found, want);
}

/// `println!` panics on a closed stdout; `main` must install the hook that turns exactly that
/// panic into a quiet exit before anything prints (`cli::pipe`, tested in tests/cli.rs).
#[test]
fn the_binary_cannot_panic_on_a_closed_stdout() {
    let main =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/main.rs")).unwrap();
    let body = &main[main.find("fn main()").expect("fn main")..];
    let first = body.lines().nth(1).map(str::trim).unwrap_or_default();
    assert_eq!(
        first, "cli::pipe::quiet_on_broken_pipe();",
        "main() must install the broken-pipe hook first"
    );
}
