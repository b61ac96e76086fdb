-- The cold index's code-search stage is paced by its one writer, and a fifth of that writer's
-- time was FTS5's `porter` stemming every token (issue 22, docs/benchmarks.md). Chunks now
-- arrive stemmed, cut on the parse threads by `index::stem` (FTS5's porter, ported), and
-- queries are stemmed by the same function; the table only splits and folds. For ASCII
-- text the tokens are the ones 09's tokenizer made.
--
-- Chunks now hold four lines of a symbol's code, not sixteen (`index::search::HEAD_LINES`),
-- ranking as well on the code-search eval for a quarter less of that stage's work; rows of
-- both lengths side by side would skew BM25's length normalisation, another reason to
-- rebuild.
--
-- As in 09, the table is rebuilt empty and every file's chunks are cut again by the crawl's
-- second stage (`files.chunks_done = 0`): the symbols stay, nothing is parsed again.
DROP TABLE code_fts;

CREATE VIRTUAL TABLE code_fts USING fts5(
    name,
    signature,
    doc,
    body,
    content = '',
    contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);

INSERT INTO code_fts (code_fts, rank) VALUES ('rank', 'bm25(4.0, 2.0, 3.0, 1.0)');
-- 10's settings are the table's own, so they go with it.
INSERT INTO code_fts (code_fts, rank) VALUES ('hashsize', 4194304);
INSERT INTO code_fts (code_fts, rank) VALUES ('automerge', 8);

-- 05's delete trigger names the table and so holds for the new one.
UPDATE files SET chunks_done = 0 WHERE skip_reason IS NULL;
