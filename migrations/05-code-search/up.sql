-- Code search (issue 8): one chunk per symbol — kind, qualified name with its identifier
-- parts, signature, doc comment, the head of its code with identifiers split — in FTS5.
-- rowid = symbols.id. Contentless: the text is rebuilt from `symbols` when shown, so the
-- index costs only its postings. Written by `index::db::replace_file` (the crawl and the
-- watcher); removed with the symbol by the trigger below (file deletes cascade to symbols).
CREATE VIRTUAL TABLE code_fts USING fts5(
    name,
    signature,
    doc,
    body,
    content = '',
    contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);

-- `rank` = bm25 with column weights: a name match counts most, then doc, signature, code.
INSERT INTO code_fts (code_fts, rank) VALUES ('rank', 'bm25(4.0, 2.0, 3.0, 1.0)');

CREATE TRIGGER symbols_code_fts_ad AFTER DELETE ON symbols BEGIN
    DELETE FROM code_fts WHERE rowid = old.id;
END;

-- Files indexed before this migration have no chunks: forget their hashes and mtimes so the
-- next crawl (editor start, `mira index`) parses them again and writes their chunks.
UPDATE files SET hash = zeroblob(32), mtime_ns = 0 WHERE skip_reason IS NULL;
