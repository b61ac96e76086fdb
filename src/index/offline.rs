//! The index without a language server: what `mira index` and `mira symbols` call.

use super::crawl::{self, CrawlOptions, CrawlProgress, CrawlStats};
use super::db;
use super::model::SymbolKind;
use super::registry::Lang;
use super::service::SymbolInfo;
use super::table::SymbolTable;
use crate::documents::PositionEncoding;
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
        .map(|h| SymbolInfo::from_hit(&h, &project.root, PositionEncoding::Utf8))
        .collect())
}
