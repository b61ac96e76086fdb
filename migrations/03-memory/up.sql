-- Long-term memory: memories (+ FTS5), anchors to code symbols, goals, milestones, tasks,
-- and the embedder bookkeeping. Vector tables (vec0) are created at runtime, one per embedder,
-- because their dimension is only known once the embedder has answered.

CREATE TABLE memories (
    id            INTEGER PRIMARY KEY,
    kind          TEXT    NOT NULL CHECK (kind IN ('fact', 'preference', 'decision', 'correction')),
    body          TEXT    NOT NULL CHECK (length(body) > 0),
    -- identifier sub-tokens of body (FTS5's unicode61 does not split camelCase): indexed, never shown
    idents        TEXT    NOT NULL DEFAULT '',
    -- NULL = global (follows the user everywhere); else visible only inside this project
    project_id    INTEGER REFERENCES projects(id),
    status        TEXT    NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'superseded', 'retracted')),
    supersedes    INTEGER REFERENCES memories(id),
    superseded_by INTEGER REFERENCES memories(id),
    -- blake3 of the normalised body: exact dedup within a scope
    norm_hash     BLOB    NOT NULL,
    seen_count    INTEGER NOT NULL DEFAULT 1,
    recall_count  INTEGER NOT NULL DEFAULT 0,
    -- unix milliseconds
    created_at    INTEGER NOT NULL,
    last_seen_at  INTEGER NOT NULL,
    valid_from    INTEGER NOT NULL,
    valid_to      INTEGER,
    retracted_at  INTEGER
);

-- One active memory per (scope, normalised text): a repeat bumps seen_count instead.
CREATE UNIQUE INDEX memories_dedup ON memories (coalesce(project_id, 0), norm_hash) WHERE status = 'active';
CREATE INDEX memories_scope ON memories (project_id, status, kind);
CREATE INDEX memories_supersedes ON memories (supersedes);

CREATE VIRTUAL TABLE memories_fts USING fts5(
    body, idents,
    content = 'memories', content_rowid = 'id',
    tokenize = 'porter unicode61'
);

CREATE TRIGGER memories_fts_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, body, idents) VALUES (new.id, new.body, new.idents);
END;
CREATE TRIGGER memories_fts_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, body, idents) VALUES ('delete', old.id, old.body, old.idents);
END;
CREATE TRIGGER memories_fts_au AFTER UPDATE OF body, idents ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, body, idents) VALUES ('delete', old.id, old.body, old.idents);
    INSERT INTO memories_fts (rowid, body, idents) VALUES (new.id, new.body, new.idents);
END;

-- A memory about code points at symbols; the index reports symbol changes and the anchor goes stale.
CREATE TABLE memory_anchors (
    memory_id    INTEGER NOT NULL REFERENCES memories(id),
    project_id   INTEGER NOT NULL REFERENCES projects(id),
    path         TEXT    NOT NULL,   -- relative to the project root, '/' separated
    symbol       TEXT    NOT NULL,
    content_hash TEXT    NOT NULL,   -- the symbol's hash when the memory was anchored
    stale_since  INTEGER,            -- NULL while the symbol still has that hash
    gone         INTEGER NOT NULL DEFAULT 0, -- 1 when the symbol disappeared
    PRIMARY KEY (memory_id, path, symbol)
);
CREATE INDEX memory_anchors_symbol ON memory_anchors (project_id, path, symbol);

CREATE TABLE goals (
    id          INTEGER PRIMARY KEY,
    project_id  INTEGER REFERENCES projects(id),
    title       TEXT    NOT NULL CHECK (length(title) > 0),
    description TEXT    NOT NULL DEFAULT '',
    status      TEXT    NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'done', 'abandoned')),
    priority    TEXT    NOT NULL DEFAULT 'normal' CHECK (priority IN ('low', 'normal', 'high', 'urgent')),
    progress    INTEGER NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 100),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
CREATE INDEX goals_scope ON goals (project_id, status);

CREATE TABLE milestones (
    id         INTEGER PRIMARY KEY,
    goal_id    INTEGER NOT NULL REFERENCES goals(id),
    title      TEXT    NOT NULL CHECK (length(title) > 0),
    done_at    INTEGER,
    created_at INTEGER NOT NULL
);
CREATE INDEX milestones_goal ON milestones (goal_id);

CREATE TABLE tasks (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER REFERENCES projects(id),
    goal_id    INTEGER REFERENCES goals(id),
    title      TEXT    NOT NULL CHECK (length(title) > 0),
    status     TEXT    NOT NULL DEFAULT 'todo' CHECK (status IN ('todo', 'doing', 'done', 'cancelled')),
    priority   TEXT    NOT NULL DEFAULT 'normal' CHECK (priority IN ('low', 'normal', 'high', 'urgent')),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX tasks_scope ON tasks (project_id, status);
CREATE INDEX tasks_goal ON tasks (goal_id);

-- Which model produced which vectors. Each embedder gets its own vec0 table
-- memory_vec_<id>; models are never mixed in one table.
CREATE TABLE embedders (
    id         INTEGER PRIMARY KEY,
    model_id   TEXT    NOT NULL UNIQUE,   -- e.g. 'openai:text-embedding-3-small', 'local:all-MiniLM-L6-v2'
    dim        INTEGER NOT NULL CHECK (dim > 0),
    created_at INTEGER NOT NULL
);

-- Vectors by text hash, so an unchanged text is never embedded twice (also across memories).
CREATE TABLE embedding_cache (
    embedder_id INTEGER NOT NULL REFERENCES embedders(id),
    text_hash   BLOB    NOT NULL,
    vector      BLOB    NOT NULL,        -- little-endian f32, L2-normalised
    PRIMARY KEY (embedder_id, text_hash)
) WITHOUT ROWID;

-- Which memories have a row in memory_vec_<embedder_id> (vec0 cannot be anti-joined cheaply).
CREATE TABLE memory_vectors (
    embedder_id INTEGER NOT NULL REFERENCES embedders(id),
    memory_id   INTEGER NOT NULL REFERENCES memories(id),
    PRIMARY KEY (embedder_id, memory_id)
) WITHOUT ROWID;
