//! Mira: one persistent coding assistant for every editor, as a language server.
//!
//! See ARCHITECTURE.md for the map. Floors, top to bottom (a module imports only from
//! floors below its own): lsp · surface · agent · index, memory · llm, store, embed ·
//! config · documents, project, redact, sensitive.

pub mod agent;
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
pub mod store;
pub mod surface;
pub mod text;
