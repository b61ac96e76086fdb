-- The symbol index (issue 3). Paths are relative to the project root, '/'-separated.
-- Positions are tree-sitter points: zero-based rows and byte columns; `files.ascii` says
-- whether byte columns equal UTF-16/UTF-32 columns, so most files need no re-read to
-- answer in the client's encoding.

CREATE TABLE files (
    id          INTEGER PRIMARY KEY,
    project_id  INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    path        TEXT    NOT NULL,
    language    TEXT    NOT NULL,
    size        INTEGER NOT NULL,
    mtime_ns    INTEGER NOT NULL,
    hash        BLOB    NOT NULL,        -- blake3 of the content
    lines       INTEGER NOT NULL,
    ascii       INTEGER NOT NULL,
    skip_reason TEXT,                    -- why it is not indexed (too large, binary, minified)
    UNIQUE (project_id, path)
);

CREATE TABLE symbols (
    id             INTEGER PRIMARY KEY,
    file_id        INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    ordinal        INTEGER NOT NULL,     -- position in the file's list (document order)
    parent         INTEGER,              -- ordinal of the enclosing symbol
    name           TEXT    NOT NULL,
    kind           TEXT    NOT NULL,
    container      TEXT,
    start_byte     INTEGER NOT NULL,
    end_byte       INTEGER NOT NULL,
    start_line     INTEGER NOT NULL,
    start_col      INTEGER NOT NULL,
    end_line       INTEGER NOT NULL,
    end_col        INTEGER NOT NULL,
    sel_start_byte INTEGER NOT NULL,
    sel_end_byte   INTEGER NOT NULL,
    sel_start_line INTEGER NOT NULL,
    sel_start_col  INTEGER NOT NULL,
    sel_end_line   INTEGER NOT NULL,
    sel_end_col    INTEGER NOT NULL,
    signature      TEXT    NOT NULL,
    doc            TEXT,
    declaration    INTEGER NOT NULL
);
CREATE INDEX symbols_file ON symbols(file_id);
-- Prefix lookups must use ranges (name >= ?1 AND name < ?2), never LIKE: `_` is a wildcard.
CREATE INDEX symbols_name ON symbols(name COLLATE NOCASE);

CREATE TABLE symbol_refs (
    id         INTEGER PRIMARY KEY,
    file_id    INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    kind       TEXT    NOT NULL,         -- call | import
    name       TEXT    NOT NULL,
    path       TEXT,                     -- imports: the imported path as written
    caller     INTEGER,                  -- ordinal of the enclosing symbol
    start_byte INTEGER NOT NULL,
    end_byte   INTEGER NOT NULL,
    start_line INTEGER NOT NULL,
    start_col  INTEGER NOT NULL,
    end_line   INTEGER NOT NULL,
    end_col    INTEGER NOT NULL
);
CREATE INDEX symbol_refs_file ON symbol_refs(file_id);
CREATE INDEX symbol_refs_name ON symbol_refs(name);
