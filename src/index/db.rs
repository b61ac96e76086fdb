//! The persisted index: typed reads and writes over `files`, `symbols`, `symbol_refs`.
//! Functions take a `Connection`/`Transaction` so callers choose the thread and wrapper.

use super::model::{FileSymbols, Point, RefKind, Reference, Span, Symbol, SymbolKind};
use super::search::Chunk;
use rusqlite::{Connection, OptionalExtension, Transaction, params};
use std::collections::HashMap;

/// What the index remembers about a file on disk, to decide whether to re-read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileMeta {
    pub size: u64,
    pub mtime_ns: i64,
    pub hash: [u8; 32],
    pub lines: u32,
    pub ascii: bool,
}

#[derive(Clone, Debug)]
pub struct FileRow {
    pub id: i64,
    pub language: String,
    pub meta: FileMeta,
    pub skip_reason: Option<String>,
}

const FILE_COLUMNS: &str = "id, path, language, size, mtime_ns, hash, lines, ascii, skip_reason";

fn file_row_from(r: &rusqlite::Row<'_>) -> rusqlite::Result<(String, FileRow)> {
    let hash: Vec<u8> = r.get(5)?;
    let mut h = [0u8; 32];
    if hash.len() == 32 {
        h.copy_from_slice(&hash);
    }
    Ok((
        r.get(1)?,
        FileRow {
            id: r.get(0)?,
            language: r.get(2)?,
            meta: FileMeta {
                size: r.get::<_, i64>(3)? as u64,
                mtime_ns: r.get(4)?,
                hash: h,
                lines: r.get::<_, i64>(6)? as u32,
                ascii: r.get(7)?,
            },
            skip_reason: r.get(8)?,
        },
    ))
}

/// Every file row of a project, by relative path.
pub fn file_rows(conn: &Connection, project_id: i64) -> rusqlite::Result<HashMap<String, FileRow>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {FILE_COLUMNS} FROM files WHERE project_id = ?1"
    ))?;
    let rows = stmt.query_map([project_id], file_row_from)?;
    rows.collect()
}

/// One file's row.
pub fn file_row(
    conn: &Connection,
    project_id: i64,
    path: &str,
) -> rusqlite::Result<Option<FileRow>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {FILE_COLUMNS} FROM files WHERE project_id = ?1 AND path = ?2"
    ))?;
    stmt.query_row(params![project_id, path], file_row_from)
        .optional()
        .map(|r| r.map(|(_, row)| row))
}

/// Inserts or updates a file's row; `true` with the id when the row is new (so it has no
/// symbols to clear: the common case of a cold index).
fn upsert_file(
    tx: &Transaction,
    project_id: i64,
    path: &str,
    language: &str,
    meta: &FileMeta,
    skip_reason: Option<&str>,
) -> rusqlite::Result<(i64, bool)> {
    let values = params![
        project_id,
        path,
        language,
        meta.size as i64,
        meta.mtime_ns,
        &meta.hash[..],
        meta.lines as i64,
        meta.ascii,
        skip_reason
    ];
    let inserted = tx
        .prepare_cached(
            "INSERT INTO files (project_id, path, language, size, mtime_ns, hash, lines, ascii, skip_reason)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
             ON CONFLICT (project_id, path) DO NOTHING
             RETURNING id",
        )?
        .query_row(values, |r| r.get(0))
        .optional()?;
    if let Some(id) = inserted {
        return Ok((id, true));
    }
    let id = tx
        .prepare_cached(
            "UPDATE files SET language = ?3, size = ?4, mtime_ns = ?5, hash = ?6, lines = ?7,
               ascii = ?8, skip_reason = ?9
             WHERE project_id = ?1 AND path = ?2
             RETURNING id",
        )?
        .query_row(values, |r| r.get(0))?;
    Ok((id, false))
}

fn clear_file_contents(tx: &Transaction, file_id: i64) -> rusqlite::Result<()> {
    tx.prepare_cached("DELETE FROM symbols WHERE file_id = ?1")?
        .execute([file_id])?;
    tx.prepare_cached("DELETE FROM symbol_refs WHERE file_id = ?1")?
        .execute([file_id])?;
    Ok(())
}

/// Replaces a file's row, symbols, references and code-search chunks. `heads` holds the
/// head of each symbol's code ([`super::search::head_of`]), in symbol order. For callers
/// without a source file (benches and tests fill synthetic corpora this way); the crawl and
/// the watcher use [`replace_file_with_chunks`].
pub fn replace_file(
    tx: &Transaction,
    project_id: i64,
    path: &str,
    language: &str,
    meta: &FileMeta,
    syms: &FileSymbols,
    heads: &[String],
) -> rusqlite::Result<i64> {
    let chunks: Vec<Chunk> = syms
        .symbols
        .iter()
        .enumerate()
        .map(|(i, s)| Chunk::new(s, heads.get(i).map_or("", String::as_str)))
        .collect();
    replace_file_with_chunks(tx, project_id, path, language, meta, syms, &chunks)
}

/// [`replace_file`] with the chunks already built ([`super::search::file_chunks`]).
pub fn replace_file_with_chunks(
    tx: &Transaction,
    project_id: i64,
    path: &str,
    language: &str,
    meta: &FileMeta,
    syms: &FileSymbols,
    chunks: &[Chunk],
) -> rusqlite::Result<i64> {
    let (file_id, ids) = replace_rows(tx, project_id, path, language, meta, syms)?;
    super::search::insert_chunks(tx, &ids, chunks)?;
    Ok(file_id)
}

/// Replaces a file's row, symbols and references; returns the file's id and each symbol's
/// row id, in symbol order (for its chunk).
pub fn replace_rows(
    tx: &Transaction,
    project_id: i64,
    path: &str,
    language: &str,
    meta: &FileMeta,
    syms: &FileSymbols,
) -> rusqlite::Result<(i64, Vec<i64>)> {
    let (file_id, new) = upsert_file(tx, project_id, path, language, meta, None)?;
    if !new {
        clear_file_contents(tx, file_id)?;
    }
    let mut ids = Vec::with_capacity(syms.symbols.len());
    let mut ins = tx.prepare_cached(
        "INSERT INTO symbols (file_id, ordinal, parent, name, kind, container,
           start_byte, end_byte, start_line, start_col, end_line, end_col,
           sel_start_byte, sel_end_byte, sel_start_line, sel_start_col, sel_end_line, sel_end_col,
           signature, doc, declaration)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)",
    )?;
    for (i, s) in syms.symbols.iter().enumerate() {
        let (r, sel) = (&s.range, &s.selection);
        ins.execute(params![
            file_id,
            i as i64,
            s.parent,
            s.name,
            s.kind.as_str(),
            s.container,
            r.start_byte,
            r.end_byte,
            r.start.row,
            r.start.col,
            r.end.row,
            r.end.col,
            sel.start_byte,
            sel.end_byte,
            sel.start.row,
            sel.start.col,
            sel.end.row,
            sel.end.col,
            s.signature,
            s.doc,
            s.declaration
        ])?;
        ids.push(tx.last_insert_rowid());
    }
    let mut ins = tx.prepare_cached(
        "INSERT INTO symbol_refs (file_id, kind, name, path, caller,
           start_byte, end_byte, start_line, start_col, end_line, end_col)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?;
    // One row per call-graph edge (caller → callee name, first site); repeated calls from
    // the same caller add nothing a query uses and cost a third of the cold index.
    let mut seen = std::collections::HashSet::new();
    for r in &syms.refs {
        if r.kind == RefKind::Call && !seen.insert((r.caller, r.name.as_str())) {
            continue;
        }
        let sp = &r.span;
        ins.execute(params![
            file_id,
            r.kind.as_str(),
            r.name,
            r.path,
            r.caller,
            sp.start_byte,
            sp.end_byte,
            sp.start.row,
            sp.start.col,
            sp.end.row,
            sp.end.col
        ])?;
    }
    Ok((file_id, ids))
}

/// Records a file the index deliberately does not parse, so a restart does not re-read it.
pub fn record_skipped(
    tx: &Transaction,
    project_id: i64,
    path: &str,
    language: &str,
    meta: &FileMeta,
    reason: &str,
) -> rusqlite::Result<()> {
    let (file_id, new) = upsert_file(tx, project_id, path, language, meta, Some(reason))?;
    if new {
        return Ok(());
    }
    clear_file_contents(tx, file_id)
}

/// The content did not change but the mtime did (a `touch`, a checkout of the same bytes).
pub fn touch_file(tx: &Transaction, file_id: i64, mtime_ns: i64) -> rusqlite::Result<()> {
    tx.prepare_cached("UPDATE files SET mtime_ns = ?2 WHERE id = ?1")?
        .execute(params![file_id, mtime_ns])?;
    Ok(())
}

/// Removes a file and (by cascade) its symbols and references.
pub fn remove_file(tx: &Transaction, project_id: i64, path: &str) -> rusqlite::Result<bool> {
    let n = tx
        .prepare_cached("DELETE FROM files WHERE project_id = ?1 AND path = ?2")?
        .execute(params![project_id, path])?;
    Ok(n > 0)
}

/// One indexed file as stored.
pub struct StoredFile {
    pub path: String,
    pub language: String,
    pub ascii: bool,
    pub symbols: FileSymbols,
}

fn span(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Span> {
    Ok(Span {
        start_byte: r.get(at)?,
        end_byte: r.get(at + 1)?,
        start: Point {
            row: r.get(at + 2)?,
            col: r.get(at + 3)?,
        },
        end: Point {
            row: r.get(at + 4)?,
            col: r.get(at + 5)?,
        },
    })
}

/// Loads every indexed (not skipped) file of a project with its symbols and references,
/// for the in-memory query table at startup.
pub fn load_project(conn: &Connection, project_id: i64) -> rusqlite::Result<Vec<StoredFile>> {
    let mut files: Vec<StoredFile> = Vec::new();
    let mut by_id: HashMap<i64, usize> = HashMap::new();
    {
        let mut stmt = conn.prepare(
            "SELECT id, path, language, ascii FROM files
             WHERE project_id = ?1 AND skip_reason IS NULL",
        )?;
        let mut rows = stmt.query([project_id])?;
        while let Some(r) = rows.next()? {
            by_id.insert(r.get(0)?, files.len());
            files.push(StoredFile {
                path: r.get(1)?,
                language: r.get(2)?,
                ascii: r.get(3)?,
                symbols: FileSymbols::default(),
            });
        }
    }
    let mut stmt = conn.prepare(
        "SELECT s.file_id, s.parent, s.name, s.kind, s.container,
                s.start_byte, s.end_byte, s.start_line, s.start_col, s.end_line, s.end_col,
                s.sel_start_byte, s.sel_end_byte, s.sel_start_line, s.sel_start_col, s.sel_end_line, s.sel_end_col,
                s.signature, s.doc, s.declaration
         FROM symbols s JOIN files f ON f.id = s.file_id
         WHERE f.project_id = ?1 ORDER BY s.file_id, s.ordinal",
    )?;
    let mut rows = stmt.query([project_id])?;
    while let Some(r) = rows.next()? {
        let Some(&fi) = by_id.get(&r.get::<_, i64>(0)?) else {
            continue;
        };
        let kind: String = r.get(3)?;
        let Ok(kind) = kind.parse::<SymbolKind>() else {
            continue;
        };
        files[fi].symbols.symbols.push(Symbol {
            parent: r.get(1)?,
            name: r.get(2)?,
            kind,
            container: r.get(4)?,
            range: span(r, 5)?,
            selection: span(r, 11)?,
            signature: r.get(17)?,
            doc: r.get(18)?,
            declaration: r.get(19)?,
        });
    }
    let mut stmt = conn.prepare(
        "SELECT s.file_id, s.kind, s.name, s.path, s.caller,
                s.start_byte, s.end_byte, s.start_line, s.start_col, s.end_line, s.end_col
         FROM symbol_refs s JOIN files f ON f.id = s.file_id
         WHERE f.project_id = ?1 AND s.kind = 'import' ORDER BY s.id",
    )?;
    let mut rows = stmt.query([project_id])?;
    while let Some(r) = rows.next()? {
        let Some(&fi) = by_id.get(&r.get::<_, i64>(0)?) else {
            continue;
        };
        let Some(kind) = RefKind::from_db(&r.get::<_, String>(1)?) else {
            continue;
        };
        files[fi].symbols.refs.push(Reference {
            kind,
            name: r.get(2)?,
            path: r.get(3)?,
            caller: r.get(4)?,
            span: span(r, 5)?,
        });
    }
    Ok(files)
}

/// Callers of `name` recorded in the project (for "who calls this").
pub fn callers_of(
    conn: &Connection,
    project_id: i64,
    name: &str,
    limit: usize,
) -> rusqlite::Result<Vec<(String, Option<String>, u32)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT f.path, caller.name, r.start_line
         FROM symbol_refs r JOIN files f ON f.id = r.file_id
         LEFT JOIN symbols caller ON caller.file_id = r.file_id AND caller.ordinal = r.caller
         WHERE f.project_id = ?1 AND r.kind = 'call' AND r.name = ?2
         ORDER BY f.path, r.start_line LIMIT ?3",
    )?;
    let rows = stmt.query_map(params![project_id, name, limit as i64], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
    })?;
    rows.collect()
}
