-- The cold index in stages (issue 22). Symbols are written first; code-search chunks follow
-- in a second pass, so workspace/symbol and definitions are complete long before FTS is.
--
-- `files.refs`: a file's references (calls and imports) in one text value instead of a row
-- each: 538k rows with two secondary indexes cost most of the cold index's writer, and every
-- reader takes them a file at a time anyway (the table loads imports per file; "who calls
-- this" scans with instr() first). One line per reference, fields separated by a tab:
--   kind  name  [=path]  caller  start_byte  end_byte  start_line  start_col  end_line  end_col
-- `path` is empty for none and '=' + path otherwise; `caller` is empty for none; '\', tab and
-- newline inside name and path are written \\, \t, \n. See `index::refs_text`.
--
-- `files.chunks_done`: 0 while the file's code-search chunks are still to be written (the
-- second stage); a crawl interrupted between the stages resumes from these rows.
ALTER TABLE files ADD COLUMN refs TEXT;
ALTER TABLE files ADD COLUMN chunks_done INTEGER NOT NULL DEFAULT 1;

UPDATE files SET refs = (
    SELECT group_concat(
        r.kind || char(9)
        || replace(replace(replace(r.name, '\', '\\'), char(9), '\t'), char(10), '\n') || char(9)
        || CASE WHEN r.path IS NULL THEN ''
                ELSE '=' || replace(replace(replace(r.path, '\', '\\'), char(9), '\t'), char(10), '\n')
           END || char(9)
        || coalesce(r.caller, '') || char(9)
        || r.start_byte || char(9) || r.end_byte || char(9)
        || r.start_line || char(9) || r.start_col || char(9)
        || r.end_line || char(9) || r.end_col,
        char(10) ORDER BY r.id)
    FROM symbol_refs r WHERE r.file_id = files.id
);

DROP INDEX symbol_refs_file;
DROP INDEX symbol_refs_name;
DROP TABLE symbol_refs;

-- The second stage's to-do list: small, since a file leaves it once its chunks are written.
CREATE INDEX files_chunks_pending ON files(project_id) WHERE chunks_done = 0;
