//! `mira_bm25`: FTS5's bm25 with the document frequencies supplied by the caller.
//!
//! FTS5's built-in `bm25()` computes each phrase's IDF on the first row it scores by running
//! the phrase as a query of its own over the whole table (`xQueryPhrase`): for a term in a
//! quarter of a 400k-chunk index that is ~2–3 ms per term on every search, whatever the
//! number of rows that matched. Code search knows the document frequencies already (it counts
//! them to classify terms and keeps them per process), so it passes them in:
//!
//!   mira_bm25(code_fts, w_col0, …, w_colN-1, df_phrase0, …, df_phraseM-1 [, w_phrase0, …, w_phraseM-1])
//!
//! A phrase's weight (1 when left out) scales its IDF: an alternative spelling the query
//! did not use (`cfg` for "configuration") counts for less than the word itself.
//!
//! The score is FTS5's own (k1 = 1.2, b = 0.75, IDF floored at 1e-6, lower is better), with
//! one difference: a phrase whose df is negative is ignored, so a term repeated in the MATCH
//! expression (`a OR (b AND a)`) counts once.

use std::ffi::{c_int, c_void};
use std::ptr;

use rusqlite::ffi;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Per-query state, computed on the first row (FTS5 keeps it with the cursor).
struct Query {
    idf: Vec<f64>,
    weights: Vec<f64>,
    avgdl: f64,
    freq: Vec<f64>,
}

unsafe extern "C" fn drop_query(p: *mut c_void) {
    // SAFETY: `p` is the Box<Query> leaked in `query_state`, handed back once by FTS5.
    drop(unsafe { Box::from_raw(p as *mut Query) });
}

unsafe fn value_f64(v: *mut ffi::sqlite3_value) -> f64 {
    unsafe { ffi::sqlite3_value_double(v) }
}

/// The state of this query, creating it on the first row.
unsafe fn query_state(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    args: &[*mut ffi::sqlite3_value],
) -> Result<*mut Query, c_int> {
    let existing = unsafe { (api.xGetAuxdata.unwrap())(fts, 0) } as *mut Query;
    if !existing.is_null() {
        return Ok(existing);
    }
    let ncol = unsafe { (api.xColumnCount.unwrap())(fts) } as usize;
    let nphrase = unsafe { (api.xPhraseCount.unwrap())(fts) } as usize;
    let weights: Vec<f64> = (0..ncol)
        .map(|i| args.get(i).map_or(1.0, |v| unsafe { value_f64(*v) }))
        .collect();
    let (mut rows, mut tokens) = (0i64, 0i64);
    let rc = unsafe { (api.xRowCount.unwrap())(fts, &mut rows) };
    if rc != ffi::SQLITE_OK {
        return Err(rc);
    }
    let rc = unsafe { (api.xColumnTotalSize.unwrap())(fts, -1, &mut tokens) };
    if rc != ffi::SQLITE_OK {
        return Err(rc);
    }
    let n = rows.max(1) as f64;
    let idf = (0..nphrase)
        .map(|i| {
            let df = args.get(ncol + i).map_or(0.0, |v| unsafe { value_f64(*v) });
            let weight = args
                .get(ncol + nphrase + i)
                .map_or(1.0, |v| unsafe { value_f64(*v) });
            if df < 0.0 {
                0.0
            } else {
                weight * ((n - df + 0.5) / (df + 0.5)).ln().max(1e-6)
            }
        })
        .collect();
    let q = Box::into_raw(Box::new(Query {
        idf,
        weights,
        avgdl: tokens as f64 / n,
        freq: vec![0.0; nphrase],
    }));
    let rc = unsafe { (api.xSetAuxdata.unwrap())(fts, q as *mut c_void, Some(drop_query)) };
    if rc != ffi::SQLITE_OK {
        // FTS5 has called drop_query on failure already.
        return Err(rc);
    }
    Ok(q)
}

unsafe fn score(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    q: &mut Query,
) -> Result<f64, c_int> {
    q.freq.iter_mut().for_each(|f| *f = 0.0);
    let mut n_inst: c_int = 0;
    let rc = unsafe { (api.xInstCount.unwrap())(fts, &mut n_inst) };
    if rc != ffi::SQLITE_OK {
        return Err(rc);
    }
    for i in 0..n_inst {
        let (mut phrase, mut col, mut off) = (0, 0, 0);
        let rc = unsafe { (api.xInst.unwrap())(fts, i, &mut phrase, &mut col, &mut off) };
        if rc != ffi::SQLITE_OK {
            return Err(rc);
        }
        let w = q.weights.get(col as usize).copied().unwrap_or(1.0);
        if let Some(f) = q.freq.get_mut(phrase as usize) {
            *f += w;
        }
    }
    let mut len: c_int = 0;
    let rc = unsafe { (api.xColumnSize.unwrap())(fts, -1, &mut len) };
    if rc != ffi::SQLITE_OK {
        return Err(rc);
    }
    let d = K1 * (1.0 - B + B * len as f64 / q.avgdl.max(1e-9));
    let s: f64 = q
        .freq
        .iter()
        .zip(&q.idf)
        .map(|(f, idf)| idf * f * (K1 + 1.0) / (f + d))
        .sum();
    Ok(-s)
}

unsafe extern "C" fn mira_bm25(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n: c_int,
    args: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 passes a valid API table, context and `n` argument values.
    unsafe {
        let api = &*api;
        let args = if n > 0 {
            std::slice::from_raw_parts(args, n as usize)
        } else {
            &[]
        };
        let result = query_state(api, fts, args).and_then(|q| score(api, fts, &mut *q));
        match result {
            Ok(s) => ffi::sqlite3_result_double(ctx, s),
            Err(rc) => ffi::sqlite3_result_error_code(ctx, rc),
        }
    }
}

/// The connection's `fts5_api`, or null when FTS5 is missing.
unsafe fn fts5_api(db: *mut ffi::sqlite3) -> *mut ffi::fts5_api {
    let mut api: *mut ffi::fts5_api = ptr::null_mut();
    let mut stmt: *mut ffi::sqlite3_stmt = ptr::null_mut();
    unsafe {
        if ffi::sqlite3_prepare_v2(
            db,
            c"SELECT fts5(?1)".as_ptr(),
            -1,
            &mut stmt,
            ptr::null_mut(),
        ) != ffi::SQLITE_OK
        {
            return ptr::null_mut();
        }
        ffi::sqlite3_bind_pointer(
            stmt,
            1,
            &mut api as *mut *mut ffi::fts5_api as *mut c_void,
            c"fts5_api_ptr".as_ptr(),
            None,
        );
        ffi::sqlite3_step(stmt);
        ffi::sqlite3_finalize(stmt);
    }
    api
}

/// Adds `mira_bm25` to `conn`. Called by `store::connect` once busy_timeout is set: the
/// lookup of FTS5's API is a statement, and on a database another process is still
/// creating it must wait like any other (an auto-extension would fail the open instead).
pub fn add_to(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    // SAFETY: the handle is valid for the duration of this call and used on this thread.
    let rc = unsafe {
        let db = conn.handle();
        let api = fts5_api(db);
        if api.is_null() || (*api).iVersion < 2 {
            return Err(rusqlite::Error::SqliteFailure(
                ffi::Error::new(ffi::SQLITE_ERROR),
                Some("this SQLite has no FTS5: code search cannot rank".into()),
            ));
        }
        ((*api).xCreateFunction.unwrap())(
            api,
            c"mira_bm25".as_ptr(),
            ptr::null_mut(),
            Some(mira_bm25),
            None,
        )
    };
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rusqlite::Error::SqliteFailure(ffi::Error::new(rc), None))
    }
}

#[cfg(test)]
mod tests {
    use super::super::Store;

    /// With the true document frequencies, `mira_bm25` scores every row as FTS5's own
    /// `bm25()` does with the same column weights.
    #[test]
    fn matches_fts5_bm25_given_true_document_frequencies() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db")).unwrap();
        let conn = store.connect().unwrap();
        conn.execute_batch("CREATE VIRTUAL TABLE t USING fts5(a, b);")
            .unwrap();
        let docs = [
            ("parse config", "fn parse config file and load it"),
            ("load", "read the config"),
            (
                "parse",
                "parse parse parse the long body with many more words in it",
            ),
            ("render", "nothing relevant"),
            ("config", "config parse"),
        ];
        for (a, b) in docs {
            conn.execute("INSERT INTO t (a, b) VALUES (?1, ?2)", [a, b])
                .unwrap();
        }
        let df = |term: &str| -> i64 {
            conn.query_row("SELECT count(*) FROM t WHERE t MATCH ?1", [term], |r| {
                r.get(0)
            })
            .unwrap()
        };
        let (parse, config) = (df("parse"), df("config"));
        let mut stmt = conn
            .prepare(
                "SELECT rowid, bm25(t, 4.0, 1.0), mira_bm25(t, 4.0, 1.0, ?2, ?3)
                   FROM t WHERE t MATCH ?1 ORDER BY rowid",
            )
            .unwrap();
        let rows: Vec<(i64, f64, f64)> = stmt
            .query_map(rusqlite::params!["parse OR config", parse, config], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(rows.len(), 4, "{rows:?}");
        for (id, theirs, ours) in rows {
            assert!(ours < 0.0, "row {id}: a match scores below zero ({ours})");
            assert!(
                (theirs - ours).abs() < 1e-9,
                "row {id}: bm25 {theirs}, mira_bm25 {ours}"
            );
        }
    }

    /// A negative df marks a repeated phrase: it adds nothing, so `a OR (b AND a)` scores a
    /// row as `a OR b` would.
    #[test]
    fn a_repeated_phrase_counts_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db")).unwrap();
        let conn = store.connect().unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(a);
             INSERT INTO t (a) VALUES ('alpha beta'), ('alpha'), ('gamma');",
        )
        .unwrap();
        let score = |expr: &str, dfs: &[i64]| -> f64 {
            let args: Vec<String> = (0..dfs.len()).map(|i| format!("?{}", i + 2)).collect();
            let sql = format!(
                "SELECT mira_bm25(t, 1.0, {}) FROM t WHERE t MATCH ?1 AND rowid = 1",
                args.join(", ")
            );
            let mut values: Vec<rusqlite::types::Value> = vec![expr.to_string().into()];
            values.extend(dfs.iter().map(|d| (*d).into()));
            conn.query_row(&sql, rusqlite::params_from_iter(values), |r| r.get(0))
                .unwrap()
        };
        let once = score("alpha OR beta", &[2, 1]);
        let repeated = score("alpha OR (beta AND alpha)", &[2, 1, -1]);
        assert!(once < 0.0);
        assert!((once - repeated).abs() < 1e-12, "{once} vs {repeated}");
    }
}
