//! Mira: one persistent coding assistant for every editor, as a language server.
//!
//! ARCHITECTURE.md is the map: entry points, the code map with its floors (which module may
//! import which; `tests/it/tidy.rs` holds them as `FLOORS` and checks every import), and the
//! invariants with the tests that hold them.

pub mod agent;
pub mod c_alloc;
pub mod complete;
pub mod config;
pub mod crashlog;
pub mod documents;
pub mod embed;
pub mod fusion;
pub mod index;
pub mod llm;
pub mod lsp;
pub mod mcp;
pub mod memory;
pub mod project;
pub mod redact;
pub mod sensitive;
pub mod session;
pub mod store;
pub mod text;
