//! `[index]`: what the indexer reads and how the live index answers.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct IndexConfig {
    /// Files larger than this are skipped (and reported) by the indexer.
    pub max_file_bytes: u64,
    /// Extra gitignore-style globs to leave out of the index.
    pub exclude: Vec<String>,
    /// How many results workspace/symbol returns at most.
    pub workspace_symbol_limit: usize,
    /// Watch unopened files for changes.
    pub watch: bool,
    /// How long an open document's reparse may hold up a keystroke before it is finished
    /// in the background (the outline answers from the previous parse meanwhile); 0 waits.
    pub parse_budget_ms: u64,
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            max_file_bytes: 1024 * 1024,
            exclude: Vec::new(),
            workspace_symbol_limit: 128,
            watch: true,
            parse_budget_ms: 3,
        }
    }
}
