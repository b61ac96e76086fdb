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
    ("session", 70),
    // Composes the sections each module owns (`llm`'s `[provider]`, `index`'s `[index]`,
    // `agent`'s `[agent]`, …) and builds what needs several of them, so sits above them all.
    ("config", 65),
    ("agent", 60),
    ("complete", 60),
    ("index", 50),
    ("memory", 50),
    ("llm", 40),
    ("store", 40),
    ("embed", 40),
    ("documents", 20),
    ("project", 20),
    ("redact", 20),
    ("sensitive", 20),
    ("text", 20),
    ("fusion", 20),
    ("crashlog", 20),
    // The C libraries' allocator, installed by `main` (and the benches) before anything else.
    ("c_alloc", 20),
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
                "src/{module} has no floor: add it to FLOORS in tests/it/tidy.rs and to ARCHITECTURE.md"
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
                    "{} refers to `{used}`, which has no floor in tests/it/tidy.rs",
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

/// The adapter translates: SQL is the library's. `src/lsp` names no `rusqlite` and takes from
/// `store` only the `Store` handle it passes on; the session layer reads and writes.
#[test]
fn the_lsp_adapter_does_no_sql() {
    let mut files = Vec::new();
    rust_files(&repo().join("src/lsp"), &mut files);
    assert!(files.len() > 10, "is src/lsp where it was?");
    let mut bad = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let sql = code.contains("rusqlite")
                || code.match_indices("store::").any(|(at, _)| {
                    let before = code[..at].chars().last();
                    let path_start = !before.is_some_and(|c| c.is_alphanumeric() || c == '_');
                    path_start && !code[at + "store::".len()..].starts_with("Store")
                });
            if sql {
                let rel = f.strip_prefix(repo()).unwrap().display();
                bad.push(format!("{rel}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "src/lsp reaches into the store (move the SQL into the library, e.g. src/session):\n{}",
        bad.join("\n")
    );
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

/// The protocol line (ARCHITECTURE.md, "API boundary"): only the LSP adapter and
/// `documents`, its mirror of the editor's buffers, name LSP types or LSP positions. Below
/// them the library speaks paths, `DocId`s and byte offsets; `lsp/from_proto.rs` and
/// `lsp/to_proto.rs` convert.
const PROTOCOL_SIDE: &[&str] = &["lsp", "documents"];

/// The crates of LSP types, and what `documents` offers the adapter alone: encodings,
/// positions and URIs.
const PROTOCOL_NAMES: &[&str] = &[
    "tower_lsp_server",
    "lsp_types",
    "ls_types",
    "PositionEncoding",
    "position_to_byte",
    "position_to_char",
    "byte_to_position",
    "char_to_position",
    "uri_to_path",
    "path_to_uri",
    "LineIndex",
    "apply_change",
];

/// The protocol names a source text uses in code (whole identifiers, comments skipped).
fn protocol_names(src: &str) -> BTreeSet<&'static str> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = BTreeSet::new();
    for line in src.lines() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        for name in PROTOCOL_NAMES {
            let whole = code.match_indices(name).any(|(i, _)| {
                !code[..i].chars().last().is_some_and(ident)
                    && !code[i + name.len()..].chars().next().is_some_and(ident)
            });
            if whole {
                out.insert(*name);
            }
        }
    }
    out
}

#[test]
fn no_lsp_type_below_the_adapter() {
    let src = repo().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut bad = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        if PROTOCOL_SIDE.contains(&top.trim_end_matches(".rs")) {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for name in protocol_names(&text) {
            bad.push(format!("src/{} uses `{name}`", rel.display()));
        }
    }
    assert!(
        bad.is_empty(),
        "LSP types and positions belong to src/lsp (convert in lsp/from_proto.rs and \
         lsp/to_proto.rs; the library takes paths, DocIds and byte offsets):\n{}",
        bad.join("\n")
    );
}

/// Inside the adapter, positions and URIs are converted in one place each way
/// (`lsp/from_proto.rs`, `lsp/to_proto.rs`), never by a handler calling `documents` itself.
#[test]
fn the_adapter_converts_positions_and_uris_only_in_from_proto_and_to_proto() {
    let lsp = repo().join("src/lsp");
    let mut files = Vec::new();
    rust_files(&lsp, &mut files);
    let converters = [
        "position_to_byte",
        "position_to_char",
        "byte_to_position",
        "char_to_position",
        "uri_to_path",
        "path_to_uri",
    ];
    let mut bad = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&lsp).unwrap().display().to_string();
        if rel == "from_proto.rs" || rel == "to_proto.rs" {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for name in protocol_names(&text) {
            if converters.contains(&name) {
                bad.push(format!("src/lsp/{rel} calls `{name}`"));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "convert through lsp/from_proto.rs or lsp/to_proto.rs:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_protocol_scan_sees_lsp_names_and_not_their_neighbours() {
    let found = protocol_names(
        "use tower_lsp_server::ls_types::Uri;\n\
         // PositionEncoding in a comment\n\
         let p = crate::documents::file_uri_to_path(s); let e = PositionEncoding::Utf8;",
    );
    assert_eq!(
        found,
        BTreeSet::from(["tower_lsp_server", "ls_types", "PositionEncoding"])
    );
}

/// The first path segments a source text names after `root` (`super::`, `crate::lsp::`),
/// plain or grouped (`super::{a, b::c}`), comments skipped.
fn segments_after(src: &str, root: &str) -> BTreeSet<String> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = BTreeSet::new();
    for line in src.lines() {
        let t = line.trim_start();
        if t.starts_with("//") {
            continue;
        }
        let mut rest = t;
        while let Some(i) = rest.find(root) {
            let before = rest[..i].chars().last();
            rest = &rest[i + root.len()..];
            if before.is_some_and(|c| ident(c) || c == ':') {
                continue;
            }
            if let Some(group) = rest.strip_prefix('{') {
                let mut depth = 1;
                let mut item = String::new();
                let mut first = true;
                for c in group.chars() {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        ',' if depth == 1 => {
                            if first && !item.is_empty() {
                                out.insert(std::mem::take(&mut item));
                            }
                            item.clear();
                            first = true;
                            continue;
                        }
                        _ => {}
                    }
                    if depth == 0 {
                        break;
                    }
                    if depth == 1 && first {
                        if ident(c) {
                            item.push(c);
                        } else if !item.is_empty() {
                            out.insert(std::mem::take(&mut item));
                            first = false;
                        }
                    }
                }
                if first && !item.is_empty() {
                    out.insert(item);
                }
            } else {
                let name: String = rest.chars().take_while(|c| ident(*c)).collect();
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        }
    }
    out
}

/// Import edges between the modules of `src/lsp` (a module is a file or folder directly in
/// it): `from` names `to` through `super::`, `super::super::` or `crate::lsp::`.
fn lsp_edges() -> BTreeSet<(String, String)> {
    let lsp = repo().join("src/lsp");
    let mut files = Vec::new();
    rust_files(&lsp, &mut files);
    let module_of = |f: &Path| -> String {
        let rel = f.strip_prefix(&lsp).unwrap();
        let first = rel.components().next().unwrap().as_os_str();
        first.to_string_lossy().trim_end_matches(".rs").to_string()
    };
    let modules: BTreeSet<String> = files
        .iter()
        .map(|f| module_of(f))
        .filter(|m| m != "mod")
        .collect();
    let mut edges = BTreeSet::new();
    for f in &files {
        let from = module_of(f);
        if from == "mod" {
            continue;
        }
        let depth = f.strip_prefix(&lsp).unwrap().components().count();
        let is_mod = f.file_name().is_some_and(|n| n == "mod.rs");
        // In `lsp/chat/host.rs`, `super::` is `chat`; `lsp` is `super::super::`.
        let roots: &[&str] = if depth == 1 || (depth == 2 && is_mod) {
            &["super::", "crate::lsp::"]
        } else {
            &["super::super::", "crate::lsp::"]
        };
        let text = std::fs::read_to_string(f).unwrap();
        for root in roots {
            for to in segments_after(&text, root) {
                if to != from && modules.contains(&to) {
                    edges.insert((from.clone(), to));
                }
            }
        }
    }
    edges
}

/// The groups of modules that import each other round a cycle (Tarjan's strongly connected
/// components with more than one module).
fn cycles(edges: &BTreeSet<(String, String)>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        edges: &'a BTreeSet<(String, String)>,
        index: std::collections::BTreeMap<&'a str, (usize, usize)>,
        stack: Vec<&'a str>,
        out: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            let i = self.index.len();
            self.index.insert(v, (i, i));
            self.stack.push(v);
            let next: Vec<&'a str> = self
                .edges
                .iter()
                .filter(|(a, _)| a == v)
                .map(|(_, b)| b.as_str())
                .collect();
            for w in next {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.index[v].1.min(self.index[w].1);
                    self.index.get_mut(v).unwrap().1 = low;
                } else if self.stack.contains(&w) {
                    let low = self.index[v].1.min(self.index[w].0);
                    self.index.get_mut(v).unwrap().1 = low;
                }
            }
            if self.index[v].0 == self.index[v].1 {
                let mut group = Vec::new();
                while let Some(w) = self.stack.pop() {
                    group.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if group.len() > 1 {
                    group.sort();
                    self.out.push(group);
                }
            }
        }
    }
    let mut walk = Walk {
        edges,
        index: Default::default(),
        stack: Vec::new(),
        out: Vec::new(),
    };
    let nodes: BTreeSet<&str> = edges
        .iter()
        .flat_map(|(a, b)| [a.as_str(), b.as_str()])
        .collect();
    for n in nodes {
        if !walk.index.contains_key(n) {
            walk.visit(n);
        }
    }
    walk.out
}

/// Inside the adapter, imports point one way too: `dispatch.rs` (the `LanguageServer` impl)
/// reaches the feature files, they reach `state.rs` and the conversions, and nothing reaches
/// back. `ServerState` holds library services and small slots defined beside it, never a
/// feature file's type.
#[test]
fn the_lsp_modules_import_each_other_without_a_cycle() {
    let edges = lsp_edges();
    assert!(
        edges.len() > 20,
        "only {} import edges inside src/lsp: does the scanner still see them?",
        edges.len()
    );
    let found = cycles(&edges);
    let on_cycles: Vec<String> = edges
        .iter()
        .filter(|(a, b)| found.iter().any(|g| g.contains(a) && g.contains(b)))
        .map(|(a, b)| format!("{a} → {b}"))
        .collect();
    assert_eq!(
        found.len(),
        0,
        "modules of src/lsp import each other round a cycle: {found:?}\n{}",
        on_cycles.join("\n")
    );
}

/// `Backend` is extended in one file: every other handler is a free function over the state.
#[test]
fn only_dispatch_rs_implements_backend() {
    let mut files = Vec::new();
    rust_files(&repo().join("src/lsp"), &mut files);
    let mut bad = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(repo()).unwrap().display().to_string();
        if rel == "src/lsp/dispatch.rs" {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for (i, line) in text.lines().enumerate() {
            let words: Vec<&str> = line.split_whitespace().collect();
            let names_backend =
                |w: &&str| w.trim_end_matches('{').rsplit("::").next() == Some("Backend");
            if words.first() == Some(&"impl") && words.iter().any(names_backend) {
                bad.push(format!("{rel}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The dispatch table only forwards: each method's body is one call to its handler (the
/// handlers are free functions in the feature modules, rust-analyzer's `handlers/dispatch.rs`).
fn long_dispatch_entries(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut long = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim_start();
        let is_fn = ["fn ", "async fn ", "pub fn ", "pub async fn "]
            .iter()
            .any(|p| t.starts_with(p));
        // `build` is the table of Mira's own methods itself.
        if !is_fn || t.starts_with("pub fn build(") {
            i += 1;
            continue;
        }
        let indent = lines[i].len() - t.len();
        let open = (i..lines.len()).find(|&k| lines[k].trim_end().ends_with('{'));
        let close = open.and_then(|o| {
            (o + 1..lines.len())
                .find(|&k| lines[k].trim_end() == format!("{}}}", " ".repeat(indent)))
        });
        if let (Some(o), Some(c)) = (open, close) {
            let body = c - o - 1;
            // One call; `Backend::new` builds the state.
            if body > 1 && !t.starts_with("fn new(") {
                long.push(format!("line {}: {} ({body} lines)", i + 1, t));
            }
            i = c + 1;
        } else {
            i += 1;
        }
    }
    long
}

#[test]
fn the_dispatch_table_only_forwards_to_handlers() {
    let text = read("src/lsp/dispatch.rs");
    let long = long_dispatch_entries(&text);
    assert!(
        long.is_empty(),
        "dispatch.rs entries with logic in them: {long:#?}"
    );
    assert!(
        text.matches("async fn ").count() > 20,
        "the scanner sees too few entries in dispatch.rs"
    );
    // A handler body written into the table is what the test is for.
    let inline = "impl X {\n    async fn hover(&self) {\n        let a = 1;\n        go(a).await\n    }\n}\n";
    assert_eq!(long_dispatch_entries(inline).len(), 1);
}

#[test]
fn the_cycle_finder_sees_a_cycle_and_the_segment_scanner_sees_groups() {
    let edge = |a: &str, b: &str| (a.to_string(), b.to_string());
    let edges = BTreeSet::from([
        edge("server", "chat"),
        edge("chat", "state"),
        edge("state", "chat"),
        edge("chat", "to_proto"),
    ]);
    assert_eq!(cycles(&edges), [["chat", "state"]]);
    let found = segments_after(
        "use super::{from_proto, state::{A, B}};\n// super::server\nlet x = super::chat::y();",
        "super::",
    );
    let want: BTreeSet<String> = ["from_proto", "state", "chat"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(found, want);
}

/// `println!` panics on a closed stdout; `main` must install the hook that turns exactly that
/// panic into a quiet exit before anything prints (`cli::pipe`, tested in tests/it/cli.rs).
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

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The floors line ARCHITECTURE.md must hold, generated from `FLOORS`.
fn floors_line() -> String {
    let mut by: std::collections::BTreeMap<u8, Vec<&str>> = Default::default();
    for (m, f) in FLOORS {
        by.entry(*f).or_default().push(m);
    }
    let floors: Vec<String> = by
        .into_values()
        .map(|mut v| {
            v.sort();
            v.join(", ")
        })
        .collect();
    format!("Floors (bottom → top): {}", floors.join(" | "))
}

#[test]
fn architecture_states_the_floors_this_test_enforces() {
    let arch = read("ARCHITECTURE.md");
    let stated: Vec<&str> = arch
        .lines()
        .filter(|l| l.starts_with("Floors (bottom → top): "))
        .collect();
    assert_eq!(
        stated,
        [floors_line().as_str()],
        "ARCHITECTURE.md's floors line must be exactly the one FLOORS generates"
    );
}

#[test]
fn every_source_file_opens_with_its_purpose() {
    let mut files = Vec::new();
    rust_files(&repo().join("src"), &mut files);
    let missing: Vec<String> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            !text.starts_with("//!")
        })
        .map(|f| f.strip_prefix(repo()).unwrap().display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "source files without a `//!` comment saying what they are for: {missing:?}"
    );
}

/// FNV-1a: a digest that stays the same across Rust releases (`DefaultHasher` may not).
fn fnv1a(text: &str) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}")
}

/// The command types: names, argument structs and the command enum — everything in
/// `src/lsp/ext.rs` above its error type — with blank lines and indentation
/// ignored, so that only a change of meaning asks for the contract to change.
fn command_types_digest() -> String {
    let src = read("src/lsp/ext.rs");
    let types = src
        .split("pub enum CommandError")
        .next()
        .expect("commands.rs declares CommandError");
    let normalised: Vec<&str> = types
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    fnv1a(&normalised.join("\n"))
}

#[test]
fn the_lsp_contract_changes_when_the_command_types_do() {
    let contract = read("docs/lsp-contract.md");
    let digest = command_types_digest();
    let marker = format!("<!-- command types digest: {digest} -->");
    assert!(
        contract.contains(&marker),
        "the command types in src/lsp/ext.rs changed: update docs/lsp-contract.md \
         to match, then set its digest line to `{marker}`"
    );
    for name in mira::lsp::ext::COMMANDS {
        assert!(
            contract.contains(&format!("`{name}`")),
            "docs/lsp-contract.md does not document `{name}`"
        );
    }
}

/// Comments cite only what a reader of the repository can open.
#[test]
fn no_comment_cites_a_document_outside_the_repository() {
    let mut files = Vec::new();
    for dir in ["src", "tests", "benches", "examples"] {
        rust_files(&repo().join(dir), &mut files);
    }
    let mut bad = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            let Some(at) = line.find("//") else { continue };
            let comment = &line[at..];
            // The team's planning documents live outside the repository; a repository
            // document is cited by its path (`docs/guide.md`, ARCHITECTURE.md).
            let cites_outside = ["DESIGN", "../shared", "design-review", "shared/reference"]
                .iter()
                .any(|n| comment.contains(n))
                || comment
                    .split(|c: char| !(c.is_alphanumeric() || "._-/".contains(c)))
                    .filter(|w| w.starts_with("docs/") && w.ends_with(".md"))
                    .any(|w| !repo().join(w).is_file());
            if cites_outside {
                let rel = f.strip_prefix(repo()).unwrap().display();
                bad.push(format!("{rel}:{}: {}", i + 1, comment.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "comments citing documents that are not in the repository:\n{}",
        bad.join("\n")
    );
}

/// One definition per tool schema: a tool's arguments are one type, and the schemas the model
/// and MCP see are derived from it (`agent/tools/schema.rs`), never written by hand.
#[test]
fn every_tool_schema_is_derived_from_the_one_type_its_tool_parses() {
    let mut files = Vec::new();
    rust_files(&repo().join("src"), &mut files);
    let derive_path = repo().join("src/agent/tools/schema.rs");
    let mut bad = Vec::new();
    let mut tool_impls = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let rel = f.strip_prefix(repo()).unwrap().display().to_string();
        for (i, line) in text.lines().enumerate() {
            let code: String = line
                .split("//")
                .next()
                .unwrap_or("")
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect();
            let literal = ["\"type\":\"object\"", "\"properties\":{", "\"required\":["]
                .iter()
                .any(|k| code.contains(k));
            if literal && *f != derive_path {
                bad.push(format!(
                    "{rel}:{}: a hand-written schema: {}",
                    i + 1,
                    line.trim()
                ));
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            if code.starts_with("impl") && words.windows(2).any(|w| w == ["Tool", "for"]) {
                tool_impls.push(format!("{rel}: {}", line.trim()));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // Every tool goes through `TypedTool`, whose one blanket impl derives `parameters()` from
    // the type `run` parses.
    assert_eq!(
        tool_impls,
        ["src/agent/tools/mod.rs: impl<T: TypedTool> Tool for T {"],
        "a tool implementing `Tool` by hand has a schema and a parser of its own"
    );
    // MCP's tools of the model's tool names take that tool's argument type: no second struct.
    let mcp = read("src/mcp/server.rs");
    let tools: Vec<&str> = mira::agent::tools::Registry::standard().names().collect();
    let mut checked = 0;
    for (name, rest) in mcp
        .split("async fn ")
        .skip(1)
        .filter_map(|s| s.split_once('('))
    {
        if !tools.contains(&name) {
            continue;
        }
        let camel: String = name
            .split('_')
            .map(|w| w[..1].to_uppercase() + &w[1..])
            .collect();
        let params = rest.split("->").next().unwrap_or("");
        assert!(
            params.contains(&format!("Parameters<tools::{camel}Args>")),
            "MCP's `{name}` must take the model's `tools::{camel}Args`: {params}"
        );
        checked += 1;
    }
    assert!(
        checked >= 8,
        "found {checked} MCP tools that share the model's names"
    );
}

/// One type per concept: the vocabulary `llm` and `memory` own (reasoning effort, prices,
/// provider names, memory kinds) has no mirror in `config`, the command contract or a tool,
/// and each configuration section lives in the module that reads it.
#[test]
fn each_shared_concept_is_one_type_in_the_module_that_owns_it() {
    let mut files = Vec::new();
    rust_files(&repo().join("src"), &mut files);
    let mut types = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(repo()).unwrap().display().to_string();
        let text = std::fs::read_to_string(f).unwrap_or_default();
        for line in text.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            if let Some(i) = words.iter().position(|w| *w == "enum" || *w == "struct")
                && words[..i].iter().all(|w| w.starts_with("pub"))
                && let Some(name) = words.get(i + 1)
            {
                let name: String = name.chars().take_while(|c| c.is_alphanumeric()).collect();
                types.push((name, rel.clone()));
            }
        }
    }
    let like = |pred: &dyn Fn(&str) -> bool| -> Vec<String> {
        let mut v: Vec<String> = types
            .iter()
            .filter(|(n, _)| pred(n))
            .map(|(n, f)| format!("{n} in {f}"))
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        like(&|n| n.contains("Effort")),
        ["Effort in src/llm/mod.rs"]
    );
    assert_eq!(
        like(&|n| n.contains("Price")),
        [
            "Price in src/llm/price.rs",
            "PriceTable in src/llm/price.rs"
        ]
    );
    assert_eq!(
        like(&|n| n.contains("MemoryKind") || n.ends_with("KindArg")),
        ["MemoryKind in src/memory/model.rs"]
    );
    // The wire format and the name a user configures are two concepts, both `llm`'s.
    assert_eq!(
        like(&|n| n.starts_with("Provider") && (n.ends_with("Kind") || n.ends_with("Name"))),
        [
            "ProviderKind in src/llm/settings.rs",
            "ProviderName in src/llm/settings.rs"
        ]
    );
    // Each configuration section is the type of the module that reads it; `config` only
    // composes them (and keeps `[store]` and `[log]`, which no module below it reads).
    assert_eq!(
        // (`BertConfig` is MiniLM's model file, not a section.)
        like(&|n| n.ends_with("Config") && n != "BertConfig"),
        [
            "AgentConfig in src/agent/config.rs",
            "CompletionConfig in src/complete/config.rs",
            "Config in src/config/sections.rs",
            "EditsConfig in src/agent/config.rs",
            "EmbedderConfig in src/embed/settings.rs",
            "IndexConfig in src/index/config.rs",
            "LogConfig in src/config/sections.rs",
            "MemoryConfig in src/memory/config.rs",
            "ProviderConfig in src/llm/settings.rs",
            "StoreConfig in src/config/sections.rs"
        ]
    );
}
