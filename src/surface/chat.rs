//! Chat plumbing shared by the LSP and the CLI: the project a turn runs in.

use std::path::Path;

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

/// A root-relative display path, or the absolute one when outside the project.
pub fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}
