-- Code search, issue 21: words are stemmed (`porter`), so "reads" in a question meets
-- `read` in code and "parsing" meets `parse`; the query is stemmed the same way by FTS5.
-- On 600 doc → function pairs of twelve registry crates (docs/benchmarks.md) this took hit@5
-- from 0.443 to 0.462. The columns are 05's. The table is rebuilt empty, and every file's
-- chunks are cut again by the crawl's second stage (`files.chunks_done = 0`, see 08): the
-- symbols stay, nothing is parsed again.
DROP TABLE code_fts;

CREATE VIRTUAL TABLE code_fts USING fts5(
    name,
    signature,
    doc,
    body,
    content = '',
    contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
);

INSERT INTO code_fts (code_fts, rank) VALUES ('rank', 'bm25(4.0, 2.0, 3.0, 1.0)');

-- 05's delete trigger names the table and so holds for the new one.
UPDATE files SET chunks_done = 0 WHERE skip_reason IS NULL;
