//! The project a turn runs in, as every face (LSP, CLI, MCP) hands it to the agent.

use crate::agent::ProjectInfo;
use crate::agent::context::project_name;
use crate::project::Project;
use crate::store::{Store, projects};

/// The project as the agent sees it: canonical root, display name, and its row in the store.
/// Blocks (SQLite): call from a worker thread.
pub fn project_info(store: &Store, project: &Project) -> ProjectInfo {
    let root = project
        .root
        .canonicalize()
        .unwrap_or_else(|_| project.root.clone());
    let name = project_name(&root, Some(project.name.as_str()).filter(|n| !n.is_empty()));
    let id = store.write(|tx| projects::ensure(tx, &root, &name)).ok();
    ProjectInfo { id, root, name }
}
