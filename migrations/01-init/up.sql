-- Foundation: what every later capability hangs off.

-- One row per project Mira has seen (root = canonical path). Code context is scoped to it;
-- memory and conversation are global and only reference it.
CREATE TABLE projects (
    id            INTEGER PRIMARY KEY,
    root          TEXT    NOT NULL UNIQUE,
    name          TEXT    NOT NULL,
    created_at    INTEGER NOT NULL,
    last_seen_at  INTEGER NOT NULL
);

-- One row per `mira lsp` / CLI process that opened the store: several editors share one
-- database, and `mira status` / `mira doctor` say who else is attached.
CREATE TABLE sessions (
    id          INTEGER PRIMARY KEY,
    pid         INTEGER NOT NULL,
    kind        TEXT    NOT NULL CHECK (kind IN ('lsp', 'cli')),
    client      TEXT,
    project_id  INTEGER REFERENCES projects(id),
    started_at  INTEGER NOT NULL,
    ended_at    INTEGER
);
CREATE INDEX sessions_open ON sessions(ended_at) WHERE ended_at IS NULL;

-- Which Mira last migrated this file (the schema version itself is PRAGMA user_version).
CREATE TABLE meta (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);
