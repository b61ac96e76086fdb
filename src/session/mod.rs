//! The session layer: what every face (the LSP, the CLI, `mira chat`, MCP) opens before it
//! does anything, so the adapters above only translate.

mod project;

pub use project::project_info;
