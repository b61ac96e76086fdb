//! The session layer: what every face (the LSP, the CLI, `mira chat`, MCP) opens before it
//! does anything — the project, its configuration, the store and the memory service — so the
//! adapters above only translate — and the product logic an editor session runs on top of
//! them: anchored memories kept current (`anchors`), hover text (`hover`), code embeddings
//! (`code`), the turns running in the background (`turns`).

pub mod anchors;
pub mod code;
pub mod hover;
pub mod memory;
mod project;
pub mod turns;
mod workspace;

pub use project::project_info;
pub use turns::Turns;
pub use workspace::{EditorOpen, EditorWorkspace, ExitClass, OpenError, Workspace, store_facts};
