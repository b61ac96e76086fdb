//! The session layer: what every face (the LSP, the CLI, `mira chat`, MCP) opens before it
//! does anything — the project, its configuration, the store and the memory service — so the
//! adapters above only translate.

pub mod memory;
mod project;
mod workspace;

pub use project::project_info;
pub use workspace::{EditorOpen, EditorWorkspace, ExitClass, OpenError, Workspace};
