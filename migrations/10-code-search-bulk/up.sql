-- The cold index's code-search stage (issue 22) is paced by its one writer, and most of that
-- writer's time is FTS5's. FTS5 keeps a transaction's postings in a hash and writes them out
-- as a new segment each time the hash holds `hashsize` bytes (1 MB by default); `automerge`
-- segments of a level are then merged into one of the next. Each merge rewrites postings
-- already written, so fewer, larger segments mean less rewriting.
--
-- On the bench's mixed corpus (12.7k files, 408k chunks; 2 cores), FTS5's CPU for the whole
-- stage went from 2.40-2.59 s (1 MB, 4) to 2.02-2.07 s (4 MB, 8); 8 MB (2.04-2.19 s) and
-- 16 MB saved no more. Both are stored in code_fts's own config, so every connection and
-- process that writes the table uses them. The cost: at most 3 MB more held during a write,
-- and up to 8 segments per level for a query to read instead of 4 (query latency over the
-- same 408k chunks did not move).
INSERT INTO code_fts (code_fts, rank) VALUES ('hashsize', 4194304);
INSERT INTO code_fts (code_fts, rank) VALUES ('automerge', 8);
