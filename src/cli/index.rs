//! `mira index [PATH]` and `mira symbols QUERY`.

use mira::config::Loaded;
use mira::index::crawl::{CrawlOptions, CrawlProgress, CrawlStage, CrawlStats};
use mira::index::{SymbolKind, offline};
use mira::project::Project;
use mira::session::{Workspace, anchors, code};
use std::process::ExitCode;
use tokio::runtime::Runtime;

use super::{CliError, CliResult};
use mira::store::Store;
use std::io::IsTerminal;
use std::path::PathBuf;

fn crawl(
    project: &Project,
    loaded: &Loaded,
    store: &Store,
    quiet: bool,
) -> Result<CrawlStats, CliError> {
    let opts = CrawlOptions::from_config(&loaded.config.index);
    let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
        let b = indicatif::ProgressBar::new(0);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} indexing {msg} [{bar:30}] {pos}/{len} files {elapsed}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        b
    });
    let last_line = std::sync::Mutex::new(std::time::Instant::now());
    let started = std::time::Instant::now();
    let progress = |p: CrawlProgress| {
        let stage = match p.stage {
            CrawlStage::Symbols => "symbols",
            CrawlStage::References => "references",
            CrawlStage::Search => "code search",
        };
        let symbols_done = p.symbols_just_stored();
        match &bar {
            Some(b) => {
                if symbols_done {
                    b.println(format!(
                        "symbols ready in {:.2}s",
                        started.elapsed().as_secs_f64()
                    ));
                }
                b.set_message(stage);
                b.set_length(p.total as u64);
                b.set_position(p.done as u64);
            }
            None if !quiet => {
                // Plain lines when not a terminal, at most one a second.
                let mut last = last_line.lock().unwrap_or_else(|e| e.into_inner());
                if symbols_done {
                    eprintln!(
                        "indexing: symbols ready in {:.2}s",
                        started.elapsed().as_secs_f64()
                    );
                }
                if p.done == p.total || last.elapsed().as_secs() >= 1 {
                    eprintln!("indexing {stage}: {}/{} files", p.done, p.total);
                    *last = std::time::Instant::now();
                }
            }
            None => {}
        }
    };
    let result = offline::index_project(store, project, &opts, &progress);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    result.map_err(|e| CliError::failure(format!("indexing failed: {e}")))
}

pub fn index(rt: &Runtime, path: Option<PathBuf>) -> CliResult {
    let ws = super::open(path)?;
    let (project, store) = (&ws.project, &ws.store);
    let stats = crawl(project, &ws.loaded, store, false)?;
    println!(
        "project   {} ({})",
        project.root.display(),
        project.detection
    );
    println!(
        "files     {} ({} parsed, {} unchanged, {} removed)",
        stats.files, stats.parsed, stats.unchanged, stats.removed
    );
    println!("lines     {}", stats.lines);
    println!("symbols   {}", stats.symbols);
    println!("skipped   {}", stats.skipped.len());
    for s in &stats.skipped {
        println!("  {}: {}", s.path, s.reason);
    }
    println!(
        "seconds   {:.2} (symbols ready at {:.2}; code search for {} files after)",
        stats.elapsed.as_secs_f64(),
        stats.stored_elapsed.as_secs_f64(),
        stats.chunked
    );
    match anchors::observe_on_disk(store, project) {
        Ok(0) => {}
        Ok(n) => println!("anchors   {n} memories about code changed state (see `mira recall`)"),
        Err(e) => eprintln!("mira: cannot check anchored memories: {e}"),
    }
    embed_chunks(rt, &ws);
    Ok(ExitCode::SUCCESS)
}

/// Code search ranks by meaning too: embed the chunks that have no vector yet (only what
/// changed, after the first run) with the built-in code model, and with the configured
/// embedder when it embeds code. Never fails the command: code search falls back to
/// full-text search.
fn embed_chunks(rt: &Runtime, ws: &Workspace) {
    let (project, store) = (&ws.project, &ws.store);
    let configured = match ws.memory().map(|m| m.embedder()) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("mira: vectors of a configured embedder skipped: {e}");
            None
        }
    };
    for embedder in code::code_embedders(configured.as_ref()) {
        let started = std::time::Instant::now();
        match rt.block_on(code::embed_code(store, &embedder, &project.root)) {
            // Nothing was missing: every chunk has its vector from an earlier run.
            Ok(None | Some(0)) => {}
            Ok(Some(n)) => {
                println!(
                    "vectors   {n} chunks embedded with {} ({:.2} s)",
                    embedder.model_id(),
                    started.elapsed().as_secs_f64()
                );
            }
            Err(e) => {
                eprintln!(
                    "mira: code vectors of {} incomplete ({e}); code search uses full-text search \
                     for the rest until the next `mira index`",
                    embedder.model_id()
                );
            }
        }
    }
}

pub fn symbols(
    query: String,
    kind: Option<String>,
    json: bool,
    limit: usize,
    path: Option<PathBuf>,
) -> CliResult {
    let kind = kind
        .map(|k| k.parse::<SymbolKind>())
        .transpose()
        .map_err(|e| CliError::usage(e.to_string()))?;
    let ws = super::open(path)?;
    let project = &ws.project;
    // Incremental: on an indexed project this only stats files.
    crawl(project, &ws.loaded, &ws.store, true)?;
    let hits = offline::search_project(&ws.store, project, &query, kind, limit)
        .map_err(|e| CliError::failure(e.to_string()))?;
    if json {
        let hits: Vec<SymbolJson<'_>> = hits.iter().map(SymbolJson::of).collect();
        let s =
            serde_json::to_string_pretty(&hits).map_err(|e| CliError::failure(e.to_string()))?;
        println!("{s}");
        return Ok(ExitCode::SUCCESS);
    }
    if hits.is_empty() {
        eprintln!("no symbols match `{query}`");
        return Ok(ExitCode::FAILURE);
    }
    for h in &hits {
        let rel = h.path.strip_prefix(&project.root).unwrap_or(&h.path);
        let name = match &h.container {
            Some(c) => format!("{c} › {}", h.name),
            None => h.name.clone(),
        };
        println!(
            "{:<11} {:<40} {}:{}:{}  {}",
            h.kind.as_str(),
            name,
            rel.display(),
            h.selection.start.row + 1,
            h.selection.start.col + 1,
            h.signature
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `mira symbols --json`: a symbol with LSP-shaped ranges (zero-based line, UTF-8 column),
/// the shape scripts read.
#[derive(serde::Serialize)]
struct SymbolJson<'a> {
    name: &'a str,
    kind: SymbolKind,
    container: &'a Option<String>,
    path: &'a std::path::Path,
    range: RangeJson,
    selection: RangeJson,
    signature: &'a str,
    doc: &'a Option<String>,
    declaration: bool,
}

#[derive(serde::Serialize)]
struct RangeJson {
    start: PositionJson,
    end: PositionJson,
}

#[derive(serde::Serialize)]
struct PositionJson {
    line: u32,
    character: u32,
}

impl<'a> SymbolJson<'a> {
    fn of(s: &'a mira::index::SymbolInfo) -> SymbolJson<'a> {
        let range = |span: &mira::index::Span| RangeJson {
            start: PositionJson {
                line: span.start.row,
                character: span.start.col,
            },
            end: PositionJson {
                line: span.end.row,
                character: span.end.col,
            },
        };
        SymbolJson {
            name: &s.name,
            kind: s.kind,
            container: &s.container,
            path: &s.path,
            range: range(&s.range),
            selection: range(&s.selection),
            signature: &s.signature,
            doc: &s.doc,
            declaration: s.declaration,
        }
    }
}
