-- Inline completion (issue 12): one row per provider call, shown apart from chat turns in
-- `mira usage`. `outcome`: shown (a suggestion reached the editor), empty (nothing worth
-- showing), cancelled (superseded or $/cancelRequest: the stream was dropped), error.
-- Tokens of a cancelled call are unknown (the stream closed before usage arrived): 0.
CREATE TABLE completion_usage (
    id INTEGER PRIMARY KEY,
    at_ms INTEGER NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL,
    outcome TEXT NOT NULL
);
CREATE INDEX completion_usage_at ON completion_usage (at_ms);
