-- Code search scans the chunks' sign bits itself and keeps them in memory (index::bitscan):
-- sqlite-vec's own KNN cost O(rows × k), 46 ms a question over 513k chunks. A cached chunk
-- stays right under deletes; each insert into a chunk is counted here, in the same
-- transaction, so that a reader knows to read that chunk again.
CREATE TABLE IF NOT EXISTS code_chunk_gen (
    embedder_id INTEGER NOT NULL,
    chunk_id INTEGER NOT NULL,
    gen INTEGER NOT NULL,
    PRIMARY KEY (embedder_id, chunk_id)
) WITHOUT ROWID;
