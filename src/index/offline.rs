//! The index without a language server: what `mira index` and `mira symbols` call.

use super::crawl::{self, CrawlOptions, CrawlProgress, CrawlStats};
use super::db;
use super::model::SymbolKind;
use super::registry::Lang;
use super::service::SymbolInfo;
use super::table::SymbolTable;
use crate::project::Project;
use crate::store::{Store, StoreError, projects};
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("index database error: {0}")]
    Sql(#[from] rusqlite::Error),
}

/// Brings the project's persisted index up to date (parsing only what changed).
pub fn index_project(
    store: &Store,
    project: &Project,
    opts: &CrawlOptions,
    progress: &(dyn Fn(CrawlProgress) + Sync),
) -> Result<CrawlStats, IndexError> {
    let mut conn = store.connect()?;
    let project_id = projects::ensure(&conn, &project.root, &project.name)?;
    Ok(crawl::crawl(
        &mut conn,
        project_id,
        &project.root,
        opts,
        progress,
        &|_| {},
    )?)
}

/// Fuzzy symbol search over the project's persisted index, best first.
pub fn search_project(
    store: &Store,
    project: &Project,
    query: &str,
    kind: Option<SymbolKind>,
    limit: usize,
) -> Result<Vec<SymbolInfo>, IndexError> {
    let conn = store.connect()?;
    let project_id = projects::ensure(&conn, &project.root, &project.name)?;
    let mut table = SymbolTable::default();
    for f in db::load_project(&conn, project_id)? {
        if let Some(lang) = Lang::by_name(&f.language) {
            table.upsert(f.path, lang, f.ascii, Arc::new(f.symbols));
        }
    }
    let hits = table.search(query, kind, limit);
    Ok(hits
        .into_iter()
        .map(|h| SymbolInfo::from_hit(&h, &project.root))
        .collect())
}

/// A symbol a note about code is anchored to, found without a language server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiskAnchor {
    /// Project-relative path.
    pub path: String,
    pub symbol: String,
    pub content_hash: String,
}

/// The innermost symbol enclosing 1-based `line` of `file` (`mira remember --at path:line`).
pub fn enclosing_on_disk(
    root: &std::path::Path,
    file: &std::path::Path,
    line: u32,
) -> Result<DiskAnchor, String> {
    let abs = file
        .canonicalize()
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let lang = Lang::for_path(&abs)
        .ok_or_else(|| format!("{} is not a language Mira indexes", file.display()))?;
    let bytes = std::fs::read(&abs).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let lines = crawl::count_lines(&bytes);
    if line == 0 || line > lines.max(1) {
        return Err(format!(
            "line {line} is past the end of {} ({lines} lines)",
            file.display()
        ));
    }
    let syms = super::parse::parse_and_extract(lang, &bytes)
        .ok_or_else(|| format!("cannot parse {}", file.display()))?;
    let row = line - 1;
    let index = (0..syms.symbols.len())
        .rev()
        .find(|&i| {
            let r = &syms.symbols[i].range;
            r.start.row <= row && row <= r.end.row
        })
        .ok_or_else(|| {
            format!(
                "no function, method or type encloses {}:{line}",
                file.display()
            )
        })?;
    let s = &syms.symbols[index];
    let code = &bytes[s.range.start_byte as usize..(s.range.end_byte as usize).min(bytes.len())];
    Ok(DiskAnchor {
        path: crawl::relative(&root, &abs).unwrap_or_else(|| abs.display().to_string()),
        symbol: syms.qualified_name(index, lang.spec().separator()),
        content_hash: super::service::symbol_hash(code),
    })
}

/// What the persisted index holds for one project (`mira mcp`'s `index_status`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IndexStats {
    /// Files indexed (parsed).
    pub files: usize,
    /// Files seen but not parsed (too large, binary, minified).
    pub skipped: usize,
    pub symbols: usize,
}

/// Indexed files whose code-search chunks are not written yet: the crawl's second stage has
/// not reached them, or a migration (09: stemmed words) asked for them again and no crawl
/// has run since (`mira mcp` and `mira search` do not crawl).
pub fn files_awaiting_search(
    conn: &rusqlite::Connection,
    project_id: i64,
) -> rusqlite::Result<usize> {
    conn.query_row(
        "SELECT count(*) FROM files WHERE project_id = ?1 AND chunks_done = 0 AND skip_reason IS NULL",
        [project_id],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n.max(0) as usize)
}

pub fn stats(conn: &rusqlite::Connection, project_id: i64) -> rusqlite::Result<IndexStats> {
    let (files, skipped): (i64, i64) = conn.query_row(
        "SELECT count(*), coalesce(sum(skip_reason IS NOT NULL), 0) FROM files WHERE project_id = ?1",
        [project_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let symbols: i64 = conn.query_row(
        "SELECT count(*) FROM symbols s JOIN files f ON f.id = s.file_id WHERE f.project_id = ?1",
        [project_id],
        |r| r.get(0),
    )?;
    Ok(IndexStats {
        files: (files - skipped).max(0) as usize,
        skipped: skipped as usize,
        symbols: symbols as usize,
    })
}
