-- 04-conversation: the one global conversation (messages), its turns and tool calls,
-- summaries of older parts, artifacts (large tool outputs) and edit proposals.
-- Times are unix milliseconds. Nothing here holds an API key; text is redacted before insert.

CREATE TABLE turns (
    id                 INTEGER PRIMARY KEY,
    public_id          TEXT NOT NULL UNIQUE,
    project_id         INTEGER REFERENCES projects(id) ON DELETE SET NULL,
    source             TEXT NOT NULL,
    started_at         INTEGER NOT NULL,
    finished_at        INTEGER,
    status             TEXT NOT NULL DEFAULT 'running'
                       CHECK (status IN ('running', 'completed', 'failed', 'cancelled', 'limited')),
    error              TEXT,
    provider           TEXT NOT NULL,
    model              TEXT NOT NULL,
    effort             TEXT,
    input_tokens       INTEGER NOT NULL DEFAULT 0,
    cached_tokens      INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens      INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens   INTEGER NOT NULL DEFAULT 0,
    cost_usd           REAL,
    model_calls        INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX turns_started ON turns(started_at);

CREATE TABLE messages (
    id         INTEGER PRIMARY KEY,
    turn_id    INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    kind       TEXT NOT NULL
               CHECK (kind IN ('user', 'assistant', 'reasoning', 'tool_call', 'tool_result')),
    -- user/assistant text, reasoning text, tool-call arguments, or tool output
    content    TEXT NOT NULL,
    call_id    TEXT,
    tool_name  TEXT,
    is_error   INTEGER NOT NULL DEFAULT 0,
    -- 1 when the stream broke: the text is what arrived, followed by a marker
    partial    INTEGER NOT NULL DEFAULT 0,
    -- reasoning only: which provider made it and what it needs echoed back
    provider   TEXT,
    opaque_id  TEXT,
    opaque     TEXT,
    -- o200k token count of content, so context assembly never re-tokenises history
    tokens     INTEGER NOT NULL
);
CREATE INDEX messages_turn ON messages(turn_id, id);

CREATE TABLE artifacts (
    id         INTEGER PRIMARY KEY,
    turn_id    INTEGER REFERENCES turns(id) ON DELETE SET NULL,
    created_at INTEGER NOT NULL,
    label      TEXT NOT NULL,
    content    TEXT NOT NULL,
    bytes      INTEGER NOT NULL
);

CREATE TABLE tool_calls (
    id           INTEGER PRIMARY KEY,
    turn_id      INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
    created_at   INTEGER NOT NULL,
    call_id      TEXT NOT NULL,
    name         TEXT NOT NULL,
    arguments    TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('ok', 'error', 'refused')),
    summary      TEXT NOT NULL,
    output_bytes INTEGER NOT NULL,
    artifact_id  INTEGER REFERENCES artifacts(id) ON DELETE SET NULL,
    duration_ms  INTEGER NOT NULL
);
CREATE INDEX tool_calls_turn ON tool_calls(turn_id);

-- A summary covers every message with first_message_id <= id <= last_message_id; the next
-- summary starts right after, so each message is either verbatim or covered (no gap).
CREATE TABLE summaries (
    id               INTEGER PRIMARY KEY,
    created_at       INTEGER NOT NULL,
    first_message_id INTEGER NOT NULL,
    last_message_id  INTEGER NOT NULL,
    content          TEXT NOT NULL,
    tokens           INTEGER NOT NULL,
    CHECK (first_message_id <= last_message_id)
);

CREATE TABLE proposals (
    id         INTEGER PRIMARY KEY,
    turn_id    INTEGER REFERENCES turns(id) ON DELETE SET NULL,
    created_at INTEGER NOT NULL,
    status     TEXT NOT NULL DEFAULT 'pending'
               CHECK (status IN ('pending', 'applied', 'rejected', 'stale')),
    path       TEXT NOT NULL,
    -- blake3 of the text the edit was computed against; applying checks it still matches
    base_hash  TEXT NOT NULL,
    new_text   TEXT NOT NULL,
    diff       TEXT NOT NULL
);

-- Full-text search over what was said (not tool output) and over summaries.
CREATE VIRTUAL TABLE messages_fts USING fts5(
    content, content = 'messages', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
WHEN new.kind IN ('user', 'assistant') BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
WHEN old.kind IN ('user', 'assistant') BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages
WHEN old.kind IN ('user', 'assistant') BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;

CREATE VIRTUAL TABLE summaries_fts USING fts5(
    content, content = 'summaries', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER summaries_fts_insert AFTER INSERT ON summaries BEGIN
    INSERT INTO summaries_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER summaries_fts_delete AFTER DELETE ON summaries BEGIN
    INSERT INTO summaries_fts(summaries_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
