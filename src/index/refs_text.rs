//! A file's references as one text value (`files.refs`, migration 08): a line per reference,
//! tab-separated fields. One value per file instead of a row per reference keeps the cold
//! index's writer off two B-tree indexes it paid for on every call site; text rather than a
//! binary layout so the migration could build it in SQL and `instr()` can pre-filter it.

use super::model::{Point, RefKind, Reference, Span};

/// The stored form of `refs` (`None` when there are none).
pub fn encode<'a>(refs: impl IntoIterator<Item = &'a Reference>) -> Option<String> {
    use std::fmt::Write;
    let refs = refs.into_iter();
    // About 40 bytes a line, for as many lines as there may be (a filter's upper bound):
    // one allocation for most files, where doubling cost the crawl's serial writer page
    // faults on every large file.
    let (least, most) = refs.size_hint();
    let mut out = String::with_capacity(most.unwrap_or(least).saturating_mul(40));
    for (i, r) in refs.enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(r.kind.as_str());
        out.push('\t');
        escape(&mut out, &r.name);
        out.push('\t');
        if let Some(p) = &r.path {
            out.push('=');
            escape(&mut out, p);
        }
        out.push('\t');
        if let Some(c) = r.caller {
            let _ = write!(out, "{c}");
        }
        let sp = &r.span;
        for n in [
            sp.start_byte,
            sp.end_byte,
            sp.start.row,
            sp.start.col,
            sp.end.row,
            sp.end.col,
        ] {
            // Writing to a String cannot fail.
            let _ = write!(out, "\t{n}");
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The references in a stored value; lines that do not parse (a future kind) are left out.
#[cfg(test)]
pub fn decode(text: &str) -> Vec<Reference> {
    text.split('\n').filter_map(decode_line).collect()
}

/// Each reference in a stored value for which `keep(kind, name)` holds, decoding only those.
pub fn decode_where(text: &str, keep: impl Fn(RefKind, &str) -> bool) -> Vec<Reference> {
    text.split('\n')
        .filter(|line| {
            let mut f = line.splitn(3, '\t');
            match (f.next().and_then(RefKind::from_db), f.next()) {
                (Some(kind), Some(name)) => keep(kind, &unescape(name)),
                _ => false,
            }
        })
        .filter_map(decode_line)
        .collect()
}

fn decode_line(line: &str) -> Option<Reference> {
    let mut f = line.split('\t');
    let kind = RefKind::from_db(f.next()?)?;
    let name = unescape(f.next()?);
    let path = match f.next()? {
        "" => None,
        p => Some(unescape(p.strip_prefix('=')?)),
    };
    let caller = match f.next()? {
        "" => None,
        c => Some(c.parse().ok()?),
    };
    let mut n = || f.next()?.parse::<u32>().ok();
    let (start_byte, end_byte) = (n()?, n()?);
    let start = Point {
        row: n()?,
        col: n()?,
    };
    let end = Point {
        row: n()?,
        col: n()?,
    };
    Some(Reference {
        kind,
        name,
        path,
        caller,
        span: Span {
            start_byte,
            end_byte,
            start,
            end,
        },
    })
}

fn escape(out: &mut String, s: &str) {
    for ch in s.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

fn unescape(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(kind: RefKind, name: &str, path: Option<&str>, caller: Option<u32>) -> Reference {
        Reference {
            kind,
            name: name.into(),
            path: path.map(Into::into),
            caller,
            span: Span {
                start_byte: 3,
                end_byte: 9,
                start: Point { row: 1, col: 2 },
                end: Point { row: 4, col: 5 },
            },
        }
    }

    #[test]
    fn references_survive_the_text_form_even_with_tabs_newlines_and_backslashes() {
        let refs = vec![
            r(RefKind::Call, "plain", None, Some(7)),
            r(RefKind::Import, "x", Some(""), None),
            r(RefKind::Import, "a\tb", Some("./c\\d\ne"), Some(0)),
            r(RefKind::Call, "\\", None, None),
        ];
        let text = encode(&refs).unwrap();
        assert_eq!(encode(&[r(RefKind::Call, "", None, None)][..0]), None);
        assert_eq!(decode(&text), refs);
        let calls = decode_where(&text, |k, n| k == RefKind::Call && n == "\\");
        assert_eq!(calls, vec![refs[3].clone()]);
    }

    /// Migration 08 turns `symbol_refs` rows into the same text `encode` writes.
    #[test]
    fn the_migration_turns_reference_rows_into_the_text_form() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        for sql in [
            include_str!("../../migrations/01-init/up.sql"),
            include_str!("../../migrations/02-index/up.sql"),
        ] {
            conn.execute_batch(sql).unwrap();
        }
        conn.execute_batch(
            "INSERT INTO projects (id, root, name, created_at, last_seen_at) VALUES (1, '/p', 'p', 0, 0);
             INSERT INTO files (id, project_id, path, language, size, mtime_ns, hash, lines, ascii)
               VALUES (1, 1, 'a.rs', 'rust', 1, 1, x'00', 1, 1), (2, 1, 'b.rs', 'rust', 1, 1, x'00', 1, 1);",
        )
        .unwrap();
        let refs = vec![
            r(RefKind::Call, "plain", None, Some(7)),
            r(RefKind::Import, "a\tb", Some("./c\\d\ne"), None),
            r(RefKind::Import, "x", Some(""), Some(0)),
        ];
        for x in &refs {
            conn.execute(
                "INSERT INTO symbol_refs (file_id, kind, name, path, caller, start_byte, end_byte,
                   start_line, start_col, end_line, end_col) VALUES (1, ?1, ?2, ?3, ?4, 3, 9, 1, 2, 4, 5)",
                rusqlite::params![x.kind.as_str(), x.name, x.path, x.caller],
            )
            .unwrap();
        }
        conn.execute_batch(include_str!("../../migrations/08-index-stages/up.sql"))
            .unwrap();
        let stored: Option<String> = conn
            .query_row("SELECT refs FROM files WHERE id = 1", [], |r| r.get(0))
            .unwrap();
        assert_eq!(stored, encode(&refs));
        assert_eq!(decode(&stored.unwrap()), refs);
        let none: Option<String> = conn
            .query_row("SELECT refs FROM files WHERE id = 2", [], |r| r.get(0))
            .unwrap();
        assert_eq!(none, None, "a file without references has none");
    }
}
