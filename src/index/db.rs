//! The persisted index: typed reads and writes over `files` (with each file's references as
//! one text value, `refs_text`) and `symbols`; code-search chunks are in `search.rs`.
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

/// The symbol name index, exactly as migration 02 defines it (a tidy test holds them equal).
pub const NAME_INDEX_SQL: &str = "CREATE INDEX symbols_name ON symbols(name COLLATE NOCASE)";

/// A cold crawl drops the name index only while the table holds fewer symbols than this: the
/// rebuild then costs at most ~0.15 s more for the rows already there.
const BULK_LOAD_MAX_STORED: i64 = 100_000;

/// Drops the symbol name index before a cold crawl's bulk load, when the table is small enough
/// that building it again in one sort is cheaper; returns whether it did.
///
/// Why: names arrive in no order, so each of the writer's transactions dirties leaves all over
/// that index, and every commit writes them to the WAL again. On the bench's 408k symbols the
/// crawl wrote 250 MB less and its writer's symbols stage spent about a second less CPU;
/// the one sort at the end (`ensure_name_index`) costs ~0.6 s. Readers stay correct meanwhile:
/// only `search::by_name` (the CLI and MCP's find_symbol) uses it, and scans without it.
pub fn drop_name_index_for_bulk_load(conn: &Connection) -> rusqlite::Result<bool> {
    let stored: i64 = conn.query_row(
        "SELECT count(*) FROM (SELECT 1 FROM symbols LIMIT ?1)",
        [BULK_LOAD_MAX_STORED],
        |r| r.get(0),
    )?;
    if stored >= BULK_LOAD_MAX_STORED {
        return Ok(false);
    }
    conn.execute_batch("DROP INDEX IF EXISTS symbols_name")?;
    Ok(true)
}

/// Builds the symbol name index if it is missing: after every crawl, so one killed between
/// the drop and the rebuild leaves it to the next.
pub fn ensure_name_index(conn: &Connection) -> rusqlite::Result<()> {
    let sql = NAME_INDEX_SQL.replacen("CREATE INDEX", "CREATE INDEX IF NOT EXISTS", 1);
    conn.execute_batch(&sql)
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
    contents: (Option<&str>, bool),
) -> rusqlite::Result<(i64, bool)> {
    let (refs, chunks_done) = contents;
    let values = params![
        project_id,
        path,
        language,
        meta.size as i64,
        meta.mtime_ns,
        &meta.hash[..],
        meta.lines as i64,
        meta.ascii,
        skip_reason,
        refs,
        chunks_done
    ];
    let inserted = tx
        .prepare_cached(
            "INSERT INTO files (project_id, path, language, size, mtime_ns, hash, lines, ascii,
               skip_reason, refs, chunks_done)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
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
               ascii = ?8, skip_reason = ?9, refs = ?10, chunks_done = ?11
             WHERE project_id = ?1 AND path = ?2
             RETURNING id",
        )?
        .query_row(values, |r| r.get(0))?;
    Ok((id, false))
}

/// Deletes a file's symbols (and, by trigger, their chunks); its references live in its row.
fn clear_file_contents(tx: &Transaction, file_id: i64) -> rusqlite::Result<()> {
    tx.prepare_cached("DELETE FROM symbols WHERE file_id = ?1")?
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
    let (file_id, ids) = replace_rows(tx, project_id, path, language, meta, syms, true)?;
    super::search::insert_chunks(tx, &ids, chunks)?;
    Ok(file_id)
}

/// Replaces a file's row, symbols and references; returns the file's id and each symbol's
/// row id, in symbol order (for its chunk). `chunks_follow`: the caller writes the chunks in
/// this transaction; otherwise the file waits for the crawl's second stage (`chunks_done`
/// stays 0 unless there is nothing to chunk).
pub fn replace_rows(
    tx: &Transaction,
    project_id: i64,
    path: &str,
    language: &str,
    meta: &FileMeta,
    syms: &FileSymbols,
    chunks_follow: bool,
) -> rusqlite::Result<(i64, Vec<i64>)> {
    let refs = super::refs_text::encode(call_edges_once(&syms.refs));
    let done = chunks_follow || syms.symbols.is_empty();
    let (file_id, new) = upsert_file(
        tx,
        project_id,
        path,
        language,
        meta,
        None,
        (refs.as_deref(), done),
    )?;
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
    Ok((file_id, ids))
}

/// One reference per call-graph edge (caller → callee name, at its first site), imports
/// all: repeated calls from the same caller add nothing a query uses. In document order.
fn call_edges_once(refs: &[Reference]) -> impl Iterator<Item = &Reference> {
    let mut seen = std::collections::HashSet::with_capacity(refs.len());
    refs.iter()
        .filter(move |r| r.kind != RefKind::Call || seen.insert((r.caller, r.name.as_str())))
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
    let (file_id, new) = upsert_file(
        tx,
        project_id,
        path,
        language,
        meta,
        Some(reason),
        (None, true),
    )?;
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

/// Columns [`symbol_from`] reads, after one leading column of the caller's.
const SYMBOL_COLUMNS: &str = "s.parent, s.name, s.kind, s.container,
    s.start_byte, s.end_byte, s.start_line, s.start_col, s.end_line, s.end_col,
    s.sel_start_byte, s.sel_end_byte, s.sel_start_line, s.sel_start_col, s.sel_end_line, s.sel_end_col,
    s.signature, s.doc, s.declaration";

/// A symbol from [`SYMBOL_COLUMNS`] at 1..; `None` for a kind this build does not know.
fn symbol_from(r: &rusqlite::Row<'_>) -> rusqlite::Result<Option<Symbol>> {
    let kind: String = r.get(3)?;
    let Ok(kind) = kind.parse::<SymbolKind>() else {
        return Ok(None);
    };
    Ok(Some(Symbol {
        parent: r.get(1)?,
        name: r.get(2)?,
        kind,
        container: r.get(4)?,
        range: span(r, 5)?,
        selection: span(r, 11)?,
        signature: r.get(17)?,
        doc: r.get(18)?,
        declaration: r.get(19)?,
    }))
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
    let mut stmt = conn.prepare(&format!(
        "SELECT s.file_id, {SYMBOL_COLUMNS}
         FROM symbols s JOIN files f ON f.id = s.file_id
         WHERE f.project_id = ?1 ORDER BY s.file_id, s.ordinal"
    ))?;
    let mut rows = stmt.query([project_id])?;
    while let Some(r) = rows.next()? {
        let Some(&fi) = by_id.get(&r.get::<_, i64>(0)?) else {
            continue;
        };
        if let Some(sym) = symbol_from(r)? {
            files[fi].symbols.symbols.push(sym);
        }
    }
    // The table keeps imports only (definitions rank by them); calls are read from the
    // database when asked for.
    let mut stmt = conn.prepare(
        "SELECT id, refs FROM files WHERE project_id = ?1 AND skip_reason IS NULL
           AND instr(refs, 'import') > 0",
    )?;
    let mut rows = stmt.query([project_id])?;
    while let Some(r) = rows.next()? {
        let Some(&fi) = by_id.get(&r.get::<_, i64>(0)?) else {
            continue;
        };
        let text: String = r.get(1)?;
        files[fi].symbols.refs =
            super::refs_text::decode_where(&text, |kind, _| kind == RefKind::Import);
    }
    Ok(files)
}

/// A file whose code-search chunks are still to be written (the crawl's second stage).
#[derive(Clone, Debug)]
pub struct PendingChunks {
    pub id: i64,
    pub path: String,
    /// The content the stored symbols came from: chunks are cut from these bytes only.
    pub hash: [u8; 32],
}

/// The project's files waiting for their chunks.
pub fn pending_chunks(conn: &Connection, project_id: i64) -> rusqlite::Result<Vec<PendingChunks>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, path, hash FROM files
         WHERE project_id = ?1 AND chunks_done = 0 ORDER BY id",
    )?;
    let rows = stmt.query_map([project_id], |r| {
        let stored: Vec<u8> = r.get(2)?;
        let mut hash = [0u8; 32];
        if stored.len() == 32 {
            hash.copy_from_slice(&stored);
        }
        Ok(PendingChunks {
            id: r.get(0)?,
            path: r.get(1)?,
            hash,
        })
    })?;
    rows.collect()
}

/// A stored file's symbols (no references), in document order: what a resumed second stage
/// cuts chunks from when the first stage ran in another process.
pub fn file_symbols(conn: &Connection, file_id: i64) -> rusqlite::Result<FileSymbols> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT s.id, {SYMBOL_COLUMNS} FROM symbols s WHERE s.file_id = ?1 ORDER BY s.ordinal"
    ))?;
    let mut rows = stmt.query([file_id])?;
    let mut out = FileSymbols::default();
    while let Some(r) = rows.next()? {
        if let Some(sym) = symbol_from(r)? {
            out.symbols.push(sym);
        }
    }
    Ok(out)
}

/// Claims a file for its chunks: `Some(symbol ids)` in document order when the file is still
/// waiting with the content `hash`, after which it counts as done (the caller inserts the
/// chunks in the same transaction); `None` when another writer got there first or the file
/// changed (its next reindex writes the chunks with the symbols).
pub fn claim_chunks(
    tx: &Transaction,
    file_id: i64,
    hash: &[u8; 32],
) -> rusqlite::Result<Option<Vec<i64>>> {
    let claimed = tx
        .prepare_cached(
            "UPDATE files SET chunks_done = 1 WHERE id = ?1 AND chunks_done = 0 AND hash = ?2",
        )?
        .execute(params![file_id, &hash[..]])?;
    if claimed == 0 {
        return Ok(None);
    }
    let mut stmt =
        tx.prepare_cached("SELECT id FROM symbols WHERE file_id = ?1 ORDER BY ordinal")?;
    let ids = stmt.query_map([file_id], |r| r.get(0))?;
    ids.collect::<rusqlite::Result<Vec<i64>>>().map(Some)
}

/// Callers of `name` recorded in the project (for "who calls this"): path, caller's name
/// and the call's line, by path and line. `instr` skips, inside SQLite, every file whose
/// references do not mention the name at all.
pub fn callers_of(
    conn: &Connection,
    project_id: i64,
    name: &str,
    limit: usize,
) -> rusqlite::Result<Vec<(String, Option<String>, u32)>> {
    let mut files = conn.prepare_cached(
        "SELECT id, path, refs FROM files
         WHERE project_id = ?1 AND instr(refs, ?2) > 0 ORDER BY path",
    )?;
    let mut caller_name =
        conn.prepare_cached("SELECT name FROM symbols WHERE file_id = ?1 AND ordinal = ?2")?;
    let mut out = Vec::new();
    let mut rows = files.query(params![project_id, name])?;
    while let Some(r) = rows.next()? {
        let (file_id, path, text): (i64, String, String) = (r.get(0)?, r.get(1)?, r.get(2)?);
        let mut calls =
            super::refs_text::decode_where(&text, |kind, n| kind == RefKind::Call && n == name);
        calls.sort_by_key(|c| c.span.start.row);
        for c in calls {
            if out.len() >= limit {
                return Ok(out);
            }
            let caller = match c.caller {
                Some(ord) => caller_name
                    .query_row(params![file_id, ord], |r| r.get(0))
                    .optional()?,
                None => None,
            };
            out.push((path.clone(), caller, c.span.start.row));
        }
    }
    Ok(out)
}
