-- A memory's neighbours: the body of the memory written just before it and just after it in
-- the same scope, within a few minutes (a conversation stored turn by turn: "5 years
-- already!" answers the question before it). Searched with a low weight, so the words of a
-- question that was asked can find the answer that was given.
ALTER TABLE memories ADD COLUMN context TEXT NOT NULL DEFAULT '';

DROP TRIGGER memories_fts_ai;
DROP TRIGGER memories_fts_ad;
DROP TRIGGER memories_fts_au;
DROP TABLE memories_fts;

CREATE VIRTUAL TABLE memories_fts USING fts5(
    body, idents, context,
    content = 'memories', content_rowid = 'id',
    tokenize = 'porter unicode61'
);

CREATE TRIGGER memories_fts_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, body, idents, context) VALUES (new.id, new.body, new.idents, new.context);
END;
CREATE TRIGGER memories_fts_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, body, idents, context) VALUES ('delete', old.id, old.body, old.idents, old.context);
END;
CREATE TRIGGER memories_fts_au AFTER UPDATE OF body, idents, context ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, body, idents, context) VALUES ('delete', old.id, old.body, old.idents, old.context);
    INSERT INTO memories_fts (rowid, body, idents, context) VALUES (new.id, new.body, new.idents, new.context);
END;

INSERT INTO memories_fts (memories_fts) VALUES ('rebuild');
